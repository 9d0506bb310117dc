"""Switching parts of the model off (ablation): one head, one attention layer, one feed-forward layer.

A part is named as the URL names it, layers and heads counted from 1 as on screen:

    <stack>.<layer>.<head>   one head: head_i replaced before Concat(head_1 … head_h) W_O
    <stack>.<layer>.attn     the whole attention sublayer: MultiHead(…) replaced, so x + 0 (+ norm)
    <stack>.<layer>.ffn      the feed-forward sublayer: FFN(x) replaced

    stack: enc (the encoder's self-attention), dec (the decoder's, or a decoder-only model's, masked
    self-attention), cross (the decoder's cross-attention; it has no feed-forward of its own: that is dec)

Two ways to switch a part off (``mode``):

    zero   the part's output is 0                       (what "off" means most plainly)
    mean   the part's output is its mean over a reference set of sentences, at every position
           (the part says what it always says; only what it says about *this* sentence is gone)

    parts = parse_ablation("dec.2.1,dec.2.3", model.config)
    edits = ablation_edits(parts, "zero", model.config)
    ablated = model.with_edits(edits)          # the same weights; every run has the parts off

The mean is taken from the intact model's runs (:func:`reference_means`), over every position of every
reference sentence. A head switched off keeps W_O's bias (the bias is not the head's); a whole
attention layer switched off adds nothing to the residual stream. Notes: docs/decisions.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import torch

from core.model.config import ModelConfig
from core.model.edits import Edits, Replace, Site
from core.model.trace import AttentionTrace, ModelTrace

MODES = ("zero", "mean")
WHOLE = ("attn", "ffn")
MAX_PARTS = 64  # a URL names at most this many parts (a model folder may have 12 × 12 heads and more)
MAX_TEXT = 2000  # characters of ``ablate=`` read at all


class AblationError(ValueError):
    """An ``ablate=`` value that names no part of this model; the message says which and why."""


@dataclass(frozen=True, order=True)
class Part:
    """One part to switch off: ``stack`` "enc" | "dec" | "cross", ``layer`` from 1, ``what`` a head
    number from 1 (as a string of digits), "attn" or "ffn"."""

    stack: str
    layer: int
    what: str

    @property
    def head(self) -> int | None:
        """The head's number from 1, or None for a whole sublayer."""
        return int(self.what) if self.what.isdigit() else None

    @property
    def id(self) -> str:
        return f"{self.stack}.{self.layer}.{self.what}"

    def site(self) -> Site:
        """Where the model replaces it (core/model/edits.py), layers counted from 0."""
        if self.head is not None:
            return (self.stack, self.layer - 1, "heads")
        return (self.stack, self.layer - 1, self.what)


def stacks(config: ModelConfig) -> tuple[str, ...]:
    """The stacks this model has: ("enc", "dec", "cross") for the paper's model, ("enc",) for BERT,
    ("dec",) for a decoder-only one."""
    return {"encoder_decoder": ("enc", "dec", "cross"), "encoder": ("enc",), "decoder": ("dec",)}[config.stack]


def parse_ablation(text: str, config: ModelConfig) -> tuple[Part, ...]:
    """``ablate=``'s comma-separated ids -> the parts, sorted, each once. "" -> ().

    AblationError (a ValueError) for anything that names no part of this model, saying which id and why.
    """
    text = (text or "").strip()
    if not text:
        return ()
    if len(text) > MAX_TEXT:
        raise AblationError(f"ablate= is {len(text)} characters long: at most {MAX_TEXT} are read")
    parts = sorted({_parse_one(piece.strip(), config) for piece in text.split(",") if piece.strip()})
    if len(parts) > MAX_PARTS:
        raise AblationError(f"ablate= names {len(parts)} parts: at most {MAX_PARTS} can be switched off")
    return tuple(parts)


def _parse_one(piece: str, config: ModelConfig) -> Part:
    bits = piece.split(".")
    shown = piece if len(piece) <= 40 else piece[:40] + "…"
    if len(bits) != 3:
        raise AblationError(f"{shown!r} is not <stack>.<layer>.<head|attn|ffn> (e.g. dec.2.1)")
    stack, layer, what = (b.strip().lower() for b in bits)
    have = stacks(config)
    if stack not in have:
        raise AblationError(f"{shown!r}: this model has no stack {stack!r}; it has {', '.join(have)}")
    if not (layer.isascii() and layer.isdigit()) or not 1 <= int(layer) <= config.num_layers:
        raise AblationError(f"{shown!r}: the layer must be a number from 1 to {config.num_layers}")
    if what in WHOLE:
        if what == "ffn" and stack == "cross":
            raise AblationError(f"{shown!r}: cross-attention has no feed-forward layer of its own (dec.{layer}.ffn)")
        return Part(stack, int(layer), what)
    if not (what.isascii() and what.isdigit()) or not 1 <= int(what) <= config.num_heads:
        raise AblationError(f"{shown!r}: the head must be a number from 1 to {config.num_heads}, attn or ffn")
    return Part(stack, int(layer), str(int(what)))


def format_ablation(parts: Iterable[Part]) -> str:
    """The canonical ``ablate=`` value: sorted ids, comma-separated."""
    return ",".join(p.id for p in sorted(set(parts)))


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise AblationError(f"ablate_mode={str(mode)[:20]!r} must be one of {', '.join(MODES)}")
    return mode


def ablation_edits(
    parts: Sequence[Part], mode: str, config: ModelConfig, means: dict[Site, torch.Tensor] | None = None
) -> Edits:
    """The replacements that switch ``parts`` off (core/model/edits.py).

    zero: heads' slices and whole sublayers' outputs become 0; mean: ``means`` (:func:`reference_means`)
    gives each site's mean, (h, d_k) for "heads" and (d_model,) for "attn" and "ffn".
    """
    check_mode(mode)
    if mode == "mean" and means is None:
        raise ValueError("mode='mean' needs the reference means (reference_means)")
    heads: dict[Site, set[int]] = {}
    whole: list[Site] = []
    for part in parts:
        if part.head is not None:
            heads.setdefault(part.site(), set()).add(part.head - 1)
        else:
            whole.append(part.site())
    replacements: dict[Site, Replace] = {}
    for site, off in heads.items():
        keep = torch.ones(1, config.num_heads, 1, 1, dtype=torch.bool)  # (1, h, 1, 1)
        keep[:, sorted(off)] = False
        value = torch.zeros(()) if mode == "zero" else means[site][None, :, None, :]  # (1, h, 1, d_k)
        replacements[site] = Replace(keep, value)
    for site in whole:
        value = torch.zeros(()) if mode == "zero" else means[site]  # (d_model,)
        replacements[site] = Replace(torch.zeros((), dtype=torch.bool), value)
    return Edits(replacements)


def _attention_sites(trace: ModelTrace) -> Iterable[tuple[str, int, AttentionTrace, torch.Tensor | None]]:
    """(stack, layer from 0, attention trace, FFN output or None) of every attention in a trace."""
    for i, layer in enumerate(trace.encoder):
        yield "enc", i, layer.self_attn, layer.ffn_output
    for i, layer in enumerate(trace.decoder):
        yield "dec", i, layer.self_attn, layer.ffn_output
        if layer.cross_attn is not None:
            yield "cross", i, layer.cross_attn, None


def reference_means(traces: Sequence[ModelTrace]) -> dict[Site, torch.Tensor]:
    """Every site's mean over every position of the intact runs ``traces`` (one sentence each, no
    padding): "heads" (h, d_k) the mean of each head's output, "attn" and "ffn" (d_model,)."""
    if not traces:
        raise ValueError("the mean of a part needs at least one reference sentence")
    sums: dict[Site, list[torch.Tensor]] = {}
    for trace in traces:
        for stack, i, attn, ffn in _attention_sites(trace):
            sums.setdefault((stack, i, "heads"), []).append(attn.heads.transpose(1, 2).flatten(0, 1))  # (B·L, h, d_k)
            sums.setdefault((stack, i, "attn"), []).append(attn.output.flatten(0, 1))  # (B·L, d_model)
            if ffn is not None:
                sums.setdefault((stack, i, "ffn"), []).append(ffn.flatten(0, 1))
    return {site: torch.cat(rows).mean(0) for site, rows in sums.items()}

