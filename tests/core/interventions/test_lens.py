"""The logit lens (core/interventions/lens.py) against transformers' own hidden states: for GPT-2, Llama
and Qwen2 (tiny, random), ``output_hidden_states=True`` gives the stream entering the first layer
(the embeddings) and after each layer; each through the model's final norm (GPT-2 ``transformer.ln_f``,
Llama/Qwen2 ``model.norm``) and ``lm_head`` is that layer's guess:

    P_l(y_t) = softmax(Norm(x_l[t]) W_U),   l = 0 … N

HF's last hidden state has the final norm applied already: its row is the model's own logits. With
k = the whole vocabulary the lens's top_ids/top_probs hold every probability, so the whole
distribution of every layer at every position is compared.
"""

from __future__ import annotations

import pytest
import torch

from core.interventions.ablation import ablation_edits, parse_ablation
from core.interventions.lens import logit_lens
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from tests.core.interventions.hf_pairs import (
    DECODERS,
    LAYERS,
    VOCAB,
    ffn_module,
    heads_module,
    hf_model,
    hooked,
    ours_from,
    random_ids,
    replace_heads,
    replace_output,
)

ATOL = 1e-5
IDS = random_ids(2, 9, seed=3)  # the lens reads the first sentence


@pytest.fixture(scope="module", params=DECODERS)
def pair(request):
    family = request.param
    hf = hf_model(family)
    return family, hf, ours_from(hf, family)


def _hf_lens(hf, family: str, ids) -> torch.Tensor:
    """(N + 1, T, vocab) log-probabilities of every layer's guess, from HF's hidden states."""
    norm = hf.transformer.ln_f if family == "gpt2" else hf.model.norm
    with torch.no_grad():
        out = hf(input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True)
        states = out.hidden_states  # N + 1: the embeddings, after layers 1 … N-1, then Norm(after layer N)
        assert len(states) == LAYERS + 1
        rows = [hf.lm_head(norm(h[0])) for h in states[:-1]] + [out.logits[0]]
    return torch.stack(rows).log_softmax(-1)


def _full(lens) -> torch.Tensor:
    """The lens's k = vocab probabilities back in id order: (N + 1, T, vocab)."""
    return torch.zeros(*lens.top_ids.shape[:2], VOCAB).scatter(-1, lens.top_ids, lens.top_probs)


def test_every_layers_guess_equals_hf_hidden_states(pair):
    family, hf, ours = pair
    lens = logit_lens(ours, ours.trace(IDS), k=VOCAB)
    expected = _hf_lens(hf, family, IDS)  # log P
    assert lens.norm == ("LayerNorm" if family == "gpt2" else "RMSNorm")
    torch.testing.assert_close(_full(lens).log(), expected, atol=ATOL, rtol=0)
    torch.testing.assert_close(_full(lens), expected.exp(), atol=ATOL, rtol=0)
    answer = expected[-1].argmax(-1)  # the model's own answer at each position
    assert torch.equal(lens.answer, answer)
    torch.testing.assert_close(
        lens.answer_prob,
        expected.exp().gather(-1, answer.expand(LAYERS + 1, -1)[..., None])[..., 0],
        atol=ATOL,
        rtol=0,
    )
    # the layers' guesses differ (a lens reading one row for all would pass the last row only)
    assert (expected[0] - expected[-1]).abs().max() > 0.1


def test_top_k_are_the_k_most_probable(pair):
    family, hf, ours = pair
    lens = logit_lens(ours, ours.trace(IDS), k=5)
    probs = _hf_lens(hf, family, IDS).exp()
    assert lens.top_ids.shape == lens.top_probs.shape == (LAYERS + 1, IDS.size(1), 5)
    torch.testing.assert_close(lens.top_probs, probs.topk(5, dim=-1).values, atol=ATOL, rtol=0)
    # each id's own probability (ties in order may swap two ids, never their probabilities)
    torch.testing.assert_close(probs.gather(-1, lens.top_ids), lens.top_probs, atol=ATOL, rtol=0)


def test_the_lens_of_an_ablated_model_reads_its_ablated_run(pair):
    family, hf, ours = pair
    edits = ablation_edits(parse_ablation("dec.1.2,dec.2.ffn", ours.config), "zero", ours.config)
    ablated = ours.with_edits(edits)
    lens = logit_lens(ablated, ablated.trace(IDS), k=VOCAB)
    handles = [
        replace_heads(heads_module(hf, family, 0), lambda i, cols: torch.zeros_like(cols), [1]),
        replace_output(ffn_module(hf, family, 1), torch.zeros_like),
    ]
    with hooked(*handles):
        expected = _hf_lens(hf, family, IDS)
    torch.testing.assert_close(_full(lens).log(), expected, atol=ATOL, rtol=0)
    assert (expected - _hf_lens(hf, family, IDS)).abs().max() > 1e-2


def test_an_encoder_alone_has_no_lens():
    encoder = Transformer(
        ModelConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, num_heads=2, decoder=False)
    )
    with pytest.raises(ValueError, match="decoder"):
        logit_lens(encoder, encoder.trace(torch.tensor([[3, 4, 5]])))
