"""Shared plotly style: readable on a projector at 1280×720, safe with any user text.

Pure helpers, no Streamlit: ``(arrays, labels) -> go.Figure``.

Two traps this module exists for:
- plotly interprets a subset of HTML in label text (``<b>``, ``<br>``, ``<a href>``…): a token
  ``<b>`` would turn bold instead of showing. Every token label goes through :func:`escape_label`.
- plotly merges duplicate category labels, so two "the" tokens would collapse into one row.
  Heatmaps use integer positions and put the tokens in ``ticktext`` (see :func:`heatmap`).
"""

from __future__ import annotations

import html
import math
import unicodedata
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from i18n import t

# "Noto Sans CJK SC" first: with a generic family, Noto CJK draws Chinese with Japanese glyphs.
FONT_FAMILY = '"Noto Sans CJK SC", "Noto Sans", "Noto Color Emoji", "DejaVu Sans", sans-serif'
BASE_FONT_SIZE = 18
TITLE_FONT_SIZE = 22
HOVER_TOKENS_MAX_CELLS = 16_384  # 128 × 128: beyond, heatmap hovers name positions, not tokens
MAX_TICK_CHARS = 12  # longer tokens are shortened on the axis; the hover shows them whole

# Colour scales: sequential for weights in [0, 1], diverging (centred on 0) for signed values.
WEIGHTS_SCALE = "Blues"
SIGNED_SCALE = "RdBu_r"
MASK_SCALE = [[0.0, "#d9d9d9"], [1.0, "#2b6cb0"]]  # False (may not attend) grey, True blue

# One colour per kind of stage, used by the overview and reusable by the pages.
COLORS = {
    "text": "#f2f2f2",
    "tokens": "#fde2b8",
    "embed": "#cfe8d5",
    "encoder": "#cfe0f5",
    "decoder": "#f7d4d4",
    "output": "#e6dcf5",
    "edge": "#555555",
}

_CONTROL_NAMES = {"\n": "⏎", "\t": "⇥", "\r": "␍", " ": "␣"}


def escape_label(text: str) -> str:
    """Text for a plotly label, shown exactly as typed: ``<b>`` stays ``<b>``, not bold.

    >>> escape_label("<b>&</b>")
    '&lt;b&gt;&amp;&lt;/b&gt;'
    """
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def token_label(token: str, max_chars: int = MAX_TICK_CHARS) -> str:
    """A token as an axis label: escaped, whitespace made visible, long tokens shortened with …

    >>> token_label(" the")
    '␣the'
    """
    shown = "".join(
        _CONTROL_NAMES.get(ch) or (f"\\x{ord(ch):02x}" if ord(ch) < 32 or ord(ch) == 127 else ch)
        for ch in str(token)
    )
    if len(shown) > max_chars:
        shown = shown[: max_chars - 1] + "…"
    return escape_label(shown) if shown else "∅"


def unique_labels(tokens: Sequence[str]) -> list[str]:
    """``token·index`` labels, all distinct, for places that need category names (legends, bars)."""
    return [f"{token_label(t)}·{i}" for i, t in enumerate(tokens)]


GRID_COLOR = "#e5ecf6"


def apply_style(fig: go.Figure, *, height: int | None = None, title: str | None = None) -> go.Figure:
    """Projector defaults: large CJK-capable font, white background, light grid, room for labels.

    The look of plotly's "plotly_white", set by hand: naming a template deep-copies it, which
    cost more than drawing the figure, and pages redraw several per slider step.
    """
    # automargin: long tick labels and axis titles push the plot in instead of being cut off
    axis = {"gridcolor": GRID_COLOR, "zerolinecolor": GRID_COLOR, "linecolor": GRID_COLOR, "automargin": True}
    style = {
        "template": {},  # what template="none" leaves
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "font": {"family": FONT_FAMILY, "size": BASE_FONT_SIZE, "color": "#222222"},
        "hoverlabel": {"font": {"family": FONT_FAMILY, "size": BASE_FONT_SIZE}},
        "margin": {"l": 20, "r": 20, "t": 60 if title else 20, "b": 20},
    }
    if title is not None:
        style["title"] = {"text": escape_label(title), "font": {"size": TITLE_FONT_SIZE}}
    if height is not None:
        style["height"] = height
    return _merge_layout(fig, style, axis)


def _merge(into: dict, update: dict) -> dict:
    for key, value in update.items():
        if isinstance(value, dict) and value and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value
    return into


def _merge_layout(fig: go.Figure, update: dict, axis: dict | None = None) -> go.Figure:
    """``fig.update_layout(update)`` and ``update_xaxes/update_yaxes(axis)`` merged as plain dicts,
    then one assignment of the whole layout: the same layout, at a fraction of the cost (plotly's
    update calls parse a property path and validate for every key they are handed)."""
    layout = _merge(fig.layout.to_plotly_json(), update)
    if axis:
        for name in {"xaxis", "yaxis"} | {k for k in layout if k.startswith(("xaxis", "yaxis"))}:
            layout[name] = _merge(layout.get(name, {}), axis)
    fig.layout = layout
    return fig


def fit_margins(fig: go.Figure) -> go.Figure:
    """Margins that grow to fit tick labels and axis titles on every axis, including axes added
    after ``apply_style`` (subplots): without plotly's templates margins are fixed and cut labels off."""
    return _merge_layout(fig, {}, {"automargin": True})


def label_px(text, size: int = BASE_FONT_SIZE) -> float:
    """Roughly how wide ``text`` is drawn, in px: wide characters (CJK, emoji) one em, others 0.58 em.

    >>> label_px("注意"), label_px("abc", 10)
    (36, 17.4)
    """
    plain = html.unescape(str(text))
    return sum(size if unicodedata.east_asian_width(ch) in "WF" else 0.58 * size for ch in plain)


def _wide(text) -> bool:
    """Whether ``text`` has a wide (CJK, emoji) character."""
    return any(unicodedata.east_asian_width(ch) in "WF" for ch in str(text))


CARTESIAN = ("bar", "scatter", "heatmap", "histogram", "box", "violin", "contour")
NUMBER_LABEL_CHARS = 5  # an automatic numeric tick ("−0.25", "1000") on an axis without tick text
AUTO_ANGLE_WIDTH = 800  # px a full-width plot is assumed to have when guessing plotly's label rotation


def _axis_labels(name: str, axis: dict, traces: list[dict]) -> list:
    """The tick labels an axis will write: its tick text, or its traces' categories."""
    if axis.get("showticklabels") is False:
        return []
    if "ticktext" in axis:
        return list(axis["ticktext"])
    short = name.replace("axis", "")  # "xaxis2" -> "x2"
    letter = short[0]
    labels = []
    for trace in traces:
        values = trace.get(letter)
        if trace.get(f"{letter}axis", letter) == short and values is not None and len(values):
            labels.extend(values)
    # plotly's rule: an axis of strings is a category axis unless its type says otherwise
    if axis.get("type") == "category" or (axis.get("type") in (None, "-") and labels
                                          and all(isinstance(v, str) for v in labels)):
        return labels
    return ["0" * NUMBER_LABEL_CHARS]


def reserve_margins(layout: dict, traces: list[dict], width: float = AUTO_ANGLE_WIDTH) -> dict:
    """``layout["margin"]`` grown to hold the outer axes' tick labels and titles, colour bars and
    legends, estimated with :func:`label_px` (a little generous). ``width``: the px the figure is
    expected to get on the page (a half-width column: ~400), for what depends on it (whether x labels
    turn upright, how many rows a legend above or below the plot takes).

    Plotly's ``automargin`` finds the same room only after drawing, then draws the whole figure a
    second time; with the room reserved up front it measures and keeps the first drawing. automargin
    stays on as the safety net.
    """
    size = (layout.get("font") or {}).get("size", BASE_FONT_SIZE)
    margin = dict(layout.get("margin") or {})
    above = _title_room(layout)
    if above:
        margin["t"] = max(margin.get("t", 0), above + 10)
    under = _reserve_axes(margin, _drawn_axes(layout, traces), traces, size, above, width)
    right = _reserve_legend(margin, layout, traces, size, width, under, _colorbar_room(layout, traces, size))
    if right:
        margin["r"] = max(margin.get("r", 0), math.ceil(right))
    return margin


def _title_room(layout: dict) -> int:
    """The px a figure title takes in the top margin, above whatever the top axes put there (0: none)."""
    heading = layout.get("title") or {}
    heading = heading if isinstance(heading, dict) else {"text": heading}
    return ((heading.get("font") or {}).get("size", TITLE_FONT_SIZE) + 14) if heading.get("text") else 0


def _drawn_axes(layout: dict, traces: list[dict]) -> dict[str, dict]:
    """{axis name: its layout entry}: the layout's axes, and those only the traces name (also drawn)."""
    axes = {n: a for n, a in layout.items() if n.startswith(("xaxis", "yaxis"))}
    for trace in traces:
        if trace.get("type", "scatter") in CARTESIAN:
            for letter in "xy":
                axes.setdefault(trace.get(f"{letter}axis", letter).replace(letter, f"{letter}axis", 1), {})
    return axes


def _axis_text(name: str, axis: dict, traces: list[dict], size: int) -> tuple[list, int, float, bool]:
    """(labels, their font size, the widest one's px, whether any is wide): what an axis writes."""
    labels = _axis_labels(name, axis, traces)
    tick_size = (axis.get("tickfont") or {}).get("size") or size
    widest = max((label_px(x, tick_size) for x in labels), default=0.0)
    wide = any(_wide(x) for x in labels)  # CJK: Noto Sans CJK's glyphs run a little over one em
    widest *= 1.05 if wide else 1.0
    return labels, tick_size, widest, wide


def _reserve_axes(
    margin: dict, axes: dict[str, dict], traces: list[dict], size: int, above: int, width: float
) -> int:
    """Grow ``margin`` (in place) for each axis at the figure's edge: its labels and title. Returns
    what the x axes at the bottom need, whatever margin the figure came with."""
    domains = {n: a.get("domain", [0, 1]) for n, a in axes.items()}
    under = 0
    for name, axis in axes.items():
        labels, tick_size, widest, wide = _axis_text(name, axis, traces, size)
        title = axis.get("title")
        title = title.get("text") if isinstance(title, dict) else title
        room = (math.ceil(1.2 * size) + 8 if title else 0) + 12  # a title's line, its gap, the ticks
        anchor = axis.get("anchor", "")
        across = domains.get(anchor.replace("x", "xaxis").replace("y", "yaxis"), [0, 1])
        if name.startswith("yaxis"):
            side = "r" if axis.get("side") == "right" else "l"
            at_edge = across[1] >= 0.99 if side == "r" else across[0] <= 0.01
            need = widest + room if labels else room
        else:
            side = "t" if axis.get("side") == "top" else "b"
            at_edge = across[1] >= 0.99 if side == "t" else across[0] <= 0.01
            angle = _x_label_angle(axis, labels, widest, tick_size, width)
            need = (_x_label_height(labels, widest, wide, tick_size, angle) if labels else 0) + room
            _reserve_end_labels(margin, name, axis, traces, labels, tick_size, angle)
        if at_edge and (labels or title):
            margin[side] = max(margin.get(side, 0), math.ceil(need + 10 + (above if side == "t" else 0)))
            if side == "b":
                under = max(under, math.ceil(need + 10))
            if name.startswith("yaxis") and labels:  # the top and bottom labels stick out by half a line
                half = math.ceil(1.5 * size)
                margin["t"], margin["b"] = max(margin.get("t", 0), half), max(margin.get("b", 0), half)
    return under


def _x_label_angle(axis: dict, labels: list, widest: float, tick_size: int, width: float) -> float:
    """How far an x axis' labels are turned, in radians: its tickangle, else plotly's guess."""
    angle = axis.get("tickangle")
    lo, hi = axis.get("domain") or (0, 1)
    if angle in (None, "auto"):  # plotly turns labels that would overlap upright
        angle = 90 if len(labels) * (widest + 0.5 * tick_size) > width * (hi - lo) else 0
    return math.radians(abs(angle))


def _x_label_height(labels: list, widest: float, wide: bool, tick_size: int, angle: float) -> float:
    """The px an x axis' labels take across the axis, turned by ``angle`` (radians)."""
    # a label's height: CJK (Noto Sans CJK) and accented letters (pinyin's tone marks) draw a taller
    # line than plain ASCII
    tall = wide or any(not str(x).isascii() for x in labels)
    line = (1.3 if tall else 1.15) * tick_size
    return (widest + 6) * math.sin(angle) + line * math.cos(angle)


def _reserve_end_labels(
    margin: dict, name: str, axis: dict, traces: list[dict], labels: list, tick_size: int, angle: float
) -> None:
    """Grow ``margin`` (in place) for an x axis' first and last labels, which stick out sideways."""
    lo, hi = axis.get("domain") or (0, 1)
    # The end labels are centred on the axis' ends (half of each sticks out; turned ones end at their
    # tick, half a line's height past it), except over heatmap cells: half a cell inside.
    kinds = {tr.get("type", "scatter") for tr in traces if tr.get("xaxis", "x") == "x" + name[5:]}
    if labels and kinds != {"heatmap"} and angle < 0.1:
        for end, at_end, label in (("l", lo <= 0.01, labels[0]), ("r", hi >= 0.99, labels[-1])):
            if at_end:
                margin[end] = max(margin.get(end, 0), math.ceil(label_px(label, tick_size) / 2 + 12))
    elif labels and kinds != {"heatmap"} and hi >= 0.99:
        margin["r"] = max(margin.get("r", 0), math.ceil(0.6 * tick_size) + 3)


def _colorbar_room(layout: dict, traces: list[dict], size: int) -> float:
    """The px the widest colour bar needs at the right (a trace's own, or a shared colour axis'); 0: none."""
    right = 0.0
    bars = [trace.get("colorbar") or {} for trace in traces
            if trace.get("type") in ("heatmap", "contour") and trace.get("showscale", True)
            and not trace.get("coloraxis")]
    bars += [axis.get("colorbar") or {} for name, axis in layout.items()
             if name.startswith("coloraxis") and isinstance(axis, dict) and axis.get("showscale", True)]
    for bar in bars:
        bar_title = bar.get("title") or {}
        ticks = [label_px(x, size) for x in bar.get("ticktext") or []]  # "0 False", "1 True"
        words = max([label_px("0" * NUMBER_LABEL_CHARS, size), *ticks])
        if bar_title.get("side") == "right":  # written upward beside the bar: one line's width
            words += size + 10
        else:
            words = max(words, label_px(bar_title.get("text", ""), size))
        right = max(right, bar.get("thickness", 30) + 48 + words)
    return right


def _reserve_legend(
    margin: dict, layout: dict, traces: list[dict], size: int, width: float, under: int, right: float
) -> float:
    """Room for the legend: a column at the right (returns ``right`` grown to hold it), or a row of
    entries above or below the plot (grows ``margin`` in place; returns ``right`` as it was)."""
    legend = layout.get("legend") or {}
    names = [trace.get("name") or "" for trace in traces if trace.get("showlegend") is not False]
    shown = layout.get("showlegend", len(names) > 1)
    if shown and legend.get("orientation") != "h":
        return max(right, 50 + max((label_px(n, size) for n in names), default=0.0))
    if not shown:
        return right
    # a row of entries above or below the plot (rows: entries of a set fraction's width)
    y = legend.get("y", -0.1)
    entries = [n for n in names if n]
    if legend.get("entrywidthmode") == "fraction" and legend.get("entrywidth"):
        rows = math.ceil(len(entries) / max(1, int(1 / legend["entrywidth"])))
    else:  # entries side by side (a symbol, the name, a gap) wrap at the plot's width
        room = max(100.0, width - margin.get("l", 0) - margin.get("r", 0))
        rows = max(1, math.ceil(sum(label_px(n, size) + 50 for n in entries) / room))
    more = (rows - 1) * math.ceil(1.65 * size)  # a row of entries: ~30 px at 18 px
    if legend.get("yref") == "container" and y < 0.5:  # at the figure's bottom edge (presenter)
        margin["b"] = max(margin.get("b", 0), under + size + 18 + more)
    elif y >= 1:
        margin["t"] = max(margin.get("t", 0), math.ceil(3.0 * size) + more)
    elif y < 0:  # under the axis' labels, and |y| of the plot's height down (plotly: paper units)
        tall = size + 18 + more
        plot = (layout.get("height") or 450) - margin.get("t", 0) - margin.get("b", 0)
        margin["b"] = max(margin.get("b", 0) + tall, math.ceil(-y * max(plot, 0) + tall + 6))
    return right


MIN_TICK_SIZE = 10


def fit_tick_fonts(layout: dict, traces: list[dict], width: float = AUTO_ANGLE_WIDTH) -> dict:
    """``{axis name: {"tickfont": {"size": s}}}`` for the axes whose labels would overlap at the
    figure's font size: one label per ~1.25 lines of the room along the axis (a y axis: the figure's
    height; an x axis: ``width`` px, the page decides it), never below MIN_TICK_SIZE px.
    """
    size = (layout.get("font") or {}).get("size", BASE_FONT_SIZE)
    height = layout.get("height") or 450
    updates = {}
    for name, axis in layout.items():
        if not name.startswith(("xaxis", "yaxis")) or (axis.get("tickfont") or {}).get("size"):
            continue
        labels = _axis_labels(name, axis, traces)
        if len(labels) < 2 or labels == ["0" * NUMBER_LABEL_CHARS]:
            continue
        lo, hi = axis.get("domain") or (0, 1)
        room = (0.75 * height if name.startswith("yaxis") else width) * (hi - lo)
        fit = room / len(labels) / 1.25
        if fit < size:
            updates[name] = {"tickfont": {"size": max(MIN_TICK_SIZE, math.floor(fit))}}
    return updates


def reserve_figure_margins(
    fig: go.Figure, width: float = AUTO_ANGLE_WIDTH, *, again: bool = False
) -> go.Figure:
    """:func:`fit_tick_fonts` and :func:`reserve_margins` for a figure built with plotly's objects
    (in place; returns it). ``width``: as for :func:`reserve_margins`. ``again``: reserve even if done
    before (the fonts changed since: the presenter's); margins only grow."""
    if getattr(fig, "_margins_reserved", False) and not again:  # build_figure's: done while building
        return fig
    layout, traces = fig.layout.to_plotly_json(), [trace.to_plotly_json() for trace in fig.data]
    ticks = fit_tick_fonts(layout, traces, width)
    _merge(layout, ticks)
    fig.update_layout({**ticks, "margin": reserve_margins(layout, traces, width)})  # a few keys: cheap
    fig._margins_reserved = True
    return fig


def heatmap(
    z,
    x_tokens: Sequence[str],
    y_tokens: Sequence[str],
    *,
    title: str | None = None,
    colorscale=WEIGHTS_SCALE,
    zmin: float | None = None,
    zmax: float | None = None,
    zmid: float | None = None,
    colorbar_title: str = "",
    x_title: str = "",
    y_title: str = "",
    value_format: str = ".4f",
    height: int | None = None,
    lang: str = "en",
) -> go.Figure:
    """A (len(y_tokens), len(x_tokens)) matrix with token axes; first row at the top.

    Axes are integer positions with the (escaped) tokens as tick text, so repeated tokens keep
    their own rows; the hover names row and column tokens with their index and the exact value.
    """
    z = np.asarray(z, dtype=float)
    if z.shape != (len(y_tokens), len(x_tokens)):
        raise ValueError(f"z has shape {z.shape}, labels need ({len(y_tokens)}, {len(x_tokens)})")
    xs = [escape_label(t) for t in x_tokens]
    ys = [escape_label(t) for t in y_tokens]
    custom, hover = _cell_hover(z, xs, ys, x_title, y_title, lang)
    value = t("style.value", lang)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(range(len(xs))),
            y=list(range(len(ys))),
            customdata=custom,
            colorscale=colorscale,
            zmin=zmin,
            zmax=zmax,
            zmid=zmid,
            colorbar={"title": {"text": escape_label(colorbar_title)}},
            hovertemplate=f"{hover}{value}: %{{z:{value_format}}}<extra></extra>",
        )
    )
    _token_axes(fig, x_tokens, y_tokens, x_title, y_title)
    return apply_style(fig, height=height, title=title)


def _cell_hover(
    z: np.ndarray, xs: list[str], ys: list[str], x_title: str, y_title: str, lang: str
) -> tuple[np.ndarray | None, str]:
    """(customdata, the hover's first lines): each cell's row and column token with its index.

    Above HOVER_TOKENS_MAX_CELLS cells the hover gives positions only: a token pair per cell
    would be 262,144 strings at 512 × 512, slower to build and send than the figure itself.
    """
    row = escape_label(y_title) or t("style.row", lang)
    column = escape_label(x_title) or t("style.column", lang)
    if z.size > HOVER_TOKENS_MAX_CELLS:
        return None, f"{row}: ·%{{y}}<br>{column}: ·%{{x}}<br>"
    custom = np.empty(z.shape + (2,), dtype=object)  # (rows, columns, 2): row token ·i, column token ·j
    for i, y in enumerate(ys):
        for j, x in enumerate(xs):
            custom[i, j] = (f"{y} ·{i}", f"{x} ·{j}")
    return custom, f"{row}: %{{customdata[0]}}<br>{column}: %{{customdata[1]}}<br>"


def _token_axes(
    fig: go.Figure, x_tokens: Sequence[str], y_tokens: Sequence[str], x_title: str, y_title: str
) -> None:
    """Integer axes with the tokens as tick text (x on top, first row at the top), in place."""
    fig.update_xaxes(
        tickmode="array",
        tickvals=list(range(len(x_tokens))),
        ticktext=[token_label(t) for t in x_tokens],
        title=escape_label(x_title) or None,
        side="top",
        showgrid=False,
    )
    fig.update_yaxes(
        tickmode="array",
        tickvals=list(range(len(y_tokens))),
        ticktext=[token_label(t) for t in y_tokens],
        title=escape_label(y_title) or None,
        autorange="reversed",
        showgrid=False,
    )
