"""Every sentence that states which query heads share keys and values follows the model's grouping
(issue 38, item 3): one key/value head for all of them is multi-query attention, said in the singular;
as many key/value heads as heads is no grouping, said nowhere; otherwise each group is named as the
model has it (groups are even: a head count not divisible by the key/value heads is refused)."""

from __future__ import annotations

import re

import pytest
from apphelpers import assert_clean, messages, open_page

import figures.attention as fa
from i18n import t

MQA = "qwen2-mqa"  # a tiny Qwen2 folder whose 4 query heads share one key/value head
SENTENCE = "The cat sat on the mat. 猫坐在垫子上。"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_groups_are_the_models(lang):
    for h, kv in ((8, 2), (6, 3), (8, 4), (4, 2)):
        said = fa.groups_text(h, kv, lang)
        r = h // kv
        for g in range(kv):  # every group named, heads from 1, in the model's order (repeat_kv)
            assert t("attention.gqa.group", lang, first=g * r + 1, last=(g + 1) * r, kv=g + 1) in said
        assert said.count(t("attention.gqa.sep", lang)) == kv - 1
    assert fa.groups_text(4, 4, lang) == fa.sharing_text(4, 4, lang) == fa.sharing_text(4, None, lang) == ""


def test_one_key_value_head_is_multi_query_attention_in_the_singular():
    said = fa.sharing_text(4, 1, "en")
    assert said == t("attention.gqa.one", "en", h=4)
    assert "Multi-query" in said and "share one key/value head." in said
    assert not re.search(r"\b1 key/value heads\b", said)
    assert "多查询注意力" in fa.sharing_text(4, 1, "zh")


@pytest.fixture(scope="module")
def mqa_root(tmp_path_factory):
    """The tests' own Qwen2 folder maker (tests/modelfolders.py), with one key/value head."""
    from tests import modelfolders

    root = tmp_path_factory.mktemp("mqa")
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(modelfolders.SIZES, "kv_heads", 1)
        modelfolders.MAKERS["qwen2-tiny"](root / MQA, root)
    return root


@pytest.fixture
def mqa(mqa_root, monkeypatch):
    from ui.folders.models import find_models

    monkeypatch.setenv("GLASSBOX_MODELS", str(mqa_root))
    monkeypatch.setenv("HF_HUB_CACHE", str(mqa_root / "no-hub-cache"))
    find_models(refresh=True)
    return f"hf:{MQA}"


def page_texts(at) -> list[str]:
    return [
        *messages(at),
        *(c.value for c in at.caption),
        *(m.value for m in at.markdown),
        *(m.value for m in at.sidebar.markdown),
        *(c.value for c in at.sidebar.caption),
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_says_one_key_value_head_for_a_multi_query_model(mqa, lang):
    query = {"lang": lang, "sentence": SENTENCE}
    said = {}
    pages = (("pages/overview.py", {}), ("pages/attention.py", {}), ("pages/lecture.py", {"step": "5"}))
    for page, extra in pages:
        at = open_page(page, {**query, **extra}, weights=mqa)
        assert_clean(at)
        said[page] = page_texts(at)
    everything = " ".join(s for texts in said.values() for s in texts)
    assert not re.search(r"\b1 key/value heads\b", everything)
    assert not re.search(r"the next \d+ the second|接下来的 \d+ 个头用第二个", everything)
    assert t("attention.gqa.one", lang, h=4) in said["pages/attention.py"]
    assert t("overview.explain.mqa", lang, h=4, kv=1, g=4) in said["pages/overview.py"]
    assert any(t("lecture.decoder.mqa", lang, h=4, kv=1, groups="") in s for s in said["pages/lecture.py"])
    if lang == "en":  # the badge and the paper's differences: no plural for one
        assert "(1 key/value)" in everything
