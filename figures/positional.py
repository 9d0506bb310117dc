"""Positional encoding: sinusoid curves, the position × dimension table, and why offsets are linear.

Pure functions, no Streamlit. The table comes from ``core.positional.sinusoidal_encoding``, the same
function the model uses, so what is drawn is what the model adds.

    PE(pos, 2i)   = sin(pos · ω_i)      ω_i = 1 / 10000^(2i / d_model)
    PE(pos, 2i+1) = cos(pos · ω_i)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.positional import sinusoidal_encoding
from figures.style import SIGNED_SCALE, apply_style, escape_label, token_label
from ui.settings import literal  # URL values in notices (Markdown): inert inside a code span

DIM_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf")


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


def dim_label(dim: int, d_model: int) -> str:
    """'dim 6 (sin, period 15.2)': the kind and the wavelength of one dimension."""
    kind = "sin" if dim % 2 == 0 else "cos"
    return f"dim {dim} ({kind}, period {period(dim, d_model):,.1f})"


def default_dims(d_model: int) -> list[int]:
    """A fast, a middle and a slow pair of dimensions, all valid for this d_model."""
    picks = [0, 1, d_model // 8, d_model // 2]
    out: list[int] = []
    for p in picks:
        if 0 <= p < d_model and p not in out:
            out.append(p)
    return out


def pe_curves(d_model: int, dims: Sequence[int], max_pos: int, *, trained_len: int | None = None,
              sentence_len: int | None = None, height: int | None = None) -> go.Figure:
    """PE(pos, dim) against pos = 0 … max_pos - 1, one line per chosen dimension.

    ``trained_len`` shades the positions the trained model saw during training; ``sentence_len``
    marks the positions of the current sentence.
    """
    pe = pe_table(max_pos, d_model)
    pos = np.arange(max_pos)
    fig = go.Figure()
    for n, dim in enumerate(dims):
        name = dim_label(dim, d_model)
        fig.add_trace(go.Scatter(
            x=pos, y=pe[:, dim], mode="lines", name=name,
            line={"color": DIM_COLORS[n % len(DIM_COLORS)], "width": 2.5},
            hovertemplate=f"{name}<br>pos %{{x}}<br>PE %{{y:.4f}}<extra></extra>",
        ))
    if trained_len:
        fig.add_vrect(x0=-0.5, x1=trained_len - 0.5, fillcolor="#2ca02c", opacity=0.12, line_width=0,
                      annotation_text=f"seen in training (0–{trained_len - 1})",
                      annotation_position="top left")
    if sentence_len:
        fig.add_vline(x=sentence_len - 0.5, line_dash="dot", line_color="#555555",
                      annotation_text=f"end of this sentence ({sentence_len} tokens)",
                      annotation_position="bottom right")
    fig.update_xaxes(title="position pos", range=[-0.5, max_pos - 0.5])
    fig.update_yaxes(title="PE(pos, dim)", range=[-1.15, 1.15])
    apply_style(fig, height=height or 400)
    fig.update_layout(legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
                      margin={"t": 80})
    return fig


def _position_heatmap(z: np.ndarray, *, x_title: str, y_title: str, colorbar: str, zmin: float, zmax: float,
                      hover_x: str, hover_y: str, height: int) -> go.Figure:
    fig = go.Figure(go.Heatmap(
        z=z,
        x=np.arange(z.shape[1]),
        y=np.arange(z.shape[0]),
        colorscale=SIGNED_SCALE,
        zmin=zmin,
        zmax=zmax,
        zmid=0.0,
        colorbar={"title": {"text": colorbar}},
        hovertemplate=f"{hover_y} %{{y}}<br>{hover_x} %{{x}}<br>value %{{z:.4f}}<extra></extra>",
    ))
    fig.update_xaxes(title=x_title, side="top", showgrid=False)
    fig.update_yaxes(title=y_title, autorange="reversed", showgrid=False)
    return apply_style(fig, height=height)


def pe_heatmap(pe: np.ndarray, *, height: int | None = None) -> go.Figure:
    """Positions (rows) × dimensions (columns) of the table: fast stripes left, slow ones right."""
    return _position_heatmap(np.asarray(pe, dtype=float), x_title="dimension", y_title="position",
                             colorbar="PE", zmin=-1.0, zmax=1.0, hover_x="dim", hover_y="pos",
                             height=height or 440)


def pe_gram(pe: np.ndarray) -> np.ndarray:
    """PE·PEᵀ: entry (p, q) = Σ_i cos((p − q)·ω_i) for even d_model, a function of p − q only."""
    pe = np.asarray(pe, dtype=float)
    return pe @ pe.T


def gram_heatmap(pe: np.ndarray, *, height: int | None = None) -> go.Figure:
    """PE·PEᵀ over positions: constant along every diagonal (Toeplitz), peak d/2 on the main one."""
    gram = pe_gram(pe)
    d = pe.shape[1]
    bound = d / 2 if d else 1.0
    return _position_heatmap(gram, x_title="position q", y_title="position p", colorbar="dot",
                             zmin=-bound, zmax=bound, hover_x="q", hover_y="p", height=height or 440)


def offset_dots(pe: np.ndarray, starts: Sequence[int], max_offset: int) -> dict[int, np.ndarray]:
    """For each start p: the dot products PE(p)·PE(p+k) for k = 0 … max_offset (needs enough rows)."""
    pe = np.asarray(pe, dtype=float)
    out = {}
    for p in starts:
        rows = pe[p : p + max_offset + 1]
        out[int(p)] = rows @ pe[p]
    return out


def offset_dot_curves(d_model: int, starts: Sequence[int] = (0, 10, 25, 50), max_offset: int = 60, *,
                      height: int | None = None) -> go.Figure:
    """PE(p)·PE(p+k) against k for several p: the curves lie on top of each other."""
    pe = pe_table(max(starts) + max_offset + 1, d_model)
    dots = offset_dots(pe, starts, max_offset)
    k = np.arange(max_offset + 1)
    fig = go.Figure()
    widths = np.linspace(9, 2.5, len(starts))  # wide first, narrow last: exact overlap stays visible
    for n, (p, values) in enumerate(dots.items()):
        fig.add_trace(go.Scatter(
            x=k, y=values, mode="lines", name=f"p = {p}",
            line={"color": DIM_COLORS[n % len(DIM_COLORS)], "width": float(widths[n])},
            opacity=0.85,
            hovertemplate=f"p = {p}<br>k %{{x}}<br>PE(p)·PE(p+k) %{{y:.6f}}<extra></extra>",
        ))
    fig.update_xaxes(title="offset k")
    fig.update_yaxes(title="PE(p)·PE(p+k)")
    apply_style(fig, height=height or 440)
    fig.update_layout(legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0},
                      margin={"t": 70})
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


def sum_heatmaps(scaled: np.ndarray, pe: np.ndarray, embedded: np.ndarray, tokens: Sequence[str],
                 *, height: int | None = None) -> go.Figure:
    """E[id]·√d, PE(pos) and their sum, tokens × dimensions, on one shared colour scale."""
    parts = [np.asarray(a, dtype=float) for a in (scaled, pe, embedded)]
    S, d = parts[0].shape
    titles = (f"E[id]·√{d}", "PE(pos)", "sum = encoder input")
    fig = make_subplots(rows=1, cols=3, shared_yaxes=True, horizontal_spacing=0.03,
                        subplot_titles=titles)
    bound = max(float(np.abs(a).max()) for a in parts) if S else 1.0
    ylabels = [f"{escape_label(t)} ·{i}" for i, t in enumerate(tokens)]
    custom = np.array([[y] * d for y in ylabels], dtype=object) if S else None
    for c, (name, z) in enumerate(zip(titles, parts, strict=True), start=1):
        fig.add_trace(go.Heatmap(
            z=z, x=np.arange(d), y=np.arange(S), coloraxis="coloraxis", customdata=custom,
            hovertemplate=f"{escape_label(name)}<br>token %{{customdata}}<br>dim %{{x}}<br>"
                          "value %{z:.4f}<extra></extra>",
        ), row=1, col=c)
        fig.update_xaxes(title="dimension", showgrid=False, nticks=6, row=1, col=c)
    fig.update_yaxes(tickmode="array", tickvals=list(range(S)), ticktext=[token_label(t) for t in tokens],
                     autorange="reversed", showgrid=False)
    fig.update_layout(coloraxis={"colorscale": SIGNED_SCALE, "cmin": -bound, "cmax": bound, "cmid": 0.0,
                                 "colorbar": {"title": {"text": "value"},
                                              "tickfont": {"size": 16}}})
    apply_style(fig, height=height or max(300, 120 + 28 * S))
    fig.update_layout(margin={"t": 60})
    return fig


def training_length(kind: str, metrics: dict | None) -> int | None:
    """How many positions the trained model saw in training, if known; None for random weights.

    A checkpoint may record it in its metrics (``max_src_len`` / ``max_tgt_len``); otherwise the
    pinyin task's phrase limit is used (core.data.PINYIN_MAX_LEN characters; the decoder reads
    [BOS] + one syllable per character, one position more).
    """
    if kind != "trained":
        return None
    metrics = metrics or {}
    known = [metrics.get(k) for k in ("max_src_len", "max_tgt_len", "max_len_seen")]
    known = [int(v) for v in known if isinstance(v, int | float) and v > 0]
    if known:
        return max(known)
    from core.data import PINYIN_MAX_LEN

    return PINYIN_MAX_LEN + 1


# -- validating the page's URL parameters (plain strings in, no Streamlit) -------------------------

MAX_DIMS_SHOWN = 8
MAX_POS_RANGE = (16, 2048)
DEFAULT_MAX_POS = 128


def _shorten(values: Sequence[str], limit: int = 40) -> str:
    return ", ".join(literal(v, limit) for v in values[:5]) + (", …" if len(values) > 5 else "")


def check_dims(raw: Sequence[str], d_model: int) -> tuple[list[int], str | None]:
    """``?pe_dims=…`` values -> (dimensions to show, notice or None).

    Accepted exactly as Streamlit's bound multiselect accepts them: the decimal text of a dimension
    0 … d_model − 1, duplicates dropped, at most MAX_DIMS_SHOWN. Nothing valid -> the defaults.
    """
    options = {str(j): j for j in range(d_model)}
    valid: list[int] = []
    bad: list[str] = []
    for value in raw:
        if value in options:
            if options[value] not in valid:
                valid.append(options[value])
        else:
            bad.append(value)
    notice = None
    if len(valid) > MAX_DIMS_SHOWN:
        notice = f"pe_dims had {len(valid)} dimensions; only the first {MAX_DIMS_SHOWN} are shown."
        valid = valid[:MAX_DIMS_SHOWN]
    if bad:
        using = valid or default_dims(d_model)
        notice = (f"Ignored pe_dims={_shorten(bad)} (a dimension must be a whole number from 0 to "
                  f"{d_model - 1}); showing dimensions {using}.")
    return (valid or default_dims(d_model)), notice


def check_max_pos(raw: str | None) -> tuple[int, str | None]:
    """``?pe_max_pos=…`` -> (number of positions to draw, notice or None); bad values -> the default."""
    if raw is None:
        return DEFAULT_MAX_POS, None
    lo, hi = MAX_POS_RANGE
    text = str(raw).strip()
    if text.isascii() and text.isdigit() and lo <= int(text) <= hi:
        return int(text), None
    return DEFAULT_MAX_POS, (f"Ignored pe_max_pos={literal(text)} (must be a whole number from {lo} to "
                             f"{hi}); using {DEFAULT_MAX_POS}.")
