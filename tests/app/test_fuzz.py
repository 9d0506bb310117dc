"""Fuzzing every page through AppTest: odd sentences, random valid sizes, random URL parameters.

Whatever a student pastes or types into the URL, no page may raise, show an error element, or
label a token heatmap with anything but the run's own tokens. Bounded for CI: a handful of
derandomized examples per page (same examples on every machine), no example database, no deadline.
Measured here: about 1 minute for the whole file on 2 cores.
"""

from __future__ import annotations

import functools
import json
import numbers
import re

import pytest
from apphelpers import PAGE_SCRIPTS, assert_clean, open_app, open_page, plotly_array
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from figures.drawing.style import token_label
from ui.page.settings import (
    D_FF_CHOICES,
    D_MODEL_CHOICES,
    KEYS,
    MAX_TOKENS,
    NORM_CHOICES,
    NUM_LAYERS_RANGE,
    head_choices,
    validate,
)

# Few examples, reproducible: the same inputs on every run and every machine. No shrinking: one
# shrink of a 3,000-character sentence through AppTest took over five minutes; the failing example
# is printed as generated.
FUZZ = settings(
    max_examples=6,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Pieces that break naive text handling; hypothesis glues them to arbitrary code points.
AWKWARD = [
    "🙂", "👩‍👩‍👧‍👦", "🇨🇳", "👍🏽", "注意力", "한국어", "日本語です",
    "e\u0301", "a\u0300\u0301\u0302\u0303",  # combining marks (stacked)
    "مرحبا", "שלום", "\u202eRTL override\u202c", "\u200f\u200e",
    "\u200b", "\u200d", "\ufeff", "\u2060",  # zero-width
    "\x00", "\x07", "\x1b[31m", "\r\n", "\t", "\x7f", "\u0085", "\u2028",  # control / separators
    "\ud800", "\udfff",  # lone surrogates (Python str allows them; UTF-8 does not)
    "<script>alert(1)</script>", "**bold**", "$x$", "[a](http://example.com)", "`", "\\",
    "[PAD]", "[BOS]", "[UNK]", " ", "   ", "",
]  # fmt: skip

pieces = st.one_of(
    st.sampled_from(AWKWARD),
    st.text(st.characters(exclude_categories=()), max_size=12),  # any code point, surrogates included
)
sentences = st.one_of(
    st.lists(pieces, min_size=1, max_size=8).map("".join),
    st.builds(lambda p, n: p * n, st.sampled_from(["长", "a ", "🙂", "e\u0301", "x\u200b"]),
              st.integers(500, 3000)),  # very long: cut at MAX_CHARS, truncated at MAX_TOKENS
)  # fmt: skip


@st.composite
def sizes(draw) -> dict:
    """A valid sidebar combination: heads among the divisors of d_model. Big models are rare (slow)."""
    d_model = draw(st.sampled_from(D_MODEL_CHOICES[:4]) | st.just(D_MODEL_CHOICES[-1]))
    big = d_model >= 256
    return {
        "d_model": d_model,
        "num_heads": draw(st.sampled_from(head_choices(d_model))),
        "num_layers": draw(st.integers(NUM_LAYERS_RANGE[0], 2 if big else NUM_LAYERS_RANGE[1])),
        "d_ff": draw(st.sampled_from(D_FF_CHOICES[:4] if big else D_FF_CHOICES)),
        "seed": draw(st.integers(0, 2**31 - 1)),
        "norm": draw(st.sampled_from(NORM_CHOICES)),
    }


WIDGETS = {
    "d_model": "selectbox",
    "num_heads": "select_slider",
    "num_layers": "slider",
    "d_ff": "selectbox",
    "seed": "number_input",
    "norm": "radio",
}

# Pages whose charts label rows or columns with the sidebar sentence's tokens.
TOKEN_PAGES = {"pages/embeddings.py", "pages/positional.py", "pages/attention.py", "pages/model.py"}
MASKS_PAGE = "pages/masks.py"  # a padded batch: the sentence is row 1, cut at 32 tokens
MASKS_MAX_TOKENS = 31  # 32 with [BOS] on the decoder's side


@functools.lru_cache(maxsize=1)
def _labeller():
    """Random weights tokenize with the corpus BPE whatever the sizes: one small pipeline will do."""
    from core.tracing.pipeline import PipelineSettings, load_pipeline

    return load_pipeline(PipelineSettings(weights="random", d_model=16, num_heads=1, num_layers=1, d_ff=32))


def expected_labels(sentence: str) -> list[str] | None:
    """The tick labels of the run's tokens, or None when the page has nothing to run."""
    from core.tracing.pipeline import EmptyInput, run_pipeline

    try:
        run = run_pipeline(_labeller(), sentence, "", max_tokens=MAX_TOKENS)
    except EmptyInput:
        return None
    return [token_label(t) for t in run.src_tokens]


def tick_texts(at: AppTest) -> list[list[str]]:
    """The tick labels of every token axis, each at its position (None where a long axis is thinned
    out: with many tokens only every n-th is labelled, and the hover names each)."""
    out = []
    for chart in at.get("plotly_chart"):
        layout = json.loads(chart.proto.spec)["layout"]
        for name, axis in layout.items():
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict) and "ticktext" in axis:
                texts = list(axis["ticktext"])
                values = axis.get("tickvals")
                values = list(plotly_array(values)) if values is not None else list(range(len(texts)))
                # category rows named "token ·position" (figures.positional.sum_heatmaps): the position
                values = [int(v.rsplit("·", 1)[1]) if isinstance(v, str) and re.search(r" ·\d+$", v) else v
                          for v in values]
                if not all(isinstance(v, numbers.Real) and float(v).is_integer() and v >= 0 for v in values):
                    out.append(texts)
                    continue
                spread: list[str | None] = [None] * (int(max(values, default=-1)) + 1)
                for v, text in zip(values, texts, strict=False):
                    spread[int(v)] = text
                out.append(spread)
    return out


def labels_match(want: list[str], ticks: list[str | None]) -> bool:
    """Every labelled position shows its token, and the labels reach the last stretch of the axis."""
    if not ticks or len(ticks) > len(want) or ticks[0] is None:
        return False
    labelled = [i for i, text in enumerate(ticks) if text is not None]
    step = labelled[1] - labelled[0] if len(labelled) > 1 else 1
    return all(ticks[i] == want[i] for i in labelled) and labelled[-1] + step >= len(want)


def assert_no_error(at: AppTest) -> None:
    assert_clean(at)
    assert not at.error, [e.value for e in at.error]


def check_labels(at: AppTest, page: str, sentence: str) -> None:
    want = expected_labels(sentence)
    if want is None:
        return
    ticks = tick_texts(at)
    if page in TOKEN_PAGES:
        assert any(labels_match(want, t) for t in ticks), (want, [t[:5] for t in ticks])
    elif page == MASKS_PAGE:
        n = min(len(want), MASKS_MAX_TOKENS)
        assert any(want[:n] in (t[:n], t[1 : n + 1]) for t in ticks), (want, [t[:5] for t in ticks])




def as_sent_by_browser(text: str) -> str:
    """What a browser sends for this text: widget values travel as UTF-8 (protobuf), where a lone
    surrogate cannot exist; the browser sends U+FFFD instead (AppTest's encoder would raise)."""
    return "".join("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in text)


@FUZZ
@given(sentence=sentences, target=sentences)
def test_lone_surrogates_never_reach_the_model_and_never_raise(sentence, target):
    """Python code can still hand a lone surrogate to the settings (a test, a notebook): it is removed."""
    from core.tracing.pipeline import EmptyInput, run_pipeline

    checked = validate({"sentence": sentence, "target": target}).settings
    for text in (checked.sentence, checked.target):
        assert not any(0xD800 <= ord(ch) <= 0xDFFF for ch in text)
        text.encode("utf-8")  # encodable: it can go to the browser
    try:
        run_pipeline(_labeller(), checked.sentence, checked.target, max_tokens=MAX_TOKENS)
    except EmptyInput:
        pass


@pytest.mark.parametrize("page", PAGE_SCRIPTS)
@FUZZ
@given(sentence=sentences, size=sizes())
def test_any_sentence_and_sizes_on_every_page(page, sentence, size):
    sentence = as_sent_by_browser(sentence)
    at = open_app({"weights": "random"}, page=page)  # sizes free, byte-level BPE labels
    for key, value in size.items():
        getattr(at, WIDGETS[key])(key=key).set_value(value)
    at.text_area(key="sentence").input(sentence)
    at.run()
    assert_no_error(at)
    shown = validate({"sentence": sentence}).settings.sentence  # control characters removed, cut
    assert at.text_area(key="sentence").value == shown
    for key, value in size.items():
        assert getattr(at, WIDGETS[key])(key=key).value == value, key
    check_labels(at, page, shown)


# Every parameter a page reads from the URL, and a few it does not know.
PAGE_PARAMS = [
    "attn_kind", "attn_layer", "attn_head", "attn_query", "attn_bar", "attn_view", "attn_explore", "pe_tab",
    "mask_kind", "mask_row", "mask_head", "mask_extra_1", "mask_extra_2",
    "model_layer", "model_token", "model_head", "model_position", "model_topk", "model_temperature",
    "model_step", "model_view", "pe_dims", "pe_max_pos", "tok_source", "tok_kind", "tok_labels", "tok_merges",
    "tok_step", "tok_text", "train_task", "train_steps", "train_minutes", "embed", "x" * 300, "",
]  # fmt: skip
url_values = st.one_of(
    st.text(max_size=30),  # what a browser can send: valid UTF-8, so no lone surrogates
    st.sampled_from(["0", "-1", "1e309", "nan", "inf", "2.5", "９", "٣", "0x10", " 64 ", "64.0", "9" * 40,
                     "True", "[]", "{}", "%00", "<b>", "`x`", "a" * 5000]),
)  # fmt: skip
queries = st.dictionaries(
    st.sampled_from([*KEYS, *PAGE_PARAMS]), url_values | st.lists(url_values, max_size=3), max_size=6
)


@pytest.mark.parametrize("page", PAGE_SCRIPTS)
@FUZZ
@given(query=queries)
def test_any_url_parameters_on_every_page(page, query):
    at = open_page(page, query)
    assert_no_error(at)
    sentence = at.text_area(key="sentence").value
    check_labels(at, page, sentence)
