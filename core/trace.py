"""The trace: every intermediate tensor a view needs, detached, returned by ``Transformer.trace``.

Modules keep no hidden state (unlike the Annotated Transformer's ``self.attn``): a view reads one
trace object and nothing depends on call order. Shapes use B = batch, h = heads, S = source
length, T = target length, L = the sequence at hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor


@dataclass(frozen=True)
class AttentionTrace:
    query_input: Tensor  # (B, L_q, d_model) what W_Q saw
    key_input: Tensor  # (B, L_k, d_model) what W_K and W_V saw
    q: Tensor  # (B, h, L_q, d_k) the queries multiplied in Q Kᵀ (positions="rope": already rotated)
    k: Tensor  # (B, h, L_k, d_k) the keys multiplied in Q Kᵀ (positions="rope": already rotated)
    v: Tensor  # (B, h, L_k, d_k)
    scores: Tensor  # (B, h, L_q, L_k) Q Kᵀ / sqrt(d_k) + bias, before masking (bias: ALiBi only)
    mask: Tensor  # (B, h, L_q, L_k) bool, True = may attend
    weights: Tensor  # (B, h, L_q, L_k) softmax of the masked scores; masked entries are exactly 0
    heads: Tensor  # (B, h, L_q, d_k) weights · V, per head
    output: Tensor  # (B, L_q, d_model) Concat(heads) · W_O
    # (B, h, L_q, L_k) what positions added to the scores (ALiBi self-attention: -m_h·|i - j|), an
    # expanded view; None when nothing was added (sinusoidal, learned, rope, every cross-attention)
    bias: Tensor | None = None


@dataclass(frozen=True)
class EncoderLayerTrace:
    input: Tensor  # (B, S, d_model)
    self_attn: AttentionTrace
    after_attn: Tensor  # (B, S, d_model) after the first residual (+ LayerNorm when post-norm)
    ffn_hidden: Tensor  # (B, S, d_ff) ReLU(x W_1 + b_1)
    ffn_output: Tensor  # (B, S, d_model) hidden W_2 + b_2
    output: Tensor  # (B, S, d_model)


@dataclass(frozen=True)
class DecoderLayerTrace:
    input: Tensor  # (B, T, d_model)
    self_attn: AttentionTrace  # masked (causal) self-attention
    after_self_attn: Tensor
    cross_attn: AttentionTrace  # queries from the decoder, keys and values from the memory
    after_cross_attn: Tensor
    ffn_hidden: Tensor  # (B, T, d_ff)
    ffn_output: Tensor
    output: Tensor  # (B, T, d_model)


@dataclass(frozen=True)
class ModelTrace:
    src_ids: Tensor  # (B, S)
    src_token_embedding: Tensor  # (B, S, d_model) the lookup, before scaling
    src_embedded: Tensor  # (B, S, d_model) lookup · sqrt(d_model) + PE, as fed to the encoder
    positional: Tensor  # (max(S, T), d_model) the position rows added (rope / alibi: zeros, nothing added)
    src_mask: Tensor  # (B, 1, 1, S) key padding
    encoder: list[EncoderLayerTrace]
    memory: Tensor  # (B, S, d_model) encoder output after the final LayerNorm
    tgt_ids: Tensor | None = None  # (B, T)
    tgt_token_embedding: Tensor | None = None
    tgt_embedded: Tensor | None = None
    tgt_mask: Tensor | None = None  # (B, 1, T, T) key padding ∧ causal
    decoder: list[DecoderLayerTrace] = field(default_factory=list)
    decoder_output: Tensor | None = None  # (B, T, d_model) after the final LayerNorm
    logits: Tensor | None = None  # (B, T, tgt_vocab_size)

    @property
    def probs(self) -> Tensor | None:
        """softmax(logits): the next-token distribution at every target position."""
        return None if self.logits is None else torch.softmax(self.logits, dim=-1)


@dataclass(frozen=True)
class DecodeResult:
    tokens: Tensor  # (B, 1 + n) the generated ids, starting with BOS
    steps: list[ModelTrace]  # one per generated token: the trace of the prefix that produced it
    probs: list[Tensor]  # per step, (B, tgt_vocab_size): the distribution the token was taken from
