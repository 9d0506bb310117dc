"""figures.drawing.export: a figure's CSV holds exactly the figure's numbers and labels, safely."""

from __future__ import annotations

import base64
import csv
import io

import numpy as np
import plotly.graph_objects as go
import pytest

from figures.drawing.export import HEADER, cell, figure_csv, plain_label, safe_text
from figures.drawing.style import heatmap

CJK_TOKENS = ["注意力", "就是", "一切", "注意力"]  # a repeated token must keep its own row


def rows_of(fig) -> list[dict]:
    text = figure_csv(fig)
    reader = csv.DictReader(io.StringIO(text))
    assert tuple(reader.fieldnames) == HEADER
    return list(reader)


def test_header_row_and_nothing_else_for_an_empty_figure():
    assert figure_csv(go.Figure()).splitlines() == [",".join(HEADER)]


def test_heatmap_long_format_equals_the_figure_with_cjk_labels():
    z = np.arange(12, dtype=float).reshape(4, 3) / 7  # rows: queries, columns: keys
    fig = heatmap(z, ["a", "注意力", "<b>"], CJK_TOKENS, title="t")
    rows = rows_of(fig)
    assert len(rows) == z.size
    for r in rows:
        i, j = int(r["row"]), int(r["column"])
        assert r["type"] == "heatmap"
        assert float(r["z"]) == z[i, j]  # exact: repr round-trips a float64
        assert r["y"] == CJK_TOKENS[i]  # the tick text, not the position 0..3
        assert r["x"] == ["a", "注意力", "<b>"][j]  # escaped for plotly, plain text in the CSV
    # the two 注意力 rows stay apart by their row index
    assert {r["row"] for r in rows if r["y"] == "注意力"} == {"0", "3"}


def test_attention_heads_figure_matches_the_trace(small_run):
    import figures.attention as fa

    attn = fa.attention_of(small_run.trace, "encoder", 0)
    tokens = small_run.src_tokens
    fig = fa.heads_figure(attn, tokens, tokens)
    rows = rows_of(fig)
    weights = attn.weights[0].numpy()  # (h, S, S)
    h, S, _ = weights.shape
    assert len(rows) == h * S * S
    by_trace: dict[str, list[dict]] = {}
    for r in rows:
        by_trace.setdefault(r["trace"], []).append(r)
    assert len(by_trace) == h
    for j, (_, cells) in enumerate(by_trace.items()):
        got = np.zeros((S, S), dtype=np.float32)
        for r in cells:
            got[int(r["row"]), int(r["column"])] = np.float32(r["z"])
            assert r["y"] == fa.token_label(tokens[int(r["row"])])
            assert r["x"] == fa.token_label(tokens[int(r["column"])])
        np.testing.assert_array_equal(got, weights[j])  # float32 written with all its digits


def test_bar_and_scatter_points_equal_the_figure():
    from figures.model import topk_figure

    probs = np.array([0.1, 0.6, 0.3])
    labels = ["我", "=A1+1", "-1"]
    fig = topk_figure(probs, labels, 3, reference=np.array([0.2, 0.5, 0.3]))
    rows = rows_of(fig)
    bars = [r for r in rows if r["type"] == "bar"]
    marks = [r for r in rows if r["type"] == "scatter"]
    # most probable first: ids 1, 2, 0; a horizontal bar has its value in x, its token in y
    assert [float(r["x"]) for r in bars] == [0.6, 0.3, 0.1]
    assert [r["y"] for r in bars] == ["'=A1+1", "'-1", "我"]
    assert [float(r["x"]) for r in marks] == [0.5, 0.3, 0.2]
    assert [r["row"] for r in bars] == ["0", "1", "2"] and all(r["column"] == "" for r in bars)


def test_scatter_text_and_legend_dummies():
    fig = go.Figure(
        [
            go.Scatter(x=[0, 1.5], y=[-2, 3], text=["<b>x</b>", "@who"], mode="text", name="labels"),
            go.Bar(x=[None], y=[None], name="legend only"),
        ]
    )
    rows = rows_of(fig)
    assert [(r["trace"], r["x"], r["y"], r["text"]) for r in rows] == [
        ("labels", "0.0", "-2", "x"),  # a real tag is markup: dropped; negative numbers stay numbers
        ("labels", "1.5", "3", "'@who"),
    ]


@pytest.mark.parametrize("text", ["=1+1", "+1", "-cmd", "@SUM(A1)", "\tx", "\rx"])
def test_text_that_a_spreadsheet_would_run_is_prefixed(text):
    assert safe_text(text) == "'" + text


@pytest.mark.parametrize("text", ["=1+1", "+1", "-cmd", "@SUM(A1)"])
def test_token_labels_that_a_spreadsheet_would_run_are_prefixed(text):
    fig = heatmap([[1.0]], [text], [text])
    (row,) = rows_of(fig)
    assert row["x"].startswith("'") and row["y"].startswith("'")


def test_harmless_text_and_numbers_are_unchanged():
    assert safe_text("注意力") == "注意力"
    assert cell(-0.5) == "-0.5"
    assert cell(np.float32(1 / 3)) == "0.33333334"  # float32's own shortest digits
    assert cell(np.int64(-3)) == "-3"
    assert cell(float("nan")) == "" and cell(None) == ""
    assert plain_label("&lt;script&gt;alert(1)&lt;/script&gt;") == "<script>alert(1)</script>"


def test_missing_cells_are_empty():
    z = np.array([[1.0, np.nan]], dtype=np.float32)
    fig = go.Figure(go.Heatmap(z=z, x=["a", "b"], y=["r"]))
    assert [r["z"] for r in rows_of(fig)] == ["1.0", ""]
    fig.data[0].z = [[1.0, None]]
    assert [r["z"] for r in rows_of(fig)] == ["1.0", ""]


def test_plotly_typed_arrays_are_read():
    """A figure rebuilt from plotly's JSON keeps arrays in binary form: {"dtype", "bdata", "shape"}."""
    data = np.array([[0.25, -1.5], [3.0, 4.0]], dtype="f4")
    z = {"dtype": "f4", "bdata": base64.b64encode(data.tobytes()).decode(), "shape": "2, 2"}
    fig = go.Figure(go.Heatmap(z=z))
    assert [(r["row"], r["column"], r["z"]) for r in rows_of(fig)] == [
        ("0", "0", "0.25"), ("0", "1", "-1.5"), ("1", "0", "3.0"), ("1", "1", "4.0"),
    ]  # fmt: skip


def test_heatmap_without_x_uses_x0_dx_and_ticks():
    fig = go.Figure(go.Heatmap(z=[[1, 2, 3]], x0=10, dx=5))
    assert [r["x"] for r in rows_of(fig)] == ["10", "15", "20"]


@pytest.fixture(scope="module")
def small_run():
    from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline

    pipe = load_pipeline(PipelineSettings(weights="random", d_model=16, num_heads=2, num_layers=1, d_ff=32))
    return run_pipeline(pipe, "注意力就是一切 the the", "")
