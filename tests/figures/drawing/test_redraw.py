"""figures.drawing.redraw.draw_once: the JSON a chart is sent as lets plotly.js see that a copy is the same,
and what is drawn does not change."""

import copy
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from figures.drawing.export import figure_csv
from figures.drawing.redraw import draw_once
from figures.drawing.style import apply_style, heatmap


def spec(fig) -> dict:
    """What Streamlit sends to the browser."""
    return json.loads(pio.to_json(fig, validate=False))


def token_heatmap(z=None) -> go.Figure:
    z = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 if z is None else z
    return heatmap(z, ["a", "b", "c", "d"], ["x", "y", "z"], title="weights")


def test_the_spec_holds_nothing_plotly_js_compares_by_identity():
    fig = token_heatmap()
    fig.add_trace(go.Bar(x=np.arange(3), y=np.linspace(0, 1, 3, dtype=np.float32), xaxis="x2", yaxis="y2"))
    fig.update_layout(meta={"pooled": [1, 1]})
    before = spec(fig)
    assert "template" in before["layout"] and "meta" in before["layout"]
    assert all("bdata" in json.dumps(trace) for trace in before["data"])  # numpy: base64 typed arrays
    after = spec(draw_once(fig))
    assert "template" not in after["layout"]
    assert after["layout"]["meta"] == [{"pooled": [1, 1]}]  # a list: compared like data
    heat, bars = after["data"]
    assert "bdata" in json.dumps(heat["z"])  # the cells stay compact: compared by datarevision
    assert bars["x"] == [0, 1, 2] and bars["y"] == [0.0, 0.5, 1.0]  # a bar's arrays: lists
    assert after["layout"]["datarevision"]


def test_values_are_the_same_numbers():
    y = (np.random.default_rng(0).standard_normal(7) / 3).astype(np.float32)
    after = spec(draw_once(go.Figure(go.Bar(y=y))))
    sent = np.asarray(after["data"][0]["y"], dtype=np.float64)
    assert np.array_equal(sent, y.astype(np.float64))  # every float32 exactly, no rounding


def test_a_copied_figure_holds_typed_array_specs_and_they_become_lists_too():
    fig = copy.deepcopy(go.Figure(go.Bar(y=np.arange(6, dtype=np.float32).reshape(2, 3)[1])))
    assert isinstance(fig.data[0].y, dict)  # {"dtype": "f4", "bdata": …}: what deepcopy leaves
    assert spec(draw_once(fig))["data"][0]["y"] == [3.0, 4.0, 5.0]


def test_a_reversed_axis_gets_the_range_plotly_would_have_given():
    fig = token_heatmap()
    assert spec(fig)["layout"]["yaxis"]["autorange"] == "reversed"
    y = spec(draw_once(fig))["layout"]["yaxis"]
    assert y["autorange"] is False
    assert y["range"] == [2.5, -0.5]  # 3 rows, first on top


def test_numeric_and_category_axes():
    fig = go.Figure(
        [
            go.Heatmap(z=np.ones((5, 2)), y=[0, 2, 4, 6, 8], xaxis="x", yaxis="y"),
            go.Bar(x=[1, 2, 3], y=["p", "q", "p"], orientation="h", xaxis="x2", yaxis="y2"),
        ]
    )
    fig.update_layout(
        yaxis={"autorange": "reversed"},
        yaxis2={"autorange": "reversed", "anchor": "x2"},
        xaxis2={"anchor": "y2"},
    )
    layout = spec(draw_once(fig))["layout"]
    assert layout["yaxis"]["range"] == [9.0, -1.0]  # cells 2 apart: one cell's half beyond each end
    assert layout["yaxis2"]["range"] == [1.5, -0.5]  # two categories


def test_legend_only_traces_do_not_count():
    """The Full model page's residual figure: bars at rows 0-2, plus legend entries with y=[None]."""
    bars = go.Bar(x=[3, 1, 2], y=[0, 1, 2], orientation="h")
    fig = go.Figure([bars, go.Bar(x=[None], y=[None], name="kind")])
    fig.update_layout(yaxis={"autorange": "reversed"})
    assert spec(draw_once(fig))["layout"]["yaxis"]["range"] == [2.5, -0.5]


@pytest.mark.parametrize(
    "trace",
    [
        go.Scatter(x=[1, 2], y=[3, 4]),  # plotly pads a scatter's range its own way
        go.Heatmap(z=np.ones((2, 2)), y=[0, 1, 2]),  # the cells' edges, not their centres
    ],
)
def test_axes_it_cannot_work_out_are_left_to_plotly(trace):
    fig = go.Figure(trace).update_layout(yaxis={"autorange": "reversed"})
    assert spec(draw_once(fig))["layout"]["yaxis"]["autorange"] == "reversed"


def test_the_revision_follows_the_data():
    def revision(z):
        return spec(draw_once(token_heatmap(z)))["layout"]["datarevision"]

    z = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert revision(z) == revision(z.copy())
    changed = z.copy()
    changed[1, 2] += 1
    assert revision(changed) != revision(z)


def test_downloads_and_look_are_unchanged():
    fig = apply_style(token_heatmap())
    csv, layout = figure_csv(fig), spec(fig)["layout"]
    draw_once(fig)
    assert figure_csv(fig) == csv
    after = spec(fig)["layout"]
    for key in ("font", "margin", "height", "paper_bgcolor", "plot_bgcolor", "hoverlabel"):
        assert after.get(key) == layout.get(key)
    # the template our style sets is empty (plotly.py writes it as one bare scatter): leaving it out
    # changes nothing
    template = layout["template"]
    assert not template.get("layout")
    assert all(d == {"type": kind} for kind, ds in template.get("data", {}).items() for d in ds)


def test_a_second_pass_changes_nothing():
    fig = draw_once(token_heatmap())
    before = spec(fig)
    assert draw_once(fig) is fig and spec(fig) == before
