"""Edits: a run of the model in which some of its tensors are replaced, to ask what they do.

    x' = where(keep, x, value)            (keep True: the run's own number; False: value's)

Switching a head off (value 0, or its mean) and patching one run into another (value: the other
run's tensor) are this one step at a *site* (stack, layer, part): stack "enc" | "dec" | "cross",
layer from 0, part "heads" (head_i, (B, h, L, d_k), before Concat·W_O), "attn" or "ffn" (the
sublayer's output, (B, L, d_model), before residual + norm) or "resid" (the stream entering the layer).
``keep`` and ``value`` broadcast: one row of value per batch row tries many patches in one run.
Modules hold no edit: it goes down with a run (``Transformer.trace(..., edits=)``) or is kept by a
twin sharing the weights (``Transformer.with_edits``); the model every session reads never changes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch
from torch import Tensor

STACKS = ("enc", "dec", "cross")
PARTS = ("heads", "attn", "ffn", "resid")
Site = tuple[str, int, str]  # (stack, layer from 0, part)


@dataclass(frozen=True)
class Replace:
    """x -> where(keep, x, value), each broadcast to x's shape."""

    keep: Tensor  # bool
    value: Tensor

    def __call__(self, x: Tensor) -> Tensor:
        return torch.where(self.keep.to(x.device), x, self.value.to(x.device, x.dtype))


@dataclass(frozen=True)
class _Then:
    """Two replacements of one site, one after the other."""

    first: Callable[[Tensor], Tensor]
    second: Callable[[Tensor], Tensor]

    def __call__(self, x: Tensor) -> Tensor:
        return self.second(self.first(x))


LayerEdit = Callable[[str, str, Tensor], Tensor]  # (stack, part, x) -> x', one layer's sites


class Edits:
    """The replacements of one run, by site. Immutable; ``Edits({})`` changes nothing."""

    def __init__(self, replacements: Mapping[Site, Callable[[Tensor], Tensor]]) -> None:
        """``replacements``: site -> a ``Replace`` (or any function of the tensor there)."""
        for stack, layer, part in replacements:
            if stack not in STACKS or part not in PARTS or not isinstance(layer, int) or layer < 0:
                raise ValueError(f"no such site {(stack, layer, part)!r}: stack in {STACKS}, part in {PARTS}")
        self.replacements = dict(replacements)

    def __bool__(self) -> bool:
        return bool(self.replacements)

    def __repr__(self) -> str:
        return f"Edits({sorted(self.replacements)})"

    def merged(self, other: Edits) -> Edits:
        """These replacements, then ``other``'s: where both replace one site, ``other``'s acts on the
        result of these (a head switched off stays off when another head of its layer is patched)."""
        both = dict(self.replacements)
        for site, replace in other.replacements.items():
            first = both.get(site)
            both[site] = replace if first is None else _Then(first, replace)
        return Edits(both)

    def sites(self) -> list[Site]:
        return sorted(self.replacements)

    def layer(self, i: int) -> LayerEdit | None:
        """The edit of layer ``i``'s sites (every stack), or None when it has none."""
        mine = {(s, p): r for (s, layer, p), r in self.replacements.items() if layer == i}
        if not mine:
            return None

        def edit(stack: str, part: str, x: Tensor) -> Tensor:
            replace = mine.get((stack, part))
            return x if replace is None else replace(x)

        return edit


def edit_heads(edit: LayerEdit | None, stack: str) -> Callable[[Tensor], Tensor] | None:
    """What a MultiHeadAttention applies to its heads (B, h, L, d_k) before W_O; None: nothing."""
    if edit is None:
        return None
    return lambda heads: edit(stack, "heads", heads)


def apply(edit: LayerEdit | None, stack: str, part: str, x: Tensor) -> Tensor:
    """``edit(stack, part, x)``, or x itself when the layer has no edit."""
    return x if edit is None else edit(stack, part, x)
