"""The Positional encoding page through AppTest, opened cold, including tampered ?pe_dims / ?pe_max_pos,
the four schemes' tabs, Chinese, 512 tokens and the pretrained MiniLM's learned table."""

import json

import apphelpers
import numpy as np
import pytest
from apphelpers import ROOT, assert_clean, badges, messages
from apphelpers import plotly_array as arr
from streamlit.testing.v1 import AppTest

from core.model.positional import alibi_bias, rope_angles, sinusoidal_encoding
from figures import positional as fp
from i18n import t

PAGE = str(ROOT / "pages" / "positional.py")
WITH_SENTENCE = ["curves", "table", "gram", "sum"]
TAB_CHARTS = {  # the charts of each tab; only the open one is drawn (?pe_tab=<its scheme>)
    "sinusoidal": ["offset", "sin_beyond"],
    "learned": ["learned_table", "learned_offset", "learned_beyond"],
    "rope": ["rope_rotation", "rope_offset", "rope_beyond"],
    "alibi": ["alibi_bias", "alibi_offset", "alibi_beyond"],
}


def open_page(query: dict | None = None, weights: str | None = apphelpers.TEST_WEIGHTS) -> AppTest:
    return apphelpers.open_page("pages/positional.py", query, weights=weights)


def charts(at: AppTest, names=WITH_SENTENCE, tab: str = "sinusoidal") -> dict[str, dict]:
    """Plotly specs by name (the chart's key is ``pe_<name>_chart``); the page draws exactly these:
    the top of the page and the open tab's."""
    specs = {}
    for chart in at.get("plotly_chart"):
        key = chart.proto.id.rsplit("-", 1)[-1]
        assert key.startswith("pe_") and key.endswith("_chart"), key
        specs[key[3:-6]] = json.loads(chart.proto.spec)
    assert list(specs) == [*names, *TAB_CHARTS[tab]], list(specs)
    return specs


def every_tab(query: dict | None = None, weights: str | None = apphelpers.TEST_WEIGHTS):
    """The page opened once per tab (?pe_tab=<scheme>): ({scheme: AppTest}, all charts)."""
    pages, specs = {}, {}
    for scheme in TAB_CHARTS:
        at = open_page({**(query or {}), "pe_tab": scheme}, weights=weights)
        assert_clean(at)
        assert [i for i, tab in enumerate(at.tabs) if tab.subheader] == [list(TAB_CHARTS).index(scheme)]
        pages[scheme] = at
        specs.update(charts(at, tab=scheme))
    return pages, specs


def curve_names(spec: dict) -> list[str]:
    return [t["name"] for t in spec["data"]]


def all_text(at: AppTest) -> str:
    return " ".join(m.value for m in (*at.markdown, *at.caption, *at.latex, *at.subheader, *at.header))


def test_default_page_shows_curves_table_offsets_and_sum():
    at = open_page()
    assert_clean(at)
    assert at.title[0].value == "Positional encoding"
    assert any("random initialisation" in b for b in badges(at))
    assert at.multiselect(key="pe_dims").value == [0, 1, 8, 32]
    assert at.slider(key="pe_max_pos").value == 128
    c = charts(at)
    assert [n.split(" (")[0] for n in curve_names(c["curves"])] == ["dim 0", "dim 1", "dim 8", "dim 32"]
    assert len(arr(c["curves"]["data"][0]["x"])) == 128
    table = arr(c["table"]["data"][0]["z"])
    np.testing.assert_allclose(table, sinusoidal_encoding(64, 64).numpy(), atol=1e-6)
    gram = arr(c["gram"]["data"][0]["z"])
    for k in (0, 1, 7, 30):
        assert np.ptp(np.diagonal(gram, offset=k)) < 1e-3  # depends on the offset only
    offsets = [arr(t["y"]) for t in c["offset"]["data"]]
    assert len(offsets) == 4 and all(np.allclose(o, offsets[0], atol=1e-4) for o in offsets)
    ticks = c["sum"]["layout"]["yaxis"]["ticktext"]
    assert ticks[:4] == ["注意力", "就是", "一", "切"]
    assert [arr(t["z"]).shape for t in c["sum"]["data"]] == [(len(ticks), 64)] * 3
    text = all_text(at)
    assert "M_k" in text and "even d_model" in text and "Random weights" in text
    assert not [m for m in messages(at) if "Ignored" in m]


def test_tampered_url_parameters_fall_back_with_a_message():
    at = open_page({"pe_dims": ["3", "abc", "999", "<b>"], "pe_max_pos": "99999"})
    assert_clean(at)
    shown = messages(at)
    assert any(m.startswith("Ignored pe_dims=`abc`, `999`, `<b>`") for m in shown), shown
    assert any(m.startswith("Ignored pe_max_pos=`99999`") for m in shown), shown
    assert at.multiselect(key="pe_dims").value == [3]
    assert at.slider(key="pe_max_pos").value == 128
    assert curve_names(charts(at)["curves"]) == ["dim 3 (cos, period 8.4)"]

    at = open_page({"pe_dims": "nope", "pe_max_pos": "-5"})
    assert_clean(at)
    assert at.multiselect(key="pe_dims").value == [0, 1, 8, 32]
    assert at.slider(key="pe_max_pos").value == 128
    assert sum("Ignored" in m for m in messages(at)) == 2


def test_valid_url_parameters_and_widgets_drive_the_curves():
    at = open_page({"pe_dims": ["2", "63"], "pe_max_pos": "2048"})
    assert_clean(at)
    c = charts(at)
    assert [n.split(" (")[0] for n in curve_names(c["curves"])] == ["dim 2", "dim 63"]
    x = arr(c["curves"]["data"][1]["x"])
    assert len(x) == 2048
    expected = sinusoidal_encoding(2048, 64)[:, 63]
    np.testing.assert_allclose(arr(c["curves"]["data"][1]["y"]), expected, atol=1e-6)
    at.multiselect(key="pe_dims").set_value([5]).run()
    assert curve_names(charts(at)["curves"]) == ["dim 5 (cos, period 11.2)"]
    at.multiselect(key="pe_dims").set_value([]).run()
    assert_clean(at)
    assert any("No dimension selected" in m for m in messages(at))


def test_d_model_change_shows_the_new_width_and_drops_missing_dimensions():
    at = open_page({"pe_dims": ["40"]})
    at.sidebar.selectbox(key="d_model").set_value(128).run()
    assert_clean(at)
    c = charts(at)
    assert arr(c["table"]["data"][0]["z"]).shape == (64, 128)
    assert all(arr(t["z"]).shape[1] == 128 for t in c["sum"]["data"])
    assert at.multiselect(key="pe_dims").value == [40]
    at.sidebar.selectbox(key="d_model").set_value(32).run()
    assert_clean(at)
    assert any("d_model is now 32" in m for m in messages(at))
    assert at.multiselect(key="pe_dims").value == [0, 1, 4, 16]
    assert arr(charts(at)["table"]["data"][0]["z"]).shape == (64, 32)


def test_chinese_emoji_and_script_sentences():
    at = open_page({"sentence": "你好🙂"})
    assert_clean(at)
    assert charts(at)["sum"]["layout"]["yaxis"]["ticktext"][:2] == ["你", "好"]
    at = open_page({"sentence": "<script>alert(1)</script>"})
    assert_clean(at)
    c = charts(at)
    assert c["sum"]["layout"]["yaxis"]["ticktext"][0] == "&lt;"
    for spec in c.values():
        assert "<script" not in json.dumps(spec, ensure_ascii=False)
    assert "<script" not in " ".join(m.value for m in (*at.markdown, *at.caption))


def test_empty_sentence_still_explains_the_encoding():
    at = open_page({"sentence": "   "})
    assert_clean(at)
    assert any("The sentence is empty" in m for m in messages(at))
    c = charts(at, names=WITH_SENTENCE[:-1])  # no sentence: no embedding + PE panel
    assert len(c["curves"]["data"]) == 4
    assert any(t("positional.sum.no_sentence", "en") == m for m in messages(at))
    assert [tab.label for tab in at.tabs] == ["Sinusoidal ✓ this model", "Learned", "RoPE", "ALiBi"]


def test_only_the_open_tab_is_drawn_and_its_label_in_the_url_opens_it():
    at = open_page()
    assert [bool(tab.subheader) for tab in at.tabs] == [True, False, False, False]  # the first, by default
    charts(at)  # the top of the page and the sinusoidal tab's two charts, nothing else
    at = open_page({"pe_tab": "RoPE"})
    assert [bool(tab.subheader) for tab in at.tabs] == [False, False, True, False]
    charts(at, tab="rope")
    at = open_page({"pe_tab": "<script>alert(1)</script>"})  # not a label: the first tab, and a notice
    assert_clean(at)
    assert any("pe_tab=`<script>alert(1)</script>` is not available" in m for m in messages(at))
    charts(at)


def test_a_tab_for_each_scheme_with_equation_figures_and_core_numbers():
    pages, c = every_tab()  # random weights, d_model 64, 4 heads: d_k = 16
    at = pages["sinusoidal"]
    assert [tab.label for tab in at.tabs] == ["Sinusoidal ✓ this model", "Learned", "RoPE", "ALiBi"]
    for i, page in enumerate(pages.values()):  # each: the three questions, an equation, explanations
        tab = page.tabs[i]
        heads = [h.value for h in tab.subheader]
        assert heads == [t("positional.part.reach", "en"), t("positional.part.relative", "en"),
                         t("positional.part.beyond", "en")]
        assert len(tab.latex) >= 2 and tab.caption
    # ALiBi: the heatmap panels are core's bias, heads 1-4 of this model
    bias = alibi_bias(4, 12, 12).double().numpy()  # the page draws 12 positions
    panels = [arr(d["z"]) for d in c["alibi_bias"]["data"]]
    assert len(panels) == 4
    for h, z in enumerate(panels):
        np.testing.assert_array_equal(z, bias[h])
    # the relative-position curves coincide for sinusoidal, RoPE and ALiBi, not for a learned table
    spreads = {}
    for name in ("offset", "learned_offset", "rope_offset", "alibi_offset"):
        ys = np.stack([arr(d["y"]).astype(float) for d in c[name]["data"]])
        spreads[name] = np.ptp(ys, axis=0).max()
    assert spreads["offset"] < 1e-4 and spreads["rope_offset"] < 1e-9 and spreads["alibi_offset"] == 0
    assert spreads["learned_offset"] > 0.1
    spread = t("positional.metric.spread", "en")
    metrics = [m.value for p in pages.values() for m in p.metric if m.label == spread]
    assert len(metrics) == 4 and metrics[3] == "0"
    # RoPE: each panel's points are the rotation by p·θ_i of core.rope_angles (d_k = 16)
    angles = rope_angles(8, 16).numpy()
    points = [d for d in c["rope_rotation"]["data"] if d.get("mode") == "markers+text"]
    for d, i in zip(points, fp.rope_pairs(16), strict=True):
        np.testing.assert_allclose(arr(d["x"]), np.cos(angles[:, i]), atol=1e-12)
    # past the training length: the random learned table of 64 rows has no value from row 64 on
    y = arr(c["learned_beyond"]["data"][0]["y"]).astype(float)
    assert np.isfinite(y[:64]).all() and np.isnan(y[64:]).all()
    beyond_alibi = c["alibi_beyond"]["data"]
    assert len(arr(beyond_alibi[0]["x"])) == 128  # 2 × the example training length 64
    assert all(any("an example" in m.value for m in p.caption) for p in pages.values())
    # the overview table names the four schemes
    table = at.dataframe[0].value
    assert list(table[t("positional.table.col.scheme", "en")]) == ["Sinusoidal", "Learned", "RoPE", "ALiBi"]


def test_alibi_toggle_draws_the_decoder_form_with_the_masked_cells_empty():
    at = open_page({"pe_tab": "ALiBi"})
    at.toggle(key="pe_alibi_causal").set_value(True).run()
    assert_clean(at)
    z = arr(charts(at, tab="alibi")["alibi_bias"]["data"][0]["z"]).astype(float)
    causal = alibi_bias(4, 12, 12, causal=True)[0].double().numpy()
    lower = np.tril(np.ones((12, 12), dtype=bool))
    np.testing.assert_array_equal(z[lower], causal[lower])
    assert np.isnan(z[~lower]).all()


def test_chinese_page_has_chinese_titles_tabs_and_figures():
    pages, c = every_tab({"lang": "zh"})
    at = pages["sinusoidal"]
    assert at.title[0].value == t("nav.positional.title", "zh")
    assert [tab.label for tab in at.tabs] == ["正弦 ✓ 本模型", "可学习", "RoPE", "ALiBi"]
    assert [h.value for h in at.header][-1] == "5 · 告诉模型词元位置的四种方法"
    assert c["curves"]["data"][0]["name"] == "维度 0（sin，周期 6.3）"
    assert c["alibi_bias"]["layout"]["annotations"][0]["text"] == "第 1 个头<br>m = 1/4"
    assert c["rope_offset"]["layout"]["xaxis"]["title"]["text"] == "偏移 k"
    assert c["table"]["layout"]["xaxis"]["title"]["text"] == "维度"
    assert any("狗咬人" in m.value for m in at.caption)


def test_512_tokens_keep_the_page_usable():
    sentence = " ".join(f"w{i}" for i in range(700))
    at = open_page({"sentence": sentence, "max_tokens": "512"})
    assert_clean(at)
    c = charts(at)
    n = len(arr(c["sum"]["data"][0]["y"]))
    assert n > 400
    ticks = c["sum"]["layout"]["yaxis"]["tickvals"]
    assert len(ticks) <= fp.MAX_TICKS and c["sum"]["layout"]["height"] <= 900
    assert any(m.value.startswith(f"{n} tokens: only every") for m in at.caption)
    assert arr(c["table"]["data"][0]["z"]).shape == (n, 64)


def test_trained_weights_shade_the_training_length():
    at = open_page(weights=None)  # the app's default: the shipped checkpoint, if present
    assert_clean(at)
    if not any("trained" in b.lower() and "random" not in b.lower() for b in badges(at)):
        pytest.fail("the trained checkpoint is not in this build")
    c = charts(at)
    notes = " ".join(a["text"] for a in c["sin_beyond"]["layout"]["annotations"])
    assert "seen in training (0–8)" in notes
    assert "an example" not in " ".join(m.value for m in at.caption)


def test_minilm_shows_its_real_learned_table():
    from ui.page.settings import minilm_available

    if not minilm_available():
        pytest.fail("all-MiniLM-L6-v2 is not installed")
    at = open_page({"sentence": "Attention is all you need"}, weights="minilm")
    assert_clean(at)
    assert any("MiniLM" in b for b in badges(at)), badges(at)
    from core.loading.bert import load_minilm

    table = load_minilm()[0].src_embed.position.weight.detach().double().numpy()  # (512, 384)
    assert [tab.label for tab in at.tabs] == ["Sinusoidal", "Learned ✓ this model", "RoPE", "ALiBi"]
    assert any("does not use the paper's sinusoids" in m for m in messages(at))
    pages, c = every_tab({"sentence": "Attention is all you need"}, weights="minilm")
    z = arr(c["learned_table"]["data"][0]["z"]).astype(float)
    assert z.shape == (256, 384)  # every 2nd of 512 rows
    np.testing.assert_allclose(z, table[::2], rtol=1e-6, atol=1e-7)
    y = arr(c["learned_beyond"]["data"][0]["y"]).astype(float)
    assert np.isfinite(y[:512]).all() and np.isnan(y[512:]).all()
    assert [a["text"] for a in c["sum"]["layout"]["annotations"]] == [
        "E[id]", "P[pos] (learned)", "LayerNorm(E + P + T) = encoder input"]
    rows = arr(c["sum"]["data"][1]["z"])  # the middle panel: the learned rows of this sentence's positions
    np.testing.assert_allclose(rows, table[: len(rows)], rtol=1e-6, atol=1e-7)
    assert len(arr(c["alibi_bias"]["data"][0]["z"])) == 12 and len(c["alibi_bias"]["data"]) == 4  # 12 heads


def test_random_weights_with_learned_positions_show_their_own_table_without_drawing_the_model():
    """positions=learned: the learned tab shows this seed's table, the very rows the whole model has;
    only the embedding was drawn for it (core.tracing.pipeline.source_trace, Pipeline.src_embedding)."""
    from ui.caches.cache import _load, cache_key
    from ui.page.settings import Settings

    query = {"positions": "learned", "d_model": "32", "num_heads": "4", "seed": "5"}
    labels = [tab.label for tab in open_page(query, weights="random").tabs]
    at = open_page({**query, "pe_tab": labels[list(TAB_CHARTS).index("learned")]}, weights="random")
    assert_clean(at)
    spec = charts(at, tab="learned")["learned_table"]
    pipe = _load(cache_key(Settings(weights="random", positions="learned", d_model=32, num_heads=4, seed=5)))
    assert not pipe.drawn  # the 46k-parameter stack was never drawn for this page
    rows = pipe.model.src_embed.position.weight.detach().numpy()
    z = np.asarray(arr(spec["data"][0]["z"]), dtype=np.float64)
    shown = np.asarray(arr(spec["data"][0]["y"]), dtype=int)  # every n-th position of the table
    assert shown[0] == 0 and len(shown) == len(z) > 1
    np.testing.assert_allclose(z, rows[shown], rtol=1e-5, atol=1e-6)
