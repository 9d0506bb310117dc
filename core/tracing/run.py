"""One sentence through one pipeline, as every page reads it: each part computed the first time it is read.

    run = SentenceRun(pipe, "重庆很重要")
    run.src_tokens, run.truncated      # the tokenizer only
    run.source.src_embedded            # + the embedding and positions (random weights: only that table drawn)
    run.encoder[0].self_attn           # + the encoder's layers (random weights: the encoder alone)
    run.trace.decoder[0].cross_attn    # the whole run
    run.answer, run.decoding           # the model's answer; greedy decoding step by step

Which computation is cheapest for what is read is decided here, from the weights, never by a page.
The parts are computed by ``parts`` (:class:`DirectParts` by default: the ``core.tracing.pipeline``
functions; the app passes parts cached across sessions, ``ui.caches.cache``). A ``SentenceRun`` holds
nothing heavy and lives for one script run; the Masks page's padded batch of several sentences is
``core.tracing.batch.BatchRun``. Decisions: docs/decisions.md, core/tracing/run.py.
"""

from __future__ import annotations

import functools
from typing import Protocol

from core.model.config import ModelConfig
from core.model.trace import AttentionTrace, DecodeResult, ModelTrace, SourceTrace
from core.names import Weights
from core.tracing import pipeline
from core.tracing.pipeline import Pipeline, WholeRun


class Parts(Protocol):
    """How a :class:`SentenceRun` computes its parts (all of one sentence, target and token limit)."""

    def whole(self) -> WholeRun: ...  # core.tracing.pipeline.run_pipeline

    def source(self) -> SourceTrace | ModelTrace: ...  # core.tracing.pipeline.source_trace

    def encoder(self, norm: str | None) -> ModelTrace: ...  # core.tracing.pipeline.encoder_trace

    def greedy(self) -> DecodeResult: ...  # core.tracing.pipeline.greedy_sentence


class DirectParts:
    """Each part computed by its ``core.tracing.pipeline`` function, every time it is asked for."""

    def __init__(self, pipe: Pipeline, sentence: str, target: str = "", max_tokens: int = 64) -> None:
        self.pipe, self.sentence, self.target, self.max_tokens = pipe, sentence, target, max_tokens

    def whole(self) -> WholeRun:
        return pipeline.run_pipeline(self.pipe, self.sentence, self.target, max_tokens=self.max_tokens)

    def source(self) -> SourceTrace | ModelTrace:
        return pipeline.source_trace(self.pipe, self.sentence, max_tokens=self.max_tokens)

    def encoder(self, norm: str | None) -> ModelTrace:
        return pipeline.encoder_trace(self.pipe, self.sentence, max_tokens=self.max_tokens, norm=norm)

    def greedy(self) -> DecodeResult:
        return pipeline.greedy_sentence(self.pipe, self.sentence, max_tokens=self.max_tokens)


class SentenceRun:
    """The run of ``sentence`` (decoder input: ``target``, else as ``core.tracing.pipeline.run_pipeline``
    says)
    through ``pipe``, at most ``max_tokens`` source tokens; ``EmptyInput`` if it has no token.

    Every attribute a ``core.tracing.pipeline.WholeRun`` has is here with the same value; the parts that
    need the
    model are computed on first read and kept on this object.
    """

    def __init__(self, pipe: Pipeline, sentence: str, target: str = "", max_tokens: int = 64,
                 parts: Parts | None = None) -> None:
        self.pipe, self.sentence, self.target, self.max_tokens = pipe, sentence, target, max_tokens
        self.parts = parts or DirectParts(pipe, sentence, target, max_tokens)
        cut = pipeline.cut(pipe, sentence, max_tokens)  # EmptyInput here, before any page draws
        self.src_tokens: list[str] = cut.labels
        self.total_tokens: int = cut.total
        self.truncated: bool = cut.total > len(cut.labels)
        self._norms: dict[str, ModelTrace] = {}

    @property
    def config(self) -> ModelConfig:
        return self.pipe.config

    # -- parts, cheapest first ------------------------------------------------------------------------

    @functools.cached_property
    def source(self):
        """The encoder's input (``SourceTrace``: ids, token embeddings, positions, their sum); a
        decoder-only model's: its one stack's input (the whole run holds it as ``tgt_*``)."""
        if self.config.stack == "decoder":
            return self.parts.source()
        if "whole" in self.__dict__ or self.config.stack == "encoder":
            return self.whole.trace
        return self.parts.source()

    def encoder_trace(self, norm: str | None = None) -> ModelTrace:
        """A trace with (at least) the encoder's layers: the whole run's when there is one or the weights
        are whole anyway; for random weights the encoder alone (only its weights drawn, no decoder pass:
        the same numbers). ``norm``: the other residual arrangement ("pre"/"post"), same weights."""
        if norm is not None and norm != self.config.norm:
            return self._other_norm(norm)
        if "whole" in self.__dict__ or self.pipe.weights != Weights.RANDOM or self.config.stack == "encoder":
            return self.whole.trace  # (a decoder-only model: its whole run, with no encoder layer)
        return self._encoder_alone

    @functools.cached_property
    def _encoder_alone(self) -> ModelTrace:
        return self.parts.encoder(None)

    def _other_norm(self, norm: str) -> ModelTrace:
        if norm not in self._norms:
            self._norms[norm] = self.parts.encoder(norm)
        return self._norms[norm]

    @property
    def encoder(self) -> list:
        """The encoder's layers (``EncoderLayerTrace``), first to last."""
        return self.encoder_trace().encoder

    @functools.cached_property
    def whole(self) -> WholeRun:
        """The whole run: encoder, decoder, logits (``core.tracing.pipeline.WholeRun``)."""
        return self.parts.whole()

    @property
    def trace(self) -> ModelTrace:
        return self.whole.trace

    def trace_of(self, attn_kind: str) -> ModelTrace:
        """A trace holding the layers of ``attn_kind`` ("encoder", "decoder" or "cross")."""
        return self.encoder_trace() if attn_kind == "encoder" else self.trace

    def attention(self, attn_kind: str, layer: int) -> AttentionTrace:
        """One attention block: ``attn_kind`` of layer ``layer`` (from 0)."""
        if attn_kind == "encoder":
            return self.encoder[layer].self_attn
        block = self.trace.decoder[layer]
        return block.self_attn if attn_kind == "decoder" else block.cross_attn

    def model_of(self, attn_kind: str):
        """The model whose weights (W_Q, W_K, W_V, W_O) a view of ``attn_kind`` reads: for the encoder's,
        random weights draw only the encoder's side."""
        return self.pipe.encoder_model if attn_kind == "encoder" else self.pipe.model

    # -- the decoder's side -----------------------------------------------------------------------------

    @functools.cached_property
    def tgt_tokens(self) -> list[str]:
        """The decoder's input, [BOS] first: read without running the model when it is not the model's
        own output (a target given; random weights read the sentence); [] for an encoder only."""
        known = self._given_decoder_input
        return known if known is not None else self.whole.tgt_tokens

    @functools.cached_property
    def _given_decoder_input(self) -> list[str] | None:
        """``core.tracing.pipeline.decoder_tokens``: the decoder's input when it is not the model's own output
        (None when it is); read once, for ``tgt_tokens`` and ``decoder_reads``."""
        return pipeline.decoder_tokens(self.pipe, self.sentence, self.target, self.max_tokens)

    @property
    def predicted(self) -> list[str]:
        return self.whole.predicted

    @property
    def target_given(self) -> bool:
        """Whether the decoder reads a given target (not its own output, nor the sentence)."""
        return self.config.stack != "encoder" and bool(self.target.strip())

    @property
    def decoded(self) -> DecodeResult | None:
        """The greedy decoding that is the decoder's input (trained weights, no target); else None."""
        return self.whole.decoded

    @property
    def decoder_reads(self) -> str:
        """What the decoder reads, known without running it: "target" (a given target, teacher-forced),
        "sentence" (random weights read the sentence itself: their own output is noise), "own" (the
        model's own greedy output: ``decoded``) or "prompt" (a decoder-only model: its one stack reads
        the sentence, and ``decoding`` continues it); "" for an encoder only."""
        if self.config.stack == "encoder":
            return ""
        if self.config.stack == "decoder":
            return "prompt"
        if self.target_given:
            return "target"
        return "own" if self._given_decoder_input is None else "sentence"

    @functools.cached_property
    def decoding(self) -> DecodeResult | None:
        """Greedy decoding of the sentence, step by step: the run's own where it decodes (``decoded``),
        else made now (random weights read the sentence, a given target is teacher-forced; a
        decoder-only model continues the sentence); None for an encoder only."""
        if self.config.stack == "encoder":
            return None
        return self.whole.decoded if self.decoder_reads == "own" else self.parts.greedy()

    @property
    def answer(self) -> list[str]:
        return self.whole.answer

    @property
    def answer_kind(self) -> str:
        """``core.tracing.pipeline.WholeRun.answer_kind``, known without running the model."""
        return {"own": "greedy", "target": "teacher", "prompt": "next"}.get(self.decoder_reads, "sentence")
