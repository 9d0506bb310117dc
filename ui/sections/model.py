"""The Model page's sections: residual + LayerNorm, the feed-forward layer, the residual stream, the
output softmax and greedy decoding (or, for a decoder-only model, generation by sampling), each with
the real numbers of the sentence in the sidebar, and the ``Model`` they all read.

An encoder-only model (all-MiniLM-L6-v2, a BERT folder) shows sections 1–3 (its encoder) and says
why sections 4–5 (decoder, output layer, decoding) have nothing to show. A decoder-only model (GPT-2,
Llama, Qwen2 from a model folder) shows its one causal stack, with the norm and activation its
configuration names, the next token after each position, and generation by sampling (section 5)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import streamlit as st

import ui
from core.names import Weights
from core.tracing.run import SentenceRun
from figures.model import (
    cross_attention_figure,
    decoded_ids,
    ffn_hidden_figure,
    ffn_units_shown,
    generation_table,
    labels_text,
    next_token_table,
    position_logits,
    relu_zero_fraction,
    residual_figure,
    softmax_t,
    step_kept,
    step_logits_probs,
    step_probs,
    stream_norms_figure,
    topk_figure,
    zero_fraction_figure,
)
from figures.overview import has_output_bias, output_latex
from i18n import strings
from ui import Settings
from ui.interventions import switches as ablation
from ui.page.sliders import url_slider
from ui.page.tables import show_table
from ui.sections.generation import Sampling, generation

SPECIAL = ("[PAD]", "[BOS]", "[EOS]")
TOPK_RANGE, TOPK_DEFAULT = (5, 20), 10
TEMP_RANGE, TEMP_DEFAULT = (0.1, 3.0), 1.0
STEP_TOPK = 10  # bars per decoding step
GEN_TEMP_RANGE, GEN_TEMP_DEFAULT = (0.0, 2.0), 1.0  # generation: 0 = greedy
GEN_TOPK_MAX, GEN_TOKENS_DEFAULT = 100, 16
VIEWS = ("residual_ffn", "stream", "output", "decoding")  # the tabs' ids (?model_view=<id>)


NORM_NAMES = {"layer": "LayerNorm", "rms": "RMSNorm"}  # by config.norm_kind


@dataclass(frozen=True)
class Model:
    """What every section reads: the run (each part computed when a section first reads it), the
    page's language and the seed of random weights (said under their stream); ``settings`` for the
    parts cached by the sidebar's values (a generation)."""

    run: SentenceRun
    lang: str
    seed: int
    settings: Settings | None = None

    @property
    def random(self) -> bool:
        return self.run.pipe.weights == Weights.RANDOM

    @property
    def layers(self) -> list:
        """The layers sections 1–2 follow: the encoder's, or a decoder-only model's one stack."""
        return self.run.trace.decoder if self.run.config.stack == "decoder" else self.run.encoder

    @property
    def activation(self) -> str:
        """The FFN's non-linearity as the config names it: "relu", "gelu", "gelu_tanh" or "swiglu"."""
        return self.run.config.activation

    @property
    def gelu(self) -> bool:
        return self.activation in ("gelu", "gelu_tanh")

    @property
    def norm_kind(self) -> str:
        return self.run.config.norm_kind

    @property
    def norm_name(self) -> str:
        """"LayerNorm" or "RMSNorm", as the config says (``config.norm_kind``)."""
        return NORM_NAMES[self.norm_kind]

    def key(self, key: str) -> str:
        """``key``, or its variant for this model: ``<key>.rms`` (an RMSNorm model) or ``<key>.one``
        (a decoder-only model) where one exists; the paper's text otherwise."""
        one_stack = self.run.config.stack == "decoder"
        for suffix, applies in ((".rms", self.norm_kind == "rms"), (".one", one_stack)):
            if applies and key + suffix in strings("en"):
                return key + suffix
        return key

    @property
    def reads(self) -> str:
        """What the decoder reads: "target", "sentence" or "own" (``SentenceRun.decoder_reads``)."""
        return self.run.decoder_reads


# 1. Residual + LayerNorm, 2. feed-forward (one fragment: both follow the chosen layer) ------------
# Each section is an st.fragment: moving one of its sliders reruns and redraws that section only.


@st.fragment
def residual_and_ffn(m: Model) -> None:
    layer_no, layer = residual(m)
    feed_forward(m, layer_no, layer)


def residual(m: Model):
    """Section 1; -> (the chosen layer's number, its trace), which section 2 shows too."""
    config, src, norm = m.run.config, m.run.src_tokens, m.norm_name
    st.header(ui.t(m.key("model.residual.header")))
    left, right = st.columns([1, 1])
    with left:
        st.markdown(ui.t(m.key("model.residual.intro")))
    with right:
        norm_equations(config.norm, m.norm_kind)
    c1, c2 = st.columns(2)
    with c1:
        layer_no = url_slider(ui.t(m.key("model.residual.layer")), "model_layer", 1, config.num_layers, 1)
    with c2:
        token = url_slider(
            ui.t(m.key("model.residual.token")),
            "model_token",
            0,
            len(src) - 1,
            0,
            help=ui.t("model.residual.token.help"),
        )
    layer = m.layers[layer_no - 1]
    options = [p for p in ablation.all_parts(config) if p.layer == layer_no and p.head is None]
    label = ui.t("interventions.switch.layer", layer=layer_no)
    ablation.switches(m.run.pipe.settings, options, config, label, "model_layer_off", m.lang)
    st.caption(
        ui.t(m.key("model.residual.caption"), layer=layer_no, n=config.num_layers, norm=config.norm,
             token=token, kind=norm)
    )
    st.code(src[token], language=None, wrap_lines=True)
    ui.show_figure(
        residual_figure(layer, token, config.norm, norm_kind=m.norm_kind, lang=m.lang),
        "model_residual",
        f"residual-layer{layer_no}-token{token}",
    )
    reading = "model.residual.reading.pre" if config.norm == "pre" else "model.residual.reading"
    st.caption(ui.t(reading, root=f"{math.sqrt(config.d_model):.1f}", d=config.d_model, kind=norm)
               + " " + ui.t("model.dims_from_0"))
    return layer_no, layer


def norm_equations(norm: str, norm_kind: str) -> None:
    """Where the norm sits (``config.norm``) and what it computes (``config.norm_kind``)."""
    name = NORM_NAMES[norm_kind]
    if norm == "post":
        st.markdown(ui.t("model.residual.post"))
        st.latex(rf"x_{{\text{{out}}}} = \mathrm{{{name}}}\big(x + \mathrm{{Sublayer}}(x)\big)")
    else:
        st.markdown(ui.t("model.residual.pre"))
        st.latex(rf"x_{{\text{{out}}}} = x + \mathrm{{Sublayer}}\big(\mathrm{{{name}}}(x)\big)")
    if norm_kind == "rms":  # no mean subtracted, no shift: only a learned scale g
        st.latex(r"\mathrm{RMSNorm}(v) = g \odot \frac{v}{\mathrm{RMS}(v)}")
        st.latex(r"\mathrm{RMS}(v) = \sqrt{\frac{1}{d}\sum_{i=0}^{d-1} v_i^2 + \varepsilon}")
        return
    st.latex(r"\mathrm{LayerNorm}(v) = \gamma \odot \frac{v - \mu}{\sigma} + \beta")
    # μ and σ on lines of their own: side by side they ran past the half-width column at 1280 px
    st.latex(r"\mu = \frac{1}{d}\sum_{i=0}^{d-1} v_i")  # dimensions count from 0, as on every page
    st.latex(r"\sigma = \sqrt{\frac{1}{d}\sum_{i=0}^{d-1} (v_i - \mu)^2 + \varepsilon}")


# The FFN of each activation a config can name: the model's equations (the paper's ReLU first).
FFN_EQUATIONS = {
    "relu": [],
    "gelu": [r"\mathrm{FFN}_{\mathrm{BERT}}(x) = \mathrm{GELU}(xW_1 + b_1)\,W_2 + b_2",
             r"\mathrm{GELU}(z) = z\,\Phi(z)"],
    "gelu_tanh": [r"\mathrm{FFN}_{\text{model}}(x) = \mathrm{GELU}(xW_1 + b_1)\,W_2 + b_2",
                  r"\mathrm{GELU}(z) \approx \tfrac{z}{2}\Big(1 + \tanh\big(\sqrt{2/\pi}\,"
                  r"(z + 0.044715\,z^3)\big)\Big)"],
    "swiglu": [r"\mathrm{FFN}_{\text{model}}(x) = \big(\mathrm{SiLU}(xW_g + b_g) \odot (xW_1 + b_1)\big)"
               r"\,W_2 + b_2",
               r"\mathrm{SiLU}(z) = z\,\sigma(z) = \frac{z}{1 + e^{-z}}"],
}  # fmt: skip


def ffn_equations(activation: str, bias: bool) -> None:
    st.latex(r"\mathrm{FFN}(x) = \max(0,\ xW_1 + b_1)\,W_2 + b_2")
    for equation in FFN_EQUATIONS[activation]:
        # a model without FFN biases (Llama): its equation has none
        for b in ([] if bias else [" + b_g", " + b_1", " + b_2"]):
            equation = equation.replace(b, "")
        st.latex(equation)


def feed_forward(m: Model, layer_no: int, layer) -> None:
    config, src, activation = m.run.config, m.run.src_tokens, m.activation
    st.header(ui.t("model.ffn.header"))
    hidden = layer.ffn_hidden[0]
    bias = config.ffn_bias
    left, right = st.columns([1, 1])
    with left:
        ffn_equations(activation, bias)
        st.markdown(ui.t(f"model.ffn.{activation}", d_model=config.d_model, d_ff=config.d_ff, layer=layer_no))
    overall, _ = relu_zero_fraction(hidden)
    with right:
        st.metric(ui.t("model.ffn.metric"), f"{overall:.1%}", help=ui.t("model.ffn.metric.help"))
        if activation != "relu":
            st.caption(ui.t("model.ffn.swiglu_zero" if activation == "swiglu" else "model.ffn.gelu_zero"))
        elif m.random:
            st.caption(ui.t("model.ffn.random_half"))
    units = ffn_units_shown(len(src), config.d_ff)
    if units < config.d_ff:
        st.caption(ui.t("model.ffn.part", units=units, d_ff=config.d_ff, n=len(src)))
    heat = ffn_hidden_figure(hidden, src, activation=activation, bias=bias, lang=m.lang)
    if activation != "relu":  # hardly any unit is exactly 0: the per-token bars would all be empty
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
    config, name = m.run.config, m.norm_name
    st.header(ui.t(m.key("model.stream.header")))
    left, right = st.columns([1, 1])
    with left:
        st.markdown(ui.t(m.key("model.stream.intro"), kind=name))
    with right:
        if m.random:  # both arrangements are drawn below
            st.latex(r"\text{post: } x_{l+1} = \mathrm{LayerNorm}\big(x_l + F(x_l)\big)")
            st.latex(r"\text{pre: } x_{l+1} = x_l + F\big(\mathrm{LayerNorm}(x_l)\big)")
        elif config.norm == "post":
            st.latex(rf"\text{{post: }} x_{{l+1}} = \mathrm{{{name}}}\big(x_l + F(x_l)\big)")
        else:
            st.latex(rf"\text{{pre: }} x_{{l+1}} = x_l + F\big(\mathrm{{{name}}}(x_l)\big)")
        if m.norm_kind == "rms":
            st.latex(r"\|\mathrm{RMSNorm}(v)\| = \sqrt{d_{model}} \quad (g = 1)")
        else:
            st.latex(r"\|\mathrm{LayerNorm}(v)\| = \sqrt{d_{model}} \quad (\gamma = 1,\ \beta = 0)")
    traces = {config.norm: m.run.encoder_trace()}
    if m.run.pipe.task:  # learned on a task: its own arrangement only
        st.caption(ui.t("model.stream.trained", norm=config.norm))
    elif m.run.pipe.weights == Weights.HF:  # a model folder: never called trained or random
        st.caption(ui.t("model.stream.folder", name=m.run.pipe.name, norm=config.norm, kind=name))
    elif not m.random:
        st.caption(ui.t("model.stream.pretrained", norm=config.norm))
    else:
        other = "pre" if config.norm == "post" else "post"
        with st.spinner(ui.t("model.spinner.other_norm")):
            traces[other] = m.run.encoder_trace(other)  # the same weights, the other arrangement
        traces = {k: traces[k] for k in ("post", "pre")}
        st.caption(ui.t("model.stream.random", seed=m.seed))
    final_norm = config.final_norm
    ui.show_figure(
        stream_norms_figure(traces, config.d_model, lang=m.lang, final_norm=final_norm,
                            norm_kind=m.norm_kind),
        "model_stream",
        "residual-stream-norms",
    )
    if final_norm:  # the last step is not the last layer's output: say whose norm makes it
        st.caption(ui.t(m.key("model.stream.final_norm"), kind=name))


# 4. The output probabilities ----------------------------------------------------------------------------


@st.fragment
def output_probabilities(m: Model) -> None:
    run = m.run
    st.header(ui.t("model.output.header"))
    left, right = st.columns([1, 1])
    with left:
        # the logits as this model computes them: + b where its output layer has a bias
        logits = output_latex(has_output_bias(run.config), "h_i", r"W_{\text{out}}")
        logits = rf"({logits})" if "+" in logits else logits
        if run.config.stack == "decoder":  # the sentence itself is the context: no source x
            st.latex(rf"P(x_{{i+1}} \mid x_{{\le i}}) = \mathrm{{softmax}}\big({logits} / T\big)")
        else:
            st.latex(rf"P(y_{{i+1}} \mid y_{{\le i}}, x) = \mathrm{{softmax}}\big({logits} / T\big)")
        st.latex(r"\mathrm{softmax}(z)_w = \frac{e^{z_w}}{\sum_{v} e^{z_v}}")
        st.markdown(ui.t(m.key("model.output.intro")))
    with right:
        position = url_slider(ui.t(m.key("model.output.position")), "model_position", 0,
                              len(run.tgt_tokens) - 1, 0)
        k = url_slider(ui.t("model.output.topk"), "model_topk", *TOPK_RANGE, TOPK_DEFAULT)
        temperature = url_slider(
            ui.t("model.output.temperature"), "model_temperature", *TEMP_RANGE, TEMP_DEFAULT, step=0.1
        )
    reads = ui.t(f"model.output.reads.{m.reads}")
    st.caption(ui.t(m.key("model.output.caption"), reads=reads, position=position))
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
    if run.config.stack == "decoder":
        next_tokens(m)


def next_tokens(m: Model) -> None:
    """Every position's next token at once (T = 1): what the model expects after each prefix."""
    st.subheader(ui.t("model.output.table.header"))
    st.caption(ui.t("model.output.table.caption"))
    show_table(next_token_table(m.run.trace, m.run.tgt_tokens, m.run.pipe.tgt_labels, lang=m.lang),
               hide_index=True, key="model_next_tokens")


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
    from core.tracing.pipeline import MAX_DECODE_STEPS  # decoding stops there (why: core.tracing.pipeline)

    src, pipe = m.run.src_tokens, m.run.pipe
    if m.random:
        st.warning(ui.t("model.greedy.noise"), icon=":material/casino:")
    ids = decoded_ids(decoded)
    labels = [pipe.tgt_labels[i] for i in ids]
    n_steps = len(decoded.steps)
    natural = len(src) + (0 if pipe.task else 2)  # as core.tracing.pipeline.greedy decides
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


# 5 (a decoder-only model). Generation, step by step, with sampling ---------------------------------


@st.fragment
def generation_section(m: Model) -> None:
    st.header(ui.t("model.gen.header"))
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"P_T(w) = \mathrm{softmax}(z / T)_w, \qquad x_{t+1} \sim P_T")
        st.latex(r"T \to 0:\ x_{t+1} = \arg\max_w z_w")
    with right:
        st.markdown(ui.t("model.gen.intro"))
    sampling = sampling_widgets()
    result = generation(m.settings, m.run.pipe, sampling)
    if result is None:  # generation() said why
        return
    if not result.probs:
        st.info(ui.t("model.gen.none"))
        return
    generated_text(m, result, sampling)
    generation_step(m, result)
    st.caption(ui.t("model.gen.table"))
    table = generation_table(result, m.run.pipe.tgt_labels, len(m.run.src_tokens), lang=m.lang)
    show_table(table, hide_index=True, key="model_gen_table")


def sampling_widgets() -> Sampling:
    """Temperature (0 = greedy), top-k (0 = off), top-p (1 = off), seed and new tokens: ?gen_…"""
    from core.tracing.pipeline import MAX_DECODE_STEPS  # generation stops there (why: core.tracing.pipeline)

    c1, c2, c3 = st.columns(3)
    with c1:
        temperature = url_slider(ui.t("model.gen.temperature"), "gen_temperature", *GEN_TEMP_RANGE,
                                 GEN_TEMP_DEFAULT, step=0.1, help=ui.t("model.gen.temperature.help"))
        seed = url_slider(ui.t("model.gen.seed"), "gen_seed", 0, 999, 0, help=ui.t("model.gen.seed.help"))
    with c2:
        top_k = url_slider(ui.t("model.gen.top_k"), "gen_top_k", 0, GEN_TOPK_MAX, 0,
                           help=ui.t("model.gen.top_k.help"))
        new_tokens = url_slider(ui.t("model.gen.tokens"), "gen_tokens", 1, MAX_DECODE_STEPS,
                                GEN_TOKENS_DEFAULT)
    with c3:
        top_p = url_slider(ui.t("model.gen.top_p"), "gen_top_p", 0.05, 1.0, 1.0, step=0.05,
                           help=ui.t("model.gen.top_p.help"))
    return Sampling(temperature=round(float(temperature), 2), top_k=top_k or None,
                    top_p=None if top_p >= 1.0 else round(float(top_p), 2), seed=seed, new_tokens=new_tokens)


def generated_text(m: Model, result, sampling: Sampling) -> None:
    """The sentence and what the model wrote after it."""
    pipe, n = m.run.pipe, len(m.run.src_tokens)
    ids = decoded_ids(result)
    written = [pipe.tgt_labels[i] for i in ids[n:]]
    greedy = sampling.temperature == 0
    how = ui.t("model.gen.greedy") if greedy else ui.t("model.gen.sampled", seed=sampling.seed)
    stopped = pipe.eos_id is not None and ids[-1] == pipe.eos_id
    st.caption(ui.t("model.gen.prompt", n=n))
    st.code(" ".join(m.run.src_tokens), language=None, wrap_lines=True)
    st.caption(ui.t("model.gen.output_eos" if stopped else "model.gen.output", n=len(written), how=how))
    st.code(" ".join(written), language=None, wrap_lines=True)
    # the same tokens read as text: bytes of a character split across tokens joined, the end-of-text
    # token left out (it ends the text, it is not part of it)
    st.caption(ui.t("model.gen.as_text"))
    st.code(labels_text(written[:-1] if stopped else written) or ui.t("model.gen.no_text"), language=None,
            wrap_lines=True)


def generation_step(m: Model, result) -> None:
    """One step: the prefix, the token chosen, and the distribution it was drawn from."""
    labels, n = m.run.pipe.tgt_labels, len(m.run.src_tokens)
    ids = decoded_ids(result)
    steps = len(result.probs)
    step = url_slider(ui.t("model.gen.step"), "gen_step", 1, steps, 1, help=ui.t("model.gen.step.help"))
    chosen = ids[n + step - 1]
    c1, c2 = st.columns(2)
    with c1:
        st.caption(ui.t("model.gen.step_prefix", step=step, n=steps))
        st.code(" ".join(labels[i] for i in ids[: n + step - 1]), language=None, wrap_lines=True)
    with c2:
        st.caption(ui.t("model.gen.chosen"))
        st.code(labels[chosen], language=None, wrap_lines=True)
    st.caption(ui.t("model.gen.bars_title", step=step))
    # the tokens the filters kept, at most STEP_TOPK: a bar of 0 would only show a token never drawn
    ui.show_figure(
        topk_figure(step_probs(result, step - 1), labels, min(STEP_TOPK, step_kept(result, step - 1)),
                    chosen=chosen, reference=step_logits_probs(result, step - 1),
                    reference_name=ui.t("model.gen.unfiltered"), lang=m.lang),
        "model_gen_probs",
        f"generation-step{step}-probabilities",
    )
    st.caption(ui.t("model.gen.bars_caption"))


def open_old_decode_link(decoding_label: str | None) -> None:
    """Links made before the tabs said ``?model_decode=true`` to open the decoding section: open its
    tab (``decoding_label``; None: this model has none), unless the link names a tab too."""
    if "model_decode" not in st.query_params:
        return
    if st.query_params["model_decode"] == "true" and decoding_label and "model_view" not in st.query_params:
        st.session_state["model_view"] = decoding_label
    del st.query_params["model_decode"]
