"""Switching parts of the model off (ablation): a head, an attention layer, a feed-forward layer.

    zero   the part's output is 0: a head before Concat(head_1 … head_h) W_O (W_O's bias stays); a
           whole sublayer adds nothing to the residual stream (x + 0, then the norm)
    mean   the part's output is its mean over every position of reference sentences, whatever the input

    parts = parse_ablation("dec.2.1,dec.2.3", model.config)     # core/interventions/parts.py
    ablated = model.with_edits(ablation_edits(parts, "zero", model.config))

The means come from the intact model's runs (:func:`reference_means`). Notes: docs/decisions.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch

# the parts' names live in core/interventions/parts.py (no torch: the settings read them)
from core.interventions.parts import AblationError, Part, check_mode, format_ablation, parse_ablation
from core.model.config import ModelConfig
from core.model.edits import Edits, Replace, Site
from core.model.trace import AttentionTrace, ModelTrace

__all__ = [
    "AblationError",
    "Part",
    "ablation_edits",
    "check_mode",
    "format_ablation",
    "parse_ablation",
    "reference_means",
    "site",
]


def site(part: Part) -> Site:
    """Where the model replaces a part (core/model/edits.py), layers counted from 0."""
    return (part.stack, part.layer - 1, "heads" if part.head is not None else part.what)


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
            heads.setdefault(site(part), set()).add(part.head - 1)
        else:
            whole.append(site(part))
    replacements: dict[Site, Replace] = {}
    for where, off in heads.items():
        keep = torch.ones(1, config.num_heads, 1, 1, dtype=torch.bool)  # (1, h, 1, 1)
        keep[:, sorted(off)] = False
        value = torch.zeros(()) if mode == "zero" else means[where][None, :, None, :]  # (1, h, 1, d_k)
        replacements[where] = Replace(keep, value)
    for where in whole:
        value = torch.zeros(()) if mode == "zero" else means[where]  # (d_model,)
        replacements[where] = Replace(torch.zeros((), dtype=torch.bool), value)
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
            heads = attn.heads.transpose(1, 2).flatten(0, 1)  # (B·L, h, d_k)
            sums.setdefault((stack, i, "heads"), []).append(heads)
            sums.setdefault((stack, i, "attn"), []).append(attn.output.flatten(0, 1))  # (B·L, d_model)
            if ffn is not None:
                sums.setdefault((stack, i, "ffn"), []).append(ffn.flatten(0, 1))
    return {site: torch.cat(rows).mean(0) for site, rows in sums.items()}
