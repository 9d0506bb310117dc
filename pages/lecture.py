"""Lecture mode: the whole Transformer as a sequence of steps, one large figure per screen, with
``?step=N`` in the URL, PageDown / PageUp to move, and rooms a class can follow. The steps and the
slides: ui/sections/lecture.py; the page's decisions: docs/decisions.md, "Lecture mode"."""

import streamlit as st

import ui
from ui.classroom import panels as classroom
from ui.page.keys import step_buttons
from ui.sections import exercises
from ui.sections.lecture import (
    STYLE,
    Context,
    _move,
    current_step,
    show_slide,
    shown_steps,
    skipped_note,
    styled,
)

st.set_page_config(initial_sidebar_state="collapsed")
room = classroom.follow_room()  # a followed room's settings become this session's, before the sidebar
settings = ui.page_setup("nav.lecture.title")
st.html(STYLE)
classroom.room_panel(room)
run = ui.get_run(settings)
if run is None:
    st.stop()
ctx = Context(run, settings.sentence, settings.lang)
steps = shown_steps(ctx)
skipped = skipped_note(ctx, run)
step = current_step(len(steps), settings.lang, classroom.room_step(room, len(steps)))
classroom.publish(step, settings)
name, make = steps[step - 1]
classroom.question_panel(room, run)
with st.container(key="lecture_slide"):
    head, nav = st.columns([2, 1], vertical_alignment="center")
    with head:
        rms = name == "residual" and run.config.norm_kind == "rms"  # Llama, Qwen2
        title = ui.t("lecture.residual.title_rms" if rms else f"lecture.{name}.title")
        st.header(ui.t("lecture.heading", step=step, total=len(steps), title=title), anchor=False)
    with nav:
        step_buttons(step, len(steps), _move)
    slide = ui.shared_view(run, f"lecture.{name}", settings.lang, lambda: styled(make(ctx)))
    show_slide(slide, name, step, skipped)
    exercises.self_study(ctx.run, name)
classroom.ask_panel(run, name)
classroom.wake_followers()  # last: the followers' pages rerun once this page is drawn
