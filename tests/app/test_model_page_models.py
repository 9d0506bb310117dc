"""The Full model page and the Overview with a model folder (issue 29): a decoder-only model's one stack,
its next-token table, generation by sampling, and the overview's one row; tiny random folders from
tests/modelfolders.py (fixture ``model_folders``)."""

import json

import numpy as np
import pytest
import torch
from apphelpers import open_page, plotly_specs

from core.tracing.pipeline import generate, run_pipeline
from figures.model import _cell, hidden_formula
from i18n import t

SENTENCE = "Attention is all you need 注意力"
DECODER_ONLY = ("hf:gpt2-tiny", "hf:qwen2-tiny")
VIEWS = ("residual_ffn", "stream", "output", "decoding")


def model_page(weights: str, view: str, lang: str = "en", **query: str):
    at = open_page(
        "pages/model.py", {"lang": lang, "sentence": SENTENCE, "model_view": view, **query}, weights=weights
    )
    assert not at.exception, [e.value for e in at.exception]
    return at


def pipeline(weights: str):
    from ui.folders.hf_pipeline import load_model

    return load_model(weights)


def shown_texts(at) -> list[str]:
    return [x.value for x in (*at.header, *at.subheader, *at.markdown, *at.caption, *at.latex)]


@pytest.mark.parametrize("weights", [*DECODER_ONLY, "hf:bert-tiny"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_tab_opens(model_folders, weights, lang):
    for view in VIEWS if weights in DECODER_ONLY else VIEWS[:2]:
        at = model_page(weights, view, lang)
        assert at.header, view  # the tab drew its section


@pytest.mark.parametrize("weights", DECODER_ONLY)
def test_next_token_table_is_softmax_of_the_logits(model_folders, weights):
    at = model_page(weights, "output")
    table = at.dataframe[0].value
    run = run_pipeline(pipeline(weights), SENTENCE, max_tokens=64)
    probs = torch.softmax(run.trace.logits[0].double(), dim=-1).numpy()  # (L, vocab)
    assert len(table) == len(run.src_tokens)
    best = probs.argmax(-1)
    np.testing.assert_allclose(
        table[t("model.fig.next.best_p", "en")].to_numpy(float), probs.max(-1), atol=1e-6
    )
    following = [probs[i, run.trace.tgt_ids[0, i + 1]] for i in range(len(best) - 1)]
    actual = table[t("model.fig.next.actual_p", "en")].to_numpy(float)
    np.testing.assert_allclose(actual[:-1], following, atol=1e-6)
    assert np.isnan(actual[-1])  # nothing follows the last token
    labels = pipeline(weights).tgt_labels
    shown = [cell.lstrip("'") for cell in table[t("model.fig.next.best", "en")]]
    assert shown == [_cell(labels[i]) for i in best]  # whitespace made visible: "␣", "␍"


def written(at) -> str:
    """The code block under "What the model wrote after it"."""
    return at.code[1].value


@pytest.mark.parametrize("weights", DECODER_ONLY)
def test_temperature_zero_is_greedy_generate(model_folders, weights):
    at = model_page(weights, "decoding", gen_temperature="0.0", gen_tokens="8")
    pipe = pipeline(weights)
    result = generate(pipe, SENTENCE, 64, new_tokens=8)  # temperature 0: greedy
    n = len(run_pipeline(pipe, SENTENCE, max_tokens=64).src_tokens)
    assert written(at) == " ".join(pipe.tgt_labels[i] for i in result.tokens[0, n:].tolist())
    assert t("model.gen.greedy", "en") in " ".join(c.value for c in at.caption)


def test_sampling_is_reproducible_by_seed(model_folders):
    weights, hot = "hf:gpt2-tiny", {"gen_temperature": "2.0", "gen_tokens": "12"}
    first = written(model_page(weights, "decoding", gen_seed="7", **hot))
    again = written(model_page(weights, "decoding", "zh", gen_seed="7", **hot))
    other = written(model_page(weights, "decoding", gen_seed="8", **hot))
    assert first == again
    assert first != other
    pipe = pipeline(weights)  # the page shows core's sampling with that seed, not something of its own
    result = generate(pipe, SENTENCE, 64, new_tokens=12, temperature=2.0, seed=7)
    n = len(run_pipeline(pipe, SENTENCE, max_tokens=64).src_tokens)
    assert first == " ".join(pipe.tgt_labels[i] for i in result.tokens[0, n:].tolist())


def test_each_step_shows_the_filtered_distribution(model_folders):
    at = model_page("hf:qwen2-tiny", "decoding", gen_temperature="1.5", gen_top_k="5", gen_step="3")
    table = at.dataframe[0].value
    assert (table[t("model.fig.gen.kept", "en")] <= 5).all()
    pipe = pipeline("hf:qwen2-tiny")
    result = generate(pipe, SENTENCE, 64, new_tokens=16, temperature=1.5, top_k=5, seed=0)
    unfiltered = t("model.gen.unfiltered", "en")
    (bars,) = [s for s in plotly_specs(at) if any(d.get("name") == unfiltered for d in s["data"])]
    p = result.probs[2][0].numpy()  # step 3: the bars are the tokens top-k kept, and no other
    assert len(bars["data"][0]["x"]) == (p > 0).sum() <= 5
    np.testing.assert_allclose(
        np.asarray(bars["data"][0]["x"], float), np.sort(p)[::-1][: (p > 0).sum()], atol=1e-6
    )
    np.testing.assert_allclose(
        table[t("model.fig.gen.p", "en")].to_numpy(float),
        [float(q[0, i]) for q, i in zip(result.probs, result.tokens[0, -16:], strict=True)],
        atol=1e-6,
    )


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_norm_and_activation_are_the_configs(model_folders, lang):
    qwen = model_page("hf:qwen2-tiny", "residual_ffn", lang)
    equations = " ".join(x.value for x in qwen.latex)
    assert "RMSNorm" in equations and "LayerNorm" not in equations and "SiLU" in equations
    assert [tab.label for tab in qwen.tabs][0] == t("model.tab.residual_ffn.rms", lang)
    assert qwen.header[0].value == t("model.residual.header.rms", lang)
    gpt2 = model_page("hf:gpt2-tiny", "residual_ffn", lang)
    equations = " ".join(x.value for x in gpt2.latex)
    assert "GELU" in equations and "RMSNorm" not in equations and "tanh" in equations
    colorbars = {s["data"][0].get("colorbar", {}).get("title", {}).get("text") for s in plotly_specs(gpt2)}
    assert hidden_formula("gelu_tanh") in colorbars and "ReLU(xW₁+b₁)" not in colorbars
    colorbars = {s["data"][0].get("colorbar", {}).get("title", {}).get("text") for s in plotly_specs(qwen)}
    assert hidden_formula("swiglu", bias=False) in colorbars


@pytest.mark.parametrize("weights", [*DECODER_ONLY, "hf:bert-tiny"])
def test_folder_weights_are_never_called_pretrained(model_folders, weights):
    at = model_page(weights, "stream")
    texts = " ".join(shown_texts(at))
    assert (
        t(
            "model.stream.folder",
            "en",
            name=weights,
            norm="pre" if weights in DECODER_ONLY else "post",
            kind="RMSNorm" if "qwen2" in weights else "LayerNorm",
        )
        in texts
    )
    assert "retrained" not in texts  # neither "Pretrained" nor "pretrained"


# -- the Overview ----------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_overview_draws_one_stack(model_folders, lang):
    at = open_page("pages/overview.py", {"lang": lang, "sentence": SENTENCE}, weights="hf:gpt2-tiny")
    assert not at.exception, [e.value for e in at.exception]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    texts = " ".join(a.get("text", "") for a in spec["layout"]["annotations"])
    for absent in (
        "encoder_detail",
        "decoder_detail",
        "decoder_detail.final_norm",
        "memory",
        "memory_norm",
        "encoder_input",
        "target",
    ):  # no encoder box, no cross-attention, no memory arrow
        assert t(f"overview.diagram.{absent}", lang, h=4, d_k=8, d_ff=128, shape="").strip() not in texts
    assert t("overview.diagram.encoder", lang, n=2) not in texts
    assert "cross-attn" not in texts
    assert t("overview.diagram.no_encoder", lang) in texts
    assert t("overview.diagram.layer", lang, n=2) in texts
    assert len([s for s in spec["layout"]["shapes"] if s["type"] == "rect"]) == 5  # one row of boxes
    words = " ".join(shown_texts(at))
    assert t("overview.explain.placement.pre", lang, kind="LayerNorm") in words
    assert t("overview.explain.encoder", lang, positions="")[:12] not in words


def test_overview_of_a_bert_folder_is_unchanged(model_folders):
    at = open_page("pages/overview.py", {"lang": "en"}, weights="hf:bert-tiny")
    assert not at.exception
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    texts = " ".join(a.get("text", "") for a in spec["layout"]["annotations"])
    assert t("overview.diagram.encoder", "en", n=2) in texts
    assert t("overview.diagram.no_decoder", "en") in texts


def test_overview_without_a_run_still_draws_the_one_stack(model_folders):
    at = open_page("pages/overview.py", {"lang": "en", "sentence": " "}, weights="hf:qwen2-tiny")
    assert not at.exception
    assert t("run.empty_sentence", "en") in [m.value for m in at.info]
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    texts = " ".join(a.get("text", "") for a in spec["layout"]["annotations"])
    assert t("overview.diagram.no_encoder", "en") in texts and "pre-RMSNorm" in texts
