"""Sinusoidal positional encoding (Vaswani et al. 2017, section 3.5).

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))

Each pair of dimensions (2i, 2i+1) is a point on a circle turning at its own frequency, so
PE(pos + k) is a rotation of PE(pos) (a linear function of it, the same for every pos) and
PE(p)·PE(q) = sum_i cos((p - q)·w_i) depends only on the offset p - q.

Both properties need every sine to have its cosine partner, i.e. an even d_model. With an odd
d_model the last dimension is a lone sine and adds sin(p·w)·sin(q·w) to the dot product, which does
depend on p; the app keeps d_model even and says so when it explains the property.
"""

from __future__ import annotations

import math

import torch


def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """Return the table PE of shape (max_len, d_model); works for odd d_model and any max_len ≥ 0.

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
