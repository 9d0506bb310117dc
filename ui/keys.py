"""Step-by-step navigation driven by the keyboard (and so by a presentation clicker).

    step_buttons(step, total, move)   # Previous / Next; move(-1) or move(+1) runs on a click or a key

Keys: PageDown, → and Space go to the next step; PageUp and ← to the previous one. Clickers send
PageDown / PageUp (some send the arrows).

**Decision: Streamlit's own button shortcuts, not a JavaScript keydown hook.** Streamlit 1.67's
``st.button(shortcut=...)`` binds one key per button, in its own frontend: it already ignores a
key typed into a text field, handles reruns (no listener added twice, none left behind when the
page changes, so PageDown scrolls normally on the other pages) and calls the button's own trigger,
so no script of ours runs in the page and nothing depends on Streamlit's DOM. One key per button,
so the visible Previous / Next carry PageUp / PageDown (their label shows the key) and three twin
buttons carry ←, → and Space; the twins sit in a container that a fixed style rule hides.
A disabled button (no step before the first / after the last) ignores its key too.

``check_step`` reads the step from the URL (``?step=N``); a value that is not a whole number from 1
to ``total`` falls back with a message, never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import streamlit as st

from i18n import t as _t
from ui.lang import t
from ui.settings import literal

_WHOLE = re.compile(r"[0-9]{1,6}")


def check_step(raw: str | None, total: int, lang: str = "en") -> tuple[int | None, str | None]:
    """(step, notice) for ``?step=raw``: (None, None) when absent; (N, None) when 1 ≤ N ≤ total.

    A number out of range goes to the nearest end (step=999 → the last step), anything else to
    step 1; both with a notice naming the value (inside a code span: inert in Markdown).

    >>> check_step("3", 12), check_step("999", 12)[0], check_step("abc", 12)[0]
    ((3, None), 12, 1)
    """
    if raw is None:
        return None, None
    total = max(1, total)
    value = raw.strip()
    if value == raw and _WHOLE.fullmatch(value) and 1 <= int(value) <= total:
        return int(value), None
    step = min(max(int(value), 1), total) if _WHOLE.fullmatch(value) else 1
    return step, _t("lecture.bad_step", lang, value=literal(raw), total=total, step=step)


def step_buttons(step: int, total: int, move: Callable[[int], None], prefix: str = "lecture") -> None:
    """Previous / Next with PageUp / PageDown, right-aligned, and the hidden twins (←, →, Space).

    Keys of the widgets: ``{prefix}_prev``, ``{prefix}_next`` (visible), ``{prefix}_prev_left``,
    ``{prefix}_next_right``, ``{prefix}_next_space`` (in the hidden ``{prefix}_keys`` container).
    """
    first, last = step <= 1, step >= total
    with st.container(horizontal=True, horizontal_alignment="right", key=f"{prefix}_buttons"):
        st.button(t("lecture.prev"), key=f"{prefix}_prev", shortcut="PageUp", disabled=first,
                  on_click=move, args=(-1,), icon=":material/chevron_left:")
        st.button(t("lecture.next"), key=f"{prefix}_next", shortcut="PageDown", disabled=last,
                  on_click=move, args=(1,), icon=":material/chevron_right:", icon_position="right",
                  type="primary")
    # Fixed style (no user text); a style-only st.html goes to the event container and takes no space.
    st.html(f"<style>.st-key-{prefix}_keys {{ display: none; }}</style>")
    with st.container(key=f"{prefix}_keys"):
        st.button(t("lecture.prev_left"), key=f"{prefix}_prev_left", shortcut="Left", disabled=first,
                  on_click=move, args=(-1,))
        st.button(t("lecture.next_right"), key=f"{prefix}_next_right", shortcut="Right", disabled=last,
                  on_click=move, args=(1,))
        st.button(t("lecture.next_space"), key=f"{prefix}_next_space", shortcut="Space", disabled=last,
                  on_click=move, args=(1,))
