"""pages/model.py through AppTest: the page opened cold, bad input, tampered model_* URL values."""

import json
from pathlib import Path

import apphelpers
import numpy as np
import pytest
import torch
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs

from core.tracing.pipeline import PipelineSettings, greedy, load_pipeline, run_pipeline
from figures.drawing.style import token_label
from figures.model import stream_norms
from i18n import t
from ui.page.settings import DEFAULT_SENTENCE, minilm_available

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "model.py")


VIEWS = ("residual_ffn", "stream", "output", "decoding")  # the tabs, in order (?model_view=<view>)


def view_query(view: str | None, query: dict | None = None) -> dict:
    """``query`` with the tab ``view`` open (None: the first tab)."""
    opened = {"model_view": view} if view else {}
    return {**opened, **(query or {})}


def open_page(query=None, sentence=None, view="decoding", weights="random"):
    """The Full model page opened cold, with the tab ``view`` open (by default greedy decoding, which
    reads the most: the source tokens, the decoder and the cross-attention)."""
    at = apphelpers.open_page("pages/model.py", view_query(view, query), weights=weights)
    if sentence is not None:
        at.sidebar.text_area(key="sentence").set_value(sentence).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def every_view(query=None, weights="random", views=VIEWS):
    """One cold page per tab: {view: AppTest}."""
    return {view: open_page(query, view=view, weights=weights) for view in views}


def output_bars(at):
    """The output-probability figure (section 4): the one with the T = 1 reference markers."""
    (fig,) = [s for s in specs(at) if any(d.get("name") == "T = 1" for d in s["data"])]
    return fig


def cross_attention(at):
    (fig,) = [
        s
        for s in specs(at)
        if s["layout"].get("xaxis", {}).get("title", {}).get("text") == "source token (memory)"
    ]
    return fig


def chart_keys(at):
    return {str(c.key) for c in at.get("plotly_chart")}


def codes(at):
    return [c.value for c in at.code]


def warnings(at):
    return [w.value for w in at.warning]


@pytest.fixture(scope="module")
def views():
    """The page with default input, one cold page per tab."""
    return every_view()


@pytest.fixture(scope="module")
def reference():
    """The same run the page shows, computed here without Streamlit."""
    pipe = load_pipeline(PipelineSettings(weights="random", d_ff=256))
    return pipe, run_pipeline(pipe, DEFAULT_SENTENCE)


HEADERS = {  # the section headers each tab holds
    "residual_ffn": ["model.residual.header", "model.ffn.header"],
    "stream": ["model.stream.header"],
    "output": ["model.output.header"],
    "decoding": ["model.greedy.header"],
}
CHARTS = {  # the charts each tab draws (random weights, ReLU)
    "residual_ffn": ["model_residual", "model_ffn", "model_ffn_zero"],
    "stream": ["model_stream"],
    "output": ["model_output"],
    "decoding": ["model_step_probs", "model_step_cross"],
}


def test_one_section_at_a_time_in_tabs(views):
    for view, at in views.items():
        assert at.title[0].value == "Full model"
        assert [tab.label for tab in at.tabs] == [t(f"model.tab.{v}", "en") for v in VIEWS]
        # only the open tab is drawn: its headers and its charts, none of the others'
        assert [h.value for h in at.header] == [t(key, "en") for key in HEADERS[view]], view
        assert sorted(chart_keys(at)) == sorted(CHARTS[view]), view
    first = open_page(view=None)  # no ?model_view=: the first tab
    assert [h.value for h in first.header] == [t(key, "en") for key in HEADERS["residual_ffn"]]


def test_residual_and_ffn_show_the_runs_numbers(views, reference):
    at = views["residual_ffn"]
    pipe, run = reference
    residual, ffn, _zero = specs(at)
    # residual: post-norm rows, bars = norms of the first token's vectors in encoder layer 1
    assert residual["layout"]["yaxis"]["ticktext"][3] == "x₁ = LayerNorm(x + MultiHead(x))"
    layer = run.trace.encoder[0]
    first = float(torch.linalg.norm(layer.input[0, 0]))
    assert arr(residual["data"][0]["x"])[0] == pytest.approx(first, rel=1e-5)
    # feed-forward: tokens × d_ff with the run's numbers
    z = arr(ffn["data"][0]["z"])
    assert z.shape == (len(run.src_tokens), 256)
    np.testing.assert_allclose(z, layer.ffn_hidden[0].numpy(), atol=1e-4)
    assert f"{float((layer.ffn_hidden == 0).float().mean()):.1%}" in [m.value for m in at.metric]


def test_the_stream_puts_post_and_pre_norm_side_by_side(views, reference):
    _pipe, run = reference
    (stream,) = specs(views["stream"])
    assert [d["name"] for d in stream["data"]] == ["post-norm", "pre-norm", "√d_model = 8.0"]
    pre = load_pipeline(PipelineSettings(weights="random", d_ff=256, norm="pre"))  # same seed, other norm
    for line, r in zip(stream["data"][:2], (run, run_pipeline(pre, DEFAULT_SENTENCE)), strict=True):
        np.testing.assert_allclose(arr(line["y"]), stream_norms(r.trace)[1].mean(axis=1), rtol=1e-5)


def test_output_probabilities_are_the_runs_softmax(views, reference):
    pipe, run = reference
    # decoder position 0, top 10 of softmax(logits / 1)
    bars = output_bars(views["output"])
    values, ids = torch.topk(torch.softmax(run.trace.logits[0, 0].double(), -1), 10)
    np.testing.assert_allclose(arr(bars["data"][0]["x"]), values.numpy(), rtol=1e-6)
    assert bars["layout"]["yaxis"]["ticktext"][0] == token_label(pipe.tgt_labels[int(ids[0])])


def test_greedy_decoding_shows_the_last_step(views, reference):
    at = views["decoding"]
    pipe, run = reference
    # the last step by default; random weights say their output is noise
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
    assert t("model.greedy.on_demand_random", "en") in [c.value for c in at.caption]


def test_the_decoding_tab_of_random_weights_runs_no_teacher_forced_pass(monkeypatch):
    """Random weights decode on demand: their decoding tab needs the sentence's tokens, not a run of
    the sentence through the model; their first tab the encoder alone; the others get the run."""
    import core.tracing.pipeline

    runs = []
    real = core.tracing.pipeline.run_pipeline
    monkeypatch.setattr(core.tracing.pipeline, "run_pipeline", lambda pipe, sentence, *a, **k: (
        runs.append(sentence), real(pipe, sentence, *a, **k))[1])
    at = open_page({"seed": "4242"})  # a seed of its own: nothing cached by another test
    assert [h.value for h in at.header] == [t("model.greedy.header", "en")]
    assert sorted(chart_keys(at)) == sorted(CHARTS["decoding"])
    assert runs == []
    at.sidebar.number_input(key="seed").set_value(4243).run()  # a new model: still no run
    assert sorted(chart_keys(at)) == sorted(CHARTS["decoding"])
    assert runs == []
    from core.model.transformer import Transformer

    whole = []  # per weight drawing: whether it drew the decoder's numbers (the whole model's)
    init = Transformer._init_weights

    def spying(self, only=None):
        decoder = [id(p) for p in self.decoder.parameters()]
        whole.append(only is None or any(i in only for i in decoder))
        return init(self, only)

    monkeypatch.setattr(Transformer, "_init_weights", spying)
    for seed, view in (("4244", "residual_ffn"), ("4245", "stream")):  # the encoder alone, both norms
        first = open_page({"seed": seed}, view=view)
        assert sorted(chart_keys(first)) == sorted(CHARTS[view])
        assert runs == [] and whole and True not in whole, view  # parts drawn, never the whole model
    output = open_page({"seed": "4242"}, view="output")
    assert [h.value for h in output.header] == [t("model.output.header", "en")]
    assert runs == [DEFAULT_SENTENCE]


def test_chinese_and_emoji():
    at = open_page(sentence="你好🙂世界")
    tokens = cross_attention(at)["layout"]["xaxis"]["ticktext"]
    assert "你" in "".join(tokens) and "".join(codes(at)).count("好") >= 1
    ffn = open_page(sentence="你好🙂世界", view="residual_ffn")
    assert len(arr(specs(ffn)[1]["data"][0]["z"])) == len(tokens)  # one FFN row per source token
    assert ffn.code[0].value in tokens  # the token the residual figure follows


@pytest.mark.parametrize("view", VIEWS)
def test_script_sentence_is_never_rendered_as_html(view):
    at = open_page(sentence="<script>alert(1)</script>", view=view)
    # the tokens are shown verbatim in a code block (escaped by Streamlit), never as HTML
    if view == "decoding":
        assert "<script>alert(1)</script>" in [c.replace(" ", "") for c in codes(at)]
    for element in (*at.markdown, *at.caption, *at.warning, *at.info):
        assert "<script" not in element.value
    for spec in specs(at):
        assert "<script" not in json.dumps(spec, ensure_ascii=False)


@pytest.mark.parametrize("view", [None, "decoding"])
def test_empty_sentence_shows_a_message_and_no_chart(view):
    at = open_page(sentence="   ", view=view)
    assert any("The sentence is empty" in m.value for m in at.info)
    assert not at.get("plotly_chart")


TAMPERED = {  # per tab: its URL values, tampered
    "residual_ffn": {"model_layer": "abc", "model_token": "999"},
    "output": {"model_topk": "1e9", "model_temperature": "nan", "model_position": "2.5"},
    "decoding": {"model_step": "-3", "model_head": "<b>"},
}


@pytest.mark.parametrize("view", TAMPERED)
def test_tampered_page_parameters_fall_back_with_a_message(view):
    at = open_page(TAMPERED[view], view=view)
    shown = " ".join(warnings(at))
    for key in TAMPERED[view]:
        if key != "model_position":  # one decoder position for the default sentence: no slider
            assert f"Ignored {key}=" in shown, key
    assert "<b>" not in shown  # an odd value is not echoed into Markdown
    if view == "residual_ffn":
        assert at.slider(key="model_layer").value == 1
        assert at.slider(key="model_token").value == len(specs(at)[1]["layout"]["yaxis"]["ticktext"]) - 1
    elif view == "output":
        assert at.slider(key="model_topk").value == 20
        assert at.slider(key="model_temperature").value == 1.0
        assert len(arr(output_bars(at)["data"][0]["x"])) == 20
    else:
        assert at.slider(key="model_step").value == 1
        assert at.slider(key="model_head").value == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_tampered_tab_falls_back_to_the_first_with_a_notice(lang):
    at = open_page({"lang": lang, "model_view": "<img src=x onerror=alert(1)>"}, view=None)
    assert [h.value for h in at.header] == [t(key, lang) for key in HEADERS["residual_ffn"]]
    (notice,) = [w for w in warnings(at) if "model_view" in w]
    assert t("model.tab.residual_ffn", lang) in notice
    assert "`<img src=x onerror=alert(1)>`" in notice  # in a code span: shown as text, inert


def test_links_made_before_the_tabs_open_greedy_decoding():
    """?model_decode=true opened the decoding section when it was an expander: it opens its tab now."""
    at = apphelpers.open_page("pages/model.py", {"model_decode": "true"})
    assert not at.exception
    assert [h.value for h in at.header] == [t("model.greedy.header", "en")]
    assert "model_decode" not in at.query_params
    at.sidebar.number_input(key="seed").set_value(5).run()  # the tab stays open on the next run
    assert [h.value for h in at.header] == [t("model.greedy.header", "en")]
    closed = apphelpers.open_page("pages/model.py", {"model_decode": "false"})
    assert [h.value for h in closed.header] == [t(key, "en") for key in HEADERS["residual_ffn"]]


def test_temperature_changes_the_bars_not_the_argmax():
    at = open_page(view="output")
    at.slider(key="model_temperature").set_value(0.3).run()
    cold = output_bars(at)
    at.slider(key="model_temperature").set_value(2.5).run()
    hot = output_bars(at)
    assert not at.exception
    assert cold["layout"]["yaxis"]["ticktext"][0] == hot["layout"]["yaxis"]["ticktext"][0]
    assert arr(cold["data"][0]["x"])[0] > arr(hot["data"][0]["x"])[0]
    np.testing.assert_allclose(arr(cold["data"][1]["x"]), arr(hot["data"][1]["x"]))  # the T = 1 markers stay


def test_step_slider_and_more_heads():
    at = open_page()
    at.slider(key="model_step").set_value(1).run()
    assert arr(cross_attention(at)["data"][0]["z"]).shape[0] == 1
    assert "[BOS]" in codes(at)
    at.slider(key="model_step").set_value(3).run()
    assert arr(cross_attention(at)["data"][0]["z"]).shape[0] == 3
    # more heads: the head slider follows
    at.sidebar.select_slider(key="num_heads").set_value(8).run()
    assert not at.exception
    assert at.slider(key="model_head").max == 8


def test_layer_slider_and_fewer_layers():
    at = open_page(view="residual_ffn")
    # layer 2 of 2, then the sidebar goes to 1 layer: no slider, layer 1 shown, no exception
    at.slider(key="model_layer").set_value(2).run()
    assert "encoder layer 2 of 2" in " ".join(c.value for c in at.caption)
    at.sidebar.slider(key="num_layers").set_value(1).run()
    assert not at.exception
    assert "encoder layer 1 of 1" in " ".join(c.value for c in at.caption)


# -- 中文, every kind of weights, up to 512 tokens ----------------------------------------------------


@pytest.mark.parametrize("weights", ["random", "trained"])
def test_the_page_in_chinese(weights):
    views = every_view({"lang": "zh"}, weights=weights)
    for view, at in views.items():
        assert at.title[0].value == t("nav.model.title", "zh")
        assert [tab.label for tab in at.tabs] == [t(f"model.tab.{v}", "zh") for v in VIEWS]
        assert [h.value for h in at.header] == [t(key, "zh") for key in HEADERS[view]]
    residual = specs(views["residual_ffn"])[0]
    assert residual["layout"]["xaxis2"]["title"]["text"] == t("model.fig.dimension", "zh")
    (stream,) = specs(views["stream"])
    assert stream["layout"]["yaxis"]["title"]["text"] == t("model.fig.stream.y", "zh")
    decoding = views["decoding"]
    cross = [s for s in specs(decoding)
             if s["layout"].get("xaxis", {}).get("title", {}).get("text") == t("model.fig.cross.x", "zh")]
    assert len(cross) == 1 and cross[0]["layout"]["yaxis"]["title"]["text"] == t("model.fig.cross.y", "zh")
    assert decoding.slider(key="model_step").label == t("model.greedy.step", "zh")
    latex = " ".join(m.value for at in views.values() for m in at.latex)
    for formula in (r"\mathrm{LayerNorm}\big(x + \mathrm{Sublayer}(x)\big)",
                    r"\max(0,\ xW_1 + b_1)\,W_2 + b_2",
                    r"\mathrm{softmax}\big((h_i\, W_{\text{out}} + b) / T\big)",  # the output layer has b
                    r"\arg\max_{w}"):
        assert formula in latex
    captions = " ".join(c.value for c in decoding.caption)
    if weights == "trained":  # its own decoding, already computed with the run
        assert t("model.greedy.diagonal", "zh") in captions and t("model.greedy.own", "zh") in captions
    else:
        assert t("model.greedy.noise", "zh") in warnings(decoding)
        assert t("model.greedy.on_demand_random", "zh") in captions


def test_a_bad_url_value_is_explained_in_chinese():
    at = open_page({"lang": "zh", "model_layer": "abc"}, view="residual_ffn")
    want = t("model.url.ignored", "zh", key="model_layer", raw="`abc`",
             why=t("model.url.whole", "zh", lo=1, hi=2), value=1)
    assert want in warnings(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_pretrained_encoder_shows_its_encoder_and_says_it_has_no_decoder(lang):
    if not minilm_available():
        pytest.fail("all-MiniLM-L6-v2 (optional extra) is not installed")
    views = every_view({"lang": lang}, weights="minilm", views=VIEWS[:2])
    for view, at in views.items():
        assert not at.error, [e.value for e in at.error]
        # its encoder in two tabs; above them, why there are no sections 4-5
        assert [tab.label for tab in at.tabs] == [t(f"model.tab.{v}", lang) for v in VIEWS[:2]]
        assert [h.value for h in at.header] == [t(key, lang) for key in HEADERS[view]]
        assert t("model.encoder_only", lang, model="all-MiniLM-L6-v2") in [m.value for m in at.info]
    at = views["residual_ffn"]
    figs = specs(at)
    assert len(figs) == 2  # residual, FFN (GELU: no zero-fraction bars)
    assert figs[1]["data"][0]["colorbar"]["title"]["text"] == "GELU(xW₁+b₁)"
    tokens = figs[1]["layout"]["yaxis"]["ticktext"]
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    assert len(arr(figs[1]["data"][0]["z"])[0]) == 1536  # d_ff of all-MiniLM-L6-v2
    assert at.slider(key="model_layer").max == 6
    assert "GELU" in " ".join(m.value for m in at.latex)
    assert len(specs(views["stream"])) == 1
    # a link to a decoder's tab: the first tab, with a notice
    gone = open_page({"lang": lang}, weights="minilm", view="output")
    assert [h.value for h in gone.header] == [t(key, lang) for key in HEADERS["residual_ffn"]]
    assert any("model_view" in w for w in warnings(gone))


def test_512_tokens_stay_usable():
    sentence = "Attention is all you need, and every token is read at once. " * 60
    query = {"max_tokens": "512", "sentence": sentence}
    at = open_page(query, view="residual_ffn")
    assert any("the model sees only the first 510" in w for w in warnings(at))
    ffn = arr(specs(at)[1]["data"][0]["z"])
    assert ffn.shape == (510, 128)  # d_ff = 256: the first 128 units of 510 tokens
    assert len(specs(at)[1]["layout"]["yaxis"]["ticktext"]) <= 24
    assert "the heatmap shows the first 128 units" in " ".join(c.value for c in at.caption)
    decoding = open_page(query)
    assert t("model.greedy.capped", "en", steps=64) in [c.value for c in decoding.caption]  # no [EOS]
    assert arr(cross_attention(decoding)["data"][0]["z"]).shape == (64, 510)
    for page in (at, decoding):
        assert sum(len(json.dumps(s)) for s in specs(page)) < 2_000_000


def test_trained_weights_show_their_own_decoding():
    at = open_page(weights="trained")
    assert chart_keys(at) == set(CHARTS["decoding"])
    captions = [c.value for c in at.caption]
    assert t("model.greedy.own", "en") in captions
    assert not any(c.startswith("Decoded here on demand") for c in captions)
