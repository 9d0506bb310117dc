"""A padded batch of sentences through the model: what the masks page shows.

    batch = run_batch(pipe, ["注意力就是一切", "你好", "Hi there"])
    batch.src_ids        # (B, S) padded with config.pad_id
    batch.src_padding    # (B, 1, 1, S) True = a real key        (core.model.masks.padding_mask)
    batch.causal         # (1, 1, T, T) True = key t' ≤ query t  (core.model.masks.causal_mask)
    batch.trace.tgt_mask # (B, 1, T, T) padding ∧ causal, broadcast to [B, h, q, k] by attention

Short sentences are filled with [PAD] and the masks keep the fillers from mattering, so each real row
computes exactly what the sentence alone computes (tests/core/tracing/test_batch.py checks it). The
decoder's input follows ``core.tracing.pipeline.run_pipeline`` (given no target), so the sidebar
sentence's row is the run every other page shows; that input for each kind of model (random, trained,
encoder-only, decoder-only): docs/decisions.md, core/tracing/batch.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from core.model.masks import causal_mask, padding_mask
from core.model.trace import ModelTrace
from core.names import Weights
from core.tokenizers.vocab import BOS, BOS_ID
from core.tracing.pipeline import EmptyInput, Pipeline, cut, greedy, source_limit, source_tokens


@dataclass(frozen=True)
class BatchRun:
    src_tokens: list[list[str]]  # per sentence, its source labels (no padding)
    tgt_tokens: list[list[str]]  # per sentence, its decoder-input labels ([BOS] first; one stack: src_tokens)
    src_ids: torch.Tensor  # (B, S) padded with pad_id
    tgt_ids: torch.Tensor  # (B, T) padded with pad_id
    src_padding: torch.Tensor  # (B, 1, 1, S) bool, True = real token (may be attended to)
    tgt_padding: torch.Tensor  # (B, 1, 1, T) bool
    causal: torch.Tensor  # (1, 1, T, T) bool, lower triangle
    trace: ModelTrace  # of the whole batch
    truncated: list[bool]  # per sentence: cut at max_tokens
    pad_id: int
    layers: int | None = None  # the trace of the first ``layers`` layers only (run_batch); None: all

    @property
    def src_lengths(self) -> list[int]:
        return [len(t) for t in self.src_tokens]

    @property
    def tgt_lengths(self) -> list[int]:
        return [len(t) for t in self.tgt_tokens]


def _pad(rows: list[list[int]], pad_id: int) -> torch.Tensor:
    width = max(len(r) for r in rows)
    return torch.tensor([r + [pad_id] * (width - len(r)) for r in rows], dtype=torch.long)  # (B, L)


def decoder_input(
    pipe: Pipeline, src_labels: list[str], src_ids: list[int], limit: int
) -> tuple[list[str], list[int]]:
    """The decoder's input for one sentence, as ``run_pipeline`` builds it when no target is given."""
    if pipe.weights == Weights.RANDOM:
        return [BOS] + src_labels[: limit - 1], [BOS_ID] + src_ids[: limit - 1]
    ids = greedy(pipe, src_ids, limit).steps[-1].tgt_ids[0].tolist()  # the last step's prefix
    return [pipe.tgt_labels[i] for i in ids], ids


def run_batch(pipe: Pipeline, sentences: list[str], max_tokens: int = 32,
              layers: int | None = None) -> BatchRun:
    """Tokenize each sentence with ``pipe.src_encode``, pad them into one batch and trace it.

    ``layers=n``: trace the model's first n layers only (``Transformer.first_layers``; random weights
    draw only those): the trace's encoder self-attention of those layers and the decoder's masked
    self-attention of layer 1 are the whole model's, number for number; its cross-attention, later
    decoder layers and outputs are not (they read an n-layer encoder). ``BatchRun.layers`` says so.
    A decoder-only model's layers 1…n are its own (they read nothing past them).

    Raises ValueError if there is no sentence, EmptyInput (a ValueError; ``index`` says which) if one
    has no token (the page drops empty ones first).
    """
    if not sentences:
        raise ValueError("run_batch needs at least one sentence")
    if layers is not None and layers >= pipe.config.num_layers:
        layers = None  # every layer: the whole model
    if pipe.config.stack == "encoder":
        return _encoder_batch(pipe, sentences, max_tokens, layers)
    if pipe.config.stack == "decoder":
        return _decoder_only_batch(pipe, sentences, max_tokens, layers)
    pad_id = pipe.config.pad_id
    limit = source_limit(pipe, max_tokens)
    src_labels, src_rows, tgt_labels, tgt_rows, truncated = [], [], [], [], []
    for n, sentence in enumerate(sentences):
        labels, ids = source_tokens(pipe, sentence)
        if not ids:
            raise EmptyInput(f"sentence {n + 1} has no tokens", index=n)
        truncated.append(len(ids) > limit)
        labels, ids = list(labels[:limit]), list(ids[:limit])
        t_labels, t_ids = decoder_input(pipe, labels, ids, limit)
        src_labels.append(labels)
        src_rows.append(ids)
        tgt_labels.append(list(t_labels))
        tgt_rows.append(list(t_ids))
    src = _pad(src_rows, pad_id)  # (B, S)
    tgt = _pad(tgt_rows, pad_id)  # (B, T)
    return BatchRun(
        src_tokens=src_labels,
        tgt_tokens=tgt_labels,
        src_ids=src,
        tgt_ids=tgt,
        src_padding=padding_mask(src, pad_id),  # (B, 1, 1, S)
        tgt_padding=padding_mask(tgt, pad_id),  # (B, 1, 1, T)
        causal=causal_mask(tgt.size(1)),  # (1, 1, T, T)
        trace=_model(pipe, layers).trace(src, tgt),
        truncated=truncated,
        pad_id=pad_id,
        layers=layers,
    )


def _model(pipe: Pipeline, layers: int | None):
    return pipe.model if layers is None else pipe.first_layers_model(layers)


def _encoder_batch(pipe: Pipeline, sentences: list[str], max_tokens: int, layers: int | None) -> BatchRun:
    """The padded batch through an encoder-only model: source side only, an empty decoder input."""
    pad_id = pipe.config.pad_id
    limit = min(max_tokens, pipe.config.max_len)
    labels, rows, truncated = [], [], []
    for n, sentence in enumerate(sentences):
        tokens, ids = source_tokens(pipe, sentence)
        if len(ids) <= 2:  # nothing between [CLS] and [SEP]
            raise EmptyInput(f"sentence {n + 1} has no tokens", index=n)
        truncated.append(len(ids) > limit)
        if len(ids) > limit:  # keep the closing [SEP]
            tokens, ids = tokens[: limit - 1] + tokens[-1:], ids[: limit - 1] + ids[-1:]
        labels.append(list(tokens))
        rows.append(list(ids))
    src = _pad(rows, pad_id)  # (B, S)
    empty = torch.zeros((src.size(0), 0), dtype=torch.long)  # (B, 0): no decoder input
    return BatchRun(
        src_tokens=labels,
        tgt_tokens=[[] for _ in rows],
        src_ids=src,
        tgt_ids=empty,
        src_padding=padding_mask(src, pad_id),  # (B, 1, 1, S)
        tgt_padding=padding_mask(empty, pad_id),  # (B, 1, 1, 0)
        causal=causal_mask(0),  # (1, 1, 0, 0)
        trace=_model(pipe, layers).trace(src),
        truncated=truncated,
        pad_id=pad_id,
        layers=layers,
    )


def filler_id(pipe: Pipeline, rows: list[list[int]]) -> int:
    """The id a decoder-only batch pads with: the pad token if the model has one, else its
    end-of-text token (GPT-2 has no pad token), else 0; if that id is also a real token of the batch
    (someone typed <|endoftext|>), the smallest id that is not. The attention mask, not the id, says
    where the padding is; a filler no real token uses keeps ``ids != pad_id`` true of the real cells
    too, as in the encoder-decoder's batch (whose [PAD] is never a real token)."""
    used = {i for row in rows for i in row}
    for candidate in (pipe.config.pad_id, pipe.eos_id, 0):
        if candidate is not None and candidate not in used:
            return candidate
    return min(set(range(len(used) + 1)) - used)


def _decoder_only_batch(pipe: Pipeline, sentences: list[str], max_tokens: int,
                        layers: int | None) -> BatchRun:
    """The padded batch through a decoder-only model's one causal stack, padded on the RIGHT:

        ids            (B, L)  each sentence, then the filler id up to the longest
        attention_mask (B, L)  True = a real token (the filler is a vocabulary token: GPT-2's EOS)
        tgt_mask       (B, 1, L, L) = padding ∧ causal

    Why the right: a real token then has only real tokens before it, so causal ∧ padding lets it see
    exactly what it sees alone, at the same positions 0…n−1 (learned rows, RoPE angles); every query
    row keeps at least one key (no row all masked); and the picture is the encoder-decoder's
    (padding at the end). Generating from a batch pads on the left instead (the next token follows
    the last column); this page generates nothing from the batch.
    """
    labels, rows, truncated = [], [], []
    for n, sentence in enumerate(sentences):
        try:
            kept = cut(pipe, sentence, max_tokens)  # as run_pipeline reads it
        except EmptyInput as empty:
            raise EmptyInput(f"sentence {n + 1} has no tokens", index=n) from empty
        truncated.append(kept.total > len(kept.ids))
        labels.append(list(kept.labels))
        rows.append(list(kept.ids))
    pad_id = filler_id(pipe, rows)
    ids = _pad(rows, pad_id)  # (B, L)
    lengths = torch.tensor([len(r) for r in rows])  # (B,)
    real = torch.arange(ids.size(1))[None, :] < lengths[:, None]  # (B, L) True = a real token
    padding = real[:, None, None, :]  # (B, 1, 1, L), as core.model.masks.padding_mask shapes it
    return BatchRun(
        src_tokens=labels,
        tgt_tokens=labels,
        src_ids=ids,
        tgt_ids=ids,
        src_padding=padding,
        tgt_padding=padding,
        causal=causal_mask(ids.size(1)),  # (1, 1, L, L)
        trace=_model(pipe, layers).trace(ids, attention_mask=real),
        truncated=truncated,
        pad_id=pad_id,
        layers=layers,
    )
