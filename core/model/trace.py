"""The trace: every intermediate tensor a view needs, detached, returned by ``Transformer.trace``.

Modules keep no hidden state (unlike the Annotated Transformer's ``self.attn``): a view reads one
trace object and nothing depends on call order. The dataclasses have slots: a long run holds
thousands of them, and an instance without a ``__dict__`` always takes the same bytes (the app's
cache budget measures them). Shapes use B = batch, h = heads, S = source
length, T = target length, L = the sequence at hand.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import torch
from torch import Tensor


@dataclass(frozen=True, slots=True, weakref_slot=True)
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

    def first(self, n_q: int, n_k: int | None = None) -> AttentionTrace:
        """Views of the first ``n_q`` queries (and ``n_k`` keys; None: every key)."""
        k = slice(None, n_k)
        return AttentionTrace(
            query_input=self.query_input[:, :n_q],
            key_input=self.key_input[:, k],
            q=self.q[:, :, :n_q],
            k=self.k[:, :, k],
            v=self.v[:, :, k],
            scores=self.scores[:, :, :n_q, k],
            mask=self.mask[:, :, :n_q, k],
            weights=self.weights[:, :, :n_q, k],
            heads=self.heads[:, :, :n_q],
            output=self.output[:, :n_q],
            bias=None if self.bias is None else self.bias[:, :, :n_q, k],
        )


@dataclass(frozen=True, slots=True, weakref_slot=True)
class EncoderLayerTrace:
    input: Tensor  # (B, S, d_model)
    self_attn: AttentionTrace
    after_attn: Tensor  # (B, S, d_model) after the first residual (+ LayerNorm when post-norm)
    ffn_hidden: Tensor  # (B, S, d_ff) ReLU(x W_1 + b_1)
    ffn_output: Tensor  # (B, S, d_model) hidden W_2 + b_2
    output: Tensor  # (B, S, d_model)


@dataclass(frozen=True, slots=True, weakref_slot=True)
class DecoderLayerTrace:
    input: Tensor  # (B, T, d_model)
    self_attn: AttentionTrace  # masked (causal) self-attention
    after_self_attn: Tensor
    # queries from the decoder, keys and values from the memory; None in a decoder-only model
    cross_attn: AttentionTrace | None
    after_cross_attn: Tensor  # decoder-only: the same tensor as after_self_attn
    ffn_hidden: Tensor  # (B, T, d_ff)
    ffn_output: Tensor
    output: Tensor  # (B, T, d_model)

    def first(self, n: int) -> DecoderLayerTrace:
        """Views of the first ``n`` target positions (causal: what a run on them alone computes)."""
        return DecoderLayerTrace(
            input=self.input[:, :n],
            self_attn=self.self_attn.first(n, n),
            after_self_attn=self.after_self_attn[:, :n],
            cross_attn=None if self.cross_attn is None else self.cross_attn.first(n),  # every source stays
            after_cross_attn=self.after_cross_attn[:, :n],
            ffn_hidden=self.ffn_hidden[:, :n],
            ffn_output=self.ffn_output[:, :n],
            output=self.output[:, :n],
        )


@dataclass(frozen=True, slots=True, weakref_slot=True)
class SourceTrace:
    """The encoder's input alone: ModelTrace's first four fields, the same numbers, no layer run."""

    src_ids: Tensor  # (B, S)
    src_token_embedding: Tensor  # (B, S, d_model) the lookup, before scaling
    src_embedded: Tensor  # (B, S, d_model) lookup · sqrt(d_model) + PE, as fed to the encoder
    positional: Tensor  # (S, d_model) the position rows added


@dataclass(frozen=True, slots=True, weakref_slot=True)
class ModelTrace:
    """One run of the model. A decoder-only model (``config.encoder=False``) has no source side:
    the ``src_*`` fields and ``memory`` are None and ``encoder`` is empty; its ids are ``tgt_ids``."""

    src_ids: Tensor | None  # (B, S)
    src_token_embedding: Tensor | None  # (B, S, d_model) the lookup, before scaling
    src_embedded: Tensor | None  # (B, S, d_model) lookup · sqrt(d_model) + PE, as fed to the encoder
    positional: Tensor  # (max(S, T), d_model) the position rows added (rope / alibi: zeros, nothing added)
    src_mask: Tensor | None  # (B, 1, 1, S) key padding
    encoder: list[EncoderLayerTrace]
    memory: Tensor | None  # (B, S, d_model) encoder output after the final LayerNorm
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

    def target_prefix(self, n: int) -> ModelTrace:
        """The trace of the first ``n`` target tokens alone, as views of this one's tensors.

        The decoder is causal (its self-attention masks every later position; everything else is
        per position), so position i computes the same numbers whatever follows it: a run on
        ``tgt_ids[:, :n]`` gives these values (up to float rounding: matrix products of other shapes).
        """
        return dataclasses.replace(
            self,
            positional=self.positional[: max(0 if self.src_ids is None else self.src_ids.size(1), n)],
            tgt_ids=self.tgt_ids[:, :n],
            tgt_token_embedding=self.tgt_token_embedding[:, :n],
            tgt_embedded=self.tgt_embedded[:, :n],
            tgt_mask=self.tgt_mask[:, :, :n, :n],
            decoder=[layer.first(n) for layer in self.decoder],
            decoder_output=self.decoder_output[:, :n],
            logits=self.logits[:, :n],
        )


@dataclass(frozen=True, slots=True, weakref_slot=True)
class DecodeResult:
    tokens: Tensor  # (B, 1 + n) the generated ids, starting with BOS (core/tracing/generate.py: the prompt)
    steps: list[ModelTrace]  # one per generated token: the trace of the prefix that produced it
    probs: list[Tensor]  # per step, (B, tgt_vocab_size): the distribution the token was taken from
