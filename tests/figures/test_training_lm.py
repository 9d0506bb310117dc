"""The Training page's language-model figures: its curves (loss, prefix-matching, perplexity) and its
learning-rate schedule, drawn from hand-built progress reports."""

import math
from dataclasses import replace

import numpy as np
import pytest

from core.training.schedule import warmup_cosine
from core.training.settings import RECIPES
from figures.training import lm_curves, lm_lr_schedule, planned_lm_rate
from i18n import t

TRAIN = replace(RECIPES["lm"], lr=3e-3, warmup=10)


def report(step: int, loss: float, probe: float | None = None) -> dict:
    """A language model's core.training.loop.Progress as a dict; ``probe``: the best prefix-matching
    score at an eval step."""
    val = heads = None
    if probe is not None:
        val = {"loss": loss + 0.1, "perplexity": math.exp(loss + 0.1)}
        heads = {"prefix_matching": [[probe, 0.0]], "previous_token": [[0.0, 0.9]], "best_pm": probe}
    return dict(
        step=step,
        total_steps=100,
        fraction=step / 100,
        loss=loss,
        lr=1e-3,
        tokens_per_s=1000.0,
        elapsed=float(step),
        val=val,
        heads=heads,
    )


HISTORY = [report(25, 6.0), report(50, 5.0, 0.02), report(75, 4.5), report(100, 4.0, 0.61)]


def test_the_curves_show_the_loss_and_the_measured_prefix_matching_and_perplexity(plotly_validation):
    fig = lm_curves(HISTORY)
    by_name = {tr.name: tr for tr in fig.data}
    assert list(by_name) == [
        "loss",
        "validation loss",
        "best prefix-matching (any head)",
        "validation perplexity",
    ]
    assert list(by_name["loss"].x) == [25, 50, 75, 100]
    pm = by_name["best prefix-matching (any head)"]
    assert list(pm.x) == [50, 100] and list(pm.y) == [0.02, 0.61]  # only where the probe ran
    assert pm.xaxis == "x2" and fig.layout.yaxis2.range == (0, 1.02)
    ppl = by_name["validation perplexity"]
    assert list(ppl.y) == pytest.approx([math.exp(5.1), math.exp(4.1)])
    assert ppl.xaxis == "x3" and fig.layout.yaxis3.type == "log"
    titles = [a.text for a in fig.layout.annotations]
    assert titles == ["training loss", "best prefix-matching score", "validation perplexity"]


def test_the_curves_in_chinese_and_before_the_first_measurement():
    fig = lm_curves(HISTORY[:1], lang="zh")
    assert [a.text for a in fig.layout.annotations] == [
        t(f"training.fig.{k}", "zh") for k in ("loss_title", "pm_title", "ppl_title")
    ]
    assert fig.layout.xaxis.title.text == t("training.fig.step", "zh")
    pm = next(tr for tr in fig.data if tr.name == t("training.fig.best_pm", "zh"))
    assert len(pm.x) == 0  # nothing measured yet: an empty trace, not an error


def test_the_schedule_is_core_lm_s_warm_up_then_cosine_to_a_tenth():
    fig = lm_lr_schedule(200, TRAIN)
    planned = fig.data[0]
    x, y = np.asarray(planned.x), np.asarray(planned.y)
    assert x[0] == 1 and x[-1] == 200
    assert x[y.argmax()] == TRAIN.warmup and y.max() == pytest.approx(TRAIN.lr)
    assert y[-1] == pytest.approx(TRAIN.lr / 10, rel=0.01)  # the cosine ends at lr/10, not at 0
    for step in (1, 5, 10, 11, 100, 200):
        want = warmup_cosine(step, (step - 1) / 200, TRAIN.lr, TRAIN.warmup)
        assert planned_lm_rate(step, 200, TRAIN) == want
    assert fig.layout.yaxis.title.text == "learning rate"


def test_the_schedule_shows_the_rates_a_run_used():
    fig = lm_lr_schedule(100, TRAIN, HISTORY, lang="zh")
    used = next(tr for tr in fig.data if tr.name == t("training.fig.lr_used", "zh"))
    assert list(used.x) == [25, 50, 75, 100] and list(used.y) == [1e-3] * 4
