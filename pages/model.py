"""Whole model & decoding: residual + LayerNorm, the feed-forward layer, the output softmax and
greedy decoding step by step, each with the real numbers of the sentence in the sidebar; one
section at a time, in tabs (``?model_view=<its id>``). The sections: ui/sections/model.py."""

import streamlit as st

import ui
from i18n import t
from ui.page import widgets
from ui.sections.model import (
    VIEWS,
    Model,
    generation_section,
    greedy_decoding,
    open_old_decode_link,
    output_probabilities,
    residual_and_ffn,
    stream_through_layers,
)

settings = ui.page_setup("nav.model.title")
run = ui.get_run(settings)
if run is None:
    st.caption(ui.t("model.intro"))
    st.stop()
model = Model(run, settings.lang, settings.seed, settings)
stack = run.config.stack
st.caption(ui.t(model.key("model.intro"), kind=model.norm_name))
names = list(VIEWS if stack != "encoder" else VIEWS[:2])
labels = [ui.t(model.key(f"model.tab.{name}")) for name in names]
open_old_decode_link(labels[-1] if stack != "encoder" else None)
if stack == "encoder":  # an encoder-only model (all-MiniLM-L6-v2, a BERT folder): said above its two tabs
    st.info(ui.t("model.encoder_only", model=run.pipe.name or "all-MiniLM-L6-v2"), icon=":material/info:")
elif stack == "decoder":  # a decoder-only model: what its tabs follow, from its configuration
    st.info(ui.t("model.decoder_only", model=run.pipe.name, norm=run.config.norm, kind=model.norm_name),
            icon=":material/info:")
# ?model_view=<its id>; links made before carry the tab's label, in either language (and the labels
# a model with its own names for a tab shows: RMSNorm, generation)
aliases = widgets.aliases(VIEWS, lambda name, lang: t(f"model.tab.{name}", lang),
                             lambda name, lang: t(model.key(f"model.tab.{name}"), lang))
notices: list[str] = []
tabs = widgets.tabs(labels, "model_view", notices, names, aliases)
for notice in notices:
    st.warning(notice, icon=":material/warning:")
sections = {
    "residual_ffn": residual_and_ffn,
    "stream": stream_through_layers,
    "output": output_probabilities,
    "decoding": generation_section if stack == "decoder" else greedy_decoding,
}
for tab, name in zip(tabs, names, strict=True):
    if tab.open:  # one section at a time: only the open tab is drawn
        with tab:
            sections[name](model)
