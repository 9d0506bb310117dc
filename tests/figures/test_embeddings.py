"""figures.embeddings on a real trace: heatmap values are the trace's tensors, tokens label the axes."""

import math

import numpy as np
import pytest
import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from figures.embeddings import (
    TOKEN_TICKS_MAX,
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
from i18n import t

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
    d = arrays.lookup.shape[1]
    x = fig.layout.xaxis  # d numbered columns, at most 8 labels 1-2-5 apart, never turned upright
    assert x.tickmode == "linear" and x.tick0 == 0 and x.tickangle == 0
    assert d / x.dtick <= 8 and str(x.dtick)[0] in "125"
    wide = embedding_heatmap(np.zeros((2, 512)), ["a", "b"])
    assert wide.layout.xaxis.dtick == 100  # 0, 100, …, 500
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
    assert [int(sum(t.y)) for t in hist.data] == [80, 80, 80]  # every entry counted once (5 tokens × 16)
    for trace, values in zip(hist.data, (arrays.lookup, arrays.scaled, arrays.pe), strict=True):
        expected, _ = np.histogram(values, bins=len(trace.x), range=(trace.x[0] - trace.width / 2,
                                                                     trace.x[-1] + trace.width / 2))
        np.testing.assert_array_equal(trace.y, expected)
    pe_bins = [x for x, n in zip(hist.data[2].x, hist.data[2].y, strict=True) if n]
    assert max(abs(x) for x in pe_bins) <= 1.0 + hist.data[2].width  # PE entries lie in [-1, 1]


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


# -- 中文 / English --------------------------------------------------------------------------------


def test_chinese_titles_and_labels(arrays):
    zh = "zh"
    heat = embedding_heatmap(arrays.lookup, TOKENS, lang=zh)
    assert heat.layout.xaxis.title.text == t("embeddings.axis.dimension_j", zh) == "维度 j"
    assert heat.layout.yaxis.title.text == t("embeddings.axis.token", zh)
    assert heat.data[0].hovertemplate.startswith("词元: %{y}<br>维度: %{x}<br>数值:")
    bars = norm_bars(arrays, TOKENS, lang=zh)
    assert bars.layout.yaxis.title.text == t("embeddings.axis.norm", zh)
    assert [b.name for b in bars.data] == [t("embeddings.series.lookup", zh), "E[id]·√16，乘以因子后",
                                           t("embeddings.series.pe", zh)]
    hist = entry_histogram(arrays, lang=zh)
    assert (hist.layout.xaxis.title.text, hist.layout.yaxis.title.text) == ("数值", "个数")
    assert hist.data[2].name == "位置编码的数值（在 [-1, 1] 内）"
    cos = cosine_heatmap(arrays.lookup, TOKENS, lang=zh)
    assert cos.data[0].colorbar.title.text == t("embeddings.axis.cosine", zh) == "余弦"
    pca = pca_scatter(arrays.lookup, TOKENS, lang=zh)
    assert pca.layout.xaxis.title.text.startswith("PC1（占方差的 ")
    rows = lookup_rows(TOKENS, IDS, arrays.lookup, n_tokens=2, n_dims=2, lang=zh)
    assert list(rows[0]) == ["位置", "词元", "编号", "E[id, 0]", "E[id, 1]", "…"]
    assert rows[1]["词元"] == "<b>" and rows[1]["编号"] == 9
    # English stays as it was
    assert embedding_heatmap(arrays.lookup, TOKENS).layout.xaxis.title.text == "dimension j"


# -- 512 tokens ------------------------------------------------------------------------------------


def test_long_sentences_stay_light():
    S, d = 300, 32
    rng = np.random.default_rng(0)
    x = rng.normal(size=(S, d))
    tokens = [f"t{i}" for i in range(S)]
    heat = embedding_heatmap(x, tokens)
    assert heat.layout.yaxis.tickmode == "auto"  # plotly thins 300 labels; the hover names each row
    assert heat.data[0].customdata is None and "%{y}" in heat.data[0].hovertemplate
    assert list(heat.data[0].y[:2]) == ["t0·0", "t1·1"]
    assert heat.layout.height <= 720
    np.testing.assert_allclose(np.asarray(heat.data[0].z), x, rtol=1e-6)  # float32 for big grids
    cos = cosine_heatmap(x, tokens)
    assert np.asarray(cos.data[0].z).dtype == np.float32 and np.asarray(cos.data[0].z).shape == (S, S)
    pca = pca_scatter(x, tokens)
    assert pca.data[0].mode == "markers" and pca.data[0].text is None  # 300 labels would hide the points
    assert pca.data[0].customdata[299] == "t299 ·299"
    assert S > TOKEN_TICKS_MAX


# -- an encoder that does not scale (BERT, all-MiniLM-L6-v2) -------------------------------------


@pytest.fixture(scope="module")
def minilm():
    from ui.page.settings import minilm_available

    if not minilm_available():
        pytest.fail("all-MiniLM-L6-v2 is an optional extra (requirements-minilm.txt)")
    from core.loading.bert import load_minilm

    model, tok = load_minilm()
    ids = tok.encode("Attention is all you need")
    return model, tok.convert_ids_to_tokens(ids), model.trace(torch.tensor([ids]))


def test_bert_arrays_are_not_scaled_and_the_sum_is_layer_normed(minilm):
    model, tokens, trace = minilm
    a = embedding_arrays(trace, model.config)
    assert not a.scale_embeddings and a.factor == 1.0 and a.positions == "learned"
    np.testing.assert_array_equal(a.scaled, a.lookup)  # no × √384
    emb = model.src_embed
    S = len(tokens)
    with torch.no_grad():
        np.testing.assert_allclose(a.pe, emb.position.weight[:S].double().numpy())
        # the reference: BERT's embedding, LayerNorm(E[id] + P[pos] + T[0]), from the model's own weights
        total = torch.tensor(a.lookup + a.pe) + emb.token_type.weight[0].double()
        ref = torch.nn.functional.layer_norm(total, (a.d_model,), emb.norm.weight.double(),
                                             emb.norm.bias.double(), model.config.layer_norm_eps)
    np.testing.assert_allclose(a.embedded, ref.numpy(), atol=1e-4)
    s = scale_summary(a)
    assert s.norm_scaled == pytest.approx(s.norm_lookup)
    names = [b.name for b in norm_bars(a, tokens).data]
    assert names == ["E[id], the table row", "LayerNorm(E + P + T), the encoder's input",
                     "P[pos], the learned position"]
    assert not any("√" in n for n in names)
    np.testing.assert_allclose(norm_bars(a, tokens).data[1].y, np.linalg.norm(a.embedded, axis=1))
    assert [h.name for h in entry_histogram(a, lang="zh").data][1:] == ["层归一化输出的数值", "P[pos] 的数值"]


@pytest.mark.parametrize("positions", ["rope", "alibi"])
def test_rope_and_alibi_add_no_position_row_so_no_position_series_is_drawn(positions):
    """RoPE and ALiBi act inside attention: the encoder reads lookup·√d alone, and no series of zeros
    claims a position row the model does not have."""
    config = ModelConfig(32, 32, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0,
                         positions=positions)
    trace = Transformer(config).eval().trace(torch.tensor([IDS]), None)
    a = embedding_arrays(trace, config)
    np.testing.assert_allclose(a.embedded, a.scaled, atol=1e-6)  # nothing was added
    bars = norm_bars(a, TOKENS).data
    assert [b.name for b in bars] == ["E[id], the table row", "E[id]·√16, scaled"]
    assert not a.adds_positions
    np.testing.assert_allclose(bars[1].y, trace.src_embedded[0].double().norm(dim=-1).numpy(), rtol=1e-5)
    assert [h.name for h in entry_histogram(a, lang="zh").data] == [
        t("embeddings.hist.lookup", "zh"), t("embeddings.hist.scaled", "zh", d=16)]


@pytest.mark.parametrize(("embed_norm", "name"), [
    (True, "LayerNorm(E + P + T), the encoder's input"), (False, "what the first layer reads (no √d_model)")])
def test_an_unscaled_model_names_its_input_by_its_own_embed_norm(embed_norm, name):
    """What the first layer reads is called a LayerNorm output only when the config has that LayerNorm."""
    config = ModelConfig(32, 32, d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0,
                         positions="learned", scale_embeddings=False, embed_norm=embed_norm)
    trace = Transformer(config).eval().trace(torch.tensor([IDS]), None)
    a = embedding_arrays(trace, config)
    assert a.embed_norm is embed_norm
    assert [b.name for b in norm_bars(a, TOKENS).data] == [
        "E[id], the table row", name, "P[pos], the learned position"]
    if not embed_norm:  # the sum itself: E[id] + P[pos]
        np.testing.assert_allclose(a.embedded, a.lookup + a.pe, atol=1e-6)


def test_without_a_config_the_arrays_are_the_papers_model(arrays):
    """No config: ModelConfig's defaults (scaled, sinusoidal, no LayerNorm on the sum)."""
    paper = ModelConfig(32, 32)
    assert (arrays.scale_embeddings, arrays.positions, arrays.embed_norm) == (
        paper.scale_embeddings, paper.positions, paper.embed_norm)
