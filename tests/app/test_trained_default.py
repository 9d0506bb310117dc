"""The app as a visitor opens it: the shipped 汉字→拼音 checkpoint is on every page by default."""

from apphelpers import PAGE_SCRIPTS, assert_clean, badges, open_app, open_page, plotly_specs

from core.checkpoint import load_checkpoint
from core.pipeline import CHECKPOINT_PATH
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
    query = {"sentence": "中华人民共和国", "attn_kind": "Decoder cross-attention", "attn_layer": "2"}
    at = open_page("pages/attention.py", query, weights=None)
    assert_clean(at)
    # queries are the decoded pinyin, keys the characters
    def ticks(spec, axis):
        return spec["layout"].get(axis, {}).get("ticktext") or []

    axes = [(ticks(s, "yaxis"), ticks(s, "xaxis")) for s in plotly_specs(at)]
    assert any("zhōng" in rows and "中" in cols for rows, cols in axes)
