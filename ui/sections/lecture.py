"""The Lecture page's Streamlit parts: the step on screen (``current_step``: a room's, a followed
``?step=N``, or the session's), Previous / Next, the page's fixed stylesheet and how a slide's view
(``figures.classroom.lecture.SlideView``, built once per run, step and language) is laid out. The slides
themselves are built in ``figures/classroom/lecture.py``. The page's decisions (URL per step, keys, the folded
sidebar, rooms) are in docs/decisions.md, "Lecture mode"."""

from __future__ import annotations

import math
import time

import streamlit as st

import ui
from figures.classroom.lecture import SlideView
from ui.page.keys import check_step

STEP = "lecture_step"  # the step on screen (1-based), kept per session
URL_SEEN = "lecture_step_url"  # the ?step= value this page wrote last: another one is followed
MOVED = "lecture_step_moved"  # Previous / Next (a click or a key) moved the step in this run
WRITTEN = "lecture_steps_written"  # {?step= value: when this session last wrote it} (time.monotonic)
STALE = 30.0  # seconds: a ?step= this session wrote that recently is the browser's old URL, not a link

# Fixed stylesheet (no user text): compact chrome, large text. st.html with only <style> goes to
# the event container and takes no room on the page.
STYLE = """<style>
[data-testid="stHeader"] { background: transparent; }
[data-testid="stMainBlockContainer"] { padding-top: 1rem; padding-bottom: 1rem; }
[data-testid="stMainBlockContainer"] > div > [data-testid="stElementContainer"]:has(h1),
[data-testid="stMainBlockContainer"] > div > [data-testid="stElementContainer"]:has(
  [data-testid="stCaptionContainer"]) { display: none; }
.st-key-lecture_slide h2 { font-size: 2rem; padding: 0.1rem 0; }
.st-key-lecture_text [data-testid="stMarkdown"] p { font-size: 1.3rem; line-height: 1.45; }
.st-key-room_code_big p { font-size: 5rem; font-weight: 700; letter-spacing: 0.12em; line-height: 1.1;
  font-family: "Source Code Pro", monospace; margin: 0; }
.st-key-room_code [data-testid="stCode"] code { font-size: 1.4rem; }
.st-key-room_answered p { font-size: 1.5rem; }
.st-key-room_result [data-testid="stAlertContainer"] p,
.st-key-room_question [data-testid="stAlertContainer"] p,
.st-key-room_question label p { font-size: 1.25rem; }
.st-key-room_result p code, .st-key-room_question p code { font-size: 1em; }
</style>"""

def _move(delta: int) -> None:
    """Previous / Next."""
    st.session_state[STEP] = st.session_state.get(STEP, 1) + delta
    st.session_state[MOVED] = True


def current_step(total: int, lang: str, room_step: int | None = None) -> int:
    """The step to show, 1 … total: a room's (``room_step``: a lecturer who took a room over), else a
    ``?step=`` this page did not write (a link, a bookmark), else the session's; a tampered one falls
    back with a message. The URL says the step.

    The browser sends the URL it has with every rerun, and under load that may not yet hold the step
    the last runs wrote (a key pressed while their replies were on their way): a step this session
    wrote within ``STALE`` seconds is such an old URL, not a link to follow, and neither is any URL in
    a run that Previous / Next (a click or a key) moved."""
    state = st.session_state
    raw = st.query_params.get("step")
    notice = None
    moved = state.pop(MOVED, False)
    written = state.setdefault(WRITTEN, {})
    now = time.monotonic()
    ours = raw is not None and now - written.get(raw, -math.inf) < STALE
    if room_step is not None:
        step = room_step
    elif raw is not None and raw != state.get(URL_SEEN) and not moved and not ours:
        step, notice = check_step(raw, total, lang)
    else:
        step = state.get(STEP, 1)
    step = min(max(int(step), 1), total)
    state[STEP] = step
    state[URL_SEEN] = str(step)
    written[state[URL_SEEN]] = now  # at most one entry per step
    if raw != state[URL_SEEN]:
        st.query_params["step"] = state[URL_SEEN]
    if notice:
        st.warning(notice, icon=":material/warning:")
    return step


def show_slide(view: SlideView) -> None:
    """The slide under its heading. Side by side: text, equation and notes left, the figure right.
    Wide (several panels): text left and equation right on one row, the figure under them at full
    width; the note of what this model's lecture leaves out under the text."""
    if view.wide:
        text_box, eq_box = st.columns([2, 1], gap="medium", vertical_alignment="center")
        figure_box = st.container()
    else:
        text_box, figure_box = st.columns([1.1, 2.2], gap="medium")
        eq_box = text_box
    with text_box, st.container(key="lecture_text"):
        st.markdown(view.text)
        if view.note:
            st.caption(view.note)
    with eq_box:
        if view.latex:
            st.latex(view.latex)
        if view.code is not None:
            ui.show_text(view.code, view.code_label)
        if not view.wide:
            st.caption(ui.t("lecture.keys"))
    with figure_box:
        name, step = view.name, view.step
        ui.show_figure(view.fig, key=f"lecture_{name}", name=f"lecture-{step:02d}-{name}")
