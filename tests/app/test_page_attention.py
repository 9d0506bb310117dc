"""The Attention page through AppTest, opened cold: real numbers, one heatmap per head, safe URL params."""

import apphelpers
import numpy as np
import pytest
from apphelpers import ROOT, TEST_WEIGHTS, assert_clean, badges, messages
from apphelpers import plotly_array as arr
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

from core.pipeline import load_pipeline, run_pipeline
from figures.style import token_label
from ui.settings import DEFAULT_SENTENCE, MAX_TOKENS, Settings

PAGE = str(ROOT / "pages" / "attention.py")


def open_page(query: dict | None = None) -> AppTest:
    return apphelpers.open_page("pages/attention.py", query)


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
    grid = [s for s in specs(at) if len(s["data"]) == 2 * 4 and s["data"][0]["type"] == "heatmap"]
    assert len(grid) == 1  # layers × heads
    assert any("these patterns are noise" in c.value for c in at.caption)


def test_switching_kind_layer_head_follows():
    at = open_page()
    at.radio(key="attn_kind").set_value("cross").run()
    at.selectbox(key="attn_layer").set_value(2).run()
    at.selectbox(key="attn_head").set_value(3).run()
    assert_clean(at)
    run = reference()
    attn = run.trace.decoder[1].cross_attn
    heads = heads_chart(at)
    assert heads["layout"]["yaxis"]["ticktext"] == [token_label(t) for t in run.tgt_tokens]  # queries: target
    assert heads["layout"]["xaxis"]["ticktext"] == [token_label(t) for t in run.src_tokens]  # keys: source
    np.testing.assert_array_equal(arr(heads["data"][2]["z"]), attn.weights[0, 2].numpy())
    assert "head 3 (step by step)" in [a["text"] for a in heads["layout"]["annotations"]]
    np.testing.assert_array_equal(arr(by_title(at, "K = X W_K + b_K")["data"][0]["z"]), attn.k[0, 2].numpy())
    at.selectbox(key="attn_query").set_value(2).run()
    at.radio(key="attn_bar").set_value("mean").run()
    bars = [s for s in specs(at) if s["data"][0]["type"] == "bar"][0]
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
    assert not any("<script" in str(o) for o in at.selectbox(key="attn_query").options if "alert" in str(o))


def test_empty_sentence_shows_a_message():
    at = open_page({"sentence": "   "})
    assert_clean(at)
    assert any("empty" in m for m in messages(at))
    assert not at.get("plotly_chart")


def test_tampered_url_falls_back_with_a_message():
    at = open_page({"attn_layer": "99", "attn_head": "-1", "attn_kind": "foo", "attn_query": "x"})
    assert_clean(at)
    shown = " ".join(messages(at))
    assert "attn_layer=`99`" in shown and "attn_head=`-1`" in shown and "attn_kind=`foo`" in shown
    assert at.selectbox(key="attn_layer").value == 2  # clamped to the last layer
    assert at.selectbox(key="attn_head").value == 1
    assert at.radio(key="attn_kind").value == "encoder"
    assert at.selectbox(key="attn_query").value == 0


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
