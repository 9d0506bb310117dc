"""Overview: the whole pipeline on one diagram, with the current sizes and real tensor shapes."""

from dataclasses import dataclass

import streamlit as st

import ui
from core.names import Weights
from figures.overview import ADDED_POSITIONS, DiagramSizes, embedding_equation, pipeline_diagram

# Where RoPE and ALiBi put the position: in every self-attention, not in the embedding.
ATTENTION_POSITIONS = {
    "rope": r"q_m \leftarrow R_m\,q_m,\qquad k_n \leftarrow R_n\,k_n",
    "alibi": r"s_{ij} = \frac{q_i\cdot k_j}{\sqrt{d_k}} - m_h\,|i-j|",
}


@dataclass(frozen=True)
class Shown:
    """What the diagram and the texts under it show: the sizes, the model's residual arrangement,
    whether it has a decoder, what the decoder reads (a note) and the tokens ([] without a run)."""

    sizes: DiagramSizes
    norm: str
    has_decoder: bool
    target_note: str
    src_tokens: list
    tgt_tokens: list


def target(settings, pipe, has_decoder: bool) -> tuple[str, str]:
    """(what the decoder reads, for the diagram; the note under it)."""
    if not has_decoder:
        return "given", ui.t("overview.target.none")
    if settings.target.strip():
        return "given", settings.target
    if pipe is not None and pipe.weights == Weights.RANDOM:
        return "sentence", ui.t("overview.target.sentence")
    return "greedy", ui.t("overview.target.greedy")


def of_run(settings, run) -> Shown:
    """The model's sizes and the run's lengths."""
    config = run.config
    target_source, target_note = target(settings, run.pipe, run.has_decoder)
    src_tokens, tgt_tokens = list(run.src_tokens), list(run.tgt_tokens)
    sizes = DiagramSizes.of_model(config, len(src_tokens), len(tgt_tokens), target_source)
    return Shown(sizes, config.norm, run.has_decoder, target_note, src_tokens, tgt_tokens)


def of_settings(settings, known_config) -> Shown:
    """Without a run the lengths are unknown: every size from the sidebar, and how the model adds
    positions and normalises when its configuration is known (``known_config``; None: not known)."""
    _, target_note = target(settings, None, True)
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
    return Shown(sizes, settings.norm, True, target_note, [], [])


def encoder_equations(sizes: DiagramSizes, norm: str) -> None:
    # How positions enter, and whether a LayerNorm ends each stack, are the model's (sizes: its config).
    in_attention = sizes.positions not in ADDED_POSITIONS  # RoPE, ALiBi: nothing is added to E[x]
    st.markdown(
        ui.t("overview.explain.encoder", positions=ui.t(f"overview.explain.positions.{sizes.positions}"))
    )
    st.latex(rf"z_0 = {embedding_equation(sizes, 'x')}")
    if not sizes.scale_embeddings:
        st.caption(ui.t("overview.explain.bert_embedding"))
    if in_attention:
        st.latex(ATTENTION_POSITIONS[sizes.positions])
        st.caption(ui.t(f"overview.explain.in_attention.{sizes.positions}"))
    # two lines: in one, these equations ran past the half-width column at 1280 px
    if sizes.final_norm:
        st.latex(
            r"\begin{aligned}z_N &= \mathrm{Layer}_N(\cdots\mathrm{Layer}_1(z_0))\\"
            r"\text{memory} &= \mathrm{LayerNorm}(z_N)\end{aligned}"
        )
        st.caption(ui.t("overview.explain.final_norm"))
    else:
        st.latex(
            r"\begin{aligned}\text{memory} &= \mathrm{Encoder}_N(z_0)\\"
            r"&= \mathrm{Layer}_N(\cdots\mathrm{Layer}_1(z_0))\end{aligned}"
        )
    st.markdown(ui.t("overview.explain.sublayer"))
    if norm == "pre":
        st.latex(r"x \leftarrow x + \mathrm{Sublayer}\big(\mathrm{LayerNorm}(x)\big)")
        st.caption(ui.t("overview.explain.pre_norm"))
    else:
        st.latex(r"x \leftarrow \mathrm{LayerNorm}\big(x + \mathrm{Sublayer}(x)\big)")


def decoder_equations(sizes: DiagramSizes, has_decoder: bool) -> None:
    if not has_decoder:
        st.info(ui.t("overview.explain.no_decoder"), icon=":material/info:")
        st.latex(r"\text{sentence vector} = \frac{1}{S}\sum_{i=1}^{S} \text{memory}_i")
        return
    st.markdown(ui.t("overview.explain.decoder"))
    stack = (
        r"h_N &= \mathrm{Decoder}_N(h_0,\ \text{memory})\\h &= \mathrm{LayerNorm}(h_N)\\"
        if sizes.final_norm
        else r"h &= \mathrm{Decoder}_N(h_0,\ \text{memory})\\"
    )
    st.latex(
        rf"\begin{{aligned}}h_0 &= {embedding_equation(sizes, 'y')}\\"
        + stack
        + r"P(y_{t+1} \mid x, y_{\le t}) &= \mathrm{softmax}(h_t\, W)\end{aligned}"
    )
    st.markdown(ui.t("overview.explain.softmax"))


def sentence_and_tokens(sentence: str, shown: Shown) -> None:
    left, right = st.columns(2)
    with left:
        ui.show_text(sentence, ui.t("overview.sentence"))
        if shown.src_tokens:
            ui.show_tokens(shown.src_tokens, ui.t("overview.source_tokens", n=len(shown.src_tokens)))
    with right:
        ui.show_text(shown.target_note, ui.t("overview.target"))
        if shown.tgt_tokens:
            ui.show_tokens(shown.tgt_tokens, ui.t("overview.target_tokens", n=len(shown.tgt_tokens)))


# -- the page ----------------------------------------------------------------------------------------

settings = ui.page_setup("nav.overview.title")
st.caption(ui.t("overview.caption"))
run = ui.get_run(settings)  # the whole run: the diagram's lengths and the model's answer under it
if run is not None:
    shown = of_run(settings, run)
else:  # get_run said why; the model's configuration, if it loads, still shapes the diagram
    shown = of_settings(settings, getattr(ui.get_pipeline(settings, quiet=True), "config", None))

# built once per sizes and language
ui.show_themed_figure(
    ui.memo_figure(pipeline_diagram, shown.sizes, lang=settings.lang, themed=True),
    key="overview_diagram",
    name="transformer-overview",
)

# -- the model's answer, under the diagram: a student's first question -----------------------------
if run is not None and shown.has_decoder:
    ui.show_answer(run, key="overview_answer")

# -- the equations the diagram draws ---------------------------------------------------------------
st.subheader(ui.t("overview.explain.title"))
enc, dec = st.columns(2)
with enc:
    encoder_equations(shown.sizes, shown.norm)
with dec:
    decoder_equations(shown.sizes, shown.has_decoder)

sentence_and_tokens(settings.sentence, shown)

st.subheader(ui.t("overview.stages"))
ui.page_links(skip="pages/overview.py")
