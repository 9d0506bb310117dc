"""Positional encoding: the paper's sinusoids (curves, table, offsets as rotations, the sum), then
four schemes side by side (sinusoidal, learned, RoPE, ALiBi): how each reaches the scores, whether a
score depends only on the distance, and what happens past the training length. The sections:
ui/sections/positional.py."""

import streamlit as st

import ui
from figures import positional as fp
from figures.overview import embedding_sum
from ui.page import widgets
from ui.sections.positional import (
    SCHEMES,
    TAB_ALIASES,
    alibi_tab,
    curves_section,
    encoder_input_section,
    learned_tab,
    model_of,
    rope_tab,
    rotation_error,
    sinusoidal_tab,
    tab_label,
    url_notices,
)

settings = ui.page_setup("nav.positional.title")
lang = settings.lang
st.caption(ui.t("positional.caption"))
st.caption(ui.t("positional.dims_from_0"))
# The sections below without a sentence (no run: a message says why) still draw, from the model's sizes.
run = ui.get_run(settings)
pipe = run.pipe if run is not None else ui.get_pipeline(settings, quiet=True)
config = pipe.config if pipe is not None else None
model = model_of(pipe, settings)
d, heads, d_k, scheme = model.d, model.heads, model.d_k, model.scheme
trained_len, learned_table, folder = model.trained_len, model.learned_table, model.folder

if scheme != "sinusoidal":
    model_name = pipe.name or pipe.weights
    st.info(ui.t("positional.not_sinusoidal", model=model_name, scheme=ui.t(f"positional.tab.{scheme}")))
if model.blind:
    st.warning(ui.t("positional.rope.no_pair.model", d_model=d, h=heads), icon=":material/warning:")
for notice in url_notices(d, lang):
    st.warning(notice, icon=":material/warning:")

# -- 1. the formula and the curves ----------------------------------------------------------------
st.header(ui.t("positional.curves.header"))
st.latex(r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_\text{model}}}\right),\qquad "
         r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_\text{model}}}\right)")
st.markdown(ui.t("positional.curves.explain", d=d, slowest=fp.period(d - 1, d)))
curves_section(d, trained_len, len(run.src_tokens) if run is not None else None, lang)
if model.lm:  # windows of its training text, read through its own position table
    name = ui.t(f"positional.tab.{scheme}")
    own = "" if scheme == "sinusoidal" else ui.t("positional.curves.lm_own", scheme=name)
    st.caption(ui.t("positional.curves.trained_lm", n=trained_len, last=trained_len - 1) + own)
elif trained_len:
    # what the model was trained on is its task's: phrases of characters, or digit sequences
    toy = pipe.task in ("copy", "reverse")
    st.caption(ui.t("positional.curves.trained_digits" if toy else "positional.curves.trained",
                    chars=trained_len - 1, last=trained_len - 1))
elif folder:  # its own scheme, from its configuration; trained or not, unknown
    st.caption(ui.t("positional.curves.folder", model=folder, scheme=ui.t(f"positional.tab.{scheme}"))
               + (ui.t("positional.curves.folder.rows", rows=learned_table.shape[0])
                  if learned_table is not None else ""))
elif learned_table is not None:
    st.caption(ui.t("positional.curves.pretrained", rows=learned_table.shape[0]))
else:
    st.caption(ui.t("positional.curves.random"))

# -- 2. the table ---------------------------------------------------------------------------------
st.header(ui.t("positional.table.header"))
rows = max(64, len(run.src_tokens) if run is not None else 0)
ui.show_figure(ui.memo_figure(fp.pe_heatmap, fp.pe_table(rows, d), lang=lang), key="pe_table_chart",
               name="positional-table")
st.caption(ui.t("positional.table.caption", last=rows - 1, d=d))

# -- 3. why it works: offsets ---------------------------------------------------------------------
st.header(ui.t("positional.shift.header"))
st.latex(r"PE(p+k) = M_k\, PE(p),\qquad M_k = \operatorname{diag}_i\!\begin{pmatrix} \cos k\omega_i & "
         r"\sin k\omega_i \\ -\sin k\omega_i & \cos k\omega_i \end{pmatrix},\qquad "
         r"\omega_i = \frac{1}{10000^{2i/d_\text{model}}}")
eq, note = st.columns([3, 2])
with eq:
    st.markdown(ui.t("positional.shift.explain"))
    st.latex(r"PE(p)\cdot PE(q) = \sum_i \cos\big((p-q)\,\omega_i\big)")
    st.caption(ui.t("positional.shift.even"))
with note:
    st.metric(ui.t("positional.shift.metric"), f"{rotation_error(d, 5):.1e}",
              help=ui.t("positional.shift.metric.help"))
ui.show_figure(ui.memo_figure(fp.gram_heatmap, fp.pe_table(64, d), lang=lang), key="pe_gram_chart",
               name="positional-gram")
st.caption(ui.t("positional.shift.gram"))

# -- 4. embedding + PE ----------------------------------------------------------------------------
scales = config is None or config.scale_embeddings
st.header(ui.t("positional.sum.header.one_stack" if model.one_stack else "positional.sum.header"))
# what this model adds, and whether it scales and normalises: from its configuration, as the Overview
st.latex(r"x_{pos} = " + embedding_sum(
    scheme, scaled=scales, token_types=config is not None and bool(config.type_vocab_size),
    normed=config is not None and config.embed_norm, symbol=r"\text{id}_{pos}", pos="pos"))

encoder_input_section(run, model, scales, trained=pipe is not None and bool(pipe.task))

# -- 5. four schemes ------------------------------------------------------------------------------
st.header(ui.t("positional.schemes.header"))
st.markdown(ui.t("positional.schemes.intro"))
sizes = ("positional.schemes.sizes.folder" if folder else "positional.schemes.sizes.lm" if model.lm
         else "positional.schemes.sizes")
st.caption(ui.t(sizes, d=d, h=heads, d_k=d_k, L=model.train_len,
                example=ui.t("positional.schemes.example") if model.example else ""))
st.dataframe(
    {
        ui.t("positional.table.col.scheme"): [ui.t(f"positional.tab.{s}") for s in SCHEMES],
        ui.t("positional.table.col.where"): [ui.t("positional.table.where.added")] * 2
        + [ui.t("positional.table.where.rotate"), ui.t("positional.table.where.bias")],
        ui.t("positional.table.col.relative"): [ui.t("positional.table.relative.sinusoidal"),
                                                ui.t("positional.table.relative.learned"),
                                                ui.t("positional.table.relative.yes"),
                                                ui.t("positional.table.relative.yes")],
        ui.t("positional.table.col.beyond"): [ui.t("positional.table.beyond.formula"),
                                              ui.t("positional.table.beyond.error"),
                                              ui.t("positional.table.beyond.runs"),
                                              ui.t("positional.table.beyond.runs")],
    },
    hide_index=True,
)

# Only the open tab is drawn (widgets.tabs); which one is in the URL (?pe_tab=…, its scheme).
tab_notices: list[str] = []
tabs = widgets.tabs([tab_label(s, scheme) for s in SCHEMES], "pe_tab", tab_notices, SCHEMES, TAB_ALIASES)
for notice in tab_notices:
    st.warning(notice, icon=":material/warning:")
for tab, draw in zip(tabs, (sinusoidal_tab, learned_tab, rope_tab, alibi_tab), strict=True):
    if tab.open:
        with tab:
            draw(model)
