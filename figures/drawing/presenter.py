"""Presenter restyling: any figure of the app made readable from the back of a lecture hall.

Pure: ``go.Figure`` in, the same figure out (restyled in place and returned); no Streamlit.
The lecture page (``pages/lecture.py``) draws the app's own figures, then calls
:func:`presenter_style` on each::

    fig = presenter_style(heads_figure(attn, q_tokens, k_tokens))

Every font is scaled by ``FONT_SCALE`` (but an axis with more than ``CROWDED_TICKS`` labels), the
height is ``PRESENTER_HEIGHT``, every axis gets ``automargin``, a horizontal legend goes under the
plot and the margins are reserved again for the larger fonts; data, colours and hover texts stay as
the figure function made them. What changes and why: docs/decisions.md, figures/drawing/presenter.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from figures.drawing.style import BASE_FONT_SIZE, TITLE_FONT_SIZE, reserve_figure_margins

FONT_SCALE = 4 / 3
PRESENTER_HEIGHT = 470
CROWDED_TICKS = 16  # an axis with more labels keeps their size (a long sentence's tokens)


@dataclass(frozen=True)
class Slide:
    """One step of the lecture: its figure, its text and equation. Defined here, not in the page: a
    slide is kept for every session (``ui.shared_view``), and an object of a class the page script
    defines would keep that script's whole namespace (the run, the model) alive with it."""

    fig: go.Figure
    text: str  # translated Markdown (our own text, never user text)
    latex: str | None = None
    code: str | None = None  # user text (a sentence, tokens), shown verbatim in a code block
    code_label: str | None = None
    font_scale: float = FONT_SCALE  # 1.0: a diagram whose text sits in fixed boxes keeps its size
    wide: bool = False  # the figure takes the full width, the text goes above it (several panels)


def _scaled(size, scale: float):
    if size is None:
        return None
    if isinstance(size, int | float):
        return round(size * scale)
    return [round(s * scale) for s in size]  # one size per point


def _scale_font(obj, scale: float) -> None:
    """Scale ``obj.font.size`` if the figure set one (unset sizes inherit the scaled base font)."""
    font = getattr(obj, "font", None)
    if font is not None and font.size is not None:
        font.size = _scaled(font.size, scale)


def _scale_axis(axis, scale: float, base: float) -> None:
    axis.automargin = True  # larger tick labels and titles push the plot area instead of being cut
    size = axis.tickfont.size if axis.tickfont.size is not None else base
    if axis.ticktext is not None and len(axis.ticktext) > CROWDED_TICKS:
        axis.tickfont.size = size  # many labels side by side: larger ones would only overlap
    elif axis.tickfont.size is not None:
        axis.tickfont.size = _scaled(size, scale)
    if axis.title is not None:
        _scale_font(axis.title, scale)


def _scale_colorbar(bar, scale: float) -> None:
    if bar is None:
        return
    if bar.tickfont is not None and bar.tickfont.size is not None:
        bar.tickfont.size = _scaled(bar.tickfont.size, scale)
    if bar.title is not None:
        _scale_font(bar.title, scale)


def presenter_style(
    fig: go.Figure, *, height: int = PRESENTER_HEIGHT, scale: float = FONT_SCALE
) -> go.Figure:
    """``fig`` with every font ``scale`` times larger and ``height`` px tall (in place; returned)."""
    layout = fig.layout
    base = layout.font.size if layout.font.size is not None else BASE_FONT_SIZE
    layout.font.size = _scaled(base, scale)
    if layout.hoverlabel.font.size is not None:
        layout.hoverlabel.font.size = _scaled(layout.hoverlabel.font.size, scale)
    if layout.title.text:
        size = layout.title.font.size if layout.title.font.size is not None else TITLE_FONT_SIZE
        layout.title.font.size = _scaled(size, scale)
    _scale_font(layout.legend, scale)
    legend = layout.legend
    if legend.orientation == "h" and legend.y is not None and legend.y < 0:
        # A legend under the plot sits at a fixed fraction of the plot's height, where the larger
        # x-axis labels now are: anchor it to the figure's bottom edge instead.
        legend.update(y=0, yref="container", yanchor="bottom")
    for annotation in layout.annotations:
        _scale_font(annotation, scale)
    fig.for_each_xaxis(lambda axis: _scale_axis(axis, scale, base))
    fig.for_each_yaxis(lambda axis: _scale_axis(axis, scale, base))
    if layout.coloraxis is not None:
        _scale_colorbar(layout.coloraxis.colorbar, scale)
    for trace in fig.data:
        textfont = getattr(trace, "textfont", None)
        if textfont is not None and textfont.size is not None:
            textfont.size = _scaled(textfont.size, scale)
        _scale_colorbar(getattr(trace, "colorbar", None), scale)
    margin = layout.margin
    if margin.t is not None:
        margin.t = _scaled(margin.t, scale)
    layout.height = height
    return reserve_figure_margins(fig, again=True)  # reserved for the page's fonts: again for these
