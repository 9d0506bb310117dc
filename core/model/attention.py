"""Scaled dot-product and multi-head attention (section 3.2), returning what a view needs.

Attention(Q, K, V) = softmax(Q Kᵀ / sqrt(d_k)) V
MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O,  head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i)

Two position schemes act here rather than on the embeddings (core/model/positional.py):
    rope:   Attention(R Q, R K, V), each row of Q and K rotated by its own position's angles
    alibi:  softmax(Q Kᵀ / sqrt(d_k) + B) V,  B[h, i, j] = -m_h·|i - j| (causal: -m_h·(i - j))
Only self-attention gets them; cross-attention stays as in the paper (see MultiHeadAttention).

The masks arrive built, True = may attend (core/model/masks.py): key padding for the encoder's
self-attention and for cross-attention (``Transformer.encode``), padding ∧ causal for the decoder's
self-attention (``decoder_mask``, made in ``Transformer.decode``); ``scaled_dot_product_attention``
applies them all the same way, as -inf before the softmax. Notes: docs/decisions.md, core/model/attention.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import nn

from core.model.modules import Linear
from core.model.positional import IN_ATTENTION, alibi_bias, apply_rope
from core.model.trace import AttentionTrace


class Attended(NamedTuple):
    """What scaled dot-product attention computes, for the trace as well as for the next layer."""

    output: torch.Tensor  # (..., L_q, d_v) weights · V
    weights: torch.Tensor  # (..., L_q, L_k) softmax of the masked scores; masked entries exactly 0
    scores: torch.Tensor  # (..., L_q, L_k) Q Kᵀ / sqrt(d_k) (+ bias), before masking


def scaled_dot_product_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    dropout: nn.Module | None = None,
) -> Attended:
    """Attention(Q, K, V) = softmax(Q Kᵀ / sqrt(d_k)) V  (section 3.2.1)
    -> (output (..., L_q, d_v), weights (..., L_q, L_k), scores (..., L_q, L_k)).

    ``mask`` is boolean, broadcastable to (..., L_q, L_k), True = may attend (core/model/masks.py: key
    padding for the encoder and cross-attention, padding ∧ causal for the decoder's self-attention).
    A query row with no allowed key gets all-zero weights (and a zero output), never NaN.
    ``bias`` (ALiBi) is added to the scores before the mask; ``dropout`` acts on the weights that
    multiply V (the returned weights are before it, as a view shows them).
    """
    if mask is not None and mask.dtype != torch.bool:
        raise TypeError(f"mask must be a bool tensor (True = may attend), got {mask.dtype}")
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (..., L_q, L_k)
    if bias is not None:  # ALiBi; skipped otherwise, so the paper's model is unchanged bit for bit
        scores = scores + bias
    if mask is None:
        weights = scores.softmax(dim=-1)
    else:
        # A row whose keys are all masked gets -inf everywhere and softmax gives NaN; zeroing the
        # masked entries afterwards turns such a row into all zeros and leaves other rows unchanged.
        weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1).masked_fill(~mask, 0.0)
    attended = dropout(weights) if dropout is not None else weights
    return Attended(attended @ v, weights, scores)  # output: (..., L_q, d_v)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O,  head_i = Attention(Q W_Q_i, K W_K_i, V W_V_i)

    h heads of size d_k = d_model / h (section 3.2.2), computed in parallel as one (B, h, L, d_k)
    tensor; each head runs :func:`scaled_dot_product_attention`.

    ``positions`` is "rope" or "alibi" for a self-attention of a model with those positions, else
    "none". ``causal`` (decoder self-attention) picks ALiBi's one-sided form -m_h·(i - j).
    Query i and key j are at positions i and j of their own sequence (padding comes last, so the
    real tokens keep 0, 1, ...). Cross-attention is always built with "none": a decoder position
    and an encoder position belong to two different sequences, so i - j measures nothing (in a
    translation, output word 3 need not come from input word 3); the memory already carries the
    encoder's positions. T5 likewise puts its relative position bias in self-attention only.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        dropout: float = 0.0,
        positions: str = "none",
        causal: bool = False,
        *,
        num_kv_heads: int | None = None,
        rope_base: float = 10000.0,
        rope_pairing: str = "interleaved",
        qkv_bias: bool = True,
        out_bias: bool = True,
    ) -> None:
        """Grouped-query attention (Llama, Qwen2): ``num_kv_heads`` < num_heads key/value heads, each
        read by num_heads / num_kv_heads consecutive query heads (HF's repeat_kv); the trace still
        holds one k, v and weights per query head. ``rope_base`` and ``rope_pairing``: see apply_rope."""
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        if positions not in ("none", *IN_ATTENTION):
            raise ValueError(f"positions={positions!r} must be one of {('none', *IN_ATTENTION)}")
        self.h, self.d_k = num_heads, d_model // num_heads
        self.positions, self.causal = positions, causal
        self.kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        if num_heads % self.kv_heads:
            raise ValueError(f"num_kv_heads={self.kv_heads} does not divide num_heads={num_heads}")
        self.rope_base, self.rope_pairing = rope_base, rope_pairing
        d_kv = self.kv_heads * self.d_k
        # One d_model x d_model projection holds all heads' W_Q_i side by side (head i: rows i*d_k..)
        self.w_q = Linear(d_model, d_model, bias=qkv_bias)
        self.w_k = Linear(d_model, d_kv, bias=qkv_bias)
        self.w_v = Linear(d_model, d_kv, bias=qkv_bias)
        self.w_o = Linear(d_model, d_model, bias=out_bias)
        self.dropout = nn.Dropout(dropout)

    def _split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, L, width = x.shape
        return x.view(B, L, width // self.d_k, self.d_k).transpose(1, 2)  # (B, h or kv_heads, L, d_k)

    def _share_kv(self, x: torch.Tensor) -> torch.Tensor:
        """(B, kv_heads, L, d_k) -> (B, h, L, d_k): key/value head g serves query heads g·r … g·r + r - 1."""
        return x.repeat_interleave(self.h // self.kv_heads, dim=1) if self.kv_heads != self.h else x

    def forward(
        self,
        x_q: torch.Tensor,
        x_kv: torch.Tensor,
        mask: torch.Tensor | None,
        positions: torch.Tensor | None = None,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
        edit_heads: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, AttentionTrace]:
        """x_q (B, L_q, d_model) asks, x_kv (B, L_k, d_model) answers; mask broadcasts to (B, h, L_q, L_k).

        Self-attention passes the same x twice; cross-attention the decoder's x and the memory.
        ``positions`` (B, L) RoPE's position of each token (left padding: the first real token is 0);
        None: 0, 1, ... in every row.

        ``past`` (generation's key/value cache, self-attention only): the k and v (B, h, L_past, d_k) of
        the tokens before x, as an earlier call's trace holds them (rotated, one per query head); the
        new tokens' keys and values are appended to them, so x holds only the new tokens and
        ``positions`` must say where they are. The trace's k, v and weights then cover every key.

        ``edit_heads`` (core/model/edits.py: a head switched off, or patched from another run) replaces
        heads (B, h, L_q, d_k) before Concat(…) W_O; the trace's ``heads`` and ``output`` are the edited ones.
        """
        B, L_q, d_model = x_q.shape
        q = self._split_heads(self.w_q(x_q))  # (B, h, L_q, d_k)
        k = self._share_kv(self._split_heads(self.w_k(x_kv)))  # (B, h, L_new, d_k)
        v = self._share_kv(self._split_heads(self.w_v(x_kv)))  # (B, h, L_new, d_k)
        bias = None
        if self.positions == "rope":  # the trace keeps the rotated q and k: they are what is multiplied
            rope = dict(positions=positions, base=self.rope_base, pairing=self.rope_pairing)
            q, k = apply_rope(q, **rope), apply_rope(k, **rope)
        if past is not None:
            if self.positions == "alibi":
                raise ValueError("a key/value cache is not supported with ALiBi")
            k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)  # (B, h, L_k, d_k)
        L_k = k.size(2)
        if self.positions == "alibi":
            bias = alibi_bias(self.h, L_q, L_k, causal=self.causal).to(q.device, q.dtype)  # (h, L_q, L_k)
        heads, weights, scores = scaled_dot_product_attention(q, k, v, mask, bias, self.dropout)
        # heads (B, h, L_q, d_k); weights and scores (B, h, L_q, L_k)
        if edit_heads is not None:
            heads = edit_heads(heads)
        concat = heads.transpose(1, 2).reshape(B, L_q, d_model)  # (B, L_q, h·d_k)
        output = self.w_o(concat)  # (B, L_q, d_model)
        full_mask = torch.ones_like(scores, dtype=torch.bool) if mask is None else mask.expand_as(scores)
        return output, AttentionTrace(
            query_input=x_q.detach(),
            key_input=x_kv.detach(),
            q=q.detach(),
            k=k.detach(),
            v=v.detach(),
            scores=scores.detach(),
            mask=full_mask,
            weights=weights.detach(),
            heads=heads.detach(),
            output=output.detach(),
            bias=None if bias is None else bias.expand_as(scores),
        )
