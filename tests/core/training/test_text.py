"""The fortune files as a language model's text (core/training/text.py): entries cut at "%" lines, terminal
colour escapes removed, and a split by hash that does not depend on order or company. Synthetic files in
the format of Debian's (the packages themselves are not needed here)."""

import pytest
import torch

from core.tokenizers.bpe import BPETokenizer
from core.tokenizers.vocab import EOS_ID
from core.training.splits import SPLITS, split_of
from core.training.text import clean, read_fortunes, split_entries, token_stream, window_rows

TANG = (
    "\x1b[32m《静夜思》\x1b[m\n\x1b[33m作者：李白\x1b[m\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n%\n"
    "\x1b[32m《春晓》\x1b[m\n作者：孟浩然\n春眠不觉晓，处处闻啼鸟。   \n%\n"
    "   \n%\n"
)
ENGLISH = "Attention is all you need.\n\t-- Vaswani et al.\n%\nA bell\x07 rings.\r\n%\n"


def test_entries_are_cut_at_percent_lines_and_cleaned(tmp_path):
    (tmp_path / "tang").write_text(TANG, encoding="utf-8")
    (tmp_path / "en").write_bytes(ENGLISH.encode("utf-8"))
    tang = read_fortunes(tmp_path / "tang")
    assert tang == [
        "《静夜思》\n作者：李白\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡。",
        "《春晓》\n作者：孟浩然\n春眠不觉晓，处处闻啼鸟。",
    ]  # colours gone, trailing spaces gone, the blank entry dropped
    assert read_fortunes(tmp_path / "en") == [
        "Attention is all you need.\n\t-- Vaswani et al.",
        "A bell rings.",
    ]


def test_clean_keeps_text_and_drops_only_controls():
    assert clean("\x1b[1;31mred\x1b[0m 红色 😀\tx\n") == "red 红色 😀\tx"


def test_the_split_is_by_hash_whatever_the_order():
    entries = [f"entry {i} 第{i}条" for i in range(2000)]
    parts = split_entries(entries)
    again = split_entries(list(reversed(entries)) + entries[:50])  # another order, with duplicates
    assert {name: sorted(p) for name, p in parts.items()} == {name: sorted(p) for name, p in again.items()}
    assert sum(len(p) for p in parts.values()) == 2000
    for name, percent in SPLITS:  # the shares the percentages say, within sampling noise
        assert abs(len(parts[name]) / 2000 - percent / 100) < 0.03, name
    assert all(split_of(e) == name for name, p in parts.items() for e in p)


def test_the_stream_ends_each_entry_and_windows_predict_the_next_token():
    entries = ["床前明月光 [EOS] moon", "Attention is all you need."]
    tok = BPETokenizer.train("\n".join(entries) * 3, 40, byte_level=True)
    stream = token_stream(tok, entries)
    first = tok.encode(entries[0], allow_special=False)
    assert stream.tolist() == first + [EOS_ID] + tok.encode(entries[1], allow_special=False) + [EOS_ID]
    assert EOS_ID not in first  # the typed "[EOS]" is text, not the end of the entry
    rows = window_rows(stream, length=8, batch=5, generator=torch.Generator().manual_seed(0))
    x, y = rows[:, :-1], rows[:, 1:]  # the inputs, and the next token of each: the targets
    assert x.shape == y.shape == (5, 8) and torch.equal(x[:, 1:], y[:, :-1])
    for row_x, row_y in zip(x.tolist(), y.tolist(), strict=True):  # each window is a piece of the stream
        text = " " + " ".join(map(str, stream.tolist())) + " "
        assert " " + " ".join(map(str, row_x + row_y[-1:])) + " " in text
    with pytest.raises(ValueError):
        window_rows(stream, length=len(stream), batch=1, generator=torch.Generator())


def test_tables_are_not_prose_and_no_break_spaces_are_spaces():
    from core.training.text import is_prose

    assert not is_prose("表 1.1\n┌────┐\n│ mc │\n└────┘")
    assert is_prose("床前明月光 -- 李白")
    assert clean("\xa0\xa0 设置") == "   设置"


def test_the_installed_corpus_has_both_languages_in_every_part():
    """Debian's fortunes and fortunes-zh, as .ci/run installs them: every part holds English and Chinese
    entries, no table, and the parts share no entry."""
    from core.training.text import corpus, is_prose

    parts = corpus()
    for name, entries in parts.items():
        han = sum(any("\u4e00" <= ch <= "\u9fff" for ch in e) for e in entries)
        assert 0.2 < han / len(entries) < 0.8, name  # Chinese and English both present
        assert all(is_prose(e) for e in entries)
    assert not set(parts["train"]) & set(parts["test"]) and not set(parts["valid"]) & set(parts["test"])
    assert len(parts["train"]) > 10 * len(parts["test"]) > 0


def test_a_missing_file_names_its_package(tmp_path):
    from core.training.text import MissingCorpus, corpus

    with pytest.raises(MissingCorpus, match="fortunes-zh"):
        corpus(tmp_path)
