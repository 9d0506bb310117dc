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

import i18n
from figures.drawing.style import (
    _CONTROL_NAMES,
    SIGNED_SCALE,
    WEIGHTS_SCALE,
    apply_style,
    escape_label,
    fit_margins,
    heatmap,
    token_label,
)
from figures.drawing.toolbox import as_numpy, build_figure

# Kinds of rows in the residual diagram, and their colours (names: i18n "model.fig.kind.<kind>").
STREAM, SUBLAYER, NORMED = "stream", "sublayer", "normed"
KIND_COLORS = {STREAM: "#2b6cb0", SUBLAYER: "#dd8452", NORMED: "#2f855a"}
NORM_COLORS = {"post": "#2b6cb0", "pre": "#c05621"}
MAX_DIMS = 16  # dimensions shown per vector in the residual heatmap
# With up to 512 tokens a grid can have 512 × 2048 cells: beyond these budgets a view shows a part
# (the first hidden units) or a block-averaged overview, and token axes label every k-th token only.
MAX_FFN_CELLS = 64 * 1024  # 64 tokens × d_ff = 1024 stay whole (≈ 350 kB sent to the browser)
MAX_GRID_CELLS = 256 * 256  # cross-attention: larger grids are averaged over square blocks
RICH_HOVER_CELLS = 64 * 64  # up to here every cell's hover names its two tokens (per-cell strings)
MAX_TICKS = 24  # token labels on one axis: an axis of ≤ 620 px fits about this many 18 px labels


def _np(x) -> np.ndarray:
    """A (detached, CPU) tensor or array as float64 numpy."""
    return np.asarray(as_numpy(x), dtype=np.float64)


def _style(fig: go.Figure, **kwargs) -> go.Figure:
    return fit_margins(apply_style(fig, **kwargs))


def _tr(key: str, lang: str, **values: object) -> str:
    return i18n.t(f"model.fig.{key}", lang, **values)


def _ticks(labels: Sequence[str], max_ticks: int = MAX_TICKS) -> tuple[list[int], list[str]]:
    """(tickvals, ticktext) for a token axis of integer positions: every k-th token when there are many."""
    step = max(1, -(-len(labels) // max_ticks))
    vals = list(range(0, len(labels), step))
    return vals, [token_label(labels[i]) for i in vals]


# -- residual + LayerNorm --------------------------------------------------------------------------


@dataclass(frozen=True)
class Stage:
    name: str  # the formula, e.g. "x + MultiHead(x)"
    kind: str  # STREAM, SUBLAYER or NORMED
    vector: np.ndarray  # (d_model,) for the chosen token

    @property
    def norm(self) -> float:
        return float(np.linalg.norm(self.vector))


NORM_SHORT = {"layer": "LN", "rms": "RMSNorm"}  # the name in a stage's formula, by config.norm_kind


def after_attention(layer):
    """The stream after a layer's attention half: an encoder layer's ``after_attn``; a decoder-only
    model's layer (``DecoderLayerTrace``, no cross-attention) names it ``after_self_attn``."""
    return layer.after_attn if hasattr(layer, "after_attn") else layer.after_self_attn


def residual_stages(
    layer, token: int, norm: str, *, norm_kind: str = "layer", lang: str = "en"
) -> list[Stage]:
    """One layer's data flow for position ``token``, top to bottom (an encoder layer, or a layer of a
    decoder-only model's one stack: its attention is causal, the flow is the same).

    post-norm (paper): x → MultiHead(x) → x + MultiHead(x) → LayerNorm(…) → FFN(…) → … + FFN → LayerNorm
    pre-norm:          x → MultiHead(LN(x)) → x + MultiHead(LN(x)) → FFN(LN(…)) → … + FFN(LN(…))
    In pre-norm the norm sits inside each branch, so the stream itself is never normalised.
    ``norm_kind`` ("layer" | "rms", ``config.norm_kind``) names the norm in the formulas.
    """
    x = _np(layer.input[0, token])
    attn = _np(layer.self_attn.output[0, token])
    after_attn = _np(after_attention(layer)[0, token])
    ffn = _np(layer.ffn_output[0, token])
    out = _np(layer.output[0, token])
    first = _tr("stage.input", lang)  # "x (layer input)"

    def last(formula: str) -> str:
        return _tr("stage.output", lang, formula=formula)  # "… (output)"

    if norm == "pre":
        n = NORM_SHORT[norm_kind]
        return [
            Stage(first, STREAM, x),
            Stage(f"MultiHead({n}(x))", SUBLAYER, attn),
            Stage(f"x₁ = x + MultiHead({n}(x))", STREAM, after_attn),
            Stage(f"FFN({n}(x₁))", SUBLAYER, ffn),
            Stage(last(f"x₁ + FFN({n}(x₁))"), STREAM, out),
        ]
    return [
        Stage(first, STREAM, x),
        Stage("MultiHead(x)", SUBLAYER, attn),
        Stage("x + MultiHead(x)", STREAM, x + attn),  # dropout is off in a trace
        Stage("x₁ = LayerNorm(x + MultiHead(x))", NORMED, after_attn),
        Stage("FFN(x₁)", SUBLAYER, ffn),
        Stage("x₁ + FFN(x₁)", STREAM, after_attn + ffn),
        Stage(last("LayerNorm(x₁ + FFN(x₁))"), NORMED, out),
    ]


def residual_figure(
    layer, token: int, norm: str, *, norm_kind: str = "layer", dims: int = MAX_DIMS, height: int = 420,
    lang: str = "en",
) -> go.Figure:
    """Left: ‖v‖ of each stage's vector; right: its first ``dims`` dimensions (signed colours).

    Built from plain dicts (``figures.drawing.toolbox.build_figure``): ``make_subplots`` and plotly's
    validation cost most of what this figure cost per rerun of the Full model page.
    """
    stages = residual_stages(layer, token, norm, norm_kind=norm_kind, lang=lang)
    names = [escape_label(s.name) for s in stages]
    kinds = {kind: _tr(f"kind.{kind}", lang) for kind in (STREAM, SUBLAYER, NORMED)}
    d = stages[0].vector.shape[0]
    dims = min(dims, d)
    traces = [
        _stage_norm_bars(stages, names, kinds),
        _stage_dims_heatmap(stages, names, dims, lang),
        *_stage_kind_legend(stages, kinds),
    ]
    titles = (_tr("residual.length", lang), _tr("residual.dims", lang, dims=dims, d=d))
    return build_figure(traces, _residual_layout(names, titles, height, lang))


def _stage_norm_bars(stages: list[Stage], names: list[str], kinds: dict[str, str]) -> dict:
    """The left panel: one horizontal bar per stage, its length ‖v‖, coloured by the stage's kind."""
    return {
        "type": "bar",
        "x": [s.norm for s in stages],
        "y": list(range(len(stages))),
        "orientation": "h",
        "marker": {"color": [KIND_COLORS[s.kind] for s in stages]},
        "customdata": [[n, kinds[s.kind]] for n, s in zip(names, stages, strict=True)],
        "hovertemplate": "%{customdata[0]}<br>%{customdata[1]}<br>‖v‖ = %{x:.4f}<extra></extra>",
        "texttemplate": "%{x:.2f}",
        "textposition": "auto",
        "showlegend": False,
    }


def _stage_dims_heatmap(stages: list[Stage], names: list[str], dims: int, lang: str) -> dict:
    """The right panel: each stage's first ``dims`` entries, a signed scale centred on 0."""
    z = np.stack([s.vector[:dims] for s in stages])  # (stages, dims)
    lim = float(np.abs(z).max()) or 1.0
    value, dimension = _tr("value", lang), _tr("dimension", lang)
    return {
        "type": "heatmap",
        "z": z,
        "x": list(range(dims)),
        "y": list(range(len(stages))),
        "xaxis": "x2",
        "yaxis": "y2",
        "colorscale": SIGNED_SCALE,
        "zmin": -lim,
        "zmax": lim,
        "colorbar": {"title": {"text": value}, "len": 0.9},
        "customdata": [[n] * dims for n in names],
        "hovertemplate": f"%{{customdata}}<br>{dimension} %{{x}}<br>{value} %{{z:.4f}}<extra></extra>",
    }


def _stage_kind_legend(stages: list[Stage], kinds: dict[str, str]) -> list[dict]:
    """Legend entries for the kinds of rows drawn (dummy traces, no data)."""
    return [
        {"type": "bar", "x": [None], "y": [None], "marker": {"color": KIND_COLORS[kind]}, "name": kinds[kind]}
        for kind in (STREAM, SUBLAYER, NORMED)
        if any(s.kind == kind for s in stages)
    ]


def _residual_layout(names: list[str], titles: tuple[str, str], height: int, lang: str) -> dict:
    """Two panels side by side sharing the stage rows (names on the left), a title above each."""
    rows = list(range(len(names)))
    dimension = _tr("dimension", lang)
    # make_subplots(1, 2, column_widths=[0.42, 0.58], horizontal_spacing=0.03, shared_yaxes=True)
    left, right = (0.0, 0.42 * 0.97), (0.42 * 0.97 + 0.03, 1.0)
    return {
        "height": height,
        "xaxis": {"domain": left, "anchor": "y"},
        "xaxis2": {"domain": right, "anchor": "y2", "title": {"text": dimension, "standoff": 4}},
        "yaxis": {"anchor": "x", "tickmode": "array", "tickvals": rows, "ticktext": names,
                  "autorange": "reversed"},
        "yaxis2": {"anchor": "x2", "matches": "y", "showticklabels": False},
        "annotations": [
            {"text": escape_label(title), "x": sum(dom) / 2, "y": 1.0, "xref": "paper", "yref": "paper",
             "xanchor": "center", "yanchor": "bottom", "showarrow": False, "font": {"size": 16}}
            for title, dom in zip(titles, (left, right), strict=True)
        ],
        # one entry per row, under the bars: short (中文) names in one row ran under the heatmap's
        # x-axis title
        "legend": {"orientation": "h", "yanchor": "top", "y": -0.2, "x": 0.0, "entrywidth": 1,
                   "entrywidthmode": "fraction"},
        "margin": {"l": 20, "r": 20, "t": 40, "b": 70},
        "bargap": 0.25,
    }  # fmt: skip


def stream_norms(
    trace, *, lang: str = "en", final_norm: bool = False, norm_kind: str = "layer"
) -> tuple[list[str], np.ndarray]:
    """Per-token length of the residual stream at every stage: (labels, (stages, L)).

    Stages: the embedded input, then per layer after the attention half and after the FFN half,
    then the memory (what the decoder reads: after the encoder's final LayerNorm, if it has one;
    ``final_norm``, the model's ``config.final_norm``, names that LayerNorm in the last label).
    A decoder-only model (``trace.encoder`` empty) has one stack, ``trace.decoder``: its last stage is
    h, after the final norm (``norm_kind``: "layer" | "rms" names it) that feeds the output layer.
    """
    one_stack = not trace.encoder
    layers = trace.decoder if one_stack else trace.encoder
    labels = [_tr("stream.embedded", lang)]
    vectors = [layers[0].input[0]]
    for i, layer in enumerate(layers, start=1):
        labels += [_tr("stream.attn", lang, i=i), _tr("stream.ffn", lang, i=i)]
        vectors += [after_attention(layer)[0], layer.output[0]]
    if one_stack:
        labels.append(_tr(f"stream.h_{norm_kind}" if final_norm else "stream.h", lang))
        vectors.append(trace.decoder_output[0])
    else:
        labels.append(_tr("stream.memory_norm" if final_norm else "stream.memory", lang))
        vectors.append(trace.memory[0])
    return labels, np.stack([np.linalg.norm(_np(v), axis=-1) for v in vectors])


def stream_norms_figure(
    traces: Mapping[str, object], d_model: int, *, height: int = 380, lang: str = "en",
    final_norm: bool = False, norm_kind: str = "layer",
) -> go.Figure:
    """Mean ‖x‖ over the tokens through the encoder (a decoder-only model: its one stack), one line
    per norm placement ("post", "pre").

    The dotted line is √d_model: a LayerNorm output with its initial scale (γ=1, β=0) has
    exactly that length, and so has an RMSNorm output with g=1 (its root mean square is 1).
    ``final_norm``: the last point is after the stack's final norm.
    """
    fig = go.Figure()
    labels: list[str] = []
    one_stack = False
    for name, trace in traces.items():
        one_stack = not trace.encoder
        labels, norms = stream_norms(trace, lang=lang, final_norm=final_norm, norm_kind=norm_kind)
        mean = norms.mean(axis=1)
        line_name = escape_label(_tr("stream.line", lang, norm=name))  # "post-norm"
        fig.add_trace(
            go.Scatter(
                x=list(range(len(labels))),
                y=mean,
                mode="lines+markers",
                name=line_name,
                line={"color": NORM_COLORS.get(name), "width": 3},
                marker={"size": 10},
                customdata=np.stack([norms.min(axis=1), norms.max(axis=1)], axis=-1),
                hovertemplate=line_name + "<br>" + _tr("stream.hover", lang) + "<extra></extra>",
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
    # many stages: slanted labels ending at their tick (plotly's own slant starts there and pushes
    # the last label out of the chart, where it is hidden)
    fig.update_xaxes(tickmode="array", tickvals=list(range(len(labels))), ticktext=labels,
                     title=_tr("stream.x_one" if one_stack else "stream.x", lang),
                     tickangle=-30 if len(labels) > 8 else None)
    fig.update_yaxes(title=_tr("stream.y", lang), rangemode="tozero")
    _style(fig, height=height)
    fig.update_layout(legend={"orientation": "h", "y": 1.12, "x": 0.0})
    return fig


# -- feed-forward ----------------------------------------------------------------------------------


def relu_zero_fraction(hidden) -> tuple[float, np.ndarray]:
    """(overall, per token) fraction of hidden units that ReLU switched off: ``hidden`` is (L, d_ff)."""
    zero = _np(hidden) == 0.0
    return float(zero.mean()), zero.mean(axis=-1)


def ffn_units_shown(n_tokens: int, d_ff: int, max_cells: int = MAX_FFN_CELLS) -> int:
    """How many hidden units (the first ones) the heatmap shows for ``n_tokens`` rows: all of them
    up to ``max_cells`` cells, else as many as fit, a multiple of 64 (at least 64)."""
    return min(d_ff, max(64, max_cells // max(n_tokens, 1) // 64 * 64))


def hidden_formula(activation: str, bias: bool = True) -> str:
    """The FFN's hidden layer as text, by ``config.activation`` and ``config.ffn_bias``:
    ``ReLU(xW₁+b₁)``, ``GELU(xW₁+b₁)`` ("gelu" and its tanh approximation "gelu_tanh") or, for
    SwiGLU, ``SiLU(xW_g)⊙(xW₁)`` (a gate's SiLU times a second projection)."""
    b = "+b₁" if bias else ""
    if activation == "swiglu":
        return f"SiLU(xW_g{'+b_g' if bias else ''})⊙(xW₁{b})"
    return f"{'ReLU' if activation == 'relu' else 'GELU'}(xW₁{b})"


def ffn_hidden_figure(
    hidden,
    tokens: Sequence[str],
    *,
    activation: str = "relu",
    bias: bool = True,
    max_cells: int = MAX_FFN_CELLS,
    height: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """Tokens × d_ff heatmap of the hidden layer act(x W₁ + b₁); with ReLU, white = switched off.

    One heatmap trace; a long sentence shows the first ``ffn_units_shown`` units (the x axis title
    says so) and labels every k-th token. GELU (BERT, GPT-2) and SwiGLU (Llama) have negative values:
    orange below 0. ``bias``: whether the FFN has biases (``config.ffn_bias``), for the colour bar's formula.
    """
    h = _np(hidden)
    n, d_ff = h.shape
    if len(tokens) != n:
        raise ValueError(f"{n} rows of hidden units but {len(tokens)} tokens")
    units = ffn_units_shown(n, d_ff, max_cells)
    z = h[:, :units].astype(np.float32)  # float32: half the bytes sent to the browser
    if activation != "relu":
        # GELU's negative values lie in [-0.17, 0] while a few positive ones reach 20+: orange below 0,
        # white at 0, blue above, one scale both ways, the largest 0.5 % saturated (hover: exact values)
        lim = max(float(np.percentile(np.abs(z), 99.5)), 1e-6)
        colors = {"colorscale": [[0.0, "#c05621"], [0.5, "#ffffff"], [1.0, "#08306b"]],
                  "zmin": -lim, "zmax": lim}
    else:
        colors = {"colorscale": [[0.0, "#ffffff"], [0.02, "#deebf7"], [1.0, "#08306b"]],
                  "zmin": 0.0, "zmax": float(z.max()) or 1.0}
    heatmap = {
        "type": "heatmap",
        "z": z,
        "x": list(range(units)),
        "y": list(range(n)),
        "colorbar": {"title": {"text": hidden_formula(activation, bias)}},
        "hovertemplate": _tr("ffn.hover", lang) + "<extra></extra>",
        **colors,
    }
    title = (_tr("ffn.x", lang, d_ff=d_ff) if units == d_ff
             else _tr("ffn.x_part", lang, units=units, d_ff=d_ff))
    tickvals, ticktext = _ticks(tokens)
    return build_figure([heatmap], {
        "height": height or max(260, min(620, 60 + 26 * n)),
        "xaxis": {"title": {"text": title}, "showgrid": False},
        "yaxis": {"tickmode": "array", "tickvals": tickvals, "ticktext": ticktext, "autorange": "reversed",
                  "showgrid": False},
    })  # fmt: skip


def zero_fraction_figure(
    hidden, tokens: Sequence[str], *, height: int | None = None, lang: str = "en"
) -> go.Figure:
    """Per token, the fraction of the d_ff hidden units that are exactly 0 after ReLU."""
    overall, per_token = relu_zero_fraction(hidden)
    n = len(per_token)
    bars = {
        "type": "bar",
        "x": per_token,
        "y": list(range(n)),
        "orientation": "h",
        "marker": {"color": "#7f7f7f"},
        "customdata": [escape_label(tok) for tok in tokens],
        "hovertemplate": _tr("zero.hover", lang) + "<extra></extra>",
    }
    # the share over all units: a dotted line across the plot, its label at the top, inside a narrow
    # chart (what add_vline(annotation_position="top left"/"top right") draws, without its cost)
    left = overall > 0.5
    line = {"type": "line", "xref": "x", "yref": "y domain", "x0": overall, "x1": overall, "y0": 0, "y1": 1,
            "line": {"dash": "dot", "color": "#c05621"}}
    note = {"text": escape_label(_tr("zero.all", lang, share=f"{overall:.0%}")), "showarrow": False,
            "xref": "x", "yref": "y domain", "x": overall, "y": 1, "xanchor": "right" if left else "left",
            "yanchor": "top"}
    tickvals, ticktext = _ticks(tokens)
    return build_figure([bars], {
        "height": height or max(260, min(620, 60 + 26 * n)),
        "shapes": [line],
        "annotations": [note],
        "xaxis": {"range": [0, 1], "tickformat": ".0%", "title": {"text": _tr("zero.x", lang)}},
        "yaxis": {"tickmode": "array", "tickvals": tickvals, "ticktext": ticktext, "autorange": "reversed"},
    })  # fmt: skip


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
    lang: str = "en",
) -> go.Figure:
    """Horizontal bars of the k most probable next tokens, most probable on top.

    ``reference`` (another distribution over the same vocabulary, e.g. at T = 1) is drawn as
    markers on the same tokens; ``chosen`` (a token id) is highlighted.
    """
    ids, p = top_k(probs, k)
    rows = list(range(len(ids)))
    probability = _tr("probability", lang)
    fig = go.Figure(_topk_bars(ids, p, labels, chosen, probability))
    if reference is not None:
        fig.add_trace(_reference_marks(_np(reference)[ids], reference_name))
    fig.update_yaxes(
        tickmode="array",
        tickvals=rows,
        ticktext=[token_label(labels[i]) for i in ids],
        autorange="reversed",
    )
    top = max(float(p.max()), float(_np(reference)[ids].max()) if reference is not None else 0.0)
    # Autoscaled (not 0..1): an untrained model spreads ~1/vocab over every token. No tick numbers:
    # each bar writes its own value, and in the decoding tab's narrow column the ticks turned upright.
    fig.update_xaxes(range=[0, min(1.0, top * 1.3) or 1.0], title=probability, showticklabels=False,
                     showgrid=False)
    _style(fig, height=height or max(240, 60 + 30 * len(ids)), title=title)
    fig.update_layout(showlegend=reference is not None,
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
                      margin={"r": 80})  # room for the value printed after the longest bar
    return fig


def _topk_bars(
    ids: np.ndarray, p: np.ndarray, labels: Sequence[str], chosen: int | None, name: str
) -> go.Bar:
    """One bar per token, its probability written after it; the ``chosen`` token's bar in green."""
    names = [escape_label(labels[i]) for i in ids]
    colors = ["#2f855a" if chosen is not None and i == chosen else "#2b6cb0" for i in ids]
    return go.Bar(
        x=p,
        y=list(range(len(ids))),
        orientation="h",
        marker_color=colors,
        name=name,
        customdata=np.stack([np.array(names, dtype=object), ids.astype(object)], axis=-1),  # (k, 2)
        hovertemplate="%{customdata[0]} (id %{customdata[1]})<br>p = %{x:.4f}<extra></extra>",
        texttemplate="%{x:.3g}",
        textposition="outside",
        textfont={"size": 16},  # not shrunk to the bar's height (plotly's default: ~13 px here)
        constraintext="none",
        cliponaxis=False,
    )


def _reference_marks(ref: np.ndarray, reference_name: str) -> go.Scatter:
    """A vertical tick on each bar at the same token's probability in the reference distribution."""
    return go.Scatter(
        x=ref,
        y=list(range(len(ref))),
        mode="markers",
        marker={"symbol": "line-ns", "size": 22, "line": {"width": 3, "color": "#c05621"}},
        name=escape_label(reference_name),
        hovertemplate=f"{escape_label(reference_name)}: p = %{{x:.4f}}<extra></extra>",
    )


# -- greedy decoding -------------------------------------------------------------------------------


def cross_attention(step_trace, head: int | None = None, layer: int = -1) -> np.ndarray:
    """The cross-attention weights of one decoding step: (positions so far, S).

    ``head=None`` averages the heads; the last decoder layer by default.
    """
    w = _np(step_trace.decoder[layer].cross_attn.weights[0])  # (h, T, S)
    return w.mean(axis=0) if head is None else w[head]


def block_mean(z: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Average ``z`` over blocks of ``rows`` × ``cols`` cells (the last blocks may be smaller)."""
    z = np.asarray(z, dtype=np.float64)
    r0, c0 = np.arange(0, z.shape[0], rows), np.arange(0, z.shape[1], cols)
    sums = np.add.reduceat(np.add.reduceat(z, r0, axis=0), c0, axis=1)
    sizes = np.outer(np.diff(np.append(r0, z.shape[0])), np.diff(np.append(c0, z.shape[1])))
    return sums / sizes


def _blocks(tokens: Sequence[str], size: int) -> list[str]:
    """One label per block of ``size`` tokens: its first token (the hover gives the range)."""
    return [tokens[i] for i in range(0, len(tokens), size)]


def cross_attention_figure(
    step_trace,
    src_tokens: Sequence[str],
    prefix_tokens: Sequence[str],
    head: int | None = None,
    *,
    max_cells: int = MAX_GRID_CELLS,
    height: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """Rows: the decoder positions so far (the prefix); columns: the source tokens.

    Small grids name both tokens in every cell's hover. A grid of more than ``max_cells`` cells
    (hundreds of tokens on both sides) is an overview: each axis longer than 256 is averaged over
    blocks of k tokens, and the axis titles say so.
    """
    z = cross_attention(step_trace, head)
    x_title, y_title, weight = _tr("cross.x", lang), _tr("cross.y", lang), _tr("weight", lang)
    n_rows, n_cols = z.shape
    if n_rows * n_cols <= RICH_HOVER_CELLS:
        fig = heatmap(z, list(src_tokens), list(prefix_tokens), colorscale=WEIGHTS_SCALE, zmin=0.0, zmax=1.0,
                      x_title=x_title, y_title=y_title, colorbar_title=weight,
                      height=height or max(260, min(560, 160 + 34 * n_rows)))
        fig.data[0].hovertemplate = (
            f"{escape_label(y_title)}: %{{customdata[0]}}<br>{escape_label(x_title)}: %{{customdata[1]}}<br>"
            f"{weight}: %{{z:.4f}}<extra></extra>"
        )
        return fit_margins(fig)
    rows = cols = 1
    if n_rows * n_cols > max_cells:
        side = max(1, int(np.sqrt(max_cells)))
        rows, cols = -(-n_rows // side), -(-n_cols // side)
        z = block_mean(z, rows, cols)
    y_labels, x_labels = _blocks(list(prefix_tokens), rows), _blocks(list(src_tokens), cols)
    if rows > 1:
        y_title = _tr("blocks", lang, title=y_title, k=rows)
    if cols > 1:
        x_title = _tr("blocks", lang, title=x_title, k=cols)
    fig = go.Figure(
        go.Heatmap(
            z=z.astype(np.float32),
            x=[i * cols for i in range(z.shape[1])],  # the first position of each block
            y=[i * rows for i in range(z.shape[0])],
            colorscale=WEIGHTS_SCALE,
            zmin=0.0,
            zmax=1.0 if rows == cols == 1 else float(z.max()) or 1.0,
            colorbar={"title": {"text": weight}},
            hovertemplate=(f"{escape_label(y_title)}: #%{{y}}<br>{escape_label(x_title)}: #%{{x}}<br>"
                           f"{weight}: %{{z:.4f}}<extra></extra>"),
        )
    )
    xv, xt = _ticks(x_labels)
    yv, yt = _ticks(y_labels)
    fig.update_xaxes(tickmode="array", tickvals=[v * cols for v in xv], ticktext=xt,
                     title=escape_label(x_title), side="top", showgrid=False)
    fig.update_yaxes(tickmode="array", tickvals=[v * rows for v in yv], ticktext=yt,
                     title=escape_label(y_title), autorange="reversed", showgrid=False)
    return _style(fig, height=height or max(260, min(620, 160 + 34 * z.shape[0])))


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


# -- a decoder-only model: next token after each position, and generation by sampling ----------------

# Every label follows one rule (core.tracing.pipeline.display_token, ui.folders.hf_tokenizer): a space is ␣,
# a newline ⏎,
# a tab ⇥, a piece of a multi-byte character its bytes ⟨e4 b8⟩, an empty token ∅. Read backwards, a list
# of labels is the text they spell, with a character split across tokens whole again.
_LABEL_CHARS = {"␣": " ", "⏎": "\n", "⇥": "\t", "∅": ""}


def labels_text(labels: Sequence[str]) -> str:
    """The text a run of token labels spells (bytes joined, then read as UTF-8).

    >>> labels_text(["To", "␣be", "⟨e5\u2009ba⟩", "⟨8a⟩", "前"])
    'To be床前'
    """
    data = bytearray()
    for label in labels:
        if len(label) > 2 and label[0] == "⟨" and label[-1] == "⟩":
            try:
                data += bytes.fromhex(label[1:-1].replace("\u2009", " "))
                continue
            except ValueError:  # text that only looks like bytes ("⟨hi⟩" typed in the sentence)
                pass
        data += "".join(_LABEL_CHARS.get(ch, ch) for ch in label).encode()
    return data.decode("utf-8", errors="replace")


def _cell(token: str) -> str:
    """A token in a table cell (plain text, never HTML): whitespace made visible, nothing escaped."""
    return "".join(_CONTROL_NAMES.get(ch, ch) for ch in str(token)) or "∅"


def next_token_table(
    trace, tokens: Sequence[str], labels: Sequence[str], *, lang: str = "en"
) -> dict[str, list]:
    """Per position i of a decoder-only run, softmax(logits[0, i]) read as a table (column names in
    ``lang``): the token at i, the most probable next token and its probability, and the token that
    really follows in the sentence with the probability the model gave it (none after the last)."""
    probs = softmax_t(trace.logits[0], 1.0)  # (L, vocab)
    best = probs.argmax(axis=-1)
    n = len(tokens)
    following = [probs[i, int(trace.tgt_ids[0, i + 1])] if i + 1 < n else None for i in range(n)]
    return {
        _tr("next.position", lang): list(range(n)),
        _tr("next.token", lang): [_cell(tok) for tok in tokens],
        _tr("next.best", lang): [_cell(labels[int(i)]) for i in best],
        _tr("next.best_p", lang): [float(probs[i, b]) for i, b in enumerate(best)],
        _tr("next.actual", lang): [_cell(tokens[i + 1]) if i + 1 < n else "" for i in range(n)],
        _tr("next.actual_p", lang): [None if p is None else float(p) for p in following],
    }


def step_logits_probs(result, step: int) -> np.ndarray:
    """softmax at T = 1 of the logits that step ``step`` (0-based) of a generation read: the
    distribution before temperature, top-k and top-p (its ``probs[step]`` is the one after)."""
    return softmax_t(result.steps[step].logits[0, -1], 1.0)


def step_kept(result, step: int) -> int:
    """How many tokens the distribution of step ``step`` (0-based) kept (> 0 after top-k and top-p)."""
    return int((_np(result.probs[step][0]) > 0).sum())


def generation_table(result, labels: Sequence[str], prompt_len: int, *, lang: str = "en") -> dict[str, list]:
    """One row per generated token: the step, the token chosen, its probability in the distribution it
    was drawn from (``result.probs``: after filtering) and how many tokens that distribution kept."""
    ids = decoded_ids(result)[prompt_len:]
    probs = [_np(p[0]) for p in result.probs]
    return {
        _tr("gen.step", lang): list(range(1, len(ids) + 1)),
        _tr("gen.chosen", lang): [_cell(labels[i]) for i in ids],
        _tr("gen.p", lang): [float(p[i]) for p, i in zip(probs, ids, strict=True)],
        _tr("gen.kept", lang): [int((p > 0).sum()) for p in probs],
    }
