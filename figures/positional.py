"""Positional encoding: sinusoid curves, the table, why offsets are linear, and three other schemes.

Pure functions, no Streamlit. Every number drawn comes from ``core.model.positional`` (the functions the
model itself uses): ``sinusoidal_encoding``, ``apply_rope``/``rope_angles``, ``alibi_bias``.
Every text comes from ``i18n`` in the language ``lang``.

    PE(pos, 2i)   = sin(pos · ω_i)      ω_i = 1 / 10000^(2i / d_model)
    PE(pos, 2i+1) = cos(pos · ω_i)

For each scheme the page shows (a) how it reaches the scores, (b) its relative-position property
(the value for positions p and p + k, drawn against k for several p: one curve when it depends on k
only) and (c) what happens past the training length.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
import torch
from plotly.subplots import make_subplots

from core.model.positional import alibi_bias, alibi_slopes, apply_rope, rope_angles, sinusoidal_encoding
from figures.drawing.style import BASE_FONT_SIZE, SIGNED_SCALE, apply_style, escape_label, token_label
from figures.drawing.toolbox import (
    MAX_TICKS,  # token ticks on an axis; with more tokens every n-th is labelled
)
from i18n import t

DIM_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")
TRAINED_COLOR = "#2ca02c"
MISSING_COLOR = "#d62728"
MAX_TABLE_ROWS = 256  # a heatmap of a table shows at most this many rows (every n-th beyond)
# Labels drawn inside a plot (training range, end of the sentence) sit on the curves: a light box
# keeps them legible on a projector.
LABEL_BOX = {"bgcolor": "rgba(255, 255, 255, 0.85)", "borderpad": 2}


def _t(key: str, lang: str, **values) -> str:
    return t(f"positional.{key}", lang, **values)


def pe_table(max_len: int, d_model: int) -> np.ndarray:
    """(max_len, d_model) numpy copy of the model's sinusoidal table."""
    return sinusoidal_encoding(max_len, d_model).double().numpy()


def frequencies(d_model: int) -> np.ndarray:
    """ω_i = 1 / 10000^(2i/d_model) for each pair i (0-based): the angle a pair turns per position."""
    two_i = np.arange(0, d_model, 2, dtype=float)
    return np.exp(-math.log(10000.0) * two_i / d_model)


def period(dim: int, d_model: int) -> float:
    """The wavelength 2π/ω_i, in positions, of dimension ``dim`` (pair i = dim // 2)."""
    return 2 * math.pi / float(frequencies(d_model)[dim // 2])


def dim_label(dim: int, d_model: int, lang: str = "en") -> str:
    """'dim 6 (sin, period 15.2)': the kind and the wavelength of one dimension."""
    kind = "sin" if dim % 2 == 0 else "cos"
    return _t("fig.dim_label", lang, dim=dim, kind=kind, period=period(dim, d_model))


def default_dims(d_model: int) -> list[int]:
    """A fast, a middle and a slow pair of dimensions, all valid for this d_model."""
    picks = [0, 1, d_model // 8, d_model // 2]
    out: list[int] = []
    for p in picks:
        if 0 <= p < d_model and p not in out:
            out.append(p)
    return out


def _style(fig: go.Figure, height: int) -> go.Figure:
    """The shared style, plus axes that make room for their tick labels and titles (nothing cut off)."""
    apply_style(fig, height=height)
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def _legend_on_top(fig: go.Figure, top: int = 80) -> None:
    fig.update_layout(legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0}, margin={"t": top})


def _shade_training(fig: go.Figure, trained_len: int, lang: str, *, example: bool = False,
                    where: str = "top left") -> None:
    """Shade positions 0 … trained_len - 1: the ones seen in training (or an example length)."""
    text = (_t("fig.example_training", lang, n=trained_len) if example
            else _t("fig.seen_in_training", lang, last=trained_len - 1))
    fig.add_vrect(x0=-0.5, x1=trained_len - 0.5, fillcolor=TRAINED_COLOR, opacity=0.12, line_width=0,
                  annotation_text=text, annotation_position=where, annotation=LABEL_BOX)


def pe_curves(d_model: int, dims: Sequence[int], max_pos: int, *, trained_len: int | None = None,
              sentence_len: int | None = None, height: int | None = None, lang: str = "en") -> go.Figure:
    """PE(pos, dim) against pos = 0 … max_pos - 1, one line per chosen dimension.

    ``trained_len`` shades the positions the trained model saw during training; ``sentence_len``
    marks the positions of the current sentence.
    """
    pe = pe_table(max_pos, d_model)
    pos = np.arange(max_pos)
    fig = go.Figure()
    for n, dim in enumerate(dims):
        name = dim_label(dim, d_model, lang)
        fig.add_trace(go.Scatter(
            x=pos, y=pe[:, dim], mode="lines", name=name,
            line={"color": DIM_COLORS[n % len(DIM_COLORS)], "width": 2.5},
            hovertemplate=f"{name}<br>pos %{{x}}<br>PE %{{y:.4f}}<extra></extra>",
        ))
    if trained_len:
        _shade_training(fig, trained_len, lang)
    if sentence_len:
        fig.add_vline(x=sentence_len - 0.5, line_dash="dot", line_color="#555555",
                      annotation_text=_t("fig.sentence_end", lang, n=sentence_len),
                      annotation_position="bottom right", annotation=LABEL_BOX)
    fig.update_xaxes(title=_t("fig.axis.pos", lang), range=[-0.5, max_pos - 0.5])
    fig.update_yaxes(title="PE(pos, dim)", range=[-1.15, 1.15])
    _style(fig, height or 400)
    _legend_on_top(fig)
    return fig


def _position_heatmap(z: np.ndarray, *, x_title: str, y_title: str, colorbar: str, zmin: float, zmax: float,
                      hover_x: str, hover_y: str, height: int, y=None, colorscale=SIGNED_SCALE,
                      lang: str = "en") -> go.Figure:
    fig = go.Figure(go.Heatmap(
        z=z,
        x=np.arange(z.shape[1]),
        y=np.arange(z.shape[0]) if y is None else y,
        colorscale=colorscale,
        zmin=zmin,
        zmax=zmax,
        zmid=0.0 if zmin < 0 < zmax else None,
        colorbar={"title": {"text": colorbar}},
        hovertemplate=(f"{hover_y} %{{y}}<br>{hover_x} %{{x}}<br>{_t('fig.value', lang)} %{{z:.4f}}"
                       "<extra></extra>"),
    ))
    fig.update_xaxes(title=x_title, side="top", showgrid=False)
    fig.update_yaxes(title=y_title, autorange="reversed", showgrid=False)
    return _style(fig, height)


def pe_heatmap(pe: np.ndarray, *, height: int | None = None, lang: str = "en") -> go.Figure:
    """Positions (rows) × dimensions (columns) of the table: fast stripes left, slow ones right."""
    return _position_heatmap(np.asarray(pe, dtype=float), x_title=_t("fig.axis.dimension", lang),
                             y_title=_t("fig.axis.position", lang), colorbar="PE", zmin=-1.0, zmax=1.0,
                             hover_x=_t("fig.hover.dim", lang), hover_y=_t("fig.hover.pos", lang),
                             height=height or 440, lang=lang)


def pe_gram(pe: np.ndarray) -> np.ndarray:
    """PE·PEᵀ: entry (p, q) = Σ_i cos((p − q)·ω_i) for even d_model, a function of p − q only."""
    pe = np.asarray(pe, dtype=float)
    return pe @ pe.T


def gram_heatmap(pe: np.ndarray, *, height: int | None = None, lang: str = "en") -> go.Figure:
    """PE·PEᵀ over positions: constant along every diagonal (Toeplitz), peak d/2 on the main one."""
    gram = pe_gram(pe)
    d = pe.shape[1]
    bound = d / 2 if d else 1.0
    return _position_heatmap(gram, x_title=_t("fig.axis.position_q", lang),
                             y_title=_t("fig.axis.position_p", lang), colorbar=_t("fig.dot", lang),
                             zmin=-bound, zmax=bound, hover_x="q", hover_y="p", height=height or 440,
                             lang=lang)


# -- (b) the relative-position property: value(p, p + k) against k, one curve per p ---------------


def offset_dots(pe: np.ndarray, starts: Sequence[int], max_offset: int) -> dict[int, np.ndarray]:
    """For each start p: the dot products PE(p)·PE(p+k) for k = 0 … max_offset (needs enough rows).

    Works for any table of position rows (sinusoidal or learned).
    """
    pe = np.asarray(pe, dtype=float)
    out = {}
    for p in starts:
        rows = pe[p : p + max_offset + 1]
        out[int(p)] = rows @ pe[p]
    return out


def offset_spread(curves: Mapping[int, np.ndarray]) -> float:
    """max over k of (largest − smallest value across the starts p): 0 when only k matters."""
    stacked = np.stack([np.asarray(v, dtype=float) for v in curves.values()])
    return float(np.ptp(stacked, axis=0).max()) if stacked.size else 0.0


def fit_starts(rows: int, starts: Sequence[int] = (0, 10, 25, 50),
               max_offset: int = 60) -> tuple[list[int], int]:
    """Starts p and an offset range that fit in a table of ``rows`` rows (p + max_offset < rows)."""
    max_offset = max(1, min(max_offset, rows // 2))
    fitting = [p for p in starts if p + max_offset < rows] or [0]
    return fitting, max_offset


def offset_curves(curves: Mapping[int, np.ndarray], *, y_title: str, height: int | None = None,
                  lang: str = "en") -> go.Figure:
    """One line per start p: the value for positions (p, p + k) against the offset k.

    Lines drawn wide first, narrow last, so an exact overlap stays visible.
    """
    fig = go.Figure()
    widths = np.linspace(9, 2.5, max(len(curves), 1))
    for n, (p, values) in enumerate(curves.items()):
        values = np.asarray(values, dtype=float)
        fig.add_trace(go.Scatter(
            x=np.arange(len(values)), y=values, mode="lines", name=f"p = {p}",
            line={"color": DIM_COLORS[n % len(DIM_COLORS)], "width": float(widths[n])},
            opacity=0.85,
            hovertemplate=f"p = {p}<br>k %{{x}}<br>{escape_label(y_title)} %{{y:.6f}}<extra></extra>",
        ))
    fig.update_xaxes(title=_t("fig.axis.offset", lang))
    fig.update_yaxes(title=escape_label(y_title))
    _style(fig, height or 440)
    _legend_on_top(fig, 70)
    return fig


def rotation_matrix(d_model: int, k: int) -> np.ndarray:
    """M_k (d, d): block-diagonal 2×2 rotations by k·ω_i, so that PE(p + k) = M_k · PE(p) (even d)."""
    m = np.zeros((d_model, d_model))
    for i, w in enumerate(frequencies(d_model)):
        a = 2 * i
        c, s = math.cos(k * w), math.sin(k * w)
        if a + 1 < d_model:
            # sin((p+k)w) = sin(pw)cos(kw) + cos(pw)sin(kw);  cos((p+k)w) = cos(pw)cos(kw) − sin(pw)sin(kw)
            m[a, a], m[a, a + 1] = c, s
            m[a + 1, a], m[a + 1, a + 1] = -s, c
        else:
            m[a, a] = 1.0  # odd d_model: a lone sine has no partner, no rotation can move it
    return m


def rotation_error(d_model: int, k: int, positions: int = 64) -> float:
    """max |M_k·PE(p) − PE(p+k)| over p < positions: ~1e-7 (float32) for even d_model."""
    pe = pe_table(positions + k, d_model)
    moved = pe[:positions] @ rotation_matrix(d_model, k).T
    return float(np.abs(moved - pe[k : k + positions]).max())


def rope_probe(d_k: int, seed: int = 0) -> np.ndarray:
    """A fixed random vector of one head (float64, (d_k,)), used as both query and key below."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(d_k, generator=g, dtype=torch.float64).numpy()


def rope_scores(vector: np.ndarray, query_positions: Sequence[int],
                key_positions: Sequence[int]) -> np.ndarray:
    """(R_i x)·(R_j x)/√d_k for every query position i and key position j: (len(i), len(j)).

    The same content x as query and key, so every difference comes from the positions alone.
    """
    x = torch.as_tensor(np.asarray(vector, dtype=float))
    d_k = x.numel()
    qp, kp = list(query_positions), list(key_positions)
    q = apply_rope(x.expand(len(qp), d_k), qp)  # (Lq, d_k)
    k = apply_rope(x.expand(len(kp), d_k), kp)  # (Lk, d_k)
    return (q @ k.T / math.sqrt(d_k)).numpy()


def rope_offset_scores(d_k: int, starts: Sequence[int] = (0, 10, 25, 50), max_offset: int = 60,
                       seed: int = 0) -> dict[int, np.ndarray]:
    """For each start p: the RoPE score of query position p and key position p + k, k = 0 … max_offset."""
    x = rope_probe(d_k, seed)
    return {int(p): rope_scores(x, [p], range(p, p + max_offset + 1))[0] for p in starts}


def alibi_offset_bias(num_heads: int, head: int, starts: Sequence[int] = (0, 10, 25, 50),
                      max_offset: int = 60) -> dict[int, np.ndarray]:
    """For each start p: ALiBi's bias of head ``head`` (0-based) for query p and key p + k."""
    n = max(starts) + max_offset + 1
    bias = alibi_bias(num_heads, n, n)[head].double().numpy()
    return {int(p): bias[p, p : p + max_offset + 1] for p in starts}


# -- (a) how each scheme reaches the scores ------------------------------------------------------


def random_learned_table(rows: int, d_model: int, seed: int = 0) -> np.ndarray:
    """A learned position table as it starts before training: Glorot-uniform, as every table here."""
    g = torch.Generator().manual_seed(seed)
    bound = math.sqrt(6.0 / (rows + d_model))
    return ((torch.rand(rows, d_model, generator=g, dtype=torch.float64) * 2 - 1) * bound).numpy()


def table_heatmap(table: np.ndarray, *, max_rows: int = MAX_TABLE_ROWS, height: int | None = None,
                  lang: str = "en") -> go.Figure:
    """A learned position table, positions × dimensions; every n-th row when it has more than max_rows."""
    table = np.asarray(table, dtype=float)
    step = max(1, math.ceil(table.shape[0] / max_rows))
    shown = table[::step]
    # a few large entries (BERT's row 0) would wash out the rest: the colours stop at the 99th
    # percentile of |P| (the hover still shows every exact value)
    bound = float(np.quantile(np.abs(table), 0.99)) if table.size else 1.0
    bound = bound or 1.0
    return _position_heatmap(shown.astype(np.float32), x_title=_t("fig.axis.dimension", lang),
                             y_title=_t("fig.axis.position", lang), colorbar="P", zmin=-bound, zmax=bound,
                             hover_x=_t("fig.hover.dim", lang), hover_y=_t("fig.hover.pos", lang),
                             height=height or 440, y=np.arange(0, table.shape[0], step), lang=lang)


def rope_pairs(d_k: int) -> list[int]:
    """A fast, a middle and the slowest pair of a head of size d_k (distinct, valid)."""
    out: list[int] = []
    for i in (0, d_k // 8, d_k // 2 - 1):
        if 0 <= i < d_k // 2 and i not in out:
            out.append(i)
    return out


def rope_rotation_points(d_k: int, pair: int, n_positions: int) -> np.ndarray:
    """Where the unit vector of pair ``pair`` (1 in dim 2i, 0 in 2i+1) lands at each position: (n, 2).

    Computed with core's apply_rope, so it is the rotation the model applies.
    """
    x = torch.zeros(n_positions, d_k, dtype=torch.float64)
    x[:, 2 * pair] = 1.0
    return apply_rope(x)[:, 2 * pair : 2 * pair + 2].numpy()


def rotation_labels(theta: float, n_positions: int) -> list[str]:
    """Position labels for the points of one pair; only the ends when neighbours would overlap."""
    step = 2 * abs(math.sin(theta / 2))  # distance between neighbouring points on the unit circle
    if step >= 0.25:
        return [str(p) for p in range(n_positions)]
    if step * (n_positions - 1) < 0.25:  # all in one spot
        return [f"0–{n_positions - 1}"] + [""] * (n_positions - 1)
    return ["0"] + [""] * (n_positions - 2) + [str(n_positions - 1)]


def rope_rotation_figure(d_k: int, pairs: Sequence[int], n_positions: int = 8, *, height: int | None = None,
                         lang: str = "en") -> go.Figure:
    """One panel per pair: the same 2-D vector at positions 0 … n-1, turned by p·θ_i each time."""
    thetas = rope_angles([1], d_k)[0].numpy()
    titles = [_t("fig.rope.pair_title", lang, i=i, theta=float(thetas[i])) for i in pairs]
    fig = make_subplots(rows=1, cols=len(pairs), subplot_titles=titles, horizontal_spacing=0.06)
    circle = np.linspace(0, 2 * math.pi, 120)
    for c, i in enumerate(pairs, start=1):
        fig.add_trace(go.Scatter(x=np.cos(circle), y=np.sin(circle), mode="lines", hoverinfo="skip",
                                 line={"color": "#bbbbbb", "dash": "dot", "width": 1.5}, showlegend=False),
                      row=1, col=c)
        points = rope_rotation_points(d_k, i, n_positions)
        xs, ys = [], []
        for x, y in points:  # a spoke from the origin to each position's point
            xs += [0.0, float(x), None]
            ys += [0.0, float(y), None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", hoverinfo="skip", showlegend=False,
                                 line={"color": DIM_COLORS[c - 1], "width": 1.5}), row=1, col=c)
        degrees = np.degrees(np.arctan2(points[:, 1], points[:, 0]))
        fig.add_trace(go.Scatter(
            x=points[:, 0], y=points[:, 1], mode="markers+text", showlegend=False,
            text=rotation_labels(float(thetas[i]), n_positions), textposition="top right",
            marker={"color": DIM_COLORS[c - 1], "size": 10},
            customdata=np.column_stack([np.arange(n_positions), degrees]),
            hovertemplate=(f"{_t('fig.hover.position', lang)} %{{customdata[0]}}<br>"
                           f"{_t('fig.hover.angle', lang)} %{{customdata[1]:.1f}}°<extra></extra>"),
        ), row=1, col=c)
        axis = {"range": [-1.35, 1.35], "showticklabels": False, "zeroline": True, "showgrid": False}
        fig.update_xaxes(**axis, row=1, col=c)
        fig.update_yaxes(**axis, scaleanchor=f"x{'' if c == 1 else c}", row=1, col=c)
    _style(fig, height or 380)
    fig.update_layout(margin={"t": 60})
    return fig


def slope_text(m: float) -> str:
    """'1/16' for a power of two, else three digits: how a head's slope is named."""
    inverse = 1.0 / m
    return f"1/{round(inverse)}" if abs(inverse - round(inverse)) < 1e-9 else f"{m:.3g}"


@dataclass(frozen=True)
class AlibiRule:
    """How ALiBi's slopes of ``heads`` heads are made (core.model.positional.alibi_slopes, Press et al.'s
    code).

    A power of two H: the geometric series m_h = 2^(−8h/H). Any other H: the ``low`` = 2^⌊log2 H⌋
    slopes of a ``low``-head model, then every other slope (h = 1, 3, 5, …) of a 2·``low``-head model
    for the H − low heads left.
    """

    heads: int
    low: int  # the largest power of two ≤ heads

    @property
    def power_of_two(self) -> bool:
        return self.heads == self.low


def alibi_rule(num_heads: int) -> AlibiRule:
    return AlibiRule(num_heads, 2 ** int(math.floor(math.log2(num_heads))))


def _heads_range(first: int, last: int) -> str:
    return str(first) if first == last else rf"{first},\dots,{last}"


def alibi_rule_latex(rule: AlibiRule) -> str:
    """The rule of ``rule.heads`` heads as LaTeX: m_h = 2^{-8h/H}; two cases when H is no power of two."""
    H, low = rule.heads, rule.low
    if rule.power_of_two:
        return rf"m_h = 2^{{-8h/H}} = 2^{{-8h/{H}}},\quad h = {_heads_range(1, H)}"
    return (
        rf"m_h = \begin{{cases}} 2^{{-8h/{low}}} & h = {_heads_range(1, low)} \\ "
        rf"2^{{-8(2(h-{low})-1)/{2 * low}}} & h = {_heads_range(low + 1, H)} \end{{cases}}"
    )


def alibi_rule_text(rule: AlibiRule, lang: str = "en") -> str:
    """The rule in words for ``rule.heads`` heads, ending with every slope it gives (core's numbers)."""
    slopes = ", ".join(slope_text(m) for m in alibi_slopes(rule.heads).tolist())
    if rule.power_of_two:
        return _t("alibi.rule.power", lang, H=rule.heads, slopes=slopes)
    first, last = rule.low + 1, rule.heads
    return _t("alibi.rule.other", lang, H=rule.heads, low=rule.low, high=2 * rule.low,
              rest=str(first) if first == last else f"{first}–{last}", slopes=slopes)


def alibi_heads(num_heads: int) -> list[int]:
    """The heads (0-based) the bias panels show: all of up to 4, else first, second, middle, last."""
    if num_heads <= 4:
        return list(range(num_heads))
    return sorted({0, 1, num_heads // 2 - 1, num_heads - 1})


def alibi_heatmaps(num_heads: int, length: int, heads: Sequence[int], *, causal: bool = False,
                   height: int | None = None, lang: str = "en") -> go.Figure:
    """ALiBi's bias, query position × key position, one panel per head (core.alibi_bias's numbers).

    ``causal`` draws the decoder's form; the cells the causal mask hides are left empty.
    """
    bias = alibi_bias(num_heads, length, length, causal=causal).double().numpy()  # (h, L, L)
    slopes = alibi_slopes(num_heads).tolist()
    titles = [_t("fig.alibi.head_title", lang, h=h + 1, m=slope_text(slopes[h])) for h in heads]
    x_title = _t("fig.axis.key_j", lang)
    # one x title under the row (each panel's own overlapped its neighbour's), the slope under the head
    fig = make_subplots(rows=1, cols=len(heads), shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=titles, x_title=x_title)
    lowest = float(bias[list(heads)].min()) if length > 1 else -1.0
    hidden = np.triu(np.ones((length, length), dtype=bool), 1)
    for c, h in enumerate(heads, start=1):
        z = bias[h].copy()
        if causal:
            z[hidden] = np.nan  # the causal mask hides these scores whatever their bias
        fig.add_trace(go.Heatmap(
            z=z, x=np.arange(length), y=np.arange(length), coloraxis="coloraxis",
            hovertemplate=(f"{_t('fig.hover.head', lang, h=h + 1)}<br>{_t('fig.hover.query_i', lang)} %{{y}}"
                           f"<br>{_t('fig.hover.key_j', lang)} %{{x}}<br>{_t('fig.hover.bias', lang)} "
                           "%{z:.4f}<extra></extra>"),
        ), row=1, col=c)
        fig.update_xaxes(showgrid=False, row=1, col=c)
    fig.update_yaxes(title=_t("fig.axis.query_i", lang), autorange="reversed", showgrid=False, row=1, col=1)
    fig.update_yaxes(autorange="reversed", showgrid=False)
    # the colour bar's title upright beside it: written across, it took a third of the width
    fig.update_layout(coloraxis={"colorscale": "Blues_r", "cmin": min(lowest, -1e-9), "cmax": 0.0,
                                 "colorbar": {"title": {"text": _t("fig.bias", lang), "side": "right"}}})
    _style(fig, height or 400)
    # the panel titles take two lines; the x title (an annotation, which plotly does not make room
    # for) sits 30 px under the plot, below the tick labels
    fig.update_layout(margin={"t": 80, "b": 80})
    fig.update_annotations(font_size=BASE_FONT_SIZE)  # the panel titles (plotly: 16 px)
    fig.update_annotations(selector={"text": x_title}, font_size=round(1.2 * BASE_FONT_SIZE))  # as axes
    return fig


# -- (c) past the training length ----------------------------------------------------------------


def beyond_figure(x: np.ndarray, curves: Mapping[str, np.ndarray], *, trained_len: int, y_title: str,
                  example: bool = False, no_rows_from: int | None = None, y_range=None,
                  label_at: str = "top left", height: int | None = None, lang: str = "en") -> go.Figure:
    """Lines over positions (or distances) x, the first ``trained_len`` shaded as seen in training.

    ``no_rows_from`` (learned positions): from there on the scheme has no value at all (red).
    """
    fig = go.Figure()
    for n, (name, y) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(
            x=x, y=np.asarray(y, dtype=float), mode="lines", name=escape_label(name),
            line={"color": DIM_COLORS[n % len(DIM_COLORS)], "width": 2.5},
            hovertemplate=f"{escape_label(name)}<br>%{{x}}<br>%{{y:.4f}}<extra></extra>",
        ))
    _shade_training(fig, trained_len, lang, example=example, where=label_at)
    if no_rows_from is not None:
        fig.add_vrect(x0=no_rows_from - 0.5, x1=float(x[-1]) + 0.5, fillcolor=MISSING_COLOR, opacity=0.12,
                      line_width=0, annotation_text=_t("fig.no_rows", lang, n=no_rows_from),
                      annotation_position="top right", annotation=LABEL_BOX)
    fig.update_xaxes(range=[-0.5, float(x[-1]) + 0.5])
    fig.update_yaxes(title=escape_label(y_title), range=y_range)
    _style(fig, height or 420)
    _legend_on_top(fig, 90)
    return fig


def beyond_sinusoidal(d_model: int, trained_len: int, n_positions: int, *, example: bool = False,
                      lang: str = "en") -> go.Figure:
    """PE of a fast, a middle and a slow dimension: the formula goes on past the training length."""
    pe = pe_table(n_positions, d_model)
    dims = [d for d in default_dims(d_model) if d != 1][:3]
    curves = {dim_label(dim, d_model, lang): pe[:, dim] for dim in dims}
    fig = beyond_figure(np.arange(n_positions), curves, trained_len=trained_len, y_title="PE(pos, dim)",
                        example=example, y_range=[-1.15, 1.15], lang=lang)
    fig.update_xaxes(title=_t("fig.axis.pos", lang))
    return fig


def rope_turns(d_k: int, pairs: Sequence[int], n_positions: int) -> dict[int, np.ndarray]:
    """The angle p·θ_i modulo 2π of each pair, positions 0 … n-1 (core.rope_angles)."""
    angles = rope_angles(n_positions, d_k).numpy()
    return {int(i): np.mod(angles[:, i], 2 * math.pi) for i in pairs}


def rope_beyond_pairs(d_k: int, trained_len: int) -> tuple[list[int], int | None]:
    """Pairs to show past the training length L: the fastest, the slowest pair that turns once
    within L (it has shown every angle), and the fastest that does not (-> also returned).
    """
    periods = 2 * math.pi / rope_angles([1], d_k)[0].numpy()
    within = [i for i, T in enumerate(periods) if T <= trained_len]
    beyond = [i for i, T in enumerate(periods) if T > trained_len]
    pairs = [0] if len(periods) else []
    if within and within[-1] not in pairs:
        pairs.append(within[-1])
    slow = beyond[0] if beyond else None
    if slow is not None and slow not in pairs:
        pairs.append(slow)
    return pairs, slow


def beyond_rope(d_k: int, trained_len: int, n_positions: int, *, example: bool = False,
                lang: str = "en") -> go.Figure:
    """Each pair's angle (mod 2π). A pair that turned once within the training length has shown every
    angle; a slower pair has not: past the training length it climbs above the highest angle seen
    (dotted line)."""
    pairs, slow = rope_beyond_pairs(d_k, trained_len)
    turns = rope_turns(d_k, pairs, n_positions)
    thetas = rope_angles([1], d_k)[0].numpy()
    curves = {_t("fig.rope.turn_name", lang, i=i, period=2 * math.pi / float(thetas[i])): turns[i]
              for i in pairs}
    fig = beyond_figure(np.arange(n_positions), curves, trained_len=trained_len,
                        y_title=_t("fig.rope.angle_axis", lang), example=example,
                        y_range=[0, 2 * math.pi * 1.05], lang=lang)
    if slow is not None:
        highest = float(turns[slow][: trained_len].max())
        fig.add_hline(y=highest, line_dash="dot", line_color=DIM_COLORS[pairs.index(slow)],
                      annotation_text=_t("fig.rope.highest", lang, i=slow), annotation_position="top right",
                      annotation=LABEL_BOX)
    fig.update_xaxes(title=_t("fig.axis.pos", lang))
    return fig


def beyond_alibi(num_heads: int, trained_len: int, n_distances: int, *, example: bool = False,
                 lang: str = "en") -> go.Figure:
    """-m_h·k against the distance k for every head (at most 8): straight lines that just go on."""
    slopes = alibi_slopes(num_heads).tolist()
    heads = range(num_heads) if num_heads <= 8 else np.linspace(0, num_heads - 1, 8).round().astype(int)
    k = np.arange(n_distances)
    curves = {_t("fig.alibi.line_name", lang, h=h + 1, m=slope_text(slopes[h])): -slopes[h] * k
              for h in dict.fromkeys(int(h) for h in heads)}
    fig = beyond_figure(k, curves, trained_len=trained_len, y_title=_t("fig.bias", lang), example=example,
                        label_at="bottom left", lang=lang)
    fig.update_xaxes(title=_t("fig.axis.distance", lang))
    return fig


def beyond_learned(table: np.ndarray, n_positions: int, *, trained_len: int | None = None,
                   lang: str = "en") -> go.Figure:
    """Three dimensions of a learned table over its rows, then nothing: no row past max_len.

    ``trained_len``: the positions training reached, when known and fewer than the rows (a language
    model trained on windows shorter than its table); otherwise every row is shaded as seen."""
    table = np.asarray(table, dtype=float)
    rows, d = table.shape
    dims = [d for d in default_dims(d) if d != 1][:3]
    x = np.arange(max(n_positions, rows + 1))
    curves = {}
    for dim in dims:
        y = np.full(len(x), np.nan)
        y[:rows] = table[:, dim]
        curves[_t("fig.learned.dim_name", lang, dim=dim)] = y
    seen = min(trained_len, rows) if trained_len else rows
    fig = beyond_figure(x, curves, trained_len=seen, y_title="P[pos, dim]", no_rows_from=rows, lang=lang)
    fig.update_xaxes(title=_t("fig.axis.pos", lang))
    return fig


# -- section 4: the encoder input ----------------------------------------------------------------


def sum_heatmaps(scaled: np.ndarray, pe: np.ndarray, embedded: np.ndarray, tokens: Sequence[str],
                 *, titles: Sequence[str] | None = None, height: int | None = None,
                 lang: str = "en") -> go.Figure:
    """E[id]·√d, PE(pos) and their sum, tokens × dimensions, on one shared colour scale.

    With many tokens only every n-th is labelled on the axis (the hover names each) and the height
    is capped, so 512 tokens stay one screen.
    """
    parts = [np.asarray(a, dtype=float) for a in (scaled, pe, embedded)]
    S, d = parts[0].shape
    titles = tuple(titles) if titles else (f"E[id]·√{d}", "PE(pos)", _t("fig.sum.input", lang))
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=[escape_label(x) for x in titles])
    bound = max(float(np.abs(a).max()) for a in parts) if S else 1.0
    # the rows are named by their tokens (a category axis): the hover reads %{y}, no per-cell
    # customdata (which was S × d strings a panel: ~1 MB of chart at d_model=512)
    ylabels = [f"{escape_label(t)} ·{i}" for i, t in enumerate(tokens)]
    for c, (name, z) in enumerate(zip(titles, parts, strict=True), start=1):
        fig.add_trace(go.Heatmap(
            z=z, x=np.arange(d), y=ylabels, coloraxis="coloraxis",
            hovertemplate=f"{escape_label(name)}<br>{_t('fig.hover.token', lang)} %{{y}}<br>"
                          f"{_t('fig.hover.dim', lang)} %{{x}}<br>{_t('fig.value', lang)} %{{z:.4f}}"
                          "<extra></extra>",
        ), row=1, col=c)
        fig.update_xaxes(title=_t("fig.axis.dimension", lang), showgrid=False, nticks=6, row=1, col=c)
    step = max(1, math.ceil(S / MAX_TICKS))
    ticks = list(range(0, S, step))
    fig.update_yaxes(type="category", tickmode="array", tickvals=[ylabels[i] for i in ticks],
                     ticktext=[token_label(tokens[i]) for i in ticks], autorange="reversed", showgrid=False)
    fig.update_layout(coloraxis={"colorscale": SIGNED_SCALE, "cmin": -bound, "cmax": bound, "cmid": 0.0,
                                 "colorbar": {"title": {"text": _t("fig.value", lang)},
                                              "tickfont": {"size": 16}}})
    _style(fig, height or min(900, max(300, 120 + 28 * S)))
    fig.update_layout(margin={"t": 60})
    return fig


def training_length(task: str, metrics: dict | None = None) -> int | None:
    """How many positions a model trained on ``task`` saw in training, if known; None when it learned
    no task ("": random weights, or a pretrained encoder whose training is not ours to know).

    A checkpoint may record it in its metrics (``max_src_len`` / ``max_tgt_len``; a language model of
    core/training/language.py its ``context``, the window of tokens it was trained on); otherwise its
    task's limit is used: the pinyin phrases' (core.training.pairs.PINYIN_MAX_LEN characters) or the
    toy digit sequences' (TOY_MAX_LEN digits); the decoder reads [BOS] + one token per input token,
    one more.
    """
    if not task:
        return None
    metrics = metrics or {}
    known = [metrics.get(k) for k in ("max_src_len", "max_tgt_len", "max_len_seen", "context")]
    known = [int(v) for v in known if isinstance(v, int | float) and v > 0]
    if known:
        return max(known)
    from core.training.pairs import PINYIN_MAX_LEN, TOY_MAX_LEN

    return (TOY_MAX_LEN if task in ("copy", "reverse") else PINYIN_MAX_LEN) + 1


# -- the curves' widgets: their limits (ui.page.widgets.check_dims / check_max_pos check URL values) -----

MAX_DIMS_SHOWN = 8
MAX_POS_RANGE = (16, 2048)
DEFAULT_MAX_POS = 128
