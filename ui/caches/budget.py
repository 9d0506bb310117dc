"""One memory budget, in bytes, for every cache of the server: the entry used longest ago goes first.

A cache bounded by entries is not bounded in memory (a 512-token run of a d_model=512, 6-layer model holds
~475 MB of tensors, a 16-token run a few hundred kB). Here every value is measured when it is stored
(:func:`nbytes`: each distinct tensor storage and array it reaches, once, plus its Python containers), and
every cache shares one least-recently-used list and one limit. Caches made with ``grows`` (a random model
drawn after it was stored) are measured again after each use until whole.

    BUDGET = Budget(limit_from_env())        # GLASSBOX_CACHE_MB, default DEFAULT_MB
    @cached(max_entries=16)                  # shared by every session; a hit is a dict look-up
    def run_of(_pipe, key, sentence: str): ...

The budget bounds what the caches hold, not the process (docs/deploy.md); a cached value is read, never
changed (tests/app/conftest.py checks). No Streamlit. Decisions: docs/decisions.md, ui/caches/budget.py.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import dataclasses
import gc
import hashlib
import inspect
import logging
import os
import sys
import threading
import time
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable

log = logging.getLogger("glassbox.budget")

MB = 2**20
ENV_VAR = "GLASSBOX_CACHE_MB"
# A 4 GB server: ~0.5 GB of code and libraries with every page visited, up to 0.4 GB of spare model
# memory (core.model.weight_init.SLABS), the caches, and the run being computed with what sessions hold.
DEFAULT_MB = 1536
# Below this the largest model (d_model 512, 6 layers: 176 MB of weights) and a short run of it would
# not stay cached between two reruns: a smaller value is raised to it, with a message.
MIN_MB = 256
# After evictions of at least this much, a full garbage collection and malloc_trim: runs still named by
# the finished scripts of earlier reruns (a script and its functions form a cycle; Streamlit's own
# collection after each run is off, .streamlit/config.toml) go now, and their memory goes back to the
# system instead of waiting in malloc's free lists.
RECLAIM_BYTES = 64 * MB


def limit_from_env(environ=None) -> int:
    """The budget in bytes: ``GLASSBOX_CACHE_MB`` (whole megabytes), else ``DEFAULT_MB``.

    Not a whole number: the default, with a logged warning. Under ``MIN_MB``: ``MIN_MB``, with a
    logged warning (a smaller budget would drop every large run as soon as it is made).
    """
    raw = (os.environ if environ is None else environ).get(ENV_VAR)
    if raw is None or not raw.strip():
        return DEFAULT_MB * MB
    try:
        mb = int(raw.strip())
    except ValueError:
        log.warning("%s=%r is not a whole number of megabytes: using the default, %d MB",
                    ENV_VAR, raw, DEFAULT_MB)
        return DEFAULT_MB * MB
    if mb < MIN_MB:
        log.warning("%s=%d is below the minimum of %d MB: using %d MB", ENV_VAR, mb, MIN_MB, MIN_MB)
        return MIN_MB * MB
    return mb * MB


# -- measuring -----------------------------------------------------------------------------------------

_SCALARS = (int, float, bool, complex, type(None))
_FLOAT_BYTES = sys.getsizeof(0.5)
_LEAVES = {str, bytes, int, float, bool, type(None)}
# A str that is not ASCII grows when CPython first encodes it to UTF-8 (sending it to a browser does):
# the encoding is kept with it, and sys.getsizeof counts it. A cached label would then measure more
# after its first draw than when it was stored. So such a str is measured as if encoded already:
# its header and characters (1, 2 or 4 bytes each) and its UTF-8 bytes, whenever it is measured.
_STR_HEADER = {k: sys.getsizeof(c) - 2 * k for k, c in ((1, "\xe9"), (2, "\u0101"), (4, "\U0001f600"))}


def _size(o) -> int:
    """``sys.getsizeof(o)``, for a str the same before and after it was encoded (``_STR_HEADER``)."""
    if type(o) is not str or o.isascii():
        return sys.getsizeof(o)
    widest = max(map(ord, o))
    kind = 1 if widest < 256 else 2 if widest < 65536 else 4
    return _STR_HEADER[kind] + (len(o) + 1) * kind + len(o.encode("utf-8", "surrogatepass")) + 1
_SKIPPED = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.ModuleType, type,
            types.CodeType, types.FrameType, property, staticmethod, classmethod)
_OURS = ("core.", "figures.", "ui.")  # objects of these modules are walked attribute by attribute


def nbytes(obj) -> int:
    """The memory ``obj`` holds: every distinct tensor storage and numpy buffer it reaches, each counted
    once however many views of it there are, plus its Python containers and strings.

    Walked: tensors (their storage), numpy arrays (their base buffer), ``nn.Module`` (parameters and
    buffers), plotly figures (their data, layout and frames), lists, tuples, sets, dicts, dataclasses
    and the attributes of objects of this project's own modules. Not walked: functions, classes,
    modules, and the attributes of other libraries' objects (counted by ``sys.getsizeof`` alone), so a
    value's closure or a shared library object is not charged to it. A tensor on the "meta" device
    (a random model's weights not drawn yet) holds nothing.
    """
    seen: set[int] = set()
    buffers: dict[tuple, int] = {}
    total = 0
    stack = [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, (str, bytes, bytearray) + _SCALARS):
            total += _size(o)
        elif isinstance(o, _SKIPPED):
            continue
        elif _is_tensor(o):
            _tensor_buffer(o, buffers)
        elif _is_ndarray(o):
            base = o
            while _is_ndarray(base.base):
                base = base.base
            buffers[("array", id(base))] = base.nbytes
            seen.add(id(base))
            if o.dtype.kind == "O":
                stack.extend(o.ravel().tolist())
        else:
            total += _walk_into(o, stack)
    return total + sum(buffers.values())


def _tensor_buffer(o, buffers: dict[tuple, int]) -> None:
    """The storage behind tensor ``o``, keyed so that its views count it once (nothing on "meta")."""
    if o.device.type == "meta":
        return
    try:
        storage = o.untyped_storage()
    except (RuntimeError, NotImplementedError):  # no storage of its own (sparse ...)
        buffers[("tensor", id(o))] = o.numel() * o.element_size()
    else:
        buffers[("tensor", o.device.type, storage.data_ptr())] = storage.nbytes()


def _walk_into(o, stack: list) -> int:
    """The bytes of ``o``'s own Python object (its contents go on ``stack``, to be measured in turn)."""
    if _is_module(o):
        stack.extend(o.parameters())
        stack.extend(o.buffers())
        return 0
    if _is_figure(o):
        from figures.drawing.toolbox import figure_parts  # here: plotly is loaded once a figure exists

        parts = figure_parts(o)
        stack.extend((parts.data, parts.layout, *parts.frames))
        return 0
    if isinstance(o, dict):
        stack.extend(o.keys())
        stack.extend(o.values())
        return sys.getsizeof(o)
    if isinstance(o, (list, tuple, set, frozenset)):
        kinds = set(map(type, o))
        if kinds <= {float, int, bool}:  # a row of numbers: no need to visit each
            return sys.getsizeof(o) + len(o) * _FLOAT_BYTES
        if kinds <= _LEAVES:  # labels: measured without a visit each (a vocabulary: 30k)
            return sys.getsizeof(o) + sum(map(_size, o))
        stack.extend(o)
        return sys.getsizeof(o)
    size = sys.getsizeof(o)
    if dataclasses.is_dataclass(o) or type(o).__module__.startswith(_OURS):
        if hasattr(o, "__dict__"):
            size += sys.getsizeof(vars(o))
            stack.extend(vars(o).values())
        if dataclasses.is_dataclass(o) and not hasattr(o, "__dict__"):  # slots
            stack.extend(getattr(o, f.name, None) for f in dataclasses.fields(o))
    return size


def _is_tensor(o) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(o, torch.Tensor)


def _is_module(o) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(o, torch.nn.Module)


def _is_ndarray(o) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(o, np.ndarray)


def _is_figure(o) -> bool:
    plotly = sys.modules.get("plotly.basedatatypes")
    return plotly is not None and isinstance(o, plotly.BaseFigure)


# -- keys ------------------------------------------------------------------------------------------------


def hashable(value) -> Hashable:
    """A key equal for equal values: numbers, strings, lists, tuples, dicts, sets, dataclasses, numpy
    arrays and tensors (by dtype, shape and the sha-1 of their bytes). TypeError for an object that
    is hashed by identity only (two equal ones would be two entries): the caller does not cache it."""
    if isinstance(value, (str, bytes, int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, _SCALARS):  # True is not 1 here
        return (type(value).__name__, value)
    if _is_ndarray(value) or _is_tensor(value):
        array = value.detach().cpu().numpy() if _is_tensor(value) else value
        if array.dtype.kind == "O":
            return ("array", array.shape, hashable(array.tolist()))
        np = sys.modules["numpy"]
        digest = hashlib.sha1(np.ascontiguousarray(array).view(np.uint8).data).hexdigest()
        return ("array", array.dtype.str, array.shape, digest)
    if isinstance(value, (list, tuple)):
        if set(map(type, value)) <= {str, int, float}:  # (numbers, labels: C speed)
            return (type(value).__name__, tuple(value))
        return (type(value).__name__, tuple(hashable(v) for v in value))
    if isinstance(value, dict):
        items = [(hashable(k), hashable(v)) for k, v in value.items()]
        return ("dict", tuple(sorted(items, key=repr)))
    if isinstance(value, (set, frozenset)):
        return ("set", frozenset(hashable(v) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__,
                tuple((f.name, hashable(getattr(value, f.name))) for f in dataclasses.fields(value)))
    if type(value).__hash__ in (None, object.__hash__):
        raise TypeError(f"a {type(value).__qualname__} has no value to compare by")
    return (type(value).__qualname__, value)


# -- the budget ------------------------------------------------------------------------------------------

_MISSING = object()


class Budget:
    """One limit in bytes over the entries of many :class:`Cache` s, least recently used first out.

    ``total`` is what the entries held when last measured; ``reclaim(evicted_bytes)`` is called (outside
    the lock, in the thread that stored) after entries were dropped.
    """

    def __init__(self, limit: int, reclaim: Callable[[int], None] | None = None) -> None:
        self.limit = limit
        self.total = 0
        self.evicted = 0  # entries dropped for room so far (the budget or a cache's max_entries)
        self._reclaim = reclaim
        self._lock = threading.RLock()
        self._lru: OrderedDict[tuple[Cache, Hashable], int] = OrderedDict()  # oldest first -> size
        self._caches: dict[str, Cache] = {}
        self._computing: dict[tuple[Cache, Hashable], threading.Lock] = {}
        self._touched: set[tuple[Cache, Hashable]] = set()  # growing entries used since last measured
        self._warned: set[str] = set()

    def cache(self, name: str, **options) -> Cache:
        """The cache called ``name``: made on first use, then the same object (a page script defines its
        cached functions again on every rerun; their entries must stay)."""
        with self._lock:
            found = self._caches.get(name)
            if found is None:
                found = self._caches[name] = Cache(self, name, **options)
            return found

    def function(self, name: str, func: Callable, key: Callable | None = None, **options) -> CachedFunction:
        """``func`` with its results in the cache called ``name`` (:meth:`cache`)."""
        return CachedFunction(self.cache(name, **options), func, key)

    def entries(self) -> list[tuple[str, Hashable, int]]:
        """(cache name, key, bytes) of every entry, the least recently used first."""
        with self._lock:
            return [(c.name, k, size) for (c, k), size in self._lru.items()]

    def clear(self) -> None:
        """Drop every entry of every cache (each cache's ``on_release`` is called)."""
        for cache in list(self._caches.values()):
            cache.clear()

    # -- what Cache calls --

    def _get(self, cache: Cache, key: Hashable):
        with self._lock:
            value = cache._values.get(key, _MISSING)
            if value is not _MISSING:
                cache._values.move_to_end(key)
                self._lru.move_to_end((cache, key))
                if cache.grows and cache.may_grow(value):
                    self._touched.add((cache, key))
            return value

    def _compute_lock(self, cache: Cache, key: Hashable) -> threading.Lock:
        with self._lock:
            return self._computing.setdefault((cache, key), threading.Lock())

    def _done_computing(self, cache: Cache, key: Hashable) -> None:
        with self._lock:
            self._computing.pop((cache, key), None)

    def _store(self, cache: Cache, key: Hashable, value, size: int) -> None:
        grown = self._remeasured(skip=(cache, key))
        dropped: list[tuple[Cache, object, int]] = []
        with self._lock:
            for entry, (old_value, new_size) in grown.items():
                c, k = entry
                if entry in self._lru and c._values.get(k, _MISSING) is old_value:
                    self.total += new_size - self._lru[entry]
                    self._lru[entry] = new_size
            grown.clear()
            if key in cache._values:  # computed twice (a clear in between): the newer one stays
                dropped.append(self._drop(cache, key))
            cache._values[key] = value
            self._lru[(cache, key)] = size
            self.total += size
            if cache.grows and cache.may_grow(value):
                self._touched.add((cache, key))
            while len(cache._values) > cache.max_entries:
                dropped.append(self._drop(cache, next(iter(cache._values))))
            while self.total > self.limit and len(self._lru) > 1:
                dropped.append(self._drop(*next(iter(self._lru))))
            if self.total > self.limit and cache.name not in self._warned:
                self._warned.add(cache.name)
                log.warning("one entry of %s holds %.0f MB, more than the whole cache budget (%.0f MB, %s):"
                            " kept alone", cache.name, size / MB, self.limit / MB, ENV_VAR)
            self.evicted += len(dropped)
        self._release(dropped)

    def _remeasured(self, skip) -> dict:
        """The entries of caches that ``grow`` used (while they could still grow) since they were last
        measured, measured again (outside the lock)."""
        with self._lock:
            touched = [entry for entry in self._touched if entry in self._lru and entry != skip]
            self._touched.difference_update(touched)
            growing = [(entry, entry[0]._values[entry[1]]) for entry in touched]
        sizes = {}
        for entry, value in growing:
            try:
                sizes[entry] = (value, entry[0].sizer(value))
            except Exception:  # (being drawn by another thread, say): measured next time
                log.debug("could not measure an entry of %s again", entry[0].name, exc_info=True)
        return sizes

    def _drop(self, cache: Cache, key: Hashable) -> tuple[Cache, object, int]:
        value = cache._values.pop(key)
        size = self._lru.pop((cache, key))
        self._touched.discard((cache, key))
        self.total -= size
        return cache, value, size

    def _release(self, dropped: list[tuple[Cache, object, int]]) -> None:
        """``on_release`` of each dropped entry, then the list emptied (the caller's too: the values
        must be gone before ``reclaim`` collects)."""
        for cache, value, _ in dropped:
            if cache.on_release is not None:
                try:
                    cache.on_release(value)
                except Exception:  # a failed release must not fail the page that stored something
                    log.exception("on_release of %s failed", cache.name)
        cache = value = None  # (the loop's last value: gone too)
        freed = sum(size for *_, size in dropped)
        dropped.clear()
        if freed and self._reclaim is not None:
            self._reclaim(freed)


class Cache:
    """Values by key in a :class:`Budget`, shared by every caller (every session's thread).

    ``get(key, compute)``: the value, or ``compute()`` stored under ``key``; two threads asking for the
    same key while it is computed wait for one computation, other keys do not wait. ``max_entries``
    bounds this cache's entries too; ``on_release(value)`` is called when an entry is dropped.
    ``grows`` (True, or a predicate of the value: it may still grow): an entry may take more memory
    after it was stored; used while it may, it is measured again at the next store.

    Holds no function: a page's function names its script's namespace (the run, the model...), which
    would then live as long as the cache.
    """

    def __init__(self, budget: Budget, name: str, max_entries: int = 1 << 30,
                 on_release: Callable | None = None, sizer: Callable = nbytes,
                 grows: bool | Callable[[object], bool] = False) -> None:
        self.budget, self.name = budget, name
        self.max_entries, self.on_release, self.sizer, self.grows = max_entries, on_release, sizer, grows
        self._values: OrderedDict[Hashable, object] = OrderedDict()  # oldest first

    def get(self, key: Hashable, compute: Callable[[], object]):
        value = self.budget._get(self, key)
        if value is not _MISSING:
            return value
        lock = self.budget._compute_lock(self, key)
        with lock:
            value = self.budget._get(self, key)
            if value is not _MISSING:
                return value
            try:
                value = compute()
                self.budget._store(self, key, value, self._measured(value))
            finally:  # after the store: a thread coming now finds the value, not a lock of its own
                self.budget._done_computing(self, key)
        return value

    def may_grow(self, value) -> bool:
        return self.grows(value) if callable(self.grows) else bool(self.grows)

    def _measured(self, value) -> int:
        try:
            return self.sizer(value)
        except Exception:  # never a page's traceback for the accounting's sake
            log.exception("could not measure a value of %s: counted as 0 bytes", self.name)
            return 0

    def __contains__(self, key) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"<Cache {self.name}: {len(self._values)} entries>"

    def clear(self) -> None:
        """Drop every entry (``on_release`` is called for each)."""
        with self.budget._lock:
            dropped = [self.budget._drop(self, k) for k in list(self._values)]
        self.budget._release(dropped)


class CachedFunction:
    """``func`` with its results in a :class:`Cache`: ``f(*args)`` is computed once per key.

    ``key(*args, **kwargs)`` makes the key; by default the arguments whose parameter name does not
    start with ``_`` (as ``st.cache_resource``: ``_pipe`` is found again from ``key``).
    """

    def __init__(self, cache: Cache, func: Callable, key: Callable | None = None) -> None:
        self.cache, self.func = cache, func
        self._key = key or _argument_key(func)
        self.__wrapped__ = func

    def __call__(self, *args, **kwargs):
        return self.cache.get(self._key(*args, **kwargs), lambda: self.func(*args, **kwargs))

    def clear(self) -> None:
        self.cache.clear()

    def has(self, *args, **kwargs) -> bool:
        """Whether ``self(*args, **kwargs)`` is kept already (a call would not compute it)."""
        return self._key(*args, **kwargs) in self.cache

    def __contains__(self, key) -> bool:
        return key in self.cache

    def __len__(self) -> int:
        return len(self.cache)


def _argument_key(func: Callable) -> Callable:
    """The key maker of ``st.cache_resource``: the arguments, by parameter, except ``_``-named ones."""
    signature = inspect.signature(func)
    kept = [name for name in signature.parameters if not name.startswith("_")]

    def key(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments[name] for name in kept)

    if all(p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty for p in signature.parameters.values()):
        positions = [i for i, name in enumerate(signature.parameters) if not name.startswith("_")]

        def fast(*args, **kwargs):  # every argument given by position: no binding (a hit's whole cost)
            if kwargs or len(args) != len(signature.parameters):
                return key(*args, **kwargs)
            return tuple(args[i] for i in positions)

        return fast
    return key


# -- the server's budget ---------------------------------------------------------------------------------


def _malloc_trim() -> Callable[[], None]:
    """glibc's ``malloc_trim(0)``: free pages in malloc's arenas go back to the system (else a no-op)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return lambda: None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


class Reclaimer:
    """Called after evictions: once at least ``threshold`` bytes were dropped since the last time, a
    full collection and ``malloc_trim``, so dropped entries leave the process's memory (worth its cost
    only after a computation large enough to evict that much)."""

    def __init__(self, threshold: int = RECLAIM_BYTES) -> None:
        self.threshold = threshold
        self.pending = 0
        self.collections = 0
        self._trim = _malloc_trim()
        self._lock = threading.Lock()

    def __call__(self, freed: int) -> None:
        with self._lock:
            self.pending += freed
            if self.pending < self.threshold:
                return
            self.pending = 0
        start = time.perf_counter()
        gc.collect()
        self._trim()
        self.collections += 1
        log.debug("reclaimed after %.0f MB evicted in %.0f ms", freed / MB,
                  1000 * (time.perf_counter() - start))


BUDGET = Budget(limit_from_env(), reclaim=Reclaimer())


def cached(max_entries: int = 1 << 30, *, on_release: Callable | None = None,
           grows: bool | Callable[[object], bool] = False,
           key: Callable | None = None, sizer: Callable = nbytes, budget: Budget | None = None):
    """Decorator: the function's results in a :class:`Cache` of the server's budget (or ``budget``),
    named after the function's file and name (so a page script that defines it again on every rerun
    gets the same cache)."""

    def decorate(func: Callable) -> CachedFunction:
        code = getattr(func, "__code__", None)
        where = f"{code.co_filename}:{code.co_firstlineno}" if code else repr(func)
        return (budget or BUDGET).function(f"{func.__qualname__}@{where}", func, key=key,
                                           max_entries=max_entries, on_release=on_release, grows=grows,
                                           sizer=sizer)

    return decorate
