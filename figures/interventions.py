"""Interventions, drawn: the share of a logit difference restored by patching (per head, per layer and
position) and every layer's guess (the logit lens). Pure functions: arrays and labels -> go.Figure.

Patching shares are signed (a patch can push the wrong way) on a diverging scale centred on 0 and
clipped at ±1 in colour (the cell's number and hover give the exact value); the lens's probabilities
on the 0–1 scale of the attention weights. Every cell writes its number (or the layer's top token):
read from the back of a room, a colour alone says too little.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from figures.drawing.style import SIGNED_SCALE, WEIGHTS_SCALE, escape_label, heatmap, token_label
from i18n import t

CELL_TEXT_MAX = 400  # cells: beyond, the numbers would be too small to read; the hover has them


def patch_row_label(stack: str, layer: int, lang: str = "en", one_stack: bool = False) -> str:
    """A row of the heads grid: "encoder 1", "decoder 2", "cross 1" (``layer`` from 1); a decoder-only
    model's rows are its layers: "layer 2"."""
    if one_stack:
        return t("interventions.row.layer", lang, layer=layer)
    return t(f"interventions.row.{stack}", lang, layer=layer)


def _sized(n_rows: int) -> int:
    return max(340, 170 + 52 * n_rows)


def _names_on_axes(
    fig: go.Figure, x: Sequence[str] | None = None, y: Sequence[str] | None = None
) -> go.Figure:
    """Axis labels that are names ("head 1", "after layer 2"), not tokens: written as they are (a
    token's label shows its spaces as ␣)."""
    if x is not None:
        fig.update_xaxes(ticktext=[escape_label(v) for v in x])
    if y is not None:
        fig.update_yaxes(ticktext=[escape_label(v) for v in y])
    return fig


def _restored(
    z: np.ndarray,
    x: Sequence[str],
    y: Sequence[str],
    x_title: str,
    y_title: str,
    title: str | None,
    lang: str,
) -> go.Figure:
    """A grid of shares restored: signed, centred on 0, its colour clipped at ±1, every cell's number."""
    fig = heatmap(
        z,
        x,
        y,
        title=title,
        colorscale=SIGNED_SCALE,
        zmin=-1,
        zmax=1,
        zmid=0,
        colorbar_title=t("interventions.patch.restored", lang),
        x_title=x_title,
        y_title=y_title,
        value_format=".3f",
        height=_sized(len(y)),
        lang=lang,
    )
    if z.size <= CELL_TEXT_MAX:
        fig.update_traces(texttemplate="%{z:.2f}", textfont={"size": 16})
    return fig


def heads_patching_figure(
    restored, rows: Sequence[str], *, title: str | None = None, lang: str = "en"
) -> go.Figure:
    """(attentions, heads) share restored by patching each head's output from the clean run: one row
    per attention (``rows``: its name), one column per head."""
    z = np.asarray(restored, dtype=float)
    heads = [t("attention.head_n", lang, n=j + 1) for j in range(z.shape[1])]
    fig = _restored(
        z,
        heads,
        rows,
        t("interventions.axis.head", lang),
        t("interventions.axis.attention", lang),
        title,
        lang,
    )
    return _names_on_axes(fig, heads, rows)


def residual_patching_figure(
    restored, tokens: Sequence[str], *, title: str | None = None, lang: str = "en"
) -> go.Figure:
    """(layers, positions) share restored by patching the residual stream entering layer l at one
    position from the clean run (row l: "into layer l"; row 1 is the embeddings)."""
    z = np.asarray(restored, dtype=float)
    rows = [t("interventions.row.into", lang, layer=i + 1) for i in range(z.shape[0])]
    fig = _restored(
        z,
        tokens,
        rows,
        t("interventions.axis.position", lang),
        t("interventions.axis.stream", lang),
        title,
        lang,
    )
    return _names_on_axes(fig, y=rows)


def lens_figure(
    answer_prob,
    top_tokens: Sequence[Sequence[Sequence[str]]],
    top_probs,
    tokens: Sequence[str],
    answers: Sequence[str],
    *,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """Every layer's guess. ``answer_prob`` (N + 1, T): layer l's probability of the model's final
    answer (``answers``) at each decoder position (``tokens``: what it reads); ``top_tokens`` and
    ``top_probs`` (N + 1, T, k) each layer's own top tokens.

    Drawn with one row per position and one column per layer, l = 0 (the embeddings) … N (the
    model's output): the layers are few, the positions many (a sentence of 64 tokens stays readable,
    each row as tall as a line of text). Colour: the answer's probability; the cell writes the
    layer's own most probable token; the hover lists its top tokens with their probabilities."""
    z = np.asarray(answer_prob, dtype=float).T  # (T, N + 1)
    top_p = np.asarray(top_probs, dtype=float).transpose(1, 0, 2)  # (T, N + 1, k)
    n_pos, n_layers = z.shape
    columns = [t("interventions.lens.row0", lang)] + [
        t("interventions.lens.row", lang, layer=i) for i in range(1, n_layers)
    ]
    rows = [f"{token} → {answer}" for token, answer in zip(tokens, answers, strict=True)]
    fig = heatmap(
        z,
        columns,
        rows,
        title=title,
        colorscale=WEIGHTS_SCALE,
        zmin=0,
        zmax=1,
        colorbar_title=t("interventions.lens.prob", lang),
        x_title=t("interventions.lens.y", lang),
        y_title=t("interventions.lens.x", lang),
        value_format=".3f",
        height=max(340, 190 + 36 * n_pos),
        lang=lang,
    )
    top = [[top_tokens[j][i] for j in range(n_layers)] for i in range(n_pos)]  # (T, N + 1, k) labels
    guesses = [
        [
            "<br>".join(
                f"{escape_label(tok)}  {p:.3f}" for tok, p in zip(top[i][j], top_p[i, j], strict=True)
            )
            for j in range(n_layers)
        ]
        for i in range(n_pos)
    ]
    trace = fig.data[0]
    hover = trace.hovertemplate.replace("<extra></extra>", "")
    if trace.customdata is not None:  # (rows, columns, 2) token names: a third field, the guesses
        custom = [[[*trace.customdata[i][j], guesses[i][j]] for j in range(n_layers)] for i in range(n_pos)]
        listed = "%{customdata[2]}"
    else:
        custom, listed = None, ""
    fig.update_traces(
        text=[[escape_label(token_label(top[i][j][0], 10)) for j in range(n_layers)] for i in range(n_pos)],
        customdata=custom,
        hovertemplate=hover + t("interventions.lens.top", lang) + "<br>" + listed + "<extra></extra>",
        texttemplate="%{text}",
        textfont={"size": 15},
    )
    names = [
        f"{token_label(tok, 10)} → {token_label(ans, 10)}" for tok, ans in zip(tokens, answers, strict=True)
    ]
    fig.update_yaxes(ticktext=[escape_label(n) for n in names])
    return _names_on_axes(fig, x=columns)


def ablation_figure(
    positions: Sequence[str],
    intact: Sequence[tuple[str, float]],
    ablated: Sequence[tuple[str, float]],
    *,
    off: str = "",
    x_title: str | None = None,
    title: str | None = None,
    lang: str = "en",
) -> go.Figure:
    """The answer with parts switched off beside the intact one: at each position (``positions``: what
    the decoder reads there), each model's first-ranked token written on its bar, the bar its
    probability. A position where the two differ is marked ≠ under it."""
    from figures.drawing.style import apply_style

    n = min(len(positions), len(intact), len(ablated))
    xs = list(range(n))
    ticks = [
        ("≠ " if intact[i][0] != ablated[i][0] else "") + token_label(positions[i], 10) for i in range(n)
    ]
    fig = go.Figure()
    for name, answer, color in (
        (t("interventions.compare.intact", lang), intact, "#2b6cb0"),
        (off or t("interventions.compare.ablated", lang, parts=""), ablated, "#c53030"),
    ):
        fig.add_trace(
            go.Bar(
                x=xs,
                y=[answer[i][1] for i in range(n)],
                name=escape_label(name),
                marker_color=color,
                text=[escape_label(token_label(answer[i][0], 10)) for i in range(n)],
                textposition="outside",
                textfont={"size": 16},
                hovertemplate="%{text}: %{y:.3f}<extra>" + escape_label(name) + "</extra>",
            )
        )
    fig.update_layout(
        barmode="group",
        yaxis={"range": [0, 1.15], "title": t("interventions.prob.short", lang)},
        legend={"orientation": "h", "y": -0.25},
    )
    fig.update_xaxes(
        tickmode="array",
        tickvals=xs,
        ticktext=[escape_label(s) for s in ticks],
        title=x_title or t("interventions.axis.reads", lang),
    )
    return apply_style(fig, title=title)
