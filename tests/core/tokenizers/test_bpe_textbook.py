"""The textbook BPE loop (recount, pick the best pair, merge), written here, learns what the fast
trainer learns, merge for merge: on the project's corpora, on awkward text, in both kinds (byte-level
and classic).

As in minbpe's tests, every trainer goes through the same cases."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.tokenizers.bpe import (
    BYTE_TO_CHAR,
    END_OF_WORD,
    BPETokenizer,
    _check_text,
    _dedupe_keep_last,
    byte_spelling,
    training_words,
)

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "assets" / "corpus"


def train_textbook(text: str, num_merges: int, byte_level: bool = True) -> list[tuple[str, str]]:
    """The BPE merge loop in its plainest form (as minbpe's ``basic.py``): every step recounts every
    adjacent pair, takes the most frequent one and merges it everywhere. It learns the same merges
    as :meth:`BPETokenizer.train` (the tests below), which keeps the counts up to date instead of
    recounting: this loop reads the whole text once per merge. It is the reference the fast loop
    (``learn_merges``) is proven against, so it lives beside those proofs.
    """
    _check_text(text)
    # each distinct word (a pre-token) as its symbols, with how often it occurs: no pair crosses words
    words = [
        (list(byte_spelling(w)) if byte_level else [*w, END_OF_WORD], n)
        for w, n in training_words(text, byte_level).items()
    ]
    # the tie-break order of the symbols: as strings (classic), or Hugging Face's ids (byte-level: the
    # 256 byte characters sorted, then the merged tokens as they are made); a new key = a new token
    if byte_level:
        order: dict = {s: i for i, s in enumerate(sorted(BYTE_TO_CHAR.values()))}
    else:
        order = {s: s for symbols, _ in words for s in symbols}
    merges: list[tuple[str, str]] = []
    new_tokens = 0
    while new_tokens < num_merges:
        counts: Counter[tuple[str, str]] = Counter()  # 1. recount every adjacent pair
        for symbols, n in words:
            for pair in itertools.pairwise(symbols):
                counts[pair] += n
        if not counts:  # every word is one token
            break
        # 2. the most frequent pair; among equals, the smallest
        a, b = min(counts, key=lambda p: (-counts[p], order[p[0]], order[p[1]]))
        merges.append((a, b))
        if a + b not in order:
            order[a + b] = len(order) if byte_level else a + b
            new_tokens += 1
        for symbols, _ in words:  # 3. merge it everywhere, left to right
            i = 0
            while i < len(symbols) - 1:
                if symbols[i] == a and symbols[i + 1] == b:
                    symbols[i : i + 2] = [a + b]
                i += 1
    return _dedupe_keep_last(merges)


def fast(text: str, num_merges: int, byte_level: bool) -> list[tuple[str, str]]:
    return BPETokenizer.train(text, num_merges, byte_level=byte_level).merges


TRAINERS = {"fast": fast, "textbook": train_textbook}
KINDS = {"byte": True, "classic": False}


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_classic_example_aaabdaaabac(trainer, kind):
    """minbpe's example: Z = aa, Y = ab, X = ZY ("aaabdaaabac" -> "XdXac"). After ``a a`` the pairs
    ``(aa, a)`` and ``(a, b)`` both occur twice; the smaller one, ``(a, b)``, wins in both kinds (a
    single byte sorts before a merged token; "a" sorts before "aa")."""
    merges = TRAINERS[trainer]("aaabdaaabac", 3, KINDS[kind])
    assert merges == [("a", "a"), ("a", "b"), ("aa", "ab")]


@pytest.mark.parametrize(
    ("name", "num_merges"),
    [("en_zh.txt", 400), ("zh_phrases.txt", 150)],
)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_equal_to_the_fast_trainer_on_the_corpora(name, num_merges, kind):
    text = (CORPUS / name).read_text(encoding="utf-8")
    textbook = train_textbook(text, num_merges, KINDS[kind])
    assert len(textbook) == num_merges
    assert textbook == fast(text, num_merges, KINDS[kind])


AWKWARD = {
    "empty": "",
    "one character": "a",
    "spaces only": "   \n\t ",
    "emoji": "😀😀🎉 👍🏽👍🏽 🇨🇳🇨🇳 ❤️❤️ 👨‍👩‍👧 😀🎉😀",
    "chinese": "你好，世界！你好世界。中文分词是一个问题。问题，问题。",
    "korean": "안녕하세요 세계 안녕 안녕하세요",
    "mixed": "Hello, world! 你好 hello 😀 don't we're 12345 1,000 e\u0301 \r\n\r\n x**2",
    "special tokens": "[BOS]ab ab[EOS] [PAD][PAD] ab [MASK]",
    "one run": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
    "same token two ways": "ab c abc a bc abcabc ab ab c c bc bc",
}


@pytest.mark.parametrize("name", sorted(AWKWARD))
@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("num_merges", [0, 1, 5, 1000])  # 1000: until no pair is left
def test_equal_to_the_fast_trainer_on_awkward_text(name, kind, num_merges):
    text = AWKWARD[name]
    assert train_textbook(text, num_merges, KINDS[kind]) == fast(text, num_merges, KINDS[kind])


@given(
    text=st.text(alphabet="ab c\n😀中", max_size=60), num_merges=st.integers(0, 30), byte_level=st.booleans()
)
@settings(max_examples=200, deadline=None)
def test_equal_to_the_fast_trainer_on_any_small_text(text, num_merges, byte_level):
    assert train_textbook(text, num_merges, byte_level) == fast(text, num_merges, byte_level)


def test_textbook_refuses_what_the_fast_trainer_refuses():
    with pytest.raises(TypeError, match="text must be a str, got bytes"):
        train_textbook(b"ab", 1)
