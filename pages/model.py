"""Whole model & decoding: residual + LayerNorm, the feed-forward layer, the output softmax and
greedy decoding step by step, each with the real numbers of the sentence in the sidebar; one
section at a time, in tabs (``?model_view=<its id>``).

An encoder-only model (the pretrained all-MiniLM-L6-v2) shows sections 1–3 (its encoder) and says
why sections 4–5 (decoder, output layer, decoding) have nothing to show."""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

import ui
import ui.widgets
from core.names import Weights
from core.run import LazyRun
from figures.model import (
    cross_attention_figure,
    decoded_ids,
    ffn_hidden_figure,
    ffn_units_shown,
    position_logits,
    relu_zero_fraction,
    residual_figure,
    softmax_t,
    step_probs,
    stream_norms_figure,
    topk_figure,
    zero_fraction_figure,
)
from i18n import t
from ui.sliders import url_slider

SPECIAL = ("[PAD]", "[BOS]", "[EOS]")
TOPK_RANGE, TOPK_DEFAULT = (5, 20), 10
TEMP_RANGE, TEMP_DEFAULT = (0.1, 3.0), 1.0
STEP_TOPK = 10  # bars per decoding step
VIEWS = ("residual_ffn", "stream", "output", "decoding")  # the tabs' ids (?model_view=<id>)


@dataclass(frozen=True)
class Model:
    """What every section reads: the run (each part computed when a section first reads it), the
    page's language and the seed of random weights (said under their stream)."""

    run: LazyRun
    lang: str
    seed: int

    @property
    def random(self) -> bool:
        return self.run.pipe.weights == Weights.RANDOM

    @property
    def gelu(self) -> bool:
        return getattr(self.run.config, "activation", "relu") == "gelu"

    @property
    def reads(self) -> str:
        """What the decoder reads: "target", "sentence" or "own" (``LazyRun.decoder_reads``)."""
        return self.run.decoder_reads


# 1. Residual + LayerNorm, 2. feed-forward (one fragment: both follow the chosen layer) ------------
# Each section is an st.fragment: moving one of its sliders reruns and redraws that section only.


@st.fragment
def residual_and_ffn(m: Model) -> None:
    layer_no, layer = residual(m)
    feed_forward(m, layer_no, layer)


def residual(m: Model):
    """Section 1; -> (the chosen layer's number, its trace), which section 2 shows too."""
    config, src = m.run.config, m.run.src_tokens
    st.header(ui.t("model.residual.header"))
    left, right = st.columns([1, 1])
    with left:
        st.markdown(ui.t("model.residual.intro"))
    with right:
        if config.norm == "post":
            st.markdown(ui.t("model.residual.post"))
            st.latex(r"x_{\text{out}} = \mathrm{LayerNorm}\big(x + \mathrm{Sublayer}(x)\big)")
        else:
            st.markdown(ui.t("model.residual.pre"))
            st.latex(r"x_{\text{out}} = x + \mathrm{Sublayer}\big(\mathrm{LayerNorm}(x)\big)")
        st.latex(r"\mathrm{LayerNorm}(v) = \gamma \odot \frac{v - \mu}{\sigma} + \beta")
        # μ and σ on lines of their own: side by side they ran past the half-width column at 1280 px
        st.latex(r"\mu = \frac{1}{d}\sum_{i=1}^{d} v_i")
        st.latex(r"\sigma = \sqrt{\frac{1}{d}\sum_{i=1}^{d} (v_i - \mu)^2 + \varepsilon}")
    c1, c2 = st.columns(2)
    with c1:
        layer_no = url_slider(ui.t("model.residual.layer"), "model_layer", 1, config.num_layers, 1)
    with c2:
        token = url_slider(
            ui.t("model.residual.token"),
            "model_token",
            0,
            len(src) - 1,
            0,
            help=ui.t("model.residual.token.help"),
        )
    layer = m.run.encoder[layer_no - 1]
    st.caption(
        ui.t("model.residual.caption", layer=layer_no, n=config.num_layers, norm=config.norm, token=token)
    )
    st.code(src[token], language=None, wrap_lines=True)
    ui.show_figure(
        residual_figure(layer, token, config.norm, lang=m.lang),
        "model_residual",
        f"residual-layer{layer_no}-token{token}",
    )
    st.caption(ui.t("model.residual.reading", root=f"{math.sqrt(config.d_model):.1f}", d=config.d_model))
    return layer_no, layer


def feed_forward(m: Model, layer_no: int, layer) -> None:
    config, src, gelu = m.run.config, m.run.src_tokens, m.gelu
    st.header(ui.t("model.ffn.header"))
    hidden = layer.ffn_hidden[0]
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"\mathrm{FFN}(x) = \max(0,\ xW_1 + b_1)\,W_2 + b_2")
        if gelu:
            st.latex(r"\mathrm{FFN}_{\mathrm{BERT}}(x) = \mathrm{GELU}(xW_1 + b_1)\,W_2 + b_2")
            st.latex(r"\mathrm{GELU}(z) = z\,\Phi(z)")
        st.markdown(
            ui.t(
                "model.ffn.gelu" if gelu else "model.ffn.relu",
                d_model=config.d_model,
                d_ff=config.d_ff,
                layer=layer_no,
            )
        )
    overall, _ = relu_zero_fraction(hidden)
    with right:
        st.metric(ui.t("model.ffn.metric"), f"{overall:.1%}", help=ui.t("model.ffn.metric.help"))
        if gelu:
            st.caption(ui.t("model.ffn.gelu_zero"))
        elif m.random:
            st.caption(ui.t("model.ffn.random_half"))
    units = ffn_units_shown(len(src), config.d_ff)
    if units < config.d_ff:
        st.caption(ui.t("model.ffn.part", units=units, d_ff=config.d_ff, n=len(src)))
    heat = ffn_hidden_figure(hidden, src, activation="gelu" if gelu else "relu", lang=m.lang)
    if gelu:  # hardly any unit is exactly 0: the per-token bars would all be empty
        ui.show_figure(heat, "model_ffn", f"ffn-hidden-layer{layer_no}")
        return
    c1, c2 = st.columns([2.3, 1])
    with c1:
        ui.show_figure(heat, "model_ffn", f"ffn-hidden-layer{layer_no}")
    with c2:
        ui.show_figure(
            zero_fraction_figure(hidden, src, lang=m.lang),
            "model_ffn_zero",
            f"ffn-zero-fraction-layer{layer_no}",
        )


# 3. The residual stream through the layers ------------------------------------------------------------


def stream_through_layers(m: Model) -> None:
    config = m.run.config
    st.header(ui.t("model.stream.header"))
    left, right = st.columns([1, 1])
    with left:
        st.markdown(ui.t("model.stream.intro"))
    with right:
        st.latex(r"\text{post: } x_{l+1} = \mathrm{LayerNorm}\big(x_l + F(x_l)\big)")
        st.latex(r"\text{pre: } x_{l+1} = x_l + F\big(\mathrm{LayerNorm}(x_l)\big)")
        st.latex(r"\|\mathrm{LayerNorm}(v)\| = \sqrt{d_{model}} \quad (\gamma = 1,\ \beta = 0)")
    traces = {config.norm: m.run.encoder_trace()}
    if m.run.pipe.task:  # learned on a task: its own arrangement only
        st.caption(ui.t("model.stream.trained", norm=config.norm))
    elif not m.random:
        st.caption(ui.t("model.stream.pretrained", norm=config.norm))
    else:
        other = "pre" if config.norm == "post" else "post"
        with st.spinner(ui.t("model.spinner.other_norm")):
            traces[other] = m.run.encoder_trace(other)  # the same weights, the other arrangement
        traces = {k: traces[k] for k in ("post", "pre")}
        st.caption(ui.t("model.stream.random", seed=m.seed))
    final_norm = getattr(config, "final_norm", False)
    ui.show_figure(
        stream_norms_figure(traces, config.d_model, lang=m.lang, final_norm=final_norm),
        "model_stream",
        "residual-stream-norms",
    )
    if final_norm:  # the memory is not the last layer's output: say whose LayerNorm makes the last step
        st.caption(ui.t("model.stream.final_norm"))


# 4. The output probabilities ----------------------------------------------------------------------------


@st.fragment
def output_probabilities(m: Model) -> None:
    run = m.run
    st.header(ui.t("model.output.header"))
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"P(y_{i+1} \mid y_{\le i}, x) = \mathrm{softmax}\big(h_i W_{\text{out}} / T\big)")
        st.latex(r"\mathrm{softmax}(z)_w = \frac{e^{z_w}}{\sum_{v} e^{z_v}}")
        st.markdown(ui.t("model.output.intro"))
    with right:
        position = url_slider(ui.t("model.output.position"), "model_position", 0, len(run.tgt_tokens) - 1, 0)
        k = url_slider(ui.t("model.output.topk"), "model_topk", *TOPK_RANGE, TOPK_DEFAULT)
        temperature = url_slider(
            ui.t("model.output.temperature"), "model_temperature", *TEMP_RANGE, TEMP_DEFAULT, step=0.1
        )
    reads = ui.t(f"model.output.reads.{m.reads}")
    st.caption(ui.t("model.output.caption", reads=reads, position=position))
    st.code(" ".join(run.tgt_tokens[: position + 1]), language=None, wrap_lines=True)
    ui.show_answer(run, key="model_output_answer")
    logits = position_logits(run.trace, position)
    ui.show_figure(
        topk_figure(
            softmax_t(logits, temperature),
            m.run.pipe.tgt_labels,
            k,
            reference=softmax_t(logits, 1.0),
            reference_name="T = 1",
            lang=m.lang,
        ),
        "model_output",
        f"output-probabilities-position{position}",
    )
    if m.random:
        st.caption(ui.t("model.noise"))


# 5. Greedy decoding -----------------------------------------------------------------------------------


@st.fragment
def greedy_decoding(m: Model) -> None:
    st.header(ui.t("model.greedy.header"))
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"y_t = \arg\max_{w}\ P(w \mid y_{<t}, x)")
    with right:
        st.markdown(ui.t("model.greedy.intro"))
    if m.reads == "own":
        st.caption(ui.t("model.greedy.own"))
        decoding_steps(m, m.run.decoding)
        return
    # Not the run's own (random weights, or a target was given): decoded when this tab is opened,
    # then kept per model and sentence.
    with st.spinner(ui.t("model.spinner.greedy")):
        decoded = m.run.decoding
    why = "target" if m.reads == "target" else "random"
    st.caption(ui.t(f"model.greedy.on_demand_{why}"))
    decoding_steps(m, decoded)


def decoding_steps(m: Model, decoded) -> None:
    """The decoded tokens step by step: each step's probabilities and cross-attention, then the output."""
    from core.pipeline import MAX_DECODE_STEPS  # decoding stops there (why: core.pipeline)

    src, pipe = m.run.src_tokens, m.run.pipe
    if m.random:
        st.warning(ui.t("model.greedy.noise"), icon=":material/casino:")
    ids = decoded_ids(decoded)
    labels = [pipe.tgt_labels[i] for i in ids]
    n_steps = len(decoded.steps)
    natural = len(src) + (0 if pipe.task else 2)  # as core.pipeline.greedy decides
    if m.reads != "own" and natural > n_steps == MAX_DECODE_STEPS and "[EOS]" not in labels:
        st.caption(ui.t("model.greedy.capped", steps=MAX_DECODE_STEPS))
    c1, c2 = st.columns(2)
    with c1:
        step = url_slider(
            ui.t("model.greedy.step"), "model_step", 1, n_steps, n_steps, help=ui.t("model.greedy.step.help")
        )
    with c2:
        head = url_slider(
            ui.t("model.greedy.head", h=m.run.config.num_heads), "model_head", 0, m.run.config.num_heads, 0
        )
    prefix = labels[:step]
    c1, c2 = st.columns(2)
    with c1:
        st.caption(ui.t("model.greedy.prefix", step=step, n=n_steps))
        st.code(" ".join(prefix), language=None, wrap_lines=True)
    with c2:
        st.caption(ui.t("model.greedy.chosen"))
        st.code(labels[step], language=None, wrap_lines=True)
    decoding_step(m, decoded, step, head, ids, prefix)
    decoded_output(src, labels)


def decoding_step(m: Model, decoded, step: int, head: int, ids: list[int], prefix: list[str]) -> None:
    """One step: the probabilities of the next token, and the cross-attention that chose it."""
    src = m.run.src_tokens
    # side by side while the source is short; a long one gets the full width for its columns
    side_by_side = len(src) <= 12
    c1, c2 = st.columns([2, 3]) if side_by_side else (st.container(), st.container())
    with c1:
        ui.show_figure(
            topk_figure(
                step_probs(decoded, step - 1),
                m.run.pipe.tgt_labels,
                STEP_TOPK,
                chosen=ids[step],
                title=ui.t("model.greedy.bars_title", step=step),
                lang=m.lang,
            ),
            "model_step_probs",
            f"greedy-step{step}-probabilities",
            column=0.4 if side_by_side else 1.0,
        )
    with c2:
        which = ui.t("model.greedy.heads_mean") if head == 0 else ui.t("model.greedy.head_no", head=head)
        st.caption(ui.t("model.greedy.cross_caption", step=step, which=which))
        ui.show_figure(
            cross_attention_figure(
                decoded.steps[step - 1], src, prefix, None if head == 0 else head - 1, lang=m.lang
            ),
            "model_step_cross",
            f"greedy-step{step}-cross-attention",
            column=0.6 if side_by_side else 1.0,
        )
    st.caption(
        ui.t("model.greedy.rows")
        + " "
        + (
            ui.t("model.greedy.diagonal")
            if m.run.pipe.task == "pinyin"
            else ui.t("model.noise")
            if m.random
            else ""
        )
    )


def decoded_output(src: list[str], labels: list[str]) -> None:
    """The source and what the decoding wrote, side by side in words."""
    st.subheader(ui.t("model.greedy.output.header"))
    output = [tok for tok in labels[1:] if tok not in SPECIAL]
    st.caption(ui.t("model.greedy.source", n=len(src)))
    st.code(" ".join(src), language=None, wrap_lines=True)
    st.caption(ui.t("model.greedy.output_eos" if "[EOS]" in labels else "model.greedy.output", n=len(output)))
    st.code(" ".join(output) if output else ui.t("model.greedy.nothing"), language=None, wrap_lines=True)


def open_old_decode_link(decoding_label: str | None) -> None:
    """Links made before the tabs said ``?model_decode=true`` to open the decoding section: open its
    tab (``decoding_label``; None: this model has none), unless the link names a tab too."""
    if "model_decode" not in st.query_params:
        return
    if st.query_params["model_decode"] == "true" and decoding_label and "model_view" not in st.query_params:
        st.session_state["model_view"] = decoding_label
    del st.query_params["model_decode"]


# -- the page ----------------------------------------------------------------------------------------

settings = ui.page_setup("nav.model.title")
st.caption(ui.t("model.intro"))
run = ui.get_run(settings)
if run is None:
    st.stop()
model = Model(run, settings.lang, settings.seed)
names = list(VIEWS if run.has_decoder else VIEWS[:2])
labels = [ui.t(f"model.tab.{name}") for name in names]
open_old_decode_link(labels[-1] if run.has_decoder else None)
if not run.has_decoder:  # an encoder-only model (the pretrained all-MiniLM-L6-v2): said above its two tabs
    st.info(
        ui.t("model.encoder_only", model=getattr(run.pipe, "name", "") or "all-MiniLM-L6-v2"),
        icon=":material/info:",
    )
# ?model_view=<its id>; links made before carry the tab's label, in either language
aliases = ui.widgets.aliases(VIEWS, lambda name, lang: t(f"model.tab.{name}", lang))
notices: list[str] = []
tabs = ui.widgets.tabs(labels, "model_view", notices, names, aliases)
for notice in notices:
    st.warning(notice, icon=":material/warning:")
sections = {
    "residual_ffn": residual_and_ffn,
    "stream": stream_through_layers,
    "output": output_probabilities,
    "decoding": greedy_decoding,
}
for tab, name in zip(tabs, names, strict=True):
    if tab.open:  # one section at a time: only the open tab is drawn
        with tab:
            sections[name](model)
