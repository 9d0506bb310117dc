"""core.model.positional: the four position schemes, alone and inside the model (issue 7)."""

import math
from dataclasses import fields

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.model.config import ModelConfig
from core.model.positional import (
    alibi_bias,
    alibi_slopes,
    apply_rope,
    rope_angles,
    rope_frequencies,
    sinusoidal_encoding,
)
from core.model.trace import AttentionTrace, ModelTrace
from core.model.transformer import Transformer
from core.tokenizers.vocab import Vocab
from core.training.checkpoint import load_checkpoint, save_checkpoint


def test_matches_the_papers_formula_for_odd_and_even_sizes():
    for d in (1, 2, 7, 16):
        pe = sinusoidal_encoding(50, d)
        assert pe.shape == (50, d)
        for pos in (0, 1, 17, 49):
            for i in range(d):
                angle = pos / 10000 ** ((i - i % 2) / d)
                expected = math.sin(angle) if i % 2 == 0 else math.cos(angle)
                assert abs(pe[pos, i].item() - expected) < 1e-6


def test_empty_table():
    assert sinusoidal_encoding(0, 8).shape == (0, 8)


@given(d=st.integers(1, 64), n=st.integers(1, 3000))
@settings(max_examples=40, deadline=None)
def test_bounded_by_one(d, n):
    assert sinusoidal_encoding(n, d).abs().max() <= 1.0


@given(
    d=st.sampled_from([2, 8, 33, 64, 128, 512]),
    k=st.integers(0, 50),
    p=st.integers(0, 400),
    q=st.integers(0, 400),
)
@settings(max_examples=60, deadline=None)
def test_dot_product_depends_only_on_offset(d, k, p, q):
    pe = sinusoidal_encoding(500, d).double()
    if d % 2 == 0:
        assert abs(pe[p] @ pe[p + k] - pe[q] @ pe[q + k]) < 1e-4
    else:  # the lone last sine is the only position-dependent part
        paired = pe[:, :-1]
        assert abs(paired[p] @ paired[p + k] - paired[q] @ paired[q + k]) < 1e-4


def test_shift_is_a_linear_map_independent_of_position():
    """PE(p + k) = M_k PE(p), M_k a block-diagonal rotation built only from k and the frequencies."""
    d, k = 16, 5
    pe = sinusoidal_encoding(200, d).double()
    freqs = torch.exp(-math.log(10000.0) * torch.arange(0, d, 2, dtype=torch.float64) / d)
    M = torch.zeros(d, d, dtype=torch.float64)
    for i, w in enumerate(freqs):
        c, s = math.cos(k * w), math.sin(k * w)
        # [sin(a+b), cos(a+b)] = [[cos b, sin b], [-sin b, cos b]] [sin a, cos a]
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = torch.tensor([[c, s], [-s, c]], dtype=torch.float64)
    torch.testing.assert_close(pe[k:], pe[:-k] @ M.T, atol=1e-6, rtol=0)


# -- RoPE --------------------------------------------------------------------------------------------

def rope_reference(x: torch.Tensor, positions: torch.Tensor, width: int | None = None) -> torch.Tensor:
    """RoPE as complex numbers (as in Meta's LLaMA code): pair (2i, 2i+1) times e^{i·p·θ_i}.

    θ_i = 10000^(-2i/width), width = d_k (the head's full size, which may be odd) by default.
    """
    d = x.size(-1)
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / (width or d))
    rotor = torch.polar(torch.ones(len(positions), d // 2, dtype=torch.float64),
                        positions.double()[:, None] * theta)
    z = torch.view_as_complex(x.double().reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(z * rotor).reshape(x.shape)


def test_rope_frequencies_and_angles_follow_the_formula():
    theta = rope_frequencies(8)
    assert theta.tolist() == pytest.approx([1.0, 10000 ** -0.25, 10000 ** -0.5, 10000 ** -0.75], rel=1e-12)
    angles = rope_angles([0, 3, 100], 8)
    assert angles.shape == (3, 4)
    assert angles[2].tolist() == pytest.approx((100 * theta).tolist(), rel=1e-12)
    assert rope_frequencies(5).shape == (2,)  # two pairs; the fifth dimension has no partner


@pytest.mark.parametrize("d", [2, 8, 64])
def test_rope_equals_the_complex_number_reference(d):
    x = torch.randn(2, 3, 50, d, generator=torch.Generator().manual_seed(d), dtype=torch.float64)
    positions = torch.arange(50) * 7  # any positions, not only 0 … L-1
    torch.testing.assert_close(apply_rope(x, positions), rope_reference(x, positions), atol=1e-12, rtol=0)
    torch.testing.assert_close(apply_rope(x), rope_reference(x, torch.arange(50)), atol=1e-12, rtol=0)


@given(
    d=st.sampled_from([2, 6, 16, 64]),
    m=st.integers(0, 2000),
    n=st.integers(0, 2000),
    shift=st.integers(1, 2000),
    seed=st.integers(0, 10_000),
)
@settings(max_examples=80, deadline=None)
def test_rope_score_depends_only_on_the_offset(d, m, n, shift, seed):
    """(R_m q)·(R_n k) = (R_{m+s} q)·(R_{n+s} k): moving both tokens together keeps the score (float32)."""
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(1, d, generator=g) / d**0.5, torch.randn(1, d, generator=g) / d**0.5
    before = apply_rope(q, [m]) @ apply_rope(k, [n]).T
    after = apply_rope(q, [m + shift]) @ apply_rope(k, [n + shift]).T
    assert abs(before.item() - after.item()) < 1e-5


def test_rope_score_varies_with_the_offset():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 16, generator=g), torch.randn(1, 16, generator=g)
    scores = [(apply_rope(q, [10]) @ apply_rope(k, [10 + j]).T).item() for j in range(6)]
    assert len({round(s, 4) for s in scores}) == 6


def test_rope_keeps_norms_and_position_zero_is_the_identity():
    x = torch.randn(4, 100, 32, generator=torch.Generator().manual_seed(1))
    rotated = apply_rope(x)
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1), atol=1e-5, rtol=1e-6)
    assert torch.equal(rotated[:, 0], x[:, 0])
    assert not torch.allclose(rotated[:, 1], x[:, 1])
    assert rotated.dtype == x.dtype


def test_rope_with_an_odd_size_leaves_the_last_dimension_and_keeps_the_property():
    x = torch.randn(10, 5, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    rotated = apply_rope(x)
    assert torch.equal(rotated[:, -1], x[:, -1])
    torch.testing.assert_close(rotated[:, :4], rope_reference(x[:, :4], torch.arange(10), width=5))
    q, k = x[3:4], x[7:8]
    s1 = apply_rope(q, [2]) @ apply_rope(k, [9]).T
    s2 = apply_rope(q, [40]) @ apply_rope(k, [47]).T
    assert abs(s1.item() - s2.item()) < 1e-12


def test_rope_refuses_a_wrong_number_of_positions():
    with pytest.raises(ValueError, match="3 positions for a sequence of length 4"):
        apply_rope(torch.zeros(4, 8), [0, 1, 2])


# -- ALiBi -------------------------------------------------------------------------------------------


def test_alibi_slopes_are_the_papers_geometric_sequence():
    assert alibi_slopes(8).tolist() == [1 / 2**h for h in range(1, 9)]
    assert alibi_slopes(4).tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256]
    assert alibi_slopes(1).tolist() == [1 / 256]
    # not a power of two: Press et al.'s code (github.com/ofirpress/attention_with_linear_biases)
    def paper(n):
        def power_of_2(n):
            start = 2 ** (-(2 ** -(math.log2(n) - 3)))
            return [start * start**i for i in range(n)]

        if math.log2(n).is_integer():
            return power_of_2(n)
        closest = 2 ** math.floor(math.log2(n))
        return power_of_2(closest) + paper(2 * closest)[0::2][: n - closest]

    for n in (3, 6, 12):
        assert alibi_slopes(n).tolist() == pytest.approx(paper(n), rel=1e-6)
    with pytest.raises(ValueError, match="num_heads=0 must be a positive integer"):
        alibi_slopes(0)


def test_alibi_bias_is_linear_in_the_distance_and_depends_only_on_it():
    bias = alibi_bias(8, 12, 12)
    slopes = alibi_slopes(8)
    i, j = torch.meshgrid(torch.arange(12), torch.arange(12), indexing="ij")
    torch.testing.assert_close(bias, -slopes[:, None, None] * (i - j).abs().float(), atol=0, rtol=0)
    assert torch.all(bias.diagonal(dim1=1, dim2=2) == 0)
    # linear: equal steps of -m_h along a row, away from the diagonal
    steps = bias[:, 5, 6:] - bias[:, 5, 5:-1]
    torch.testing.assert_close(steps, -slopes[:, None].expand_as(steps), atol=0, rtol=0)
    for offset in range(-11, 12):  # constant along every diagonal: a function of i - j only
        diagonal = bias.diagonal(offset=offset, dim1=1, dim2=2)
        assert torch.all(diagonal == diagonal[:, :1])


def test_causal_alibi_bias_is_compatible_with_the_causal_mask():
    sym, causal = alibi_bias(4, 6, 6), alibi_bias(4, 6, 6, causal=True)
    allowed = torch.ones(6, 6).tril().bool()
    assert torch.equal(causal[:, allowed], sym[:, allowed])  # equal wherever the mask lets a query look
    assert torch.all(causal[:, ~allowed] > 0)  # differs only where the mask hides the score
    scores = torch.randn(4, 6, 6, generator=torch.Generator().manual_seed(3))

    def masked_softmax(s):
        return s.masked_fill(~allowed, float("-inf")).softmax(-1)

    torch.testing.assert_close(masked_softmax(scores + causal), masked_softmax(scores + sym))
    # row i adds -m·i (a constant) to m·j: softmax gives the same as the bias m·j alone
    m_j = alibi_slopes(4)[:, None, None] * torch.arange(6.0)[None, None, :]
    torch.testing.assert_close(masked_softmax(scores + causal), masked_softmax(scores + m_j))


# -- the model with each scheme ----------------------------------------------------------------------

SCHEMES = ("sinusoidal", "learned", "rope", "alibi")


def small(positions: str, **kw) -> Transformer:
    options = dict(src_vocab_size=30, tgt_vocab_size=25, d_model=16, num_heads=4, num_layers=2, d_ff=32,
                   dropout=0.0, max_len=20, positions=positions)
    return Transformer(ModelConfig(**(options | kw))).eval()


def test_config_accepts_the_four_schemes():
    for p in SCHEMES:
        assert ModelConfig(10, 10, positions=p).positions == p
    with pytest.raises(ValueError) as e:
        ModelConfig(10, 10, positions="rotary")
    assert str(e.value) == "positions='rotary' must be one of ('sinusoidal', 'learned', 'rope', 'alibi')"


@pytest.mark.parametrize("positions", SCHEMES)
def test_every_scheme_traces_and_decodes_with_the_same_fields(positions):
    model = small(positions)
    src = torch.tensor([[5, 6, 7, 8, 0], [9, 10, 11, 0, 0]])
    tgt = torch.tensor([[2, 5, 6, 7], [2, 8, 0, 0]])
    tr = model.trace(src, tgt)
    ref = small("sinusoidal").trace(src, tgt)
    for name in (f.name for f in fields(ModelTrace)):
        a, b = getattr(tr, name), getattr(ref, name)
        if isinstance(a, torch.Tensor):
            assert a.shape == b.shape, name
            assert torch.isfinite(a.float()).all(), name
    for layer, ref_layer in zip(tr.decoder, ref.decoder, strict=True):
        pairs = ((layer.self_attn, ref_layer.self_attn), (layer.cross_attn, ref_layer.cross_attn))
        for attn, ref_attn in pairs:
            for f in fields(AttentionTrace):
                if f.name != "bias":
                    assert getattr(attn, f.name).shape == getattr(ref_attn, f.name).shape
    assert torch.isfinite(model(src, tgt)).all()
    res = model.greedy_decode(src, max_new_tokens=6)
    assert res.tokens.shape[0] == 2 and len(res.steps) == res.tokens.shape[1] - 1 >= 1
    assert all(torch.isfinite(p).all() for p in res.probs)


def head_projection(linear, x, h, d_k):
    """x W + b split into heads: (B, h, L, d_k), as MultiHeadAttention does before any rotation."""
    B, L, _ = x.shape
    return linear(x).view(B, L, h, d_k).transpose(1, 2)


def test_rope_model_trace_holds_the_rotated_q_and_k_actually_multiplied():
    model = small("rope")
    src, tgt = torch.tensor([[5, 6, 7, 8, 9]]), torch.tensor([[2, 5, 6]])
    tr = model.trace(src, tgt)
    assert torch.equal(tr.positional, torch.zeros(5, 16))  # nothing added to the embeddings
    torch.testing.assert_close(tr.src_embedded, tr.src_token_embedding * 4.0)
    layer, attn = model.encoder.layers[0].self_attn, tr.encoder[0].self_attn
    q = head_projection(layer.w_q, attn.query_input, 4, 4)
    k = head_projection(layer.w_k, attn.key_input, 4, 4)
    torch.testing.assert_close(attn.q, apply_rope(q))
    torch.testing.assert_close(attn.k, apply_rope(k))
    torch.testing.assert_close(attn.scores, attn.q @ attn.k.transpose(-2, -1) / 2.0)
    assert attn.bias is None
    dec = tr.decoder[0]
    cross = model.decoder.layers[0].cross_attn
    torch.testing.assert_close(dec.self_attn.q, apply_rope(head_projection(
        model.decoder.layers[0].self_attn.w_q, dec.self_attn.query_input, 4, 4)))
    # cross-attention: no rotation (decoder and encoder positions are in different sequences)
    torch.testing.assert_close(dec.cross_attn.q, head_projection(cross.w_q, dec.cross_attn.query_input, 4, 4))
    torch.testing.assert_close(dec.cross_attn.k, head_projection(cross.w_k, dec.cross_attn.key_input, 4, 4))


def test_alibi_model_scores_are_qk_plus_the_bias():
    model = small("alibi")
    src, tgt = torch.tensor([[5, 6, 7, 8, 0]]), torch.tensor([[2, 5, 6, 7]])
    tr = model.trace(src, tgt)
    assert torch.equal(tr.positional, torch.zeros(5, 16))
    enc = tr.encoder[1].self_attn
    assert torch.equal(enc.bias[0], alibi_bias(4, 5, 5))
    torch.testing.assert_close(enc.scores, enc.q @ enc.k.transpose(-2, -1) / 2.0 + enc.bias)
    masked = enc.scores.masked_fill(~enc.mask, float("-inf")).softmax(-1).masked_fill(~enc.mask, 0)
    torch.testing.assert_close(enc.weights, masked)
    dec = tr.decoder[0]
    assert torch.equal(dec.self_attn.bias[0], alibi_bias(4, 4, 4, causal=True))
    assert dec.cross_attn.bias is None  # no bias in cross-attention
    cross = dec.cross_attn
    torch.testing.assert_close(cross.scores, cross.q @ cross.k.transpose(-2, -1) / 2.0)


def test_paper_model_has_no_bias_and_unrotated_q():
    model = small("sinusoidal")
    tr = model.trace(torch.tensor([[5, 6, 7]]), torch.tensor([[2, 5]]))
    attn = tr.encoder[0].self_attn
    assert attn.bias is None and tr.decoder[0].self_attn.bias is None
    q = head_projection(model.encoder.layers[0].self_attn.w_q, attn.query_input, 4, 4)
    torch.testing.assert_close(attn.q, q, atol=0, rtol=0)


@pytest.mark.parametrize("positions,relative", [("rope", True), ("alibi", True), ("sinusoidal", False),
                                                ("learned", False)])
def test_scores_of_a_repeated_token_depend_on_the_offset_only_for_rope_and_alibi(positions, relative):
    """The same token 12 times: every difference between scores comes from the positions.

    RoPE and ALiBi give each head a Toeplitz score matrix (constant along diagonals: i - j only);
    an absolute scheme does not.
    """
    model = small(positions, decoder=False)
    scores = model.trace(torch.full((1, 12), 7)).encoder[0].self_attn.scores[0]  # (h, 12, 12)
    diagonals = [scores.diagonal(offset=o, dim1=1, dim2=2).numpy() for o in range(-11, 12)]
    spread = max(float(np.ptp(diagonal, axis=-1).max()) for diagonal in diagonals)
    assert (spread < 1e-5) is relative, spread


# -- past the training length ------------------------------------------------------------------------


@pytest.mark.parametrize("positions", ["sinusoidal", "rope", "alibi"])
def test_rope_alibi_and_sinusoidal_run_past_max_len(positions):
    model = small(positions, max_len=8)
    src = torch.randint(5, 30, (1, 20), generator=torch.Generator().manual_seed(0))
    tr = model.trace(src, torch.randint(5, 25, (1, 15)))
    assert tr.memory.shape == (1, 20, 16) and torch.isfinite(tr.logits).all()
    assert tr.positional.shape == (20, 16)
    if positions == "sinusoidal":  # the table computed for the longer length; its first rows unchanged
        assert torch.equal(tr.positional, sinusoidal_encoding(20, 16))
        assert torch.equal(tr.positional[:8], model.src_embed.pe)
        torch.testing.assert_close(tr.src_embedded, tr.src_token_embedding * 4 + sinusoidal_encoding(20, 16))
    res = model.greedy_decode(src, max_new_tokens=12, eos_id=-1)  # eos never comes: no limit but ours
    assert res.tokens.shape == (1, 13)


def test_learned_positions_refuse_a_longer_input_naming_the_limit():
    model = small("learned", max_len=8)
    with pytest.raises(ValueError) as e:
        model.trace(torch.full((1, 9), 5))
    assert str(e.value) == (
        "sequence length 9 exceeds max_len=8: learned positions have one trained row for each "
        "position 0…7 and none beyond"
    )
    assert model.trace(torch.full((1, 8), 5)).positional.shape == (8, 16)
    assert model.greedy_decode(torch.full((1, 3), 5), max_new_tokens=20, eos_id=-1).tokens.shape == (1, 8)


def test_rope_and_alibi_models_have_no_position_parameters_and_checkpoints_round_trip(tmp_path):
    vocab = Vocab([f"t{i}" for i in range(25)])  # 5 special tokens + 25 = 30 ids
    assert len(vocab) == 30
    for positions in ("rope", "alibi"):
        model = small(positions, num_layers=1, tgt_vocab_size=30)
        names = model.state_dict().keys()
        assert not any("position" in n or n.endswith(".pe") for n in names)
        assert names == small("sinusoidal", num_layers=1, tgt_vocab_size=30).state_dict().keys()
        path = tmp_path / f"{positions}.pt"
        save_checkpoint(path, model, (vocab, vocab), "copy", {})
        loaded, *_ = load_checkpoint(path)
        assert loaded.config == model.config
        src = torch.tensor([[5, 6, 7]])
        torch.testing.assert_close(loaded.eval()(src, src), model.eval()(src, src))
