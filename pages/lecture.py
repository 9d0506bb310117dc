"""Lecture mode: the whole Transformer as a sequence of steps, one large figure per screen, with
``?step=N`` in the URL, PageDown / PageUp to move, and rooms a class follows (the students on
``/r/CODE``: ui/hall/). The slides: figures/classroom/lecture.py; the step on screen and its layout:
ui/sections/lecture.py; the page's decisions: docs/decisions.md, "Lecture mode"."""

import streamlit as st

import ui
from figures.classroom.lecture import Context, shown_steps, slide_view
from ui.classroom import panels as classroom
from ui.page.keys import step_buttons
from ui.sections import exercises
from ui.sections.lecture import STYLE, _move, current_step, show_slide

st.set_page_config(initial_sidebar_state="collapsed")
settings = ui.page_setup("nav.lecture.title")
st.html(STYLE)
classroom.room_panel()
run = ui.get_run(settings)
if run is None:
    st.stop()
ctx = Context(run, settings.sentence, settings.lang)
total = len(shown_steps(ctx))
step = current_step(total, settings.lang, classroom.room_step(total))
classroom.publish(step, settings)
classroom.question_panel(run)
view = ui.shared_view(run, f"lecture.{step}", settings.lang, lambda: slide_view(ctx, step))
with st.container(key="lecture_slide"):
    head, nav = st.columns([2, 1], vertical_alignment="center")
    with head:
        st.header(view.heading, anchor=False)
    with nav:
        step_buttons(step, total, _move)
    show_slide(view)
    exercises.self_study(ctx.run, view.name)
classroom.ask_panel(run, view.name)
classroom.notify_followers()  # last: the room's followers get the slide this page has built
