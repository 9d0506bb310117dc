"""ui.memo_figure: a figure of sizes and settings alone is built once per arguments, ready to draw."""

import numpy as np
import plotly.graph_objects as go

from figures.positional import pe_heatmap, pe_table
from ui.page.figure import memo_figure


def test_built_once_per_arguments_and_ready_to_draw():
    calls = []

    def bars(n, *, lang="en"):
        calls.append((n, lang))
        return go.Figure(go.Bar(x=np.arange(3), y=np.full(3, n, dtype=np.float32)))

    first = memo_figure(bars, 3, lang="en")
    assert memo_figure(bars, 3, lang="en") is first
    assert memo_figure(bars, 4, lang="en") is not first
    assert memo_figure(bars, 3, lang="zh") is not first
    assert calls == [(3, "en"), (4, "en"), (3, "zh")]
    # show_figure's two steps are done: margins reserved, arrays as lists, the revision set
    assert first._margins_reserved and first._drawn_once
    assert first.to_plotly_json()["data"][0]["y"] == [3.0, 3.0, 3.0]
    assert first.layout.datarevision


def test_another_function_with_the_same_arguments_is_another_figure():
    def one(n):
        return go.Figure(go.Bar(y=[n]))

    def two(n):
        return go.Figure(go.Scatter(y=[n]))

    assert memo_figure(one, 1).data[0].type == "bar"
    assert memo_figure(two, 1).data[0].type == "scatter"


def test_array_arguments_are_compared_by_value():
    a = memo_figure(pe_heatmap, pe_table(16, 8), lang="en")
    assert memo_figure(pe_heatmap, pe_table(16, 8), lang="en") is a
    assert memo_figure(pe_heatmap, pe_table(16, 10), lang="en") is not a


def test_a_themed_figure_is_kept_as_built():
    from figures.overview import DiagramSizes, pipeline_diagram

    sizes = DiagramSizes(d_model=64, num_heads=4, num_layers=2, d_ff=256, S=5, T=6)
    fig = memo_figure(pipeline_diagram, sizes, lang="en", themed=True)
    assert memo_figure(pipeline_diagram, DiagramSizes(64, 4, 2, 256, 5, 6), lang="en", themed=True) is fig
    assert not getattr(fig, "_drawn_once", False)  # Streamlit's theme restyles it: no margins of ours
    assert memo_figure(pipeline_diagram, sizes, lang="zh", themed=True) is not fig
    assert fig.to_plotly_json() == pipeline_diagram(sizes, lang="en").to_plotly_json()
