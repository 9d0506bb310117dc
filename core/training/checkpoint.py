"""Save and load a trained model with everything needed to use it, and refuse anything else.

A checkpoint is a plain dict that ``torch.load(path, weights_only=True)`` can read (no pickled code):

    {"format": "glassbox-checkpoint", "version": 1, "task": "pinyin",
     "config": ModelConfig as a dict, "vocabs": {"src": [...], "tgt": [...]},
     "metrics": {...}, "state_dict": {name: tensor}}

The language model (task "lm", core/training/language.py) carries its byte-level BPE instead of
vocabularies (the ``task`` field says which of the two reads the model's text):

    {..., "task": "lm", "tokenizer": {"kind": "bpe", "byte_level": True, "merges": [[a, b], ...]}, ...}

Loading checks each part and raises ``CheckpointError`` (a ``ValueError``) saying what is wrong.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.tokenizers.bpe import BPETokenizer
from core.tokenizers.vocab import Vocab

FORMAT = "glassbox-checkpoint"
VERSION = 1
KEYS = ("format", "version", "task", "config", "metrics", "state_dict")  # and "vocabs" or "tokenizer"


class CheckpointError(ValueError):
    """The file is not a usable Glassbox checkpoint; the message says why."""


def _state(model: Transformer, half: bool) -> dict:
    return {k: (v.half() if half and v.is_floating_point() else v).detach().clone().contiguous()
            for k, v in model.state_dict().items()}


def _write(path, ckpt: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(ckpt, tmp)
    os.replace(tmp, path)  # atomic: a crash mid-write never leaves a half-written checkpoint behind


def save_checkpoint(path, model: Transformer, reader: tuple[Vocab, Vocab] | BPETokenizer, task: str,
                    metrics: dict, half: bool = False) -> None:
    """Write model + config + what reads its text + task + metrics: ``reader`` is (source, target)
    vocabularies for a seq2seq task, the byte-level BPE (its merges, in learned order) for task "lm".
    ``half`` stores float16 weights (half the size); they are turned back into float32 on load."""
    ckpt = {"format": FORMAT, "version": VERSION, "task": task, "config": model.config.to_dict()}
    if task == "lm":
        ckpt["tokenizer"] = {"kind": "bpe", "byte_level": reader.byte_level,
                             "merges": [[a, b] for a, b in reader.merges]}
    else:
        src, tgt = reader
        ckpt["vocabs"] = {"src": src.to_list(), "tgt": tgt.to_list()}
    ckpt.update(metrics=dict(metrics), state_dict=_state(model, half))
    _write(path, ckpt)


def _read(path: Path, keys: tuple[str, ...]) -> dict:
    """The checkpoint's dict, its format, version and ``keys`` (with what its task needs) checked."""
    if not path.is_file():
        raise CheckpointError(f"{path}: no such checkpoint file")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # the zip reader and the unpickler raise many different types
        raise CheckpointError(f"{path}: not a readable torch file (corrupted or truncated?): {e}") from e
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a Glassbox checkpoint (no format tag {FORMAT!r})")
    if ckpt.get("version") != VERSION:
        raise CheckpointError(f"{path}: checkpoint version {ckpt.get('version')!r} is not supported "
                              f"(this Glassbox reads version {VERSION})")
    if keys == KEYS:
        keys += ("tokenizer",) if ckpt.get("task") == "lm" else ("vocabs",)
    missing = [k for k in keys if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path}: checkpoint is missing {', '.join(missing)}")
    return ckpt


def _config(path: Path, ckpt: dict) -> ModelConfig:
    try:
        return ModelConfig(**ckpt["config"])
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: invalid model config: {e}") from e


def load_checkpoint(path) -> tuple[Transformer, tuple[Vocab, Vocab] | BPETokenizer, str, dict]:
    """-> (model in eval mode, what reads its text, task, metrics); CheckpointError if unusable. What reads
    the text is (src_vocab, tgt_vocab) for a seq2seq task, the BPE tokenizer for task "lm"."""
    path = Path(path)
    ckpt = _read(path, KEYS)
    config = _config(path, ckpt)
    task = str(ckpt["task"])
    reader = _tokenizer(path, ckpt, config) if task == "lm" else _vocabs(path, ckpt, config)
    return _model(path, ckpt, config), reader, task, _metrics(ckpt)


def _vocabs(path: Path, ckpt: dict, config: ModelConfig) -> tuple[Vocab, Vocab]:
    try:
        vocabs = Vocab.from_list(ckpt["vocabs"]["src"]), Vocab.from_list(ckpt["vocabs"]["tgt"])
    except (TypeError, KeyError, ValueError) as e:
        raise CheckpointError(f"{path}: invalid vocabularies: {e!r}") from e
    for name, vocab, size in (("source", vocabs[0], config.src_vocab_size),
                              ("target", vocabs[1], config.tgt_vocab_size)):
        if len(vocab) != size:
            raise CheckpointError(f"{path}: {name} vocabulary has {len(vocab)} tokens "
                                  f"but the config says {size}")
    return vocabs


def _tokenizer(path: Path, ckpt: dict, config: ModelConfig) -> BPETokenizer:
    if config.stack != "decoder":
        raise CheckpointError(f"{path}: a language model is one decoder stack (encoder=False)")
    spec = ckpt["tokenizer"]
    try:
        if not isinstance(spec, dict) or spec.get("kind") != "bpe":
            raise ValueError("not a BPE tokenizer")
        merges = [(str(a), str(b)) for a, b in spec["merges"]]
        tokenizer = BPETokenizer(merges, byte_level=bool(spec.get("byte_level", True)))
    except (TypeError, KeyError, ValueError) as e:
        raise CheckpointError(f"{path}: invalid tokenizer: {e!r}") from e
    if len(tokenizer) != config.tgt_vocab_size:
        raise CheckpointError(f"{path}: the tokenizer has {len(tokenizer)} tokens "
                              f"but the config says {config.tgt_vocab_size}")
    return tokenizer


def _metrics(ckpt: dict) -> dict:
    return ckpt["metrics"] if isinstance(ckpt["metrics"], dict) else {}


def _model(path: Path, ckpt: dict, config: ModelConfig) -> Transformer:
    """The model of ``config`` with the checkpoint's weights, each checked for name, shape and finiteness."""
    model = Transformer(config)
    expected = model.state_dict()
    state = ckpt["state_dict"]
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: state_dict is a {type(state).__name__}, not a dict")
    absent = [k for k in expected if k not in state]
    extra = [k for k in state if k not in expected]
    if absent or extra:
        raise CheckpointError(f"{path}: weights do not match the model: "
                              f"missing {_few(absent)}, unexpected {_few(extra)}")
    for k, want in expected.items():
        got = state[k]
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            raise CheckpointError(f"{path}: weight {k} has shape {shape}, "
                                  f"the config needs {tuple(want.shape)}")
        if not got.is_floating_point() or not torch.isfinite(got).all():
            raise CheckpointError(f"{path}: weight {k} is not finite floating point")
    model.load_state_dict({k: v.float() for k, v in state.items()})
    model.eval()
    return model


def _few(names: list[str], n: int = 3) -> str:
    if not names:
        return "none"
    return ", ".join(names[:n]) + (f" and {len(names) - n} more" if len(names) > n else "")
