"""ui.caches.budget without Streamlit: one limit in bytes over every cache, the least recently used out
first."""

from __future__ import annotations

import logging
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np
import pytest
import torch

from ui.caches.budget import DEFAULT_MB, ENV_VAR, MB, MIN_MB, Budget, hashable, limit_from_env, nbytes


def sized(n: int) -> torch.Tensor:
    """A tensor holding exactly ``n`` bytes."""
    return torch.zeros(n, dtype=torch.uint8)


def storage(t: torch.Tensor) -> int:
    return t.untyped_storage().nbytes()


@pytest.fixture
def budget():
    return Budget(limit=1000)


def tensor_cache(budget, name="c", **options):
    """A cache whose value for key ``n`` is a tensor of ``n`` bytes, sized by its storage alone."""
    calls = []

    def make(n):
        calls.append(n)
        return sized(n)

    cache = budget.function(name, make, sizer=storage, **options)
    cache.calls = calls
    return cache


# -- eviction order ------------------------------------------------------------------------------------


def test_the_least_recently_used_entry_goes_first_across_caches(budget):
    runs, models = tensor_cache(budget, "runs"), tensor_cache(budget, "models")
    runs(300), models(400), runs(200)  # 900 of 1000
    assert runs(300) is runs(300)  # a hit: (runs, 300) is now the most recently used
    runs(250)  # 1150: the oldest, models' 400, goes (not runs' 300, used again since)
    assert [(name, key) for name, key, _ in budget.entries()] == [("runs", (200,)), ("runs", (300,)),
                                                                  ("runs", (250,))]
    assert budget.total == 750 and budget.evicted == 1
    runs(600)  # 1350: 200 and 300 go (oldest first), 250 stays with 600 (850)
    assert [key for _, key, _ in budget.entries()] == [(250,), (600,)]
    assert budget.total == 850


def test_a_hit_costs_no_measuring_and_no_computing(budget):
    measured = []
    cache = budget.function("c", lambda n: sized(n), sizer=lambda v: measured.append(v) or storage(v))
    first = cache(10)
    for _ in range(100):
        assert cache(10) is first
    assert len(measured) == 1


def test_max_entries_bounds_a_cache_too(budget):
    cache = tensor_cache(budget, max_entries=2)
    cache(1), cache(2), cache(1), cache(3)  # 2 is the cache's least recently used
    assert [key for _, key, _ in budget.entries()] == [(1,), (3,)]


def test_the_newest_entry_alone_over_the_limit_is_kept_and_said(budget, caplog):
    cache = tensor_cache(budget)
    cache(100), cache(200)
    with caplog.at_level(logging.WARNING, logger="glassbox.budget"):
        big = cache(1500)
    assert [key for _, key, _ in budget.entries()] == [(1500,)]  # everything older went
    assert cache(1500) is big and cache.calls == [100, 200, 1500]  # and it is not computed again
    assert any("more than the whole cache budget" in r.getMessage() for r in caplog.records)


def test_a_dropped_entry_is_released_and_clear_releases_all(budget):
    released = []
    cache = budget.function("models", lambda n: sized(n), sizer=storage, on_release=released.append)
    a = cache(600)
    b = cache(500)  # 1100: a goes
    assert released == [a]
    cache.clear()
    assert released == [a, b] and budget.total == 0 and budget.entries() == []


def test_a_failing_release_does_not_fail_the_caller(budget, caplog):
    def broken(value):
        raise RuntimeError("cannot release")

    cache = budget.function("c", lambda n: sized(n), sizer=storage, on_release=broken)
    cache(600)
    with caplog.at_level(logging.ERROR, logger="glassbox.budget"):
        assert storage(cache(500)) == 500
    assert "on_release of c failed" in caplog.text


def test_a_growing_entry_is_measured_again_when_anything_is_stored(budget):
    grown = {"a": sized(10)}
    models = budget.function("models", lambda key: grown, sizer=lambda d: sum(map(storage, d.values())),
                          grows=True)
    runs = tensor_cache(budget, "runs")
    models("m")
    assert budget.total == 10
    grown["b"] = sized(700)  # drawn after it was stored (a random model's weights)
    runs(200)  # 10 + 200, then measured again: 710 + 200
    assert budget.total == 910
    runs(300)  # 1210: the model (oldest) goes
    assert [name for name, _, _ in budget.entries()] == ["runs", "runs"]


def test_a_whole_entry_is_not_measured_again(budget):
    """A random model is measured again after each use until every weight is drawn, then no more."""
    measured = []

    class Model:
        def __init__(self):
            self.parts, self.drawn = [sized(10)], False

    def size(model):
        measured.append(model)
        return sum(map(storage, model.parts))

    models = budget.function("models", lambda key: Model(), sizer=size, grows=lambda m: not m.drawn)
    runs = tensor_cache(budget, "runs")
    model = models("m")  # measured: 10
    model.parts.append(sized(300))  # drawn in part by a run, then the run is stored
    runs(1)
    assert budget.total == 311 and len(measured) == 2
    assert models("m") is model  # used, still not whole
    model.parts.append(sized(400))
    model.drawn = True  # now whole
    runs(2)
    assert budget.total == 713 and len(measured) == 3
    models("m"), runs(3), models("m"), runs(4)  # whole: never measured again
    assert len(measured) == 3


def test_underscore_arguments_are_not_part_of_the_key(budget):
    cache = budget.function("c", lambda _pipe, key, n: sized(n), sizer=storage)
    first = cache(object(), "model", 10)
    assert cache(object(), "model", 10) is first
    assert cache(object(), "other", 10) is not first
    assert cache(object(), key="model", n=10) is first  # by keyword: the same key


def test_one_computation_for_threads_asking_for_the_same_key(budget):
    calls = []
    started = threading.Event()

    def slow(n):
        calls.append(n)
        started.set()
        time.sleep(0.2)
        return sized(n)

    cache = budget.function("c", slow, sizer=storage)
    results = []
    threads = [threading.Thread(target=lambda: results.append(cache(5))) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert calls == [5] and all(r is results[0] for r in results)


def test_a_failed_computation_is_not_kept(budget):
    def fails(n):
        raise ValueError("bad input")

    cache = budget.function("c", fails, sizer=storage)
    with pytest.raises(ValueError):
        cache(1)
    assert budget.entries() == [] and budget.total == 0


def test_a_page_defining_its_function_again_gets_the_same_cache(budget):
    """A page script runs again on every rerun and defines its cached function again: same entries."""
    first = budget.function("page.py:_greedy", lambda n: sized(n), sizer=storage)
    value = first(3)
    again = budget.function("page.py:_greedy", lambda n: sized(n + 1), sizer=storage)
    assert again.cache is first.cache and again(3) is value
    assert storage(again(4)) == 5  # a miss runs the newest definition


# -- measuring -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    a: torch.Tensor
    b: torch.Tensor


def test_views_of_one_storage_are_counted_once():
    t = torch.zeros(1000)  # 4000 bytes
    pair = Pair(t[5:], t[::2])
    shared = [t, t[:10], t.view(10, 100).T, pair]
    assert nbytes(shared) == sys.getsizeof(shared) + sys.getsizeof(pair) + sys.getsizeof(vars(pair)) + 4000
    copied = [t.clone(), t[:10].clone()]
    assert nbytes(copied) == sys.getsizeof(copied) + 4000 + 40


def test_a_decoding_counts_the_trace_its_steps_share_once():
    """Greedy decoding keeps one trace per step, views of one run (core.tracing.pipeline.MAX_DECODE_STEPS):
    counted by tensor, the steps would count the same numbers again and again."""
    from core.tracing.pipeline import PipelineSettings, greedy_sentence, load_pipeline

    pipe = load_pipeline(PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=2, d_ff=64))
    decoded = greedy_sentence(pipe, "attention is all you need", 16)
    assert len(decoded.steps) > 3
    storages, by_tensor = {}, 0
    for t in tensors_of(decoded):
        storages[t.untyped_storage().data_ptr()] = storage(t)
        by_tensor += storage(t)
    distinct = sum(storages.values())
    measured = nbytes(decoded)
    assert distinct <= measured <= distinct + 256 * 1024  # + the dataclasses and lists themselves
    assert by_tensor > 2 * measured


def tensors_of(obj):
    """Every tensor a trace dataclass reaches (a reference independent of nbytes's walk)."""
    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, list):
        for x in obj:
            yield from tensors_of(x)
    elif hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            yield from tensors_of(getattr(obj, name))


def test_a_model_is_its_drawn_weights_and_a_twin_shares_them():
    from core.tracing.pipeline import PipelineSettings, load_pipeline, with_norm

    pipe = load_pipeline(PipelineSettings(weights="random", d_model=64, num_heads=4, num_layers=2, d_ff=128))
    assert nbytes(pipe) < 256 * 1024  # not drawn yet: nothing but its labels and settings
    weights = sum(p.numel() * p.element_size() for p in pipe.model.parameters())  # draws it
    drawn = nbytes(pipe)
    assert weights <= drawn <= 1.3 * weights + 512 * 1024  # its slab may be up to a quarter larger
    with_norm(pipe, "pre")  # the other LayerNorm placement: the same tensors
    assert nbytes(pipe) - drawn < 64 * 1024
    pipe.release()
    assert nbytes(pipe) < 256 * 1024


def test_arrays_count_their_buffer_once_and_lists_of_numbers_each_number():
    a = np.zeros((100, 100))  # 80,000 bytes
    views = [a, a[:10], a.T]
    assert nbytes(views) == sys.getsizeof(views) + 80_000
    row = [float(i) for i in range(1000)]
    assert nbytes(row) == sys.getsizeof(row) + 1000 * sys.getsizeof(0.5)


def test_functions_and_modules_are_not_charged_to_a_value():
    big = torch.zeros(10**6)

    def closure():
        return big

    assert nbytes({"f": closure, "m": np}) < 2000


def test_a_figure_counts_its_data():
    import plotly.graph_objects as go

    z = np.random.default_rng(0).random((200, 300))
    fig = go.Figure(go.Heatmap(z=z))
    assert z.nbytes <= nbytes(fig) <= z.nbytes + 64 * 1024


def test_equal_values_make_equal_keys():
    assert hashable((np.arange(6).reshape(2, 3), [1, 2.5], {"b": 1, "a": 2})) == hashable(
        (np.arange(6).reshape(2, 3), [1, 2.5], {"a": 2, "b": 1}))
    assert hashable(np.arange(6)) != hashable(np.arange(6).reshape(2, 3))
    assert hashable(np.arange(6)) != hashable(np.arange(6.0))
    assert hashable((True, [None, False])) != hashable((1, [None, 0]))
    assert hashable(Pair(torch.ones(2), torch.zeros(2))) == hashable(Pair(torch.ones(2), torch.zeros(2)))
    with pytest.raises(TypeError):
        hashable(object())


def test_a_figure_of_an_argument_compared_by_identity_is_built_not_kept():
    import plotly.graph_objects as go

    from ui.caches.budget import BUDGET
    from ui.page.figure import memo_figure

    class Opaque:
        pass

    calls = []

    def make(thing):
        calls.append(thing)
        return go.Figure(go.Bar(y=[1]))

    before = len(BUDGET.entries())
    memo_figure(make, Opaque())
    memo_figure(make, Opaque())
    assert len(calls) == 2 and len(BUDGET.entries()) == before


# -- the budget from the environment -------------------------------------------------------------------


def test_the_budget_comes_from_the_environment():
    assert limit_from_env({}) == DEFAULT_MB * MB
    assert limit_from_env({ENV_VAR: ""}) == DEFAULT_MB * MB
    assert limit_from_env({ENV_VAR: " 3000 "}) == 3000 * MB
    assert limit_from_env({ENV_VAR: str(MIN_MB)}) == MIN_MB * MB


@pytest.mark.parametrize(("raw", "expected", "said"), [
    ("2g", DEFAULT_MB, "not a whole number of megabytes: using the default, 1536 MB"),
    ("1.5", DEFAULT_MB, "not a whole number"),
    ("lots", DEFAULT_MB, "not a whole number"),
    ("100", MIN_MB, f"below the minimum of {MIN_MB} MB: using {MIN_MB} MB"),
    ("-5", MIN_MB, "below the minimum"),
    ("0", MIN_MB, "below the minimum"),
])
def test_a_malformed_or_too_small_budget_falls_back_with_a_message(raw, expected, said, caplog):
    with caplog.at_level(logging.WARNING, logger="glassbox.budget"):
        assert limit_from_env({ENV_VAR: raw}) == expected * MB
    assert ENV_VAR in caplog.text and said in caplog.text


def test_the_default_is_a_4_gb_server_s():
    """What docs/deploy.md states: the server's own ~0.5 GB, the spare model memory
    (core.model.weight_init.SLABS)
    and the run being computed (~0.5 GB at 512 tokens, d_model 512) fit in 4 GB with the caches."""
    from core.model.weight_init import SLABS

    assert DEFAULT_MB * MB + SLABS.spare_bytes + 1024 * MB <= 3.5 * 1024 * MB


def test_a_string_measures_the_same_before_and_after_it_is_sent():
    """CPython keeps a str's UTF-8 once it was encoded for the C API (as protobuf does when a label goes
    to the browser): a cached label measured when stored must measure the same after it was drawn."""
    import ctypes  # noqa: PLC0415

    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8
    as_utf8.restype = ctypes.c_char_p
    made = [["重庆", "很重要"], ["caf", "é"], ["a", "😀"], ["ab", "c"]]  # joined here: new, never encoded
    for text in ["".join(parts) for parts in made]:
        before = nbytes(text), nbytes([text, "x"])
        as_utf8(ctypes.py_object(text))
        assert (nbytes(text), nbytes([text, "x"])) == before, text
        assert nbytes(text) == sys.getsizeof(text)  # and it is what the str holds, encoded


def test_a_cached_function_says_whether_a_call_would_compute(budget):
    from ui.caches.budget import cached  # noqa: PLC0415

    calls = []

    @cached(budget=budget)
    def double(_unkeyed, x):
        calls.append(x)
        return [x, x]

    assert not double.has(object(), 3)
    double(object(), 3)
    assert double.has(object(), 3) and not double.has(object(), 4)  # ``_unkeyed`` is not in the key
    double(object(), 3)
    assert calls == [3]


def test_a_kept_run_part_is_returned_without_a_spinner(monkeypatch):
    """A spinner costs a thread and messages on every rerun: only a part being computed shows one."""
    import contextlib  # noqa: PLC0415

    import ui.caches.cache  # noqa: PLC0415
    from ui.page.settings import Settings  # noqa: PLC0415

    spun = []
    monkeypatch.setattr(ui.caches.cache.st, "spinner",
                        lambda text: spun.append(text) or contextlib.nullcontext())
    # a seed no other test uses: the model and its run are not kept yet in this process
    settings = Settings(weights="random", sentence="the cat sat", d_model=32, num_heads=2, num_layers=1,
                        seed=914_273)  # fmt: skip
    pipe = ui.caches.cache.get_pipeline(settings)
    assert ui.caches.cache.get_pipeline(settings) is pipe
    parts = ui.caches.cache.CachedParts(settings, pipe)
    first = parts.source()
    assert parts.source() is first
    assert len(spun) == 2  # the model built once, the source run computed once: nothing for the hits
