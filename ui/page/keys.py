"""Step-by-step navigation driven by the keyboard (and so by a presentation clicker).

    step_buttons(step, total, move)   # Previous / Next; move(-1) or move(+1) runs on a click or a key

Keys: PageDown, → and Space go to the next step; PageUp and ← to the previous one (clickers send
PageDown / PageUp, some the arrows). Keys go through a queue (``ui/components/step_keys.js``), not
Streamlit's button shortcuts: the component's value lists the tab's last presses, each
``{"seq": n, "move": ±1}``, and the server applies each newer press in order (:func:`new_moves`),
stopping at the first / last step. A key typed into a text field, a slider or a tab list, or with a
modifier, is not a move.

``check_step`` reads the step from the URL (``?step=N``); a value that is not a whole number from 1
to ``total`` falls back with a message, never a traceback. Decisions: docs/decisions.md, ui/page/keys.py.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path

import streamlit as st

from i18n import t as _t
from ui.page.lang import t
from ui.page.settings import literal

_WHOLE = re.compile(r"[0-9]{1,6}")
MAX_PRESSES = 100  # the presses the browser keeps and sends (step_keys.js's MAX)
# Registered once, by name; the script is a constant file of ours (no user text reaches it).
STEP_KEYS_JS = Path(__file__).resolve().parents[1] / "components" / "step_keys.js"
_step_keys = st.components.v2.component("glassbox_step_keys", js=STEP_KEYS_JS.read_text("utf-8"))


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


def new_moves(presses: object, seen: int, step: int, total: int) -> tuple[list[int], int]:
    """(the moves to make, the last seq applied) for the browser's list of presses.

    Presses with a ``seq`` above ``seen`` are applied in ``seq`` order from ``step``; a press that
    would go before step 1 or past ``total`` is dropped, as a disabled button ignores its click.
    Anything that is not a list of ``{"seq": int, "move": ±1}`` is ignored (it comes from the browser).

    >>> new_moves([{"seq": 1, "move": -1}, {"seq": 2, "move": 1}, {"seq": 3, "move": 1}], 0, 1, 12)
    ([1, 1], 3)
    >>> new_moves([{"seq": 2, "move": 1}, {"seq": 3, "move": 1}], 2, 12, 12)
    ([], 3)
    """
    if not isinstance(presses, list):
        return [], seen
    fresh = sorted(
        (p["seq"], p["move"]) for p in presses[-MAX_PRESSES:]
        if isinstance(p, dict) and type(p.get("seq")) is int and p.get("move") in (1, -1)
        and type(p.get("move")) is int and p["seq"] > seen
    )
    moves = []
    for seq, move in fresh:
        if seq == seen:  # the same press listed twice
            continue
        seen = seq
        if 1 <= step + move <= total:
            step += move
            moves.append(move)
    return moves, seen


def step_keys(step: int, total: int, move: Callable[[int], None], prefix: str = "lecture") -> None:
    """The key queue (hidden, no room taken): each press not yet applied calls ``move(±1)`` once.

    Session state: ``{prefix}_key_presses`` (the component), ``{prefix}_keys_seq`` (the last press
    applied), ``{prefix}_keys_session`` (this session's id: the browser drops presses of an older
    session, which a new server session never applied)."""
    state = st.session_state
    seq_key = f"{prefix}_keys_seq"
    session = state.setdefault(f"{prefix}_keys_session", uuid.uuid4().hex)

    def applied() -> None:
        presses = (state.get(f"{prefix}_key_presses") or {}).get("presses")
        moves, state[seq_key] = new_moves(presses, state.get(seq_key, 0), step, total)
        for delta in moves:
            move(delta)

    # Constant data for the whole session: new data would replace the element (and its listener).
    _step_keys(key=f"{prefix}_key_presses", data={"session": session, "host": f"st-key-{prefix}_keys"},
               default={"presses": []},
               on_presses_change=applied, height=0)


def step_buttons(step: int, total: int, move: Callable[[int], None], prefix: str = "lecture") -> None:
    """Previous / Next, right-aligned; the keys (:func:`step_keys`) and the hidden twins (←, →, Space).

    Keys of the widgets: ``{prefix}_prev``, ``{prefix}_next`` (visible), ``{prefix}_prev_left``,
    ``{prefix}_next_right``, ``{prefix}_next_space`` (in the hidden ``{prefix}_keys`` container).
    """
    first, last = step <= 1, step >= total
    with st.container(horizontal=True, horizontal_alignment="right", key=f"{prefix}_buttons"):
        st.button(t("lecture.prev"), key=f"{prefix}_prev", disabled=first,
                  on_click=move, args=(-1,), icon=":material/chevron_left:")
        st.button(t("lecture.next"), key=f"{prefix}_next", disabled=last,
                  on_click=move, args=(1,), icon=":material/chevron_right:", icon_position="right",
                  type="primary")
    # Fixed style (no user text); a style-only st.html goes to the event container and takes no space.
    st.html(f"<style>.st-key-{prefix}_keys {{ display: none; }}</style>")
    with st.container(key=f"{prefix}_keys"):
        step_keys(step, total, move, prefix)
        st.button(t("lecture.prev_left"), key=f"{prefix}_prev_left", disabled=first,
                  on_click=move, args=(-1,))
        st.button(t("lecture.next_right"), key=f"{prefix}_next_right", disabled=last,
                  on_click=move, args=(1,))
        st.button(t("lecture.next_space"), key=f"{prefix}_next_space", disabled=last,
                  on_click=move, args=(1,))
