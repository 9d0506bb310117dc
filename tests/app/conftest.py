"""Every app test also checks that no page changed a shared result.

The app keeps runs, traces, decodings and batches in ``ui.caches.budget.cached`` caches: one object per input,
handed to every rerun of every session, so a page that changed one in place (a tensor written to,
a list appended to) would change what every other student sees. Here every such result is
recorded with a copy when ``core`` makes it, and after each test each one still alive must equal
its copy: the test that changed it fails.
"""

from __future__ import annotations

import copy
import functools
import weakref

import pytest
from apphelpers import differs
from streamlit.components.v2 import manifest_scanner

import core.tracing.batch
import core.tracing.pipeline

# the core functions whose results the app caches and shares (ui/caches/cache.py, pages/*.py)
SHARED = [
    (core.tracing.pipeline, "run_pipeline"),
    (core.tracing.pipeline, "source_trace"),
    (core.tracing.pipeline, "encoder_trace"),
    (core.tracing.pipeline, "greedy_sentence"),
    (core.tracing.batch, "run_batch"),
]

# Every new AppTest scans the metadata of every installed package for Streamlit components (about a
# second each, hundreds of AppTests): the packages do not change during a test run, so the scan is
# made once per process. The app's own server scans once at start and is not touched.
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)

_made: list[tuple[weakref.ref, object, str]] = []  # (the result, its copy when made, who made it)


def _recording(fn):
    def wrapper(*args, **kwargs):
        result = fn(*args, **kwargs)
        _made.append((weakref.ref(result), copy.deepcopy(result), fn.__name__))
        return result

    return wrapper


@pytest.fixture(scope="session", autouse=True)
def _record_shared_results():
    with pytest.MonkeyPatch.context() as mp:
        for module, name in SHARED:
            mp.setattr(module, name, _recording(getattr(module, name)))
        yield


@pytest.fixture(autouse=True)
def _shared_results_unchanged():
    yield
    alive = []
    for ref, original, maker in _made:
        result = ref()
        if result is None:
            continue
        alive.append((ref, original, maker))
        where = differs(result, original)
        assert where is None, f"a page changed a shared result of {maker}: {where}"
    _made[:] = alive
