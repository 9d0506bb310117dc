import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from core.positional import sinusoidal_encoding


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
