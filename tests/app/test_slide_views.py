"""Slides as data: the Lecture page draws exactly the step's ``SlideView`` (its heading, text, equation,
note, the sentence shown and the figure's data), and the view's JSON, what a follower's page draws,
carries the same, for every step of every kind of weights the app offers."""

from __future__ import annotations

import json

import pytest
from apphelpers import assert_clean, open_page, plotly_specs

import figures.classroom.lecture as lecture
from ui.page.settings import checkpoint_available, gpt_available, minilm_available

SENTENCE = "slides as data 数据 🙂"  # no other test's sentence: every view here is built afresh
WEIGHTS = ["random", "trained", "gpt", "minilm", "hf:gpt2-tiny", "hf:qwen2-tiny", "hf:bert-tiny"]


def test_every_weights_choice_is_here():
    """The list above is the app's: the session's weights are trained in the browser (tests/app/
    test_page_training.py shows them on every page), every other choice is here."""
    assert checkpoint_available() and gpt_available() and minilm_available()
    from core.names import Weights

    assert {w.split(":")[0] for w in WEIGHTS} == {w.value for w in Weights} - {"session"}


@pytest.fixture
def built(monkeypatch):
    """Every view the page builds, in order."""
    views = []
    real = lecture.slide_view
    monkeypatch.setattr(lecture, "slide_view", lambda *a, **k: views.append(real(*a, **k)) or views[-1])
    return views


def lecture_page(weights: str, step: int, lang: str):
    query = {"sentence": SENTENCE, "step": str(step), "lang": lang}
    at = open_page("pages/lecture.py", query, weights=weights)
    assert_clean(at)
    return at


def figure_data(spec: dict) -> list:
    return spec["data"]


@pytest.mark.usefixtures("model_folders")
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("weights", WEIGHTS)
def test_the_page_draws_the_view_and_its_json_carries_the_same(built, weights: str, lang: str):
    step, total = 1, None
    while total is None or step <= total:
        at = lecture_page(weights, step, lang)
        assert len(built) == step, f"{weights} step {step}: the page built no view of its own"
        view = built[-1]
        total = view.total
        assert view.step == step
        assert at.header[0].value == view.heading
        shown = [m.value for m in at.markdown]
        assert view.text in shown
        if view.note:
            assert view.note in [c.value for c in at.caption]
        equations = [x.value.removeprefix("$$\n").removesuffix("\n$$") for x in at.latex]  # st.latex's $$
        assert equations == ([view.latex] if view.latex else [])
        if view.code is not None:
            assert any(view.code in c.value for c in at.code)
        page_figure = plotly_specs(at)[0]
        sent = json.loads(lecture.view_json(view))
        assert figure_data(page_figure) == figure_data(sent["figure"])
        assert page_figure["layout"]["height"] == sent["figure"]["layout"]["height"]
        for key in ("heading", "text", "latex", "code", "code_label", "note", "step", "total", "wide"):
            assert sent[key] == getattr(view, key), key
        step += 1
    assert total >= 7  # an encoder only (MiniLM, BERT) has 7 steps; the paper's model 12
