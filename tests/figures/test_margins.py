"""Margins reserved up front for tick labels, titles, colour bars and legends (figures.drawing.style).

tests/browser/test_margins.py checks the same estimates against plotly's own automargin in Chromium.
"""

import plotly.graph_objects as go

from figures.drawing.style import BASE_FONT_SIZE, label_px, reserve_figure_margins, reserve_margins


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
    bare = {"margin": {"r": 10}, "xaxis": {"showticklabels": False}}  # no end label sticking out
    assert reserve_margins(bare, lines[:1])["r"] == 10  # one trace: no legend


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


def test_the_end_labels_of_an_x_axis_stick_out_by_half_their_width():
    wide_end = {"xaxis": {"ticktext": ["a", "attention"], "tickangle": 0}, "margin": {"l": 0, "r": 0}}
    margin = reserve_margins(wide_end, [])
    assert margin["r"] > label_px("attention") / 2 > margin["l"] - 12 > 0
    numbers = reserve_margins({"xaxis": {"range": [0, 2000]}, "margin": {"r": 0}}, [])  # "2000" at the end
    assert numbers["r"] >= label_px("2000") / 2 + 12
    inner = {"xaxis": {"ticktext": ["attention"], "domain": [0, 0.5]}, "margin": {"r": 0}}
    assert reserve_margins(inner, [])["r"] == 0  # another plot sits at the right


def test_a_shared_colour_axis_gets_room_and_an_upright_title_needs_only_a_line():
    heat = [{"type": "heatmap", "z": [[0]], "coloraxis": "coloraxis"}]
    across = {"coloraxis": {"colorbar": {"title": {"text": "bias added to the score"}}}, "margin": {"r": 0}}
    upright = {"coloraxis": {"colorbar": {"title": {"text": "bias added to the score", "side": "right"}}},
               "margin": {"r": 0}}
    assert reserve_margins(across, heat)["r"] > label_px("bias added to the score")
    assert label_px("bias added to the score") > reserve_margins(upright, heat)["r"] > 2 * BASE_FONT_SIZE
    hidden = {"coloraxis": {"showscale": False, "colorbar": {"title": {"text": "x"}}}, "margin": {"r": 0}}
    assert reserve_margins(hidden, heat)["r"] == 0


def test_a_legend_row_wraps_at_the_width_the_page_gives_the_figure():
    traces = [{"type": "scatter", "name": f"head {h} (m = 1/{2 ** h})"} for h in range(1, 9)]
    legend = {"legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom"},
              "margin": {"l": 0, "r": 0, "t": 0}}
    full, half = reserve_margins(legend, traces, width=800), reserve_margins(legend, traces, width=400)
    assert half["t"] > full["t"] >= 3 * BASE_FONT_SIZE  # more rows in a column half as wide
    two = reserve_margins(legend, traces[:2], width=800)
    assert two["t"] == 3 * BASE_FONT_SIZE  # two short entries: one row


def test_a_legend_below_clears_its_distance_from_the_plot():
    traces = [{"type": "bar", "name": "p"}, {"type": "scatter", "name": "T = 1"}]

    def below(y: float) -> dict:
        layout = {"legend": {"orientation": "h", "y": y}, "height": 400, "margin": {"b": 0}}
        return reserve_margins(layout, traces)

    near, far = below(-0.05), below(-0.3)
    assert far["b"] > near["b"] + 0.2 * (400 - far["b"])  # y is a fraction of the plot's height


def test_narrow_figures_expect_upright_x_labels():
    tokens = {"xaxis": {"ticktext": ["Attention", "is", "all", "you", "need", "注意力"]}}
    assert reserve_margins(tokens, [], width=300)["b"] > reserve_margins(tokens, [], width=1200)["b"] + 50
