"""The encoder-decoder Transformer of "Attention Is All You Need", small enough to trace every number.

    src ids ─ Embedding·sqrt(d_model) + PE ─ N × EncoderLayer ─ LayerNorm ─ memory ─┐
    tgt ids ─ Embedding·sqrt(d_model) + PE ─ N × DecoderLayer(memory) ─ LayerNorm ─ Linear ─ logits

Read top to bottom: the embedding (section 3.4, 3.5), the two stacks (3.1), the model (its three
stages: encode, decode, the generator), the trace every view reads, and greedy decoding.
``Transformer.trace`` returns a ``ModelTrace`` with every intermediate tensor; ``forward`` returns
only the logits (for training); both run the same code. Layers: core/model/layers.py; attention
and masks: core/model/attention.py, core/model/masks.py; a new model's weights: core/model/weight_init.py.

Config options whose defaults are the paper's model make the same classes a BERT encoder
(core/loading/bert.py), a decoder-only GPT-2 (``encoder=False``, core/loading/gpt2.py), or use rope or
alibi positions; each variant's options: docs/decisions.md, core/model/transformer.py.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable

import torch
from torch import nn

from core.model.config import ModelConfig
from core.model.edits import Edits
from core.model.layers import DecoderLayer, EncoderLayer, make_norm
from core.model.masks import causal_mask, decoder_mask, padding_mask
from core.model.modules import LayerNorm, Linear
from core.model.positional import ADDED_TO_EMBEDDINGS, sinusoidal_encoding
from core.model.trace import DecodeResult, ModelTrace
from core.model.weight_init import draw_glorot, embedding_table, materialize_on_cpu
from core.tokenizers.vocab import BOS_ID, EOS_ID


class Embedding(nn.Module):
    """Token lookup scaled by sqrt(d_model) plus the sinusoidal position (section 3.4, 3.5):

        x = E[token] · sqrt(d_model) + PE[pos]

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
        self.lookup = embedding_table(vocab_size, c.d_model)
        self.scale = math.sqrt(c.d_model) if c.scale_embeddings else None
        self.max_len = c.max_len
        self.positions = c.positions
        if c.positions == "learned":
            self.position = embedding_table(c.max_len, c.d_model)
        elif c.positions == "sinusoidal":
            pe = torch.empty(c.max_len, c.d_model)
            if pe.device.type != "meta":  # on "meta" (Transformer) shapes only: it fills the table itself
                pe = sinusoidal_encoding(c.max_len, c.d_model)
            self.register_buffer("pe", pe, persistent=False)
        self.token_type = embedding_table(c.type_vocab_size, c.d_model) if c.type_vocab_size else None
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
        self,
        ids: torch.Tensor,
        token_types: torch.Tensor | None = None,
        position_ids: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(B, L) ids -> (embedded (B, L, d_model) before dropout, lookup (B, L, d_model)).

        ``token_types`` (B, L) picks the token-type rows; None means type 0 (one sentence).
        ``position_ids`` (B, L) each token's position (left padding: the first real token is 0);
        None: 0, 1, ... in every row.
        """
        length = ids.size(1) if position_ids is None else max(ids.size(1), int(position_ids.max()) + 1)
        self._check_length(length)
        lookup = self.lookup(ids)  # (B, L, d_model)
        x = lookup if self.scale is None else lookup * self.scale
        if self.positions in ADDED_TO_EMBEDDINGS:
            rows = self.positional(length)  # (length, d_model)
            x = x + (rows if position_ids is None else rows[position_ids])  # (B, L, d_model)
        if self.token_type is not None:
            x = x + (self.token_type.weight[0] if token_types is None else self.token_type(token_types))
        return self.norm(x), lookup


def _final_norm(c: ModelConfig) -> nn.Module:
    return make_norm(c.d_model, c.layer_norm_eps, c.norm_kind) if c.final_norm else nn.Identity()


def _decoder_options(c: ModelConfig) -> dict:
    """DecoderLayer's keyword options for a Llama-style model; {} (the defaults) otherwise."""
    default = {f.name: f.default for f in dataclasses.fields(ModelConfig)}
    names = ("norm_kind", "num_kv_heads", "rope_theta", "rope_pairing", "qkv_bias", "out_bias", "ffn_bias")
    if all(getattr(c, n) == default[n] for n in names):  # the paper's, GPT-2's: built exactly as before
        return {}
    attention = dict(
        num_kv_heads=c.num_kv_heads,
        rope_base=c.rope_theta,
        rope_pairing=c.rope_pairing,
        qkv_bias=c.qkv_bias,
        out_bias=c.out_bias,
    )
    return dict(norm_kind=c.norm_kind, ffn_bias=c.ffn_bias, attention=attention)


class Encoder(nn.Module):
    """A stack of N identical layers (section 3.1), then a LayerNorm (``final_norm``):

        memory = LayerNorm(layer_N(… layer_1(x, src_mask) …, src_mask))

    BERT's encoder ends without the LayerNorm (``final_norm=False``).
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(
                c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm, c.activation, c.layer_norm_eps, c.positions
            )
            for _ in range(c.num_layers)
        )
        self.norm = _final_norm(c)

    def forward(self, x, src_mask, edits: Edits | None = None):
        """x (B, S, d_model), src_mask (B, 1, 1, S) -> (memory (B, S, d_model), a trace per layer).
        ``edits``: an edited run's replacements (core/model/edits.py)."""
        traces = []
        for i, layer in enumerate(self.layers):
            x, t = layer(x, src_mask, None if edits is None else edits.layer(i))
            traces.append(t)
        return self.norm(x), traces


class Decoder(nn.Module):
    """A stack of N identical layers reading the encoder's memory (section 3.1), then a LayerNorm:

        out = LayerNorm(layer_N(… layer_1(y, memory) …, memory))

    Every layer reads the same memory: the encoder's output after its last layer. A decoder-only
    model's layers read none (memory and src_mask are None).
    """

    def __init__(self, c: ModelConfig) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            DecoderLayer(
                c.d_model,
                c.num_heads,
                c.d_ff,
                c.dropout,
                c.norm,
                c.activation,
                c.layer_norm_eps,
                c.positions,
                cross=c.stack == "encoder_decoder",  # a decoder-only model has no memory to read
                **_decoder_options(c),
            )
            for _ in range(c.num_layers)
        )
        self.norm = _final_norm(c)

    def forward(self, x, memory, src_mask, tgt_mask, positions=None, past=None, edits: Edits | None = None):
        """x (B, T, d_model), memory (B, S, d_model) -> (out (B, T, d_model), a trace per layer).

        ``positions`` (B, T) each token's position, for RoPE (left padding); None: 0, 1, ...
        ``past``: per layer, its self-attention's (k, v) of the tokens before x (generation's cache).
        ``edits``: an edited run's replacements (core/model/edits.py)."""
        traces = []
        for i, layer in enumerate(self.layers):
            edit = None if edits is None else edits.layer(i)
            x, t = layer(x, memory, src_mask, tgt_mask, positions, None if past is None else past[i], edit)
            traces.append(t)
        return self.norm(x), traces


class Transformer(nn.Module):
    """Embeddings, encoder, decoder and the generator, a linear map to the target vocabulary:

        P(y_t | y_<t, x) = softmax(Decoder(Embed(y_<t), Encoder(Embed(x))) W + b)

    An encoder-only model (``config.decoder=False``) has None for the three target-side parts; a
    decoder-only one (``config.encoder=False``) for the two source-side parts, and reads
    P(y_t | y_<t) = softmax(Decoder(Embed(y_<t)) W + b).
    ``tie_embeddings``: W is the target embedding's matrix transposed, and there is no b (GPT-2).
    """

    def __init__(self, config: ModelConfig, *, _random_init: bool = True, _materialize: bool = True) -> None:
        super().__init__()
        self.config = config
        # An edited model (``with_edits``: heads switched off, core/interventions) applies these in every
        # run; None: the model as it is.
        self.edits: Edits | None = None
        c = config
        # The modules are built on the "meta" device (shapes only) and drawn once below
        # (core/model/weight_init.py): torch's default init followed by ours drew every weight twice.
        # (core.model.modules' Linear and LayerNorm, and embedding_table, skip torch's init on "meta".)
        with torch.device("meta"):
            # (registration order = the order _init_weights draws in: keep it, or seeds change weights)
            self.src_embed = Embedding(c.src_vocab_size, c) if c.stack != "decoder" else None
            self.tgt_embed = Embedding(c.tgt_vocab_size, c) if c.stack != "encoder" else None
            self.encoder = Encoder(c) if c.stack != "decoder" else None
            self.decoder = Decoder(c) if c.stack != "encoder" else None
            # d_model -> logits over the vocabulary
            tied = c.tie_embeddings
            bias = c.generator_bias and not tied
            self.generator = Linear(c.d_model, c.tgt_vocab_size, bias=bias) if c.stack != "encoder" else None
            if c.tie_embeddings:  # one tensor in two places (materialize_on_cpu keeps it shared)
                self.generator.weight = self.tgt_embed.lookup.weight
        if not _materialize:  # shapes only: sharing_weights hands it another model's tensors
            return
        self._fill_sinusoids([self.src_embed, self.tgt_embed])
        materialize_on_cpu(self)
        if _random_init:  # False only from from_state_dict, which fills every parameter next
            self._init_weights()

    # -- where the weights come from ---------------------------------------------------------------

    @torch.no_grad()
    def _init_weights(self, only: set[int] | None = None) -> None:
        """Glorot for every matrix, each tensor from a stream of its own seeded from ``config.seed``
        (``core.model.weight_init.draw_glorot``). ``only``: these tensors alone (by ``id``)."""
        draw_glorot(self, self.config.seed, only)

    def _fill_sinusoids(self, embeds: Iterable[Embedding | None]) -> None:
        """Give these embeddings' ``pe`` buffers still on "meta" the sinusoid table, one table for
        both sides, as the whole model has (the one the other side already holds, if drawn)."""
        sides = [e for e in (self.src_embed, self.tgt_embed) if getattr(e, "pe", None) is not None]
        chosen = {id(e) for e in embeds if e is not None}
        waiting = [e for e in sides if e.pe.is_meta and id(e) in chosen]
        if waiting:
            done = [e.pe for e in sides if not e.pe.is_meta]
            table = done[0] if done else sinusoidal_encoding(self.config.max_len, self.config.d_model)
            for embed in waiting:
                embed.pe = table

    @classmethod
    def from_state_dict(cls, config: ModelConfig, state_dict: dict) -> Transformer:
        """A model holding exactly these weights (strict: none missing, none left over).

        Skips the random initialisation the weights would overwrite.
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
        twin.edits = self.edits
        return twin.train(self.training)

    def with_edits(self, edits: Edits | None) -> Transformer:
        """This model's very weights (nothing copied) in a twin that applies ``edits`` in every run
        (core/model/edits.py: parts switched off, ``core.interventions.ablation``); None: none.
        The model itself is never changed: every session's thread may be reading it."""
        twin = self.sharing_weights()
        twin.edits = edits or None
        return twin

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
        :meth:`first_layers` view of it; all of it when none is given), in place, into memory from
        ``core.model.weight_init.SLABS``; what was drawn before stays as it is. Returns the model."""
        holder = nn.ModuleList(parts or [self])  # a holder: the modules stay the model's
        if not any(t.is_meta for t in [*holder.parameters(), *holder.buffers()]):
            return self
        self._fill_sinusoids(holder.modules())
        fresh = materialize_on_cpu(holder, pooled=True)
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
        view = Transformer(
            dataclasses.replace(self.config, num_layers=n), _random_init=False, _materialize=False
        )
        view.src_embed, view.tgt_embed, view.generator = self.src_embed, self.tgt_embed, self.generator
        view.edits = self.edits
        for mine, theirs in ((view.encoder, self.encoder), (view.decoder, self.decoder)):
            if theirs is not None:
                mine.layers = nn.ModuleList(theirs.layers[:n])
                mine.norm = theirs.norm
        return view.train(self.training)

    # -- the three stages --------------------------------------------------------------------------

    def _check_ids(self, ids: torch.Tensor, vocab_size: int, name: str) -> None:
        if ids.dim() != 2 or ids.dtype != torch.long:
            raise ValueError(
                f"{name} must be a LongTensor of shape (batch, length), got {tuple(ids.shape)} {ids.dtype}"
            )
        if ids.numel() and (ids.min() < 0 or ids.max() >= vocab_size):
            raise ValueError(f"{name} has ids outside [0, {vocab_size})")

    def _edits(self, edits: Edits | None) -> Edits | None:
        """The replacements of a run: this model's own (``with_edits``) and then the run's own."""
        if edits is None or self.edits is None:
            return edits if edits is not None else self.edits
        return self.edits.merged(edits)

    def encode(self, src_ids: torch.Tensor, edits: Edits | None = None):
        """-> (memory, src_mask, encoder traces, embedded, lookup). ``edits``: core/model/edits.py."""
        if self.encoder is None:
            raise ValueError("this model is a decoder only (config.encoder=False): it has no encoder")
        self._check_ids(src_ids, self.config.src_vocab_size, "src_ids")
        src_mask = padding_mask(src_ids, self.config.pad_id)  # (B, 1, 1, S)
        embedded, lookup = self.src_embed(src_ids)  # (B, S, d_model)
        memory, traces = self.encoder(self.src_embed.dropout(embedded), src_mask, self._edits(edits))
        return memory, src_mask, traces, embedded, lookup

    def _need_decoder(self) -> None:
        if self.decoder is None:
            raise ValueError("this model is an encoder only (config.decoder=False): it takes no tgt_ids")

    def decode(
        self,
        tgt_ids: torch.Tensor,
        memory: torch.Tensor | None,
        src_mask: torch.Tensor | None,
        attention_mask: torch.Tensor | None = None,
        past: list[tuple[torch.Tensor, torch.Tensor]] | None = None,
        edits: Edits | None = None,
    ):
        """-> (logits, decoder output, tgt_mask, decoder traces, embedded, lookup).

        memory and src_mask are None for a decoder-only model. ``attention_mask`` (B, T), True/1 =
        a real token, says where the padding is when pad_id cannot (GPT-2 has no pad token,
        ``pad_id=None``, and pads with ``<|endoftext|>``, a real token too); None: every position
        not equal to pad_id (``pad_id=None``: no position is padding). With it, a token's position
        is the number of real tokens before it, so a left-padded row (how a batch of prompts of
        different lengths is generated from) reads as the row alone.

        ``past`` (generation's key/value cache, :meth:`decode_next`): decode only the new tokens.
        ``edits``: an edited run's replacements (core/model/edits.py), besides the model's own.
        """
        if past is not None:
            return self.decode_next(tgt_ids, past, attention_mask, edits)
        self._need_decoder()
        self._check_ids(tgt_ids, self.config.tgt_vocab_size, "tgt_ids")
        # The causal mask, merged with the target's padding (core/model/masks.py): position t sees keys ≤ t.
        if attention_mask is None and self.config.pad_id is not None:
            tgt_mask = decoder_mask(tgt_ids, self.config.pad_id)  # (B, 1, T, T)
        else:
            real = torch.ones_like(tgt_ids, dtype=torch.bool)  # (B, T) True = a real token
            if attention_mask is not None:
                real = attention_mask.bool()
            tgt_mask = real[:, None, None, :] & causal_mask(tgt_ids.size(1), tgt_ids.device)  # (B, 1, T, T)
        position_ids = None  # (B, T) when given a mask: the count of real tokens before each one
        if attention_mask is not None:
            position_ids = (real.long().cumsum(-1) - 1).clamp(min=0)
        embedded, lookup = self.tgt_embed(tgt_ids, position_ids=position_ids)  # (B, T, d_model)
        x = self.tgt_embed.dropout(embedded)
        out, traces = self.decoder(x, memory, src_mask, tgt_mask, position_ids, None, self._edits(edits))
        return self.generator(out), out, tgt_mask, traces, embedded, lookup

    def decode_next(
        self,
        new_ids: torch.Tensor,
        past: list,
        attention_mask: torch.Tensor | None = None,
        edits: Edits | None = None,
    ):
        """A decoder-only model's next tokens with a key/value cache: ``new_ids`` (B, T_new) follow the
        L_past tokens whose keys and values ``past`` holds (per layer, its self-attention's (k, v),
        (B, h, L_past, d_k): an earlier call's ``traces[i].self_attn.k`` and ``.v``). -> as
        :meth:`decode`, for the new tokens only; each trace's k and v cover all L_past + T_new keys.

        The same numbers as :meth:`decode` on the whole sequence (its last T_new rows), at the cost of
        the new rows alone: generation no longer runs the whole prefix again at every step.
        ``attention_mask`` (B, L_past + T_new) as for :meth:`decode`; None: every token is real and
        positions run on from L_past (a prompt holding pad_id must pass its mask).
        """
        if self.encoder is not None:
            raise ValueError("a key/value cache is for a decoder-only model (config.encoder=False)")
        self._check_ids(new_ids, self.config.tgt_vocab_size, "tgt_ids")
        T_new, L_past = new_ids.size(1), past[0][0].size(2)
        total = L_past + T_new
        causal = causal_mask(total, new_ids.device)[..., L_past:, :]  # (1, 1, T_new, total): the new rows
        if attention_mask is None:
            real = torch.ones(new_ids.size(0), total, dtype=torch.bool, device=new_ids.device)
            position_ids = torch.arange(L_past, total, device=new_ids.device).expand(new_ids.size(0), -1)
        else:
            real = attention_mask.bool()  # (B, total)
            position_ids = (real.long().cumsum(-1) - 1).clamp(min=0)[:, L_past:]  # (B, T_new)
        tgt_mask = real[:, None, None, :] & causal  # (B, 1, T_new, total)
        embedded, lookup = self.tgt_embed(new_ids, position_ids=position_ids)  # (B, T_new, d_model)
        out, traces = self.decoder(
            self.tgt_embed.dropout(embedded), None, None, tgt_mask, position_ids, past, self._edits(edits)
        )
        return self.generator(out), out, tgt_mask, traces, embedded, lookup

    def forward(self, src_ids: torch.Tensor, tgt_ids: torch.Tensor | None = None) -> torch.Tensor:
        """(B, S), (B, T) ids -> logits (B, T, tgt_vocab_size). Decoder-only: forward(ids (B, T))."""
        self._need_decoder()
        if self.encoder is None:
            return self.decode(src_ids, None, None)[0]
        memory, src_mask, *_ = self.encode(src_ids)
        return self.decode(tgt_ids, memory, src_mask)[0]

    # -- tracing -----------------------------------------------------------------------------------

    @torch.no_grad()
    def trace(
        self,
        src_ids: torch.Tensor,
        tgt_ids: torch.Tensor | None = None,
        *,
        attention_mask: torch.Tensor | None = None,
        edits: Edits | None = None,
    ) -> ModelTrace:
        """Run the model and return every intermediate tensor (see core/model/trace.py).

        Traces are taken as in inference: dropout is off whatever mode the module is in.
        A decoder-only model takes its ids alone, ``trace(ids)``, and an optional ``attention_mask``
        (B, T), True/1 = a real token (see :meth:`decode`).
        ``edits``: replace some of the run's tensors (core/model/edits.py), besides the model's own
        ``with_edits``; the trace holds the edited run.
        """
        if self.encoder is None:
            if tgt_ids is not None:
                raise ValueError("this model is a decoder only (config.encoder=False): trace(ids) alone")
            with _eval_mode(self):
                return self._trace_decoder_only(src_ids, attention_mask, edits)
        if tgt_ids is not None:
            self._need_decoder()
        with _eval_mode(self):
            encoded = self.encode(src_ids, edits)
            return self._trace_from(src_ids, encoded, tgt_ids, edits)

    def _trace_decoder_only(
        self, ids: torch.Tensor, attention_mask: torch.Tensor | None, edits: Edits | None = None
    ) -> ModelTrace:
        decoded = self.decode(ids, None, None, attention_mask, edits=edits)
        return ModelTrace(
            src_ids=None,
            src_token_embedding=None,
            src_embedded=None,
            positional=self.tgt_embed.positional(ids.size(1)).detach(),
            src_mask=None,
            encoder=[],
            memory=None,
            **_target_fields(ids, decoded),
        )

    def _trace_from(self, src_ids, encoded, tgt_ids, edits: Edits | None = None) -> ModelTrace:
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
        decoded = self.decode(tgt_ids, memory, src_mask, edits=edits)
        return ModelTrace(**common, **_target_fields(tgt_ids, decoded))

    # -- greedy decoding ---------------------------------------------------------------------------

    @torch.no_grad()
    def greedy_decode(
        self, src_ids: torch.Tensor, max_new_tokens: int, bos_id: int = BOS_ID, eos_id: int = EOS_ID
    ) -> DecodeResult:
        """Generate by taking the most probable token at each step (the paper uses beam search):

            y_t = argmax_y P(y | y_<t, x)

        The encoder runs once. A sequence that has produced EOS is padded from then on; decoding
        stops when every sequence has. Learned positions stop at max_len tokens (no row beyond); the
        other schemes have no limit. Each step's trace is of the prefix that produced its token.

        The same tokens as running the decoder once per token, in fewer runs: each run also reads a
        guess of the next tokens (``_guess``: what followed the last token before, else the last
        token again), and since the decoder is causal, the prediction after a guessed token is right
        if that guess was. The guesses that match the model's own choices are kept; the first miss
        ends the run, its position's prediction is taken, and the next run starts from there. After a
        run whose guesses all held, all the tokens still to come are guessed (a longer run costs
        little more than a run of one position); after a miss, twice as many as held. An untrained
        model mostly repeats one token, so most of its answers take two runs. The steps' traces are
        views of the last run's (``target_prefix``).
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


def _target_fields(tgt_ids: torch.Tensor, decoded: tuple) -> dict:
    """The target side of a ModelTrace from :meth:`Transformer.decode`'s result."""
    logits, out, tgt_mask, traces, embedded, lookup = decoded
    return dict(
        tgt_ids=tgt_ids,
        tgt_token_embedding=lookup.detach(),
        tgt_embedded=embedded.detach(),
        tgt_mask=tgt_mask,
        decoder=traces,
        decoder_output=out.detach(),
        logits=logits.detach(),
    )


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
