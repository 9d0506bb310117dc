"""The builders every figure module shares: a figure from plain dicts, axes, hovers, blocks, one matrix.

Pure: plain dicts and numpy arrays -> ``go.Figure``; no Streamlit.

Figures are built from plain dicts on a copy of ``apply_style``'s layout, without plotly's
per-property validation (it walks every value of every figure, and a page draws many a rerun); the
tests build every figure once with ``VALIDATE = True``, which catches any misspelt property.

Heatmap axes that carry tokens are categories named ``token·index`` with the plain tokens as tick
text; matrices are sent as float32. In a matrix of more than MAX_CELLS cells, an axis longer than
POOL_MAX is shown as blocks of f = ⌈n / POOL_MAX⌉ neighbouring positions, each cell its block's mean
(weights: the largest value, so one sharp weight is not averaged away).
Decisions: docs/decisions.md, figures/drawing/toolbox.py.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from figures.drawing.style import (
    SIGNED_SCALE,
    TITLE_FONT_SIZE,
    apply_style,
    escape_label,
    fit_tick_fonts,
    reserve_margins,
    token_label,
    unique_labels,
)
from i18n import t

VALUE_FORMAT = ".7g"  # float32 has about 7 significant digits: the hover shows all of them
CELL_FONT_SIZE = 15
ANNOTATE_MAX = 12  # write the values into the cells only up to 12 × 12: beyond, hover and colour
POOL_MAX = 128  # a big matrix's axes longer than this are drawn as blocks (an overview): 512² cells are 1 MB
MAX_CELLS = 65_536  # ... a matrix is big beyond this many cells (256 kB of float32)
MAX_TICKS = 40  # more tick labels than this would overlap: every n-th is written, the hover names all


def as_numpy(x) -> np.ndarray:
    """A (detached, CPU) tensor, or anything array-like, as a numpy array of its own dtype."""
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


# -- building figures from plain dicts -------------------------------------------------------------

VALIDATE = False  # plotly's per-property validation: on in the tests (tests/figures/conftest.py)


@functools.lru_cache(maxsize=1)
def _base_layout() -> dict:
    """apply_style's layout (font, hoverlabel, margin, grid), with an explicitly empty template:
    without one plotly would apply its default template, the copy this module avoids."""
    layout = apply_style(go.Figure()).layout.to_plotly_json()
    layout["template"] = {}
    return layout


@functools.lru_cache(maxsize=16)
def _scale(name: str) -> list:
    """A named colour scale as explicit stops: plotly.js has its own, different "Blues" (dark to light)
    and no "RdBu_r"; only validation would have translated the name."""
    return get_colorscale(name)


def _styled_axis(axis: dict) -> dict:
    """apply_style's look; margins that grow to fit the labels, for an axis that writes any (an
    unlabelled one would still push the margin by a few px, and cost plotly a second drawing)."""
    styled = {**_base_layout()["xaxis"], **axis}
    if axis.get("showticklabels") is False and not axis.get("title"):
        styled["automargin"] = False
    return styled


def build_figure(
    traces: list[dict], layout: dict, title: str | None = None, title_size: int = TITLE_FONT_SIZE
) -> go.Figure:
    for trace in traces:
        if isinstance(trace.get("colorscale"), str):
            trace["colorscale"] = _scale(trace["colorscale"])
    base = dict(_base_layout())  # top-level keys are replaced, never mutated: a shallow copy is enough
    if title is not None:
        base["title"] = {
            "text": escape_label(title),
            "font": {"size": title_size},
            "x": 0.02,
            "y": 0.985,
            "yanchor": "top",
        }
    layout = {k: _styled_axis(v) if k.startswith(("xaxis", "yaxis")) else v for k, v in layout.items()}
    for name, update in fit_tick_fonts({**base, **layout}, traces).items():
        layout[name] = {**layout[name], **update}
    layout["margin"] = reserve_margins({**base, **layout}, traces)  # the title takes room too
    base.update(layout)
    fig = go.Figure(data=traces, layout=base, _validate=VALIDATE)
    fig._margins_reserved = True  # ui.show_figure need not measure again
    return fig


class FigureParts(NamedTuple):
    data: list[dict]  # one dict per trace
    layout: dict
    frames: list[dict]  # one dict per animation frame


def figure_parts(fig: go.Figure) -> FigureParts:
    """plotly.py's own dicts behind ``fig.data``, ``fig.layout`` and ``fig.frames``: the very objects
    ``fig.to_json()`` serialises, not copies; changing them changes the figure.

    The one place that reads plotly's private attributes (``_data``, ``_layout``, ``_frame_objs``,
    ``_props``). The public ways cost what the callers are there to save: ``fig.to_dict()`` deep-copies
    every array, and ``fig.data`` / ``fig.layout`` wrap each dict in objects that validate every value
    again when it is set. ``figures.drawing.redraw.draw_once`` rewrites a finished figure in place and
    ``ui.caches.budget`` measures the memory a cached one holds, for every chart of every rerun.
    """
    return FigureParts(fig._data, fig._layout, [frame._props for frame in fig._frame_objs])


# -- axes and hovers -------------------------------------------------------------------------------


def domains(n: int, gap: float) -> list[tuple[float, float]]:
    """n equal intervals of [0, 1] with ``gap`` between neighbours."""
    size = (1 - gap * (n - 1)) / n if n else 1
    return [(i * (size + gap), i * (size + gap) + size) for i in range(n)]


def token_axis(
    tokens: Sequence[str], title: str = "", *, max_ticks: int | None = None, **kw
) -> tuple[list[str], dict]:
    """(category values ``token·i``, axis dict with the plain tokens as tick text).

    ``max_ticks``: with more tokens than this, only every n-th token is written on the axis (the
    hover still names every one).
    """
    values = unique_labels(tokens)
    every = math.ceil(len(values) / max_ticks) if max_ticks and len(values) > max_ticks else 1
    axis = {
        "type": "category",
        "tickmode": "array",
        "tickvals": values[::every],
        "ticktext": [token_label(tok) for tok in list(tokens)[::every]],
        "showgrid": False,
        **kw,
    }
    if title:
        axis["title"] = {"text": escape_label(title)}
    return values, axis


def dim_axis(n: int, title: str = "", **kw) -> tuple[list[int], dict]:
    axis = {"showgrid": False, "tickmode": "auto", "nticks": 8, "zeroline": False, **kw}
    if title:
        axis["title"] = {"text": escape_label(title)}
    return list(range(n)), axis


def heatmap_on_axes(n: int, z, xs, ys, **style) -> dict:
    """A heatmap trace on the ``n``-th pair of axes of a figure of small multiples (from 0: ``x``/``y``,
    then ``x2``/``y2`` …), ``style`` (colour scale, hover …) after its data."""
    suffix = "" if n == 0 else str(n + 1)
    axes = {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}
    return {"type": "heatmap", "z": z, "x": xs, "y": ys, **axes, **style}


def hover_template(*lines: str, value: str = "value", var: str = "z") -> str:
    return "<br>".join(lines) + f"<br>{value}: %{{{var}:{VALUE_FORMAT}}}<extra></extra>"


# -- long sequences: blocks of neighbouring positions ----------------------------------------------


def pool_factor(n: int, limit: int = POOL_MAX) -> int:
    """How many neighbouring positions one cell stands for when an axis of ``n`` is drawn: 1 up to ``limit``.

    >>> pool_factor(512), pool_factor(128), pool_factor(129)
    (4, 1, 2)
    """
    return max(1, math.ceil(n / limit))


def block_reduce(z: np.ndarray, f_rows: int, f_cols: int, how: str = "mean") -> np.ndarray:
    """(R, C) -> (⌈R/f_rows⌉, ⌈C/f_cols⌉): the mean (or max) of each block; the last block may be smaller.

    >>> block_reduce(np.arange(6.0).reshape(2, 3), 1, 2, "max").tolist()
    [[1.0, 2.0], [4.0, 5.0]]
    """
    z = np.asarray(z, dtype=np.float32)
    if f_rows == f_cols == 1:
        return z
    r, c = z.shape
    rb, cb = math.ceil(r / f_rows), math.ceil(c / f_cols)
    padded = np.full((rb * f_rows, cb * f_cols), np.nan, dtype=np.float32)  # NaN: ignored by nanmean
    padded[:r, :c] = z
    blocks = padded.reshape(rb, f_rows, cb, f_cols)
    reduce = np.nanmax if how == "max" else np.nanmean
    return reduce(blocks, axis=(1, 3)).astype(np.float32)


def block_axis(
    labels: Sequence[str] | int, f: int, title: str = "", max_ticks: int = MAX_TICKS, **kw
) -> tuple[list[str], dict]:
    """Category values for blocks of ``f`` positions: ``first token…·a–b`` (tokens) or ``a–b`` (dims)."""
    n = labels if isinstance(labels, int) else len(labels)
    starts = list(range(0, n, f))
    spans = [(a, min(a + f, n) - 1) for a in starts]
    if isinstance(labels, int):
        values = [f"{a}–{b}" for a, b in spans]
        axis = {"type": "category", "showgrid": False, "tickmode": "auto", "nticks": 8, **kw}
    else:
        values = [f"{token_label(labels[a])}…·{a}–{b}" for a, b in spans]
        every = math.ceil(len(values) / max_ticks) if len(values) > max_ticks else 1
        axis = {
            "type": "category",
            "tickmode": "array",
            "tickvals": values[::every],
            "ticktext": [token_label(labels[a]) for a, _ in spans][::every],
            "showgrid": False,
            **kw,
        }
    if title:
        axis["title"] = {"text": escape_label(title)}
    return values, axis


# -- one matrix ------------------------------------------------------------------------------------


def _matrix_axis(labels, factor: int, title: str):
    """One axis of a matrix figure: blocks of ``factor`` positions, numbered dimensions (``labels`` an
    int) or tokens."""
    if factor > 1:
        return block_axis(labels, factor, title)
    if isinstance(labels, int):
        return dim_axis(labels, title)
    return token_axis(labels, title, max_ticks=MAX_TICKS)


def _matrix_cells(z, n_rows: int, n_cols: int, pool: str, lang: str) -> tuple[np.ndarray, int, int, str]:
    """(cells to draw, rows per cell, columns per cell, the hover's name of a cell's value): every
    cell its own up to MAX_CELLS cells, beyond that the axes longer than POOL_MAX in blocks."""
    z = np.asarray(z, dtype=np.float32)
    if z.shape != (n_rows, n_cols):
        raise ValueError(f"z has shape {z.shape}, labels need ({n_rows}, {n_cols})")
    big = n_rows * n_cols > MAX_CELLS  # up to 256 kB of float32 a matrix is sent whole, cell for cell
    f_rows, f_cols = (pool_factor(n_rows), pool_factor(n_cols)) if big else (1, 1)
    if f_rows > 1 or f_cols > 1:
        return block_reduce(z, f_rows, f_cols, pool), f_rows, f_cols, t(f"attention.hover.block_{pool}", lang)
    return z, f_rows, f_cols, t("attention.hover.value", lang)


def matrix_figure(
    z,
    rows: Sequence[str] | int,
    cols: Sequence[str] | int,
    *,
    title: str,
    row_title: str,
    col_title: str,
    colorscale=SIGNED_SCALE,
    zmin: float | None = None,
    zmax: float | None = None,
    colorbar_title: str = "",
    height: int | None = None,
    text_format: str = ".2f",
    pool: str = "mean",
    lang: str = "en",
) -> go.Figure:
    """A matrix as a heatmap, first row on top. ``rows``/``cols``: tokens, or a number of dimensions.

    Values are written into the cells when the matrix is at most ANNOTATE_MAX × ANNOTATE_MAX; the
    hover always gives the exact value. A signed scale is centred on 0. In a matrix of more than
    MAX_CELLS cells, an axis longer than POOL_MAX is drawn in blocks (``pool``: "mean" or "max" of
    each block), and the hover says so.
    """
    n_rows = rows if isinstance(rows, int) else len(rows)
    n_cols = cols if isinstance(cols, int) else len(cols)
    z, f_rows, f_cols, value_name = _matrix_cells(z, n_rows, n_cols, pool, lang)
    ys, y_axis = _matrix_axis(rows, f_rows, row_title)
    xs, x_axis = _matrix_axis(cols, f_cols, col_title)
    if colorscale == SIGNED_SCALE and zmin is None and zmax is None:
        top = float(np.abs(z).max()) if z.size else 0.0
        zmin, zmax = -(top or 1.0), top or 1.0
    trace = _matrix_trace(z, xs, ys, colorscale, zmin, zmax, colorbar_title, row_title, col_title, value_name)
    if z.shape[0] <= ANNOTATE_MAX and z.shape[1] <= ANNOTATE_MAX:  # small: the values in the cells
        trace.update(texttemplate=f"%{{z:{text_format}}}", textfont={"size": CELL_FONT_SIZE}, xgap=1, ygap=1)
    if height is None:
        height = int(min(520, max(260, 130 + 26 * len(ys))))
    return build_figure(
        [trace],
        {
            "meta": {"pooled": [f_rows, f_cols]},
            "height": height,
            "xaxis": {**x_axis, "side": "top"},
            "yaxis": {**y_axis, "autorange": "reversed"},
            "margin": {"l": 10, "r": 10, "t": 110, "b": 10},
        },
        title=title,
    )


def _matrix_trace(
    z: np.ndarray, xs, ys, colorscale, zmin, zmax, colorbar_title: str, row_title: str, col_title: str,
    value_name: str,
) -> dict:
    """The matrix's heatmap trace; its hover names the row, the column and the cell's value."""
    return {
        "type": "heatmap",
        "z": z,
        "x": xs,
        "y": ys,
        "colorscale": colorscale,
        "zmin": zmin,
        "zmax": zmax,
        "colorbar": {"title": {"text": escape_label(colorbar_title)}, "thickness": 14},
        "hovertemplate": hover_template(
            f"{escape_label(row_title)}: %{{y}}",
            f"{escape_label(col_title)}: %{{x}}",
            value=escape_label(value_name),
        ),
    }


def is_pooled(fig: go.Figure) -> bool:
    """Is this matrix figure an overview of blocks (not every cell its own)?"""
    meta = fig.layout.meta
    return isinstance(meta, dict) and max(meta.get("pooled", [1])) > 1


def annotated_columns(fig: go.Figure) -> int:
    """The number of columns of a matrix figure whose values are written in its cells, else 0."""
    trace = fig.data[0]
    return len(trace.x) if trace.texttemplate else 0
