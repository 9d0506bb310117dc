"""Page-local widgets kept in the URL by a stable id (the same in every language), the incoming value
checked first.

Why by hand, not ``bind="query-params"``: a bound widget writes its *displayed* label into the URL
(``?model_view=5 · Greedy decoding``, ``?attn_kind=Decoder cross-attention``), so a link made in English
opened the first tab in 中文, and a label that changes with the model (the positional tab of the model's
own scheme gains "✓ this model") refused a link made with another. Here the URL holds an id
(``?model_view=decoding``, ``?attn_kind=cross``, ``?pe_tab=alibi``): for a radio or a selectbox the option
itself (``str(option)``), for tabs the id the page gives each tab. A value from an older link, a label
in any language (``aliases``), still opens its view, and the URL is rewritten to the id. The default
(first tab, default option) is left out of the URL.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import streamlit as st

from figures.drawing.text import literal  # URL values in notices (Markdown): inert inside a code span
from figures.positional import DEFAULT_MAX_POS, MAX_DIMS_SHOWN, MAX_POS_RANGE, default_dims
from i18n import LANGS, t
from ui.page.lang import current_lang


def check_choice(
    key: str,
    raw,
    options: Sequence,
    default,
    what: str = "",
    fmt: Callable[[object], str] = str,
    lang: str = "en",
) -> tuple[object, str | None]:
    """A value from the URL (a widget's label, ``fmt(option)``) or from an earlier run (an option),
    checked against today's options.

    Returns (value, notice): the option itself if ``raw`` names one; a number outside the range of
    integer options is clamped to the nearest end (layer 5 when there are 2 layers -> layer 2);
    anything else falls back to ``default``. The notice says what was changed, or is None.

    >>> check_choice("attn_layer", "99", [1, 2], 1, "layer")
    (2, 'attn_layer=`99` is not available (layer 1–2): showing layer 2.')
    """
    by_text = {fmt(o): o for o in options} | {str(o): o for o in options}
    if str(raw) in by_text:
        return by_text[str(raw)], None
    shown = str(raw)[:40]
    value = default
    ints = all(isinstance(o, int) for o in options)
    if ints and options:
        try:
            number = float(str(raw).strip())
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            value = min(max(round(number), min(options)), max(options))
    if ints and options:
        allowed, showing = f"{what} {min(options)}–{max(options)}".strip(), f"{what} {value}".strip()
    else:
        allowed = t("attention.choice.one_of", lang, options=", ".join(map(str, map(fmt, options))))
        showing = fmt(value)
    return value, t(
        "attention.choice.unavailable", lang, key=key, value=literal(shown), allowed=allowed, showing=showing
    )


def _shorten(values: Sequence[str], limit: int = 40) -> str:
    return ", ".join(literal(v, limit) for v in values[:5]) + (", …" if len(values) > 5 else "")


def check_dims(raw: Sequence[str], d_model: int, lang: str = "en") -> tuple[list[int], str | None]:
    """``?pe_dims=…`` values -> (dimensions to show, notice or None).

    Accepted exactly as Streamlit's bound multiselect accepts them: the decimal text of a dimension
    0 … d_model − 1, duplicates dropped, at most MAX_DIMS_SHOWN. Nothing valid -> the defaults.
    """
    options = {str(j): j for j in range(d_model)}
    valid: list[int] = []
    bad: list[str] = []
    for value in raw:
        if value in options:
            if options[value] not in valid:
                valid.append(options[value])
        else:
            bad.append(value)
    notice = None
    if len(valid) > MAX_DIMS_SHOWN:
        notice = t("positional.notice.too_many_dims", lang, n=len(valid), limit=MAX_DIMS_SHOWN)
        valid = valid[:MAX_DIMS_SHOWN]
    if bad:
        using = valid or default_dims(d_model)
        notice = t("positional.notice.bad_dims", lang, values=_shorten(bad), last=d_model - 1, dims=using)
    return (valid or default_dims(d_model)), notice


def check_max_pos(raw: str | None, lang: str = "en") -> tuple[int, str | None]:
    """``?pe_max_pos=…`` -> (number of positions to draw, notice or None); bad values -> the default."""
    if raw is None:
        return DEFAULT_MAX_POS, None
    lo, hi = MAX_POS_RANGE
    text = str(raw).strip()
    if text.isascii() and text.isdigit() and lo <= int(text) <= hi:
        return int(text), None
    return DEFAULT_MAX_POS, t(
        "positional.notice.bad_max_pos", lang, value=literal(text), lo=lo, hi=hi, default=DEFAULT_MAX_POS
    )


def aliases(ids: Iterable, *labels: Callable[[object, str], str]) -> dict[str, object]:
    """{label: id} for every ``label(id, lang)`` in every language: the values older links carry.

    >>> aliases(["a"], lambda i, lang: f"{i}-{lang}")
    {'a-en': 'a', 'a-zh': 'a'}
    """
    ids = list(ids)
    return {label(i, lang): i for label in labels for lang in LANGS for i in ids}


def choose(widget, label: str, key: str, options: list, default, notices: list[str], what: str = "",
           fmt=str, aliases: Mapping[str, object] | None = None, **kw):
    """``widget`` (selectbox, radio, select_slider…) kept in the URL as ``?key=<option>``.

    Streamlit drops a value it cannot show silently, so the value from the URL (or from an earlier run)
    is checked first: a tampered one, or one that no longer exists (layer 5 after the sidebar went to
    2 layers), is replaced and a notice is appended to ``notices`` for the page to show. ``fmt`` labels
    the options; ``aliases`` maps other values an older link may carry (labels in another language)
    to options. The value outlives the widget while the session lasts (another tab, another page).
    """
    value, notice = _incoming(key, options, default, what, fmt, aliases)
    if notice:
        st.session_state[key] = value
        notices.append(notice)
    if key not in st.session_state:
        kw["index"] = options.index(value)
    chosen_value = widget(label, options, key=key, format_func=fmt, persist_state="session", **kw)
    _write_url(key, chosen_value, default)
    return chosen_value


def chosen(key: str, options: list, default, fmt=str, aliases: Mapping[str, object] | None = None):
    """The value :func:`choose` will give ``key`` in this run, known before its widget is drawn (so a
    page can skip work only the other values need): the widget's, else the URL's, checked the same way."""
    return _incoming(key, options, default, fmt=fmt, aliases=aliases)[0]


def choose_position(label: str, key: str, tokens: Sequence[str], notices: list[str], default: int = 0) -> int:
    """A token of ``tokens`` chosen by its position (from 0, as on every page), kept in the URL as
    ``?key=<position>``."""
    return choose(st.selectbox, label, key, list(range(len(tokens))), default, notices,
                  t("attention.what.position", current_lang()), fmt=lambda i: f"{i} · {tokens[i]}")


def warn(notices: list[str], box=st) -> None:
    """The notices :func:`choose` and :func:`tabs` collected, shown in ``box`` (then forgotten)."""
    for notice in notices:
        box.warning(notice, icon=":material/warning:")
    notices.clear()


def _incoming(key: str, options: list, default, what: str = "", fmt=str,
              aliases: Mapping[str, object] | None = None):
    """(value, notice) of ``key`` as this run receives it (the widget's value, else the URL's), checked
    against ``options`` (:func:`check_choice`); (default, None) when there is none."""
    state = st.session_state
    raw = state[key] if key in state else st.query_params.get(key)
    if raw is None:
        return default, None
    if isinstance(raw, str) and aliases and raw in aliases:
        raw = aliases[raw]
    return check_choice(key, raw, options, default, what, fmt, lang=current_lang())


def _write_url(key: str, value, default) -> None:
    """``?key=<value>`` in the URL; the default is left out."""
    params = st.query_params
    if value == default:
        params.pop(key, None)
    elif params.get(key) != str(value):
        params[key] = str(value)


def _open_index(labels: Sequence[str], key: str, ids: Sequence[str] | None,
                aliases: Mapping[str, str] | None) -> tuple[int, str | None]:
    """(index of the tab to open, notice): the value in session state (a label, in any language after
    a language switch), else the URL's (an id, or an older link's label), else the tab open when the
    page was last left (``_left_open``); a URL value that names no tab gives the first tab and a notice."""
    ids = list(ids or labels)
    state = st.session_state
    from_url = key not in state
    raw = st.query_params.get(key) if from_url else state[key]
    if raw is None:
        raw, from_url = state.get(_left_open(key)), False
    if raw is None:
        return 0, None
    raw = str(raw)
    found = _tab_named(raw, labels, ids, aliases or {})
    if found is not None:
        return found, None
    notice = check_choice(key, raw, list(labels), labels[0], lang=current_lang())[1] if from_url else None
    return 0, notice


def _tab_named(raw: str, labels: Sequence[str], ids: list[str], aliases: Mapping[str, str]) -> int | None:
    if raw in ids:
        return ids.index(raw)
    if raw in labels:
        return list(labels).index(raw)
    folded = raw.strip().casefold()  # ?pe_tab=ALiBi or RoPE: an id typed by hand
    for i, tab_id in enumerate(ids):
        if tab_id.casefold() == folded:
            return i
    if aliases.get(raw) in ids:
        return ids.index(aliases[raw])
    return None


def tabs(labels: Sequence[str], key: str, notices: list[str], ids: Sequence[str] | None = None,
         aliases: Mapping[str, str] | None = None):
    """``st.tabs`` whose open tab is kept in the URL as ``?key=<its id>`` (``ids``: one per tab, the
    labels by default); the page draws only the open one (``tab.open``): the browser draws a page's charts
    one after another, so every chart of a closed tab would delay the ones shown. A URL value that names
    no tab opens the first, and a notice says so (Streamlit would drop it without a word)."""
    ids = list(ids or labels)
    index, notice = _open_index(labels, key, ids, aliases)
    if notice:
        notices.append(notice)
    if st.session_state.get(key) != labels[index]:  # from the URL, or a label of another language
        st.session_state[key] = labels[index]
    containers = st.tabs(list(labels), key=key, on_change="rerun")
    opened = next((i for i, tab in enumerate(containers) if tab.open), 0)
    _write_url(key, ids[opened], ids[0])
    st.session_state[_left_open(key)] = ids[opened]
    return containers


def _left_open(key: str) -> str:
    """Where the open tab's id is kept for the session: Streamlit forgets a tab widget's state when
    another page is shown (a page switch also clears the page's URL parameters)."""
    return f"_tab_open_{key}"


def text_in_url(label: str, key: str, default: str = "", max_chars: int = 200, **kw) -> str:
    """A one-line text box kept in the URL as ``?key=<text>`` (left out when it is the default). The
    URL's text is cleaned first (control characters dropped, at most ``max_chars``)."""
    import unicodedata

    state = st.session_state
    if key not in state:
        raw = st.query_params.get(key)
        raw = default if raw is None else str(raw)
        state[key] = "".join(ch for ch in raw if unicodedata.category(ch) not in ("Cc", "Cs"))[:max_chars]
    value = st.text_input(label, key=key, max_chars=max_chars, **kw)
    _write_url(key, value, default)
    return value
