"""How a Transformer learns where each token is: four schemes (``ModelConfig.positions``).

Attention by itself ignores order (permute the tokens and every output row is permuted the same
way); each scheme puts position back in at a different place:

    sinusoidal  PE(pos, 2i) = sin(pos / 10000^(2i / d_model)), PE(pos, 2i+1) = cos(...), added (3.5)
    learned     a trained table P of max_len rows, added to the embeddings (BERT, GPT-2)
    rope        query m and key n rotated by m·θ_i, n·θ_i in every head, θ_i = 10000^(-2i/d_k)
    alibi       head h adds -m_h·|i - j| to the score of query i and key j, m_h = 2^(-8h/H)

The functions below are pure (tensors in, tensors out); core/model/attention.py applies rope and alibi.
What each scheme guarantees, and why d_model stays even: docs/decisions.md, core/model/positional.py.
"""

from __future__ import annotations

import math

import torch

POSITIONS = ("sinusoidal", "learned", "rope", "alibi")
# which dimensions RoPE turns together: (2i, 2i+1) as in RoFormer, or (i, i + d_k/2) as HF's Llama
# ("rotate_half"); the same rotation, on a permutation of the dimensions
ROPE_PAIRINGS = ("interleaved", "half")
ADDED_TO_EMBEDDINGS = ("sinusoidal", "learned")  # a vector per position, added to the token's
IN_ATTENTION = ("rope", "alibi")  # nothing added; positions act on each head's scores


def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """Return the table PE of shape (max_len, d_model); works for odd d_model and any max_len ≥ 0.

    Row p does not depend on max_len: a longer table starts with the same rows, bit for bit.

    >>> pe = sinusoidal_encoding(4, 6)
    >>> pe.shape
    torch.Size([4, 6])
    >>> pe[0].tolist()  # position 0: sin 0 = 0 in even dimensions, cos 0 = 1 in odd ones
    [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    """
    if max_len < 0 or d_model < 1:
        raise ValueError(f"max_len={max_len} must be ≥ 0 and d_model={d_model} ≥ 1")
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)  # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(d_model/2),)
    # 1 / 10000^(2i/d_model), computed in log space (and float64) so large positions stay exact
    frequency = torch.exp(-math.log(10000.0) * two_i / d_model)
    angle = position * frequency  # (max_len, ceil(d_model/2))
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])  # odd d_model: one sine more than cosines
    return pe.to(torch.float32)


# -- RoPE ------------------------------------------------------------------------------------------


def rope_frequencies(d_k: int, base: float = 10000.0) -> torch.Tensor:
    """θ_i = base^(-2i/d_k) for the d_k // 2 pairs (2i, 2i+1) of a head: float64, (d_k // 2,).

    The same frequencies as the sinusoidal table of width d_k (pair 0 turns 1 radian per position).

    >>> rope_frequencies(4)
    tensor([1.0000, 0.0100], dtype=torch.float64)
    """
    if d_k < 1:
        raise ValueError(f"d_k={d_k} must be ≥ 1")
    two_i = torch.arange(0, d_k - 1, 2, dtype=torch.float64)  # pairs only: an odd last dim has none
    return torch.exp(-math.log(base) * two_i / d_k)


def rope_angles(positions, d_k: int, base: float = 10000.0) -> torch.Tensor:
    """The rotation angle of every (position, pair): positions[:, None] · θ_i, float64 (L, d_k // 2).

    ``positions`` is an int (→ range(positions)) or a 1-D sequence/tensor of positions.

    >>> rope_angles(3, 4)  # pair 0 turns 1 rad per position, pair 1 0.01 rad
    tensor([[0.0000, 0.0000],
            [1.0000, 0.0100],
            [2.0000, 0.0200]], dtype=torch.float64)
    """
    pos = _positions(positions).to(torch.float64)
    return pos[:, None] * rope_frequencies(d_k, base)[None, :]  # (L, d_k // 2)


def apply_rope(
    x: torch.Tensor, positions=None, base: float = 10000.0, pairing: str = "interleaved"
) -> torch.Tensor:
    """Rotate each pair (x[..., 2i], x[..., 2i+1]) of the row at position p by the angle p·θ_i.

    pairing="half" (HF's Llama, Qwen2: ``q·cos + rotate_half(q)·sin``) pairs x[..., i] with
    x[..., i + d_k/2] instead, θ_i the same; ``base`` is their ``rope_theta``.

    ``x`` is (..., L, d_k), e.g. one head's queries (B, h, L, d_k); ``positions`` (L,) defaults to
    0 … L-1; a (B, L) tensor gives each row of a (B, h, L, d_k) x its own positions. In complex
    numbers: (x_2i + i·x_2i+1) · e^{i·p·θ_i}. Lengths are kept, position 0 is unchanged, and
    apply_rope(q, [m])·apply_rope(k, [n]) depends on m - n only. With an odd d_k the last dimension
    has no partner and is left as it is (it then adds q·k, the same at every offset).
    The result has x's dtype (the angles are computed in float64).

    >>> x = torch.tensor([[1.0, 0.0], [1.0, 0.0]])  # the same vector at positions 0 and 1
    >>> apply_rope(x)  # position 1 turned by 1 radian: (cos 1, sin 1)
    tensor([[1.0000, 0.0000],
            [0.5403, 0.8415]])
    """
    L, d_k = x.size(-2), x.size(-1)
    if torch.is_tensor(positions) and positions.dim() == 2:  # (B, L): each row its own (left padding)
        angles = positions.to(torch.float64)[:, None, :, None] * rope_frequencies(d_k, base)  # (B, 1, L, ·)
    else:
        angles = rope_angles(L if positions is None else positions, d_k, base)  # (L, d_k // 2)
    if angles.size(-2) != L:
        raise ValueError(f"{angles.size(-2)} positions for a sequence of length {L}")
    cos = torch.cos(angles).to(x.dtype).to(x.device)  # (L, d_k // 2)
    sin = torch.sin(angles).to(x.dtype).to(x.device)
    pairs = d_k // 2
    if pairing not in ROPE_PAIRINGS:
        raise ValueError(f"pairing={pairing!r} must be one of {ROPE_PAIRINGS}")
    first = slice(0, 2 * pairs, 2) if pairing == "interleaved" else slice(0, pairs)
    second = slice(1, 2 * pairs, 2) if pairing == "interleaved" else slice(pairs, 2 * pairs)
    even, odd = x[..., first], x[..., second]  # (..., L, d_k // 2) each: the pairs' two coordinates
    out = torch.empty_like(x)
    # (a + ib)(cos + i sin) = (a cos - b sin) + i (a sin + b cos)
    out[..., first] = even * cos - odd * sin
    out[..., second] = even * sin + odd * cos
    if d_k % 2:
        out[..., -1] = x[..., -1]
    return out


# -- ALiBi -----------------------------------------------------------------------------------------


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """The slope m_h of each head h = 1 … H: 2^(-8h/H), a geometric sequence (Press et al.).

    For H not a power of two, as in the paper's code: the 2^⌊log2 H⌋ slopes of the nearest power of
    two below, then every other slope of twice that many heads.

    >>> alibi_slopes(8).tolist()  # 1/2, 1/4, ..., 1/256
    [0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]
    """
    if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads < 1:
        raise ValueError(f"num_heads={num_heads!r} must be a positive integer")

    def power_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]

    below = 2 ** int(math.floor(math.log2(num_heads)))
    slopes = power_of_two(below)
    if below < num_heads:
        slopes += power_of_two(2 * below)[0::2][: num_heads - below]
    return torch.tensor(slopes, dtype=torch.float32)


def alibi_bias(num_heads: int, L_q: int, L_k: int, causal: bool = False) -> torch.Tensor:
    """The bias ALiBi adds to the scores: (num_heads, L_q, L_k), query i and key j at positions i, j.

    causal=False (encoder self-attention):  bias[h, i, j] = -m_h · |i - j|
    causal=True  (decoder self-attention):  bias[h, i, j] = -m_h · (i - j), as in Press et al.

    Both agree wherever the causal mask lets a query look (j ≤ i); the causal form is positive only
    where the mask hides the score anyway. In a row i it is m_h·j minus the constant m_h·i, and
    softmax ignores a constant added to a whole row.

    >>> alibi_bias(2, 3, 3)[0].tolist()  # head 1, slope 2^-4 = 1/16
    [[-0.0, -0.0625, -0.125], [-0.0625, -0.0, -0.0625], [-0.125, -0.0625, -0.0]]
    """
    i = torch.arange(L_q, dtype=torch.float32)[:, None]
    j = torch.arange(L_k, dtype=torch.float32)[None, :]
    distance = i - j if causal else (i - j).abs()  # (L_q, L_k)
    return -alibi_slopes(num_heads)[:, None, None] * distance  # (h, L_q, L_k)


def _positions(positions) -> torch.Tensor:
    if isinstance(positions, int) and not isinstance(positions, bool):
        if positions < 0:
            raise ValueError(f"positions={positions} must be ≥ 0")
        return torch.arange(positions)
    pos = torch.as_tensor(positions)
    if pos.dim() != 1:
        raise ValueError(f"positions must be 1-D, got shape {tuple(pos.shape)}")
    return pos
