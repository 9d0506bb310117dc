"""Training: the schedule, a short run that learns, stopping from the callback, the metrics."""

import pytest
import torch

from core.data import load_task
from core.train import Progress, evaluate, noam_lr, predict, train

TINY = dict(d_model=32, num_heads=2, num_layers=1, d_ff=64, dropout=0.0)


def small(task, n=50):
    """The task's data with short validation/test splits, to keep the final evaluation quick."""
    data = load_task(task)
    data.splits = {split: pairs[:n] for split, pairs in data.splits.items()}
    return data


def test_noam_schedule_warms_up_then_decays():
    d, warmup = 64, 100
    rates = [noam_lr(s, d, warmup) for s in range(1, 400)]
    peak = max(range(len(rates)), key=rates.__getitem__) + 1
    assert peak == warmup
    assert rates[warmup - 1] == pytest.approx(d**-0.5 * warmup**-0.5)
    assert noam_lr(400, d, warmup, factor=2.0) == pytest.approx(2 * d**-0.5 * 400**-0.5)
    assert noam_lr(0, d, warmup) > 0  # step 0 is treated as step 1, never a division by zero


def test_short_run_lowers_the_loss_and_reports_progress():
    seen: list[Progress] = []
    threads = torch.get_num_threads()
    result = train("copy", TINY, steps=60, batch_size=32, lr=3e-3, label_smoothing=0.0, log_every=10,
                   eval_every=60, eval_limit=50, num_threads=1, on_progress=seen.append,
                   data=small("copy"))
    assert torch.get_num_threads() == threads  # restored after the run
    losses = [h["loss"] for h in result.history]
    assert losses[-1] < 0.8 * losses[0]
    assert [p.step for p in seen] == list(range(10, 61, 10))
    assert seen[-1].fraction == 1.0 and seen[-1].val is not None and seen[0].val is None
    assert not result.model.training
    m = result.metrics
    assert m["steps"] == 60 and 0.0 <= m["test_token_acc"] <= 1.0 and m["test_n"] == 50
    assert len(m["test_alignment_per_head"]) == 1 and len(m["test_alignment_per_head"][0]) == 2


def test_callback_returning_false_stops_training():
    result = train("reverse", TINY, steps=1000, batch_size=8, log_every=5, eval_every=10**6,
                   on_progress=lambda p: p.step < 15, data=small("reverse"))
    assert result.metrics["steps"] == 15


def test_minutes_budget_stops():
    data = small("copy")
    result = train("copy", TINY, minutes=0.02, batch_size=8, log_every=1, eval_every=10**6, data=data)
    assert result.history[-1]["fraction"] == 1.0 and result.history[-1]["elapsed"] >= 1.2


def test_evaluate_on_pinyin_and_predict_on_unknown_input():
    data = small("pinyin", 20)  # vocabularies still from the whole training split
    result = train("pinyin", TINY, steps=2, batch_size=4, eval_limit=5, data=data)
    m = evaluate(result.model, data, "test")
    assert m["n"] == 20 and set(m) >= {"token_acc", "exact_acc", "alignment", "alignment_per_head"}
    src_vocab, tgt_vocab = result.vocabs
    out = predict(result.model, tgt_vocab, src_vocab.encode(list("abc中")))  # unknown chars: no crash
    assert isinstance(out, list) and len(out) <= 6
    assert predict(result.model, tgt_vocab, []) == []


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
