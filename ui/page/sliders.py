"""Sliders kept in the URL (``bind="query-params"``), the incoming value checked first: a tampered
``?model_…=`` falls back with a message, never a traceback (the Full model page's sliders)."""

from __future__ import annotations

import math
import re

import streamlit as st

from figures.drawing.text import literal  # URL values in messages (Markdown): inert inside a code span
from ui.page.lang import t


def _shown(raw: str) -> str:
    """A URL value safe to put in a message (messages are Markdown): odd values are not repeated,
    plain ones go in a code span (``_a_`` would otherwise be italic)."""
    return literal(raw) if re.fullmatch(r"[\w.+-]{1,20}", raw) else t("model.url.invalid")


def _parse(raw: str, integer: bool) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    if not math.isfinite(value) or (integer and value != int(value)):
        return None
    return value


def url_slider(label: str, key: str, lo, hi, default, *, step=None, help: str | None = None):
    """A slider bound to ?key=…, validated first; a stored value out of range (the sidebar's
    sizes shrank) is clamped. With a single possible value no slider is drawn."""
    integer = isinstance(lo, int)
    state = st.session_state
    default = min(max(default, lo), hi)
    if lo == hi:
        state.pop(key, None)
        return lo
    why = None
    raw = st.query_params.get(key)
    if raw is not None:
        value = _parse(raw, integer)
        if value is None:
            state[key] = default
            why = t("model.url.whole" if integer else "model.url.number", lo=lo, hi=hi)
        elif not lo <= value <= hi:
            state[key] = type(lo)(min(max(value, lo), hi))
            why = t("model.url.range", lo=lo, hi=hi)
    if key in state and not lo <= state[key] <= hi:
        state[key] = min(max(state[key], lo), hi)
    value = st.slider(
        label,
        lo,
        hi,
        key=key,
        step=step,
        help=help,
        bind="query-params",
        **({} if key in state else {"value": default}),
    )
    if why is not None:
        st.warning(
            t("model.url.ignored", key=key, raw=_shown(raw), why=why, value=value), icon=":material/warning:"
        )
    return value
