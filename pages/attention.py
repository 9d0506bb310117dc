"""Attention: the head view and the neuron view, one head step by step with the real numbers, every
head of a layer, every layer × head, and where one token looks. The sections: ui/sections/attention.py."""

import streamlit as st

import figures.attention as fa
import ui
from ui.interventions import switches as ablation
from ui.page import widgets
from ui.sections.attention import (
    EXPLORE_VIEWS,
    SCALED,
    SCALED_BY,
    SOFTMAX,
    TAB_ALIASES,
    VIEWS,
    all_heads,
    answer_beside,
    choose_view,
    every_layer,
    head_view,
    induction_heads,
    model_name,
    neuron_view,
    one_query,
    step_by_step,
)

settings = ui.page_setup("nav.attention.title")
run = ui.get_run(settings)
if run is None:
    st.stop()
config, lang = run.config, settings.lang
notices: list[str] = []  # what a URL or a size change altered: shown in notice_box, near the top

# -- the equation as this model computes it ----------------------------------------------------------------
st.latex(SOFTMAX + SCALED_BY.get(config.positions, SCALED))
if config.positions in SCALED_BY:  # what B or R is, in the page's language
    one_stack = config.stack != "encoder_decoder"
    st.caption(ui.t(f"attention.formula.{config.positions}" + (".one" if one_stack else "")))
d_k = config.d_model // config.num_heads
st.markdown(ui.t("attention.intro", h=config.num_heads, d_model=config.d_model, d_k=d_k))
st.caption(ui.t("attention.dims_from_0"))
if config.stack == "encoder":
    st.info(ui.t("attention.encoder_only", model=model_name(run)), icon=":material/info:")
elif config.stack == "decoder":
    said = ui.t("attention.decoder_only", model=model_name(run), n=config.num_layers)
    st.info(said, icon=":material/info:")
sharing = fa.sharing_text(config.num_heads, config.num_kv_heads, lang)
if sharing:  # grouped-query attention: which query heads read the same keys and values
    st.info(sharing, icon=":material/group_work:")
longest = max(len(run.src_tokens), len(run.tgt_tokens))
if longest > fa.GRID_POOL_MAX:  # the layers × heads overview draws blocks from here on
    st.info(ui.t("attention.long", n=longest), icon=":material/zoom_in:")
notice_box = st.container()

# -- induction heads: what each head of a decoder-only model does ------------------------------------------
probe = induction_heads(run, settings)

# -- head view and neuron view ----------------------------------------------------------------------------
labels = [ui.t(f"attention.tab.{v}") for v in EXPLORE_VIEWS]
explore = widgets.tabs(labels, "attn_explore", notices, EXPLORE_VIEWS, TAB_ALIASES)
for tab, draw in zip(explore, (head_view, neuron_view), strict=True):
    if tab.open:
        with tab:
            draw(run, lang, probe)

# -- one head, step by step -------------------------------------------------------------------------------
st.subheader(ui.t("attention.steps.choose"))
view = choose_view(run, lang, "attn", st.columns([2.2, 1, 1]), notices, probe)
shown = ui.t("attention.kind_layer", kind=view.kind_name, layer=view.layer + 1)
st.caption(shown + " " + view.where)
ablation.switch(settings, ablation.head_part(view.attn_kind, view.layer, view.head),
                ui.t("interventions.switch.head", layer=view.layer + 1, head=view.head + 1), "attn_ablate")
answer_beside(view, "attn_answer")
st.subheader(ui.t("attention.steps.title", head=view.head + 1))
opener = ui.t("attention.steps.open" if view.steps.bias is None else "attention.steps.open_alibi")
# ?attn_steps=true: its fifteen figures are made, and drawn one after another, only while it is open
steps_box = st.expander(opener, key="attn_steps", bind="query-params", icon=":material/calculate:")
if steps_box.open:
    with steps_box:
        step_by_step(view)

# -- every head of this layer, every layer × head, one query ----------------------------------------------
labels = [ui.t(f"attention.tab.{v}") for v in VIEWS]
tabs = widgets.tabs(labels, "attn_view", notices, VIEWS, TAB_ALIASES)
widgets.warn(notices, notice_box)  # the query view's fragment shows its own
for tab, draw in zip(tabs, (all_heads, every_layer, one_query), strict=True):
    if tab.open:
        with tab:
            draw(view)
