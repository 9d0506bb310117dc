"""Tests for core/tokenizers/bpe.py: the textbook example, exact agreement with Hugging Face `tokenizers`,
round trips for any string, special tokens, segmentations, and error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from core.tokenizers.bpe import (
    BYTE_TO_CHAR,
    HF_UNASSIGNED_RANGES,
    BPETokenizer,
    byte_spelling,
    char_byte_table,
    char_bytes,
    readable,
)
from core.tokenizers.vocab import BOS_ID, EOS_ID, PAD_ID, SPECIAL_TOKENS, UNK_ID

ROOT = Path(__file__).resolve().parents[3]
EN_ZH = (ROOT / "assets" / "corpus" / "en_zh.txt").read_text(encoding="utf-8")
ZH_PHRASES = (ROOT / "assets" / "corpus" / "zh_phrases.txt").read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Hugging Face reference


def hf_train(text: str, num_merges: int) -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)  # use_regex=True default
    trainer = trainers.BpeTrainer(vocab_size=256 + num_merges, special_tokens=[], min_frequency=0,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator([text], trainer)
    return tok


def hf_merges(tok: Tokenizer) -> list[tuple[str, str]]:
    merges = json.loads(tok.to_str())["model"]["merges"]
    return [tuple(m) if isinstance(m, list) else tuple(m.split(" ")) for m in merges]


# ---------------------------------------------------------------------------------------------
# Classic BPE

TEXTBOOK = "low " * 5 + "lower " * 2 + "newest " * 6 + "widest " * 3


def test_classic_textbook_merges():
    tok = BPETokenizer.train(TEXTBOOK, 100, byte_level=False)
    # Ties go to the smallest pair (strings in code point order): at count 9 ('e','s') beats
    # ('s','t') and ('t','</w>'); at 7 ('l','o') beats ('o','w'); at 6 ('e','w') beats ('n','e').
    assert tok.merges == [
        ("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w"), ("e", "w"),
        ("ew", "est</w>"), ("n", "ewest</w>"), ("low", "</w>"), ("d", "est</w>"), ("i", "dest</w>"),
        ("w", "idest</w>"), ("e", "r"), ("er", "</w>"), ("low", "er</w>"),
    ]  # then no pair is left: every word is one token
    assert tok.tokenize(TEXTBOOK) == ["low</w>"] * 5 + ["lower</w>"] * 2 + ["newest</w>"] * 6 + [
        "widest</w>"] * 3
    assert tok.tokenize("lowest newer") == ["low", "est</w>", "n", "ew", "er</w>"]


def test_classic_tie_break_is_smallest_pair_not_first_seen():
    # 'x y' is seen first, but ('a', 'b') is smaller
    tok = BPETokenizer.train("xy ab", 1, byte_level=False)
    assert tok.merges == [("a", "b")]
    tok = BPETokenizer.train("ba ab", 2, byte_level=False)  # (a,b) before (b,a) before (a,</w>)
    assert tok.merges == [("a", "</w>"), ("a", "b")]  # '<' < 'a' < 'b' in code point order


def test_classic_vocab_encode_decode_and_unknown():
    tok = BPETokenizer.train(TEXTBOOK, 3, byte_level=False)
    assert [tok.vocab[i] for i in range(5)] == list(SPECIAL_TOKENS)
    assert tok.vocab[5] == "</w>"
    assert tok.tokenize("wex") == ["w", "e", "[UNK]", "</w>"]
    assert tok.encode("wex")[2] == UNK_ID
    assert tok.decode(tok.encode("  newest\n lowest ")) == "newest lowest"
    assert tok.decode(tok.encode("[BOS]low[EOS]")) == "[BOS]low [EOS]"


def test_classic_segmentations():
    tok = BPETokenizer.train(TEXTBOOK, 100, byte_level=False)
    segs = tok.segmentations("newest low")
    assert len(segs) == len(tok.merges) + 1
    assert segs[0] == list("newest") + ["</w>"] + list("low") + ["</w>"]
    assert segs[1] == ["n", "e", "w", "es", "t", "</w>", "l", "o", "w", "</w>"]
    assert segs[-1] == tok.tokenize("newest low") == ["newest</w>", "low</w>"]


# ---------------------------------------------------------------------------------------------
# Byte-level BPE == Hugging Face

MIXED = (
    "Hello, world! Hello again, world. 你好，世界！你好世界。 😀😀🎉 12345 1,000 3.14 don't I'll "
    "we're  two  spaces\t\ttabs\n\nnewlines \r\n mixed \u3000 ideographic space "
    "مرحبا بالعالم שלום עולם e\u0301 n\u0303 👍🏽 🇨🇳 ❤️ def f(x): return x**2  # code\n"
)
CODE = (
    "def greet(name):\n    return f\"Hello, {name}!\"\n\nfor i in range(10):\n    print(i, greet('x'))\n"
    "if (a && b || !c) { x += 1; } // comment\n" * 3
)
CORPORA = {
    "en_zh": EN_ZH,
    "zh_phrases": ZH_PHRASES[:20000],
    "mixed": MIXED * 3 + EN_ZH[:3000],
    "code": CODE,
    "tiny": "aaab aaab ab ba",
}
PROBES = [
    "", " ", "  ", "\n", "Hello, world!", "the transformer's attention", "中文分词是一个问题。",
    "你好，世界！ Hello 世界 😀", "👍🏽 🇨🇳 ❤️ 👨‍👩‍👧", "مرحبا بالعالم", "שלום עולם",
    "e\u0301 a\u0308 \u0915\u093f",
    "   leading and trailing   ", "tabs\tand\nnew\r\nlines\u2028\u00a0nbsp", "x = [1, 2, 3]  # list",
    "1234567890 3.14159 -42", "'s 't 're 've 'm 'll 'd ''", "\x00\x01\x7f control",
    "\U00010940 \U0003d000 unassigned for HF", MIXED, CODE,
]


@pytest.fixture(scope="module", params=sorted(CORPORA))
def corpus(request):
    return CORPORA[request.param]


@pytest.mark.parametrize("num_merges", [0, 1, 10, 100, 600])
def test_byte_level_matches_hugging_face(corpus, num_merges):
    ours = BPETokenizer.train(corpus, num_merges)
    hf = hf_train(corpus, num_merges)
    assert ours.merges == hf_merges(hf)
    for text in PROBES + [corpus[:3000]]:
        assert ours.tokenize(text, allow_special=False) == hf.encode(text).tokens, text


def test_byte_level_runs_out_of_pairs_like_hugging_face():
    ours = BPETokenizer.train("abc,abc", 50)  # pre-tokens "abc" "," "abc": two merges and done
    assert ours.merges == hf_merges(hf_train("abc,abc", 50)) == [("a", "b"), ("ab", "c")]


def test_byte_level_tie_break_uses_hugging_face_ids():
    # All pairs occur twice. HF ids: printable ASCII first ('a' < 'b'), 'Ġ' (U+0120) much later,
    # merged tokens after all bytes. So ('a','b') < ('b','a') < ('Ġ','b').
    tok = BPETokenizer.train("ab ab ba ba", 4)
    assert tok.merges == [("a", "b"), ("b", "a"), ("Ġ", "ba"), ("Ġ", "ab")]
    assert tok.merges == hf_merges(hf_train("ab ab ba ba", 4))


def test_byte_level_basics():
    tok = BPETokenizer.train(EN_ZH, 50)
    assert len(tok.merges) == 50
    assert [tok.vocab[i] for i in range(5)] == list(SPECIAL_TOKENS)
    assert [tok.vocab[5 + b] for b in range(256)] == [BYTE_TO_CHAR[b] for b in range(256)]
    assert tok.vocab[261] == "".join(tok.merges[0])
    assert tok.tokenize("中", allow_special=False)[0] in ("ä¸Ń", "ä¸", "ä")
    assert BPETokenizer.train(EN_ZH, 0).tokenize("中") == ["ä", "¸", "Ń"]
    assert BPETokenizer.train("", 10).merges == []
    assert BPETokenizer.train("", 0).encode("hé") == [5 + ord("h"), 5 + 0xC3, 5 + 0xA9]


def test_byte_helpers():
    assert char_bytes("中") == [0xE4, 0xB8, 0xAD]
    assert byte_spelling("中") == "ä¸Ń"
    assert byte_spelling(" \n") == "ĠĊ"
    assert char_byte_table("a😀") == [("a", [97], "a"), ("😀", [0xF0, 0x9F, 0x98, 0x80], "ðŁĺĢ")]
    assert readable("Ġhi") == " hi"
    assert readable("ä¸") == "\ufffd"
    assert len(set(BYTE_TO_CHAR.values())) == 256
    assert all(not c.isspace() and c.isprintable() for c in BYTE_TO_CHAR.values())
    tok = BPETokenizer.train("x", 0)
    assert tok.readable("ä¸Ń") == "中" and tok.readable("[BOS]") == "[BOS]"


def test_hf_unassigned_ranges_are_sorted_and_disjoint():
    flat = [x for r in HF_UNASSIGNED_RANGES for x in r]
    assert flat == sorted(flat) and all(a <= b for a, b in HF_UNASSIGNED_RANGES)


# ---------------------------------------------------------------------------------------------
# Special tokens


@pytest.mark.parametrize("byte_level", [True, False])
def test_special_tokens_are_never_split(byte_level):
    tok = BPETokenizer.train(EN_ZH, 100, byte_level=byte_level)
    tokens = tok.tokenize("[BOS]hello[EOS][PAD][PAD]")
    assert tokens[0] == "[BOS]" and tokens[-3:] == ["[EOS]", "[PAD]", "[PAD]"]
    ids = tok.encode("[BOS]hello [MASK] world[EOS]")
    assert ids[0] == BOS_ID and ids[-1] == EOS_ID and 4 in ids
    assert tok.encode("[PAD]") == [PAD_ID]
    # Off: the brackets are ordinary text, like in Hugging Face
    assert "[BOS]" not in tok.tokenize("[BOS]hello", allow_special=False)
    assert all(i >= 5 for i in tok.encode("[BOS]hello", allow_special=False) if byte_level)


def test_special_tokens_are_not_learned_from():
    tok = BPETokenizer.train("[PAD]" * 50 + " ab", 5)
    assert all("[" not in a + b and "PAD" not in a + b for a, b in tok.merges)


def test_special_tokens_round_trip():
    tok = BPETokenizer.train(EN_ZH, 100)
    s = "[BOS]你好 [MASK]![EOS][UNK]"
    assert tok.decode(tok.encode(s)) == s
    assert tok.decode(tok.encode(s, allow_special=False)) == s


# ---------------------------------------------------------------------------------------------
# Segmentations


@pytest.mark.parametrize("byte_level", [True, False])
def test_segmentations_consistent_with_tokenize(byte_level):
    tok = BPETokenizer.train(EN_ZH, 200, byte_level=byte_level)
    for text in ["the transformer learns attention", "你好，世界！ 😀 [BOS]", "", "   ", EN_ZH[:500]]:
        segs = tok.segmentations(text)
        assert len(segs) == len(tok.merges) + 1
        assert segs[-1] == tok.tokenize(text)
        if byte_level:
            assert segs[0] == BPETokenizer.train("", 0).tokenize(text)
        for i in range(1, len(segs)):  # each step only merges: the text is preserved
            assert "".join(segs[i]) == "".join(segs[0])
            assert len(segs[i]) <= len(segs[i - 1])
        # entry i == tokenizing with the first i merges only
        for i in (0, 1, 7, 50, len(tok.merges)):
            prefix = BPETokenizer(tok.merges[:i], byte_level=byte_level,
                                  alphabet=[t for t in tok.token_to_id if len(t) == 1])
            assert segs[i] == prefix.tokenize(text)


# ---------------------------------------------------------------------------------------------
# Errors


def test_errors():
    with pytest.raises(ValueError, match=r"^num_merges must be >= 0, got -1$"):
        BPETokenizer.train("abc", -1)
    with pytest.raises(TypeError, match=r"^num_merges must be an int, got float$"):
        BPETokenizer.train("abc", 1.5)
    with pytest.raises(TypeError, match=r"^num_merges must be an int, got bool$"):
        BPETokenizer.train("abc", True)
    with pytest.raises(TypeError, match=r"^text must be a str, got bytes$"):
        BPETokenizer.train(b"abc", 1)
    tok = BPETokenizer.train("abc", 1)
    with pytest.raises(TypeError, match=r"^text must be a str, got NoneType$"):
        tok.encode(None)
    with pytest.raises(TypeError, match=r"^text must be a str, got list$"):
        tok.segmentations(["a"])
    with pytest.raises(ValueError, match=r"^unknown token id 262 \(vocabulary has 262 ids\)$"):
        tok.decode([5, 262])
    with pytest.raises(TypeError, match=r"^ids must be ints, got str$"):
        tok.decode(["a"])
    with pytest.raises(ValueError, match=r"^'x中' is not a byte-level token \(no byte for '中'\)$"):
        readable("x中")


# ---------------------------------------------------------------------------------------------
# Properties

INTERESTING = (
    "aeiou tnsrl AEIOU 0123456789 .,;:!?'\"()[]{}<>-_/\\@#$%^&*+=~`|"
    " \t\n\r\x0b\x0c\x1c\x85\xa0\u2028\u2029\u3000\u200b\u200d\ufeff"
    "中文你好世界的一是不了人我在有他这为之大来以个"
    "😀🎉👍🏽🇨🇳❤️👨‍👩‍👧"
    "\u0301\u0308\u0303\u093f\u0915"
    "مرحبابالعالم" "שלוםעולם"
    "\x00\x01\x7f\u0558\U00010940\U0003d000"  # the last three: letters for `regex`, not for HF
)
any_char = st.characters()  # includes lone surrogates: they round-trip too
hf_char = st.characters(exclude_categories=("Cs",))  # Rust strings cannot hold a lone surrogate
texts = st.text(st.one_of(st.sampled_from(INTERESTING), any_char), max_size=60)
hf_texts = st.text(st.one_of(st.sampled_from(INTERESTING), hf_char), max_size=60)

_TOK = BPETokenizer.train(MIXED * 5 + EN_ZH, 300)
_HF = hf_train(MIXED * 5 + EN_ZH, 300)
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(texts)
def test_round_trip_any_string(s):
    assert _TOK.decode(_TOK.encode(s)) == s
    assert _TOK.decode(_TOK.encode(s, allow_special=False)) == s


@FAST
@given(hf_texts)
def test_tokenize_equals_hugging_face_for_any_text(s):
    assert _TOK.tokenize(s, allow_special=False) == _HF.encode(s).tokens


@settings(max_examples=60, deadline=None)
@given(hf_texts, st.integers(0, 40))
def test_training_equals_hugging_face_on_any_corpus(corpus, n):
    assume(not any(sp in corpus for sp in SPECIAL_TOKENS))  # we do not learn from those; HF does
    assert BPETokenizer.train(corpus, n).merges == hf_merges(hf_train(corpus, n))


@FAST
@given(texts, st.lists(st.sampled_from(SPECIAL_TOKENS), max_size=3))
def test_special_tokens_survive_any_context(s, specials):
    text = s + "".join(specials) + s
    tokens = _TOK.tokenize(text)
    assert tokens.count("[PAD]") >= text.count("[PAD]")
    for sp in specials:
        assert sp in tokens


@settings(max_examples=60, deadline=None)
@given(texts)
def test_segmentations_end_with_tokenize(s):
    segs = _TOK.segmentations(s)
    assert segs[-1] == _TOK.tokenize(s)
    assert segs[0] == list(byte_spelling(s)) or "[" in s


# ---------------------------------------------------------------------------------------------
# Bounded training: cut words, the work estimate, the plan (issue 25, finding 5)

CJK_RUN = "".join(chr(0x4E00 + (i * 7919) % 3000) for i in range(4000))  # one word of 12,000 bytes


@pytest.mark.parametrize("byte_level", [True, False])
def test_cut_words_train_as_if_the_text_had_breaks_there(byte_level):
    """``max_word`` = the same training on the text broken between the pieces (by a special token,
    which training cuts out): no merged token crosses a cut, none is longer than ``max_word`` symbols."""
    from core.tokenizers.bpe import _cut, symbol_count, training_words

    cut = BPETokenizer.train(CJK_RUN, 200, byte_level=byte_level, max_word=64)
    pieces = _cut(CJK_RUN, 64, byte_level)
    assert "".join(pieces) == CJK_RUN and all(symbol_count(p, byte_level) <= 64 for p in pieces)
    broken = "[PAD]".join(pieces)
    assert training_words(CJK_RUN, byte_level, 64) == training_words(broken, byte_level)
    assert cut.merges == BPETokenizer.train(broken, 200, byte_level=byte_level).merges
    # byte-level: one spelling character per byte; classic: characters, and </w> counts one
    assert max(len((a + b).replace("</w>", "_")) for a, b in cut.merges) <= 64


def test_max_word_changes_nothing_when_no_word_is_that_long():
    assert BPETokenizer.train(EN_ZH, 300, max_word=10_000).merges == BPETokenizer.train(EN_ZH, 300).merges


@pytest.mark.parametrize("byte_level", [True, False])
@pytest.mark.parametrize("budget", [10**6, 5 * 10**6])
def test_the_plan_keeps_the_work_within_the_budget(byte_level, budget):
    from core.tokenizers.bpe import plan_training, training_work

    text = (CJK_RUN + " ") * 3 + " ".join(CJK_RUN)  # long words, then many short distinct ones
    assert training_work(text, 1000, byte_level).units > budget
    plan = plan_training(text, 1000, byte_level, budget, smallest=64)
    assert plan.units <= budget
    assert plan.units == training_work(text[: plan.chars], 1000, byte_level, max_word=plan.max_word).units
    assert plan.limited(text)


def test_the_plan_leaves_a_text_that_fits_alone():
    from core.tokenizers.bpe import plan_training

    plan = plan_training(EN_ZH, 1000, True, 10**9)
    assert (plan.chars, plan.max_word) == (len(EN_ZH), None) and not plan.limited(EN_ZH)


def test_max_word_must_be_a_positive_int():
    with pytest.raises(ValueError, match="max_word must be None or an int >= 1, got 0"):
        BPETokenizer.train("abc", 3, max_word=0)
