"""Every chart of the app goes through :func:`show_figure`: one place for the chart's toolbar
(PNG download at projector resolution) and its downloads (SVG, and the data as CSV).

    ui.show_figure(fig, key="attn_heatmap", name="attention-layer1-head2")

Under each chart a small "Download" popover offers **Data (CSV)** (:func:`figures.drawing.export.figure_csv`,
computed only when someone clicks, in the server's download handler, without a rerun; UTF-8 with a
byte-order mark), **Image (SVG)** and **Image (PNG, 2×)**, made in the browser by plotly.js: a small
fixed script (no user text, one click listener per browser tab) clicks the chart's own camera button
with the wanted format. The toolbar's camera button keeps working (PNG at 2×, named after the figure)
and the toolbar is always available on hover (a caller's ``displayModeBar: False`` is overridden).
Figures of sizes and settings alone are built once for every session (:func:`memo_figure`).

Decisions: docs/decisions.md, ui/page/figure.py.
"""

from __future__ import annotations

import dataclasses
import html
import re

import plotly.graph_objects as go
import streamlit as st
from plotly.basedatatypes import BaseFigure

from core.teaching.questions import run_identity
from figures.drawing.export import figure_csv
from figures.drawing.redraw import draw_once
from figures.drawing.style import AUTO_ANGLE_WIDTH, reserve_figure_margins
from ui.caches.budget import cached, hashable
from ui.page.lang import t

PNG_SCALE = 2


def file_stem(name: str) -> str:
    """A safe file name (no extension): letters, digits, ``._-`` kept (CJK too); others become "-".

    >>> file_stem("attention: layer 1/head 2")
    'attention-layer-1-head-2'
    """
    stem = re.sub(r"[^\w.-]+", "-", str(name), flags=re.UNICODE).strip("-.")
    return stem[:80] or "figure"


def key_class(key: str) -> str:
    """The CSS class Streamlit gives a keyed element's container (its frontend's rule, mirrored)."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key.strip())


def plot_config(name: str, config: dict | None = None) -> dict:
    """plotly's config: no logo; the camera button saves a PNG named after the figure, 2× scale;
    a double click resets the axes to the figure's own ranges and there is no "Autoscale" button:
    plotly's autoscale would turn a heatmap's explicit reversed range (first row on top, see
    :mod:`figures.drawing.redraw`) upside down.

    ``config`` (a caller's) is kept, except what the downloads need: the toolbar (it may not be
    switched off or lose its camera button) and the image options.
    """
    merged = {"doubleClick": "reset", "modeBarButtonsToRemove": ["autoScale2d"], **(config or {})}
    if merged.get("displayModeBar") is False:
        merged["displayModeBar"] = "hover"
    if "modeBarButtonsToRemove" in merged:
        merged["modeBarButtonsToRemove"] = [b for b in merged["modeBarButtonsToRemove"] if b != "toImage"]
    merged.update(
        displaylogo=False,
        toImageButtonOptions={"format": "png", "filename": file_stem(name), "scale": PNG_SCALE},
    )
    return merged


def csv_bytes(fig) -> bytes:
    """The figure's data as the downloaded file: UTF-8 with a byte-order mark (for Excel)."""
    return ("\ufeff" + figure_csv(fig)).encode("utf-8")


# The image buttons. One delegated click listener per tab (guarded), so any number of charts and
# reruns add no listeners; it finds the chart by its key class and drives plotly's own camera button.
_IMAGE_BUTTONS = """
<div class="gb-export" data-chart="{chart}">
<button type="button" data-format="svg" title="{svg_help}">{svg}</button>
<button type="button" data-format="png" title="{png_help}">{png}</button>
</div>
<style>
.gb-export {{ display: flex; gap: 0.5rem; flex-wrap: wrap; }}
.gb-export button {{
  font: inherit; font-size: 0.9rem; padding: 0.25rem 0.75rem; cursor: pointer;
  border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; background: white; color: inherit;
}}
.gb-export button:hover {{ border-color: #ff4b4b; color: #ff4b4b; }}
</style>
<script>
(() => {{
  if (window.__glassboxExport) return;
  window.__glassboxExport = true;
  document.addEventListener("click", (event) => {{
    const button = event.target.closest(".gb-export button[data-format]");
    if (!button) return;
    const chart = button.closest(".gb-export").dataset.chart;
    const plot = document.querySelector("." + CSS.escape(chart) + " .js-plotly-plot");
    const camera = plot && plot.querySelector('.modebar-btn[data-title^="Download plot"]');
    if (!camera || !plot._context) return;
    const options = plot._context.toImageButtonOptions;
    const saved = options.format;
    options.format = button.dataset.format;
    try {{ camera.click(); }} finally {{ options.format = saved; }}
  }});
}})();
</script>
"""


def image_buttons_html(key: str) -> str:
    """The SVG / PNG buttons for the chart keyed ``key`` (fixed HTML; labels and class escaped)."""
    esc = html.escape
    return _IMAGE_BUTTONS.format(
        chart=esc(key_class(key)),
        svg=esc(t("figure.svg")),
        svg_help=esc(t("figure.svg.help")),
        png=esc(t("figure.png")),
        png_help=esc(t("figure.png.help")),
    )


def download_popover(fig, key: str, name: str) -> None:
    """The "Download" popover under a chart: CSV (deferred, no rerun), SVG and PNG (in the browser)."""
    stem = file_stem(name)
    # No help tooltip on the trigger: it would hover over the open popover's buttons.
    with st.popover(t("figure.download"), icon=":material/download:", type="tertiary"):
        st.download_button(
            t("figure.csv"),
            help=t("figure.csv.help"),
            data=lambda: csv_bytes(fig),
            file_name=f"{stem}.csv",
            mime="text/csv",
            on_click="ignore",
            key=f"{key}__csv",
            icon=":material/table:",
        )
        st.html(image_buttons_html(key), unsafe_allow_javascript=True)


# -- shared figures: built once, serialised once ------------------------------------------------------
# st.plotly_chart (Streamlit 1.67) turns the figure it is given into JSON on every call: ``fig.to_dict()``
# (a deep copy of the whole figure, every numpy array base64-encoded) and then ``plotly.io.to_json`` of
# that dict. A figure shared by every session (memo_figure's, shared_view's) would be turned into the
# same dict once per draw in every session. So when such a figure is stored, its dict is made once
# (``SerialisedFigure``) and show_figure hands Streamlit that stand-in instead: Streamlit asks it for
# ``to_dict()`` and gets the dict made when the figure was stored; the JSON, and so the chart, is the
# same to the byte (tests/app/test_shared_view.py compares the protos). Through plotly's public
# ``to_dict``, which Streamlit calls; nothing of Streamlit's is replaced. What is left per draw:
# ``json.dumps`` of the ready dict and Streamlit's own element (id, proto).
# The cache entry holds the figure with its stand-in and dict (``Shared``), so the server's budget
# measures them together and drops them together: bounded in bytes like every cached value.


def drawing_state(fig) -> tuple[bool, bool]:
    """What show_figure may still do to ``fig`` in place: reserve its margins, shape it for one drawing.
    A stand-in made in another state than ``fig``'s now would be of another figure."""
    return bool(getattr(fig, "_margins_reserved", False)), bool(getattr(fig, "_drawn_once", False))


class SerialisedFigure(go.Figure):
    """What ``st.plotly_chart`` is handed for a shared figure: an empty figure whose ``to_dict()`` (and
    ``to_plotly_json()``) return the shared figure's dict, made once. Read only, like the figure: the
    same dict goes to every call (plotly.io.to_json's one change, removing the traces' ``uid``, is done
    here first, so nothing ever changes it)."""

    def __init__(self, fig: go.Figure) -> None:
        super().__init__(layout={"template": {}})  # empty, without a copy of the default template
        plain = fig.to_dict()
        for trace in plain.get("data", []):
            trace.pop("uid", None)
        self._plain = plain
        self._state = drawing_state(fig)

    def to_dict(self) -> dict:
        return self._plain

    def to_plotly_json(self) -> dict:
        return self._plain


def serialised(fig):
    """The stand-in made when ``fig`` was stored in a shared cache, if ``fig`` is still in the state it was
    made in; else ``fig`` itself (a figure of one session, or one show_figure changed since)."""
    stand_in = getattr(fig, "_serialised", None)
    if isinstance(stand_in, SerialisedFigure) and stand_in._state == drawing_state(fig):
        return stand_in
    return fig


def _figures_in(value, depth: int = 2) -> list:
    """The plotly figures ``value`` is or holds: in its fields (a dataclass), items or values, ``depth``
    levels down (a view is a Slide, a tuple of figures, a dict of them …)."""
    if isinstance(value, BaseFigure):
        return [value]
    if depth == 0:
        return []
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        children = [getattr(value, f.name) for f in dataclasses.fields(value)]
    elif isinstance(value, (list, tuple)):
        children = list(value)
    elif isinstance(value, dict):
        children = list(value.values())
    else:
        return []
    found = {id(fig): fig for child in children for fig in _figures_in(child, depth - 1)}
    return list(found.values())


@dataclasses.dataclass(frozen=True, slots=True)
class Shared:
    """What a cache of shared figures keeps: the value the page gets, and the stand-ins of the figures
    it holds with their dicts, for ``ui.caches.budget.nbytes`` to count (it walks this module's objects, and
    of a figure only its plotly data). Slots: an instance ``__dict__`` changes its size as CPython
    shares keys between instances, which would change the measured size of an entry after it was
    stored."""

    value: object
    stand_ins: tuple[SerialisedFigure, ...]
    dicts: tuple[dict, ...]


def _share(value) -> Shared:
    """``value`` with each figure it holds serialised once (its stand-in kept on it), to be stored."""
    stand_ins = []
    for fig in _figures_in(value):
        if isinstance(fig, SerialisedFigure):
            continue
        if serialised(fig) is fig:  # (else serialised already, held by another cache's entry too)
            fig._serialised = SerialisedFigure(fig)
        stand_ins.append(fig._serialised)
    return Shared(value, tuple(stand_ins), tuple(s._plain for s in stand_ins))


# Figures that depend on sizes and settings only (not on weights or the sentence) are built once per
# arguments, for every session: rebuilt on every rerun they came out the same, and were most of a new
# seed's server time on the Positional page (docs/performance.md). In the server's cache
# budget (ui.caches.budget): a 512 × 512 heatmap's numbers, as the lists draw_once makes, are ~8 MB.
def _memo_key(where: str, themed: bool, _make, args: tuple, kwargs: tuple):
    return where, themed, hashable(args), hashable(kwargs)  # arrays and dataclasses by value


@cached(max_entries=256, key=_memo_key)
def _memo(where: str, themed: bool, _make, args: tuple, kwargs: tuple):
    fig = _make(*args, **dict(kwargs))
    return _share(fig if themed else draw_once(reserve_figure_margins(fig)))


def memo_figure(make, *args, themed: bool = False, **kwargs):
    """``make(*args, **kwargs)``, built once per arguments and shared by every rerun and session.

    For figures of plain arguments (numbers, strings, lists, numpy arrays, dataclasses: Streamlit
    hashes them) that do not depend on weights or the sentence's numbers. Ready to draw in our style
    (``show_figure``'s margins and one-drawing shape are done), or as built for Streamlit's theme
    (``themed=True``, for ``show_themed_figure``). The figure is never to be changed after: it is also
    serialised once, for every draw (``SerialisedFigure``)."""
    code = getattr(make, "__code__", None)
    where = f"{code.co_filename}:{code.co_firstlineno}" if code else repr(make)
    try:
        return _memo(
            f"{where}:{getattr(make, '__qualname__', '')}", themed, make, args, tuple(sorted(kwargs.items()))
        ).value
    except TypeError as exc:  # an argument compared by identity only: built, not kept
        if "no value to compare by" not in str(exc):
            raise
        fig = make(*args, **kwargs)
        return fig if themed else draw_once(reserve_figure_margins(fig))


# A class following its lecturer shows one view in tens of sessions: each view of a run is built once
# per server (its figure styled and shaped for drawing once) and the same object is drawn for everyone.
def _view_key(identity: str, name: str, lang: str, _build):
    return identity, name, lang


@cached(max_entries=64, key=_view_key)
def _view(identity: str, name: str, lang: str, _build):
    return _share(_build())


def shared_view(run, name: str, lang: str, build):
    """``build()``, once per server for this run (``core.teaching.questions.run_identity``: weights, sizes,
    sentence, target), view ``name`` and language, and the same object for every session after:
    read only. ``build`` returns what the page draws, its figures ready (``draw_once``): a figure, or
    a dataclass, tuple, list or dict holding figures (two levels down), each serialised once for every
    session's ``show_figure``."""
    return _view(run_identity(run), name, lang, build).value


def show_figure(
    fig, key: str, name: str | None = None, *, downloads: bool = True, column: float = 1.0, **kwargs
):
    """Draw ``fig`` full width; ``name`` (default: ``key``) names the downloaded files.

    ``column``: the share of the page's width the figure is drawn in (one of two columns: 0.5); the
    room reserved for legends and upright labels depends on it. Extra keyword arguments go to
    ``st.plotly_chart`` (``on_select``, ``selection_mode``, ``theme``, ``config`` …); its return value
    is returned. ``downloads=False`` leaves out the popover (the toolbar's PNG button stays).
    """
    name = name or key
    kwargs.setdefault("width", "stretch")
    # theme=None: figures.drawing.style's own look (projector fonts, margins reserved from the labels).
    # Streamlit's theme re-styles every chart in the browser on every rerun, redrawn or not (its cost:
    # docs/performance.md). A caller may still ask for it (theme="streamlit").
    kwargs.setdefault("theme", None)
    config = plot_config(name, kwargs.pop("config", None))
    if kwargs["theme"] is None:  # our fonts: room for the labels known up front
        fig = reserve_figure_margins(fig, AUTO_ANGLE_WIDTH * column)
        # and one drawing in the browser, not two (Streamlit's theme restyles a copy: always two)
        fig = draw_once(fig)
    # a shared figure's dict was made once, when it was stored: Streamlit gets it from the stand-in
    shown = st.plotly_chart(serialised(fig), key=key, config=config, **kwargs)
    if downloads:
        download_popover(fig, key, name)
    return shown


def show_themed_figure(fig, key: str, name: str | None = None, **kwargs):
    """:func:`show_figure` with Streamlit's theme, for the figures laid out for its 12 px labels
    (Tokenization and Overview; Attention's step-by-step figures in narrow columns)."""
    return show_figure(fig, key, name, theme="streamlit", **kwargs)
