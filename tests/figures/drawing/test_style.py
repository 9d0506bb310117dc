"""figures.drawing.style: escaping for plotly labels, unique token axes, projector defaults."""

import numpy as np
import pytest

from figures.drawing.style import (
    BASE_FONT_SIZE,
    FONT_FAMILY,
    escape_label,
    heatmap,
    token_label,
    unique_labels,
)
from figures.overview import DiagramSizes, pipeline_diagram, shapes_text


def test_escape_label_keeps_markup_literal():
    assert escape_label("<b>x</b> & <script>") == "&lt;b&gt;x&lt;/b&gt; &amp; &lt;script&gt;"
    assert escape_label("注意力 🙂") == "注意力 🙂"


def test_token_label_shows_whitespace_and_control_characters():
    assert token_label(" a\n") == "␣a⏎"
    assert token_label("\x00") == "\\x00"
    assert token_label("") == "∅"
    assert token_label("x" * 40).endswith("…")


def test_unique_labels_keep_duplicates_apart():
    assert unique_labels(["the", "cat", "the"]) == ["the·0", "cat·1", "the·2"]


def test_heatmap_uses_positions_so_duplicate_tokens_keep_their_rows():
    tokens = ["the", "<b>", "the"]
    fig = heatmap(np.eye(3), tokens, tokens, title="w", zmin=0, zmax=1, colorbar_title="weight")
    assert list(fig.layout.xaxis.tickvals) == [0, 1, 2]
    assert list(fig.layout.xaxis.ticktext) == ["the", "&lt;b&gt;", "the"]
    assert fig.data[0].colorbar.title.text == "weight"
    assert "%{z:.4f}" in fig.data[0].hovertemplate
    assert fig.layout.font.family.startswith('"Noto Sans CJK SC"')
    assert fig.layout.font.size >= 16


def test_heatmap_rejects_a_shape_mismatch():
    with pytest.raises(ValueError, match="shape"):
        heatmap(np.zeros((2, 3)), ["a", "b"], ["a", "b"])


def test_style_constants_are_projector_sized():
    assert FONT_FAMILY.startswith('"Noto Sans CJK SC"')
    assert BASE_FONT_SIZE >= 16


def test_overview_diagram_shows_real_shapes():
    sizes = DiagramSizes(d_model=128, num_heads=8, num_layers=3, d_ff=512, S=9, T=5, tgt_vocab=300)
    assert shapes_text(sizes)["src_embedded"] == "(1, 9, 128)"
    assert shapes_text(sizes)["probs"] == "(1, 5, 300)"
    texts = " ".join(a.text for a in pipeline_diagram(sizes).layout.annotations)
    assert "(1, 9, 128)" in texts and "3× Encoder layer" in texts and "d_k=16" in texts
