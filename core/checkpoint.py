"""Save and load a trained model with everything needed to use it, and refuse anything else.

A checkpoint is a plain dict that ``torch.load(path, weights_only=True)`` can read (no pickled code):

    {"format": "glassbox-checkpoint", "version": 1, "task": "pinyin",
     "config": ModelConfig as a dict, "vocabs": {"src": [...], "tgt": [...]},
     "metrics": {...}, "state_dict": {name: tensor}}

A language model (task "lm", core/lm.py) carries its byte-level BPE instead of vocabularies:

    {..., "task": "lm", "tokenizer": {"kind": "bpe", "byte_level": True, "merges": [[a, b], ...]}, ...}

Loading checks each part and raises ``CheckpointError`` (a ``ValueError``) saying what is wrong,
so the app can show the message instead of a stack trace.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from core.config import ModelConfig
from core.model import Transformer
from core.tokenizers.bpe import BPETokenizer
from core.tokenizers.vocab import Vocab

FORMAT = "glassbox-checkpoint"
VERSION = 1
KEYS = ("format", "version", "task", "config", "vocabs", "metrics", "state_dict")
LM_KEYS = ("format", "version", "task", "config", "tokenizer", "metrics", "state_dict")


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


def save_checkpoint(path, model: Transformer, vocabs: tuple[Vocab, Vocab], task: str, metrics: dict,
                    half: bool = False) -> None:
    """Write model + config + vocabularies + metrics. ``half`` stores float16 weights (half the size);
    they are turned back into float32 on load."""
    src, tgt = vocabs
    _write(path, {"format": FORMAT, "version": VERSION, "task": task, "config": model.config.to_dict(),
                  "vocabs": {"src": src.to_list(), "tgt": tgt.to_list()}, "metrics": dict(metrics),
                  "state_dict": _state(model, half)})


def save_lm_checkpoint(path, model: Transformer, tokenizer: BPETokenizer, metrics: dict,
                       half: bool = False) -> None:
    """Write a language model (task "lm") with its byte-level BPE's merges, in learned order."""
    _write(path, {"format": FORMAT, "version": VERSION, "task": "lm", "config": model.config.to_dict(),
                  "tokenizer": {"kind": "bpe", "byte_level": tokenizer.byte_level,
                                "merges": [[a, b] for a, b in tokenizer.merges]},
                  "metrics": dict(metrics), "state_dict": _state(model, half)})


def _read(path: Path, keys: tuple[str, ...]) -> dict:
    """The checkpoint's dict, its format, version and ``keys`` checked."""
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
    if keys == KEYS and ckpt.get("task") == "lm":
        raise CheckpointError(f"{path}: a language model (task lm): load it with load_lm_checkpoint")
    if keys == LM_KEYS and ckpt.get("task") != "lm":
        raise CheckpointError(f"{path}: task {ckpt.get('task')!r}, not a language model (task lm)")
    missing = [k for k in keys if k not in ckpt]
    if missing:
        raise CheckpointError(f"{path}: checkpoint is missing {', '.join(missing)}")
    return ckpt


def task_of(path) -> str:
    """The task a checkpoint was trained on ("pinyin", "lm", ...), its format and version checked."""
    path = Path(path)
    return str(_read(path, ("task",)).get("task"))


def _config(path: Path, ckpt: dict) -> ModelConfig:
    try:
        return ModelConfig(**ckpt["config"])
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: invalid model config: {e}") from e


def load_checkpoint(path) -> tuple[Transformer, tuple[Vocab, Vocab], str, dict]:
    """-> (model in eval mode, (src_vocab, tgt_vocab), task, metrics); CheckpointError if unusable."""
    path = Path(path)
    ckpt = _read(path, KEYS)
    config = _config(path, ckpt)
    try:
        vocabs = Vocab.from_list(ckpt["vocabs"]["src"]), Vocab.from_list(ckpt["vocabs"]["tgt"])
    except (TypeError, KeyError, ValueError) as e:
        raise CheckpointError(f"{path}: invalid vocabularies: {e!r}") from e
    for name, vocab, size in (("source", vocabs[0], config.src_vocab_size),
                              ("target", vocabs[1], config.tgt_vocab_size)):
        if len(vocab) != size:
            raise CheckpointError(f"{path}: {name} vocabulary has {len(vocab)} tokens "
                                  f"but the config says {size}")
    return _model(path, ckpt, config), vocabs, str(ckpt["task"]), _metrics(ckpt)


def load_lm_checkpoint(path) -> tuple[Transformer, BPETokenizer, dict]:
    """-> (decoder-only model in eval mode, its BPE tokenizer, metrics); CheckpointError if unusable."""
    path = Path(path)
    ckpt = _read(path, LM_KEYS)
    config = _config(path, ckpt)
    if config.encoder or not config.decoder:
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
    return _model(path, ckpt, config), tokenizer, _metrics(ckpt)


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
