"""A figure's data as CSV: what "Download data (CSV)" under every chart gives (see ``ui/page/figure.py``).

Pure: ``go.Figure`` in, text out; no Streamlit. One tidy long table for any figure, one header row::

    trace,type,row,column,x,y,z,text
    head 1,heatmap,0,0,注意,注意,0.41,          <- a heatmap: one line per cell (row i, column j)
    probability,bar,0,,0.62,我,,               <- a bar / scatter / histogram: one line per point

Labels are what the chart shows (tick texts, plotly's HTML undone, ``…`` kept); float32 values keep
float32's digits and missing values are empty cells; a text cell a spreadsheet would run as a formula
gets a leading ``'``. Column names are fixed English identifiers, the same in both languages.
Each rule and its reason: docs/decisions.md, figures/drawing/export.py.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import math
import re
from collections.abc import Iterable, Sequence

import numpy as np

HEADER = ("trace", "type", "row", "column", "x", "y", "z", "text")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")

_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]*>")


# -- cells -----------------------------------------------------------------------------------------


def safe_text(text: str) -> str:
    """A text cell a spreadsheet will not run as a formula.

    >>> safe_text("=1+1"), safe_text("-x"), safe_text("注意")
    ("'=1+1", "'-x", '注意')
    """
    return "'" + text if text.startswith(FORMULA_START) else text


def safe_table(data):
    """A table's data for ``st.dataframe`` with every text cell made :func:`safe_text`: Streamlit's own
    table toolbar offers "Download as CSV" (and a copy to the clipboard) of exactly these values, a
    second CSV path beside ours. Rows (a list of dicts) or columns (a dict of lists) keep their shape;
    numbers and column names are left as they are.

    >>> safe_table([{"token": "=SUM(1)", "id": -1}]), safe_table({"token": ["@x", "中"]})
    ([{'token': "'=SUM(1)", 'id': -1}], {'token': ["'@x", '中']})
    """

    def cell(value):
        return safe_text(value) if isinstance(value, str) else value

    if isinstance(data, dict):
        return {key: [cell(v) for v in column] for key, column in data.items()}
    return [{key: cell(v) for key, v in row.items()} for row in data]


def plain_label(text: str) -> str:
    """A plotly label as plain text: ``<br>`` → space, tags dropped, entities decoded.

    Tags are dropped *before* entities are decoded, so an escaped token (``&lt;b&gt;``) comes back
    as the text ``<b>`` instead of vanishing.

    >>> plain_label("&lt;b&gt; &amp; <b>bold</b><br>x")
    '<b> & bold x'
    """
    return html.unescape(_TAG.sub("", _BREAK.sub(" ", text)))


def _number(value) -> str | None:
    """A numeric value as exact short text, "" when missing; None when ``value`` is not a number."""
    if value is None:
        return ""
    if isinstance(value, bool | np.bool_):
        return str(int(value))
    if isinstance(value, np.floating):
        return "" if np.isnan(value) else str(value)  # numpy: shortest text that round-trips the dtype
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if isinstance(value, int | np.integer):
        return str(int(value))
    return None


def cell(value) -> str:
    """Any value of a figure as a CSV cell: numbers exact, text plain and formula-safe."""
    number = _number(value)
    if number is not None:
        return number
    return safe_text(plain_label(str(value)))


# -- arrays and axes -------------------------------------------------------------------------------


def _array(value) -> np.ndarray | None:
    """A trace attribute as a numpy array (plain list, numpy array, or plotly's typed-array dict)."""
    if value is None:
        return None
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, str):  # a scalar text (e.g. one text for every point) is not an array
        return None
    try:
        arr = np.asarray(value)
    except ValueError:  # ragged lists
        arr = np.asarray(value, dtype=object)
    if arr.dtype.kind in "US":  # keep text as Python str cells, not numpy fixed-width strings
        arr = arr.astype(object)
    return arr


def _key(value):
    """Tick values and data values compare equal whether they are numpy, int or float."""
    if isinstance(value, bool | np.bool_):
        return value
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    return str(value)


def _tick_map(axis: dict | None) -> dict:
    """{value: tick text} of an axis with explicit ticks (``tickvals`` + ``ticktext``)."""
    if not axis:
        return {}
    vals, texts = _array(axis.get("tickvals")), _array(axis.get("ticktext"))
    if vals is None or texts is None:
        return {}
    return {_key(v): str(t) for v, t in zip(vals.tolist(), texts.tolist(), strict=False)}


def _axis_name(ref: str | None, letter: str) -> str:
    """A trace's axis reference ("x", "x2") as its layout key ("xaxis", "xaxis2")."""
    ref = ref or letter
    return f"{letter}axis{ref[1:]}"


def _labels(values: Iterable, ticks: dict) -> list[str]:
    """Cells for the values on one axis: the tick text where the axis maps the value, else the value."""
    out = []
    for v in values:
        text = ticks.get(_key(v)) if ticks and v is not None else None
        out.append(cell(v) if text is None else safe_text(plain_label(text)))
    return out


def _heatmap_positions(trace, n: int, letter: str) -> list:
    """The coordinates of a heatmap's columns (``x``) or rows (``y``): given, or ``x0 + i·dx``."""
    given = _array(getattr(trace, letter, None))
    if given is not None and given.ndim == 1 and len(given) == n:
        return given.tolist()
    start = getattr(trace, f"{letter}0", None)
    step = getattr(trace, f"d{letter}", None)
    start = 0 if start is None else start
    step = 1 if step is None else step
    return [start + i * step for i in range(n)]


def _per_point(values: np.ndarray | None, n: int) -> list:
    if values is None or values.ndim == 0:
        return [None] * n
    flat = values.tolist()
    return flat + [None] * (n - len(flat)) if len(flat) < n else flat[:n]


# -- the table -------------------------------------------------------------------------------------


def figure_rows(fig) -> Iterable[Sequence[str]]:
    """The CSV lines of ``fig`` after the header (see the module docstring)."""
    layout = fig.layout.to_plotly_json()
    for index, trace in enumerate(fig.data):
        kind = trace.type or "scatter"
        name = cell(trace.name) if getattr(trace, "name", None) else f"trace {index}"
        x_ticks = _tick_map(layout.get(_axis_name(getattr(trace, "xaxis", None), "x")))
        y_ticks = _tick_map(layout.get(_axis_name(getattr(trace, "yaxis", None), "y")))
        z = _array(getattr(trace, "z", None))
        if z is not None and z.ndim == 2:
            yield from _heatmap_rows(trace, name, kind, z, x_ticks, y_ticks)
        else:
            yield from _point_rows(trace, name, kind, x_ticks, y_ticks)


def _heatmap_rows(trace, name: str, kind: str, z: np.ndarray, x_ticks: dict, y_ticks: dict):
    n_rows, n_cols = z.shape
    xs = _labels(_heatmap_positions(trace, n_cols, "x"), x_ticks)
    ys = _labels(_heatmap_positions(trace, n_rows, "y"), y_ticks)
    text = _array(getattr(trace, "text", None))
    text = text if text is not None and text.shape == z.shape else None
    for i in range(n_rows):
        row = z[i]
        for j in range(n_cols):
            yield (
                name, kind, str(i), str(j), xs[j], ys[i], cell(row[j]),
                cell(text[i, j]) if text is not None else "",
            )  # fmt: skip


def _point_rows(trace, name: str, kind: str, x_ticks: dict, y_ticks: dict):
    x, y = _array(getattr(trace, "x", None)), _array(getattr(trace, "y", None))
    if x is None and y is None:
        return
    n = max((len(a) for a in (x, y) if a is not None and a.ndim >= 1), default=0)
    xs, ys = _per_point(x, n), _per_point(y, n)
    text = _per_point(_array(getattr(trace, "text", None)), n)
    x_cells, y_cells = _labels(xs, x_ticks), _labels(ys, y_ticks)
    for k in range(n):
        if xs[k] is None and ys[k] is None:
            continue
        yield (name, kind, str(k), "", x_cells[k], y_cells[k], "", "" if text[k] is None else cell(text[k]))


def figure_csv(fig) -> str:
    """Every trace of ``fig`` as one CSV text with a header row (see the module docstring)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(HEADER)
    writer.writerows(figure_rows(fig))
    return out.getvalue()
