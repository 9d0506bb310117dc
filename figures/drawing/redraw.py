"""One drawing per chart per rerun: a figure shaped so that plotly.js can tell a copy of it is the same.

Streamlit draws a changed chart with ``Plotly.newPlot`` and, right after, hands plotly a deep copy of
the very same figure (``Plotly.react``): anything plotly.js cannot compare by value counts as changed
and makes it draw the whole chart a second time. :func:`draw_once` changes a finished figure, in
place, so the copy compares equal: what is drawn is the same, and the react on the copy is a
comparison instead of a full drawing (benchmarks/redraw.py measures it).

Pure plotly and numpy, no Streamlit: ``ui.show_figure`` calls it for every chart drawn in our style.
What plotly.js cannot compare, item by item: docs/decisions.md, figures/drawing/redraw.py.
"""

from __future__ import annotations

import base64
import hashlib

import numpy as np
import plotly.graph_objects as go

from figures.drawing.toolbox import figure_parts

RANGED_TYPES = ("heatmap", "bar")  # cells and bars centred on their coordinate, ±half a step


def _plain(value):
    """numpy arrays (also inside lists and dicts) as lists (a float32 is sent as the float64 holding
    exactly its value); so are typed-array specs, the form a figure made from JSON or copied with
    ``copy.deepcopy`` holds its arrays in."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict) and {"dtype", "bdata"} <= value.keys():
        array = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        if "shape" in value:
            array = array.reshape([int(n) for n in str(value["shape"]).split(",")])
        return array.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _digest(value, h) -> None:
    """Feed ``value`` (a trace's property) to the hash ``h``: arrays by their bytes, the rest by repr."""
    if isinstance(value, np.ndarray):
        h.update(f"{value.dtype}{value.shape}".encode())
        h.update(value.tobytes() if value.dtype.kind != "O" else repr(value.tolist()).encode())
    elif isinstance(value, dict):
        for k, v in value.items():
            h.update(repr(k).encode())
            _digest(v, h)
    else:
        h.update(repr(value).encode())  # lists of numbers or labels: C speed


def _axis_ref(layout_key: str) -> str:
    """``"yaxis2"`` → ``"y2"``, the name traces use."""
    return layout_key[0] + layout_key[5:]


def _bricks(trace: dict, letter: str) -> int:
    """A heatmap's number of cells along ``letter`` ("x": columns, "y": rows)."""
    z = trace["z"]
    return len(z) if letter == "y" else max((len(row) for row in z), default=0)


def _reversed_range(layout_key: str, axis: dict, traces: list[dict]) -> list[float] | None:
    """The range plotly's ``autorange="reversed"`` would give, for the heatmaps and bars on the axis;
    ``None`` when that is not known here (other trace types, no data): the axis is left as it was."""
    letter, ref = layout_key[0], _axis_ref(layout_key)
    on_axis = [t for t in traces if t.get(f"{letter}axis", letter) == ref]
    if not on_axis or any(t.get("type") not in RANGED_TYPES for t in on_axis):
        return None
    values: list = []
    for trace in on_axis:
        coords, cells = trace.get(letter), None
        if trace.get("type") == "heatmap" and trace.get("z") is not None:
            cells = _bricks(trace, letter)
        if coords is None:
            if cells is None:
                return None
            coords = list(range(cells))
        elif cells is not None and len(coords) == cells + 1:
            return None  # coordinates of the cells' edges, not their centres: left to plotly
        values.extend(np.asarray(coords, dtype=object).ravel().tolist())
    values = [v for v in values if v is not None]  # a legend-only trace: y=[None]
    if not values:
        return None
    if axis.get("type") == "category" or any(isinstance(v, str) for v in values):
        n = len(dict.fromkeys(values))  # categories are numbered in order of first appearance
        return [n - 0.5, -0.5]
    try:
        numbers = np.unique(np.asarray(values, dtype=float))
    except (TypeError, ValueError):  # dates…: plotly knows best
        return None
    numbers = numbers[np.isfinite(numbers)]
    if not len(numbers):
        return None
    step = float(np.diff(numbers).min()) if len(numbers) > 1 else 1.0
    return [float(numbers[-1]) + step / 2, float(numbers[0]) - step / 2]


def draw_once(fig: go.Figure) -> go.Figure:
    """Make ``fig`` compare equal to its own deep copy in plotly.js (see the module's docstring); in place.

    The figure looks the same: ``layout.template`` is left out (our figures carry an empty one, which
    is what no template means), ``layout.meta`` becomes a one-item list (``meta[0]``), every numpy
    array but a heatmap's ``z`` becomes a list, ``layout.datarevision`` is a digest of the traces,
    and a reversed axis over heatmaps or bars gets the explicit reversed range plotly would compute.
    """
    if getattr(fig, "_drawn_once", False):  # done already (a figure kept between reruns)
        return fig
    data, layout, _ = figure_parts(fig)  # changed in place: a copy would cost more than it saves
    digest = hashlib.blake2b(digest_size=8)
    for trace in data:
        for key, value in list(trace.items()):
            # a heatmap's cells (the bulk of the data) stay a compact typed array: plotly.js compares
            # those by datarevision; the arrays of bars and lines go as lists
            cells = key == "z" and trace.get("type") == "heatmap"
            if isinstance(value, (np.ndarray, list, tuple, dict)) and not cells:
                trace[key] = value = _plain(value)
            digest.update(repr(key).encode())
            _digest(value, digest)
    layout.pop("template", None)
    if "meta" in layout and not isinstance(layout["meta"], list):
        layout["meta"] = [layout["meta"]]  # a list is compared like data (datarevision), an object is not
    for key, axis in layout.items():
        if not (key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict)):
            continue
        if axis.get("autorange") == "reversed":
            span = _reversed_range(key, axis, data)
            if span is not None:
                axis["autorange"] = False
                axis["range"] = span
    layout["datarevision"] = digest.hexdigest()
    fig._drawn_once = True
    return fig
