"""Interventions: switch parts of the model off, patch one sentence's run into another's, and read
every layer's guess; each for the weights on screen. The sections: ui/sections/interventions.py."""

import streamlit as st

import ui
from i18n import t
from ui.interventions.views import VIEWS, lens_section, patch_section, switch_section
from ui.page import widgets

settings = ui.page_setup("nav.interventions.title")
st.caption(ui.t("interventions.intro"))
run = ui.get_run(settings)
if run is None:
    st.stop()

notices: list[str] = []
labels = [ui.t(f"interventions.tab.{view}") for view in VIEWS]
aliases = widgets.aliases(VIEWS, lambda view, lang: t(f"interventions.tab.{view}", lang))
tabs = widgets.tabs(labels, "iv_view", notices, VIEWS, aliases)
widgets.warn(notices)
for tab, draw in zip(tabs, (patch_section, lens_section, switch_section), strict=True):
    if tab.open:  # one section at a time: only the open tab is drawn
        with tab:
            draw(settings, run)
