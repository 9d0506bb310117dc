"""Patch one sentence's run into another's (activation patching): which part carries the difference?

Two inputs of one length, clean and corrupted, answer differently. At the answer position,
m(run) = logit_a − logit_f (a: the clean run's answer, f: the corrupted run's; logit_a alone when
they agree). Patching a part runs the corrupted input with that part's output from the clean run:

    restored = (m(patched) − m(corrupted)) / (m(clean) − m(corrupted))     0: none of it, 1: all

Grids: each head's output (every position), and the residual stream entering each layer at each
position (over the stack whose input differs). A grid is one batched run, each row joining at the
layer of its patch from the corrupted run's stream there; only the answer's logits are computed.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from core.model.edits import Edits, Replace
from core.model.trace import ModelTrace
from core.model.transformer import Transformer, _eval_mode


class PatchError(ValueError):
    """A pair that cannot be patched (different lengths, nothing to restore); the message says why."""


@dataclass(frozen=True)
class Inputs:
    """One input of a patching pair: ``ids`` (1, L) the first stack's (the encoder's, or a
    decoder-only model's), and for an encoder-decoder ``tgt`` (1, T) the decoder's (shared by both runs)."""

    ids: Tensor
    tgt: Tensor | None = None


@dataclass(frozen=True)
class Patching:
    """The two grids and what they are shares of."""

    head_rows: list[tuple[str, int]]  # (stack, layer from 0) of each row of ``heads``
    heads: Tensor  # (rows, h) share restored by patching each head's output
    resid_stack: str  # "enc" or "dec": the stack whose residual stream ``resid`` patches
    resid: Tensor  # (layers, L) share restored by patching the stream entering layer l at position p
    position: int  # the answer's position (in the decoder's positions)
    answer: int  # a: the clean run's answer (an id)
    foil: int | None  # f: the corrupted run's answer, or None when it is a too
    clean: float  # m(clean)
    corrupted: float  # m(corrupted)


def logit_difference(logits: Tensor, answer: int, foil: int | None) -> Tensor:
    """(..., vocab) -> (...,): logit_a − logit_f (logit_a alone when there is no foil)."""
    value = logits[..., answer]
    return value if foil is None else value - logits[..., foil]


@torch.no_grad()
def patch(
    model: Transformer,
    clean: Inputs,
    corrupted: Inputs,
    position: int,
    answer: int | None = None,
    foil: int | None = -1,
) -> Patching:
    """Both grids for a pair. ``position``: the decoder position whose next token is the answer.
    ``answer`` None: the clean run's most probable token there; ``foil`` -1: the corrupted run's (None
    when it equals the answer); None: no foil."""
    if model.decoder is None:
        raise PatchError("an encoder alone predicts no token: patching needs a model that writes one")
    if clean.ids.shape != corrupted.ids.shape:
        raise PatchError(
            "the two inputs must have the same number of tokens: "
            f"{clean.ids.size(1)} and {corrupted.ids.size(1)}"
        )
    if clean.ids.size(1) == 0:
        raise PatchError("the two inputs are empty")
    with _eval_mode(model):
        clean_tr, corr_tr = _trace(model, clean), _trace(model, corrupted)
        if not 0 <= position < clean_tr.logits.size(1):
            raise PatchError(
                f"position {position} is outside the decoder's {clean_tr.logits.size(1)} positions"
            )
        if answer is None:
            answer = int(clean_tr.logits[0, position].argmax())
        if foil == -1:
            foil = int(corr_tr.logits[0, position].argmax())
        if foil == answer:
            foil = None
        m_clean = float(logit_difference(clean_tr.logits[0, position], answer, foil))
        m_corr = float(logit_difference(corr_tr.logits[0, position], answer, foil))
        if abs(m_clean - m_corr) < 1e-6:
            raise PatchError(
                "both inputs give the answer the same logit difference: there is nothing to restore"
            )

        def share(out: Tensor) -> Tensor:  # (..., d_model) the final norm's output at the position
            return (_difference(model, out, answer, foil) - m_corr) / (m_clean - m_corr)

        rows, heads = _head_grid(model, clean_tr, corr_tr, position)
        stack, resid = _resid_grid(model, clean_tr, corr_tr, position)
    return Patching(rows, share(heads), stack, share(resid), position, answer, foil, m_clean, m_corr)


def _difference(model: Transformer, out: Tensor, answer: int, foil: int | None) -> Tensor:
    """m = logit_a − logit_f from the final norm's output ``out`` (..., d_model), through only the two
    rows of the output layer it reads (not the whole vocabulary's)."""
    ids = [answer] if foil is None else [answer, foil]
    gen = model.generator
    logits = out @ gen.weight[ids].T  # (..., 1 or 2)
    if gen.bias is not None:
        logits = logits + gen.bias[ids]
    return logits[..., 0] if foil is None else logits[..., 0] - logits[..., 1]


def _trace(model: Transformer, inputs: Inputs) -> ModelTrace:
    if model.encoder is None:
        return model.trace(inputs.ids)
    if inputs.tgt is None:
        raise PatchError("an encoder-decoder's pair needs the decoder's input (tgt)")
    return model.trace(inputs.ids, inputs.tgt)


class _Batch:
    """Rows of patched runs, each joining at a layer from the corrupted run's stream there."""

    def __init__(self) -> None:
        self.x: Tensor | None = None  # (B, L, d_model)
        self.memory: Tensor | None = None  # (B, S, d_model) each row's encoder output (encoder-decoder)

    def join(self, start: Tensor, n: int, memory: Tensor | None = None) -> None:
        """n rows starting from ``start`` (1, L, d_model) or (n, L, d_model)."""
        new = start.expand(n, -1, -1)
        self.x = new if self.x is None else torch.cat([self.x, new])
        if memory is not None:
            mem = memory.expand(n, -1, -1)
            self.memory = mem if self.memory is None else torch.cat([self.memory, mem])

    @property
    def size(self) -> int:
        return 0 if self.x is None else self.x.size(0)


def _patch_rows(batch_size: int, first: int, h: int) -> Tensor:
    """keep (B, h, 1, 1): True everywhere except row first + i, head i (the new rows' patches)."""
    keep = torch.ones(batch_size, h, 1, 1, dtype=torch.bool)
    keep[first + torch.arange(h), torch.arange(h)] = False
    return keep


def _head_grid(model: Transformer, clean: ModelTrace, corr: ModelTrace, position: int):
    """-> ([(stack, layer)], (rows, h, d_model) the final norm's output at ``position``): a row per
    attention."""
    h = model.config.num_heads
    rows: list[tuple[str, int]] = []
    batch = _Batch()
    for i, layer in enumerate(model.encoder.layers if model.encoder is not None else []):
        batch.join(corr.encoder[i].input, h)
        keep = _patch_rows(batch.size, batch.size - h, h)
        edits = model._edits(Edits({("enc", i, "heads"): Replace(keep, clean.encoder[i].self_attn.heads)}))
        batch.x, _ = layer(batch.x, corr.src_mask, edits.layer(i))
        rows.append(("enc", i))
    if model.encoder is not None:
        batch.memory = model.encoder.norm(batch.x) if batch.x is not None else None
        batch.x = None if batch.x is None else corr.decoder[0].input.expand(batch.size, -1, -1)
    for i, layer in enumerate(model.decoder.layers):
        sites = [("dec", i, clean.decoder[i].self_attn)]
        if clean.decoder[i].cross_attn is not None:
            sites.append(("cross", i, clean.decoder[i].cross_attn))
        replacements = {}
        for stack, _, attn in sites:
            batch.join(corr.decoder[i].input, h, corr.memory)
            replacements[(stack, i)] = (batch.size - h, attn.heads)
            rows.append((stack, i))
        edit = {}
        for (stack, _), (first, value) in replacements.items():
            edit[(stack, i, "heads")] = Replace(_patch_rows(batch.size, first, h), value)
        edits = model._edits(Edits(edit))
        batch.x, _ = layer(batch.x, batch.memory, corr.src_mask, corr.tgt_mask, None, None, edits.layer(i))
    out = model.decoder.norm(batch.x[:, position])  # (B, d_model)
    return rows, out.reshape(len(rows), h, -1)  # (rows, h, d_model)


def _resid_grid(model: Transformer, clean: ModelTrace, corr: ModelTrace, position: int):
    """-> (stack, (layers, L, d_model) the final norm's output at ``position``, the stream entering
    layer l patched at p)."""
    encoder = model.encoder is not None
    stack_layers = model.encoder.layers if encoder else model.decoder.layers
    clean_layers = clean.encoder if encoder else clean.decoder
    corr_layers = corr.encoder if encoder else corr.decoder
    L = clean_layers[0].input.size(1)
    batch = _Batch()
    own = model._edits(None)
    for i, layer in enumerate(stack_layers):
        start = corr_layers[i].input.expand(L, -1, -1).clone()  # (L, L, d_model): row p patched at p
        start[torch.arange(L), torch.arange(L)] = clean_layers[i].input[0]
        batch.join(start, L)
        edit = None if own is None else own.layer(i)
        if encoder:
            batch.x, _ = layer(batch.x, corr.src_mask, edit)
        else:
            batch.x, _ = layer(batch.x, None, None, corr.tgt_mask, None, None, edit)
    if encoder:
        memory = model.encoder.norm(batch.x)
        x = corr.decoder[0].input.expand(batch.size, -1, -1)
        for i, layer in enumerate(model.decoder.layers):
            edit = None if own is None else own.layer(i)
            x, _ = layer(x, memory, corr.src_mask, corr.tgt_mask, None, None, edit)
    else:
        x = batch.x
    out = model.decoder.norm(x[:, position])
    return ("enc" if encoder else "dec"), out.reshape(len(stack_layers), L, -1)
