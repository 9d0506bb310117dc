"""Real text for a small language model: Debian's fortune files, English and Chinese (issue 30, part 1).

A fortune file is a list of entries, each ended by a line holding only ``%``. The Chinese files of
``fortunes-zh`` colour their titles and authors with terminal escapes (ESC [32m … ESC [m), which are
not text and are removed. Each entry goes to train, validation or test by the SHA-256 of its text, so
the split never depends on the order of the files or on what else was read, and an entry that two
files share lands in the same part.

    entries = read_fortunes(Path("/usr/share/games/fortunes/tang300"))
    parts = split_entries(entries)          # {"train": [...], "valid": [...], "test": [...]}
    stream = token_stream(tokenizer, parts["train"])          # [EOS] after every entry
    x, y = windows(stream, length=128, batch=32, generator=g)  # (32, 128) inputs, next-token targets

The files stay in the Debian packages (``fortunes``: BSD-style; ``fortunes-zh``: GPL-3.0+): nothing
here copies them into the repository.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import torch

from core.vocab import EOS_ID

FORTUNES = Path("/usr/share/games/fortunes")
# ESC [ … letter: a terminal's colour or cursor command (SGR and the like), never text
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SPLITS = (("train", 90), ("valid", 5), ("test", 5))  # percent of the entries, by hash


def clean(entry: str) -> str:
    """One entry as text: terminal escapes and other control characters removed (newlines and tabs
    kept), trailing spaces dropped from each line, blank lines at either end removed."""
    text = _ESCAPE.sub("", entry)
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def read_fortunes(path: Path) -> list[str]:
    """The cleaned, non-empty entries of one fortune file (UTF-8; entries end at a line "%")."""
    raw = Path(path).read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    entries = re.split(r"^%[ \t]*$", raw, flags=re.MULTILINE)
    return [text for text in (clean(e) for e in entries) if text.strip()]


def part_of(entry: str) -> str:
    """ "train", "valid" or "test": the SHA-256 of the entry's UTF-8 bytes, modulo 100, against SPLITS."""
    bucket = int.from_bytes(hashlib.sha256(entry.encode("utf-8")).digest()[:8], "big") % 100
    for name, percent in SPLITS:
        if bucket < percent:
            return name
        bucket -= percent
    raise AssertionError("SPLITS must add up to 100")


def split_entries(entries: list[str]) -> dict[str, list[str]]:
    """Each distinct entry in the part its hash names, in the order first seen (a duplicate once)."""
    parts: dict[str, list[str]] = {name: [] for name, _ in SPLITS}
    for entry in dict.fromkeys(entries):
        parts[part_of(entry)].append(entry)
    return parts


def token_stream(tokenizer, entries: Sequence[str]) -> torch.Tensor:
    """(N,) one long sequence of ids: each entry's tokens (``tokenizer.encode(text, allow_special=False)``:
    a "[EOS]" typed in a quotation stays text), then [EOS], so the model learns where an entry ends
    and that what follows does not continue it."""
    ids: list[int] = []
    for entry in entries:
        ids += tokenizer.encode(entry, allow_special=False)
        ids.append(EOS_ID)
    return torch.tensor(ids, dtype=torch.long)


def windows(stream: torch.Tensor, length: int, batch: int, generator: torch.Generator):
    """``batch`` windows of ``length`` + 1 consecutive ids at random starts -> (inputs (B, length),
    targets (B, length)): target t is the token after input t (the language model's next token)."""
    if stream.numel() <= length:
        raise ValueError(f"a stream of {stream.numel()} ids has no window of {length} + 1")
    starts = torch.randint(0, stream.numel() - length, (batch,), generator=generator)  # (B,)
    rows = stream[starts[:, None] + torch.arange(length + 1)]  # (B, length + 1)
    return rows[:, :-1], rows[:, 1:]
