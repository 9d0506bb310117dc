"""Whole model & decoding: residual + LayerNorm, the feed-forward layer, the output softmax and
greedy decoding step by step, each with the real numbers of the sentence in the sidebar; one
section at a time, in tabs (``?model_view=<its label>``).

An encoder-only model (the pretrained all-MiniLM-L6-v2) shows sections 1–3 (its encoder) and says
why sections 4–5 (decoder, output layer, decoding) have nothing to show."""

from __future__ import annotations

import math
import re

import streamlit as st

import ui
import ui.budget
import ui.widgets
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
from ui.cache import get_encoder_trace, run_target
from ui.settings import literal

SPECIAL = ("[PAD]", "[BOS]", "[EOS]")
TOPK_RANGE, TOPK_DEFAULT = (5, 20), 10
TEMP_RANGE, TEMP_DEFAULT = (0.1, 3.0), 1.0
STEP_TOPK = 10  # bars per decoding step


# -- URL-bound sliders: a tampered ?model_…= falls back with a message, never a traceback ----------


def _shown(raw: str) -> str:
    """A URL value safe to put in a message (messages are Markdown): odd values are not repeated,
    plain ones go in a code span (``_a_`` would otherwise be italic)."""
    return literal(raw) if re.fullmatch(r"[\w.+-]{1,20}", raw) else ui.t("model.url.invalid")


def _parse(raw: str, integer: bool) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    if not math.isfinite(value) or (integer and value != int(value)):
        return None
    return value


def url_slider(label: str, key: str, lo, hi, default, *, step=None, help: str | None = None):
    """A slider bound to ?key=…, validated first; a stored value out of range (the sidebar's
    sizes shrank) is clamped. With a single possible value no slider is drawn."""
    integer = isinstance(lo, int)
    state = st.session_state
    default = min(max(default, lo), hi)
    if lo == hi:
        state.pop(key, None)
        return lo
    why = None
    raw = st.query_params.get(key)
    if raw is not None:
        value = _parse(raw, integer)
        if value is None:
            state[key] = default
            why = ui.t("model.url.whole" if integer else "model.url.number", lo=lo, hi=hi)
        elif not lo <= value <= hi:
            state[key] = type(lo)(min(max(value, lo), hi))
            why = ui.t("model.url.range", lo=lo, hi=hi)
    if key in state and not lo <= state[key] <= hi:
        state[key] = min(max(state[key], lo), hi)
    value = st.slider(label, lo, hi, key=key, step=step, help=help, bind="query-params",
                      **({} if key in state else {"value": default}))
    if why is not None:
        st.warning(ui.t("model.url.ignored", key=key, raw=_shown(raw), why=why, value=value),
                   icon=":material/warning:")
    return value


# -- cached extra computations (``_pipe`` is not part of the key) ----------------------------------
# One shared object, as for every run (ui/cache.py), in the server's cache budget (ui.budget): not
# st.cache_data, which unpickled a copy on every call, and a pickled decoding (a copy of the trace so far
# per step) was 4.5 MB at d_model=64, 53 MB at 512: 0.2–0.7 s per slider move. It is only read
# (tests/app/conftest.py checks).


@ui.budget.cached(max_entries=16)
def _greedy(_pipe, key, sentence: str, max_tokens: int):
    from core.pipeline import greedy_sentence

    return greedy_sentence(_pipe, sentence, max_tokens)


def encoder_side():
    """The run's trace, or with only the tokens run (random weights), the encoder's own trace
    (``core.pipeline.encoder_trace``: the same numbers, no decoder drawn or run)."""
    if tokens_only:
        return get_encoder_trace(settings, pipe)
    return run.trace


# -- the page ----------------------------------------------------------------------------------------

settings = ui.page_setup("nav.model.title")
lang = settings.lang
st.caption(ui.t("model.intro"))
# The open tab decides what runs. Random weights never decode the sentence in the run (their decoder
# reads the sentence itself), so their decoding tab needs no run: only the sentence's tokens, then
# greedy decoding. At d_model=512, 6 layers the run and its cache copy took ~0.2 s of a new model's
# ~1 s on a busy machine (benchmarks/app.py). Their first two tabs show the encoder alone: the
# encoder's trace, with only the source side of the weights drawn (the rest when another view needs it).
known = ui.get_pipeline(settings, quiet=True)  # cached; get_run below says why when there is none
has_decoder = known is None or getattr(known.config, "decoder", True)
TABS = ["residual_ffn", "stream"] + (["output", "decoding"] if has_decoder else [])
labels = [ui.t(f"model.tab.{name}") for name in TABS]
# ?model_view=<its name>; links made before carry the tab's label, in either language
VIEW_ALIASES = ui.widgets.aliases(("residual_ffn", "stream", "output", "decoding"),
                                  lambda name, lang: t(f"model.tab.{name}", lang))
if "model_decode" in st.query_params:  # links made before the tabs: the decoding section was opened so
    if st.query_params["model_decode"] == "true" and has_decoder and "model_view" not in st.query_params:
        st.session_state["model_view"] = labels[-1]
    del st.query_params["model_decode"]
tokens_only = (known is not None and known.kind == "random" and has_decoder
               and ui.widgets.open_tab(labels, "model_view", TABS, VIEW_ALIASES)
               in (labels[0], labels[1], labels[-1]))
run = ui.get_run(settings, source_only=tokens_only)
if run is None:
    st.stop()
pipe = ui.get_pipeline(settings)
if pipe is None:
    st.stop()
config = pipe.config
trained = pipe.kind == "trained"
random_weights = pipe.kind == "random"
decoded_in_run = getattr(run, "decoded", None)  # the trained model's own output (None: decode here)
target_given = bool(run_target(settings).strip())  # as the run reads it (SourceRun has no target_given)
gelu = getattr(config, "activation", "relu") == "gelu"
NOISE = ui.t("model.noise")

# 1. Residual + LayerNorm, 2. feed-forward (one fragment: both follow the chosen layer) ------------
# Each section is an st.fragment: moving one of its sliders reruns and redraws that section only.


@st.fragment
def residual_and_ffn() -> None:
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
        token = url_slider(ui.t("model.residual.token"), "model_token", 0, len(run.src_tokens) - 1, 0,
                           help=ui.t("model.residual.token.help"))
    layer = encoder_side().encoder[layer_no - 1]
    st.caption(ui.t("model.residual.caption", layer=layer_no, n=config.num_layers, norm=config.norm,
                    token=token))
    st.code(run.src_tokens[token], language=None, wrap_lines=True)
    ui.show_figure(residual_figure(layer, token, config.norm, lang=lang), "model_residual",
                   f"residual-layer{layer_no}-token{token}")
    st.caption(ui.t("model.residual.reading", root=f"{math.sqrt(config.d_model):.1f}", d=config.d_model))

    st.header(ui.t("model.ffn.header"))
    hidden = layer.ffn_hidden[0]
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"\mathrm{FFN}(x) = \max(0,\ xW_1 + b_1)\,W_2 + b_2")
        if gelu:
            st.latex(r"\mathrm{FFN}_{\mathrm{BERT}}(x) = \mathrm{GELU}(xW_1 + b_1)\,W_2 + b_2")
            st.latex(r"\mathrm{GELU}(z) = z\,\Phi(z)")
        st.markdown(ui.t("model.ffn.gelu" if gelu else "model.ffn.relu", d_model=config.d_model,
                         d_ff=config.d_ff, layer=layer_no))
    overall, _ = relu_zero_fraction(hidden)
    with right:
        st.metric(ui.t("model.ffn.metric"), f"{overall:.1%}", help=ui.t("model.ffn.metric.help"))
        if gelu:
            st.caption(ui.t("model.ffn.gelu_zero"))
        elif random_weights:
            st.caption(ui.t("model.ffn.random_half"))
    units = ffn_units_shown(len(run.src_tokens), config.d_ff)
    if units < config.d_ff:
        st.caption(ui.t("model.ffn.part", units=units, d_ff=config.d_ff, n=len(run.src_tokens)))
    heat = ffn_hidden_figure(hidden, run.src_tokens, activation="gelu" if gelu else "relu", lang=lang)
    if gelu:  # hardly any unit is exactly 0: the per-token bars would all be empty
        ui.show_figure(heat, "model_ffn", f"ffn-hidden-layer{layer_no}")
        return
    c1, c2 = st.columns([2.3, 1])
    with c1:
        ui.show_figure(heat, "model_ffn", f"ffn-hidden-layer{layer_no}")
    with c2:
        ui.show_figure(zero_fraction_figure(hidden, run.src_tokens, lang=lang), "model_ffn_zero",
                       f"ffn-zero-fraction-layer{layer_no}")


def stream_through_layers() -> None:
    st.header(ui.t("model.stream.header"))
    left, right = st.columns([1, 1])
    with left:
        st.markdown(ui.t("model.stream.intro"))
    with right:
        st.latex(r"\text{post: } x_{l+1} = \mathrm{LayerNorm}\big(x_l + F(x_l)\big)")
        st.latex(r"\text{pre: } x_{l+1} = x_l + F\big(\mathrm{LayerNorm}(x_l)\big)")
        st.latex(r"\|\mathrm{LayerNorm}(v)\| = \sqrt{d_{model}} \quad (\gamma = 1,\ \beta = 0)")
    traces = {config.norm: encoder_side()}
    if trained:
        st.caption(ui.t("model.stream.trained", norm=config.norm))
    elif not random_weights:
        st.caption(ui.t("model.stream.pretrained", norm=config.norm))
    else:
        other = "pre" if config.norm == "post" else "post"
        with st.spinner(ui.t("model.spinner.other_norm")):
            # the same weights, the encoder alone: the stream below is the encoder's (no decoder pass)
            traces[other] = get_encoder_trace(settings, pipe, other)
        traces = {k: traces[k] for k in ("post", "pre")}
        st.caption(ui.t("model.stream.random", seed=settings.seed))
    final_norm = getattr(config, "final_norm", False)
    ui.show_figure(stream_norms_figure(traces, config.d_model, lang=lang, final_norm=final_norm),
                   "model_stream", "residual-stream-norms")
    if final_norm:  # the memory is not the last layer's output: say whose LayerNorm makes the last step
        st.caption(ui.t("model.stream.final_norm"))


@st.fragment
def output_probabilities() -> None:
    st.header(ui.t("model.output.header"))
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"P(y_{i+1} \mid y_{\le i}, x) = \mathrm{softmax}\big(h_i W_{\text{out}} / T\big)")
        st.latex(r"\mathrm{softmax}(z)_w = \frac{e^{z_w}}{\sum_{v} e^{z_v}}")
        st.markdown(ui.t("model.output.intro"))
    with right:
        position = url_slider(ui.t("model.output.position"), "model_position", 0, len(run.tgt_tokens) - 1, 0)
        k = url_slider(ui.t("model.output.topk"), "model_topk", *TOPK_RANGE, TOPK_DEFAULT)
        temperature = url_slider(ui.t("model.output.temperature"), "model_temperature", *TEMP_RANGE,
                                 TEMP_DEFAULT, step=0.1)
    if run.target_given:
        reads = ui.t("model.output.reads.target")
    elif run.decoded is not None:
        reads = ui.t("model.output.reads.own")
    else:
        reads = ui.t("model.output.reads.sentence")
    st.caption(ui.t("model.output.caption", reads=reads, position=position))
    st.code(" ".join(run.tgt_tokens[: position + 1]), language=None, wrap_lines=True)
    ui.show_answer(run, key="model_output_answer")
    logits = position_logits(run.trace, position)
    ui.show_figure(
        topk_figure(softmax_t(logits, temperature), pipe.tgt_labels, k, reference=softmax_t(logits, 1.0),
                    reference_name="T = 1", lang=lang),
        "model_output", f"output-probabilities-position{position}",
    )
    if random_weights:
        st.caption(NOISE)


@st.fragment
def greedy_decoding() -> None:
    st.header(ui.t("model.greedy.header"))
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"y_t = \arg\max_{w}\ P(w \mid y_{<t}, x)")
    with right:
        st.markdown(ui.t("model.greedy.intro"))
    if decoded_in_run is not None:
        st.caption(ui.t("model.greedy.own"))
        decoding_steps(decoded_in_run)
        return
    # Not decoded yet (random weights, or a target was given): decoded when this tab is opened (only
    # the open tab is drawn), then kept per model and sentence.
    with st.spinner(ui.t("model.spinner.greedy")):
        decoded = _greedy(pipe, settings.pipeline_settings(), settings.sentence, settings.max_tokens)
    why = "target" if target_given else "random"
    st.caption(ui.t(f"model.greedy.on_demand_{why}"))
    decoding_steps(decoded)


def decoding_steps(decoded) -> None:
    """The decoded tokens step by step: each step's probabilities and cross-attention, then the output."""
    from core.pipeline import MAX_DECODE_STEPS  # decoding stops there (why: core.pipeline)

    if random_weights:
        st.warning(ui.t("model.greedy.noise"), icon=":material/casino:")
    ids = decoded_ids(decoded)
    labels = [pipe.tgt_labels[i] for i in ids]
    n_steps = len(decoded.steps)
    natural = len(run.src_tokens) + (0 if trained else 2)  # as core.pipeline.greedy decides
    if decoded_in_run is None and natural > n_steps == MAX_DECODE_STEPS and "[EOS]" not in labels:
        st.caption(ui.t("model.greedy.capped", steps=MAX_DECODE_STEPS))
    c1, c2 = st.columns(2)
    with c1:
        step = url_slider(ui.t("model.greedy.step"), "model_step", 1, n_steps, n_steps,
                          help=ui.t("model.greedy.step.help"))
    with c2:
        head = url_slider(ui.t("model.greedy.head", h=config.num_heads), "model_head", 0, config.num_heads, 0)
    prefix = labels[:step]
    c1, c2 = st.columns(2)
    with c1:
        st.caption(ui.t("model.greedy.prefix", step=step, n=n_steps))
        st.code(" ".join(prefix), language=None, wrap_lines=True)
    with c2:
        st.caption(ui.t("model.greedy.chosen"))
        st.code(labels[step], language=None, wrap_lines=True)
    # side by side while the source is short; a long one gets the full width for its columns
    side_by_side = len(run.src_tokens) <= 12
    c1, c2 = st.columns([2, 3]) if side_by_side else (st.container(), st.container())
    with c1:
        ui.show_figure(
            topk_figure(step_probs(decoded, step - 1), pipe.tgt_labels, STEP_TOPK, chosen=ids[step],
                        title=ui.t("model.greedy.bars_title", step=step), lang=lang),
            "model_step_probs", f"greedy-step{step}-probabilities", column=0.4 if side_by_side else 1.0,
        )
    with c2:
        which = ui.t("model.greedy.heads_mean") if head == 0 else ui.t("model.greedy.head_no", head=head)
        st.caption(ui.t("model.greedy.cross_caption", step=step, which=which))
        ui.show_figure(
            cross_attention_figure(decoded.steps[step - 1], run.src_tokens, prefix,
                                   None if head == 0 else head - 1, lang=lang),
            "model_step_cross", f"greedy-step{step}-cross-attention", column=0.6 if side_by_side else 1.0,
        )
    st.caption(ui.t("model.greedy.rows") + " "
               + (ui.t("model.greedy.diagonal") if trained and pipe.task == "pinyin"
                  else NOISE if random_weights else ""))

    st.subheader(ui.t("model.greedy.output.header"))
    output = [tok for tok in labels[1:] if tok not in SPECIAL]
    st.caption(ui.t("model.greedy.source", n=len(run.src_tokens)))
    st.code(" ".join(run.src_tokens), language=None, wrap_lines=True)
    st.caption(ui.t("model.greedy.output_eos" if "[EOS]" in labels else "model.greedy.output", n=len(output)))
    st.code(" ".join(output) if output else ui.t("model.greedy.nothing"), language=None, wrap_lines=True)


# One section at a time, in tabs; which one is in the URL (?model_view=<its name>, the first by
# default). With the five sections always drawn, a new model (seed, d_model) took 1.1-1.7 s to appear
# at d_model=512, 8 heads, 6 layers (benchmarks/app.py): Chromium redrew all five charts, and the
# page ran the other LayerNorm placement's encoder for section 3 even when nobody looked at it.
SECTIONS = {"residual_ffn": residual_and_ffn, "stream": stream_through_layers,
            "output": output_probabilities, "decoding": greedy_decoding}
if not has_decoder:  # an encoder-only model (the pretrained all-MiniLM-L6-v2): said above its two tabs
    st.info(ui.t("model.encoder_only", model=getattr(pipe, "name", "") or "all-MiniLM-L6-v2"),
            icon=":material/info:")
notices: list[str] = []
tabs = ui.widgets.tabs(labels, "model_view", notices, TABS, VIEW_ALIASES)
for notice in notices:
    st.warning(notice, icon=":material/warning:")
if tokens_only and tabs[2].open:  # open_tab guessed wrong (the output tab reads the run): the run after all
    tokens_only = False
    run = ui.get_run(settings)
    if run is None:
        st.stop()
for tab, name in zip(tabs, TABS, strict=True):
    if tab.open:
        with tab:
            SECTIONS[name]()
