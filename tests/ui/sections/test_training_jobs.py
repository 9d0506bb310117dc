"""Background training: a tiny real run, stopping it, and the server-wide cap."""

import threading
import time
from dataclasses import replace

import pytest

from figures.training import planned_rate, task_warmup
from i18n import t
from ui.sections import training_jobs as tj

TINY = dict(d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0, seed=0)


def test_tiny_run_finishes_with_history_and_a_model():
    job = tj.start_training("reverse", TINY, steps=40, minutes=1)
    job.wait(timeout=120)
    assert not job.running and job.error is None
    assert job.result is not None and job.result.metrics["steps"] == 40
    assert job.history and job.history[-1]["step"] == 40
    assert job.history[0]["loss"] > job.history[-1]["loss"]  # it learned something
    # the Training page's schedule chart draws the rates this run really used (warm-up, then cooldown)
    for h in job.history:
        want = planned_rate(h["step"], 40, TINY["d_model"], task_warmup("reverse"), tj.COOLDOWN)
        assert h["lr"] == pytest.approx(want, rel=1e-9), h["step"]
    uncooled = planned_rate(40, 40, TINY["d_model"], task_warmup("reverse"), cooldown=0.0)
    assert job.history[-1]["lr"] < 0.1 * uncooled  # the cooldown takes the last step's rate near 0


def _stopped_after_its_first_report(job):
    """Stop ``job`` once it has reported a step, and wait for it to end."""
    deadline = time.time() + 60
    while not job.history and time.time() < deadline:
        time.sleep(0.05)
    job.stop()
    job.wait(timeout=60)
    return job


def test_stop_ends_the_run_early_and_keeps_the_model():
    job = _stopped_after_its_first_report(tj.start_training("reverse", TINY, steps=100_000, minutes=5))
    assert not job.running and job.stopped_by_user and job.error is None
    assert job.result is not None and job.result.metrics["steps"] < 100_000


def test_the_server_runs_at_most_a_few_trainings():
    n = tj.MAX_CONCURRENT_TRAININGS
    jobs = [tj.start_training("reverse", TINY, steps=100_000, minutes=5) for _ in range(n)]
    try:
        with pytest.raises(tj.ServerBusy, match=f"already running {n} trainings") as busy:
            tj.start_training("reverse", TINY, steps=10, minutes=1)
        assert str(busy.value) == t("training.busy", "en", n=n)  # the page shows the same key translated
    finally:
        for job in jobs:
            job.stop()
        for job in jobs:
            job.wait(timeout=60)
    job = tj.start_training("reverse", TINY, steps=5, minutes=1)  # a slot is free again
    job.wait(timeout=60)
    assert job.result is not None


def test_a_failing_run_reports_its_error_and_frees_its_slot():
    job = tj.start_training("reverse", dict(TINY, d_model=10, num_heads=3), steps=5, minutes=1)
    job.wait(timeout=60)
    assert job.result is None and "d_model=10 is not divisible by num_heads=3" in job.error
    for _ in range(tj.MAX_CONCURRENT_TRAININGS):
        tj.start_training("reverse", TINY, steps=2, minutes=1).wait(timeout=60)


def test_stop_is_seen_after_the_current_step_not_at_the_next_progress_line():
    # A long run reports progress every 50 steps; at the largest sizes (d_model 512, 6 layers, pinyin)
    # a step takes seconds, so a Stop read only there took minutes. The owner check runs once per
    # step, just before the stop flag is read: pressing Stop from it on its 7th call is a Stop
    # pressed during step 7.
    holder, calls = [], []

    def owner_alive() -> bool:
        if holder:
            calls.append(1)
            if len(calls) == 7:
                holder[0].stop()
        return True

    job = tj.start_training("reverse", TINY, steps=100_000, minutes=5, owner_alive=owner_alive)
    holder.append(job)
    job.wait(timeout=60)
    assert not job.running and job.stopped_by_user and job.error is None
    steps = job.result.metrics["steps"]
    assert steps == job.history[-1]["step"] == 7, steps  # the step it stopped at, logged


def test_a_training_stops_when_its_session_ends_and_frees_its_slot():
    n = tj.MAX_CONCURRENT_TRAININGS
    ended = [threading.Event() for _ in range(n)]
    jobs = [tj.start_training("reverse", TINY, steps=100_000, minutes=5,
                              owner_alive=lambda e=e: not e.is_set()) for e in ended]
    try:
        with pytest.raises(tj.ServerBusy):
            tj.start_training("reverse", TINY, steps=10, minutes=1)
        for e in ended:
            e.set()
        for job in jobs:
            job.wait(timeout=10)  # within a step, not at the end of its 5 minutes
            assert not job.running, "a training whose session ended still runs"
            assert job.ended_with_session and job.result is None and job.error is None
            assert not job.stopped_by_user
        job = tj.start_training("reverse", TINY, steps=5, minutes=1)  # its slot is free again
        job.wait(timeout=60)
        assert job.result is not None
    finally:
        for job in jobs:
            job.stop()
            job.wait(timeout=60)


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_session_lives_while_connected_and_for_the_grace_time_after():
    connected, clock = {"abc": True}, FakeClock()
    alive = tj.SessionWatch("abc", lambda sid: connected[sid], grace=30, clock=clock)
    assert alive()
    connected["abc"] = False  # tab closed at t=0
    clock.now = 29.0
    assert alive(), "Streamlit keeps a disconnected session 30 s for a reconnect"
    connected["abc"] = True  # reconnected: the same session goes on
    clock.now = 40.0
    assert alive()
    connected["abc"] = False  # closed again at t=50: a new grace time
    clock.now = 50.0
    assert alive()
    clock.now = 79.9
    assert alive()
    clock.now = 80.1
    assert not alive()


def test_there_is_no_session_to_watch_outside_a_streamlit_server():
    assert tj.session_watch() is None


def test_a_stop_after_the_end_leaves_the_run_finished():
    job = tj.start_training("reverse", TINY, steps=5, minutes=1)
    job.wait(timeout=60)
    job.stop()
    assert not job.stopped_by_user and not job.stopping and job.result is not None


# -- the language model ("lm"): core.training.loop.train with ui.sections.training_jobs.LM_LIVE --------------

TINY_SIZES = dict(d_model=16, num_heads=2, num_layers=1, d_ff=32, dropout=0.0, positions="learned")
TINY_LM = replace(tj.LM_LIVE, sizes=dict(tj.LM_LIVE.sizes, **TINY_SIZES), merges=10, context=32, batch_size=4,
                  lr=3e-3, warmup=3, repeat=0.5, copies=3, eval_every=4)
LM_PARTS = {"train": ["the cat sat on the mat", "白日依山尽，黄河入海流"] * 30,
            "valid": ["a bird in the hand"] * 4, "test": ["欲穷千里目，更上一层楼"] * 4}


@pytest.fixture
def tiny_lm(monkeypatch):
    import core.training.text

    monkeypatch.setattr(tj, "LM_LIVE", TINY_LM)
    monkeypatch.setattr(core.training.text, "corpus", lambda: LM_PARTS)


def test_the_language_model_trains_with_its_own_recipe_and_measures_its_heads(tiny_lm):
    from figures.training import planned_lm_rate

    job = tj.start_training("lm", dict(TINY, d_model=512, seed=3), steps=12, minutes=1)  # sidebar ignored
    job.wait(timeout=120)
    assert not job.running and job.error is None, job.error
    assert job.config == dict(TINY_SIZES, context=32, merges=10, eval_every=4, seed=3)
    result = job.result
    assert result.task == "lm" and result.model.config.d_model == 16 and not result.model.config.encoder
    assert result.metrics["steps"] == 12 and result.metrics["train"]["merges"] == 10
    assert result.history == job.history
    probed = [h for h in job.history if h["heads"]]
    assert [h["step"] for h in probed] == [4, 8, 12]
    assert all(0.0 <= h["heads"]["best_pm"] <= 1.0 and h["val"]["perplexity"] > 1 for h in probed)
    for h in job.history:  # the Training page draws the schedule this run followed
        assert h["lr"] == pytest.approx(planned_lm_rate(h["step"], 12, TINY_LM), rel=1e-9)


def test_a_missing_corpus_is_a_sentence_and_frees_the_slot(monkeypatch):
    import core.training.text

    def missing():
        raise core.training.text.MissingCorpus("install the Debian package fortunes-zh")

    monkeypatch.setattr(core.training.text, "corpus", missing)
    job = tj.start_training("lm", {}, steps=5, minutes=1)
    job.wait(timeout=30)
    assert job.missing_corpus and job.error == "install the Debian package fortunes-zh"
    assert job.result is None
    for _ in range(tj.MAX_CONCURRENT_TRAININGS):
        tj.start_training("reverse", TINY, steps=2, minutes=1).wait(timeout=60)


def test_stop_ends_a_language_model_run_and_keeps_its_model(tiny_lm):
    job = _stopped_after_its_first_report(tj.start_training("lm", {}, steps=100_000, minutes=5))
    assert not job.running and job.stopped_by_user and job.error is None
    assert job.result.metrics["steps"] < 100_000
    assert job.history[-1]["heads"] is not None  # the heads are measured at the step it stopped
