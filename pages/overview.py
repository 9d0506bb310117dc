"""Overview: the whole pipeline on one diagram, with the current sizes and real tensor shapes.

A decoder-only model (GPT-2, Llama from a model folder) is drawn and written as its one causal stack:
no encoder, no cross-attention; its norm, activation and positions from its configuration. The
sections: ui/sections/overview.py."""

import streamlit as st

import ui
from figures.overview import pipeline_diagram
from ui.interventions.views import compare_with_intact
from ui.sections.overview import (
    decoder_equations,
    encoder_equations,
    of_run,
    of_settings,
    sentence_and_tokens,
    stack_equations,
    stack_output_equations,
)

settings = ui.page_setup("nav.overview.title")
st.caption(ui.t("overview.caption"))
run = ui.get_run(settings)  # the whole run: the diagram's lengths and the model's answer under it
if run is not None:
    shown = of_run(settings, run)
else:  # get_run said why; the model's configuration, if it loads, still shapes the diagram
    pipe = ui.get_pipeline(settings, quiet=True)
    shown = of_settings(settings, pipe.config if pipe is not None else None)

# built once per sizes and language
ui.show_themed_figure(
    ui.memo_figure(pipeline_diagram, shown.sizes, lang=settings.lang, themed=True),
    key="overview_diagram",
    name="transformer-overview",
)

# -- the model's answer, under the diagram: a student's first question -----------------------------
if run is not None and shown.stack != "encoder":
    ui.show_answer(run, key="overview_answer")
    compare_with_intact(settings, run)  # with parts switched off: the intact model's beside it

# -- the equations the diagram draws ---------------------------------------------------------------
st.subheader(ui.t("overview.explain.title"))
enc, dec = st.columns(2)
with enc:
    if shown.stack == "decoder":
        stack_equations(shown.sizes)
    else:
        encoder_equations(shown.sizes, shown.norm)
with dec:
    if shown.stack == "decoder":
        stack_output_equations(shown.sizes)
    else:
        decoder_equations(shown.sizes)

sentence_and_tokens(settings.sentence, shown)

st.subheader(ui.t("overview.stages"))
ui.page_links(skip="pages/overview.py")
