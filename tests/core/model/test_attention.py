import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.model.attention import MultiHeadAttention, scaled_dot_product_attention
from core.model.masks import causal_mask, decoder_mask, padding_mask
from core.model.positional import alibi_bias, apply_rope


def random_qkv(b, h, lq, lk, d, seed):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.randn(b, h, lq, d, generator=g),
        torch.randn(b, h, lk, d, generator=g),
        torch.randn(b, h, lk, d, generator=g),
    )


@pytest.mark.parametrize("shape", [(1, 1, 3, 3, 4), (2, 4, 5, 7, 8), (3, 2, 1, 6, 16)])
def test_equals_torch_sdpa_without_mask(shape):
    q, k, v = random_qkv(*shape, seed=0)
    out, w, _ = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(
        out, torch.nn.functional.scaled_dot_product_attention(q, k, v), atol=1e-5, rtol=0
    )
    torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[:-1]))


@given(
    b=st.integers(1, 3),
    h=st.integers(1, 4),
    lq=st.integers(1, 6),
    lk=st.integers(1, 6),
    d=st.integers(1, 8),
    seed=st.integers(0, 10_000),
    data=st.data(),
)
@settings(max_examples=60, deadline=None)
def test_masked_attention_properties_and_torch_equality(b, h, lq, lk, d, seed, data):
    q, k, v = random_qkv(b, h, lq, lk, d, seed)
    g = torch.Generator().manual_seed(seed + 1)
    # a mask broadcast from (B, 1, Lq, Lk), with some rows fully masked now and then
    mask = torch.rand(b, 1, lq, lk, generator=g) < data.draw(st.floats(0.0, 1.0))
    out, w, _ = scaled_dot_product_attention(q, k, v, mask)
    full = mask.expand(b, h, lq, lk)
    assert not torch.isnan(w).any() and not torch.isnan(out).any()
    assert torch.all(w[~full] == 0)  # masked entries are exactly 0
    row_sum = w.sum(-1)
    has_key = full.any(-1)
    torch.testing.assert_close(row_sum[has_key], torch.ones_like(row_sum[has_key]))
    assert torch.all(row_sum[~has_key] == 0) and torch.all(out[~has_key] == 0)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(out[has_key], ref[has_key], atol=1e-5, rtol=0)


def test_fully_masked_row_gets_zero_weights_not_nan():
    q, k, v = random_qkv(1, 1, 2, 3, 4, seed=1)
    mask = torch.tensor([[[[True, False, True], [False, False, False]]]])
    out, w, _ = scaled_dot_product_attention(q, k, v, mask)
    assert w[0, 0, 1].tolist() == [0.0, 0.0, 0.0]
    assert w[0, 0, 0, 1] == 0 and abs(w[0, 0, 0].sum().item() - 1) < 1e-6


def test_mask_must_be_boolean():
    q, k, v = random_qkv(1, 1, 2, 2, 4, seed=2)
    with pytest.raises(TypeError, match="mask must be a bool tensor"):
        scaled_dot_product_attention(q, k, v, torch.ones(2, 2))


def test_multi_head_trace_is_consistent():
    torch.manual_seed(0)
    mha = MultiHeadAttention(d_model=12, num_heads=3).eval()
    x, mem = torch.randn(2, 4, 12), torch.randn(2, 5, 12)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)[:, None, None, :]
    out, t = mha(x, mem, mask)
    assert t.q.shape == (2, 3, 4, 4) and t.k.shape == (2, 3, 5, 4) and t.weights.shape == (2, 3, 4, 5)
    assert t.mask.shape == (2, 3, 4, 5)
    # head j uses rows j*d_k:(j+1)*d_k of W_Q
    j = 1
    q_j = x @ mha.w_q.weight[j * 4 : (j + 1) * 4].T + mha.w_q.bias[j * 4 : (j + 1) * 4]
    torch.testing.assert_close(t.q[:, j], q_j)
    torch.testing.assert_close(t.scores, t.q @ t.k.transpose(-2, -1) / 2.0)  # sqrt(d_k) = 2
    torch.testing.assert_close(t.heads, t.weights @ t.v)
    torch.testing.assert_close(
        out, t.heads.transpose(1, 2).reshape(2, 4, 12) @ mha.w_o.weight.T + mha.w_o.bias
    )


def test_masks_mean_true_may_attend():
    ids = torch.tensor([[7, 8, 0], [9, 0, 0]])
    assert padding_mask(ids, 0)[:, 0, 0].tolist() == [[True, True, False], [True, False, False]]
    assert causal_mask(3)[0, 0].tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    m = decoder_mask(ids, 0)
    assert m.shape == (2, 1, 3, 3)
    assert m[1, 0].tolist() == [[True, False, False], [True, False, False], [True, False, False]]


def projections(mha, x_q, x_kv):
    """Q, K, V split into heads before any position scheme: (B, h, L, d_k) each."""
    def split(t):
        return t.view(t.size(0), t.size(1), mha.h, mha.d_k).transpose(1, 2)

    return split(mha.w_q(x_q)), split(mha.w_k(x_kv)), split(mha.w_v(x_kv))


def test_rope_attention_rotates_q_and_k_and_the_trace_keeps_the_rotated_ones():
    torch.manual_seed(0)
    mha = MultiHeadAttention(d_model=16, num_heads=2, positions="rope").eval()
    x = torch.randn(2, 6, 16)
    mask = padding_mask(torch.tensor([[5, 5, 5, 5, 0, 0], [5] * 6]), 0)
    out, t = mha(x, x, mask)
    q, k, v = projections(mha, x, x)
    torch.testing.assert_close(t.q, apply_rope(q))
    torch.testing.assert_close(t.k, apply_rope(k))
    torch.testing.assert_close(t.v, v)  # values are not rotated
    torch.testing.assert_close(t.scores, t.q @ t.k.transpose(-2, -1) / math.sqrt(8))
    assert t.bias is None
    ref, _, _ = scaled_dot_product_attention(apply_rope(q), apply_rope(k), v, mask)
    torch.testing.assert_close(t.heads, ref)
    assert not torch.allclose(t.q[:, :, 1:], q[:, :, 1:])  # positions ≥ 1 really were turned
    torch.testing.assert_close(t.q[:, :, 0], q[:, :, 0])  # position 0 is not


@pytest.mark.parametrize("causal", [False, True])
def test_alibi_attention_adds_the_bias_to_the_scores(causal):
    torch.manual_seed(1)
    mha = MultiHeadAttention(d_model=16, num_heads=4, positions="alibi", causal=causal).eval()
    x = torch.randn(1, 5, 16)
    mask = causal_mask(5) if causal else None
    out, t = mha(x, x, mask)
    q, k, v = projections(mha, x, x)
    bias = alibi_bias(4, 5, 5, causal=causal)
    assert t.bias.shape == (1, 4, 5, 5) and torch.equal(t.bias[0], bias)
    torch.testing.assert_close(t.q, q)  # ALiBi leaves q and k alone
    torch.testing.assert_close(t.scores, q @ k.transpose(-2, -1) / 2.0 + bias)
    masked = t.scores if mask is None else t.scores.masked_fill(~t.mask, float("-inf"))
    torch.testing.assert_close(t.weights, masked.softmax(-1).masked_fill(~t.mask, 0.0))
    if causal:
        assert torch.all(t.weights[0].triu(1) == 0)


def test_alibi_favours_near_keys_when_the_content_is_equal():
    """Identical tokens: QKᵀ is the same everywhere, so only the bias decides: nearer keys weigh more."""
    torch.manual_seed(2)
    mha = MultiHeadAttention(d_model=8, num_heads=2, positions="alibi").eval()
    _, t = mha(torch.ones(1, 7, 8), torch.ones(1, 7, 8), None)
    row = t.weights[0, :, 3]  # query 3, both heads
    assert torch.all(row[:, 1:4] > row[:, 0:3])  # weights grow towards the query's own position
    torch.testing.assert_close(row[:, 2], row[:, 4])  # symmetric in the encoder
    assert row[0, 3] > row[1, 3]  # head 1 (slope 1/16) is steeper than head 2 (1/256)


def test_attention_positions_are_checked():
    with pytest.raises(ValueError, match="positions='learned' must be one of \\('none', 'rope', 'alibi'\\)"):
        MultiHeadAttention(8, 2, positions="learned")


def test_the_function_returns_the_scores_before_the_mask_and_the_bias_added():
    q, k, v = random_qkv(1, 2, 3, 4, 8, seed=3)
    bias = alibi_bias(2, 3, 4)
    mask = torch.tensor([True, True, True, False])
    out, w, scores = scaled_dot_product_attention(q, k, v, mask, bias)
    torch.testing.assert_close(scores, q @ k.transpose(-2, -1) / math.sqrt(8) + bias)
    torch.testing.assert_close(w, scores.masked_fill(~mask, float("-inf")).softmax(-1))
    torch.testing.assert_close(out, w @ v)


def test_multi_head_attention_runs_the_paper_function_per_head():
    torch.manual_seed(3)
    mha = MultiHeadAttention(d_model=12, num_heads=3).eval()
    x = torch.randn(2, 4, 12)
    mask = causal_mask(4)
    _, t = mha(x, x, mask)
    q, k, v = projections(mha, x, x)
    out, w, scores = scaled_dot_product_attention(q, k, v, mask)
    assert torch.equal(t.heads, out) and torch.equal(t.weights, w) and torch.equal(t.scores, scores)
