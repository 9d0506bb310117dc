"""The seq2seq tasks' pairs: Chinese phrases -> pinyin (one syllable per character), and two toy digit tasks.

The pinyin pairs come from the phrase dictionary that the ``pypinyin`` package ships (MIT licence):
``phrases_dict`` maps a phrase to one reading per character, so a polyphonic character such as 行
gets the reading it has in that phrase (银行 yín háng, 行走 xíng zǒu), and each target syllable
belongs to exactly one source character. The training split also gets a one-character example for
each GB2312 character absent from its phrases; valid and test stay phrases (split by
:func:`core.training.splits.split_of`) and are never trained on. ``pypinyin`` is imported only inside
``load_pinyin_pairs``. Why each of these: docs/decisions.md, core/training/pairs.py.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field

import regex
import torch

from core.tokenizers.vocab import BOS_ID, EOS_ID, PAD_ID, UNK, UNK_ID, Vocab
from core.training.splits import SPLIT_NAMES, split_of

Pair = tuple[list[str], list[str]]  # (source tokens, target tokens)

TASKS = ("pinyin", "copy", "reverse")
PINYIN_MIN_LEN, PINYIN_MAX_LEN = 2, 8  # 1-char entries are not phrases; longer ones are very rare
TOY_MIN_LEN, TOY_MAX_LEN = 3, 10
DIGITS = [str(d) for d in range(10)]
TOY_EVAL_SIZE = 500  # fixed valid/test sets of the toy tasks
TOY_SEEDS = {"valid": "val-1", "test": "test-2"}  # the seeds those sets have always been drawn with

_HAN_ONLY = regex.compile(r"\p{Han}+")


def aligned_source(task: str, t: int, S: int) -> int | None:
    """The source position whose token decoder position ``t`` writes out, for a task that has one.

    Positions count from 0. The decoder's input is ``[BOS] y_1 … y_n``, so position t writes y_{t+1}:
    in "pinyin" (one syllable per character) and "copy" that is source token t (a diagonal in
    cross-attention), in "reverse" source token S − 1 − t (the anti-diagonal). None past the source's
    end (the position that writes [EOS]) and for a task without such a rule.

    >>> [aligned_source("reverse", t, 3) for t in range(4)], aligned_source("copy", 1, 3)
    ([2, 1, 0, None], 1)
    """
    if not 0 <= t < S:
        return None
    if task in ("pinyin", "copy"):
        return t
    if task == "reverse":
        return S - 1 - t
    return None


@functools.lru_cache(maxsize=4)
def _pinyin_pairs(min_len: int, max_len: int) -> dict[str, tuple[tuple[str, tuple[str, ...]], ...]]:
    try:
        from pypinyin.phrases_dict import phrases_dict
    except ImportError as e:  # pragma: no cover - pypinyin is in requirements.txt
        raise ImportError("the pinyin data needs the pypinyin package: pip install pypinyin") from e
    splits: dict[str, list] = {s: [] for s in SPLIT_NAMES}
    for phrase in sorted(phrases_dict):  # sorted: the order must not depend on the dict's build
        readings = phrases_dict[phrase]
        if not min_len <= len(phrase) <= max_len or not _HAN_ONLY.fullmatch(phrase):
            continue
        # one reading per character, or the 1:1 alignment (and the target) would be ambiguous
        if len(readings) != len(phrase) or any(len(r) != 1 for r in readings):
            continue
        splits[split_of(phrase, hash_bytes=4)].append((phrase, tuple(r[0] for r in readings)))
    splits["train"].extend(_dictionary_singles({ch for phrase, _ in splits["train"] for ch in phrase}))
    return {s: tuple(pairs) for s, pairs in splits.items()}


def _gb2312_hanzi() -> list[str]:
    """The 6,763 characters of GB2312 levels 1 and 2, in code order (rows 16-87 of the standard)."""
    chars = []
    for hi in range(0xB0, 0xF8):
        for lo in range(0xA1, 0xFF):
            try:
                chars.append(bytes((hi, lo)).decode("gb2312"))
            except UnicodeDecodeError:  # the five unassigned cells at the end of row 55
                pass
    return chars


def _dictionary_singles(seen: set[str]) -> list[tuple[str, tuple[str, ...]]]:
    """(character, (first dictionary reading,)) for GB2312 characters the training phrases never show."""
    from pypinyin.pinyin_dict import pinyin_dict

    singles = []
    for ch in _gb2312_hanzi():
        readings = pinyin_dict.get(ord(ch))
        if ch not in seen and readings:
            singles.append((ch, (readings.split(",")[0],)))
    return singles


def load_pinyin_pairs(min_len: int = PINYIN_MIN_LEN, max_len: int = PINYIN_MAX_LEN) -> dict[str, list[Pair]]:
    """{"train"|"valid"|"test": [(characters, syllables), ...]}, the same on every call and machine.

    >>> pairs = load_pinyin_pairs()
    >>> ("中国" in {"".join(c) for c, _ in pairs["train"]}, len(pairs["test"]) > 2000)
    (True, True)
    """
    # fresh lists each call, so a caller that shuffles or edits them cannot spoil the cache
    return {s: [(list(p), list(y)) for p, y in pairs] for s, pairs in _pinyin_pairs(min_len, max_len).items()}


def build_vocabs(train_pairs: list[Pair]) -> tuple[Vocab, Vocab]:
    """Source and target vocabularies from the TRAINING pairs only (sorted, so they are reproducible).

    Anything seen only in valid or test maps to [UNK], as it would for a real user.
    """
    src = sorted({t for x, _ in train_pairs for t in x})
    tgt = sorted({t for _, y in train_pairs for t in y})
    return Vocab(src), Vocab(tgt)


def toy_pair(task: str, rng: random.Random, min_len: int = TOY_MIN_LEN, max_len: int = TOY_MAX_LEN) -> Pair:
    """One random digit sequence and its copy or its reversal."""
    x = [rng.choice(DIGITS) for _ in range(rng.randint(min_len, max_len))]
    if task == "copy":
        return x, list(x)
    if task == "reverse":
        return x, x[::-1]
    raise ValueError(f"task={task!r} is not a toy task; choose 'copy' or 'reverse'")


def make_batch(pairs: list[Pair], src_vocab: Vocab, tgt_vocab: Vocab) -> tuple[torch.Tensor, torch.Tensor]:
    """Padded LongTensors src (B, S) = x and tgt (B, T) = [BOS] y [EOS]; pad id 0.

    No BOS/EOS on the source: source position j is then character j, the one target syllable j reads.
    """
    src_ids = [src_vocab.encode(x) for x, _ in pairs]
    tgt_ids = [[BOS_ID, *tgt_vocab.encode(y), EOS_ID] for _, y in pairs]
    return pad(src_ids), pad(tgt_ids)


def pad(rows: list[list[int]]) -> torch.Tensor:
    out = torch.full((len(rows), max(len(r) for r in rows)), PAD_ID, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    return out


@dataclass
class TaskData:
    """Everything training needs for one task: vocabularies, fixed eval splits and a batch sampler."""

    name: str
    src_vocab: Vocab
    tgt_vocab: Vocab
    splits: dict[str, list[Pair]]  # "train" is empty for the toy tasks: they are sampled on the fly
    _order: list[int] = field(default_factory=list, repr=False)
    _ready: list[list[Pair]] = field(default_factory=list, repr=False)

    def train_batch(self, batch_size: int, rng: random.Random) -> tuple[torch.Tensor, torch.Tensor]:
        if self.name in ("copy", "reverse"):
            pairs = [toy_pair(self.name, rng) for _ in range(batch_size)]
        else:
            if not self._ready:
                self._ready = self._bucketed_batches(batch_size, rng)
            pairs = self._ready.pop()
        return make_batch(pairs, self.src_vocab, self.tgt_vocab)

    def _bucketed_batches(self, batch_size: int, rng: random.Random, pool: int = 32) -> list[list[Pair]]:
        """The next ``pool`` batches: epochs over a shuffled order (every phrase is seen equally often),
        sorted by length within the pool so a batch holds phrases of about one length. Most phrases
        have 2 or 4 characters; random batches would be padded to the longest (up to 8) and waste
        about half of every step on [PAD]."""
        train = self.splits["train"]
        chosen = []
        while len(chosen) < batch_size * pool:
            if not self._order:
                self._order = list(range(len(train)))
                rng.shuffle(self._order)
            chosen.append(train[self._order.pop()])
        chosen.sort(key=lambda pair: len(pair[0]))
        batches = [chosen[i : i + batch_size] for i in range(0, len(chosen), batch_size)]
        rng.shuffle(batches)
        return batches


def load_task(task: str) -> TaskData:
    """Data for "pinyin", "copy" or "reverse"; the toy eval sets are drawn with fixed seeds."""
    if task == "pinyin":
        splits = load_pinyin_pairs()
        return TaskData(task, *build_vocabs(splits["train"]), splits)
    if task in ("copy", "reverse"):
        splits = {"train": []}
        for split, seed in TOY_SEEDS.items():
            rng = random.Random(f"{task}-{seed}")
            splits[split] = [toy_pair(task, rng) for _ in range(TOY_EVAL_SIZE)]
        return TaskData(task, Vocab(DIGITS), Vocab(DIGITS), splits)
    raise ValueError(f"task={task!r} must be one of {TASKS}")


@dataclass
class EncodedSource:
    """A user's string as the model sees it; ``unknown[i]`` marks the tokens that became [UNK]."""

    chars: list[str]  # what the user typed, one token per character (a word of unknown letters: one)
    ids: list[int]
    unknown: list[bool]

    @property
    def tokens(self) -> list[str]:
        """The tokens the model gets, with [UNK] where the text is outside the vocabulary."""
        return [UNK if u else c for c, u in zip(self.chars, self.unknown, strict=True)]

    def tensor(self) -> torch.Tensor:
        """(1, S) LongTensor for the model."""
        return torch.tensor([self.ids], dtype=torch.long)


def encode_source(text: str, src_vocab: Vocab) -> EncodedSource:
    """Arbitrary user text -> source ids: one token per character, whitespace dropped.

    Never fails on odd input: what is outside the vocabulary becomes [UNK] (id 1). A Chinese
    character stays one token (it still owns one syllable of the output); a run of other unknown
    characters inside one word (English letters, emoji) is one [UNK], as BERT's WordPiece does,
    rather than a row of [UNK]s on every axis.

    >>> e = encode_source("中国 ok 𠀀", Vocab(["中", "国"]))
    >>> e.ids, e.tokens, e.chars
    ([5, 6, 1, 1], ['中', '国', '[UNK]', '[UNK]'], ['中', '国', 'ok', '𠀀'])
    """
    chars: list[str] = []
    ids: list[int] = []
    for word in text.split():  # str.split() splits on exactly the characters str.isspace() accepts
        joinable = False  # the previous token is an unknown non-Chinese run of this word
        for char, i in zip(word, src_vocab.encode(list(word)), strict=True):
            run = i == UNK_ID and not _HAN_ONLY.fullmatch(char)
            if run and joinable:
                chars[-1] += char
                continue
            chars.append(char)
            ids.append(i)
            joinable = run
    return EncodedSource(chars, ids, [i == UNK_ID for i in ids])
