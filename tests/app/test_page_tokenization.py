"""The Tokenization page through AppTest, opened cold: film, merges table, ids, specials, bad input.

AppTest has no file-uploader element, so the upload path is tested here only without a file (the
message and the fallback); the bytes -> text checks (too big, binary, not UTF-8) are in
tests/figures/test_tokenization.py on ``read_upload``.
"""

import html
import json

import apphelpers
import pytest
from apphelpers import ROOT, assert_clean, messages
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

from core.bpe import BPETokenizer
from figures.tokenization import TEXTBOOK_CORPUS, box_label, display_text
from ui.settings import DEFAULT_SENTENCE, MAX_CHARS

PAGE = str(ROOT / "pages" / "tokenization.py")
EN_ZH = (ROOT / "assets" / "corpus" / "en_zh.txt").read_text(encoding="utf-8")


def open_page(query: dict | None = None) -> AppTest:
    return apphelpers.open_page("pages/tokenization.py", query)


def title(spec: dict) -> str:
    return html.unescape(spec["layout"].get("title", {}).get("text", ""))


def chart(at: AppTest, starts: str) -> dict:
    found = [s for s in specs(at) if title(s).startswith(starts)]
    assert len(found) == 1, [title(s) for s in specs(at)]
    return found[0]


def trace(spec: dict, name: str) -> dict:
    return next(t for t in spec["data"] if t.get("name") == name)


def labels(spec: dict) -> list[str]:
    return trace(spec, "labels")["text"]


def ids(spec: dict) -> list[int]:
    return [int(s) for s in trace(spec, "ids")["text"]]


def table(at: AppTest, index: int) -> list[dict]:
    return at.dataframe[index].value.to_dict("records")


@pytest.fixture(scope="module")
def default_page():
    return open_page()


def test_default_page_shows_the_last_merge_step_of_the_default_sentence(default_page):
    at = default_page
    assert_clean(at)
    assert at.title[0].value == "Tokenization"
    tok = BPETokenizer.train(EN_ZH, 300)
    assert at.slider(key="tok_merges").value == 300
    assert at.slider(key="tok_step").value == 300 and at.slider(key="tok_step").max == 300
    film = chart(at, "Step 300 of 300")
    expected = tok.tokenize(DEFAULT_SENTENCE)
    assert labels(film) == [box_label(display_text(tok, t)) for t in expected]
    assert ids(film) == tok.encode(DEFAULT_SENTENCE)
    merges = table(at, 1)  # [0] is the textbook table inside the expander
    assert [(r["left"], r["right"]) for r in merges] == tok.merges
    # [BOS] + sentence + [EOS]: one token each, reserved ids 2 and 3, the rest equal to encode().
    special = chart(at, "[BOS] + sentence + [EOS]")
    assert ids(special) == [2, *tok.encode(DEFAULT_SENTENCE), 3]
    assert labels(special)[0] == "[BOS]" and labels(special)[-1] == "[EOS]"
    specials = next(
        r
        for r in (at.dataframe[i].value.to_dict("records") for i in range(len(at.dataframe)))
        if r and set(r[0]) == {"token", "id"}
    )
    assert [(r["token"], r["id"]) for r in specials] == [
        ("[PAD]", 0),
        ("[UNK]", 1),
        ("[BOS]", 2),
        ("[EOS]", 3),
        ("[MASK]", 4),
    ]


def test_bytes_table_and_classic_vs_byte_level(default_page):
    at = default_page
    rows = next(
        at.dataframe[i].value.to_dict("records")
        for i in range(len(at.dataframe))
        if "UTF-8 bytes (hex)" in at.dataframe[i].value.columns
    )
    zhu = next(r for r in rows if r["character"] == "注")
    assert zhu["UTF-8 bytes (hex)"] == " ".join(f"{b:02X}" for b in "注".encode())
    assert zhu["GPT-2 spelling"] == "æ³¨"
    side = [s for s in specs(at) if not title(s) and any(t.get("name") == "ids" for t in s["data"])]
    classic, byte = BPETokenizer.train(EN_ZH, 300, byte_level=False), BPETokenizer.train(EN_ZH, 300)
    assert [ids(s) for s in side[:2]] == [classic.encode(DEFAULT_SENTENCE), byte.encode(DEFAULT_SENTENCE)]
    assert "&lt;/w&gt;" in labels(side[0])  # classic words end in </w>, escaped for plotly


def test_merges_and_step_change_the_film():
    at = open_page()
    at.slider(key="tok_merges").set_value(50).run()
    assert_clean(at)
    assert at.slider(key="tok_step").max == 50 and at.slider(key="tok_step").value == 50  # clamped
    at.slider(key="tok_step").set_value(10).run()
    tok = BPETokenizer.train(EN_ZH, 50)
    film = chart(at, "Step 10 of 50")
    segs = tok.segmentations(DEFAULT_SENTENCE)
    assert labels(film) == [box_label(display_text(tok, t)) for t in segs[10]]
    assert len(table(at, 1)) == 50
    at.radio(key="tok_labels").set_value("spelling").run()
    assert labels(chart(at, "Step 10 of 50")) == [box_label(t) for t in segs[10]]


def test_pasted_text_trains_the_tokenizer_and_empty_paste_falls_back():
    at = open_page()
    at.selectbox(key="tok_source").set_value("pasted text").run()
    assert_clean(at)
    assert any("pasted text is empty" in m for m in messages(at))
    assert [(r["left"], r["right"]) for r in table(at, 1)] == BPETokenizer.train(TEXTBOOK_CORPUS, 300).merges
    text = "hug hug hug pug pug bun bun hugs 抱抱"
    at.text_area(key="tok_text").set_value(text).run()
    at.slider(key="tok_merges").set_value(5).run()
    at.radio(key="tok_kind").set_value("classic").run()
    assert_clean(at)
    assert not any("pasted text is empty" in m for m in messages(at))
    tok = BPETokenizer.train(text, 5, byte_level=False)
    assert [(r["left"], r["right"]) for r in table(at, 1)] == tok.merges
    assert at.slider(key="tok_step").max == len(tok.merges)


def test_textbook_example_with_classic_bpe():
    at = open_page({"tok_source": "textbook example", "tok_kind": "classic", "sentence": "lowest"})
    assert_clean(at)
    tok = BPETokenizer.train(TEXTBOOK_CORPUS, 300, byte_level=False)
    assert len(tok.merges) == 15
    assert any("ran out of pairs after 15 merges" in m for m in messages(at))
    assert [(r["left"], r["right"]) for r in table(at, 1)][:3] == [("e", "s"), ("es", "t"), ("est", "</w>")]
    film = chart(at, "Step 15 of 15")
    assert [html.unescape(s) for s in labels(film)] == ["low", "est</w>"]


def test_upload_without_a_file_says_so_and_uses_the_corpus():
    at = open_page({"tok_source": "uploaded .txt"})
    assert_clean(at)
    assert any("No file uploaded yet" in m for m in messages(at))
    assert [(r["left"], r["right"]) for r in table(at, 1)] == BPETokenizer.train(EN_ZH, 300).merges


def test_play_steps_through_the_merges_that_change_the_sentence():
    at = open_page()
    tok = BPETokenizer.train(EN_ZH, 300)
    segs = tok.segmentations(DEFAULT_SENTENCE)
    changed = [k for k in range(1, len(segs)) if segs[k] != segs[k - 1]]
    at.button(key="tok_play").click().run()  # at the end: starts again from step 0
    assert_clean(at)
    assert at.slider(key="tok_step").value == changed[0]
    assert at.button(key="tok_play").label == "Pause"
    at.run()  # each run while playing is one tick
    assert at.slider(key="tok_step").value == changed[1]
    assert title(specs(at)[0]).startswith(f"Step {changed[1]} of 300")
    at.button(key="tok_play").click().run()
    assert at.button(key="tok_play").label == "Play"
    at.run()
    assert at.slider(key="tok_step").value == changed[1]


@pytest.mark.parametrize(
    "sentence",
    ["<script>alert(1)</script>", "中文 and 😀👍🏽 emoji", "[BOS] **bold** <b>x</b> [EOS]"],
)
def test_awkward_sentences_render_as_text(sentence):
    at = open_page({"sentence": sentence})
    assert_clean(at)
    tok = BPETokenizer.train(EN_ZH, 300)
    film = chart(at, "Step 300 of 300")
    assert ids(film) == tok.encode(sentence)
    everything = json.dumps(specs(at), ensure_ascii=False)
    assert "<script>" not in everything and "<b>x" not in everything
    assert "&lt;" in everything
    for md in at.markdown:  # no user text goes through Markdown
        assert "<script>" not in md.value and "**bold**" not in md.value
    assert tok.decode(tok.encode(sentence)) == sentence


def test_empty_and_huge_sentences():
    at = open_page({"sentence": ""})
    assert_clean(at)
    assert any("The sentence is empty" in m for m in messages(at))
    assert not [s for s in specs(at) if title(s).startswith("Step")]
    assert len(table(at, 1)) == 300  # the merges table does not need a sentence
    at = open_page({"sentence": "汉字" * 5000})
    assert_clean(at)
    assert any(f"only the first {MAX_CHARS:,} are used" in m for m in messages(at))
    film = chart(at, "Step 300 of 300")
    assert len(labels(film)) <= 160
    assert any("The film shows the first" in c.value for c in at.caption)


def test_tampered_page_parameters_fall_back_with_a_message():
    at = open_page(
        {
            "tok_step": "abc",
            "tok_merges": "99999",
            "tok_source": "../etc",
            "tok_kind": "x",
            "tok_labels": "<b>",
        }
    )
    assert_clean(at)
    shown = messages(at)
    for key in ("tok_step", "tok_merges", "tok_source", "tok_kind", "tok_labels"):
        assert any(m.startswith(f"Ignored {key}=") for m in shown), (key, shown)
    assert at.slider(key="tok_merges").value == 300 and at.slider(key="tok_step").value == 300
    assert at.selectbox(key="tok_source").value == "en_zh.txt (shipped)"
    at = open_page({"tok_merges": "40", "tok_step": "7"})
    assert_clean(at)
    assert at.slider(key="tok_step").value == 7
    assert chart(at, "Step 7 of 40")
    at = open_page({"tok_merges": "40", "tok_step": "300"})  # valid number, beyond the merges
    assert any(m.startswith("Ignored tok_step=`300`") for m in messages(at))
    assert at.slider(key="tok_step").value == 40
