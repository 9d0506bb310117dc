"""figures.attention on a real trace: the numbers on screen are the trace's, one heatmap per head."""

import math

import numpy as np
import pytest
import torch

import figures.attention as fa
import figures.drawing.toolbox as toolbox
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from figures.drawing.style import token_label, unique_labels

SRC = ["<b>", "你", "好", "<b>", "🙂"]  # a repeated token, an HTML-looking token, CJK and emoji
TGT = ["[BOS]", "nǐ", "hǎo", "<i>"]


pytestmark = pytest.mark.usefixtures("plotly_validation")


@pytest.fixture(scope="module")
def model():
    return Transformer(
        ModelConfig(20, 20, d_model=16, num_heads=4, num_layers=2, d_ff=32, dropout=0.0)
    ).eval()


@pytest.fixture(scope="module")
def trace(model):
    src = torch.tensor([[5, 6, 7, 5, 8]])
    tgt = torch.tensor([[2, 9, 10, 11]])
    return model.trace(src, tgt)


def spec_z(fig, i=0) -> np.ndarray:
    return np.asarray(fig.data[i].z, dtype=np.float64)


@pytest.mark.parametrize("kind", list(fa.KINDS))
def test_one_heatmap_per_head_with_the_trace_weights(trace, kind):
    attn = fa.attention_of(trace, kind, 1)
    q, k = fa.tokens_of(kind, SRC, TGT)
    fig = fa.heads_figure(attn, q, k, selected=2)
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    assert len(heatmaps) == 4  # num_heads
    for j, t in enumerate(heatmaps):
        np.testing.assert_array_equal(np.asarray(t.z), attn.weights[0, j].numpy())
        assert list(t.y) == unique_labels(q) and list(t.x) == unique_labels(k)
    assert list(fig.layout.xaxis.ticktext) == [token_label(t) for t in k]
    assert list(fig.layout.yaxis.ticktext) == [token_label(t) for t in q]
    expected = {"encoder": (5, 5), "decoder": (4, 4), "cross": (4, 5)}[kind]  # cross: tgt queries × src keys
    assert np.asarray(heatmaps[0].z).shape == expected
    assert "head 3 (step by step)" in [a.text for a in fig.layout.annotations]


def test_tokens_are_escaped_never_html(trace):
    fig = fa.heads_figure(trace.encoder[0].self_attn, SRC, SRC)
    ticks = list(fig.layout.xaxis.ticktext)
    assert ticks[0] == "&lt;b&gt;" and "<b>" not in " ".join(ticks)
    assert not any("<b>" in str(v) for t in fig.data for v in t.x)
    bars = fa.query_bars(trace.encoder[0].self_attn, 0, SRC, SRC)
    assert "<b>" not in bars.data[0].hovertemplate.replace("<br>", "")


def test_steps_are_the_trace_numbers(model, trace):
    kind, layer, head = "cross", 1, 2
    attn = fa.attention_of(trace, kind, layer)
    s = fa.head_steps(attn, head)
    w = fa.head_weights(model, kind, layer, head)
    d_k = 4
    mha = model.decoder.layers[layer].cross_attn
    np.testing.assert_array_equal(w.w_q, mha.w_q.weight[head * d_k : (head + 1) * d_k].detach().numpy().T)
    # Q = X W_Q + b_Q and K = memory W_K + b_K, from the head's slice, equal the trace's q and k
    np.testing.assert_allclose(s.x_q @ w.w_q + w.b_q, attn.q[0, head].numpy(), atol=1e-5)
    np.testing.assert_allclose(s.x_kv @ w.w_k + w.b_k, attn.k[0, head].numpy(), atol=1e-5)
    np.testing.assert_allclose(s.x_kv @ w.w_v + w.b_v, attn.v[0, head].numpy(), atol=1e-5)
    np.testing.assert_array_equal(s.x_kv, trace.memory[0].numpy())  # cross: keys from the memory
    np.testing.assert_allclose(s.qk, s.q @ s.k.T, atol=1e-5)
    np.testing.assert_allclose(s.scores, s.q @ s.k.T / math.sqrt(d_k), atol=1e-5)
    np.testing.assert_allclose(s.head_out, s.weights @ s.v, atol=1e-5)
    np.testing.assert_allclose(s.concat @ w.w_o + w.b_o, s.output, atol=1e-5)
    figs = fa.step_figures(s, w, fa.tokens_of(kind, SRC, TGT)[0], SRC)
    for name, tensor in [
        ("q", attn.q[0, head]),
        ("k", attn.k[0, head]),
        ("v", attn.v[0, head]),
        ("scores", attn.scores[0, head]),
        ("weights", attn.weights[0, head]),
        ("head_out", attn.heads[0, head]),
        ("output", attn.output[0]),
        ("x_q", attn.query_input[0]),
    ]:
        np.testing.assert_array_equal(spec_z(figs[name]), tensor.numpy().astype(np.float64), err_msg=name)
    np.testing.assert_allclose(spec_z(figs["qk"]), s.q @ s.k.T, atol=1e-5)
    np.testing.assert_array_equal(spec_z(figs["w_o"]), mha.w_o.weight.detach().numpy().T)
    np.testing.assert_array_equal(spec_z(figs["mask"]), attn.mask[0, head].numpy().astype(float))
    assert figs["weights"].data[0].texttemplate  # 4 × 5: values written in the cells


def test_decoder_mask_is_causal_and_masked_weights_are_zero(trace):
    s = fa.head_steps(fa.attention_of(trace, "decoder", 0), 1)
    assert (s.mask == np.tril(np.ones((4, 4), dtype=bool))).all()
    assert (s.weights[~s.mask] == 0).all()
    np.testing.assert_allclose(s.weights.sum(-1), 1, atol=1e-6)


def test_big_matrices_get_hover_not_cell_text():
    big = toolbox.matrix_figure(
        np.zeros((13, 64)),
        [f"t{i}" for i in range(13)],
        64,
        title="X",
        row_title="token",
        col_title="dimension",
    )
    assert not big.data[0].texttemplate and "%{z:" in big.data[0].hovertemplate
    assert toolbox.annotated_columns(big) == 0
    small = toolbox.matrix_figure(
        np.ones((3, 3)), ["a", "b", "c"], 3, title="s", row_title="r", col_title="c"
    )
    assert toolbox.annotated_columns(small) == 3


@pytest.mark.parametrize("kind", list(fa.KINDS))
def test_grid_has_layers_times_heads(trace, kind):
    q_tokens, k_tokens = fa.tokens_of(kind, SRC, TGT)
    fig = fa.grid_figure(trace, kind, q_tokens=q_tokens, k_tokens=k_tokens)
    assert len(fig.data) == 1  # one heatmap: 48 traces were ~0.3 s of redrawing in Chromium
    z = np.asarray(fig.data[0].z, dtype=float)
    n_q, n_k = len(q_tokens), len(k_tokens)
    for layer in range(2):
        for head in range(4):
            block = z[fa.grid_block(layer, n_q), fa.grid_block(head, n_k)]
            np.testing.assert_array_equal(block, fa.attention_of(trace, kind, layer).weights[0, head].numpy())
    assert np.isnan(z).sum() == z.size - 2 * 4 * n_q * n_k  # everything else is a gap, without hover
    assert fig.data[0].hoverongaps is False
    # the hover names the layer, head, query and key of a cell: layer 2, head 4, last query, first key
    row, col = fa.grid_block(1, n_q).stop - 1, fa.grid_block(3, n_k).start
    assert fig.data[0].y[row] == f"layer 2 · query: {token_label(q_tokens[-1])}·{n_q - 1}"
    assert fig.data[0].x[col] == f"head 4 · key: {token_label(k_tokens[0])}·0"
    assert len(set(fig.data[0].x)) == z.shape[1] and len(set(fig.data[0].y)) == z.shape[0]
    assert [a.text for a in fig.layout.annotations] == [
        "head 1",
        "head 2",
        "head 3",
        "head 4",
        "layer 1",
        "layer 2",
    ]
    heads = [a.x for a in fig.layout.annotations[:4]]
    assert heads == sorted(heads) and 0 < heads[0] < heads[-1] < 1


def test_query_bars(trace):
    attn = trace.decoder[0].self_attn
    one = fa.query_bars(attn, 1, TGT, TGT, mode="head", head=2)
    np.testing.assert_array_equal(np.asarray(one.data[0].y), attn.weights[0, 2, 1].numpy())
    assert list(one.layout.xaxis.ticktext) == [token_label(t) for t in TGT]
    mean = fa.query_bars(attn, 1, TGT, TGT, mode="mean")
    np.testing.assert_allclose(np.asarray(mean.data[0].y), attn.weights[0, :, 1].mean(0).numpy(), atol=1e-7)
    assert len(fa.query_bars(attn, 1, TGT, TGT, mode="all").data) == 4
    assert np.asarray(one.data[0].y)[2:].sum() == 0  # causal: nothing after the query


def test_argmax_keys():
    assert fa.argmax_keys(np.array([[0.1, 0.9], [0.8, 0.2]])) == [1, 0]


def test_a_big_w_o_shows_the_rows_of_the_selected_head():
    """Concat·W_O = Σ_j head_j·W_O[j·d_k:(j+1)·d_k]: for d_model > 128 the figure shows head j's rows."""
    w_o = np.arange(256 * 256, dtype=np.float32).reshape(256, 256)
    fig = fa.w_o_figure(w_o, head=2, d_k=32, d_model=256)
    np.testing.assert_array_equal(spec_z(fig), w_o[64:96])
    assert "head 3" in fig.layout.title.text
    small = fa.w_o_figure(w_o[:64, :64], head=2, d_k=16, d_model=64)
    np.testing.assert_array_equal(spec_z(small), w_o[:64, :64])


# -- long sentences: overviews of blocks, exact where it is cheap ---------------------------------------


def test_block_reduce_mean_and_max_with_a_partial_last_block():
    z = np.arange(100, dtype=np.float32).reshape(10, 10)
    mean = toolbox.block_reduce(z, 4, 4, "mean")
    assert mean.shape == (3, 3)
    assert mean[0, 0] == z[:4, :4].mean() and mean[2, 2] == z[8:, 8:].mean()  # last block: 2 × 2
    assert toolbox.block_reduce(z, 4, 4, "max")[2, 1] == z[8:, 4:8].max()
    assert toolbox.block_reduce(z, 1, 1) is not None and (toolbox.block_reduce(z, 1, 1) == z).all()
    assert [toolbox.pool_factor(n) for n in (16, 128, 129, 512)] == [1, 1, 2, 4]


def test_a_512_token_weight_matrix_is_a_max_overview_without_cell_text():
    rng = np.random.default_rng(0)
    w = rng.random((512, 512)).astype(np.float32)
    tokens = [f"t{i}" for i in range(512)]
    fig = toolbox.matrix_figure(w, tokens, tokens, title="w", row_title="query", col_title="key", pool="max")
    z = spec_z(fig)
    assert z.shape == (128, 128) and toolbox.is_pooled(fig)
    np.testing.assert_array_equal(z[5, 7], w[20:24, 28:32].max())  # the strongest weight of its 4 × 4 block
    assert not fig.data[0].texttemplate and "largest weight in the block" in fig.data[0].hovertemplate
    assert list(fig.data[0].y[:2]) == ["t0…·0–3", "t4…·4–7"]  # the hover names the block's positions
    assert len(fig.layout.xaxis.ticktext) <= toolbox.MAX_TICKS
    # a 512-token × 64-dimension matrix (32 k cells) is still sent whole, cell for cell
    x = rng.standard_normal((512, 64)).astype(np.float32)
    exact = toolbox.matrix_figure(x, tokens, 64, title="X", row_title="token", col_title="dimension")
    np.testing.assert_array_equal(spec_z(exact), x)
    assert not toolbox.is_pooled(exact) and len(exact.layout.yaxis.tickvals) <= toolbox.MAX_TICKS


def test_heads_and_grid_overviews_of_a_long_sentence():
    torch.manual_seed(0)
    n = 200
    weights = torch.softmax(torch.randn(1, 4, n, n) * 4, -1)
    attn = type("A", (), {"weights": weights})()
    tokens = [f"t{i}" for i in range(n)]
    heads = fa.heads_figure(attn, tokens, tokens, selected=0)
    f = toolbox.pool_factor(n, fa.HEADS_POOL_MAX)  # 4: 50 × 50 cells per head
    for j, tr in enumerate(t for t in heads.data if t.type == "heatmap"):
        np.testing.assert_array_equal(
            np.asarray(tr.z), toolbox.block_reduce(weights[0, j].numpy(), f, f, "max")
        )
    grid_trace = type("T", (), {"encoder": [type("L", (), {"self_attn": attn})()], "decoder": []})()
    grid = fa.grid_figure(grid_trace, "encoder", q_tokens=tokens, k_tokens=tokens)
    f = toolbox.pool_factor(n, fa.GRID_POOL_MAX)  # 7: 29 × 29 cells per head
    z = np.asarray(grid.data[0].z, dtype=float)
    n_cells = len(toolbox.block_reduce(weights[0, 0].numpy(), f, f))
    assert n_cells <= fa.GRID_POOL_MAX
    head3 = toolbox.block_reduce(weights[0, 2].numpy(), f, f, "max")
    np.testing.assert_array_equal(z[fa.grid_block(0, n_cells), fa.grid_block(2, n_cells)], head3)
    bars = fa.query_bars(attn, 3, tokens, tokens)  # one query's bars stay exact at any length
    np.testing.assert_array_equal(np.asarray(bars.data[0].y), weights[0, 0, 3].numpy())
    assert len(bars.layout.xaxis.ticktext) <= toolbox.MAX_TICKS


def test_figure_texts_follow_the_language(model, trace):
    attn = fa.attention_of(trace, "encoder", 0)
    heads = fa.heads_figure(attn, SRC, SRC, selected=2, lang="zh")
    assert "头 3（逐步展示）" in [a.text for a in heads.layout.annotations]
    s = fa.head_steps(attn, 0)
    figs = fa.step_figures(s, fa.head_weights(model, "encoder", 0, 0), SRC, SRC, lang="zh")
    assert figs["weights"].layout.title.text == "softmax → 权重"
    assert figs["x_q"].layout.title.text == "X：这一层的输入"
    assert figs["q"].layout.title.text == "Q = X W_Q + b_Q"  # formulas are the same in every language
    bars = fa.query_bars(attn, 0, SRC, SRC, mode="mean", lang="zh")
    assert bars.data[0].name == "4 个头的平均" and bars.layout.yaxis.title.text == "注意力权重"


def test_alibi_head_steps_split_the_bias_from_q_kt():
    """With ALiBi the trace's scores hold QKᵀ/√d_k + bias; the steps show QKᵀ itself and the bias."""
    import math

    import torch

    from core.model.config import ModelConfig
    from core.model.transformer import Transformer
    from figures.attention import head_steps

    model = Transformer(ModelConfig(30, 30, d_model=16, num_heads=4, positions="alibi", seed=2)).eval()
    tr = model.trace(torch.tensor([[3, 4, 5, 6, 7]]), torch.tensor([[1, 8, 9]]))
    for attn in (tr.encoder[0].self_attn, tr.decoder[0].self_attn):
        s = head_steps(attn, head=2)
        want = (attn.q[0, 2] @ attn.k[0, 2].T).numpy()
        np.testing.assert_allclose(s.qk, want, atol=1e-4)
        assert s.bias is not None and s.bias[0, 0] == 0.0 and s.bias[-1, 0] < 0
        np.testing.assert_allclose(s.qk / math.sqrt(4) + s.bias, attn.scores[0, 2].numpy(), atol=1e-5)
    assert head_steps(tr.decoder[0].cross_attn, head=2).bias is None  # no position bias across sentences
