"""The small GPT's training pieces (core/training/language.py): repeated passages, the baselines, the
loss measured, a short training run and its checkpoint (issue 30)."""

import math

import pytest
import torch
import torch.nn.functional as F

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.bpe import BPETokenizer
from core.tokenizers.vocab import Vocab
from core.training.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from core.training.language import (
    bits_per_byte,
    lm_config,
    mean_loss,
    ngram_baselines,
    stream_bytes,
    with_repeats,
)
from core.training.loop import train
from core.training.pairs import DIGITS
from core.training.text import token_stream

# a few entries of each part, English and Chinese, enough for a BPE and windows of 16 tokens
PARTS = {
    "train": ["The cat sat on the mat, and the cat was happy.", "床前明月光，疑是地上霜。",
              "举头望明月，低头思故乡。", "A rose is a rose is a rose.", "To be, or not to be."] * 4,
    "valid": ["The dog sat on the mat.", "明月几时有？"],
    "test": ["The cat is on the mat.", "低头思故乡。"],
}


def test_with_repeats_writes_a_passage_again_later_in_the_same_row():
    g = torch.Generator().manual_seed(0)
    rows = torch.arange(4 * 30).reshape(4, 30)  # every id distinct: a copy is easy to find
    out = with_repeats(rows, 1.0, g)
    for before, after in zip(rows, out, strict=True):
        changed = torch.nonzero(before != after).flatten()
        assert len(changed) >= 4  # a passage of at least 4 tokens was written
        start, m = int(changed[0]), len(changed)
        assert (changed == torch.arange(start, start + m)).all()  # one contiguous passage
        source = int(after[start]) - int(before[0])  # ids are 30·row + position: where it came from
        assert source + m <= start  # copied from earlier in the row, not overlapping
        assert torch.equal(after[start : start + m], before[source : source + m])
    assert torch.equal(with_repeats(rows, 0.0, g), rows)


def test_ngram_baselines_match_hand_counts():
    train = torch.tensor([5, 6, 5, 6, 5, 7])
    test = torch.tensor([5, 6, 7])
    base = ngram_baselines(train, test, vocab_size=8, valid=test)
    p_uni = lambda w: (int((train == w).sum()) + 1) / (6 + 8)  # noqa: E731
    assert base["unigram"] == pytest.approx(-(math.log(p_uni(6)) + math.log(p_uni(7))) / 2)
    lam = base["bigram_lambda"]
    # c(5 6) = 2 of c(5) = 3 as a first token; c(6 7) = 0 of c(6) = 2
    p56 = lam * 2 / 3 + (1 - lam) * p_uni(6)
    p67 = (1 - lam) * p_uni(7)
    assert base["bigram"] == pytest.approx(-(math.log(p56) + math.log(p67)) / 2)


def test_bits_per_byte_is_total_bits_over_bytes():
    assert bits_per_byte(math.log(2), tokens=10, text_bytes=5) == pytest.approx(2.0)


def test_mean_loss_equals_cross_entropy_of_consecutive_windows():
    """Windows of 8 scored tokens, then the one left over: every token of the stream but the first."""
    model = Transformer(lm_config(300, d_model=16, num_heads=2, d_ff=32, max_len=32)).eval()
    stream = torch.randint(5, 300, (50,), generator=torch.Generator().manual_seed(1))
    loss, n = mean_loss(model, stream, context=8)
    starts = [0, 8, 16, 24, 32, 40, 48]
    with torch.no_grad():
        want = [F.cross_entropy(model(stream[s : min(s + 8, 49)][None])[0], stream[s + 1 : s + 9],
                                reduction="sum") for s in starts]  # fmt: skip
    assert n == 49
    assert loss == pytest.approx(float(sum(want)) / 49, rel=1e-5)
    # a limit counts whole windows from the start (the quick validation during training)
    assert mean_loss(model, stream, context=8, limit=2)[1] == 16
    # a stream shorter than one window is scored whole, as one forward pass reads it
    short = stream[:6]
    with torch.no_grad():
        one = F.cross_entropy(model(short[None, :-1])[0], short[1:])
    assert mean_loss(model, short, context=8) == (pytest.approx(float(one), rel=1e-5), 5)


def test_the_model_and_the_baselines_score_the_same_tokens_and_bytes(small_run):
    """Perplexity and bits per byte compare like with like: the model and both baselines are scored on
    every test token but the first, and bits per byte divide by the bytes of exactly those tokens."""
    tokenizer, m = small_run.tokenizer, small_run.metrics
    for split in ("valid", "test"):
        stream = token_stream(tokenizer, PARTS[split])
        assert stream.numel() - 1 > m["context"]  # the last window is a short one
        scored = stream[1:].tolist()
        # the bytes the scored tokens spell, counted from the text: an [EOS] stands for the "\n" that
        # ends an entry, and the stream's first token is not scored
        text = "".join(e + "\n" for e in PARTS[split]).encode("utf-8")
        first = tokenizer.decode(stream[:1].tolist()).encode("utf-8")
        assert m[split]["tokens"] == len(scored)
        assert m[split]["bytes"] == len(text) - len(first) == stream_bytes(tokenizer, stream[1:])
        assert m[split]["bits_per_byte"] == pytest.approx(
            m[split]["loss"] * len(scored) / math.log(2) / m[split]["bytes"])
    test = m["test"]
    for name in ("unigram", "bigram"):
        base = m["baselines"][name]
        assert (base["tokens"], base["bytes"]) == (test["tokens"], test["bytes"])
        bits = base["loss"] * test["tokens"] / math.log(2)
        assert base["bits_per_byte"] == pytest.approx(bits / test["bytes"])
    # the model's loss against one forward pass per window, computed here
    stream = token_stream(tokenizer, PARTS["test"])
    c, last = m["context"], stream.numel() - 1
    with torch.no_grad():
        logits = [small_run.model(stream[s : min(s + c, last)][None])[0] for s in range(0, last, c)]
        total = sum(float(F.cross_entropy(x, stream[s + 1 : s + c + 1], reduction="sum"))
                    for x, s in zip(logits, range(0, last, c), strict=True))
    assert test["loss"] == pytest.approx(total / (stream.numel() - 1), rel=1e-5)


@pytest.fixture(scope="module")
def small_run():
    return train("lm", {"d_model": 32, "num_heads": 2, "d_ff": 64}, steps=6, merges=40, context=16,
                 batch_size=4, eval_every=3, warmup=2, data=PARTS, num_threads=1)


def test_train_lm_reports_probe_and_metrics(small_run):
    history = small_run.history
    assert [h["step"] for h in history if h["heads"]] == [3, 6]
    heads = history[-1]["heads"]
    assert len(heads["prefix_matching"]) == 2 and len(heads["prefix_matching"][0]) == 2  # layers × heads
    assert heads["best_pm"] == pytest.approx(max(max(r) for r in heads["prefix_matching"]))
    m = small_run.metrics
    assert m["steps"] == 6 and m["vocab_size"] == len(small_run.tokenizer)
    assert m["test"]["perplexity"] == pytest.approx(math.exp(m["test"]["loss"]))
    assert set(m["baselines"]) >= {"unigram", "bigram"}
    assert small_run.model.config.stack == "decoder"


def test_lm_checkpoint_round_trip(small_run, tmp_path):
    path = tmp_path / "gpt.pt"
    save_checkpoint(path, small_run.model, small_run.tokenizer, "lm", small_run.metrics, half=False)
    raw = torch.load(path, weights_only=True)  # plain data only: no pickled code
    assert raw["task"] == "lm" and "vocabs" not in raw
    model, tokenizer, task, metrics = load_checkpoint(path)
    assert task == "lm"
    assert isinstance(tokenizer, BPETokenizer) and tokenizer.merges == small_run.tokenizer.merges
    text = "床前明月光 The cat"
    assert tokenizer.encode(text) == small_run.tokenizer.encode(text)
    ids = torch.tensor([tokenizer.encode(text)])
    assert torch.equal(model(ids), small_run.model(ids))
    assert metrics["test"] == small_run.metrics["test"]


def test_the_small_gpts_loader_refuses_a_checkpoint_of_another_task(tmp_path):
    from core.tracing.pipeline import read_gpt

    path = tmp_path / "copy.pt"
    vocab = Vocab(DIGITS)
    model = Transformer(ModelConfig(len(vocab), len(vocab), d_model=16, num_heads=2, num_layers=1, d_ff=32))
    save_checkpoint(path, model, (vocab, vocab), "copy", {})
    assert load_checkpoint(path)[2] == "copy"
    with pytest.raises(CheckpointError, match="not a language model"):
        read_gpt(path)


def test_lm_checkpoint_refuses_a_tokenizer_of_the_wrong_size(small_run, tmp_path):
    path = tmp_path / "gpt.pt"
    save_checkpoint(path, small_run.model, small_run.tokenizer, "lm", small_run.metrics)
    raw = torch.load(path, weights_only=True)
    raw["tokenizer"]["merges"] = raw["tokenizer"]["merges"][:-1]
    torch.save(raw, path)
    with pytest.raises(CheckpointError, match="tokenizer has"):
        load_checkpoint(path)


def test_with_repeats_can_write_a_passage_three_times():
    g = torch.Generator().manual_seed(2)
    rows = torch.arange(3 * 40).reshape(3, 40)
    out = with_repeats(rows, 1.0, g, copies=3)
    for before, after in zip(rows, out, strict=True):
        changed = torch.nonzero(before != after).flatten().tolist()
        source = int(after[changed[0]]) - int(before[0])  # where the passage came from
        m = len(changed) // 2  # two copies written, each m long, after the original
        assert len(changed) == 2 * m and m >= 4
        for start in (changed[0], changed[m]):
            assert torch.equal(after[start : start + m], before[source : source + m])
