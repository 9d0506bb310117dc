"""A second reference for ablation: TransformerLens's HookedTransformer, the interpretability library's
own model, with its own hook points, on the same tiny random GPT-2 (tests/core/interventions/hf_pairs.py),
converted by its own ``convert_gpt2_weights`` (nothing downloaded; no weight processing: no folded
LayerNorm, no centring, value biases kept in their heads, so hook_z is each head's plain output).

    blocks.{l}.attn.hook_z     (B, L, h, d_head) the heads before W_O: head i zeroed, or its mean
    blocks.{l}.hook_attn_out   the attention sublayer's output (b_O included): "attn"
    blocks.{l}.hook_mlp_out    the MLP's output: "ffn"

run_with_hooks must give our ablated model's logits; its cache gives the means.
TransformerLens 3.9.0 is pinned (requirements-dev.txt): 4.x no longer has HookedTransformer.
"""

from __future__ import annotations

import warnings

import pytest
import torch

from core.interventions.ablation import ablation_edits, parse_ablation, reference_means
from tests.core.interventions.hf_pairs import (
    D_K,
    HEADS,
    LAYERS,
    VOCAB,
    D,
    heads_module,
    hf_model,
    hf_output,
    hooked,
    our_output,
    ours_from,
    random_ids,
    replace_heads,
)

ATOL = 1e-5
IDS = random_ids(2, 9, seed=1)
REFERENCE = [random_ids(1, n, seed=10 + n) for n in (5, 8, 11)]

# ablate= -> TransformerLens hook points and what they do: (hook name, heads or None)
CASES = {
    "dec.2.3": [("blocks.1.attn.hook_z", [2])],
    "dec.1.2,dec.3.4": [("blocks.0.attn.hook_z", [1]), ("blocks.2.attn.hook_z", [3])],
    "dec.2.1,dec.2.4": [("blocks.1.attn.hook_z", [0, 3])],
    "dec.2.attn": [("blocks.1.hook_attn_out", None)],
    "dec.1.ffn": [("blocks.0.hook_mlp_out", None)],
    "dec.1.4,dec.2.attn,dec.3.ffn": [
        ("blocks.0.attn.hook_z", [3]),
        ("blocks.1.hook_attn_out", None),
        ("blocks.2.hook_mlp_out", None),
    ],
}


@pytest.fixture(scope="module")
def models():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # HookedTransformer's own deprecation notice (4.x replaces it)
        from transformer_lens import HookedTransformer, HookedTransformerConfig
        from transformer_lens.pretrained.weight_conversions.gpt2 import convert_gpt2_weights

        hf = hf_model("gpt2")
        cfg = HookedTransformerConfig(
            n_layers=LAYERS,
            d_model=D,
            n_ctx=hf.config.n_positions,
            d_head=D_K,
            n_heads=HEADS,
            d_mlp=4 * D,
            d_vocab=VOCAB,
            act_fn="gelu_new",
            normalization_type="LN",
            eps=hf.config.layer_norm_epsilon,
            positional_embedding_type="standard",
            original_architecture="GPT2LMHeadModel",
            default_prepend_bos=False,
        )
        lens = HookedTransformer(cfg)
        lens.load_and_process_state_dict(
            convert_gpt2_weights(hf, cfg),
            fold_ln=False,
            center_writing_weights=False,
            center_unembed=False,
            fold_value_biases=False,
        )
    return hf, lens.eval(), ours_from(hf, "gpt2")


def _hooks(spec, means=None):
    """TransformerLens fwd_hooks: zeros, or ``means`` (hook name -> mean) in place."""
    hooks = []
    for name, heads in spec:
        mean = None if means is None else means[name]

        def hook(value, hook, heads=heads, mean=mean):
            value = value.clone()
            if heads is None:
                value[:] = 0.0 if mean is None else mean
            else:
                value[:, :, heads] = 0.0 if mean is None else mean[heads]
            return value

        hooks.append((name, hook))
    return hooks


def test_transformer_lens_runs_the_same_model(models):
    hf, lens, ours = models
    with torch.no_grad():
        theirs = lens(IDS)
    torch.testing.assert_close(theirs, hf_output(hf, "gpt2", IDS), atol=ATOL, rtol=0)
    torch.testing.assert_close(our_output(ours, IDS), theirs, atol=ATOL, rtol=0)


def test_hook_z_is_the_input_of_c_proj(models):
    """What TransformerLens calls a head's output is what the HF hooks zero: c_proj's input columns."""
    hf, lens, _ = models
    _, cache = lens.run_with_cache(IDS)
    seen = []

    def keep(i, cols):
        seen.append(cols.clone())
        return cols

    with hooked(replace_heads(heads_module(hf, "gpt2", 1), keep, [2])):
        hf_output(hf, "gpt2", IDS)
    torch.testing.assert_close(cache["blocks.1.attn.hook_z"][:, :, 2], seen[0], atol=ATOL, rtol=0)


@pytest.mark.parametrize("text", sorted(CASES))
def test_zero_ablation_equals_run_with_hooks(models, text):
    _, lens, ours = models
    edits = ablation_edits(parse_ablation(text, ours.config), "zero", ours.config)
    with torch.no_grad():
        expected = lens.run_with_hooks(IDS, fwd_hooks=_hooks(CASES[text]))
    torch.testing.assert_close(our_output(ours, IDS, edits=edits), expected, atol=ATOL, rtol=0)
    assert (expected - lens(IDS)).abs().max() > 1e-2


@pytest.mark.parametrize("text", sorted(CASES))
def test_mean_ablation_equals_run_with_hooks(models, text):
    _, lens, ours = models
    names = {name for spec in CASES.values() for name, _ in spec}
    rows = {name: [] for name in names}
    for ids in REFERENCE:
        _, cache = lens.run_with_cache(ids, names_filter=lambda name: name in names)
        for name in names:
            rows[name].append(cache[name][0])  # (L, h, d_head) or (L, d_model)
    means = {name: torch.cat(r).mean(0) for name, r in rows.items()}
    mine = reference_means([ours.trace(ids) for ids in REFERENCE])
    edits = ablation_edits(parse_ablation(text, ours.config), "mean", ours.config, mine)
    with torch.no_grad():
        expected = lens.run_with_hooks(IDS, fwd_hooks=_hooks(CASES[text], means))
    torch.testing.assert_close(our_output(ours, IDS, edits=edits), expected, atol=ATOL, rtol=0)
    with torch.no_grad():
        assert (expected - lens.run_with_hooks(IDS, fwd_hooks=_hooks(CASES[text]))).abs().max() > 1e-2
