"""The app as a visitor opens it: the shipped 汉字→拼音 checkpoint is on every page by default."""

import numpy as np
from apphelpers import PAGE_SCRIPTS, assert_clean, badges, open_app, open_page, plotly_array, plotly_specs

from core.tracing.pipeline import CHECKPOINT_PATH
from core.training.checkpoint import load_checkpoint
from i18n import t


def test_every_page_shows_the_trained_checkpoint_by_default():
    at = open_app(weights=None)
    assert at.radio(key="weights").value == "trained"
    config = load_checkpoint(CHECKPOINT_PATH)[0].config
    for key in ("d_model", "d_ff"):  # the sidebar shows the checkpoint's sizes, fixed
        assert at.selectbox(key=key).value == getattr(config, key) and at.selectbox(key=key).disabled
    assert at.select_slider(key="num_heads").value == config.num_heads
    for page in PAGE_SCRIPTS:
        at.switch_page(page).run()
        assert_clean(at)
        assert any("trained 汉字→拼音" in b for b in badges(at)), page


def test_chinese_is_decoded_to_pinyin_with_unknowns_visible():
    decoding = t("model.tab.decoding", "en")  # the Full model page's tab
    at = open_page("pages/model.py", {"sentence": "中国人 ok", "model_view": decoding}, weights=None)
    assert_clean(at)
    shown = " ".join(c.value for c in at.code)
    assert "zhōng guó rén" in shown  # the greedy output, one syllable per character
    assert "[UNK]" in shown  # the English letters are outside the character vocabulary


def test_cross_attention_of_a_chinese_phrase_is_the_alignment():
    """The chart's own numbers: in the last decoder layer's cross-attention, averaged over the heads
    (the README's measure), the row of the decoder position that writes syllable j (it reads [BOS]
    or syllable j-1) peaks in the column of character j. (A phrase of six characters: on seven or
    more the model is known to slip, see tests/core/training/test_checkpoint.py.)"""
    chars = list("我们学习汉语")
    query = {"sentence": "".join(chars), "attn_kind": "Decoder cross-attention", "attn_layer": "2"}
    at = open_page("pages/attention.py", query, weights=None)
    assert_clean(at)
    charts = [s for s in plotly_specs(at) if s["layout"].get("xaxis", {}).get("ticktext") == chars]
    assert len(charts) == 1, [s["layout"].get("xaxis", {}).get("ticktext") for s in plotly_specs(at)]
    spec = charts[0]
    # queries: [BOS] and the decoded pinyin fed back; keys: the characters
    assert spec["layout"]["yaxis"]["ticktext"] == ["[BOS]", "wǒ", "men", "xué", "xí", "hàn"]
    heads = [plotly_array(trace["z"]) for trace in spec["data"] if trace["type"] == "heatmap"]
    assert len(heads) == 4 and all(h.shape == (6, 6) for h in heads)  # 4 heads, 6 queries × 6 keys
    for weights in heads:  # a row is one query's softmax over the keys (not a column: not transposed)
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    assert np.mean(heads, axis=0).argmax(axis=1).tolist() == list(range(6))
