"""Drawing a new model's initial weights fast, and a memory pool for them.

Nothing here is in the paper; it is why a new model appears quickly in the app. ``Transformer``
(core/model/transformer.py) builds every module on the "meta" device (shapes, no numbers), then:

    materialize_on_cpu(model)        every tensor gets CPU memory (uninitialised), from SLABS if pooled
    draw_glorot(model, seed, only)   Glorot's U(-a, a), a = sqrt(6 / (fan_in + fan_out)), per tensor

Every tensor draws from a stream of its own, seeded from the config's seed and the tensor's place in
the model, so the same config gives the same numbers whether the model is drawn whole, in parts
(``Transformer.undrawn(config).draw(part)``), or on any number of threads, and the caller's global
random state is never touched.
"""

from __future__ import annotations

import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn

INIT_THREADS = min(4, os.cpu_count() or 1)  # threads filling a new model's weights (torch frees the GIL)


def embedding_table(rows: int, dim: int) -> nn.Embedding:
    """``nn.Embedding(rows, dim)``, without torch's N(0, 1) initialisation when built on the "meta"
    device (as Transformer builds every module; ``draw_glorot`` draws the weights): torch's
    ``normal_`` on a meta tensor, like ``arange``, runs a Python decomposition that imports
    torch._dynamo, a long wait the first time a server process builds a model, i.e. on the first
    student's first page. Elsewhere the table is initialised as nn.Embedding would."""
    weight = torch.empty(rows, dim)
    if weight.device.type != "meta":
        nn.init.normal_(weight)
    return nn.Embedding(rows, dim, _weight=weight)


# -- U(-bound, bound), four numbers per draw ---------------------------------------------------------

UNIFORM_CHUNK = 1 << 18  # numbers converted at a time: the chunk's int16s and floats stay in the cache


def _uniform(tensor: torch.Tensor, bound: float, generator: torch.Generator) -> None:
    """Fill a contiguous float tensor with U(-bound, bound) on a grid of 2^16 levels, in place.

    ``tensor.uniform_`` spends one draw of torch's CPU generator (mt19937, one number at a time) per
    number; here one draw of 64 bits gives four 16-bit integers, each mapped to the centre of one of
    2^16 equal cells of [-bound, bound]: fewer draws (drawing is most of the time a new model takes
    to appear in the app), mean 0 and variance bound²/3 like the continuous U(-bound, bound)
    (to 1 part in 2^32). 2^16 levels of 1/32768 of the bound are far finer than training moves a
    weight; torch's own float uniform has 2^24. The 64 bits are drawn over int64's whole range
    (``random_(-2**63, None)``: two mt19937 outputs side by side); ``random_(-2**63, 2**63 - 1)``
    takes a 64-bit remainder per number, which is slower, and misses one value of the 2^64.
    """
    flat = tensor.view(-1)
    bits = torch.empty(-(-min(flat.numel(), UNIFORM_CHUNK) // 4), dtype=torch.int64)
    levels = bits.view(torch.int16)
    for start in range(0, flat.numel(), UNIFORM_CHUNK):
        out = flat[start : start + UNIFORM_CHUNK]
        bits.random_(-(2**63), None, generator=generator)  # all 2^64 values equally likely
        out.copy_(levels[: out.numel()])  # 4 integers in [-32768, 32767] per draw
        out.add_(0.5).mul_(bound / 32768)


def _glorot_jobs(module: nn.Module, only: set[int] | None) -> list[tuple[torch.Tensor, float]]:
    """(tensor, bound of U(-bound, bound)) for every Linear and Embedding weight and Linear bias, in
    registration order (the order decides each tensor's stream: keep it, or seeds change weights).
    LayerNorms are set to (1, 0) here directly; ``only`` limits that to these tensors (by ``id``)."""
    jobs: list[tuple[torch.Tensor, float]] = []
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Embedding)):
            fan_out, fan_in = m.weight.shape  # xavier_uniform_'s fans of a 2-D weight
            jobs.append((m.weight, math.sqrt(6.0 / (fan_in + fan_out))))
        if isinstance(m, nn.Linear) and m.bias is not None:
            jobs.append((m.bias, 1 / math.sqrt(m.in_features)))  # as torch's nn.Linear
        elif isinstance(m, nn.LayerNorm) and (only is None or id(m.weight) in only):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.RMSNorm) and (only is None or id(m.weight) in only):  # Llama: g = 1
            nn.init.ones_(m.weight)
    return jobs


@torch.no_grad()
def draw_glorot(module: nn.Module, seed: int, only: set[int] | None = None) -> None:
    """Glorot for every matrix (as in the Annotated Transformer); biases as torch's nn.Linear.

    Each tensor draws from its own generator, seeded from ``seed`` and its place in the registration
    order, so the tensors can be filled on INIT_THREADS threads and still come out the same on any
    machine: torch's CPU generator fills one tensor on one core (and each draw gives four numbers:
    ``_uniform``). ``only``: fill these tensors alone (by ``id``), with the numbers the whole model
    would get.
    """
    jobs = _glorot_jobs(module, only)
    seeds = torch.Generator().manual_seed(seed)
    streams = torch.randint(2**62, (len(jobs),), generator=seeds)  # one per tensor, filled or not
    todo = [i for i, (t, _) in enumerate(jobs) if only is None or id(t) in only]

    def fill(i: int) -> None:
        tensor, bound = jobs[i]
        with torch.no_grad():  # per thread: the pool's threads do not inherit the caller's mode
            _uniform(tensor, bound, torch.Generator().manual_seed(int(streams[i])))

    order = sorted(todo, key=lambda i: -jobs[i][0].numel())  # big ones first: an even split
    if INIT_THREADS > 1 and sum(jobs[i][0].numel() for i in todo) > 1_000_000:
        with ThreadPoolExecutor(INIT_THREADS) as pool:
            list(pool.map(fill, order))
    else:
        for i in order:
            fill(i)


# -- memory for the weights ----------------------------------------------------------------------------


class _SlabPool:
    """Memory for drawn models, handed on to the next one when a model is gone.

    A new model's 46M numbers (d_model=512, 6 layers) are 184 MB the kernel must map and zero page
    by page on first touch, and malloc hands such blocks back to the system when the app's cache
    drops a model, so the next model faults them in again. Here a drawn model's parameters are views
    of one block (a slab), and the pool keeps each slab it made: once nothing but the pool uses a
    slab's storage (the model and every view of its weights are gone: torch's own use count of the
    storage), the next model of a size that fits draws into it. Every number is drawn again, so the
    weights are exactly those of a fresh block. Free slabs beyond ``spare_bytes`` are let go, oldest
    first.
    """

    ALIGN = 16  # floats (64 bytes) between the starts of two tensors in a slab

    def __init__(self, spare_bytes: int) -> None:
        self.spare_bytes = spare_bytes
        self._slabs: list[torch.Tensor] = []  # oldest first
        self._lock = threading.Lock()

    # torch's count of a storage's users (private; torch is pinned). Without it nothing is reused.
    _use_count = getattr(torch._C, "_storage_Use_Count", None)

    @classmethod
    def _free(cls, slab: torch.Tensor) -> bool:
        # 2 = the pool's tensor + the storage object made for the question: nobody else holds it
        return cls._use_count(slab.untyped_storage()._cdata) <= 2

    def take(self, numel: int) -> torch.Tensor:
        """A float32 tensor of ``numel`` numbers (uninitialised): a free slab that fits (at most a
        quarter larger), else a new one."""
        if self._use_count is None:
            return torch.empty(numel)
        with self._lock:
            fits = [s for s in self._slabs if numel <= s.numel() <= numel + numel // 4 and self._free(s)]
            if fits:
                slab = min(fits, key=torch.Tensor.numel)
            else:
                slab = torch.empty(numel)
                self._slabs.append(slab)
            taken = slab[:numel]  # in use from here on (a view holds the storage)
            self._let_go_beyond_spare(keep=slab)
            return taken

    def _let_go_beyond_spare(self, keep: torch.Tensor) -> None:
        kept, spare = [], 0
        for s in reversed(self._slabs):  # newest first: the oldest free ones go
            if s is not keep and self._free(s):
                spare += s.numel() * s.element_size()
                if spare > self.spare_bytes:
                    continue
            kept.append(s)
        self._slabs = kept[::-1]

    def clear(self) -> None:
        with self._lock:
            self._slabs.clear()


# Enough spare for two d_model=512, 6-layer models, drawn in two parts each (source side, the rest).
SLABS = _SlabPool(spare_bytes=400 * 2**20)


def _meta_slots(module: nn.Module) -> list[tuple[dict, str, torch.Tensor]]:
    """(the dict holding it, its name, the tensor) for every parameter and buffer still on "meta"."""
    slots_to_fill = []
    for m in module.modules():
        for slots in (m._parameters, m._buffers):
            for name, t in slots.items():
                if t is not None and t.is_meta:
                    slots_to_fill.append((slots, name, t))
    return slots_to_fill


def _slab_offsets(slots_to_fill: list[tuple[dict, str, torch.Tensor]]) -> tuple[dict[int, int], int]:
    """({id(meta parameter): its offset in one slab}, the slab's size) for the float32 parameters."""
    offsets: dict[int, int] = {}
    end = 0
    for _, _, t in slots_to_fill:
        if isinstance(t, nn.Parameter) and t.dtype == torch.float32 and id(t) not in offsets:
            offsets[id(t)] = end
            end += -(-t.numel() // _SlabPool.ALIGN) * _SlabPool.ALIGN
    return offsets, end


def materialize_on_cpu(module: nn.Module, pooled: bool = False) -> list[torch.Tensor]:
    """``module.to_empty(device="cpu")`` for a module built on the meta device: every parameter and
    buffer becomes an uninitialised CPU tensor of its shape (tensors used twice stay shared).

    ``to_empty`` calls ``empty_like`` on each meta tensor, which torch runs as a Python reference
    implementation that imports sympy (torch.fx.experimental.symbolic_shapes): a long wait on the
    first model a server process builds, i.e. on the first page anyone opens. ``torch.empty`` does
    not. ``pooled``: the float32 parameters are views of one slab from ``SLABS`` (reused memory, its
    old numbers still in it: the caller draws every one). Returns the CPU tensors it made.
    """
    # id(meta tensor) -> (the meta tensor, kept alive so that no id is reused; its CPU tensor)
    made: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    slots_to_fill = _meta_slots(module)
    offsets, end = _slab_offsets(slots_to_fill) if pooled else ({}, 0)
    slab = SLABS.take(end) if end else None
    for slots, name, t in slots_to_fill:
        if id(t) not in made:
            if id(t) in offsets:
                start = offsets[id(t)]
                data = slab[start : start + t.numel()].view(t.shape)
            else:
                data = torch.empty(t.shape, dtype=t.dtype)
            cpu = nn.Parameter(data, t.requires_grad) if isinstance(t, nn.Parameter) else data
            made[id(t)] = (t, cpu)
        slots[name] = made[id(t)][1]
    return [cpu for _, cpu in made.values()]
