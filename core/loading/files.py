"""Every file of a model folder, read through one :class:`FolderFiles`, and the weights in it.

A file is read only if it is a regular file, inside the models root the folder was found in (links
followed, never out of it) and no larger than the cap of its kind (``FILE_CAPS``), checked before a
byte of it is read; one that fails is a :class:`FolderFileError` saying why. Nothing in a folder is
executed: weights come from ``model.safetensors`` (core's own reader, core/loading/safetensors.py)
or from ``pytorch_model.bin`` through ``torch.load(weights_only=True)``, which unpickles tensors and
plain containers only. The family modules (gpt2.py, bert.py, llama.py) read their files through here.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch

from core.loading.safetensors import MAX_HEADER_BYTES, read_safetensors_file, safetensors_header
from core.model.transformer import Transformer
from core.tokenizers.protocol import Tokenizer


@dataclass(frozen=True)
class TokenizerSource:
    """Which tokenizer file(s) a tokenizer came from, and which that disagree with it were left unused."""

    used: str
    unused: str = ""


KB, MB, GB = 2**10, 2**20, 2**30
# The most bytes a file of each kind may hold: a larger one is refused before it is read. Real files
# are far smaller (a config.json: a few kB; GPT-2's vocab.json 1 MB; Llama 3's tokenizer.json 9 MB);
# the weights' cap is the caller's (the app's memory budget), this one only when none is given.
FILE_CAPS: Mapping[str, int] = {
    "config": 512 * KB,  # config.json
    "settings": 4 * MB,  # tokenizer_config.json, special_tokens_map.json (chat templates)
    "vocab": 32 * MB,  # vocab.json, merges.txt, vocab.txt
    "tokenizer": 64 * MB,  # tokenizer.json
    "index": 16 * MB,  # a sharded model's <weights>.index.json
    "header": MAX_HEADER_BYTES,  # a safetensors header (its length is read first)
    "ref": 1 * KB,  # the hub cache's refs/main: a commit hash
    "weights": 64 * GB,  # every weights file of a model together
}


# how a refusal names what the cap is for
_CAP_WORDS = {
    "config": "a config.json",
    "settings": "a tokenizer settings file",
    "vocab": "a vocabulary file",
    "tokenizer": "a tokenizer.json",
    "index": "a weights index",
    "header": "a safetensors header",
    "ref": "a hub reference",
    "weights": "a model's weights",
}


class FolderFileError(ValueError):
    """A file of a model folder that is not read; ``str()`` says why (it names the file, not where
    the folder is), ``reason``: "missing", "outside", "not_a_file", "too_big" or "unreadable"."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def _size_text(n: int) -> str:
    for unit, size in (("GB", GB), ("MB", MB), ("kB", KB)):
        if n >= size:
            return f"{n / size:,.1f} {unit}".replace(".0 ", " ")
    return f"{n:,} bytes"


@dataclass(frozen=True)
class FolderFiles:
    """The files of one model folder, read only through here.

    ``root``: the models root the folder was found in; every file, links followed, must stay inside
    it (the hub cache's snapshot files link to its ``blobs/``: inside). None: no such rule (a folder
    named by a program, not found by the app). ``caps``: FILE_CAPS, with the caller's own for some kinds.
    """

    folder: Path
    root: Path | None = None
    caps: Mapping[str, int] = field(default_factory=lambda: dict(FILE_CAPS))

    def __post_init__(self) -> None:
        object.__setattr__(self, "folder", Path(self.folder))
        object.__setattr__(self, "caps", {**FILE_CAPS, **self.caps})

    def _real(self, name: str) -> Path:
        """The file ``name`` with its links resolved, checked to stay inside the root."""
        try:
            real = (self.folder / name).resolve(strict=True)
        except FileNotFoundError:
            raise FolderFileError("missing", f"{self.folder.name} has no {name}") from None
        except (OSError, RuntimeError) as e:  # a loop, a permission
            raise FolderFileError("unreadable", f"{name} cannot be opened ({type(e).__name__})") from None
        if self.root is not None:
            try:
                root = Path(self.root).resolve()
            except (OSError, RuntimeError) as e:
                raise FolderFileError("unreadable", f"the models folder cannot be opened ({e})") from None
            if not real.is_relative_to(root):
                raise FolderFileError(
                    "outside", f"{name} is a link to a file outside the models folder: not read"
                )
        return real

    def has(self, name: str) -> bool:
        """Is there a regular file ``name``? A link out of the root is no absence: it raises
        :class:`FolderFileError` ("outside"), so a folder is refused rather than read otherwise."""
        try:
            return self._real(name).is_file()
        except FolderFileError as e:
            if e.reason == "outside":
                raise
            return False
        except OSError:
            return False

    def size(self, name: str) -> int:
        """The bytes of ``name``, checked as :meth:`open` checks it (but for the cap)."""
        with self._open(name) as f:
            return os.fstat(f.fileno()).st_size

    def _open(self, name: str):
        real = self._real(name)
        try:
            # O_NONBLOCK: a FIFO named like a model's file must not hang the page waiting for a writer
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as e:
            raise FolderFileError("unreadable", f"{name} cannot be opened ({type(e).__name__})") from None
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            raise FolderFileError("not_a_file", f"{name} is not a regular file: not read")
        return os.fdopen(fd, "rb")

    def check_size(self, name: str, size: int, kind: str) -> None:
        cap = self.caps[kind]
        if size > cap:
            raise FolderFileError(
                "too_big",
                f"{name} is {_size_text(size)}, more than the {_size_text(cap)} {_CAP_WORDS[kind]} may"
                " have here: not read",
            )

    def open(self, name: str, kind: str):
        """``name`` open for reading (binary), after every check: a regular file, inside the root, no
        larger than the cap of ``kind`` (a key of FILE_CAPS). Else :class:`FolderFileError`."""
        f = self._open(name)
        try:
            self.check_size(name, os.fstat(f.fileno()).st_size, kind)
        except FolderFileError:
            f.close()
            raise
        return f

    def read_bytes(self, name: str, kind: str) -> bytes:
        with self.open(name, kind) as f:
            data = f.read(self.caps[kind] + 1)  # the file may have grown since it was measured
        self.check_size(name, len(data), kind)
        return data

    def read_text(self, name: str, kind: str) -> str:
        try:
            return self.read_bytes(name, kind).decode("utf-8")
        except UnicodeDecodeError:
            raise FolderFileError("unreadable", f"{name} is not UTF-8 text") from None

    def read_json(self, name: str, kind: str):
        try:
            return json.loads(self.read_text(name, kind))
        except (ValueError, RecursionError) as e:
            if isinstance(e, FolderFileError):
                raise
            raise FolderFileError("unreadable", f"{name} is not JSON") from None

    def safetensors_header(self, name: str) -> dict:
        """The header of the safetensors file ``name`` (the header's cap only: nothing else is read)."""
        with self._open(name) as f:
            try:
                return safetensors_header(f, name, os.fstat(f.fileno()).st_size)[0]
            except ValueError as e:
                raise FolderFileError("unreadable", str(e)) from None


def folder_files(folder) -> FolderFiles:
    """``folder`` as a :class:`FolderFiles`: a path is read with no root and the default caps."""
    return folder if isinstance(folder, FolderFiles) else FolderFiles(Path(folder))


def _read_pickled(f, name: str, size: int) -> dict[str, torch.Tensor]:
    # weights_only: tensors and plain containers only, never an object that runs code
    return torch.load(f, map_location="cpu", weights_only=True)


Progress = Callable[[float, str], None]  # (fraction done, what is being done), for a progress bar
# what a family's loader gives: our model, its tokenizer (None: not read by core), the weights file
# and where the tokenizer came from (None: not read by core)
Loaded = tuple[Transformer, Tokenizer | None, str, TokenizerSource | None]


def no_progress(fraction: float, what: str) -> None:
    pass


def read_weights(folder, progress: Progress = no_progress) -> tuple[dict[str, torch.Tensor], str]:
    """The folder's tensors and the file they came from; safetensors first (no pickle at all).

    ``folder``: a path or a :class:`FolderFiles`. A big model is saved in shards: ``<name>.index.json``
    maps every tensor to its shard's file. Every weights file together must fit the cap of "weights",
    checked before any is read. ``progress`` hears of each file before it is read (fractions 0 to 1).
    """
    files = folder_files(folder)
    for name, read in (("model.safetensors", read_safetensors_file), ("pytorch_model.bin", _read_pickled)):
        index = f"{name}.index.json"
        if files.has(name):
            shards = [name]
        elif files.has(index):
            weight_map = files.read_json(index, "index").get("weight_map")
            if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
                raise FolderFileError("unreadable", f"{index} has no weight_map of file names")
            shards = sorted({Path(shard).name for shard in weight_map.values()})  # .name: never a path out
        else:
            continue
        files.check_size(" + ".join(shards[:2]) + (" + ..." if len(shards) > 2 else ""),
                         sum(files.size(shard) for shard in shards), "weights")
        weights = {}
        for n, shard in enumerate(shards):
            progress(n / len(shards), shard)
            with files.open(shard, "weights") as f:
                weights.update(read(f, shard, os.fstat(f.fileno()).st_size))
        return weights, name if len(shards) == 1 and shards[0] == name else index
    raise FileNotFoundError(
        f"{files.folder.name} has neither model.safetensors nor pytorch_model.bin (nor their shards)"
    )


def stage(progress: Progress, start: float, end: float) -> Progress:
    """``progress`` for one stage of a load: its fractions mapped to [start, end]."""
    return lambda fraction, what: progress(start + (end - start) * fraction, what)



def tokenizer_json_model(files: FolderFiles, model_type: str) -> tuple[dict, dict]:
    """tokenizer.json's model (its type checked: "BPE", "WordPiece") and the file as a whole."""
    data = files.read_json("tokenizer.json", "tokenizer")
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type") != model_type:
        found = model.get("type") if isinstance(model, dict) else None
        raise ValueError(
            f"tokenizer.json holds a {str(found)[:20]} model, not the {model_type} this family uses"
        )
    vocab = model.get("vocab")
    if not isinstance(vocab, dict) or not all(type(i) is int for i in vocab.values()):
        raise ValueError("tokenizer.json's vocabulary is not a map of tokens to ids")
    return model, data
