"""Page-local widgets bound to the URL, with their incoming value checked first."""

from __future__ import annotations

import streamlit as st

from figures.attention import check_choice
from ui.sidebar import current_lang


def choose(widget, label: str, key: str, options: list, default, notices: list[str], what: str = "",
           fmt=str, **kw):
    """``widget`` (selectbox, radio, select_slider…) bound to the URL as ``?key=…``.

    A bound widget silently drops a value it cannot show, so the value from the URL (or from an
    earlier run) is checked first: a tampered one, or one that no longer exists (layer 5 after the
    sidebar went to 2 layers), is replaced and a notice is appended to ``notices`` for the page to show.
    """
    value, notice = _incoming(key, options, default, what, fmt)
    if notice:
        st.session_state[key] = value
        notices.append(notice)
    if key not in st.session_state:
        kw["index"] = options.index(default)
    return widget(label, options, key=key, bind="query-params", format_func=fmt, **kw)


def chosen(key: str, options: list, default, fmt=str):
    """The value :func:`choose` will give ``key`` in this run, known before its widget is drawn (so a
    page can skip work only the other values need): the widget's, else the URL's, checked the same way."""
    return _incoming(key, options, default, fmt=fmt)[0]


def _incoming(key: str, options: list, default, what: str = "", fmt=str):
    """(value, notice) of ``key`` as this run receives it (the widget's value, else the URL's), checked
    against ``options`` (``figures.attention.check_choice``); (default, None) when there is none."""
    raw = st.session_state.get(key, st.query_params.get(key))
    if raw is None:
        return default, None
    return check_choice(key, raw, options, default, what, fmt, lang=current_lang())


def open_tab(labels: list[str], key: str) -> str:
    """The label of the tab that :func:`tabs` will open in this run, known before it is drawn (so a
    page can skip work only the other tabs need). Streamlit's rule: the value from the browser (or set
    in session state), else the URL's, else the first; one that names no tab gives the first."""
    raw = st.session_state[key] if key in st.session_state else st.query_params.get(key)
    return raw if raw in labels else labels[0]


def tabs(labels: list[str], key: str, notices: list[str]):
    """``st.tabs`` whose open tab is kept in the URL as ``?key=<its label>``; the page draws only the
    open one (``tab.open``). Streamlit drops a label it does not know without a word: here a notice
    says so (the first tab is shown)."""
    raw = None if key in st.session_state else st.query_params.get(key)
    if raw is not None and raw not in labels:
        notices.append(check_choice(key, raw, labels, labels[0], lang=current_lang())[1])
    return st.tabs(labels, key=key, bind="query-params")
