"""Training curves and the trained-vs-random comparison: pure plotly figures."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from figures.style import apply_style, heatmap


def curves(history: list[dict]) -> go.Figure:
    """Loss and accuracy against the step, from ``core.train`` progress reports (live or final)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("training loss", "accuracy"), horizontal_spacing=0.12)
    steps = [h["step"] for h in history]
    fig.add_trace(go.Scatter(x=steps, y=[h["loss"] for h in history], mode="lines", name="loss",
                             line={"width": 3}), row=1, col=1)
    fig.add_trace(go.Scatter(x=steps, y=[h["acc"] for h in history], mode="lines", name="train token acc",
                             line={"width": 3}), row=1, col=2)
    val = [h for h in history if h.get("val")]
    if val:
        fig.add_trace(go.Scatter(x=[h["step"] for h in val], y=[h["val"]["token_acc"] for h in val],
                                 mode="lines+markers", name="validation token acc (greedy)",
                                 marker={"size": 10}), row=1, col=2)
    fig.update_xaxes(title_text="step")
    fig.update_yaxes(range=[0, 1.02], row=1, col=2)
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return apply_style(fig, height=380)


def cross_attention(weights, tgt_tokens: list[str], src_tokens: list[str], title: str) -> go.Figure:
    """Head-averaged cross-attention of the last decoder layer: rows = decoder positions, columns = source."""
    return heatmap(weights, src_tokens, tgt_tokens, title=title, zmin=0, zmax=1, colorbar_title="weight",
                   x_title="source token (key)", y_title="decoder input (query)", height=420)


def last_cross_attention(trace):
    """(T, S) numpy: the last decoder layer's cross-attention of the first sentence, averaged over heads."""
    return trace.decoder[-1].cross_attn.weights[0].mean(0).numpy()
