"""Attention masks. Everywhere in Glassbox a boolean mask means ``True = may attend``.

Masks are built small and broadcast (the way the Annotated Transformer does it):
    key padding  (B, 1, 1, L_k)   a query may look at every real (non-pad) key
    causal       (1, 1, T, T)     position t may look at positions ≤ t (no peeking ahead)
    merged       (B, 1, T, T)     key padding ∧ causal, broadcast to [B, h, q, k] by attention
"""

from __future__ import annotations

import torch


def padding_mask(ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """(B, L) token ids -> (B, 1, 1, L) bool, True where the key is a real token."""
    return (ids != pad_id)[:, None, None, :]


def causal_mask(size: int, device: torch.device | None = None) -> torch.Tensor:
    """(1, 1, T, T) bool, lower triangle True: query t may attend to keys 0..t.

    >>> causal_mask(3)[0, 0].int().tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    """
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()[None, None]


def decoder_mask(tgt_ids: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Key padding ∧ causal for decoder self-attention: (B, T) ids -> (B, 1, T, T) bool."""
    return padding_mask(tgt_ids, pad_id) & causal_mask(tgt_ids.size(1), tgt_ids.device)
