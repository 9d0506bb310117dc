"""Whole model & decoding: residual + LayerNorm, the feed-forward layer, the output softmax and
greedy decoding step by step, each with the real numbers of the sentence in the sidebar."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import streamlit as st

import ui
from figures.model import (
    cross_attention_figure,
    decoded_ids,
    ffn_hidden_figure,
    position_logits,
    relu_zero_fraction,
    residual_figure,
    softmax_t,
    step_probs,
    stream_norms_figure,
    topk_figure,
    zero_fraction_figure,
)
from ui.settings import literal

CHART = {"displayModeBar": False}
PLOT = {"width": "stretch", "config": CHART, "theme": None}  # theme=None: keep the projector fonts
SPECIAL = ("[PAD]", "[BOS]", "[EOS]")
TOPK_RANGE, TOPK_DEFAULT = (5, 20), 10
TEMP_RANGE, TEMP_DEFAULT = (0.1, 3.0), 1.0
STEP_TOPK = 10  # bars per decoding step


# -- URL-bound sliders: a tampered ?model_…= falls back with a message, never a traceback ----------


def _shown(raw: str) -> str:
    """A URL value safe to put in a message (messages are Markdown): odd values are not repeated,
    plain ones go in a code span (``_a_`` would otherwise be italic)."""
    return literal(raw) if re.fullmatch(r"[\w.+-]{1,20}", raw) else "an invalid value"


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
            why = f"must be a {'whole number' if integer else 'number'} from {lo} to {hi}"
        elif not lo <= value <= hi:
            state[key] = type(lo)(min(max(value, lo), hi))
            why = f"must be from {lo} to {hi} for this sentence and these sizes"
    if key in state and not lo <= state[key] <= hi:
        state[key] = min(max(state[key], lo), hi)
    value = st.slider(label, lo, hi, key=key, step=step, help=help, bind="query-params",
                      **({} if key in state else {"value": default}))
    if why is not None:
        st.warning(f"Ignored {key}={_shown(raw)} in the URL ({why}); showing {value}.",
                   icon=":material/warning:")
    return value


# -- cached extra computations (``_pipe`` is not part of the key) ----------------------------------
# st.cache_resource, not st.cache_data: cache_data unpickles a copy on every call, and a decoding
# (one full trace per step) is 4.5 MB at d_model=64, 53 MB at 512: 0.2–0.7 s per slider move.
# These objects are only read, so sharing one copy between reruns and sessions is safe.


@st.cache_resource(max_entries=16, show_spinner="Decoding greedily…")
def _greedy(_pipe, key, sentence: str, max_tokens: int):
    from core.pipeline import greedy

    limit = min(max_tokens, _pipe.config.max_len - 2)  # as run_pipeline cuts the sentence
    ids = _pipe.src_encode(sentence)[1][:limit]
    return greedy(_pipe, ids, limit)


@st.cache_resource(max_entries=16, show_spinner="Running the other LayerNorm placement…")
def _trace(_pipe, key, sentence: str, target: str, max_tokens: int):
    from core.pipeline import run_pipeline

    return run_pipeline(_pipe, sentence, target, max_tokens=max_tokens).trace


# -- the page ----------------------------------------------------------------------------------------

settings = ui.page_setup("nav.model.title")
st.caption(
    "Attention is one sublayer. Around it: a residual connection and LayerNorm, a feed-forward "
    "network, and at the end a softmax over the vocabulary that the decoder reads one token at a time."
)
run = ui.get_run(settings)
if run is None:
    st.stop()
pipe = ui.get_pipeline(settings)
if pipe is None:
    st.stop()
config = pipe.config
trained = pipe.kind == "trained"
NOISE = "Random weights: these numbers are real but the pattern is noise — no meaning yet."

# 1. Residual + LayerNorm, 2. feed-forward (one fragment: both follow the chosen layer) ------------
# Each section is an st.fragment: moving one of its sliders reruns and redraws that section only.


@st.fragment
def residual_and_ffn() -> None:
    st.header("1 · Residual connection + LayerNorm")
    left, right = st.columns([1, 1])
    with left:
        st.markdown(
            "Every sublayer (self-attention, feed-forward) is wrapped the same way: its output is "
            "**added** to its input (the *residual stream*) and a **LayerNorm** rescales each vector to "
            "mean 0, variance 1 (then a learned scale γ and shift β)."
        )
    with right:
        if config.norm == "post":
            st.markdown("**post-norm** (the paper, section 5.4): normalise the sum.")
            st.latex(r"x_{\text{out}} = \mathrm{LayerNorm}\big(x + \mathrm{Sublayer}(x)\big)")
        else:
            st.markdown("**pre-norm** (later models, e.g. GPT-2): normalise the branch input only.")
            st.latex(r"x_{\text{out}} = x + \mathrm{Sublayer}\big(\mathrm{LayerNorm}(x)\big)")
        st.latex(r"\mathrm{LayerNorm}(v) = \gamma \odot \frac{v - \mu(v)}{\sigma(v)} + \beta")

    c1, c2 = st.columns(2)
    with c1:
        layer_no = url_slider("Encoder layer", "model_layer", 1, config.num_layers, 1)
    with c2:
        token = url_slider(
            "Source token (position)", "model_token", 0, len(run.src_tokens) - 1, 0,
            help="Which token's vector to follow through the layer.",
        )
    layer = run.trace.encoder[layer_no - 1]
    st.caption(f"One vector through encoder layer {layer_no} of {config.num_layers} ({config.norm}-norm), "
               f"the token at position {token}:")
    st.code(run.src_tokens[token], language=None, wrap_lines=True)
    st.plotly_chart(residual_figure(layer, token, config.norm), **PLOT)

    st.header("2 · Position-wise feed-forward network")
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"\mathrm{FFN}(x) = \max(0,\ xW_1 + b_1)\,W_2 + b_2")
        st.markdown(
            f"The same two-layer network is applied to every token separately: d_model = {config.d_model} "
            f"→ d_ff = {config.d_ff} → d_model. The heatmap shows the hidden layer max(0, xW₁ + b₁) of "
            f"encoder layer {layer_no}; white cells are units the ReLU switched off (exactly 0)."
        )
    overall, _ = relu_zero_fraction(layer.ffn_hidden[0])
    with right:
        st.metric("Hidden units switched off by ReLU", f"{overall:.1%}",
                  help="Fraction of the tokens × d_ff hidden activations that are exactly 0.")
        if not trained:
            st.caption("With random weights about half the units are off: xW₁ + b₁ is symmetric around 0.")
    c1, c2 = st.columns([3, 1])
    with c1:
        st.plotly_chart(ffn_hidden_figure(layer.ffn_hidden[0], run.src_tokens), **PLOT)
    with c2:
        st.plotly_chart(zero_fraction_figure(layer.ffn_hidden[0], run.src_tokens), **PLOT)


def stream_through_layers() -> None:
    st.header("3 · The residual stream through the layers: post- vs pre-norm")
    traces = {config.norm: run.trace}
    if trained:
        st.caption(
            f"Trained weights: the LayerNorm placement is fixed by the checkpoint ({config.norm}-norm). "
            "Switch the sidebar to random weights to compare post- and pre-norm side by side."
        )
    else:
        other = "pre" if config.norm == "post" else "post"
        other_settings = replace(settings, norm=other)
        other_pipe = ui.get_pipeline(other_settings)
        if other_pipe is not None:
            traces[other] = _trace(other_pipe, other_settings.pipeline_settings(), settings.sentence,
                                   settings.target, ui.MAX_TOKENS)
            traces = {k: traces[k] for k in ("post", "pre")}
        st.caption(
            f"The same random weights (seed {settings.seed}) with LayerNorm after (post) and before (pre) "
            "each sublayer. Post-norm brings the stream back to about √d_model after every sublayer; "
            "pre-norm keeps adding to it, so it grows with depth (try 6 layers)."
        )
    st.plotly_chart(stream_norms_figure(traces, config.d_model), **PLOT)


@st.fragment
def output_probabilities() -> None:
    st.header("4 · Output probabilities")
    left, right = st.columns([1, 1])
    with left:
        st.latex(r"P(y_{i+1} \mid y_{\le i}, x) = \mathrm{softmax}\big(h_i W_{\text{out}} / T\big)")
        st.markdown(
            "The decoder's last vector at position *i* goes through a linear layer (one score, a *logit*, "
            "per target token) and a softmax. The temperature *T* divides the logits first: *T* < 1 "
            "sharpens, *T* > 1 flattens. **Greedy decoding takes the argmax, which no temperature "
            "changes**; sampling would draw from these bars, so it depends on *T*."
        )
    with right:
        position = url_slider("Decoder position", "model_position", 0, len(run.tgt_tokens) - 1, 0)
        k = url_slider("Top-k tokens shown", "model_topk", *TOPK_RANGE, TOPK_DEFAULT)
        temperature = url_slider("Temperature T", "model_temperature", *TEMP_RANGE, TEMP_DEFAULT, step=0.1)
    if run.target_given:
        reads = "the target sentence given in the sidebar (teacher forcing)"
    elif run.decoded is not None:
        reads = "the model's own greedy output"
    else:
        reads = "the sentence itself (random weights: their own output is not worth feeding back)"
    st.caption(f"The decoder reads {reads}. Position {position} has seen these tokens "
               "and proposes the next one:")
    st.code(" ".join(run.tgt_tokens[: position + 1]), language=None, wrap_lines=True)
    logits = position_logits(run.trace, position)
    st.plotly_chart(
        topk_figure(softmax_t(logits, temperature), pipe.tgt_labels, k, reference=softmax_t(logits, 1.0),
                    reference_name="T = 1"),
        **PLOT,
    )
    if not trained:
        st.caption(NOISE)


@st.fragment
def greedy_decoding() -> None:
    st.header("5 · Greedy decoding, step by step")
    st.latex(r"y_t = \arg\max_{w}\ P(w \mid y_{<t}, x)")
    if run.decoded is not None:
        decoded = run.decoded
        st.caption("The decoder started from [BOS] and fed each chosen token back in as its next input.")
    else:
        decoded = _greedy(pipe, settings.pipeline_settings(), settings.sentence, ui.MAX_TOKENS)
        st.caption(
            "Decoded here on demand (the sidebar "
            + ("gives a target, so the other views are teacher-forced)." if run.target_given
               else "has random weights, so the other views read the sentence).")
        )
    if not trained:
        st.warning("Random weights: an untrained model's output is noise (often one token repeated).",
                   icon=":material/casino:")
    ids = decoded_ids(decoded)
    labels = [pipe.tgt_labels[i] for i in ids]
    n_steps = len(decoded.steps)
    c1, c2 = st.columns(2)
    with c1:
        step = url_slider("Step t", "model_step", 1, n_steps, n_steps,
                          help="Step t generates the t-th token from the prefix [BOS] y₁ … y_{t−1}.")
    with c2:
        head = url_slider(f"Cross-attention head (0 = average of the {config.num_heads})", "model_head",
                          0, config.num_heads, 0)
    prefix = labels[:step]
    c1, c2 = st.columns(2)
    with c1:
        st.caption(f"Step {step} of {n_steps}: the prefix so far")
        st.code(" ".join(prefix), language=None, wrap_lines=True)
    with c2:
        st.caption("the chosen (most probable) next token")
        st.code(labels[step], language=None, wrap_lines=True)
    c1, c2 = st.columns([2, 3])
    with c1:
        st.plotly_chart(
            topk_figure(step_probs(decoded, step - 1), pipe.tgt_labels, STEP_TOPK, chosen=ids[step],
                        title=f"next token at step {step} (T = 1)"),
            **PLOT,
        )
    with c2:
        which = "average of the heads" if head == 0 else f"head {head}"
        st.caption(f"Cross-attention at step {step}, last decoder layer ({which}): "
                   "rows = decoder positions so far, columns = source tokens")
        st.plotly_chart(
            cross_attention_figure(decoded.steps[step - 1], run.src_tokens, prefix,
                                   None if head == 0 else head - 1),
            **PLOT,
        )
    st.caption(
        "Each row is one decoder position of this step; the last row is the one that chose the token. "
        + ("A trained 汉字→拼音 model looks at the character it is reading aloud: a diagonal."
           if trained else NOISE)
    )

    st.subheader("Decoded output")
    output = [t for t in labels[1:] if t not in SPECIAL]
    st.caption(f"Source tokens ({len(run.src_tokens)}; unknown characters are [UNK])")
    st.code(" ".join(run.src_tokens), language=None, wrap_lines=True)
    st.caption(f"Greedy output ({len(output)} tokens" + (", stopped at [EOS])" if "[EOS]" in labels else ")"))
    st.code(" ".join(output) if output else "(nothing before [EOS])", language=None, wrap_lines=True)


residual_and_ffn()
stream_through_layers()
output_probabilities()
greedy_decoding()
