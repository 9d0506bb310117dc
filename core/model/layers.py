"""Encoder and decoder layers (section 3.1) with a choice of where LayerNorm goes.

post-norm (the paper):  x = LayerNorm(x + Sublayer(x))
pre-norm:               x = x + Sublayer(LayerNorm(x))

``positions`` is the model's scheme (core/model/positional.py); "rope" and "alibi" go to the
self-attentions, never to the cross-attention (see core/model/attention.py for why).
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn
from torch.nn import functional as F

from core.model.attention import MultiHeadAttention
from core.model.edits import LayerEdit, apply, edit_heads
from core.model.modules import LayerNorm, Linear
from core.model.positional import IN_ATTENTION
from core.model.trace import DecoderLayerTrace, EncoderLayerTrace


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to each position separately (section 3.3).

    activation="gelu" puts GELU(z) = z·Φ(z) (exact, with erf, as BERT) in place of max(0, z);
    "gelu_tanh" its approximation ½z(1 + tanh(√(2/π)(z + 0.044715 z³))), GPT-2's ``gelu_new``.

    activation="swiglu" (Llama, Qwen2) is a gated unit with a third matrix W_gate:
    FFN(x) = (SiLU(x W_gate) ⊙ x W_1) W_2, SiLU(z) = z·σ(z); W_1, W_2 are HF's up_proj, down_proj.
    ``bias=False``: no b_1, b_2 (nor a gate bias).
    """

    def __init__(
        self, d_model: int, d_ff: int, dropout: float, activation: str = "relu", bias: bool = True
    ) -> None:
        super().__init__()
        self.linear1 = Linear(d_model, d_ff, bias=bias)
        self.linear2 = Linear(d_ff, d_model, bias=bias)
        self.gate = Linear(d_model, d_ff, bias=bias) if activation == "swiglu" else None
        self.dropout = nn.Dropout(dropout)
        self.activation = {"relu": torch.relu, "gelu": F.gelu, "gelu_tanh": _gelu_tanh, "swiglu": F.silu}[
            activation
        ]

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.gate is None:
            hidden = self.activation(self.linear1(x))  # (B, L, d_ff)
        else:  # SwiGLU: the gate's SiLU scales each hidden unit of x W_1
            hidden = self.activation(self.gate(x)) * self.linear1(x)  # (B, L, d_ff)
        return self.linear2(self.dropout(hidden)), hidden  # (B, L, d_model), (B, L, d_ff)


def _gelu_tanh(z: torch.Tensor) -> torch.Tensor:
    return F.gelu(z, approximate="tanh")


def make_norm(d_model: int, eps: float, kind: str = "layer") -> nn.Module:
    """LayerNorm, or (kind="rms", Llama) RMSNorm(x) = x / sqrt(mean(x²) + ε) · g: no centring, no bias."""
    return nn.RMSNorm(d_model, eps=eps) if kind == "rms" else LayerNorm(d_model, eps=eps)


def _in_attention(positions: str) -> str:
    """What a self-attention does with positions: "rope", "alibi", or "none" (added to the embeddings)."""
    return positions if positions in IN_ATTENTION else "none"


class Residual(nn.Module):
    """A sublayer wrapped in residual + LayerNorm (section 5.4: dropout on the sublayer's output):

    post-norm (the paper):  x = LayerNorm(x + Dropout(Sublayer(x)))
    pre-norm:               x = x + Dropout(Sublayer(LayerNorm(x)))

    kind="rms" (Llama) puts RMSNorm in LayerNorm's place.
    """

    def __init__(
        self, d_model: int, dropout: float, norm: str, eps: float = 1e-5, kind: str = "layer"
    ) -> None:
        super().__init__()
        self.norm = make_norm(d_model, eps, kind)
        self.dropout = nn.Dropout(dropout)
        self.pre = norm == "pre"

    def forward(self, x: torch.Tensor, sublayer):
        """``sublayer(x) -> (y, extra)``; returns (new x, y, extra) so a trace can show y itself."""
        if self.pre:
            y, extra = sublayer(self.norm(x))
            return x + self.dropout(y), y, extra
        y, extra = sublayer(x)
        return self.norm(x + self.dropout(y)), y, extra


def _edit_attention(edit: LayerEdit | None, stack: str, attended: tuple):
    """An attention's (output, trace) with the "attn" site's edit applied to both (core/model/edits.py)."""
    output, trace = attended
    if edit is None:
        return attended
    edited = edit(stack, "attn", output)
    return edited, (trace if edited is output else dataclasses.replace(trace, output=edited.detach()))


def _edit_ffn(edit: LayerEdit | None, stack: str, ffn: FeedForward):
    """The FFN sublayer with the "ffn" site's edit applied to its output."""
    if edit is None:
        return ffn

    def edited(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        out, hidden = ffn(x)
        return edit(stack, "ffn", out), hidden

    return edited


class EncoderLayer(nn.Module):
    """Self-attention, then the feed-forward network, each inside a Residual (section 3.1):

    x = Residual(x, SelfAttention(x, x, src_mask));  x = Residual(x, FFN(x))
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float,
        norm: str,
        activation: str = "relu",
        eps: float = 1e-5,
        positions: str = "sinusoidal",
    ) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, _in_attention(positions))
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.sublayer1 = Residual(d_model, dropout, norm, eps)
        self.sublayer2 = Residual(d_model, dropout, norm, eps)

    def forward(
        self, x: torch.Tensor, src_mask: torch.Tensor, edit: LayerEdit | None = None
    ) -> tuple[torch.Tensor, EncoderLayerTrace]:
        """``edit``: this layer's sites of an edited run (core/model/edits.py), stack "enc"."""
        x = apply(edit, "enc", "resid", x)
        after_attn, _, attn = self.sublayer1(
            x,
            lambda y: _edit_attention(
                edit, "enc", self.self_attn(y, y, src_mask, edit_heads=edit_heads(edit, "enc"))
            ),
        )
        out, ffn_out, hidden = self.sublayer2(after_attn, _edit_ffn(edit, "enc", self.ffn))
        trace = EncoderLayerTrace(
            input=x.detach(),
            self_attn=attn,
            after_attn=after_attn.detach(),
            ffn_hidden=hidden.detach(),
            ffn_output=ffn_out.detach(),
            output=out.detach(),
        )
        return out, trace


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the memory, then the feed-forward network (3.1):

    y = Residual(y, SelfAttention(y, y, tgt_mask))      tgt_mask: padding ∧ causal
    y = Residual(y, CrossAttention(y, memory, src_mask))
    y = Residual(y, FFN(y))

    ``cross=False`` (a decoder-only model, GPT): no cross-attention and no sublayer2; the FFN's
    residual stays ``sublayer3``, so every decoder layer names its parts alike.
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        d_ff: int,
        dropout: float,
        norm: str,
        activation: str = "relu",
        eps: float = 1e-5,
        positions: str = "sinusoidal",
        cross: bool = True,
        *,
        norm_kind: str = "layer",
        ffn_bias: bool = True,
        attention: dict | None = None,
    ) -> None:
        """``attention``: MultiHeadAttention's keyword options for the self-attention (Llama's grouped
        keys and values, RoPE base and pairing, biases); ``norm_kind`` "rms" for RMSNorm."""
        super().__init__()
        mode = _in_attention(positions)
        options = attention or {}
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, mode, causal=True, **options)
        # Cross-attention: no rope/alibi (query and key positions belong to different sequences)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout) if cross else None
        self.ffn = FeedForward(d_model, d_ff, dropout, activation, bias=ffn_bias)
        self.sublayer1 = Residual(d_model, dropout, norm, eps, norm_kind)
        self.sublayer2 = Residual(d_model, dropout, norm, eps, norm_kind) if cross else None
        self.sublayer3 = Residual(d_model, dropout, norm, eps, norm_kind)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor | None,
        src_mask: torch.Tensor | None,
        tgt_mask: torch.Tensor,
        positions: torch.Tensor | None = None,
        past: tuple[torch.Tensor, torch.Tensor] | None = None,
        edit: LayerEdit | None = None,
    ) -> tuple[torch.Tensor, DecoderLayerTrace]:
        """``positions`` (B, T): each token's position for RoPE (left padding); None: 0, 1, ...
        ``past``: the self-attention's keys and values of the tokens before x (generation's cache).
        ``edit``: this layer's sites of an edited run (core/model/edits.py), stacks "dec" and "cross"."""
        x = apply(edit, "dec", "resid", x)
        after_self, _, self_attn = self.sublayer1(
            x,
            lambda y: _edit_attention(
                edit, "dec", self.self_attn(y, y, tgt_mask, positions, past, edit_heads(edit, "dec"))
            ),
        )
        after_cross, cross_attn = after_self, None  # decoder-only: nothing to read across
        if self.cross_attn is not None:
            # Cross-attention: queries from the decoder, keys and values from the encoder's memory.
            after_cross, _, cross_attn = self.sublayer2(
                after_self,
                lambda y: _edit_attention(
                    edit, "cross", self.cross_attn(y, memory, src_mask, edit_heads=edit_heads(edit, "cross"))
                ),
            )
        out, ffn_out, hidden = self.sublayer3(after_cross, _edit_ffn(edit, "dec", self.ffn))
        trace = DecoderLayerTrace(
            input=x.detach(),
            self_attn=self_attn,
            after_self_attn=after_self.detach(),
            cross_attn=cross_attn,
            after_cross_attn=after_cross.detach(),
            ffn_hidden=hidden.detach(),
            ffn_output=ffn_out.detach(),
            output=out.detach(),
        )
        return out, trace
