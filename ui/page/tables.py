"""Tables (``st.dataframe``) whose cells may hold user text, safe to download.

Streamlit's table toolbar offers "Download as CSV" (and a copy to the clipboard) of exactly the values
given to ``st.dataframe``, unescaped: a token typed as ``=HYPERLINK(…)`` would be run by the
spreadsheet that opens the file. So every text cell goes through ``figures.drawing.export.safe_table`` (the
same rule as our own CSV downloads: a leading ``'`` before ``=``, ``+``, ``-``, ``@``, tab or carriage
return), and a caption under the table says why a cell shows that ``'``.
"""

from __future__ import annotations

import streamlit as st

from figures.drawing.export import safe_table
from ui.page.lang import t


def show_table(data, **kwargs) -> None:
    """``st.dataframe(data, **kwargs)`` with its text cells formula-safe; rows (a list of dicts) or
    columns (a dict of lists)."""
    safe = safe_table(data)
    st.dataframe(safe, **kwargs)
    if safe != data:
        st.caption(t("tables.formula_note"))
