"""GPT-2's own tokenizer: core's byte-level BPE (bpe.py) with GPT-2's merges and GPT-2's ids.

A GPT-2 folder ships ``vocab.json`` (token -> id) and ``merges.txt`` (one merge a line, in the order
learned = rank). The algorithm is the one ``BPETokenizer`` runs; only the ids differ (vocab.json's),
and special tokens are the vocabulary's ``<|...|>`` entries, each one token when written in the text.

>>> tok = GPT2Tokenizer({"a": 0, "b": 1, "ab": 2, "<|endoftext|>": 3}, [("a", "b")])
>>> tok.encode("abab<|endoftext|>")
[2, 2, 3]
>>> tok.decode([2, 3])
'ab<|endoftext|>'

The two files and the ids in detail: docs/decisions.md, core/tokenizers/gpt2.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import regex

from core.tokenizers.bpe import _GPT2_SPLIT, BPETokenizer, _check_text


class GPT2Tokenizer(BPETokenizer):
    """Byte-level BPE with a given vocabulary (token -> id) and merges (pairs, by rank)."""

    def __init__(
        self,
        vocab: Mapping[str, int],
        merges: Sequence[tuple[str, str]],
        special_tokens: Sequence[str] | None = None,
    ) -> None:
        super().__init__(merges, byte_level=True)
        self.token_to_id = dict(vocab)
        self.vocab = {i: t for t, i in self.token_to_id.items()}
        if special_tokens is None:  # GPT-2 spells its special tokens <|like this|>
            special_tokens = [t for t in vocab if t.startswith("<|") and t.endswith("|>")]
        self.special_tokens = sorted(special_tokens, key=len, reverse=True)  # longest first
        pattern = "|".join(regex.escape(s) for s in self.special_tokens)
        self._special_split = regex.compile(f"({pattern})") if pattern else None

    @classmethod
    def from_files(cls, vocab_json, merges_txt) -> GPT2Tokenizer:
        """vocab.json + merges.txt (as written by GPT-2, ``tokenizers`` and ``transformers``)."""
        vocab = vocab_json_ids(json.loads(Path(vocab_json).read_text(encoding="utf-8")))
        return cls(vocab, merges_txt_pairs(Path(merges_txt).read_text(encoding="utf-8")))

    @property
    def eos_id(self) -> int | None:
        return self.token_to_id.get("<|endoftext|>")

    def _pieces(self, text: str, allow_special: bool) -> list[tuple[str, bool]]:
        """Cut text into (piece, is_special): this vocabulary's special tokens, then GPT-2's pre-tokens."""
        split = self._special_split if allow_special else None
        chunks = split.split(text) if split is not None else [text]
        pieces: list[tuple[str, bool]] = []
        for k, chunk in enumerate(chunks):
            if k % 2:  # regex.split puts the captured separators at odd places
                pieces.append((chunk, True))
            else:
                pieces.extend((w, False) for w in _GPT2_SPLIT.findall(chunk))
        return pieces

    def encode(self, text: str, allow_special: bool = True) -> list[int]:
        """Text -> vocab.json's ids. Every byte is a token of GPT-2's vocabulary, so none is unknown."""
        _check_text(text)
        ids = []
        for token in self.tokenize(text, allow_special):
            if token not in self.token_to_id:
                raise ValueError(f"token {token!r} is not in the vocabulary (is a byte missing from it?)")
            ids.append(self.token_to_id[token])
        return ids

    def readable(self, token: str) -> str:
        return token if token in self.special_tokens else super().readable(token)

    def __repr__(self) -> str:
        return f"GPT2Tokenizer({len(self.merges)} merges, {len(self.vocab)} tokens)"


def vocab_json_ids(vocab: object) -> dict[str, int]:
    """A ``vocab.json``'s JSON, checked to be token -> id.

    >>> vocab_json_ids(json.loads('{"a": 0, "Ġthe": 1}'))
    {'a': 0, 'Ġthe': 1}
    """
    if not isinstance(vocab, dict) or not all(type(i) is int for i in vocab.values()):
        raise ValueError("vocab.json is not a map of tokens to ids")
    return vocab


def merges_txt_pairs(text: str) -> list[tuple[str, str]]:
    """A ``merges.txt``: an optional ``#version`` line, then one merge a line, in the order learned.

    >>> merges_txt_pairs("#version: 0.2\\nĠ t\\nh e\\n")
    [('Ġ', 't'), ('h', 'e')]
    """
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#version")]
    return merge_pairs(lines, "merges.txt")


def merge_pairs(merges, where: str) -> list[tuple[str, str]]:
    """BPE merges as pairs: merges.txt's lines or tokenizer.json's ``"a b"`` strings / ``["a", "b"]``
    (``where`` names the file in an error)."""
    pairs = []
    for n, merge in enumerate(merges, 1):
        pair = merge.split(" ") if isinstance(merge, str) else merge
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise ValueError(f"{where}: merge {n} is not two tokens: {str(merge)[:40]!r}")
        pairs.append((pair[0], pair[1]))
    return pairs
