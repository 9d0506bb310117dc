"""Training: the schedule, a short run that learns, stopping from the callback, the metrics."""

import random

import pytest
import torch
import torch.nn.functional as F

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.vocab import BOS_ID, EOS_ID, PAD_ID
from core.training.loop import Progress, train
from core.training.pairs import load_task, make_batch
from core.training.schedule import noam_lr
from core.training.seq2seq import evaluate
from core.training.settings import RECIPES

TINY = dict(d_model=32, num_heads=2, num_layers=1, d_ff=64, dropout=0.0)


def small(task, n=50):
    """The task's data with short validation/test splits, to keep the final evaluation quick."""
    data = load_task(task)
    data.splits = {split: pairs[:n] for split, pairs in data.splits.items()}
    return data


@torch.no_grad()
def decode_token_by_token(model, src: torch.Tensor, steps: int) -> list[list[int]]:
    """The reference for greedy decoding: one whole forward pass per new token, the argmax of the last
    position appended (no guessed tokens, unlike Transformer.greedy_decode); each row cut at its EOS."""
    out = torch.full((src.size(0), 1), BOS_ID)
    for _ in range(steps):
        out = torch.cat([out, model(src, out)[:, -1].argmax(-1, keepdim=True)], dim=1)
    return [row[: row.index(EOS_ID)] if EOS_ID in row else row for row in out[:, 1:].tolist()]


def reference_metrics(model, data, split: str) -> dict:
    """``evaluate``'s figures counted here by hand: syllables (tokens) right over the reference
    length, sequences right, and for the 1:1 tasks the share of target tokens whose cross-attention
    (teacher-forced on the reference, per layer and head, and head-averaged) peaks on the source
    token they read. The whole split is one padded batch, as ``evaluate`` decodes it."""
    pairs = data.splits[split]
    src, tgt = make_batch(pairs, data.src_vocab, data.tgt_vocab)
    refs = [data.tgt_vocab.encode(y) for _, y in pairs]
    preds = decode_token_by_token(model, src, src.size(1) + 2)
    total = sum(len(r) for r in refs)
    right = sum(p == r for pred, ref in zip(preds, refs, strict=True)
                for p, r in zip(pred, ref, strict=False))  # a prediction may be shorter or longer
    metrics = {"token_acc": right / total, "exact_acc": sum(map(list.__eq__, preds, refs)) / len(pairs)}
    if data.name != "reverse":
        tr = model.trace(src, tgt[:, :-1])  # decoder position j predicts token j, read from source j
        table = []
        for layer in tr.decoder:
            w = layer.cross_attn.weights  # (B, h, T, S)
            columns = [w[:, h] for h in range(w.size(1))] + [w.mean(1)]
            hits = [sum(int(c[b, j].argmax()) == j for b, ref in enumerate(refs) for j in range(len(ref)))
                    for c in columns]
            table.append([n / total for n in hits])
        metrics.update(alignment=table[-1][-1], alignment_per_head=[row[:-1] for row in table],
                       alignment_head_mean=[row[-1] for row in table])
    return metrics


def test_noam_schedule_warms_up_then_decays():
    d, warmup = 64, 100
    rates = [noam_lr(s, d, warmup) for s in range(1, 400)]
    peak = max(range(len(rates)), key=rates.__getitem__) + 1
    assert peak == warmup
    assert rates[warmup - 1] == pytest.approx(d**-0.5 * warmup**-0.5)
    assert noam_lr(400, d, warmup, factor=2.0) == pytest.approx(2 * d**-0.5 * 400**-0.5)
    assert noam_lr(0, d, warmup) > 0  # step 0 is treated as step 1, never a division by zero


def test_the_first_steps_loss_is_label_smoothed_cross_entropy_of_the_next_tokens():
    """What a training step minimises, as the paper trains: the decoder reads tgt[:, :-1] = [BOS] y,
    is scored on tgt[:, 1:] = y [EOS], [PAD] positions count for nothing, label smoothing 0.1 (the
    default of ``train``). The reference is torch's own cross-entropy on the same first batch and the
    same initial weights (``train`` seeds both from ``seed``)."""
    data = small("reverse", 5)
    result = train("reverse", TINY, steps=1, batch_size=16, log_every=1, eval_every=10**6, data=data)
    assert result.metrics["label_smoothing"] == 0.1
    src, tgt = data.train_batch(16, random.Random(0))  # the batch of step 1: train's rng is Random(seed)
    assert (tgt == PAD_ID).any() and (tgt[:, -1] == EOS_ID).any()  # lengths 3-10: padding to ignore
    config = ModelConfig(len(data.src_vocab), len(data.tgt_vocab), **{**RECIPES["reverse"].sizes, **TINY})
    with torch.no_grad():
        logits = Transformer(config)(src, tgt[:, :-1])  # (B, T-1, V); dropout 0: train mode changes nothing

        def loss(logits, target, **options):
            return F.cross_entropy(logits.reshape(-1, logits.size(-1)), target.reshape(-1), **options).item()

        expected = loss(logits, tgt[:, 1:], ignore_index=PAD_ID, label_smoothing=0.1)
        assert result.history[0]["loss"] == pytest.approx(expected, rel=1e-5)
        # each slip gives another number, ten times the tolerance away at least: the test tells them
        # apart (the untrained model's output is nearly uniform, where smoothing changes least: ~3e-4)
        shifted = Transformer(config)(src, tgt[:, 1:])
        for wrong in (loss(logits, tgt[:, 1:], ignore_index=PAD_ID),  # no label smoothing
                      loss(logits, tgt[:, 1:], label_smoothing=0.1),  # [PAD] scored too
                      loss(shifted, tgt[:, 1:], ignore_index=PAD_ID, label_smoothing=0.1)):  # reads y [EOS]
            assert abs(wrong - expected) > 1e-4 * expected


def test_a_short_run_on_reverse_learns_and_its_metrics_are_greedy_decodings():
    """A fixed-seed run of 150 steps: the loss (label smoothing 0.1) falls from ~2.7 (about ln 15, 15
    tokens) to below 60 % of it (1.3 when written), the model reverses digits far above chance (10 %;
    52 % when written), and the test accuracies ``train`` reports are those of decoding token by token,
    counted by hand."""
    seen: list[Progress] = []
    threads = torch.get_num_threads()
    data = small("reverse")
    result = train("reverse", TINY, steps=150, batch_size=32, lr=3e-3, log_every=10, eval_every=150,
                   eval_limit=50, num_threads=1, on_progress=seen.append, data=data)
    assert torch.get_num_threads() == threads  # restored after the run
    losses = [h["loss"] for h in result.history]
    assert losses[0] > 2.4 and losses[-1] < 0.6 * losses[0], losses
    assert [p.step for p in seen] == list(range(10, 151, 10))
    assert seen[-1].fraction == 1.0 and seen[-1].val is not None and seen[0].val is None
    assert not result.model.training
    m = result.metrics
    assert m["steps"] == 150 and m["test_n"] == 50 and m["label_smoothing"] == 0.1
    reference = reference_metrics(result.model, data, "test")
    assert (m["test_token_acc"], m["test_exact_acc"]) == (reference["token_acc"], reference["exact_acc"])
    assert m["test_token_acc"] > 0.4, m["test_token_acc"]
    assert "test_alignment" not in m  # reverse reads its source backwards: no diagonal to measure


def test_callback_returning_false_stops_training():
    result = train("reverse", TINY, steps=1000, batch_size=8, log_every=5, eval_every=10**6,
                   on_progress=lambda p: p.step < 15, data=small("reverse"))
    assert result.metrics["steps"] == 15


def test_minutes_budget_stops():
    data = small("copy")
    result = train("copy", TINY, minutes=0.02, batch_size=8, log_every=1, eval_every=10**6, data=data)
    assert result.history[-1]["fraction"] == 1.0 and result.history[-1]["elapsed"] >= 1.2


def test_evaluate_on_pinyin_counts_what_decoding_and_cross_attention_give_and_predict_decodes(predict):
    data = small("pinyin", 20)  # vocabularies still from the whole training split
    result = train("pinyin", TINY, steps=2, batch_size=4, eval_limit=5, data=data)
    model = result.model
    m = evaluate(model, data, "test")
    reference = reference_metrics(model, data, "test")
    assert m["n"] == 20 and {k: m[k] for k in reference} == reference
    assert len(m["alignment_per_head"]) == 1 and len(m["alignment_per_head"][0]) == 2  # 1 layer, 2 heads
    src_vocab, tgt_vocab = result.vocabs
    ids = src_vocab.encode(list("abc中"))  # unknown characters: [UNK] ids, decoded all the same
    assert ids[:3] == [1, 1, 1]
    out = predict(model, tgt_vocab, ids)
    assert out == tgt_vocab.decode(decode_token_by_token(model, torch.tensor([ids]), len(ids) + 2)[0])
    assert predict(model, tgt_vocab, []) == []


def test_unknown_task_is_refused():
    with pytest.raises(ValueError, match="task='sort'"):
        train("sort", steps=1)


def test_cooldown_brings_the_rate_down_to_zero_at_the_end_of_the_budget():
    seen = []
    train("copy", dict(d_model=16, num_heads=2, num_layers=1, d_ff=32), steps=40, log_every=1,
          eval_every=1000, eval_limit=10, cooldown=0.5, on_progress=lambda p: seen.append(p.lr))
    assert len(seen) == 40
    assert seen[19] > seen[29] > seen[39] >= 0  # linear descent over the last half
    assert seen[39] < 0.1 * max(seen)  # the last step has 1/40 of the budget left: 5% of the rate
    with pytest.raises(ValueError, match=r"cooldown=1.5 must be in \[0, 1\)"):
        train("copy", steps=1, cooldown=1.5)


def test_label_smoothed_loss_is_the_papers_formula_written_out():
    """q(w) = (1 − ε)·[w = y] + ε / V, loss = −Σ_w q(w) log p(w), mean over the non-[PAD] positions."""
    from core.training.seq2seq import label_smoothed_loss

    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 5, 7, generator=gen, dtype=torch.float64)  # (B, T, V)
    target = torch.randint(1, 7, (3, 5), generator=gen)
    target[0, 3:] = PAD_ID
    target[2, 1:] = PAD_ID
    for eps in (0.0, 0.1, 0.5):
        q = torch.full_like(logits, eps / 7)
        q.scatter_(-1, target.unsqueeze(-1), 1 - eps + eps / 7)
        per_position = -(q * logits.log_softmax(-1)).sum(-1)  # (B, T)
        real = target != PAD_ID
        expected = per_position[real].mean()
        assert torch.allclose(label_smoothed_loss(logits, target, eps), expected, atol=1e-12)
    smoothed, plain = label_smoothed_loss(logits, target, 0.1), label_smoothed_loss(logits, target, 0.0)
    assert not torch.allclose(smoothed, plain)
