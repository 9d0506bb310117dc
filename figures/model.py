"""The whole model around attention: residual + LayerNorm, the feed-forward layer, the output
softmax and greedy decoding. Pure: traces / arrays / tokens in, ``go.Figure`` out.

Small helpers turn a trace into numpy arrays (``residual_stages``, ``stream_norms``,
``relu_zero_fraction``, ``softmax_t``, ``top_k``, ``cross_attention``) so that a page does no
tensor arithmetic and tests can compare every plotted number with the trace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from figures.style import (
    SIGNED_SCALE,
    WEIGHTS_SCALE,
    apply_style,
    escape_label,
    heatmap,
    token_label,
)

# Kinds of rows in the residual diagram, and their colours.
STREAM, SUBLAYER, NORMED = "stream", "sublayer", "normed"
KIND_COLORS = {STREAM: "#2b6cb0", SUBLAYER: "#dd8452", NORMED: "#2f855a"}
KIND_NAMES = {STREAM: "residual stream", SUBLAYER: "sublayer output", NORMED: "after LayerNorm"}
NORM_COLORS = {"post": "#2b6cb0", "pre": "#c05621"}
MAX_DIMS = 16  # dimensions shown per vector in the residual heatmap


def _np(t) -> np.ndarray:
    """A (detached, CPU) tensor or array as float64 numpy."""
    if hasattr(t, "detach"):
        t = t.detach().cpu().numpy()
    return np.asarray(t, dtype=np.float64)


# -- residual + LayerNorm --------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    name: str  # the formula, e.g. "x + MultiHead(x)"
    kind: str  # STREAM, SUBLAYER or NORMED
    vector: np.ndarray  # (d_model,) for the chosen token

    @property
    def norm(self) -> float:
        return float(np.linalg.norm(self.vector))


def residual_stages(layer, token: int, norm: str) -> list[Stage]:
    """One encoder layer's data flow for source position ``token``, top to bottom.

    post-norm (paper): x → MultiHead(x) → x + MultiHead(x) → LayerNorm(…) → FFN(…) → … + FFN → LayerNorm
    pre-norm:          x → MultiHead(LN(x)) → x + MultiHead(LN(x)) → FFN(LN(…)) → … + FFN(LN(…))
    In pre-norm the LayerNorm sits inside each branch, so the stream itself is never normalised.
    """
    x = _np(layer.input[0, token])
    attn = _np(layer.self_attn.output[0, token])
    after_attn = _np(layer.after_attn[0, token])
    ffn = _np(layer.ffn_output[0, token])
    out = _np(layer.output[0, token])
    if norm == "pre":
        return [
            Stage("x (layer input)", STREAM, x),
            Stage("MultiHead(LN(x))", SUBLAYER, attn),
            Stage("x₁ = x + MultiHead(LN(x))", STREAM, after_attn),
            Stage("FFN(LN(x₁))", SUBLAYER, ffn),
            Stage("x₁ + FFN(LN(x₁)) (output)", STREAM, out),
        ]
    return [
        Stage("x (layer input)", STREAM, x),
        Stage("MultiHead(x)", SUBLAYER, attn),
        Stage("x + MultiHead(x)", STREAM, x + attn),  # dropout is off in a trace
        Stage("x₁ = LayerNorm(x + MultiHead(x))", NORMED, after_attn),
        Stage("FFN(x₁)", SUBLAYER, ffn),
        Stage("x₁ + FFN(x₁)", STREAM, after_attn + ffn),
        Stage("LayerNorm(x₁ + FFN(x₁)) (output)", NORMED, out),
    ]


def residual_figure(layer, token: int, norm: str, *, dims: int = MAX_DIMS, height: int = 420) -> go.Figure:
    """Left: ‖v‖ of each stage's vector; right: its first ``dims`` dimensions (signed colours)."""
    stages = residual_stages(layer, token, norm)
    names = [escape_label(s.name) for s in stages]
    rows = list(range(len(stages)))
    d = stages[0].vector.shape[0]
    dims = min(dims, d)
    fig = make_subplots(
        rows=1,
        cols=2,
        column_widths=[0.42, 0.58],
        shared_yaxes=True,
        horizontal_spacing=0.03,
        subplot_titles=("length ‖v‖", f"first {dims} of {d} dimensions"),
    )
    fig.add_trace(
        go.Bar(
            x=[s.norm for s in stages],
            y=rows,
            orientation="h",
            marker_color=[KIND_COLORS[s.kind] for s in stages],
            customdata=[[n, KIND_NAMES[s.kind]] for n, s in zip(names, stages, strict=True)],
            hovertemplate="%{customdata[0]}<br>%{customdata[1]}<br>‖v‖ = %{x:.4f}<extra></extra>",
            texttemplate="%{x:.2f}",
            textposition="auto",
            showlegend=False,
        ),
        row=1,
        col=1,
    )
    z = np.stack([s.vector[:dims] for s in stages])
    lim = float(np.abs(z).max()) or 1.0
    fig.add_trace(
        go.Heatmap(
            z=z,
            x=list(range(dims)),
            y=rows,
            colorscale=SIGNED_SCALE,
            zmin=-lim,
            zmax=lim,
            colorbar={"title": {"text": "value"}, "len": 0.9},
            customdata=np.array([[n] * dims for n in names], dtype=object),
            hovertemplate="%{customdata}<br>dimension %{x}<br>value %{z:.4f}<extra></extra>",
        ),
        row=1,
        col=2,
    )
    # Legend entries for the three kinds of rows (dummy traces, no data).
    for kind in (STREAM, SUBLAYER, NORMED):
        if any(s.kind == kind for s in stages):
            fig.add_trace(
                go.Bar(x=[None], y=[None], marker_color=KIND_COLORS[kind], name=KIND_NAMES[kind]),
                row=1,
                col=1,
            )
    fig.update_yaxes(tickmode="array", tickvals=rows, ticktext=names, autorange="reversed", row=1, col=1)
    fig.update_xaxes(title="dimension", title_standoff=4, row=1, col=2)
    apply_style(fig, height=height)
    fig.update_layout(
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0.0},
        margin={"l": 20, "r": 20, "t": 40, "b": 70},
        bargap=0.25,
    )
    return fig


def stream_norms(trace) -> tuple[list[str], np.ndarray]:
    """Per-token length of the encoder's residual stream at every stage: (labels, (stages, S)).

    Stages: the embedded input, then per layer after the attention half and after the FFN half,
    then the memory ("memory": after the encoder's final LayerNorm).
    """
    labels = ["embedded"]
    vectors = [trace.encoder[0].input[0]]
    for i, layer in enumerate(trace.encoder, start=1):
        labels += [f"L{i} attn", f"L{i} FFN"]
        vectors += [layer.after_attn[0], layer.output[0]]
    labels.append("memory")
    vectors.append(trace.memory[0])
    return labels, np.stack([np.linalg.norm(_np(v), axis=-1) for v in vectors])


def stream_norms_figure(traces: Mapping[str, object], d_model: int, *, height: int = 380) -> go.Figure:
    """Mean ‖x‖ over the tokens through the encoder, one line per norm placement ("post", "pre").

    The dotted line is √d_model: a LayerNorm output with its initial scale (γ=1, β=0) has
    exactly that length.
    """
    fig = go.Figure()
    labels: list[str] = []
    for name, trace in traces.items():
        labels, norms = stream_norms(trace)
        mean = norms.mean(axis=1)
        fig.add_trace(
            go.Scatter(
                x=list(range(len(labels))),
                y=mean,
                mode="lines+markers",
                name=f"{name}-norm",
                line={"color": NORM_COLORS.get(name), "width": 3},
                marker={"size": 10},
                customdata=np.stack([norms.min(axis=1), norms.max(axis=1)], axis=-1),
                hovertemplate=(
                    f"{escape_label(name)}-norm<br>mean ‖x‖ = %{{y:.4f}}<br>"
                    "min %{customdata[0]:.4f}, max %{customdata[1]:.4f}<extra></extra>"
                ),
            )
        )
    root = float(np.sqrt(d_model))
    fig.add_trace(  # a trace, not an annotated hline: its label sits in the legend, never on a point
        go.Scatter(
            x=[0, max(len(labels) - 1, 1)],
            y=[root, root],
            mode="lines",
            name=f"√d_model = {root:.1f}",
            line={"dash": "dot", "color": "#555555", "width": 2},
            hoverinfo="skip",
        )
    )
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(labels))), ticktext=labels,
                     title="encoder, stage by stage")
    fig.update_yaxes(title="mean ‖x‖ over tokens", rangemode="tozero")
    apply_style(fig, height=height)
    fig.update_layout(legend={"orientation": "h", "y": 1.12, "x": 0.0})
    return fig


# -- feed-forward ----------------------------------------------------------------------------------


def relu_zero_fraction(hidden) -> tuple[float, np.ndarray]:
    """(overall, per token) fraction of hidden units that ReLU switched off: ``hidden`` is (L, d_ff)."""
    zero = _np(hidden) == 0.0
    return float(zero.mean()), zero.mean(axis=-1)


def ffn_hidden_figure(hidden, tokens: Sequence[str], *, height: int | None = None) -> go.Figure:
    """Tokens × d_ff heatmap of max(0, x W₁ + b₁); white = switched off by ReLU.

    One heatmap trace whatever d_ff is (64 tokens × 2048 units stays one trace). The hover names
    the position and unit; the token is on the axis.
    """
    h = _np(hidden)
    n, d_ff = h.shape
    if len(tokens) != n:
        raise ValueError(f"{n} rows of hidden units but {len(tokens)} tokens")
    zmax = float(h.max()) or 1.0
    fig = go.Figure(
        go.Heatmap(
            z=np.round(h, 4),
            x=list(range(d_ff)),
            y=list(range(n)),
            colorscale=[[0.0, "#ffffff"], [0.02, "#deebf7"], [1.0, "#08306b"]],
            zmin=0.0,
            zmax=zmax,
            colorbar={"title": {"text": "ReLU(xW₁+b₁)"}},
            hovertemplate="token #%{y}<br>unit %{x}<br>value %{z:.4f}<extra></extra>",
        )
    )
    fig.update_xaxes(title=f"hidden unit (d_ff = {d_ff})", showgrid=False)
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(n)),
        ticktext=[token_label(t) for t in tokens],
        autorange="reversed",
        showgrid=False,
    )
    return apply_style(fig, height=height or max(260, min(620, 60 + 26 * n)))


def zero_fraction_figure(hidden, tokens: Sequence[str], *, height: int | None = None) -> go.Figure:
    """Per token, the fraction of the d_ff hidden units that are exactly 0 after ReLU."""
    overall, per_token = relu_zero_fraction(hidden)
    n = len(per_token)
    fig = go.Figure(
        go.Bar(
            x=per_token,
            y=list(range(n)),
            orientation="h",
            marker_color="#7f7f7f",
            customdata=[escape_label(t) for t in tokens],
            hovertemplate="%{customdata} #%{y}<br>%{x:.1%} of units are 0<extra></extra>",
        )
    )
    fig.add_vline(x=overall, line={"dash": "dot", "color": "#c05621"},
                  annotation_text=f"all: {overall:.0%}", annotation_position="top")
    fig.update_xaxes(range=[0, 1], tickformat=".0%", title="units off (= 0)")
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(n)),
        ticktext=[token_label(t) for t in tokens],
        autorange="reversed",
    )
    return apply_style(fig, height=height or max(260, min(620, 60 + 26 * n)))


# -- output probabilities --------------------------------------------------------------------------


def softmax_t(logits, temperature: float) -> np.ndarray:
    """softmax(logits / T) along the last axis, computed stably in float64."""
    if temperature <= 0:
        raise ValueError(f"temperature={temperature} must be > 0")
    z = _np(logits) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def top_k(probs, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, probabilities) of the k most probable tokens, most probable first (ties: lower id)."""
    p = _np(probs)
    k = max(1, min(int(k), p.shape[-1]))
    ids = np.argsort(-p, kind="stable")[:k]
    return ids, p[ids]


def topk_figure(
    probs,
    labels: Sequence[str],
    k: int,
    *,
    reference=None,
    reference_name: str = "T = 1",
    chosen: int | None = None,
    title: str | None = None,
    height: int | None = None,
) -> go.Figure:
    """Horizontal bars of the k most probable next tokens, most probable on top.

    ``reference`` (another distribution over the same vocabulary, e.g. at T = 1) is drawn as
    markers on the same tokens; ``chosen`` (a token id) is highlighted.
    """
    ids, p = top_k(probs, k)
    rows = list(range(len(ids)))
    names = [escape_label(labels[i]) for i in ids]
    colors = ["#2f855a" if chosen is not None and i == chosen else "#2b6cb0" for i in ids]
    fig = go.Figure(
        go.Bar(
            x=p,
            y=rows,
            orientation="h",
            marker_color=colors,
            name="probability",
            customdata=np.stack([np.array(names, dtype=object), ids.astype(object)], axis=-1),
            hovertemplate="%{customdata[0]} (id %{customdata[1]})<br>p = %{x:.4f}<extra></extra>",
            texttemplate="%{x:.3g}",
            textposition="outside",
            cliponaxis=False,
        )
    )
    if reference is not None:
        ref = _np(reference)[ids]
        fig.add_trace(
            go.Scatter(
                x=ref,
                y=rows,
                mode="markers",
                marker={"symbol": "line-ns", "size": 22, "line": {"width": 3, "color": "#c05621"}},
                name=escape_label(reference_name),
                hovertemplate=f"{escape_label(reference_name)}: p = %{{x:.4f}}<extra></extra>",
            )
        )
    fig.update_yaxes(
        tickmode="array",
        tickvals=rows,
        ticktext=[token_label(labels[i]) for i in ids],
        autorange="reversed",
    )
    top = max(float(p.max()), float(_np(reference)[ids].max()) if reference is not None else 0.0)
    # Autoscaled (not 0..1): an untrained model spreads ~1/vocab over every token.
    fig.update_xaxes(range=[0, min(1.0, top * 1.3) or 1.0], title="probability")
    apply_style(fig, height=height or max(240, 60 + 30 * len(ids)), title=title)
    fig.update_layout(showlegend=reference is not None, legend={"orientation": "h", "y": -0.18, "x": 0},
                      margin={"r": 80})  # room for the value printed after the longest bar
    return fig


# -- greedy decoding -------------------------------------------------------------------------------


def cross_attention(step_trace, head: int | None = None, layer: int = -1) -> np.ndarray:
    """The cross-attention weights of one decoding step: (positions so far, S).

    ``head=None`` averages the heads; the last decoder layer by default.
    """
    w = _np(step_trace.decoder[layer].cross_attn.weights[0])  # (h, T, S)
    return w.mean(axis=0) if head is None else w[head]


def cross_attention_figure(
    step_trace,
    src_tokens: Sequence[str],
    prefix_tokens: Sequence[str],
    head: int | None = None,
    *,
    height: int | None = None,
) -> go.Figure:
    """Rows: the decoder positions so far (the prefix); columns: the source tokens."""
    z = cross_attention(step_trace, head)
    return heatmap(
        z,
        list(src_tokens),
        list(prefix_tokens),
        colorscale=WEIGHTS_SCALE,
        zmin=0.0,
        zmax=1.0,
        x_title="source token (memory)",
        y_title="decoder position",
        height=height or max(260, min(560, 160 + 34 * len(prefix_tokens))),
        colorbar_title="weight",
    )


# -- small helpers for the page (no tensor arithmetic in pages) ------------------------------------


def position_logits(trace, position: int) -> np.ndarray:
    """The logits (tgt_vocab,) the decoder produced at ``position`` of a traced run."""
    return _np(trace.logits[0, position])


def decoded_ids(result) -> list[int]:
    """The ids of a greedy decoding, starting with BOS (a ``DecodeResult``'s first row)."""
    return [int(i) for i in result.tokens[0].tolist()]


def step_probs(result, step: int) -> np.ndarray:
    """The next-token distribution of decoding step ``step`` (0-based): (tgt_vocab,)."""
    return _np(result.probs[step][0])
