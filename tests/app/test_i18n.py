"""中文 / English: every key in both languages, the same placeholders, and the switch in the app."""

from __future__ import annotations

import re

import pytest
from apphelpers import PAGE_SCRIPTS, messages, open_page

from i18n import LANGS, placeholders, strings, t

CJK = re.compile(r"[\u4e00-\u9fff]")


def test_both_languages_have_the_same_keys():
    en, zh = strings("en"), strings("zh")
    assert sorted(set(en) - set(zh)) == [], "keys missing in i18n/zh"
    assert sorted(set(zh) - set(en)) == [], "keys missing in i18n/en"


def test_same_placeholders_and_no_empty_text():
    en, zh = strings("en"), strings("zh")
    for key in en:
        assert en[key].strip() and zh[key].strip(), key
        assert placeholders(en[key]) == placeholders(zh[key]), key


def test_chinese_texts_are_translated():
    """A zh text that has words must have Chinese in it (symbols and formulas may stay as they are)."""
    en, zh = strings("en"), strings("zh")
    untranslated = [
        key
        for key, text in zh.items()
        if re.search(r"[A-Za-z]{4,}\s+[A-Za-z]{3,}\s+[A-Za-z]{3,}", en[key]) and not CJK.search(text)
    ]
    assert untranslated == []


def test_a_missing_key_falls_back_and_never_raises():
    assert t("no.such.key", "zh") == "no.such.key"
    assert t("run.failed", "zh", wrong_name=1) == strings("zh")["run.failed"]  # unformatted, no KeyError
    assert t("run.failed", "xx", error="E") == t("run.failed", "en", error="E")


@pytest.mark.parametrize("lang", LANGS)
def test_sidebar_and_title_follow_the_language(lang):
    at = open_page("pages/attention.py", {"lang": lang})
    assert at.title[0].value == t("nav.attention.title", lang)
    assert at.text_area(key="sentence").label == t("sidebar.sentence", lang)
    assert at.radio(key="weights").label == t("sidebar.weights", lang)
    assert not at.exception


def test_switching_language_keeps_other_settings_and_updates_the_url():
    at = open_page("pages/embeddings.py", {"d_model": "32"})
    at.button_group(key="lang").set_value("zh").run()  # the segmented control
    assert at.query_params["lang"] == ["zh"] or at.query_params["lang"] == "zh"
    assert at.title[0].value == t("nav.embeddings.title", "zh")
    assert at.selectbox(key="d_model").value == 32
    assert not at.exception


def test_bad_lang_in_the_url_falls_back_with_a_message():
    at = open_page("pages/overview.py", {"lang": "<script>"})
    assert any("lang" in m and "en" in m for m in messages(at)), messages(at)
    assert at.title[0].value == t("nav.overview.title", "en")
    assert not at.exception


@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_every_page_runs_in_chinese(page):
    at = open_page(page, {"lang": "zh"})
    assert not at.exception, page
    assert CJK.search(at.title[0].value)
