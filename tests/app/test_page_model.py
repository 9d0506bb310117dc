"""pages/model.py through AppTest: the page opened cold, bad input, tampered model_* URL values."""

import json
from pathlib import Path

import apphelpers
import numpy as np
import pytest
import torch
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs

from core.pipeline import PipelineSettings, greedy, load_pipeline, run_pipeline
from figures.model import stream_norms
from figures.style import token_label
from i18n import t
from ui.settings import DEFAULT_SENTENCE, minilm_available

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "model.py")


DECODE = {"model_decode": "true"}  # the greedy-decoding section open (random weights decode on demand)


def open_page(query=None, sentence=None):
    at = apphelpers.open_page("pages/model.py", {**DECODE, **(query or {})})
    if sentence is not None:
        at.sidebar.text_area(key="sentence").set_value(sentence).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def output_bars(at):
    """The output-probability figure (section 3): the one with the T = 1 reference markers."""
    (fig,) = [s for s in specs(at) if any(d.get("name") == "T = 1" for d in s["data"])]
    return fig


def cross_attention(at):
    (fig,) = [
        s
        for s in specs(at)
        if s["layout"].get("xaxis", {}).get("title", {}).get("text") == "source token (memory)"
    ]
    return fig


def codes(at):
    return [c.value for c in at.code]


def warnings(at):
    return [w.value for w in at.warning]


@pytest.fixture(scope="module")
def default():
    return open_page()


@pytest.fixture(scope="module")
def reference():
    """The same run the page shows, computed here without Streamlit."""
    pipe = load_pipeline(PipelineSettings(weights="random", d_ff=256))
    return pipe, run_pipeline(pipe, DEFAULT_SENTENCE)


def test_default_page_shows_every_section_with_the_runs_numbers(default, reference):
    at = default
    pipe, run = reference
    assert at.title[0].value == "Full model"
    assert [h.value for h in at.header] == [
        "1 · Residual connection + LayerNorm",
        "2 · Position-wise feed-forward network",
        "3 · The residual stream through the layers: post- vs pre-norm",
        "4 · Output probabilities",
        "5 · Greedy decoding, step by step",
    ]
    figs = specs(at)
    assert len(figs) == 7
    # residual: post-norm rows, bars = norms of the first token's vectors in encoder layer 1
    residual = figs[0]
    assert residual["layout"]["yaxis"]["ticktext"][3] == "x₁ = LayerNorm(x + MultiHead(x))"
    layer = run.trace.encoder[0]
    first = float(torch.linalg.norm(layer.input[0, 0]))
    assert arr(residual["data"][0]["x"])[0] == pytest.approx(first, rel=1e-5)
    # post- and pre-norm side by side (random weights)
    assert [d["name"] for d in figs[3]["data"]] == ["post-norm", "pre-norm", "√d_model = 8.0"]
    pre = load_pipeline(PipelineSettings(weights="random", d_ff=256, norm="pre"))  # same seed, other norm
    for line, r in zip(figs[3]["data"][:2], (run, run_pipeline(pre, DEFAULT_SENTENCE)), strict=True):
        np.testing.assert_allclose(arr(line["y"]), stream_norms(r.trace)[1].mean(axis=1), rtol=1e-5)
    # feed-forward: tokens × d_ff with the run's numbers
    z = arr(figs[1]["data"][0]["z"])
    assert z.shape == (len(run.src_tokens), 256)
    np.testing.assert_allclose(z, layer.ffn_hidden[0].numpy(), atol=1e-4)
    assert f"{float((layer.ffn_hidden == 0).float().mean()):.1%}" in [m.value for m in at.metric]
    # output probabilities: decoder position 0, top 10 of softmax(logits / 1)
    bars = output_bars(at)
    values, ids = torch.topk(torch.softmax(run.trace.logits[0, 0].double(), -1), 10)
    np.testing.assert_allclose(arr(bars["data"][0]["x"]), values.numpy(), rtol=1e-6)
    assert bars["layout"]["yaxis"]["ticktext"][0] == token_label(pipe.tgt_labels[int(ids[0])])
    # greedy decoding, last step by default; random weights say their output is noise
    decoded = greedy(pipe, pipe.src_encode(DEFAULT_SENTENCE)[1], 64)
    n = len(decoded.steps)
    assert at.slider(key="model_step").value == n
    cross = cross_attention(at)
    np.testing.assert_allclose(
        arr(cross["data"][0]["z"]),
        decoded.steps[-1].decoder[-1].cross_attn.weights[0].mean(0).numpy(),
        rtol=1e-5,
    )
    assert cross["layout"]["xaxis"]["ticktext"] == run.src_tokens
    assert any("output is noise" in w for w in warnings(at))
    assert " ".join(run.src_tokens) in codes(at)


def test_chinese_and_emoji(default):
    at = default
    at.sidebar.text_area(key="sentence").set_value("你好🙂世界").run()
    assert not at.exception
    cross = cross_attention(at)
    tokens = cross["layout"]["xaxis"]["ticktext"]
    assert "你" in "".join(tokens) and "".join(codes(at)).count("好") >= 1
    assert len(arr(specs(at)[1]["data"][0]["z"])) == len(tokens)  # one FFN row per source token


def test_script_sentence_is_never_rendered_as_html():
    at = open_page(sentence="<script>alert(1)</script>")
    # the tokens are shown verbatim in a code block (escaped by Streamlit), never as HTML
    assert "<script>alert(1)</script>" in [c.replace(" ", "") for c in codes(at)]
    for element in (*at.markdown, *at.caption, *at.warning, *at.info):
        assert "<script" not in element.value
    for spec in specs(at):
        assert "<script" not in json.dumps(spec, ensure_ascii=False)


def test_empty_sentence_shows_a_message_and_no_chart():
    at = open_page(sentence="   ")
    assert any("The sentence is empty" in m.value for m in at.info)
    assert not at.get("plotly_chart")


def test_tampered_page_parameters_fall_back_with_a_message():
    at = open_page(
        {
            "model_layer": "abc",
            "model_token": "999",
            "model_topk": "1e9",
            "model_temperature": "nan",
            "model_step": "-3",
            "model_head": "<b>",
            "model_position": "2.5",
        }
    )
    shown = " ".join(warnings(at))
    for key in ("model_layer", "model_token", "model_topk", "model_temperature", "model_step", "model_head"):
        assert f"Ignored {key}=" in shown, key
    assert "<b>" not in shown  # an odd value is not echoed into Markdown
    assert at.slider(key="model_layer").value == 1
    assert at.slider(key="model_token").value == len(cross_attention(at)["layout"]["xaxis"]["ticktext"]) - 1
    assert at.slider(key="model_topk").value == 20
    assert at.slider(key="model_temperature").value == 1.0
    assert at.slider(key="model_step").value == 1
    assert at.slider(key="model_head").value == 0
    assert len(arr(output_bars(at)["data"][0]["x"])) == 20


def test_temperature_changes_the_bars_not_the_argmax(default):
    at = default
    at.sidebar.text_area(key="sentence").set_value(DEFAULT_SENTENCE).run()
    at.slider(key="model_temperature").set_value(0.3).run()
    cold = output_bars(at)
    at.slider(key="model_temperature").set_value(2.5).run()
    hot = output_bars(at)
    assert not at.exception
    assert cold["layout"]["yaxis"]["ticktext"][0] == hot["layout"]["yaxis"]["ticktext"][0]
    assert arr(cold["data"][0]["x"])[0] > arr(hot["data"][0]["x"])[0]
    np.testing.assert_allclose(arr(cold["data"][1]["x"]), arr(hot["data"][1]["x"]))  # the T = 1 markers stay


def test_step_slider_and_shrinking_sizes(default):
    at = default
    at.slider(key="model_step").set_value(1).run()
    assert arr(cross_attention(at)["data"][0]["z"]).shape[0] == 1
    assert "[BOS]" in codes(at)
    at.slider(key="model_step").set_value(3).run()
    assert arr(cross_attention(at)["data"][0]["z"]).shape[0] == 3
    # layer 2 of 2, then the sidebar goes to 1 layer: no slider, layer 1 shown, no exception
    at.slider(key="model_layer").set_value(2).run()
    assert "encoder layer 2 of 2" in " ".join(c.value for c in at.caption)
    at.sidebar.slider(key="num_layers").set_value(1).run()
    assert not at.exception
    assert "encoder layer 1 of 1" in " ".join(c.value for c in at.caption)
    # more heads: the head slider follows
    at.sidebar.select_slider(key="num_heads").set_value(8).run()
    assert not at.exception
    assert at.slider(key="model_head").max == 8


# -- 中文, every kind of weights, up to 512 tokens ----------------------------------------------------

HEADERS = ["model.residual.header", "model.ffn.header", "model.stream.header", "model.output.header",
           "model.greedy.header"]


@pytest.mark.parametrize("weights", ["random", "trained"])
def test_the_page_in_chinese(weights):
    at = apphelpers.open_page("pages/model.py", {"lang": "zh", **DECODE}, weights=weights)
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == t("nav.model.title", "zh")
    assert [h.value for h in at.header] == [t(key, "zh") for key in HEADERS]
    figs = specs(at)
    assert len(figs) == 7
    cross = [s for s in figs
             if s["layout"].get("xaxis", {}).get("title", {}).get("text") == t("model.fig.cross.x", "zh")]
    assert len(cross) == 1 and cross[0]["layout"]["yaxis"]["title"]["text"] == t("model.fig.cross.y", "zh")
    assert figs[0]["layout"]["xaxis2"]["title"]["text"] == t("model.fig.dimension", "zh")
    assert figs[3]["layout"]["yaxis"]["title"]["text"] == t("model.fig.stream.y", "zh")
    assert at.slider(key="model_step").label == t("model.greedy.step", "zh")
    latex = " ".join(m.value for m in at.latex)
    for formula in (r"\mathrm{LayerNorm}\big(x + \mathrm{Sublayer}(x)\big)",
                    r"\max(0,\ xW_1 + b_1)\,W_2 + b_2", r"\mathrm{softmax}\big(h_i W_{\text{out}} / T\big)",
                    r"\arg\max_{w}"):
        assert formula in latex
    if weights == "trained":
        assert t("model.greedy.diagonal", "zh") in " ".join(c.value for c in at.caption)
    else:
        assert t("model.greedy.noise", "zh") in warnings(at)


def test_a_bad_url_value_is_explained_in_chinese():
    at = open_page({"lang": "zh", "model_layer": "abc"})
    want = t("model.url.ignored", "zh", key="model_layer", raw="`abc`",
             why=t("model.url.whole", "zh", lo=1, hi=2), value=1)
    assert want in warnings(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pretrained_encoder_shows_its_encoder_and_says_it_has_no_decoder(lang):
    if not minilm_available():
        pytest.fail("all-MiniLM-L6-v2 (optional extra) is not installed")
    at = apphelpers.open_page("pages/model.py", {"lang": lang, **DECODE}, weights="minilm")
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert [h.value for h in at.header] == [t(key, lang) for key in HEADERS[:4]]
    assert t("model.encoder_only", lang, model="all-MiniLM-L6-v2") in [m.value for m in at.info]
    figs = specs(at)
    assert len(figs) == 3  # residual, FFN (GELU: no zero-fraction bars), the stream
    assert figs[1]["data"][0]["colorbar"]["title"]["text"] == "GELU(xW₁+b₁)"
    tokens = figs[1]["layout"]["yaxis"]["ticktext"]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert len(arr(figs[1]["data"][0]["z"])[0]) == 1536  # d_ff of all-MiniLM-L6-v2
    assert at.slider(key="model_layer").max == 6
    assert "GELU" in " ".join(m.value for m in at.latex)


def test_512_tokens_stay_usable():
    sentence = "Attention is all you need, and every token is read at once. " * 60
    at = open_page({"max_tokens": "512", "sentence": sentence})
    assert any("the model sees only the first 510" in w for w in warnings(at))
    figs = specs(at)
    ffn = arr(figs[1]["data"][0]["z"])
    assert ffn.shape == (510, 128)  # d_ff = 256: the first 128 units of 510 tokens
    assert len(figs[1]["layout"]["yaxis"]["ticktext"]) <= 24
    captions = " ".join(c.value for c in at.caption)
    assert "the heatmap shows the first 128 units" in captions
    assert t("model.greedy.capped", "en", steps=64) in captions  # random weights never say [EOS]
    cross = cross_attention(at)
    assert arr(cross["data"][0]["z"]).shape == (64, 510)
    assert sum(len(json.dumps(s)) for s in figs) < 2_000_000


def test_random_weights_decode_only_when_the_section_is_opened():
    closed = apphelpers.open_page("pages/model.py")
    assert not closed.exception
    keys = {str(c.key) for c in closed.get("plotly_chart")}
    assert "model_step_probs" not in keys and "model_step_cross" not in keys
    opened = open_page()
    keys = {str(c.key) for c in opened.get("plotly_chart")}
    assert {"model_step_probs", "model_step_cross"} <= keys


def test_trained_weights_show_their_decoding_without_opening_anything():
    at = apphelpers.open_page("pages/model.py", weights="trained")
    assert not at.exception
    assert {"model_step_probs", "model_step_cross"} <= {str(c.key) for c in at.get("plotly_chart")}
