"""Ablation (core/interventions/ablation.py) against the same ablation done on transformers' own models
with torch forward hooks: GPT2LMHeadModel, LlamaForCausalLM, Qwen2ForCausalLM (grouped-query attention)
and BertModel (our encoder-only model, post-norm), tiny and random (tests/core/interventions/hf_pairs.py).

The hooks say what switching a part off means, written without our code:

    head i   a forward pre-hook on the output projection zeroes columns i·d_k … (i+1)·d_k of its input
             (the projection's bias stays: it is not the head's)
    attn     a forward hook makes the attention sublayer's output 0, its bias included: x + 0, then
             (BERT, post-norm) LayerNorm(x + 0)
    ffn      a forward hook makes the feed-forward sublayer's output 0

and, in mean mode, puts in place the part's mean over a few sentences' positions, taken from the HF
model's own runs by hooks. Logits (BERT: last hidden states) must agree within ATOL; float32.
"""

from __future__ import annotations

import pytest
import torch

from core.interventions.ablation import ablation_edits, parse_ablation, reference_means
from tests.core.interventions.hf_pairs import (
    FAMILIES,
    HEADS,
    LAYERS,
    attn_module,
    capture_input,
    capture_output,
    ffn_module,
    heads_module,
    hf_model,
    hf_output,
    hooked,
    our_output,
    ours_from,
    random_ids,
    replace_heads,
    replace_output,
)

ATOL = 1e-5
IDS = random_ids(2, 9, seed=1)
# sentences the means are taken over: one each, no padding, of different lengths
REFERENCE = [random_ids(1, n, seed=10 + n) for n in (5, 8, 11)]

# ablate= (with {s} the model's stack) -> the hooks that do the same: (kind, layer from 0, heads)
CASES = {
    "one head": ("{s}.2.3", [("heads", 1, [2])]),
    "two heads, two layers": ("{s}.1.2,{s}.3.4", [("heads", 0, [1]), ("heads", 2, [3])]),
    "two heads, one layer": ("{s}.2.1,{s}.2.4", [("heads", 1, [0, 3])]),
    "attn": ("{s}.2.attn", [("attn", 1, None)]),
    "ffn": ("{s}.1.ffn", [("ffn", 0, None)]),
    "all kinds": ("{s}.1.4,{s}.2.attn,{s}.3.ffn", [("heads", 0, [3]), ("attn", 1, None), ("ffn", 2, None)]),
}


@pytest.fixture(scope="module", params=FAMILIES)
def pair(request):
    family = request.param
    hf = hf_model(family)
    return family, hf, ours_from(hf, family)


def _stack(family: str) -> str:
    return "enc" if family == "bert" else "dec"


def _hooks(hf, family: str, spec, values=None) -> list:
    """The hooks of ``spec``; ``values`` None: zeros, else (kind, layer) -> the mean put in place."""
    handles = []
    for kind, layer, heads in spec:
        mean = None if values is None else values[(kind, layer)]
        if kind == "heads":

            def head_value(i, cols, mean=mean):
                return torch.zeros_like(cols) if mean is None else mean[i].expand_as(cols)

            handles.append(replace_heads(heads_module(hf, family, layer), head_value, heads))
        else:
            module = (attn_module if kind == "attn" else ffn_module)(hf, family, layer)

            def whole_value(out, mean=mean):
                return torch.zeros_like(out) if mean is None else mean.expand_as(out)

            handles.append(replace_output(module, whole_value))
    return handles


def test_the_intact_models_agree(pair):
    """The ground the rest stands on: no ablation, the same numbers."""
    family, hf, ours = pair
    torch.testing.assert_close(our_output(ours, IDS), hf_output(hf, family, IDS), atol=ATOL, rtol=0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_zero_ablation_equals_hooks_on_the_hf_model(pair, case):
    family, hf, ours = pair
    text, spec = CASES[case]
    parts = parse_ablation(text.format(s=_stack(family)), ours.config)
    edits = ablation_edits(parts, "zero", ours.config)
    with hooked(*_hooks(hf, family, spec)):
        expected = hf_output(hf, family, IDS)
    got = our_output(ours, IDS, edits=edits)
    torch.testing.assert_close(got, expected, atol=ATOL, rtol=0)
    # the same through a twin that keeps the edits (what the app runs)
    torch.testing.assert_close(our_output(ours.with_edits(edits), IDS), expected, atol=ATOL, rtol=0)
    # and the ablation did something: the test would see a wrong one
    assert (expected - hf_output(hf, family, IDS)).abs().max() > 1e-2


def _hf_means(hf, family: str) -> dict:
    """(kind, layer) -> the mean over every position of REFERENCE of the HF model's head outputs
    (h, d_k), attention outputs and FFN outputs (d,), captured by hooks on the intact model."""
    got = {(kind, layer): [] for kind in ("heads", "attn", "ffn") for layer in range(LAYERS)}
    handles = []
    for layer in range(LAYERS):
        handles.append(capture_input(heads_module(hf, family, layer), got[("heads", layer)]))
        handles.append(capture_output(attn_module(hf, family, layer), got[("attn", layer)]))
        handles.append(capture_output(ffn_module(hf, family, layer), got[("ffn", layer)]))
    with hooked(*handles):
        for ids in REFERENCE:
            hf_output(hf, family, ids)
    means = {}
    for (kind, layer), rows in got.items():
        flat = torch.cat([r.reshape(-1, r.size(-1)) for r in rows])  # (positions, d)
        means[(kind, layer)] = flat.mean(0).reshape(HEADS, -1) if kind == "heads" else flat.mean(0)
    return means


@pytest.fixture(scope="module")
def means(pair):
    family, hf, ours = pair
    return _hf_means(hf, family), reference_means([ours.trace(ids) for ids in REFERENCE])


def test_reference_means_equal_the_hf_models_means(pair, means):
    family, _, _ = pair
    theirs, mine = means
    stack = _stack(family)
    for (kind, layer), value in theirs.items():
        torch.testing.assert_close(mine[(stack, layer, kind)], value, atol=ATOL, rtol=0)


@pytest.mark.parametrize("case", sorted(CASES))
def test_mean_ablation_equals_hooks_putting_the_mean_in_place(pair, means, case):
    family, hf, ours = pair
    theirs, mine = means
    text, spec = CASES[case]
    parts = parse_ablation(text.format(s=_stack(family)), ours.config)
    edits = ablation_edits(parts, "mean", ours.config, mine)
    with hooked(*_hooks(hf, family, spec, theirs)):
        expected = hf_output(hf, family, IDS)
    torch.testing.assert_close(our_output(ours, IDS, edits=edits), expected, atol=ATOL, rtol=0)
    with hooked(*_hooks(hf, family, spec)):  # mean is not zero: the test tells the modes apart
        zeroed = hf_output(hf, family, IDS)
    assert (expected - zeroed).abs().max() > 1e-2
