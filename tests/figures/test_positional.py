"""figures.positional: the drawn numbers are sinusoidal_encoding's, offsets give constant diagonals."""

import math

import numpy as np
import pytest
import torch

from core.config import ModelConfig
from core.model import Transformer
from core.positional import sinusoidal_encoding
from figures.embeddings import embedding_arrays
from figures.positional import (
    MAX_DIMS_SHOWN,
    check_dims,
    check_max_pos,
    default_dims,
    dim_label,
    gram_heatmap,
    offset_dot_curves,
    offset_dots,
    pe_curves,
    pe_gram,
    pe_heatmap,
    pe_table,
    period,
    rotation_error,
    rotation_matrix,
    sum_heatmaps,
    training_length,
)


def test_heatmap_is_the_models_table():
    fig = pe_heatmap(pe_table(50, 32))
    z = np.array(fig.data[0].z)
    np.testing.assert_allclose(z, sinusoidal_encoding(50, 32).double().numpy())
    assert z.shape == (50, 32)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1.0, 1.0)
    assert fig.data[0].colorbar.title.text == "PE"


def test_curves_one_line_per_dimension_with_the_tables_values():
    fig = pe_curves(16, [0, 5, 15], 300, trained_len=9, sentence_len=4)
    assert [t.name for t in fig.data] == [dim_label(0, 16), dim_label(5, 16), dim_label(15, 16)]
    table = sinusoidal_encoding(300, 16).double().numpy()
    for trace, dim in zip(fig.data, [0, 5, 15], strict=True):
        assert list(trace.x) == list(range(300))
        np.testing.assert_allclose(trace.y, table[:, dim])
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert "seen in training (0–8)" in texts and "4 tokens" in texts


def test_dimension_labels_name_sin_cos_and_period():
    assert dim_label(0, 64) == "dim 0 (sin, period 6.3)"
    assert dim_label(1, 64).startswith("dim 1 (cos")
    assert period(62, 64) == pytest.approx(2 * math.pi * 10000 ** (62 / 64))
    assert default_dims(16) == [0, 1, 2, 8] and default_dims(512) == [0, 1, 64, 256]


def test_gram_diagonals_are_constant():
    pe = pe_table(40, 64)
    gram = np.array(gram_heatmap(pe).data[0].z)
    np.testing.assert_allclose(gram, pe_gram(pe))
    np.testing.assert_allclose(np.diag(gram), 32.0, atol=1e-4)  # d/2 on the main diagonal
    for k in range(-39, 40):
        diagonal = np.diagonal(gram, offset=k)
        np.testing.assert_allclose(diagonal, diagonal[0], atol=1e-4)
    assert not np.allclose(gram[0, 1], gram[0, 5])  # but it does vary with the offset


def test_gram_is_not_toeplitz_for_odd_d_model():
    gram = pe_gram(pe_table(400, 3))
    d = np.diagonal(gram, offset=1)
    assert np.ptp(d) > 0.1  # the lone sine makes it depend on p


def test_offset_curves_overlap_exactly():
    dots = offset_dots(pe_table(200, 32), [0, 10, 50], 40)
    np.testing.assert_allclose(dots[10], dots[0], atol=1e-4)
    np.testing.assert_allclose(dots[50], dots[0], atol=1e-4)
    fig = offset_dot_curves(32, starts=(0, 10, 25), max_offset=30)
    assert [t.name for t in fig.data] == ["p = 0", "p = 10", "p = 25"]
    for trace in fig.data[1:]:
        np.testing.assert_allclose(trace.y, fig.data[0].y, atol=1e-4)
    assert fig.data[0].y[0] == pytest.approx(16.0, abs=1e-4)


@pytest.mark.parametrize("k", [1, 5, 37])
def test_shift_is_a_rotation(k):
    m = rotation_matrix(16, k)
    np.testing.assert_allclose(m @ m.T, np.eye(16), atol=1e-12)  # orthogonal: a rotation
    assert rotation_error(16, k) < 1e-5


def test_sum_heatmaps_are_embedding_pe_and_model_input():
    config = ModelConfig(20, 20, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0)
    model = Transformer(config).eval()
    trace = model.trace(torch.tensor([[5, 6, 7]]), None)
    a = embedding_arrays(trace)
    tokens = ["中", "<b>", "🙂"]
    fig = sum_heatmaps(a.scaled, a.pe, a.embedded, tokens)
    assert len(fig.data) == 3
    np.testing.assert_allclose(fig.data[0].z, trace.src_token_embedding[0].double().numpy() * 4)
    np.testing.assert_allclose(fig.data[1].z, sinusoidal_encoding(3, 16).double().numpy())
    np.testing.assert_allclose(fig.data[2].z, trace.src_embedded[0].double().numpy())
    assert list(fig.layout.yaxis.ticktext) == ["中", "&lt;b&gt;", "🙂"]
    assert all(t.coloraxis == "coloraxis" for t in fig.data)  # one shared scale


def test_url_values_are_checked():
    assert check_dims(["3", "5", "3"], 16) == ([3, 5], None)
    dims, note = check_dims(["abc", "16", "-1", "4"], 16)
    assert dims == [4]
    assert note.startswith("Ignored pe_dims=`abc`, `16`, `-1`")
    dims, note = check_dims(["<script>"], 16)
    assert dims == default_dims(16) and "showing dimensions [0, 1, 2, 8]" in note
    dims, note = check_dims([str(i) for i in range(12)], 16)
    assert len(dims) == MAX_DIMS_SHOWN and "only the first" in note
    assert check_dims([], 16) == (default_dims(16), None)
    assert check_max_pos(None) == (128, None)
    assert check_max_pos("512") == (512, None)
    for bad in ("abc", "99999", "3", "1e3", "-20", "٣٢"):
        value, note = check_max_pos(bad)
        assert value == 128 and note.startswith(f"Ignored pe_max_pos=`{bad}`")


def test_training_length():
    assert training_length("random", {}) is None
    assert training_length("trained", {}) == 9  # 8 characters, [BOS] + 8 syllables
    assert training_length("trained", {"max_src_len": 12, "max_tgt_len": 13}) == 13
