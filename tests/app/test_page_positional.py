"""The Positional encoding page through AppTest, opened cold, including tampered ?pe_dims / ?pe_max_pos."""

import json

import apphelpers
import numpy as np
from apphelpers import ROOT, assert_clean, badges, messages
from apphelpers import plotly_array as arr
from streamlit.testing.v1 import AppTest

from core.positional import sinusoidal_encoding

PAGE = str(ROOT / "pages" / "positional.py")
WITH_SENTENCE = ["curves", "table", "gram", "offsets", "sum"]


def open_page(query: dict | None = None) -> AppTest:
    return apphelpers.open_page("pages/positional.py", query)


def charts(at: AppTest, names=WITH_SENTENCE) -> dict[str, dict]:
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(specs) == len(names), len(specs)
    return dict(zip(names, specs, strict=True))


def curve_names(spec: dict) -> list[str]:
    return [t["name"] for t in spec["data"]]


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
    offsets = [arr(t["y"]) for t in c["offsets"]["data"]]
    assert len(offsets) == 4 and all(np.allclose(o, offsets[0], atol=1e-4) for o in offsets)
    ticks = c["sum"]["layout"]["yaxis"]["ticktext"]
    assert ticks[:4] == ["注意力", "就是", "一", "切"]
    assert [arr(t["z"]).shape for t in c["sum"]["data"]] == [(len(ticks), 64)] * 3
    text = " ".join(m.value for m in (*at.markdown, *at.caption, *at.latex))
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
