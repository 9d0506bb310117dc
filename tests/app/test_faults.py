"""Faults through AppTest: a missing or corrupted checkpoint, and a training run the user stops.

AppTest runs the page scripts in this process, so patching module attributes before ``run()``
reaches the app. ``core.tracing.pipeline.load_pipeline`` takes its checkpoint path as a default argument
(bound when the module was imported), so the test replaces that default, not only the constant.
"""

from __future__ import annotations

import time

import pytest
from apphelpers import PAGE_SCRIPTS, assert_clean, badges, messages, open_app

import core.tracing.pipeline
import ui.page.settings
from ui.caches.cache import _load


@pytest.fixture
def checkpoint_at(monkeypatch):
    """Point the app at another checkpoint file, with the model cache emptied before and after."""

    def point(path):
        monkeypatch.setattr(ui.page.settings, "CHECKPOINT_PATH", path)
        monkeypatch.setattr(core.tracing.pipeline, "CHECKPOINT_PATH", path)
        defaults = list(core.tracing.pipeline.load_pipeline.__defaults__)
        defaults[0] = path  # load_pipeline(settings, checkpoint=CHECKPOINT_PATH, gpt=GPT_PATH)
        monkeypatch.setattr(core.tracing.pipeline.load_pipeline, "__defaults__", tuple(defaults))
        _load.clear()

    yield point
    _load.clear()


def test_checkpoint_default_is_the_one_we_patch():
    assert core.tracing.pipeline.load_pipeline.__defaults__[0] == core.tracing.pipeline.CHECKPOINT_PATH


@pytest.mark.parametrize(
    "content",
    [b"", b"not a torch file at all", b"PK\x03\x04" + b"\x00" * 100, bytes(range(256)) * 40],
    ids=["empty", "text", "truncated-zip", "binary"],
)
def test_a_corrupted_checkpoint_falls_back_to_random_weights_with_a_warning(tmp_path, checkpoint_at, content):
    bad = tmp_path / "pinyin.pt"
    bad.write_bytes(content)
    checkpoint_at(bad)
    at = open_app({"weights": "trained"})
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]
    assert any("could not be used, showing random weights" in m for m in messages(at)), messages(at)
    assert any("random initialisation" in b for b in badges(at)), badges(at)
    for page in PAGE_SCRIPTS[1:]:
        at.switch_page(page).run()
        assert_clean(at)
        assert not at.error, (page, [e.value for e in at.error])
        assert any("random" in b for b in badges(at)), (page, badges(at))


def test_a_missing_checkpoint_offers_random_weights_only(tmp_path, checkpoint_at):
    checkpoint_at(tmp_path / "nowhere.pt")
    at = open_app({"weights": "trained"})
    assert_clean(at)
    assert at.radio(key="weights").value == "random"
    assert any("Ignored weights=" in m for m in messages(at)), messages(at)
    assert any("random initialisation" in b for b in badges(at))


def test_a_stopped_training_leaves_the_session_usable():
    tiny = {"d_model": "16", "num_heads": "2", "num_layers": "1", "d_ff": "32"}
    at = open_app(tiny, page="pages/training.py")
    assert_clean(at)
    at.slider(key="train_steps").set_value(5000)
    at.button(key="train_start").click().run()
    assert_clean(at)
    job = at.session_state["train_job"]
    deadline = time.monotonic() + 60
    while not job.history and time.monotonic() < deadline:  # training has really started
        time.sleep(0.05)
    assert job.running
    at.button(key="train_stop").click().run()
    assert_clean(at)
    job.wait(timeout=60)
    assert not job.running and job.stopped_by_user and job.error is None
    at.run()
    assert_clean(at)
    assert any("stopped by you" in s.value for s in at.success), [s.value for s in at.success]
    assert not at.button(key="train_start").disabled  # can start again
    for page in PAGE_SCRIPTS:
        at.switch_page(page).run()
        assert_clean(at)
        assert not at.error, (page, [e.value for e in at.error])
        assert at.selectbox(key="d_model").value == 16, page
