"""Many distinct models and runs keep the app's memory under one budget in bytes (issue 25, item 2).

Bounded by entries, sixteen 512-token runs of big models were 8 GB. Here the budget is made small
(so that small models fill it fast) and pages are opened with one new model and sentence after
another: what the caches account stays under the budget, what is really alive (every run, trace,
decoding and model the app made, found through weak references, shared tensors counted once) stays
under it too, and a model the budget dropped has let go of its weights.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from apphelpers import assert_clean, open_page

import core.tracing.batch
import core.tracing.pipeline
from ui.caches.budget import BUDGET, MB, nbytes
from ui.caches.cache import _load

LIMIT = 6 * MB
# The lecture's step 6 (the decoder's self-attention) reads the whole run: a page computes only what it
# shows (core.tracing.run.SentenceRun), and the first slides show the tokens and the encoder's input alone.
WHOLE_RUN = {"step": "6"}
# the core functions whose results the caches keep (tests/app/conftest.py records them too)
MADE_BY = [(core.tracing.pipeline, name) for name in
           ("run_pipeline", "source_trace", "encoder_trace", "greedy_sentence", "load_pipeline")]
MADE_BY.append((core.tracing.batch, "run_batch"))


class Refs(list):
    released: list[int]  # id() of each pipeline released


@pytest.fixture
def made(monkeypatch):
    """Weak references to everything those functions return from here on (and the pipelines released)."""
    refs = Refs()

    def recording(fn):
        def wrapper(*args, **kwargs):
            result = fn(*args, **kwargs)
            refs.append(weakref.ref(result))
            return result

        return wrapper

    for module, name in MADE_BY:
        monkeypatch.setattr(module, name, recording(getattr(module, name)))
    release = core.tracing.pipeline.RandomPipeline.release

    def recorded_release(pipe):
        released.append(id(pipe))
        release(pipe)

    released: list[int] = []
    monkeypatch.setattr(core.tracing.pipeline.RandomPipeline, "release", recorded_release)
    refs.released = released
    BUDGET.clear()
    released.clear()  # the models earlier tests left in the caches: not this test's
    monkeypatch.setattr(BUDGET, "limit", LIMIT)
    yield refs
    BUDGET.clear()


def alive(refs) -> list:
    gc.collect()
    return [r() for r in refs if r() is not None]


def test_many_models_and_runs_stay_under_the_budget(made):
    peak_accounted = peak_alive = 0
    for i in range(10):
        query = {"seed": str(4100 + i), "d_model": "64", "num_heads": "4", "num_layers": "2",
                 "sentence": f"budget {i}: 注意力就是一切 attention is all you need, said model {i} " * 3,
                 **WHOLE_RUN}
        for page in ("pages/attention.py", "pages/lecture.py"):
            at = open_page(page, query)
            assert_clean(at)
            assert BUDGET.total <= LIMIT, BUDGET.entries()
            peak_accounted = max(peak_accounted, BUDGET.total)
        del at
        peak_alive = max(peak_alive, nbytes(alive(made)))  # shared tensors once
        assert peak_alive <= LIMIT, f"{peak_alive / MB:.1f} MB alive after model {i + 1}"
    assert BUDGET.evicted > 10  # the budget, not max_entries (8 models, 16 runs), dropped them
    assert peak_accounted > LIMIT / 2  # it was used
    pipelines = [p for p in alive(made) if isinstance(p, core.tracing.pipeline.Pipeline)]
    cached = [p for p in pipelines if (p.settings,) in _load]
    assert 0 < len(cached) < 10 and cached[-1].settings.seed == 4109 and cached[-1].drawn
    # every model the budget dropped let go of its weights at once (Pipeline.release)
    assert len(made.released) == 10 - len(cached)
    assert not {id(p) for p in cached} & set(made.released)


def test_the_accounted_sizes_are_what_the_entries_hold(made):
    """Each entry's size is its value measured now: nothing drawn or added since went unaccounted."""
    for page in ("pages/attention.py", "pages/lecture.py", "pages/positional.py"):
        at = open_page(page, {"seed": "4200", "d_model": "64", "num_heads": "4", **WHOLE_RUN})
        assert_clean(at)
    entries = BUDGET.entries()
    names = {name.split("@")[0] for name, _, _ in entries}
    assert {"_load", "_run", "_source_trace", "_encoder_trace", "_memo"} <= names
    caches = {c.name: c for c in BUDGET._caches.values()}
    for name, key, size in entries:
        assert size == nbytes(caches[name]._values[key]), (name, key)
    assert BUDGET.total == sum(size for *_, size in entries)
