"""The pinyin pairs and the toy tasks: split, determinism, 1:1 alignment, batches, unknown input."""

import random
import time
from collections import Counter

import pytest
import torch

from core.tokenizers.vocab import BOS_ID, EOS_ID, PAD_ID, UNK, UNK_ID, Vocab
from core.training.pairs import (
    DIGITS,
    build_vocabs,
    encode_source,
    load_pinyin_pairs,
    load_task,
    make_batch,
    toy_pair,
)
from core.training.splits import split_of


@pytest.fixture(scope="module")
def pairs():
    return load_pinyin_pairs()


def phrases(split_pairs):
    return {"".join(chars) for chars, _ in split_pairs}


def test_builds_fast_and_big_enough():
    t0 = time.process_time()  # CPU time, not wall time: other jobs may share the machine
    data = load_task("pinyin")
    assert time.process_time() - t0 < 3.0
    assert len(data.splits["train"]) > 40000 and len(data.splits["test"]) > 2000


def test_splits_are_disjoint_by_phrase(pairs):
    train, val, test = (phrases(pairs[s]) for s in ("train", "valid", "test"))
    assert not train & test and not train & val and not val & test


def test_deterministic_across_calls(pairs):
    again = load_pinyin_pairs()
    assert again == pairs
    assert again["test"] is not pairs["test"]  # fresh lists: callers may shuffle them
    assert split_of("中国", hash_bytes=4) == "train"  # sha256 of the text, not Python's salted hash()


def test_one_syllable_per_character(pairs):
    for name, split in pairs.items():
        for chars, syllables in split:
            shortest = 1 if name == "train" else 2  # one-character dictionary examples: training only
            assert shortest <= len(chars) <= 8 and len(chars) == len(syllables)
            assert all(len(c) == 1 for c in chars)
    known = dict((("".join(c), tuple(s)) for c, s in pairs["train"]))
    assert known["中国"] == ("zhōng", "guó")  # tone marks, as pypinyin gives them
    assert known["银行"] == ("yín", "háng")  # a polyphonic character read in context


def test_vocabs_come_from_training_split(pairs):
    src, tgt = build_vocabs(pairs["train"])
    assert src.itos[:5] == ["[PAD]", "[UNK]", "[BOS]", "[EOS]", "[MASK]"]
    train_chars = {c for chars, _ in pairs["train"] for c in chars}
    assert set(src.itos[5:]) == train_chars
    unseen = {c for chars, _ in pairs["test"] for c in chars} - train_chars
    assert unseen, "some test characters never occur in training"
    assert all(i == UNK_ID for i in src.encode(sorted(unseen)))


def test_make_batch_pads_and_wraps_target():
    src_v, tgt_v = Vocab(["a", "b", "c"]), Vocab(["x", "y", "z"])
    src, tgt = make_batch([(["a", "b", "c"], ["x", "y", "z"]), (["c"], ["z"])], src_v, tgt_v)
    assert src.dtype == tgt.dtype == torch.long
    assert src.tolist() == [[5, 6, 7], [7, PAD_ID, PAD_ID]]  # no BOS on the source: position j = char j
    assert tgt.tolist() == [[BOS_ID, 5, 6, 7, EOS_ID], [BOS_ID, 7, EOS_ID, PAD_ID, PAD_ID]]


def test_toy_tasks_are_seeded_and_correct():
    a = [toy_pair("reverse", random.Random(3)) for _ in range(5)]
    b = [toy_pair("reverse", random.Random(3)) for _ in range(5)]
    assert a == b
    for x, y in a:
        assert 3 <= len(x) <= 10 and y == x[::-1] and set(x) <= set(DIGITS)
    x, y = toy_pair("copy", random.Random(0))
    assert x == y
    with pytest.raises(ValueError, match="not a toy task"):
        toy_pair("sort", random.Random(0))
    data = load_task("copy")
    assert data.splits["test"] == load_task("copy").splits["test"]
    src, tgt = data.train_batch(8, random.Random(0))
    assert src.shape[0] == tgt.shape[0] == 8


def test_pinyin_batches_go_through_epochs_and_group_lengths():
    data = load_task("pinyin")
    data.splits["train"] = data.splits["train"][:10]
    rng = random.Random(0)
    batches = [data.train_batch(2, rng)[0] for _ in range(32)]  # one pool: 64 pairs = 6.4 epochs
    seen = Counter(tuple(r[r > 0].tolist()) for src in batches for r in src)
    assert set(seen) == {tuple(data.src_vocab.encode(x)) for x, _ in data.splits["train"]}
    assert set(seen.values()) <= {6, 7}  # every phrase equally often, give or take the unfinished epoch
    padded = sum(int((src == PAD_ID).sum()) for src in batches)
    assert padded <= 2 * 31  # sorted by length within the pool: at most one length change per batch


@pytest.mark.parametrize(
    ("text", "chars"),
    [
        ("hello", ["hello"]),
        ("中国 hello", ["中", "国", "hello"]),
        ("𠀀中", ["𠀀", "中"]),  # a rare Chinese character is its own [UNK]: it still has a syllable
        ("𠀀𠀁", ["𠀀", "𠀁"]),
        ("😀", ["😀"]),
        ("hi😀 中x国 ok", ["hi😀", "中", "x", "国", "ok"]),  # a known character ends an unknown run
        ("", []),
        ("   ", []),
        ("中\n国", ["中", "国"]),
        ("a\tb", ["a", "b"]),  # whitespace separates words: two [UNK]s
    ],
)
def test_unknown_input_becomes_visible_unk_one_per_word(text, chars):
    vocab = Vocab(["中", "国"])
    enc = encode_source(text, vocab)
    assert enc.chars == chars
    assert len(enc.ids) == len(enc.chars) == len(enc.tokens) == len(enc.unknown)
    for char, i, token, unknown in zip(enc.chars, enc.ids, enc.tokens, enc.unknown, strict=True):
        assert unknown == (char not in "中国")
        assert (i, token) == ((UNK_ID, UNK) if unknown else (vocab.stoi[char], char))
    assert enc.tensor().shape == (1, len(enc.ids))


def test_unknown_task_is_refused():
    with pytest.raises(ValueError, match="task='french'"):
        load_task("french")


def test_dictionary_singles_teach_only_characters_the_phrases_never_show(pairs):
    phrases = [c for c, _ in pairs["train"] if len(c) > 1]
    singles = {c[0]: s[0] for c, s in pairs["train"] if len(c) == 1}
    in_phrases = {ch for c in phrases for ch in c}
    assert len(singles) > 1000 and not in_phrases & set(singles)
    assert all(len(c) > 1 for split in ("valid", "test") for c, _ in pairs[split])
    # a GB2312 character the phrases lack gets its first dictionary reading
    some = next(iter(singles))
    assert some.encode("gb2312") and singles[some]
