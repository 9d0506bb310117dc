"""The head view as a self-contained HTML page in an iframe: SVG lines and vanilla JS, offline.

    data = figures.attention_views.head_view_data(attn, q_tokens, k_tokens, attn_kind=..., layer=...,
                                                  lang=...)
    show_head_view(data)

Why HTML and not plotly: "hover a token to isolate its lines" hides every other line, which a plotly
hover cannot do without custom JS. The data goes in as JSON inside a ``<script type="application/json">``
with ``<``, ``>`` and ``&`` escaped (``\\u003c``…), so no token can close the script element; the
component sets every token with ``textContent``. A sentence ``<script>alert(1)</script>`` is text.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

TEMPLATE = Path(__file__).with_name("head_view.html")
PLACEHOLDER = "__HEAD_VIEW_DATA__"
MAX_HEIGHT = 620  # the iframe's height at most: longer sentences scroll inside it (fits 1280×720)
MIN_HEIGHT = 240


@functools.cache
def _template() -> str:
    return TEMPLATE.read_text(encoding="utf-8")


def script_json(data: object) -> str:
    """JSON that is safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` left to parse as HTML.

    >>> script_json({"t": "</script><b>&"})
    '{"t":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for ch, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                     ("\u2029", "\\u2029")):  # fmt: skip
        text = text.replace(ch, code)
    return text


def head_view_html(data: dict) -> str:
    """The whole page: the template with the data inserted once (the data is never scanned again)."""
    before, after = _template().split(PLACEHOLDER)
    return before + script_json(data) + after


def head_view_height(data: dict) -> int:
    """Tall enough for every row of a short sentence (26 px rows), at most MAX_HEIGHT: then it scrolls."""
    rows = max(len(data["left"]), len(data["right"]), 1)
    row = 26 if rows <= 24 else 20
    bar = 40 if len(data["heads"]) <= 8 else 72  # the head checkboxes wrap onto a second line
    return int(min(MAX_HEIGHT, max(MIN_HEIGHT, bar + 30 + 28 + rows * row + 12)))


def show_head_view(data: dict, *, alt: str, height: int | None = None) -> None:
    """Draw the view; ``alt`` names the iframe for screen readers (and tests find it by it)."""
    st.iframe(head_view_html(data), height=height or head_view_height(data), alt=alt)
