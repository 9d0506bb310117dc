"""The overview diagram: the Transformer's pipeline as boxes and arrows, with real tensor shapes.

A plotly figure of shapes and annotations (no graphviz: it needs no binary and no network, and
shares the projector font). Pure: sizes in, ``go.Figure`` out.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from figures.style import COLORS, apply_style, escape_label

BOX_W, BOX_H = 18.8, 11.0
COLUMNS = (10.0, 30.0, 50.0, 70.0, 90.0)
ROW_ENCODER, ROW_DECODER = 31.0, 9.0


@dataclass(frozen=True)
class DiagramSizes:
    """Every number drawn on the diagram. S, T: source and target lengths in tokens."""

    d_model: int
    num_heads: int
    num_layers: int
    d_ff: int
    S: int
    T: int
    src_vocab: int | None = None
    tgt_vocab: int | None = None
    target_source: str = "greedy output"  # what the decoder reads: "given target", "greedy output"…

    @property
    def d_k(self) -> int:
        return self.d_model // self.num_heads


def shapes_text(s: DiagramSizes) -> dict[str, str]:
    """The shape written under each box, e.g. ``(1, 9, 64)`` for the embedded source."""
    v = s.tgt_vocab if s.tgt_vocab is not None else "V"
    return {
        "src_ids": f"(1, {s.S})",
        "src_embedded": f"(1, {s.S}, {s.d_model})",
        "memory": f"(1, {s.S}, {s.d_model})",
        "tgt_ids": f"(1, {s.T})",
        "tgt_embedded": f"(1, {s.T}, {s.d_model})",
        "decoder_output": f"(1, {s.T}, {s.d_model})",
        "probs": f"(1, {s.T}, {v})",
    }


def _box(fig: go.Figure, x: float, y: float, title: str, detail: str, shape: str, color: str) -> None:
    fig.add_shape(
        type="rect",
        x0=x - BOX_W / 2,
        x1=x + BOX_W / 2,
        y0=y - BOX_H / 2,
        y1=y + BOX_H / 2,
        line={"color": COLORS["edge"], "width": 2},
        fillcolor=color,
        layer="below",
    )
    text = f"<b>{title}</b>"
    if detail:
        text += f"<br><span style='font-size:15px'>{detail}</span>"
    fig.add_annotation(x=x, y=y + 1.2, text=text, showarrow=False, font={"size": 16})
    fig.add_annotation(
        x=x,
        y=y - BOX_H / 2 + 1.6,
        text=f"<b>{shape}</b>",
        showarrow=False,
        font={"size": 17, "color": "#1a3d7c"},
    )


def _arrow(fig: go.Figure, x0: float, y0: float, x1: float, y1: float, label: str = "") -> None:
    fig.add_annotation(
        x=x1,
        y=y1,
        ax=x0,
        ay=y0,
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        showarrow=True,
        arrowhead=3,
        arrowsize=1.4,
        arrowwidth=2,
        arrowcolor=COLORS["edge"],
        text="",
    )
    if label:
        fig.add_annotation(
            x=(x0 + x1) / 2 + 1.0,
            y=(y0 + y1) / 2,
            text=label,
            showarrow=False,
            xanchor="left",
            font={"size": 16},
        )


def pipeline_diagram(s: DiagramSizes) -> go.Figure:
    """sentence → tokens → embeddings + PE → N× encoder → (memory) → N× decoder → probabilities."""
    shp = shapes_text(s)
    fig = go.Figure()
    c = COLUMNS
    e, d = ROW_ENCODER, ROW_DECODER
    src_v = f"vocab {s.src_vocab}" if s.src_vocab is not None else "BPE"
    tgt_v = f"vocab {s.tgt_vocab}" if s.tgt_vocab is not None else "BPE"

    _box(fig, c[0], e, "Sentence", "encoder input", f"{s.S} tokens", COLORS["text"])
    _box(fig, c[1], e, "Tokens → ids", escape_label(src_v), shp["src_ids"], COLORS["tokens"])
    _box(fig, c[2], e, "Embedding + PE", f"×√{s.d_model} + sin/cos", shp["src_embedded"], COLORS["embed"])
    _box(
        fig,
        c[3],
        e,
        f"{s.num_layers}× Encoder layer",
        f"self-attn h={s.num_heads}, d_k={s.d_k}<br>FFN d_ff={s.d_ff}",
        shp["memory"],
        COLORS["encoder"],
    )
    _box(fig, c[0], d, "Target", escape_label(s.target_source), f"{s.T} tokens", COLORS["text"])
    _box(fig, c[1], d, "Tokens → ids", escape_label(tgt_v), shp["tgt_ids"], COLORS["tokens"])
    _box(fig, c[2], d, "Embedding + PE", f"×√{s.d_model} + sin/cos", shp["tgt_embedded"], COLORS["embed"])
    _box(
        fig,
        c[3],
        d,
        f"{s.num_layers}× Decoder layer",
        "masked self-attn,<br>cross-attn, FFN",
        shp["decoder_output"],
        COLORS["decoder"],
    )
    _box(fig, c[4], d, "Linear + softmax", "next-token probs", shp["probs"], COLORS["output"])

    for row in (e, d):
        for a, b in zip(c[:3], c[1:4], strict=True):
            _arrow(fig, a + BOX_W / 2, row, b - BOX_W / 2, row)
    _arrow(fig, c[3] + BOX_W / 2, d, c[4] - BOX_W / 2, d)
    _arrow(fig, c[3], e - BOX_H / 2, c[3], d + BOX_H / 2, f"memory {shp['memory']}")

    key = (
        f"<b>S</b> = {s.S} source tokens<br><b>T</b> = {s.T} target tokens<br>"
        f"d_model = {s.d_model}, h = {s.num_heads}<br>N = {s.num_layers}, d_ff = {s.d_ff}"
    )
    fig.add_annotation(x=c[4], y=e, text=key, showarrow=False, align="left", font={"size": 16})

    fig.update_xaxes(visible=False, range=[0, 100], fixedrange=True)
    fig.update_yaxes(visible=False, range=[2, 38], fixedrange=True)
    apply_style(fig, height=440)
    fig.update_layout(showlegend=False, dragmode=False)
    return fig
