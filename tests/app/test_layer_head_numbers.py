"""One numbering for layers and heads on every page (issue 38, item 4): they count from 1, as the
Attention page, the README and the paper's head₁ … head_h do (positions and dimensions count from 0).

Every page is run with the small GPT and with a random model of 3 layers × 4 heads, in English and
中文, with the views that name layers and heads opened (tabs, the step by step, the lecture's attention
slides, a finished live training of the language model); every text the page draws is collected
(Markdown, captions, alerts, headers, widget labels and options, table cells, and each plotly
figure's titles, axis titles and tick texts, annotations, trace names and hover templates), and a layer
or head label numbered from 0 ("head 0", "layer 0", "head 1.0", "头 0", "第 0 层") fails.
"""

from __future__ import annotations

import json
import re

import pytest
from apphelpers import PAGE_SCRIPTS, assert_clean, open_app, open_page
from test_training_lm import tiny_lm, train_lm_tiny  # noqa: F401  (tiny_lm: a fixture)

RANDOM = {"weights": "random", "num_layers": "3", "num_heads": "4", "d_model": "32", "d_ff": "64"}
GPT = {"weights": "gpt"}

# A layer or head label counted from 0: "head 0", "heads 0–1", "layer 0", "head 1.0" (layer.head),
# "L0", "头 0", "第 0 层", "第 0 个头"
ZERO = re.compile(
    r"\b(?:heads?|layers?)\s*(?:0(?:\.\d+)?|\d+\.0)(?!\d)|\bL0\b"
    r"|头\s*(?:0(?:\.\d+)?|\d+\.0)(?!\d)|第\s*0\s*(?:层|个头|头)",
    re.IGNORECASE,
)

ONE = re.compile(r"\b(?:head|layer)\s*1(?!\d)|头\s*1(?!\d)|第\s*1\s*(?:层|个头|头)", re.IGNORECASE)

# the views each page draws on demand: opened one after another
VIEWS = {
    "pages/attention.py": [
        {},
        {"attn_steps": "true"},
        {"attn_view": "grid"},
        {"attn_view": "query", "attn_explore": "neuron_view"},
    ],
    "pages/model.py": [{"model_view": v} for v in ("residual_ffn", "stream", "output", "decoding")],
    "pages/positional.py": [{"pe_tab": v} for v in ("sinusoidal", "rope", "alibi")],
    "pages/masks.py": [{}],
}


def plotly_texts(spec: dict) -> list[str]:
    """The words of a figure: titles, axis titles and tick texts, annotations, trace names, hovers."""
    out = []
    layout = spec.get("layout", {})
    for key, value in layout.items():
        if key == "title" or key.startswith(("xaxis", "yaxis")):
            if isinstance(value, dict):
                title = value.get("title")
                out.append(title.get("text", "") if isinstance(title, dict) else str(title or ""))
                out += [str(v) for v in value.get("ticktext") or []]
                if key == "title":
                    out.append(value.get("text", ""))
    out += [str(a.get("text", "")) for a in layout.get("annotations") or []]
    for trace in spec.get("data", []):
        out.append(str(trace.get("name") or ""))
        hover = str(trace.get("hovertemplate") or "")
        out.append(re.sub(r"%\{[^}]*\}", "", hover))  # the template's own words, not the values
        for key in ("text", "hovertext"):
            value = trace.get(key)
            if isinstance(value, str):
                out.append(value)
            elif isinstance(value, list):
                out += [str(v) for v in value if isinstance(v, str)]
    return out


def page_texts(at) -> list[str]:
    out = []
    for element in (*at.markdown, *at.caption, *at.header, *at.subheader, *at.title, *at.info,
                    *at.warning, *at.success, *at.error):
        out.append(str(element.value))
    for element in (*at.expander, *at.tabs):
        out.append(str(element.label))
    for widget in (*at.selectbox, *at.radio, *at.multiselect, *at.select_slider):
        out.append(str(widget.label))
        try:
            out += [str(o) for o in widget.options]
        except Exception:  # a widget without formatted options
            pass
    for frame in (*at.dataframe, *at.table):
        value = frame.value
        out += [str(c) for c in value.columns] + [str(i) for i in value.index]
        for column in value.columns:
            cells = [str(v) for v in value[column]]
            name = str(column).lower()
            if name in ("layer", "head", "层", "头"):  # a column of bare numbers: they name layers/heads
                cells = [f"{column} {v}" for v in cells]
            out += cells
    for chart in at.get("plotly_chart"):
        out += plotly_texts(json.loads(chart.proto.spec))
    return out


def zero_labels(texts: list[str]) -> list[str]:
    return [text for text in texts if ZERO.search(text)]


def test_the_pattern_finds_labels_from_0_and_nothing_else():
    bad = ["head 0", "Head 0 · other", "layer 0", "heads 0–3", "(head 1.0)", "head 0.1", "头 0", "第 0 层",
           "第 0 个头", "L0", "layer 1.0 head"]
    good = ["head 1", "head 10", "layer 2 head 1", "head 2.1", "layer 1", "positions 0…t", "key 0",
            "头 1", "第 1 层", "第 10 层", "0.1", "heads 1–4", "dimension 0", "temperature 1.0"]
    assert [b for b in bad if not ZERO.search(b)] == []
    assert [g for g in good if ZERO.search(g)] == []


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model", ["gpt", "random"])
@pytest.mark.parametrize("page", PAGE_SCRIPTS)
def test_no_page_numbers_a_layer_or_a_head_from_0(page, model, lang):
    base = {**(GPT if model == "gpt" else RANDOM), "lang": lang}
    if page == "pages/lecture.py":  # the slides that name layers and heads (one stack: no encoder)
        views = [{"step": s} for s in (("5", "6") if model == "gpt" else ("5", "6", "7", "8"))]
    else:
        views = VIEWS.get(page, [{}])
    found, named = [], []
    for view in views:
        at = open_page(page, {**base, **view}, weights=None)
        assert_clean(at)
        texts = page_texts(at)
        assert texts, (page, view)
        found += [(view, text) for text in zero_labels(texts)]
        named += [text for text in texts if ONE.search(text)]
    assert found == []
    if page in ("pages/attention.py", "pages/lecture.py", "pages/masks.py"):
        assert named, page  # the scan reads the labels these pages draw


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_finished_language_model_training_names_its_best_head_from_1(lang, tiny_lm, monkeypatch):  # noqa: F811
    if lang == "zh":  # as test_training_lm.py: AppTest formats the sidebar's radios outside the session
        import ui.page.lang

        monkeypatch.setattr(ui.page.lang, "current_lang", lambda: "zh")
    at = open_app({"lang": lang}, page="pages/training.py")
    job = train_lm_tiny(at)
    assert zero_labels(page_texts(at)) == []
    (done,) = [s.value for s in at.success]
    pm = job.result.metrics["induction"]["prefix_matching"]
    _, (i, h) = max((score, (i, h)) for i, row in enumerate(pm) for h, score in enumerate(row))
    assert ("layer" if lang == "en" else "层") in done
    assert (f"layer {i + 1} head {h + 1}" if lang == "en" else f"第 {i + 1} 层第 {h + 1} 头") in done
