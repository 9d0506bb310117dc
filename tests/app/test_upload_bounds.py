"""An upload bounds the work of BPE training, not only its bytes (issue 25, finding 5).

999 KB of Chinese without a space is one GPT-2 pre-token of 999,000 bytes: 1,000 merges rewrote it
1,000 times, ~20 s of one core per kind, and the page trains two kinds. The page now plans the training
first (``bpe.plan_training`` within its ``WORK_BUDGET``) and says what it limited before training.
The bound is checked through the work estimate (``bpe.training_work``) of what the page says it
learned from, and the merges shown are those of that training; no timing.

AppTest has no file-uploader element: ``st.file_uploader`` is replaced by one that returns the file.
"""

from __future__ import annotations

import random
import re

import apphelpers
import pytest
import streamlit as st
from apphelpers import ROOT, assert_clean, messages

from core.tokenizers.bpe import BPETokenizer, training_work
from i18n import t
from ui.sections.tokenization import WORK_BUDGET

PAGE = "pages/tokenization.py"


def chinese_without_spaces(n_bytes: int, seed: int = 25) -> str:
    """``n_bytes`` of UTF-8: characters of the commonest CJK block, drawn with a Zipf-like law (a few
    frequent, a long tail, as in prose), no space and no punctuation: a single pre-token."""
    rng = random.Random(seed)
    alphabet = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    weights = [1 / (r + 1) for r in range(len(alphabet))]
    return "".join(rng.choices(alphabet, weights=weights, k=n_bytes // 3))


class Uploaded:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def getvalue(self) -> bytes:
        return self.data


@pytest.fixture
def upload(monkeypatch):
    """``upload(data)``: the Tokenization page's file uploader holds a file with these bytes."""

    def use(data: bytes) -> None:
        monkeypatch.setattr(st, "file_uploader", lambda *args, **kwargs: Uploaded(data))

    return use


def limit_note(at) -> str:
    found = [m for m in messages(at) if m.startswith(t("tokenization.limit", "en"))]
    assert len(found) == 1, messages(at)
    return found[0]


def plan_said(note: str, kind: str, text: str) -> tuple[int, int | None]:
    """(characters learned from, cut length in symbols or None) as the note states them for ``kind``."""
    name = t(f"tokenization.kind_name.{kind}", "en")
    lines = [line for line in note.splitlines() if line.startswith(f"- {name}:")]
    chars, max_word = len(text), None
    for line in lines:
        if cut := re.search(r"longer than ([\d,]+) (bytes|characters)", line):
            # a classic word's symbols are its characters and </w>
            max_word = int(cut[1].replace(",", "")) + (cut[2] == "characters")
        if used := re.search(r"first ([\d,]+) of the ([\d,]+) characters", line):
            chars = int(used[1].replace(",", ""))
            assert int(used[2].replace(",", "")) == len(text)
    return chars, max_word


def test_a_megabyte_of_chinese_without_spaces_is_learned_within_the_work_budget_and_the_page_says_so(upload):
    text = chinese_without_spaces(999_000)
    budget = WORK_BUDGET
    assert budget <= 200_000_000  # ~2 s of one core at 10 ns a unit: "a few seconds" for both kinds
    for byte_level in (True, False):  # as it is, either kind would cost more than the budget (2-7 times)
        assert training_work(text, 1000, byte_level).units > 2 * budget
    upload(text.encode("utf-8"))
    at = apphelpers.open_page(PAGE, {"tok_source": "upload", "tok_merges": "1000"})
    assert_clean(at)
    note = limit_note(at)
    for kind in ("byte", "classic"):
        chars, max_word = plan_said(note, kind, text)
        assert (chars, max_word) != (len(text), None), note  # something was limited, and said
        assert training_work(text[:chars], 1000, kind == "byte", max_word=max_word).units <= budget
        if kind == "byte":  # the merges table shows the byte-level kind: the training the note describes
            chars_b, cut_b = chars, max_word
    merges = [(r["left"], r["right"]) for r in at.dataframe[1].value.to_dict("records")]
    assert merges == BPETokenizer.train(text[:chars_b], 1000, max_word=cut_b).merges
    assert len(merges) == 1000


def test_the_limit_is_said_before_the_training_it_limits(upload):
    text = chinese_without_spaces(600_000, seed=1)
    upload(text.encode("utf-8"))
    at = apphelpers.open_page(PAGE, {"tok_source": "upload", "tok_merges": "1000"})
    order = [getattr(node, "value", None) for node in at.main]
    note = limit_note(at)
    trained = next(i for i, v in enumerate(order) if isinstance(v, str) and v.startswith("Training text:"))
    assert order.index(note) < trained  # drawn before the tokenizer it describes was trained


def test_shipped_and_ordinary_texts_are_learned_whole():
    at = apphelpers.open_page(PAGE, {"tok_source": "corpus_all", "tok_merges": "1000"})
    assert_clean(at)
    assert not any(m.startswith(t("tokenization.limit", "en")) for m in messages(at))
    files = sorted((ROOT / "assets" / "corpus").glob("*.txt"))
    corpus = "\n".join(p.read_text(encoding="utf-8") for p in files)
    merges = [(r["left"], r["right"]) for r in at.dataframe[1].value.to_dict("records")]
    assert merges == BPETokenizer.train(corpus, 1000).merges  # exactly Hugging Face's training


def test_without_a_file_the_page_names_the_size_the_browser_refuses():
    """A file over the uploader's limit never reaches the server (the browser shows its own red note):
    all the page can see is no file, so that message names the limit the browser enforces (finding 9)."""
    for lang in ("en", "zh"):
        at = apphelpers.open_page(PAGE, {"tok_source": "upload", "lang": lang})
        assert_clean(at)
        (uploader,) = at.get("file_uploader")
        limit = uploader.proto.max_upload_size_mb
        assert 1 <= limit <= st.get_option("server.maxUploadSize")
        expected = t("tokenization.upload.none_limit", lang, mb=limit)
        assert f" {limit} MB" in expected
        assert [m for m in messages(at) if m.startswith(expected)], messages(at)
