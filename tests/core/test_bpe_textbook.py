"""The textbook BPE loop (recount, pick the best pair, merge) learns what the fast trainer learns,
merge for merge: on the project's corpora, on awkward text, in both kinds (byte-level and classic).

As in minbpe's tests, every trainer goes through the same cases."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.bpe import BPETokenizer, train_textbook

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "assets" / "corpus"


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
