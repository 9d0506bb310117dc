"""The Overview page's sections: the equations the pipeline diagram draws (encoder, decoder, or a
decoder-only model's one stack and its output), the sentence and its tokens, and ``Shown``, what the
diagram and the texts under it show (from the run, or from the sidebar when there is none)."""

from dataclasses import dataclass

import streamlit as st

import ui
from core.names import Weights
from figures.overview import (
    ACTIVATION_NAMES,
    ADDED_POSITIONS,
    DiagramSizes,
    embedding_equation,
    has_output_bias,
    output_latex,
)

# Where RoPE and ALiBi put the position: in every self-attention, not in the embedding.
ATTENTION_POSITIONS = {
    "rope": r"q_m \leftarrow R_m\,q_m,\qquad k_n \leftarrow R_n\,k_n",
    "alibi": r"s_{ij} = \frac{q_i\cdot k_j}{\sqrt{d_k}} - m_h\,|i-j|",
}


@dataclass(frozen=True)
class Shown:
    """What the diagram and the texts under it show: the sizes, the model's residual arrangement,
    its stacks (``ModelConfig.stack``), what the decoder reads (a note) and the tokens ([] without a
    run)."""

    sizes: DiagramSizes
    norm: str
    stack: str
    target_note: str
    src_tokens: list
    tgt_tokens: list


def target(settings, pipe, stack: str) -> tuple[str, str]:
    """(what the decoder reads, for the diagram; the note under it), for a model of ``stack``
    (``ModelConfig.stack``)."""
    if stack == "decoder":  # one stack reads the sentence
        return "sentence", ui.t("overview.target.one_stack")
    if stack == "encoder":
        return "given", ui.t("overview.target.none")
    if settings.target.strip():
        return "given", settings.target
    if pipe is not None and pipe.weights == Weights.RANDOM:
        return "sentence", ui.t("overview.target.sentence")
    return "greedy", ui.t("overview.target.greedy")


def of_run(settings, run) -> Shown:
    """The model's sizes and the run's lengths."""
    config = run.config
    target_source, target_note = target(settings, run.pipe, config.stack)
    src_tokens, tgt_tokens = list(run.src_tokens), list(run.tgt_tokens)
    sizes = DiagramSizes.of_model(config, len(src_tokens), len(tgt_tokens), target_source)
    return Shown(sizes, config.norm, config.stack, target_note, src_tokens, tgt_tokens)


def of_settings(settings, known_config) -> Shown:
    """Without a run the lengths are unknown: every size from the sidebar, and how the model adds
    positions and normalises when its configuration is known (``known_config``; None: not known)."""
    _, target_note = target(settings, None, "encoder_decoder")
    if known_config is not None and known_config.stack == "decoder":  # its own sizes, its one stack
        return Shown(DiagramSizes.of_model(known_config, 0, 0, "sentence"), known_config.norm, "decoder",
                     ui.t("overview.target.one_stack"), [], [])
    sizes = DiagramSizes(
        d_model=settings.d_model,
        num_heads=settings.num_heads,
        num_layers=settings.num_layers,
        d_ff=settings.d_ff_value,
        S=0,
        T=0,
        positions=known_config.positions if known_config is not None else settings.positions,
        final_norm=known_config is not None and known_config.final_norm,
        output_bias=has_output_bias(known_config) if known_config is not None else True,
    )
    # the sidebar's sizes are those of the paper's model: both stacks
    return Shown(sizes, settings.norm, "encoder_decoder", target_note, [], [])


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


def decoder_equations(sizes: DiagramSizes) -> None:
    if sizes.stack == "encoder":
        st.info(ui.t("overview.explain.no_decoder"), icon=":material/info:")
        st.latex(r"\text{sentence vector} = \frac{1}{S}\sum_{i=0}^{S-1} \text{memory}_i")
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
        + rf"P(y_{{t+1}} \mid x, y_{{\le t}}) &= \mathrm{{softmax}}({output_latex(sizes.output_bias)})"
        + r"\end{aligned}"
    )
    st.markdown(ui.t("overview.explain.softmax"))


def stack_equations(sizes: DiagramSizes) -> None:
    """A decoder-only model's one stack: its input, where positions enter, its layers (from its config)."""
    positions = ui.t(f"overview.explain.positions.{sizes.positions}")
    st.markdown(ui.t("overview.explain.stack", positions=positions))
    st.latex(rf"h_0 = {embedding_equation(sizes, 'x')}")
    if sizes.positions not in ADDED_POSITIONS:
        st.latex(ATTENTION_POSITIONS[sizes.positions])
        st.caption(ui.t(f"overview.explain.in_attention.{sizes.positions}.one"))
    if sizes.kv_heads < sizes.num_heads:  # one key/value head for all of them: multi-query attention
        key = "overview.explain.mqa" if sizes.kv_heads == 1 else "overview.explain.gqa"
        st.caption(ui.t(key, h=sizes.num_heads, kv=sizes.kv_heads, g=sizes.num_heads // sizes.kv_heads))
    name = sizes.norm_name
    st.markdown(ui.t("overview.explain.sublayer.one", act=ACTIVATION_NAMES[sizes.activation], kind=name))
    if sizes.norm == "pre":
        st.latex(rf"x \leftarrow x + \mathrm{{Sublayer}}\big(\mathrm{{{name}}}(x)\big)")
    else:
        st.latex(rf"x \leftarrow \mathrm{{{name}}}\big(x + \mathrm{{Sublayer}}(x)\big)")
    st.caption(ui.t(f"overview.explain.placement.{sizes.norm}", kind=name))
    if sizes.norm_kind == "rms":
        st.latex(r"\mathrm{RMSNorm}(v) = g \odot v \Big/ \sqrt{\tfrac{1}{d}\textstyle\sum_i v_i^2"
                 r" + \varepsilon}")
        st.caption(ui.t("overview.explain.rms"))


def stack_output_equations(sizes: DiagramSizes) -> None:
    """What a decoder-only model does with its last vectors: the next token's probabilities."""
    st.markdown(ui.t("overview.explain.output.one"))
    layers = r"\mathrm{Layer}_N(\cdots\mathrm{Layer}_1(h_0))"
    stack = (rf"h_N &= {layers}\\h &= \mathrm{{{sizes.norm_name}}}(h_N)\\" if sizes.final_norm
             else rf"h &= {layers}\\")
    out = r" \quad (W = E^{\top})" if sizes.tie_embeddings else ""
    logits = output_latex(sizes.output_bias)
    st.latex(r"\begin{aligned}" + stack + rf"P(x_{{t+1}} \mid x_{{\le t}}) &= \mathrm{{softmax}}({logits})"
             + out + r"\end{aligned}")
    if sizes.tie_embeddings:
        st.caption(ui.t("overview.explain.tied"))


def sentence_and_tokens(sentence: str, shown: Shown) -> None:
    left, right = st.columns(2)
    if shown.stack == "decoder":  # no target: the one stack reads the sentence's tokens
        with left:
            ui.show_text(sentence, ui.t("overview.sentence"))
        with right:
            if shown.src_tokens:
                ui.show_tokens(shown.src_tokens, ui.t("overview.stack_tokens", n=len(shown.src_tokens)))
        return
    with left:
        ui.show_text(sentence, ui.t("overview.sentence"))
        if shown.src_tokens:
            ui.show_tokens(shown.src_tokens, ui.t("overview.source_tokens", n=len(shown.src_tokens)))
    with right:
        ui.show_text(shown.target_note, ui.t("overview.target"))
        if shown.tgt_tokens:
            ui.show_tokens(shown.tgt_tokens, ui.t("overview.target_tokens", n=len(shown.tgt_tokens)))
