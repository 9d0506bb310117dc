"""Margins reserved up front for tick labels, titles, colour bars and legends (figures.style).

tests/browser/test_margins.py checks the same estimates against plotly's own automargin in Chromium.
"""

import plotly.graph_objects as go

from figures.style import BASE_FONT_SIZE, label_px, reserve_figure_margins, reserve_margins


def test_wide_characters_count_one_em_and_markup_escapes_count_as_one_character():
    assert label_px("注意力") == 3 * BASE_FONT_SIZE
    assert label_px("😀") == BASE_FONT_SIZE
    assert label_px("abc") < label_px("注意力")
    assert label_px("&lt;b&gt;") == label_px("<b>")  # labels arrive escaped: "<b>" is 3 characters


def test_long_y_labels_widen_the_left_margin_and_rotated_x_labels_the_bottom():
    short = reserve_margins({"yaxis": {"ticktext": ["a"]}, "margin": {"l": 10}}, [])
    wide = {"yaxis": {"ticktext": ["a", "LayerNorm(x + Sublayer(x))"]}, "margin": {"l": 10}}
    long = reserve_margins(wide, [])
    assert long["l"] > short["l"] + label_px("LayerNorm(x + Sublayer(x))") - label_px("a") - 1
    flat = reserve_margins({"xaxis": {"ticktext": ["注意力就是一切"]}}, [])
    upright = reserve_margins({"xaxis": {"ticktext": ["注意力就是一切"], "tickangle": -90}}, [])
    assert upright["b"] > flat["b"] + 5 * BASE_FONT_SIZE  # 7 characters tall instead of one line
    titled = reserve_margins({"xaxis": {"ticktext": ["注意力就是一切"], "title": {"text": "key"}}}, [])
    assert titled["b"] > flat["b"]


def test_category_axes_are_measured_from_their_own_traces():
    traces = [{"type": "bar", "x": ["x"], "y": [1]}, {"type": "bar", "x": ["a very long name"], "y": [1],
                                                      "xaxis": "x2", "yaxis": "y2"}]
    layout = {"xaxis": {"type": "category", "tickangle": 90}, "xaxis2": {"type": "category", "tickangle": 90}}
    one = reserve_margins({"xaxis": layout["xaxis"]}, traces[:1])
    both = reserve_margins(layout, traces)
    assert both["b"] > one["b"]


def test_inner_subplots_and_hidden_labels_push_nothing_and_margins_never_shrink():
    inner = {"xaxis2": {"domain": [0.5, 1]}, "yaxis2": {"anchor": "x2", "ticktext": ["a long long label"]}}
    assert reserve_margins({**inner, "margin": {"l": 10}}, [])["l"] == 10  # its labels sit between plots
    hidden = {"yaxis": {"ticktext": ["a long long label"], "showticklabels": False}, "margin": {"l": 10}}
    assert reserve_margins(hidden, [])["l"] == 10
    assert reserve_margins({"yaxis": {"ticktext": ["a"]}, "margin": {"l": 500}}, [])["l"] == 500


def test_colour_bars_and_legends_get_room():
    heat = [{"type": "heatmap", "z": [[0]], "colorbar": {"title": {"text": "attention weight"}}}]
    assert reserve_margins({"margin": {"r": 10}}, heat)["r"] > label_px("attention weight")
    assert reserve_margins({"margin": {"r": 10}}, [{**heat[0], "showscale": False}])["r"] == 10
    lines = [{"type": "scatter", "name": "post-norm"}, {"type": "scatter", "name": "pre-norm"}]
    assert reserve_margins({"margin": {"r": 10}}, lines)["r"] > label_px("post-norm")
    above = reserve_margins({"legend": {"orientation": "h", "y": 1.1}, "margin": {"t": 10}}, lines)
    below = reserve_margins({"legend": {"orientation": "h", "y": -0.2}, "margin": {"b": 10}}, lines)
    assert above["t"] > 2 * BASE_FONT_SIZE and below["b"] > BASE_FONT_SIZE + 10
    assert reserve_margins({"margin": {"r": 10}}, lines[:1])["r"] == 10  # one trace: no legend


def test_a_plotly_object_figure_gets_the_same_margins():
    fig = go.Figure(go.Bar(x=["注意", "力"], y=[1, 2]), layout={"margin": {"l": 5, "b": 5}})
    expected = reserve_margins(fig.layout.to_plotly_json(), [t.to_plotly_json() for t in fig.data])
    assert reserve_figure_margins(fig) is fig
    assert fig.layout.margin.l == expected["l"] > 5 and fig.layout.margin.b == expected["b"] > 5


def test_a_legend_of_one_entry_per_row_below_the_plot_reserves_every_row():
    names = ("残差流", "子层输出", "层归一化之后")
    traces = [{"type": "bar", "name": name, "x": [1], "y": [1]} for name in names]
    row = {"orientation": "h", "y": -0.2, "x": 0.0}
    one_row = reserve_margins({"legend": row}, traces)
    stacked = reserve_margins({"legend": {**row, "entrywidth": 1, "entrywidthmode": "fraction"}}, traces)
    halves = reserve_margins({"legend": {**row, "entrywidth": 0.5, "entrywidthmode": "fraction"}}, traces)
    assert stacked["b"] - one_row["b"] == 2 * (halves["b"] - one_row["b"]) > BASE_FONT_SIZE  # 3 rows, 2 rows
