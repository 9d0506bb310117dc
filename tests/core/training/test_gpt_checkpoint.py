"""The shipped small GPT (assets/gpt.pt): the numbers the README reports are the ones it has.

Measured again here on the test part of the fortune files (.ci/run installs them), by the evaluation
command ``python -m core.training --evaluate assets/gpt.pt``: run once, its evaluation read by every test."""

import io
import math
from contextlib import redirect_stdout
from typing import NamedTuple

import pytest
import torch

from core.tokenizers.bpe import BPETokenizer
from core.tracing.pipeline import GPT_PATH
from core.training import language
from core.training.__main__ import main
from core.training.checkpoint import load_checkpoint
from core.training.text import corpus, token_stream


class Shipped(NamedTuple):
    tokenizer: BPETokenizer  # as the command loaded it
    recorded: dict  # the metrics stored in the file
    measured: dict  # what the command's evaluation returned
    out: str  # what the command printed


@pytest.fixture(scope="module")
def shipped():
    """The evaluation command, run once; what its evaluation returned is kept on the way out (the
    command's own numbers, not a stand-in), so that the corpus is scored once for every test."""
    calls = []
    evaluate = language.evaluate

    def kept(model, tokenizer, parts, context, streams=None):
        measured = evaluate(model, tokenizer, parts, context, streams)
        calls.append((tokenizer, measured))
        return measured

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, redirect_stdout(out):
        patch.setattr(language, "evaluate", kept)
        main(["--evaluate", str(GPT_PATH)])
    assert len(calls) == 1, "the command evaluates the checkpoint once"
    (tokenizer, measured), = calls
    _, _, task, recorded = load_checkpoint(GPT_PATH)
    assert task == "lm"
    return Shipped(tokenizer, recorded, measured, out.getvalue())


def test_it_is_small_and_plain_data():
    assert GPT_PATH.stat().st_size <= 10 * 2**20
    raw = torch.load(GPT_PATH, weights_only=True)  # no pickled code
    assert raw["task"] == "lm" and raw["config"]["encoder"] is False
    assert all(v.dtype == torch.float16 for v in raw["state_dict"].values() if v.is_floating_point())


def test_recorded_perplexity_is_measured_again(shipped):
    recorded, measured = shipped.recorded, shipped.measured
    for split in ("valid", "test"):
        for key in ("perplexity", "bits_per_byte"):
            assert measured[split][key] == pytest.approx(recorded[split][key], rel=1e-4), (split, key)
    for name in ("unigram", "bigram"):
        for key in ("perplexity", "bits_per_byte"):
            want = recorded["baselines"][name][key]
            assert measured["baselines"][name][key] == pytest.approx(want, rel=1e-6), (name, key)


def test_the_model_and_the_baselines_are_scored_on_the_same_test_tokens(shipped):
    """The recorded numbers count what the README says: every test token but the first, for the model
    and both baselines, and bits per byte over the bytes of exactly those tokens."""
    tokenizer, recorded = shipped.tokenizer, shipped.recorded
    test = corpus()["test"]
    stream = token_stream(tokenizer, test)
    # the text the scored tokens spell: every entry and its "\n" ([EOS]), less the first token's bytes
    first = len(tokenizer.decode(stream[:1].tolist()).encode("utf-8"))
    text_bytes = sum(len(e.encode("utf-8")) + 1 for e in test) - first
    assert (recorded["test"]["tokens"], recorded["test"]["bytes"]) == (stream.numel() - 1, text_bytes)
    for name in ("unigram", "bigram"):
        base = recorded["baselines"][name]
        assert (base["tokens"], base["bytes"]) == (stream.numel() - 1, text_bytes)
    for row in (recorded["test"], *(recorded["baselines"][n] for n in ("unigram", "bigram"))):
        assert row["bits_per_byte"] == pytest.approx(row["loss"] * row["tokens"] / math.log(2) / text_bytes)


def test_it_beats_both_baselines(shipped):
    m = shipped.measured
    base = m["baselines"]
    assert m["test"]["perplexity"] < base["bigram"]["perplexity"] < base["unigram"]["perplexity"]
    assert m["test"]["bits_per_byte"] < m["baselines"]["bigram"]["bits_per_byte"]
    # bits per byte and perplexity are the same loss counted per byte and per token
    tokens, size = m["test"]["tokens"], m["test"]["bytes"]
    assert m["test"]["bits_per_byte"] == pytest.approx(math.log2(m["test"]["perplexity"]) * tokens / size)


def test_it_has_an_induction_head(shipped):
    """At least half of one head's attention, from a token of the second copy of random tokens, on the
    token after its first occurrence; and the second copy is predicted far better than the first."""
    recorded, measured = shipped.recorded, shipped.measured
    probe = measured["induction"]
    assert probe["best_pm"] >= 0.5
    assert torch.allclose(torch.tensor(probe["prefix_matching"]),
                          torch.tensor(recorded["induction"]["prefix_matching"]), atol=1e-4)
    assert probe["loss_second_copy"] < 0.5 * probe["loss_first_copy"]


def test_the_evaluation_command_prints_the_recorded_numbers(shipped):
    recorded, out = shipped.recorded, shipped.out
    assert f"{recorded['test']['perplexity']:10.1f}" in out
    assert f"{recorded['baselines']['bigram']['perplexity']:10.1f}" in out
    assert f"{recorded['test']['bits_per_byte']:10.3f}" in out
    assert f"the same {recorded['test']['tokens']:,} tokens scored in every row" in out
    assert "prefix-matching" in out
