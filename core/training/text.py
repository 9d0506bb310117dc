"""Real text for a small language model: Debian's fortune files, English and Chinese.

A fortune file is a list of entries, each ended by a line holding only ``%``. The Chinese files of
``fortunes-zh`` colour their titles and authors with terminal escapes (ESC [32m … ESC [m), which are
not text and are removed. Each entry goes to train, valid or test by the SHA-256 of its text
(:func:`core.training.splits.split_of`), so an entry that two files share lands in the same part.

    entries = read_fortunes(Path("/usr/share/games/fortunes/tang300"))
    parts = split_entries(entries)          # {"train": [...], "valid": [...], "test": [...]}
    stream = token_stream(tokenizer, parts["train"])          # [EOS] after every entry
    rows = window_rows(stream, length=128, batch=32, generator=g)  # (32, 129): inputs and next tokens

The files stay in the Debian packages (``fortunes``: BSD-style; ``fortunes-zh``: GPL-3.0+): nothing
here copies them into the repository.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import torch

from core.tokenizers.vocab import EOS_ID
from core.training.splits import SPLIT_NAMES, split_of

FORTUNES = Path("/usr/share/games/fortunes")
# ESC [ … letter: a terminal's colour or cursor command (SGR and the like), never text
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def clean(entry: str) -> str:
    """One entry as text: terminal escapes and other control characters removed (newlines and tabs
    kept), no-break spaces made spaces, trailing spaces dropped from each line, blank lines at either
    end removed."""
    text = _ESCAPE.sub("", entry).replace("\xa0", " ")  # no-break spaces indent some entries
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch) != "Cc")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def read_fortunes(path: Path) -> list[str]:
    """The cleaned, non-empty entries of one fortune file (UTF-8; entries end at a line "%")."""
    raw = Path(path).read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
    entries = re.split(r"^%[ \t]*$", raw, flags=re.MULTILINE)
    return [text for text in (clean(e) for e in entries) if text.strip()]


def split_entries(entries: list[str]) -> dict[str, list[str]]:
    """Each distinct entry in the part its hash names, in the order first seen (a duplicate once)."""
    parts: dict[str, list[str]] = {name: [] for name in SPLIT_NAMES}
    for entry in dict.fromkeys(entries):
        parts[split_of(entry)].append(entry)
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


def window_rows(stream: torch.Tensor, length: int, batch: int, generator: torch.Generator) -> torch.Tensor:
    """(B, length + 1): ``batch`` windows of ``length`` + 1 consecutive ids at random starts."""
    if stream.numel() <= length:
        raise ValueError(f"a stream of {stream.numel()} ids has no window of {length} + 1")
    starts = torch.randint(0, stream.numel() - length, (batch,), generator=generator)  # (B,)
    return stream[starts[:, None] + torch.arange(length + 1)]  # (B, length + 1)


# What the small GPT reads: Chinese from fortunes-zh — sayings and stories (chinese),
# 唐诗三百首 (tang300), 宋词一百首 (song100) — and English quotations from fortunes, songs and poems
# among them (their refrains repeat, as the induction heads will learn to).
FILES = {
    "zh": ("chinese", "tang300", "song100"),
    "en": ("fortunes", "literature", "wisdom", "people", "science", "humorists", "songs-poems", "love"),
}
PACKAGES = {"zh": "fortunes-zh", "en": "fortunes"}


def is_prose(entry: str) -> bool:
    """False for an entry that draws a table with box-drawing characters (─ │ ┼, U+2500–U+257F): the
    Debian reference manual's tables in ``chinese`` are a third of its characters and not language."""
    return not any("\u2500" <= ch <= "\u257f" for ch in entry)


class MissingCorpus(FileNotFoundError):
    """A fortune file is not installed; the message names the Debian package that ships it."""


def corpus(root: Path = FORTUNES) -> dict[str, list[str]]:
    """{"train", "valid", "test"}: the prose entries (:func:`is_prose`) of every file in FILES, Chinese
    then English, split by hash (:func:`split_entries`). Raises MissingCorpus naming the package when a
    file is absent."""
    entries: list[str] = []
    for lang, names in FILES.items():
        for name in names:
            path = Path(root) / name
            if not path.is_file():
                raise MissingCorpus(f"{path} is missing: install the Debian package {PACKAGES[lang]} "
                                    f"(apt-get install fortunes fortunes-zh)")
            entries += [e for e in read_fortunes(path) if is_prose(e)]
    return split_entries(entries)


def main(argv: list[str] | None = None) -> None:
    """Write the three parts as text files (entries separated by a line "%", as in a fortune file)
    and print what each holds."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m core.training.text", description=main.__doc__.split("\n")[0])
    ap.add_argument("--root", default=str(FORTUNES), help="where the fortune files are")
    ap.add_argument("--out", default="runs/lm_data", help="folder for train.txt, valid.txt, test.txt")
    args = ap.parse_args(argv)
    parts = corpus(Path(args.root))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, entries in parts.items():
        (out / f"{name}.txt").write_text("\n%\n".join(entries) + "\n%\n", encoding="utf-8")
        chars = sum(len(e) for e in entries)
        size = sum(len(e.encode("utf-8")) for e in entries)
        han = sum(1 for e in entries for ch in e if "\u4e00" <= ch <= "\u9fff")
        print(f"{name:5} {len(entries):6,} entries  {chars:9,} characters  {size:9,} bytes  "
              f"{han / max(chars, 1):.0%} 汉字  -> {out / (name + '.txt')}")


if __name__ == "__main__":
    main()
