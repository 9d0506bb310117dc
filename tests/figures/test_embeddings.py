"""figures.embeddings on a real trace: heatmap values are the trace's tensors, tokens label the axes."""

import math

import numpy as np
import pytest
import torch

from core.config import ModelConfig
from core.model import Transformer
from figures.embeddings import (
    cosine_heatmap,
    cosine_matrix,
    embedding_arrays,
    embedding_heatmap,
    entry_histogram,
    lookup_rows,
    norm_bars,
    pca_2d,
    pca_scatter,
    scale_summary,
)

TOKENS = ["注意", "<b>", "🙂", "the", "the"]
IDS = [7, 9, 11, 13, 13]  # the last two are the same token: same row, cosine 1


@pytest.fixture(scope="module")
def trace():
    config = ModelConfig(32, 32, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0)
    model = Transformer(config).eval()
    return model.trace(torch.tensor([IDS]), None)


@pytest.fixture(scope="module")
def arrays(trace):
    return embedding_arrays(trace)


def test_arrays_are_the_trace_tensors(trace, arrays):
    lookup = trace.src_token_embedding[0].double().numpy()
    np.testing.assert_allclose(arrays.lookup, lookup)
    np.testing.assert_allclose(arrays.scaled, lookup * math.sqrt(16))
    np.testing.assert_allclose(arrays.pe, trace.positional[:5].double().numpy())
    # the page's "sum" is the model's own input, to float32 precision
    np.testing.assert_allclose(arrays.scaled + arrays.pe, trace.src_embedded[0].double().numpy(), atol=1e-5)
    assert arrays.ids.tolist() == IDS and arrays.d_model == 16


def test_embedding_heatmap_values_and_token_axis(arrays):
    fig = embedding_heatmap(arrays.lookup, TOKENS)
    np.testing.assert_allclose(np.array(fig.data[0].z), arrays.lookup)
    assert list(fig.layout.yaxis.ticktext) == ["注意", "&lt;b&gt;", "🙂", "the", "the"]
    assert fig.data[0].zmid == 0 and fig.data[0].colorbar.title.text
    assert fig.layout.xaxis.tickmode == "auto"  # d numbered columns, not d crowded labels
    assert np.array(fig.data[0].z).shape == (5, 16)


def test_lookup_rows_show_token_id_and_row(arrays):
    rows = lookup_rows(TOKENS, IDS, arrays.lookup, n_tokens=3, n_dims=4)
    assert [(r["token"], r["id"]) for r in rows] == [("注意", 7), ("<b>", 9), ("🙂", 11)]
    assert rows[1]["E[id, 3]"] == round(float(arrays.lookup[1, 3]), 4)
    assert rows[0]["…"] == "…"


def test_scaling_summary_and_bars(arrays):
    s = scale_summary(arrays)
    assert s.norm_scaled == pytest.approx(4 * s.norm_lookup)  # sqrt(16)
    assert s.norm_pe == pytest.approx(math.sqrt(16 / 2), rel=1e-5)  # sin² + cos² = 1 per pair
    assert s.pe_share_with_scaling < s.pe_share_without_scaling
    fig = norm_bars(arrays, TOKENS)
    assert len(fig.data) == 3
    np.testing.assert_allclose(fig.data[1].y, np.linalg.norm(arrays.scaled, axis=1))
    assert list(fig.layout.xaxis.ticktext)[1] == "&lt;b&gt;"
    hist = entry_histogram(arrays)
    assert [len(t.x) for t in hist.data] == [80, 80, 80]
    assert max(abs(v) for v in hist.data[2].x) <= 1.0  # PE entries


def test_cosine_matrix_diagonal_is_one_and_repeated_tokens_match(arrays):
    fig = cosine_heatmap(arrays.lookup, TOKENS)
    z = np.array(fig.data[0].z)
    np.testing.assert_allclose(np.diag(z), 1.0, atol=1e-9)
    np.testing.assert_allclose(z, z.T)
    assert z[3, 4] == pytest.approx(1.0)  # the same id twice
    assert list(fig.layout.xaxis.ticktext) == list(fig.layout.yaxis.ticktext) == [
        "注意", "&lt;b&gt;", "🙂", "the", "the"]
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1.0, 1.0)
    # scaling does not change a cosine
    np.testing.assert_allclose(cosine_matrix(arrays.scaled), z, atol=1e-12)


def test_cosine_of_a_zero_row_is_zero_not_nan():
    z = cosine_matrix(np.array([[0.0, 0.0], [1.0, 0.0]]))
    assert np.isfinite(z).all() and z[1, 1] == 1.0 and z[0, 1] == 0.0


def test_pca_scatter_has_one_labelled_point_per_token(arrays):
    fig = pca_scatter(arrays.lookup, TOKENS)
    assert len(fig.data) == 1
    assert list(fig.data[0].text) == ["注意", "&lt;b&gt;", "🙂", "the", "the"]
    assert len(fig.data[0].x) == len(fig.data[0].y) == 5
    assert fig.data[0].customdata[1] == "&lt;b&gt; ·1"
    assert (fig.data[0].x[3], fig.data[0].y[3]) == pytest.approx((fig.data[0].x[4], fig.data[0].y[4]))


def test_pca_matches_the_top_singular_directions():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(6, 10))
    coords, ratio = pca_2d(x)
    centred = x - x.mean(0)
    s = np.linalg.svd(centred, compute_uv=False)
    np.testing.assert_allclose(np.abs(coords).sum(0) > 0, True)
    np.testing.assert_allclose(np.linalg.norm(coords, axis=0), s[:2], rtol=1e-9)
    assert ratio == pytest.approx(s[:2] ** 2 / (s**2).sum())


@pytest.mark.parametrize("n", [1, 2])
def test_pca_with_one_or_two_tokens(n):
    x = np.arange(n * 4, dtype=float).reshape(n, 4) + 1
    coords, ratio = pca_2d(x)
    assert coords.shape == (n, 2) and np.isfinite(coords).all()
    assert (coords[:, 1] == 0).all()  # at most one direction of spread
    fig = pca_scatter(x, ["a", "b"][:n])
    assert list(fig.data[0].text) == ["a", "b"][:n]


def test_pca_of_identical_rows_stays_at_the_origin():
    coords, _ = pca_2d(np.ones((3, 5)))
    assert (coords == 0).all()
