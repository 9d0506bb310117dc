"""Overview: the whole pipeline on one diagram, with the current sizes and real tensor shapes."""

import streamlit as st

import ui
from figures.overview import ADDED_POSITIONS, DiagramSizes, embedding_equation, pipeline_diagram

# Where RoPE and ALiBi put the position: in every self-attention, not in the embedding.
ATTENTION_POSITIONS = {
    "rope": r"q_m \leftarrow R_m\,q_m,\qquad k_n \leftarrow R_n\,k_n",
    "alibi": r"s_{ij} = \frac{q_i\cdot k_j}{\sqrt{d_k}} - m_h\,|i-j|",
}

settings = ui.page_setup("nav.overview.title")

st.caption(ui.t("overview.caption"))
given = bool(settings.target.strip())
known = ui.get_pipeline(settings, quiet=True)  # cached; get_run below says why when there is none
run = ui.get_run(settings)  # the whole run: the diagram's lengths and the model's answer under it
pipe = ui.get_pipeline(settings) if run is not None else None
config = pipe.config if pipe is not None else None
has_decoder = getattr(config, "decoder", True)
if not has_decoder:
    target_source, target_note = "given", ui.t("overview.target.none")
elif given:
    target_source, target_note = "given", settings.target
elif pipe is not None and pipe.kind == "random":
    target_source, target_note = "sentence", ui.t("overview.target.sentence")
else:
    target_source, target_note = "greedy", ui.t("overview.target.greedy")

if run is not None:
    src_tokens, tgt_tokens = list(run.src_tokens), list(run.tgt_tokens)
    sizes = DiagramSizes(
        d_model=config.d_model,
        num_heads=config.num_heads,
        num_layers=config.num_layers,
        d_ff=config.d_ff,
        S=len(src_tokens),
        T=len(tgt_tokens),
        src_vocab=config.src_vocab_size,
        tgt_vocab=config.tgt_vocab_size,
        target_source=target_source,
        decoder=has_decoder,
        scale_embeddings=getattr(config, "scale_embeddings", True),
        positions=getattr(config, "positions", "sinusoidal"),
        token_types=bool(getattr(config, "type_vocab_size", 0)),
        embed_norm=getattr(config, "embed_norm", False),
        final_norm=getattr(config, "final_norm", False),
    )
else:
    src_tokens, tgt_tokens = [], []
    # Without a run the lengths are unknown: the diagram still shows every size from the sidebar, and
    # how the model adds positions and normalises when its configuration is known.
    known_config = getattr(known, "config", None)
    sizes = DiagramSizes(
        d_model=settings.d_model,
        num_heads=settings.num_heads,
        num_layers=settings.num_layers,
        d_ff=settings.d_ff_value,
        S=0,
        T=0,
        positions=getattr(known_config, "positions", settings.positions),
        final_norm=getattr(known_config, "final_norm", False),
    )

# built once per sizes and language (~0.2 s each time on this 2-core VM)
ui.show_themed_figure(ui.memo_figure(pipeline_diagram, sizes, lang=settings.lang, themed=True),
                      key="overview_diagram", name="transformer-overview")

# -- the model's answer, under the diagram: a student's first question -----------------------------
if run is not None and has_decoder:
    ui.show_answer(run, key="overview_answer")

# -- the equations the diagram draws ---------------------------------------------------------------
st.subheader(ui.t("overview.explain.title"))
norm = getattr(config, "norm", settings.norm)
# How positions enter, and whether a LayerNorm ends each stack, are the model's (sizes: its config).
in_attention = sizes.positions not in ADDED_POSITIONS  # RoPE, ALiBi: nothing is added to E[x]
enc, dec = st.columns(2)
with enc:
    st.markdown(ui.t("overview.explain.encoder",
                     positions=ui.t(f"overview.explain.positions.{sizes.positions}")))
    st.latex(rf"z_0 = {embedding_equation(sizes, 'x')}")
    if not sizes.scale_embeddings:
        st.caption(ui.t("overview.explain.bert_embedding"))
    if in_attention:
        st.latex(ATTENTION_POSITIONS[sizes.positions])
        st.caption(ui.t(f"overview.explain.in_attention.{sizes.positions}"))
    # two lines: in one, these equations ran past the half-width column at 1280 px
    if sizes.final_norm:
        st.latex(r"\begin{aligned}z_N &= \mathrm{Layer}_N(\cdots\mathrm{Layer}_1(z_0))\\"
                 r"\text{memory} &= \mathrm{LayerNorm}(z_N)\end{aligned}")
        st.caption(ui.t("overview.explain.final_norm"))
    else:
        st.latex(r"\begin{aligned}\text{memory} &= \mathrm{Encoder}_N(z_0)\\"
                 r"&= \mathrm{Layer}_N(\cdots\mathrm{Layer}_1(z_0))\end{aligned}")
    st.markdown(ui.t("overview.explain.sublayer"))
    if norm == "pre":
        st.latex(r"x \leftarrow x + \mathrm{Sublayer}\big(\mathrm{LayerNorm}(x)\big)")
        st.caption(ui.t("overview.explain.pre_norm"))
    else:
        st.latex(r"x \leftarrow \mathrm{LayerNorm}\big(x + \mathrm{Sublayer}(x)\big)")
with dec:
    if has_decoder:
        st.markdown(ui.t("overview.explain.decoder"))
        stack = (r"h_N &= \mathrm{Decoder}_N(h_0,\ \text{memory})\\h &= \mathrm{LayerNorm}(h_N)\\"
                 if sizes.final_norm else r"h &= \mathrm{Decoder}_N(h_0,\ \text{memory})\\")
        st.latex(
            rf"\begin{{aligned}}h_0 &= {embedding_equation(sizes, 'y')}\\"
            + stack
            + r"P(y_{t+1} \mid x, y_{\le t}) &= \mathrm{softmax}(h_t\, W)\end{aligned}"
        )
        st.markdown(ui.t("overview.explain.softmax"))
    else:
        st.info(ui.t("overview.explain.no_decoder"), icon=":material/info:")
        st.latex(r"\text{sentence vector} = \frac{1}{S}\sum_{i=1}^{S} \text{memory}_i")

left, right = st.columns(2)
with left:
    ui.show_text(settings.sentence, ui.t("overview.sentence"))
    if src_tokens:
        ui.show_tokens(src_tokens, ui.t("overview.source_tokens", n=len(src_tokens)))
with right:
    ui.show_text(target_note, ui.t("overview.target"))
    if tgt_tokens:
        ui.show_tokens(tgt_tokens, ui.t("overview.target_tokens", n=len(tgt_tokens)))

st.subheader(ui.t("overview.stages"))
ui.page_links(skip="pages/overview.py")
