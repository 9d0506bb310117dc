"""The trace: every intermediate tensor a view needs, detached, returned by ``Transformer.trace``.

Modules keep no hidden state (unlike the Annotated Transformer's ``self.attn``): a view reads one
trace object and nothing depends on call order. Shapes use B = batch, h = heads, S = source
length, T = target length, L = the sequence at hand.
"""

from __future__ import annotations

import ctypes
import dataclasses
from dataclasses import dataclass, field

import torch
from torch import Tensor

# -- pickling ---------------------------------------------------------------------------------------
# The app keeps runs in st.cache_data, which pickles a run when it is stored and unpickles it on every
# rerun that reads it. torch pickles each tensor through torch.save (a zip-style record per storage):
# ~50 ms each way for the ~260 tensors of a d_model=512, 6-layer trace. A trace's tensors are plain
# CPU tensors, so each trace dataclass pickles them as (raw bytes, dtype, shape) instead: ~9 ms to
# store, ~6 ms to read (benchmarks/trace.py prints both). An expanded view (the masks, ALiBi's bias)
# is written once, un-expanded, and expanded again when read, as the model made it. Only pickle's
# own machinery is involved (``__reduce__``): nothing here calls an unpickler.


def _tensor_state(t: Tensor) -> tuple:
    shape = tuple(t.shape)
    compact = t
    for dim, (size, stride) in enumerate(zip(t.shape, t.stride(), strict=True)):
        if stride == 0 and size > 1:  # broadcast along this dimension: one slice holds every value
            compact = compact.narrow(dim, 0, 1)
    compact = compact.contiguous()
    nbytes = compact.numel() * compact.element_size()
    raw = bytearray((ctypes.c_char * nbytes).from_address(compact.data_ptr())) if nbytes else bytearray()
    return raw, compact.dtype, tuple(compact.shape), shape


def _tensor_from_state(raw: bytearray, dtype: torch.dtype, compact_shape: tuple, shape: tuple) -> Tensor:
    if raw:
        t = torch.frombuffer(raw, dtype=dtype).view(compact_shape)  # no copy: the tensor owns `raw`
    else:
        t = torch.empty(compact_shape, dtype=dtype)
    return t if compact_shape == shape else t.expand(shape)


class _RawTensor:
    """Stands in for a tensor while pickling: reduces to its bytes, unpickles as the tensor."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor

    def __reduce__(self):
        return _tensor_from_state, _tensor_state(self.tensor)


def _raw(value):
    if (
        type(value) is torch.Tensor
        and value.device.type == "cpu"
        and value.layout == torch.strided
        and not value.requires_grad
        and not value.is_quantized
    ):
        return _RawTensor(value)
    if type(value) is list:  # DecodeResult.probs: a list of tensors
        return [_raw(v) for v in value]
    return value  # None, nested traces (they reduce themselves), any other tensor (torch's way)


class _FastPickle:
    """A trace dataclass pickled field by field, its tensors as raw bytes (see above)."""

    def __reduce__(self):
        return type(self), tuple(_raw(getattr(self, f.name)) for f in dataclasses.fields(self))


@dataclass(frozen=True)
class AttentionTrace(_FastPickle):
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


@dataclass(frozen=True)
class EncoderLayerTrace(_FastPickle):
    input: Tensor  # (B, S, d_model)
    self_attn: AttentionTrace
    after_attn: Tensor  # (B, S, d_model) after the first residual (+ LayerNorm when post-norm)
    ffn_hidden: Tensor  # (B, S, d_ff) ReLU(x W_1 + b_1)
    ffn_output: Tensor  # (B, S, d_model) hidden W_2 + b_2
    output: Tensor  # (B, S, d_model)


@dataclass(frozen=True)
class DecoderLayerTrace(_FastPickle):
    input: Tensor  # (B, T, d_model)
    self_attn: AttentionTrace  # masked (causal) self-attention
    after_self_attn: Tensor
    cross_attn: AttentionTrace  # queries from the decoder, keys and values from the memory
    after_cross_attn: Tensor
    ffn_hidden: Tensor  # (B, T, d_ff)
    ffn_output: Tensor
    output: Tensor  # (B, T, d_model)

    def first(self, n: int) -> DecoderLayerTrace:
        """Views of the first ``n`` target positions (causal: what a run on them alone computes)."""
        return DecoderLayerTrace(
            input=self.input[:, :n],
            self_attn=self.self_attn.first(n, n),
            after_self_attn=self.after_self_attn[:, :n],
            cross_attn=self.cross_attn.first(n),  # every source position stays
            after_cross_attn=self.after_cross_attn[:, :n],
            ffn_hidden=self.ffn_hidden[:, :n],
            ffn_output=self.ffn_output[:, :n],
            output=self.output[:, :n],
        )


@dataclass(frozen=True)
class SourceTrace(_FastPickle):
    """The encoder's input alone: ModelTrace's first four fields, the same numbers, no layer run."""

    src_ids: Tensor  # (B, S)
    src_token_embedding: Tensor  # (B, S, d_model) the lookup, before scaling
    src_embedded: Tensor  # (B, S, d_model) lookup · sqrt(d_model) + PE, as fed to the encoder
    positional: Tensor  # (S, d_model) the position rows added


@dataclass(frozen=True)
class ModelTrace(_FastPickle):
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

    def target_prefix(self, n: int) -> ModelTrace:
        """The trace of the first ``n`` target tokens alone, as views of this one's tensors.

        The decoder is causal (its self-attention masks every later position; everything else is
        per position), so position i computes the same numbers whatever follows it: a run on
        ``tgt_ids[:, :n]`` gives these values (up to float rounding: matrix products of other shapes).
        """
        return dataclasses.replace(
            self,
            positional=self.positional[: max(self.src_ids.size(1), n)],
            tgt_ids=self.tgt_ids[:, :n],
            tgt_token_embedding=self.tgt_token_embedding[:, :n],
            tgt_embedded=self.tgt_embedded[:, :n],
            tgt_mask=self.tgt_mask[:, :, :n, :n],
            decoder=[layer.first(n) for layer in self.decoder],
            decoder_output=self.decoder_output[:, :n],
            logits=self.logits[:, :n],
        )


@dataclass(frozen=True)
class DecodeResult(_FastPickle):
    tokens: Tensor  # (B, 1 + n) the generated ids, starting with BOS
    steps: list[ModelTrace]  # one per generated token: the trace of the prefix that produced it
    probs: list[Tensor]  # per step, (B, tgt_vocab_size): the distribution the token was taken from
