"""Greedy decoding with guessed tokens (core.model.transformer.greedy_decode) against the plain algorithm: one
decoder run per token, each on the prefix so far. Same tokens, same numbers in every step's trace."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from core.model.config import ModelConfig
from core.model.trace import ModelTrace
from core.model.transformer import Transformer, _guess

PAD, BOS, EOS = 0, 2, 3


def one_run_per_token(model: Transformer, src: torch.Tensor, n: int, eos: int) -> tuple:
    """The textbook loop: run the decoder on the prefix, take the argmax, append; pad after EOS."""
    tokens = torch.full((src.size(0), 1), BOS)
    done = torch.zeros(src.size(0), dtype=torch.bool)
    steps, probs = [], []
    for _ in range(n):
        trace = model.trace(src, tokens)
        p = torch.softmax(trace.logits[:, -1], dim=-1)
        next_id = p.argmax(-1).masked_fill(done, model.config.pad_id)
        tokens = torch.cat([tokens, next_id[:, None]], dim=1)
        steps.append(trace)
        probs.append(p)
        done |= next_id == eos
        if done.all():
            break
    return tokens, steps, probs


def assert_same_numbers(ours, ref, where: str = "trace") -> None:
    """Every tensor of two traces (nested dataclasses, lists) equal in shape and close in value."""
    if dataclasses.is_dataclass(ref):
        for f in dataclasses.fields(ref):
            assert_same_numbers(getattr(ours, f.name), getattr(ref, f.name), f"{where}.{f.name}")
    elif isinstance(ref, list):
        assert len(ours) == len(ref), where
        for i, (a, b) in enumerate(zip(ours, ref, strict=True)):
            assert_same_numbers(a, b, f"{where}[{i}]")
    elif isinstance(ref, torch.Tensor):
        assert ours.shape == ref.shape, where
        if ref.dtype == torch.bool or not ref.is_floating_point():
            assert torch.equal(ours, ref), where
        else:  # -inf stays -inf (masked scores), the rest to float rounding
            torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-5, msg=where)
    else:
        assert ours == ref, where


def model(positions: str = "sinusoidal", norm: str = "post", seed: int = 0, **kw) -> Transformer:
    config = ModelConfig(24, 24, d_model=32, num_heads=4, num_layers=2, d_ff=64, positions=positions,
                         norm=norm, seed=seed, **kw)
    return Transformer(config).eval()


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope", "alibi"])
@pytest.mark.parametrize("norm", ["post", "pre"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_same_tokens_and_traces_as_one_run_per_token(positions, norm, seed):
    m = model(positions, norm, seed)
    # three sentences of different lengths (padded); an EOS that some sequences write, some not
    src = torch.tensor([[5, 6, 7, 8, 9], [10, 11, 12, PAD, PAD], [13, 14, PAD, PAD, PAD]])
    eos = int(m.trace(src, torch.full((3, 1), BOS)).logits[1, 0].argmax())  # the 2nd sentence stops at once
    res = m.greedy_decode(src, max_new_tokens=12, bos_id=BOS, eos_id=eos)
    tokens, steps, probs = one_run_per_token(m, src, 12, eos)
    assert torch.equal(res.tokens, tokens)
    assert len(res.steps) == len(res.probs) == len(steps) == tokens.size(1) - 1
    for t, (ours, ref) in enumerate(zip(res.steps, steps, strict=True)):
        assert isinstance(ours, ModelTrace)
        assert_same_numbers(ours, ref, f"step {t + 1}")
        torch.testing.assert_close(res.probs[t], probs[t])


def test_learned_positions_stop_at_max_len_with_guesses_too():
    m = model("learned", max_len=6)
    src = torch.tensor([[5, 6, 7]])
    res = m.greedy_decode(src, max_new_tokens=20, bos_id=BOS, eos_id=-1)
    tokens, steps, _ = one_run_per_token(m, src, 5, -1)
    assert res.tokens.shape == (1, 6) and torch.equal(res.tokens, tokens)
    assert_same_numbers(res.steps, steps)


def test_a_model_that_repeats_itself_is_decoded_in_a_few_runs(monkeypatch):
    m = model(seed=4)
    with torch.no_grad():
        m.generator.bias[7] = 1e3  # token 7 always wins: the output is 7 7 7 …
    runs = []
    original = Transformer._trace_from
    def counted(self, src_ids, encoded, tgt_ids, *edits):
        runs.append(tgt_ids.size(1))
        return original(self, src_ids, encoded, tgt_ids, *edits)

    monkeypatch.setattr(Transformer, "_trace_from", counted)
    res = m.greedy_decode(torch.tensor([[5, 6, 7]]), max_new_tokens=16, bos_id=BOS, eos_id=EOS)
    assert res.tokens[0, 1:].tolist() == [7] * 16
    # the target lengths run: [BOS] → 1 token; then the 15 still to come guessed, all right: 2 runs
    # (one run per token: 16 runs of 1 … 16 positions)
    assert runs == [1, 16]
    tokens, steps, _ = one_run_per_token(m, torch.tensor([[5, 6, 7]]), 16, EOS)
    assert torch.equal(res.tokens, tokens)
    assert_same_numbers(res.steps, steps)


def test_guesses_continue_a_pattern_or_repeat_the_last_token():
    tokens = torch.tensor([[BOS, 5, 6, 5], [BOS, 9, 9, 8], [BOS, 4, 4, 4]])
    assert _guess(tokens, 4).tolist() == [[6, 5, 6, 5], [8, 8, 8, 8], [4, 4, 4, 4]]
    assert _guess(tokens, 0).shape == (3, 0)
    assert _guess(torch.tensor([[BOS]]), 2).tolist() == [[BOS, BOS]]
