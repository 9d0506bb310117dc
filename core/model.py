"""The encoder-decoder Transformer of "Attention Is All You Need", small enough to trace every number.

    src ids ─ Embedding·sqrt(d_model) + PE ─ N × EncoderLayer ─ LayerNorm ─ memory ─┐
    tgt ids ─ Embedding·sqrt(d_model) + PE ─ N × DecoderLayer(memory) ─ LayerNorm ─ Linear ─ logits

``Transformer.trace`` returns a ``ModelTrace`` with every intermediate tensor; ``forward`` returns
only the logits (for training). Both run the same code.

The same classes also run a pretrained BERT encoder (core/pretrained.py), switched by config options
whose defaults are the paper's model:

    src ids ─ Embedding + learned position + token type ─ LayerNorm ─ N × EncoderLayer(GELU) ─ output
    (positions="learned", scale_embeddings=False, type_vocab_size=2, embed_norm=True,
     activation="gelu", final_norm=False, decoder=False)

positions="rope" / "alibi" add nothing to the embeddings; every self-attention rotates its queries
and keys (rope) or adds a distance penalty to its scores (alibi), see core/attention.py.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from torch import nn

from core.config import ModelConfig
from core.layers import DecoderLayer, EncoderLayer
from core.masks import decoder_mask, padding_mask
from core.modules import LayerNorm, Linear
from core.positional import ADDED_TO_EMBEDDINGS, sinusoidal_encoding
from core.trace import DecodeResult, ModelTrace
from core.vocab import BOS_ID, EOS_ID

INIT_THREADS = min(4, os.cpu_count() or 1)  # threads filling a new model's weights (torch frees the GIL)


def _table(rows: int, dim: int) -> nn.Embedding:
    """``nn.Embedding(rows, dim)``, without torch's N(0, 1) initialisation when built on the "meta"
    device (as Transformer builds every module; its _init_weights draws the weights): torch's
    ``normal_`` on a meta tensor, like ``arange`` (the sinusoids below), runs a Python decomposition
    that imports torch._dynamo, ~1.4 s the first time a server process builds a model, i.e. on the
    first student's first page. Elsewhere the table is initialised as nn.Embedding would."""
    weight = torch.empty(rows, dim)
    if weight.device.type != "meta":
        nn.init.normal_(weight)
    return nn.Embedding(rows, dim, _weight=weight)


UNIFORM_CHUNK = 1 << 18  # numbers converted at a time: the chunk's int16s and floats stay in the cache


def _uniform(tensor: torch.Tensor, bound: float, generator: torch.Generator) -> None:
    """Fill a contiguous float tensor with U(-bound, bound) on a grid of 2^16 levels, in place.

    ``tensor.uniform_`` spends one draw of torch's CPU generator (mt19937, one number at a time) per
    number; here one draw of 64 bits gives four 16-bit integers, each mapped to the centre of one of
    2^16 equal cells of [-bound, bound]: about twice as fast (drawing is most of the time a new model
    takes to appear in the app), mean 0 and variance bound²/3 like the continuous U(-bound, bound)
    (to 1 part in 2^32). 2^16 levels of 1/32768 of the bound are far finer than training moves a
    weight; torch's own float uniform has 2^24. The 64 bits are drawn over int64's whole range
    (``random_(-2**63, None)``: two mt19937 outputs side by side); ``random_(-2**63, 2**63 - 1)``
    takes a 64-bit remainder per number, ~40 % slower (89 against 107 ms for 46M numbers on one core),
    and misses one value of the 2^64.
    """
    flat = tensor.view(-1)
    bits = torch.empty(-(-min(flat.numel(), UNIFORM_CHUNK) // 4), dtype=torch.int64)
    levels = bits.view(torch.int16)
    for start in range(0, flat.numel(), UNIFORM_CHUNK):
        out = flat[start : start + UNIFORM_CHUNK]
        bits.random_(-(2**63), None, generator=generator)  # all 2^64 values equally likely
        out.copy_(levels[: out.numel()])  # 4 integers in [-32768, 32767] per draw
        out.add_(0.5).mul_(bound / 32768)


class _SlabPool:
    """Memory for drawn models, handed on to the next one when a model is gone.

    A new model's 46M numbers (d_model=512, 6 layers) are 184 MB the kernel must map and zero page
    by page on first touch: 47k page faults, ~0.1 s of system time on an idle machine and 0.4-0.5 s
    per new model in the app (server process, ``/proc/<pid>/stat``), with Chromium on the other core;
    malloc hands such blocks back to the system when the app's cache drops a model, so the next model
    faults them in again. Here a drawn model's parameters are views of one block (a slab), and the
    pool keeps each slab it made: once nothing but the pool uses a slab's storage (the model and
    every view of its weights are gone: torch's own use count of the storage), the next model of a
    size that fits draws into it. Every number is drawn again, so the weights are exactly those of a
    fresh block. Free slabs beyond ``spare_bytes`` are let go, oldest first.
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
            kept, spare = [], 0
            for s in reversed(self._slabs):  # newest first: the oldest free ones go
                if s is not slab and self._free(s):
                    spare += s.numel() * s.element_size()
                    if spare > self.spare_bytes:
                        continue
                kept.append(s)
            self._slabs = kept[::-1]
            return taken

    def clear(self) -> None:
        with self._lock:
            self._slabs.clear()


# Enough spare for two d_model=512, 6-layer models, drawn in two parts each (source side, the rest).
SLABS = _SlabPool(spare_bytes=400 * 2**20)


def _materialize_on_cpu(module: nn.Module, pooled: bool = False) -> list[torch.Tensor]:
    """``module.to_empty(device="cpu")`` for a module built on the meta device: every parameter and
    buffer becomes an uninitialised CPU tensor of its shape (tensors used twice stay shared).

    ``to_empty`` calls ``empty_like`` on each meta tensor, which torch runs as a Python reference
    implementation that imports sympy (torch.fx.experimental.symbolic_shapes): ~0.4 s on the first
    model a server process builds, i.e. on the first page anyone opens. ``torch.empty`` does not.
    ``pooled``: the float32 parameters are views of one slab from ``SLABS`` (reused memory, its old
    numbers still in it: the caller draws every one). Returns the CPU tensors it made.
    """
    # id(meta tensor) -> (the meta tensor, kept alive so that no id is reused; its CPU tensor)
    made: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
    slots_to_fill: list[tuple[dict, str, torch.Tensor]] = []
    for m in module.modules():
        for slots in (m._parameters, m._buffers):
            for name, t in slots.items():
                if t is not None and t.is_meta:
                    slots_to_fill.append((slots, name, t))
    slabbed = {}  # id(meta parameter) -> its offset in the slab
    end = 0
    if pooled:
        for _, _, t in slots_to_fill:
            if isinstance(t, nn.Parameter) and t.dtype == torch.float32 and id(t) not in slabbed:
                slabbed[id(t)] = end
                end += -(-t.numel() // _SlabPool.ALIGN) * _SlabPool.ALIGN
    slab = SLABS.take(end) if end else None
    for slots, name, t in slots_to_fill:
        if id(t) not in made:
            if id(t) in slabbed:
                start = slabbed[id(t)]
                data = slab[start : start + t.numel()].view(t.shape)
            else:
                data = torch.empty(t.shape, dtype=t.dtype)
            cpu = nn.Parameter(data, t.requires_grad) if isinstance(t, nn.Parameter) else data
            made[id(t)] = (t, cpu)
        slots[name] = made[id(t)][1]
    return [cpu for _, cpu in made.values()]


def _fill_sinusoids(c: ModelConfig, *embeds: Embedding | None) -> None:
    """One sinusoid table for these Embeddings' ``pe`` buffers (built on "meta", left uninitialised)."""
    if c.positions == "sinusoidal":
        pe = sinusoidal_encoding(c.max_len, c.d_model)
        for embed in embeds:
            if embed is not None:
                embed.pe = pe


class Embedding(nn.Module):
    """Token lookup scaled by sqrt(d_model) plus the sinusoidal position (section 3.4, 3.5).

    The scaling keeps token vectors (xavier-initialised, entries ~ 1/sqrt(d_model)) on the same
    scale as the positional encoding, whose entries lie in [-1, 1].

    BERT instead adds a learned position table and a token-type (segment) row to the unscaled
    lookup, then normalises the sum: LayerNorm(lookup + P[pos] + T[type]).
    With positions="rope" or "alibi" nothing is added here: the attention layers handle positions.

    Past max_len: a learned table has no row, so a longer input raises a ValueError; the sinusoidal
    table is computed for the longer length (its first rows are the same numbers).
    """

    def __init__(self, vocab_size: int, c: ModelConfig) -> None:
        super().__init__()
        self.lookup = _table(vocab_size, c.d_model)
        self.scale = math.sqrt(c.d_model) if c.scale_embeddings else None
        self.max_len = c.max_len
        self.positions = c.positions
        if c.positions == "learned":
            self.position = _table(c.max_len, c.d_model)
        elif c.positions == "sinusoidal":
            pe = torch.empty(c.max_len, c.d_model)
            if pe.device.type != "meta":  # on "meta" (Transformer) shapes only: it fills the table itself
                pe = sinusoidal_encoding(c.max_len, c.d_model)
            self.register_buffer("pe", pe, persistent=False)
        self.token_type = _table(c.type_vocab_size, c.d_model) if c.type_vocab_size else None
        self.norm = LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.embed_norm else nn.Identity()
        self.dropout = nn.Dropout(c.dropout)

    def _check_length(self, length: int) -> None:
        if self.positions == "learned" and length > self.max_len:
            raise ValueError(
                f"sequence length {length} exceeds max_len={self.max_len}: learned positions have one "
                f"trained row for each position 0…{self.max_len - 1} and none beyond"
            )

    def positional(self, length: int) -> torch.Tensor:
        """The position rows added to the first ``length`` tokens: (length, d_model).

        rope / alibi: zeros, since nothing is added to the embeddings.
        """
        self._check_length(length)
        if self.positions == "learned":  # a copy: a view would keep the whole slab (SLABS) alive
            return self.position.weight[:length].clone()
        if self.positions == "sinusoidal":
            if length <= self.pe.size(0):
                return self.pe[:length]
            return sinusoidal_encoding(length, self.pe.size(1)).to(self.pe.device)  # past max_len
        return self.lookup.weight.new_zeros(length, self.lookup.embedding_dim)

    def forward(
        self, ids: torch.Tensor, token_types: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, L) ids -> (embedded (B, L, d_model) before dropout, lookup (B, L, d_model)).

        ``token_types`` (B, L) picks the token-type rows; None means type 0 (one sentence).
        """
        self._check_length(ids.size(1))
        lookup = self.lookup(ids)  # (B, L, d_model)
        x = lookup if self.scale is None else lookup * self.scale
        if self.positions in ADDED_TO_EMBEDDINGS:
            x = x + self.positional(ids.size(1))  # (B, L, d_model)
        if self.token_type is not None:
            x = x + (self.token_type.weight[0] if token_types is None else self.token_type(token_types))
        return self.norm(x), lookup


def _final_norm(c: ModelConfig) -> nn.Module:
    return LayerNorm(c.d_model, eps=c.layer_norm_eps) if c.final_norm else nn.Identity()


class Encoder(nn.Module):
    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(
                c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm, c.activation, c.layer_norm_eps, c.positions
            )
            for _ in range(c.num_layers)
        )
        self.norm = _final_norm(c)

    def forward(self, x, src_mask):
        traces = []
        for layer in self.layers:
            x, t = layer(x, src_mask)
            traces.append(t)
        return self.norm(x), traces


class Decoder(nn.Module):
    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            DecoderLayer(
                c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm, c.activation, c.layer_norm_eps, c.positions
            )
            for _ in range(c.num_layers)
        )
        self.norm = _final_norm(c)

    def forward(self, x, memory, src_mask, tgt_mask):
        traces = []
        for layer in self.layers:
            x, t = layer(x, memory, src_mask, tgt_mask)
            traces.append(t)
        return self.norm(x), traces


class Transformer(nn.Module):
    def __init__(self, config: ModelConfig, *, _random_init: bool = True, _materialize: bool = True) -> None:
        super().__init__()
        self.config = config
        c = config
        # Private RNG streams (seeded from config.seed) give the same config the same weights,
        # without touching the caller's global random state.
        # The modules are built on the "meta" device (shapes only) and initialised once below:
        # torch's default init followed by ours drew every weight twice (0.85 s at d_model=512, N=6).
        # (core.modules' Linear and LayerNorm, and _table, skip torch's init on "meta" altogether.)
        # An encoder-only model (decoder=False) has None for the three target-side parts.
        with torch.device("meta"):
            # (registration order = the order _init_weights draws in: keep it, or seeds change weights)
            self.src_embed = Embedding(c.src_vocab_size, c)
            self.tgt_embed = Embedding(c.tgt_vocab_size, c) if c.decoder else None
            self.encoder = Encoder(c)
            self.decoder = Decoder(c) if c.decoder else None
            # d_model -> logits over the vocabulary
            self.generator = Linear(c.d_model, c.tgt_vocab_size) if c.decoder else None
        if not _materialize:  # shapes only: sharing_weights hands it another model's tensors
            return
        _materialize_on_cpu(self)
        _fill_sinusoids(c, self.src_embed, self.tgt_embed)
        if _random_init:  # False only from from_state_dict, which fills every parameter next
            self._init_weights()

    @classmethod
    def from_state_dict(cls, config: ModelConfig, state_dict: dict) -> Transformer:
        """A model holding exactly these weights (strict: none missing, none left over).

        Skips the random initialisation the weights would overwrite (1 s for a 23M-parameter BERT).
        """
        model = cls(config, _random_init=False)
        model.load_state_dict(state_dict, strict=True)
        return model

    def sharing_weights(self, **changes) -> Transformer:
        """This model's very parameters and buffers (nothing copied) under its config with ``changes``.

        For options that change how the numbers flow, not which numbers exist: ``norm="pre"`` gives
        the pre-norm model a fresh ``Transformer`` with the same seed would be (same modules in the
        same order draw the same weights), without drawing 44M random numbers again at d_model=512,
        6 layers, nor holding them twice. A change of shape raises (strict ``load_state_dict``).
        """
        config = dataclasses.replace(self.config, **changes)
        twin = Transformer(config, _random_init=False, _materialize=False)
        twin.load_state_dict(self.state_dict(), strict=True, assign=True)
        for name, buffer in self.named_buffers(remove_duplicate=False):  # non-persistent: the sinusoids
            owner, _, leaf = name.rpartition(".")
            setattr(twin.get_submodule(owner), leaf, buffer)
        return twin.train(self.training)

    @classmethod
    def undrawn(cls, config: ModelConfig) -> Transformer:
        """``Transformer(config)`` before any number is drawn: every module is shapes on "meta".

        :meth:`draw` then draws the parts a view needs, each with the very numbers ``Transformer(config)``
        gives it (every tensor has a stream of its own: ``_init_weights``). At d_model=512, 6 layers a
        view of the encoder draws ~40 % of the 46M numbers, one of the first layers ~20 %, and drawing
        is most of the time a new model takes to appear.
        """
        return cls(config, _random_init=False, _materialize=False).eval()

    def draw(self, *parts: nn.Module) -> Transformer:
        """Draw whatever is still on "meta" in ``parts`` (modules of this model, or a
        :meth:`first_layers` view of it; all of it when none is given), in place; what was drawn
        before stays as it is. Returns the model."""
        holder = nn.ModuleList(parts or [self])  # a holder: the modules stay the model's
        if not any(t.is_meta for t in [*holder.parameters(), *holder.buffers()]):
            return self
        inside = {id(m) for m in holder.modules()}
        sides = [e for e in (self.src_embed, self.tgt_embed) if getattr(e, "pe", None) is not None]
        waiting = [e for e in sides if e.pe.is_meta and id(e) in inside]
        if waiting:  # one sinusoid table for both sides, as the whole model has
            done = [e.pe for e in sides if not e.pe.is_meta]
            table = done[0] if done else sinusoidal_encoding(self.config.max_len, self.config.d_model)
            for embed in waiting:
                embed.pe = table
        fresh = _materialize_on_cpu(holder, pooled=True)
        self._init_weights(only={id(t) for t in fresh})
        return self

    def first_layers(self, n: int) -> Transformer:
        """A model of this one's first ``n`` layers on each side (``config.num_layers = n``), sharing
        these very tensors (nothing copied or drawn; parts still on "meta" stay so).

        Its trace equals this model's for what reads nothing past those layers: the encoder's
        self-attention in layers 1…n and the decoder's masked self-attention in layer 1 (its input is
        the target embedding alone). The rest is not this model's: cross-attention reads the memory of
        ``n`` encoder layers, and the decoder's later layers and its outputs follow from it.
        """
        if not 1 <= n <= self.config.num_layers:
            raise ValueError(f"n={n} must be between 1 and num_layers={self.config.num_layers}")
        view = Transformer(dataclasses.replace(self.config, num_layers=n), _random_init=False,
                           _materialize=False)
        view.src_embed, view.tgt_embed, view.generator = self.src_embed, self.tgt_embed, self.generator
        for mine, theirs in ((view.encoder, self.encoder), (view.decoder, self.decoder)):
            if theirs is not None:
                mine.layers = nn.ModuleList(theirs.layers[:n])
                mine.norm = theirs.norm
        return view.train(self.training)

    @torch.no_grad()
    def _init_weights(self, only: set[int] | None = None) -> None:
        """Glorot for every matrix (as in the Annotated Transformer); biases as torch's nn.Linear.

        Each tensor draws from its own generator, seeded from ``config.seed`` and its place in the
        registration order, so the tensors can be filled on INIT_THREADS threads and still come out
        the same on any machine: drawing 46M numbers (d_model=512, 6 layers) is most of the time a
        new model takes to appear in the app, and torch's CPU generator fills one tensor on one core
        (and each draw gives four numbers: ``_uniform``).
        ``only``: fill these tensors alone (by ``id``), with the numbers the whole model would get.
        """
        jobs: list[tuple[torch.Tensor, float]] = []  # (tensor, bound of U(-bound, bound))
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                fan_out, fan_in = m.weight.shape  # xavier_uniform_'s fans of a 2-D weight
                jobs.append((m.weight, math.sqrt(6.0 / (fan_in + fan_out))))
            if isinstance(m, nn.Linear) and m.bias is not None:
                jobs.append((m.bias, 1 / math.sqrt(m.in_features)))
            elif isinstance(m, nn.LayerNorm) and (only is None or id(m.weight) in only):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        seeds = torch.Generator().manual_seed(self.config.seed)
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

    # -- the three stages --------------------------------------------------------------------------

    def _check_ids(self, ids: torch.Tensor, vocab_size: int, name: str) -> None:
        if ids.dim() != 2 or ids.dtype != torch.long:
            raise ValueError(
                f"{name} must be a LongTensor of shape (batch, length), got {tuple(ids.shape)} {ids.dtype}"
            )
        if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
            raise ValueError(f"{name} has ids outside [0, {vocab_size})")

    def encode(self, src_ids: torch.Tensor):
        """-> (memory, src_mask, encoder traces, embedded, lookup)."""
        self._check_ids(src_ids, self.config.src_vocab_size, "src_ids")
        src_mask = padding_mask(src_ids, self.config.pad_id)  # (B, 1, 1, S)
        embedded, lookup = self.src_embed(src_ids)  # (B, S, d_model)
        memory, traces = self.encoder(self.src_embed.dropout(embedded), src_mask)
        return memory, src_mask, traces, embedded, lookup

    def _need_decoder(self) -> None:
        if self.decoder is None:
            raise ValueError("this model is an encoder only (config.decoder=False): it takes no tgt_ids")

    def decode(self, tgt_ids: torch.Tensor, memory: torch.Tensor, src_mask: torch.Tensor):
        """-> (logits, decoder output, tgt_mask, decoder traces, embedded, lookup)."""
        self._need_decoder()
        self._check_ids(tgt_ids, self.config.tgt_vocab_size, "tgt_ids")
        tgt_mask = decoder_mask(tgt_ids, self.config.pad_id)  # (B, 1, T, T)
        embedded, lookup = self.tgt_embed(tgt_ids)  # (B, T, d_model)
        out, traces = self.decoder(self.tgt_embed.dropout(embedded), memory, src_mask, tgt_mask)
        return self.generator(out), out, tgt_mask, traces, embedded, lookup

    def forward(self, src_ids: torch.Tensor, tgt_ids: torch.Tensor) -> torch.Tensor:
        """(B, S), (B, T) ids -> logits (B, T, tgt_vocab_size)."""
        self._need_decoder()
        memory, src_mask, *_ = self.encode(src_ids)
        return self.decode(tgt_ids, memory, src_mask)[0]

    # -- tracing -----------------------------------------------------------------------------------

    @torch.no_grad()
    def trace(self, src_ids: torch.Tensor, tgt_ids: torch.Tensor | None = None) -> ModelTrace:
        """Run the model and return every intermediate tensor (see core/trace.py).

        Traces are taken as in inference: dropout is off whatever mode the module is in.
        """
        if tgt_ids is not None:
            self._need_decoder()
        with _eval_mode(self):
            encoded = self.encode(src_ids)
            return self._trace_from(src_ids, encoded, tgt_ids)

    def _trace_from(self, src_ids, encoded, tgt_ids) -> ModelTrace:
        memory, src_mask, enc_traces, src_embedded, src_lookup = encoded
        length = max(src_ids.size(1), 0 if tgt_ids is None else tgt_ids.size(1))
        common = dict(
            src_ids=src_ids,
            src_token_embedding=src_lookup.detach(),
            src_embedded=src_embedded.detach(),
            positional=self.src_embed.positional(length).detach(),
            src_mask=src_mask,
            encoder=enc_traces,
            memory=memory.detach(),
        )
        if tgt_ids is None:
            return ModelTrace(**common)
        logits, out, tgt_mask, dec_traces, tgt_embedded, tgt_lookup = self.decode(tgt_ids, memory, src_mask)
        return ModelTrace(
            **common,
            tgt_ids=tgt_ids,
            tgt_token_embedding=tgt_lookup.detach(),
            tgt_embedded=tgt_embedded.detach(),
            tgt_mask=tgt_mask,
            decoder=dec_traces,
            decoder_output=out.detach(),
            logits=logits.detach(),
        )

    @torch.no_grad()
    def greedy_decode(
        self, src_ids: torch.Tensor, max_new_tokens: int, bos_id: int = BOS_ID, eos_id: int = EOS_ID
    ) -> DecodeResult:
        """Generate by taking the most probable token at each step (the paper uses beam search).

        The encoder runs once. A sequence that has produced EOS is padded from then on; decoding
        stops when every sequence has. Learned positions stop at max_len tokens (no row beyond); the
        other schemes have no limit. Each step's trace is of the prefix that produced its token.

        The same tokens as running the decoder once per token, in fewer runs: each run also reads a
        guess of the next tokens (``_guess``: what followed the last token before, else the last
        token again), and since the decoder is causal, the prediction after a guessed token is right
        if that guess was. The guesses that match the model's own choices are kept; the first miss
        ends the run, its position's prediction is taken, and the next run starts from there. After a
        run whose guesses all held, all the tokens still to come are guessed (a run of 16 positions
        costs ~1.5 runs of 1 at d_model=512); after a miss, twice as many as held. An untrained
        model mostly repeats one token: 14 tokens at d_model=512 took 14 runs (~0.43 s), now mostly
        2 (~0.09 s). The steps' traces are views of the last run's (``target_prefix``).
        """
        self._need_decoder()
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens={max_new_tokens} must be ≥ 0")
        c = self.config
        with _eval_mode(self):
            encoded = self.encode(src_ids)
            B = src_ids.size(0)
            tokens = torch.full((B, 1), bos_id, dtype=torch.long, device=src_ids.device)
            done = torch.zeros(B, dtype=torch.bool, device=src_ids.device)
            probs, last = [], None
            if c.positions == "learned":
                max_new_tokens = min(max_new_tokens, c.max_len - 1)
            guesses = 0  # the first run has nothing to go on
            while len(probs) < max_new_tokens and not done.all():
                room = max_new_tokens - len(probs) - 1  # tokens still to come after this run's first
                if c.positions == "learned":
                    room = min(room, c.max_len - tokens.size(1))
                guess = _guess(tokens, min(guesses, room)).masked_fill(done[:, None], c.pad_id)  # (B, k)
                last = self._trace_from(src_ids, encoded, torch.cat([tokens, guess], dim=1))
                p = torch.softmax(last.logits[:, tokens.size(1) - 1 :], dim=-1)  # (B, k + 1, vocab)
                for j in range(guess.size(1) + 1):
                    next_id = p[:, j].argmax(dim=-1).masked_fill(done, c.pad_id)  # (B,)
                    tokens = torch.cat([tokens, next_id[:, None]], dim=1)
                    probs.append(p[:, j])
                    done |= next_id == eos_id
                    if done.all() or j == guess.size(1) or not torch.equal(next_id, guess[:, j]):
                        break
                # every guess held (or none was made): guess all the rest; else twice as many as held
                guesses = max_new_tokens if j == guess.size(1) else 2 * max(j, 2)
            steps = [last.target_prefix(t + 1) for t in range(len(probs))]
            return DecodeResult(tokens=tokens, steps=steps, probs=probs)

    # -- proof against torch -----------------------------------------------------------------------

    @torch.no_grad()
    def load_torch_stack(self, ref: nn.Transformer) -> None:
        """Copy the encoder/decoder weights of ``torch.nn.Transformer(d_model, nhead, N, N, d_ff,
        dropout=0, batch_first=True)`` (post-norm, ReLU) into this model's stack.

        Embeddings and the output projection are not part of nn.Transformer and stay as they are.
        """
        c = self.config
        self._need_decoder()
        if len(ref.encoder.layers) != c.num_layers or len(ref.decoder.layers) != c.num_layers:
            raise ValueError("reference has a different number of layers")
        if ref.d_model != c.d_model or ref.nhead != c.num_heads:
            raise ValueError(
                f"reference has d_model={ref.d_model}, nhead={ref.nhead}; ours {c.d_model}, {c.num_heads}"
            )

        def attention(ours, theirs: nn.MultiheadAttention) -> None:
            # torch stacks W_Q, W_K, W_V as one (3·d_model, d_model) in_proj matrix
            for ours_linear, w, b in zip(
                (ours.w_q, ours.w_k, ours.w_v),
                theirs.in_proj_weight.chunk(3),
                theirs.in_proj_bias.chunk(3),
                strict=True,
            ):
                ours_linear.weight.copy_(w)
                ours_linear.bias.copy_(b)
            ours.w_o.weight.copy_(theirs.out_proj.weight)
            ours.w_o.bias.copy_(theirs.out_proj.bias)

        def copy(dst: nn.Module, src: nn.Module) -> None:
            dst.load_state_dict(src.state_dict())

        for ours, theirs in zip(self.encoder.layers, ref.encoder.layers, strict=True):
            attention(ours.self_attn, theirs.self_attn)
            copy(ours.ffn.linear1, theirs.linear1)
            copy(ours.ffn.linear2, theirs.linear2)
            copy(ours.sublayer1.norm, theirs.norm1)
            copy(ours.sublayer2.norm, theirs.norm2)
        for ours, theirs in zip(self.decoder.layers, ref.decoder.layers, strict=True):
            attention(ours.self_attn, theirs.self_attn)
            attention(ours.cross_attn, theirs.multihead_attn)
            copy(ours.ffn.linear1, theirs.linear1)
            copy(ours.ffn.linear2, theirs.linear2)
            copy(ours.sublayer1.norm, theirs.norm1)
            copy(ours.sublayer2.norm, theirs.norm2)
            copy(ours.sublayer3.norm, theirs.norm3)
        copy(self.encoder.norm, ref.encoder.norm)
        copy(self.decoder.norm, ref.decoder.norm)


def _guess(tokens: torch.Tensor, k: int) -> torch.Tensor:
    """(B, k) guessed next tokens for greedy decoding's runs: each one what followed the latest
    earlier occurrence of the token before it (a repeated pattern goes on), else that token again
    (an untrained model's favourite output). A wrong guess costs one position of compute."""
    rows = []
    for seq in tokens.tolist():
        for _ in range(k):
            last = seq[-1]
            i = next((i for i in range(len(seq) - 2, 0, -1) if seq[i] == last), None)
            seq.append(seq[i + 1] if i is not None else last)
        rows.append(seq[len(seq) - k :] if k else [])
    return torch.tensor(rows, dtype=tokens.dtype, device=tokens.device).reshape(tokens.size(0), k)


class _eval_mode:
    """Context manager: eval mode inside, the previous mode restored after.

    Switching walks every submodule, which costs as much as a small forward pass: do it only when
    the model is actually training.
    """

    def __init__(self, module: nn.Module) -> None:
        self.module = module

    def __enter__(self):
        self.was_training = self.module.training
        if self.was_training:
            self.module.eval()

    def __exit__(self, *exc):
        if self.was_training:
            self.module.train()
