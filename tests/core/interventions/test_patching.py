"""Activation patching (core/interventions/patching.py) against the plainest way to do it: for every cell
of a grid, one unbatched run of the corrupted input with a torch hook putting the clean run's value in
place (the clean value captured by a hook on a clean run), then

    restored = (m(patched) − m(corrupted)) / (m(clean) − m(corrupted)),   m = logit_answer − logit_foil

``patch`` computes a grid's cells as rows of one batched run, each row joining at its layer: the
reference shares none of that. Decoder-only: transformers' GPT-2, Llama and Qwen2 with hooks (the
heads' columns of the output projection's input; the residual stream as a block's input).
Encoder-decoder: our model with the same hooks on its own modules (``w_o``'s input, an encoder
layer's input). Both also with parts switched off (``model.with_edits``): the reference switches them
off with hooks in every run, the clean and corrupted ones as well as the patched ones.
"""

from __future__ import annotations

import pytest
import torch

from core.interventions.ablation import ablation_edits, parse_ablation
from core.interventions.patching import Inputs, PatchError, patch
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from tests.core.interventions.hf_pairs import (
    DECODERS,
    LAYERS,
    attn_module,
    capture_input,
    ffn_module,
    heads_module,
    hf_layers,
    hf_model,
    hooked,
    ours_from,
    replace_heads,
    replace_input,
    replace_output,
)

ATOL = 1e-5
# Two tokens changed; chosen so that in every family, intact and ablated, at both positions tested, the
# two runs answer differently and m(clean) − m(corrupted) > 0.8 (shares of a small gap amplify rounding)
CLEAN = torch.tensor([[56, 35, 90, 31, 40, 21, 7, 85]])
CORRUPTED = torch.tensor([[56, 73, 90, 31, 43, 21, 7, 85]])
GIVEN_ANSWER = 32  # logit_32 alone (no foil) differs by > 1 between the two runs in every family


def _zero(x):
    return torch.zeros_like(x)


class Patcher:
    """The reference: unbatched runs with hooks. ``model``: what runs (a torch module returning logits
    or an output with .logits); ``run(inputs)`` -> logits (L, vocab) of its first row; ``heads(stack,
    layer)``: that attention's output projection; ``block(layer)``: the layer of the stack whose
    residual stream is patched; ``ablate()``: the hooks switching parts off, added to every run."""

    def __init__(self, run, heads, block, layers, h, d_k, ablate=lambda: []):
        self.run_logits, self.heads, self.block = run, heads, block
        self.layers, self.h, self.d_k, self.ablate = layers, h, d_k, ablate

    def logits(self, inputs, *patches):
        with hooked(*self.ablate(), *patches):  # the ablation's hooks first: a patch acts after it
            return self.run_logits(inputs)

    def capture(self, inputs, rows):
        """The clean run's Concat(heads) of every attention in ``rows`` and every block's input."""
        heads = {row: [] for row in rows}
        streams = {i: [] for i in range(self.layers)}
        handles = [capture_input(self.heads(*row), heads[row]) for row in rows]
        handles += [capture_input(self.block(i), streams[i]) for i in range(self.layers)]
        with hooked(*self.ablate(), *handles):
            self.run_logits(inputs)
        return {r: v[0] for r, v in heads.items()}, {i: v[0] for i, v in streams.items()}

    def grids(self, clean, corrupted, rows, position, answer=None, foil=-1):
        clean_logits = self.logits(clean)[position]
        corr_logits = self.logits(corrupted)[position]
        answer = int(clean_logits.argmax()) if answer is None else answer
        if foil == -1:
            foil = int(corr_logits.argmax())
        foil = None if foil == answer else foil

        def m(logits):
            return float(logits[answer] - (0 if foil is None else logits[foil]))

        m_clean, m_corr = m(clean_logits), m(corr_logits)
        heads, streams = self.capture(clean, rows)

        def share(*patches):
            return (m(self.logits(corrupted, *patches)[position]) - m_corr) / (m_clean - m_corr)

        head_grid = torch.zeros(len(rows), self.h)
        for r, row in enumerate(rows):
            for i in range(self.h):

                def clean_head(j, cols, row=row):
                    return heads[row][..., j * self.d_k : (j + 1) * self.d_k]

                head_grid[r, i] = share(replace_heads(self.heads(*row), clean_head, [i], self.d_k))
        length = streams[0].size(1)
        resid_grid = torch.zeros(self.layers, length)
        for layer in range(self.layers):
            for p in range(length):

                def clean_at(x, layer=layer, p=p):
                    x[:, p] = streams[layer][:, p]
                    return x

                resid_grid[layer, p] = share(replace_input(self.block(layer), clean_at))
        return dict(
            answer=answer, foil=foil, clean=m_clean, corrupted=m_corr, heads=head_grid, resid=resid_grid
        )


def _check(got, expected, rows):
    assert got.head_rows == rows
    assert (got.answer, got.foil) == (expected["answer"], expected["foil"])
    assert got.clean == pytest.approx(expected["clean"], abs=ATOL)
    assert got.corrupted == pytest.approx(expected["corrupted"], abs=ATOL)
    assert abs(got.clean - got.corrupted) > 0.5  # shares of a wide enough gap: rounding stays small
    torch.testing.assert_close(got.heads, expected["heads"], atol=ATOL, rtol=0)
    torch.testing.assert_close(got.resid, expected["resid"], atol=ATOL, rtol=0)
    # the grids say something: not every cell is 0 (a patch that did nothing would pass otherwise)
    assert got.heads.abs().max() > 0.05 and got.resid.abs().max() > 0.05


# -- decoder-only: transformers' models as the reference -----------------------------------------

# ablate= of the patched model, and the hooks that switch the same parts off in the HF model
ABLATIONS = {
    "intact": ("", []),
    "ablated": ("dec.1.ffn,dec.2.1,dec.3.attn", [("ffn", 0), ("head", 1, 0), ("attn", 2)]),
}


@pytest.fixture(scope="module", params=DECODERS)
def decoder_pair(request):
    family = request.param
    hf = hf_model(family)
    return family, hf, ours_from(hf, family)


def _hf_patcher(hf, family, ablation) -> Patcher:
    def run(ids):
        with torch.no_grad():
            return hf(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[0]

    def ablate():
        handles = []
        for kind, layer, *head in ablation:
            if kind == "head":
                handles.append(replace_heads(heads_module(hf, family, layer), lambda i, c: _zero(c), head))
            else:
                module = (attn_module if kind == "attn" else ffn_module)(hf, family, layer)
                handles.append(replace_output(module, _zero))
        return handles

    layers = hf_layers(hf, family)
    return Patcher(
        run,
        lambda stack, layer: heads_module(hf, family, layer),
        lambda layer: layers[layer],
        LAYERS,
        hf.config.num_attention_heads,
        hf.config.hidden_size // hf.config.num_attention_heads,
        ablate,
    )


@pytest.mark.parametrize("ablation", sorted(ABLATIONS))
@pytest.mark.parametrize("position", [7, 5])
def test_decoder_only_grids_equal_hooked_runs(decoder_pair, ablation, position):
    family, hf, ours = decoder_pair
    text, hooks = ABLATIONS[ablation]
    model = ours.with_edits(ablation_edits(parse_ablation(text, ours.config), "zero", ours.config))
    got = patch(model, Inputs(CLEAN), Inputs(CORRUPTED), position)
    rows = [("dec", i) for i in range(LAYERS)]
    expected = _hf_patcher(hf, family, hooks).grids(CLEAN, CORRUPTED, rows, position)
    _check(got, expected, rows)
    assert got.resid_stack == "dec" and got.resid.shape == (LAYERS, CLEAN.size(1))
    assert (got.resid[:, position + 1 :].abs() < ATOL).all()  # causal: a later position changes nothing
    if ablation == "ablated":  # the head switched off is 0 in both runs, and an "attn" off hides its heads
        assert got.heads[1, 0].abs() < ATOL and got.heads[2].abs().max() < ATOL


def test_a_given_answer_and_no_foil(decoder_pair):
    family, hf, ours = decoder_pair
    got = patch(ours, Inputs(CLEAN), Inputs(CORRUPTED), 7, answer=GIVEN_ANSWER, foil=None)
    rows = [("dec", i) for i in range(LAYERS)]
    expected = _hf_patcher(hf, family, []).grids(CLEAN, CORRUPTED, rows, 7, answer=GIVEN_ANSWER, foil=None)
    assert got.answer == GIVEN_ANSWER and got.foil is None
    _check(got, expected, rows)


# -- encoder-decoder: our model with hooks on its own modules -------------------------------------

S2S = ModelConfig(
    src_vocab_size=53, tgt_vocab_size=61, d_model=32, num_heads=4, num_layers=2, d_ff=64, dropout=0.0, seed=4
)
SRC_CLEAN = torch.tensor([[48, 22, 35, 12, 25, 37, 51]])  # chosen as CLEAN: answers differ, gap > 0.8
SRC_CORRUPTED = torch.tensor([[48, 45, 35, 12, 10, 37, 51]])
TGT = torch.tensor([[1, 14, 33, 6, 59]])
S2S_ABLATIONS = {
    "intact": ("", []),
    "ablated": (
        "cross.1.2,enc.2.ffn,dec.2.attn",
        [("cross", 0, "head", 1), ("enc", 1, "ffn"), ("dec", 1, "attn")],
    ),
}


@pytest.fixture(scope="module")
def seq2seq():
    torch.manual_seed(0)
    model = Transformer(S2S).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if ".norm." in name:
                p.add_(torch.randn_like(p) * 0.2)
    return model


def _our_patcher(model, ablation) -> Patcher:
    def attention(stack, layer):
        if stack == "enc":
            return model.encoder.layers[layer].self_attn
        return getattr(model.decoder.layers[layer], "cross_attn" if stack == "cross" else "self_attn")

    def run(src):
        with torch.no_grad():
            return model(src, TGT)[0]

    def ablate():
        handles = []
        for stack, layer, kind, *head in ablation:
            if kind == "head":
                w_o = attention(stack, layer).w_o
                handles.append(replace_heads(w_o, lambda i, c: _zero(c), head, S2S.d_k))
            elif kind == "attn":
                handles.append(replace_output(attention(stack, layer), _zero))  # (output, trace): output
            else:
                stack_layers = model.encoder.layers if stack == "enc" else model.decoder.layers
                handles.append(replace_output(stack_layers[layer].ffn, _zero))  # (output, hidden): output
        return handles

    return Patcher(
        run,
        lambda stack, layer: attention(stack, layer).w_o,
        lambda layer: model.encoder.layers[layer],
        S2S.num_layers,
        S2S.num_heads,
        S2S.d_k,
        ablate,
    )


@pytest.mark.parametrize("ablation", sorted(S2S_ABLATIONS))
@pytest.mark.parametrize("position", [4, 2])
def test_encoder_decoder_grids_equal_hooked_runs(seq2seq, ablation, position):
    text, hooks = S2S_ABLATIONS[ablation]
    model = seq2seq.with_edits(ablation_edits(parse_ablation(text, S2S), "zero", S2S))
    got = patch(model, Inputs(SRC_CLEAN, TGT), Inputs(SRC_CORRUPTED, TGT), position)
    rows = [("enc", 0), ("enc", 1), ("dec", 0), ("cross", 0), ("dec", 1), ("cross", 1)]
    expected = _our_patcher(seq2seq, hooks).grids(SRC_CLEAN, SRC_CORRUPTED, rows, position)
    _check(got, expected, rows)
    assert got.resid_stack == "enc" and got.resid.shape == (S2S.num_layers, SRC_CLEAN.size(1))
    # the decoder's input is the same in both runs: its self-attention in layer 1 has nothing to restore
    assert got.heads[2].abs().max() < ATOL
    if ablation == "ablated":
        assert got.heads[3, 1].abs() < ATOL and got.heads[4].abs().max() < ATOL


# -- what cannot be patched -----------------------------------------------------------------------


def test_pairs_that_cannot_be_patched(decoder_pair, seq2seq):
    _, _, ours = decoder_pair
    cases = [
        (ours, Inputs(CLEAN), Inputs(CLEAN[:, :-1]), 3, "same number of tokens"),
        (ours, Inputs(CLEAN[:, :0]), Inputs(CORRUPTED[:, :0]), 0, "empty"),
        (ours, Inputs(CLEAN), Inputs(CLEAN.clone()), 7, "nothing to restore"),
        (ours, Inputs(CLEAN), Inputs(CORRUPTED), 8, "outside"),
        (ours, Inputs(CLEAN), Inputs(CORRUPTED), -1, "outside"),
        (seq2seq, Inputs(SRC_CLEAN, TGT), Inputs(SRC_CLEAN, TGT), 4, "nothing to restore"),
        (seq2seq, Inputs(SRC_CLEAN), Inputs(SRC_CORRUPTED), 0, "tgt"),
    ]
    for model, clean, corrupted, position, says in cases:
        with pytest.raises(PatchError, match=says):
            patch(model, clean, corrupted, position)


def test_an_encoder_alone_cannot_be_patched():
    encoder = Transformer(
        ModelConfig(src_vocab_size=20, tgt_vocab_size=20, d_model=16, num_heads=2, decoder=False)
    )
    ids = torch.tensor([[3, 4, 5]])
    with pytest.raises(PatchError, match="encoder alone"):
        patch(encoder, Inputs(ids), Inputs(ids + 1), 0)
