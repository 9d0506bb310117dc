"""Positions are numbered one way on every page, in both languages: from 0, the paper's ``pos``.

The Positional page draws PE(pos) for pos = 0, 1, …; the Masks page said "keys 0…t" while the
Attention page said "positions 1…t" and numbered its tokens from 1. Layers and heads keep their names
(layer 1, head 1): they are not positions.
"""

from __future__ import annotations

import re

import pytest
from apphelpers import assert_clean, open_page, plotly_array, plotly_specs

from i18n import strings, t


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_text_numbers_positions_from_1(lang):
    found = [
        (key, text) for key, text in strings(lang).items()
        if re.search(r"(positions?|keys?|位置|键) ?1 ?(…|\.\.\.|–)", text)
    ]
    assert found == []
    assert "0…t" in t("attention.where.decoder", lang) and "0…t" in t("masks.causal.explain", lang)


def test_the_attention_page_numbers_tokens_from_0():
    at = open_page("pages/attention.py", {"sentence": "a b c", "attn_view": t("attention.tab.query", "en")})
    assert_clean(at)
    query = at.selectbox(key="attn_query")
    assert query.options[0].startswith("0 · ") and query.options[1].startswith("1 · ")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lecture_says_the_causal_diagonal_has_weight(lang):
    at = open_page("pages/lecture.py", {"step": "6", "lang": lang}, weights=None)  # decoder self-attention
    assert_clean(at)
    heat = next(s for s in plotly_specs(at) if s["data"] and s["data"][0].get("type") == "heatmap")
    first_row = plotly_array(heat["data"][0]["z"])[0]
    assert first_row[0] == pytest.approx(1.0)  # position 0 sees only itself: all its weight on the diagonal
    text = " ".join(m.value for m in at.markdown)
    assert ("on the diagonal and to its left" if lang == "en" else "对角线上和它的左侧") in text
