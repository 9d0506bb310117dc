"""Words a class reads on a projector, checked against the model on screen (issue 38, items 1–3, 5, 6).

1. The attention-score exercise says it is the model's own score: under ALiBi it gives the bias and
   adds it, under RoPE it says q and k are the rotated vectors.
2. The step by step's scaled scores under ALiBi: both sides of the equation carry + B.
3. Grouped-query sentences follow the model's grouping (one key/value head: multi-query).
5. Dimensions count from 0 everywhere, as positions do.
6. The output equation has + b where the model's output layer has a bias.
"""

from __future__ import annotations

import json
import re

import pytest
from apphelpers import assert_clean, open_page
from test_exercises_ui import card_text, expected, open_card, reference_run, tables

from i18n import t

MIXED = "注意力就是一切 Attention is all you need"


# -- 1. the attention-score exercise -------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_score_exercise_under_alibi_gives_the_bias_and_its_answer_is_the_models_score(lang):
    query = {"positions": "alibi", "sentence": MIXED, "lang": lang}
    run = reference_run(query)
    ex = expected(run, "attention_score")
    src = ex.params["source"]
    attn = run.encoder[0].self_attn
    model = float(attn.scores[0, 0, src["query"], src["key"]])
    bias = float(attn.bias[0, 0, src["query"], src["key"]])
    at = open_card("5", query)
    text = card_text(at)
    assert t("exercises.source.attention_score_alibi", lang) in text
    assert f"b = {bias:.2f}" in text.replace("**", "")  # the bias, as given
    # typed: the model's own score, which the page then calls right and the model's
    at.text_input(key="exercise_self_card_answer").input(f"{model:.3f}")
    at.button(key="exercise_self_card_check").click().run()
    assert_clean(at)
    assert at.success and f"{model:.4f}" in at.success[0].value, [s.value for s in at.success]


def test_the_score_exercise_under_rope_says_q_and_k_are_rotated():
    at = open_card("5", {"positions": "rope", "sentence": MIXED})
    text = card_text(at)
    assert t("exercises.source.attention_score_rope", "en") in text
    assert t("exercises.source.attention_score", "en") not in text


# -- 2. the scaled scores under ALiBi --------------------------------------------------------------------


def scaled_equation(at) -> str:
    latex = [x.value.strip("$\n") for x in at.latex]
    (line,) = [x for x in latex if x.startswith(r"Q K^\top \quad\rightarrow")]
    return line.split(r"\rightarrow\quad", 1)[1].split(r",\qquad", 1)[0]


@pytest.mark.parametrize(("positions", "bias"), [("alibi", True), ("sinusoidal", False), ("rope", False)])
def test_every_side_of_the_scaled_scores_equation_has_the_bias_when_the_model_adds_one(positions, bias):
    query = {"positions": positions, "sentence": MIXED, "attn_steps": "true"}
    at = open_page("pages/attention.py", query)
    assert_clean(at)
    sides = [side.strip() for side in scaled_equation(at).split("=")]
    assert len(sides) == 2 and all(r"\frac{Q K^\top}" in side for side in sides), sides
    assert all(side.endswith("+ B") == bias for side in sides), sides


# -- 5. dimensions count from 0 ------------------------------------------------------------------------


def test_the_layernorm_exercise_names_the_dimensions_it_shows_from_0():
    run = reference_run()
    ex = expected(run, "layernorm_entry")
    start, end = ex.params["source"]["dims"]
    at = open_card("9")
    text = card_text(at)
    assert f"dimensions {start}–{end - 1} " in text  # the model's dimensions start … end − 1
    (given,) = tables(at)
    assert [str(c) for c in given.columns] == [
        f"j = {c}" if c == ex.given["j"] else str(c) for c in range(len(ex.given["x"]))
    ]
    assert f"entry {ex.given['j']} of" in text


def test_the_score_exercise_numbers_dimensions_from_0():
    run = reference_run()
    ex = expected(run, "attention_score")
    at = open_card("5")
    (given,) = tables(at)
    assert [str(c) for c in given.columns] == [str(c) for c in range(len(ex.given["q"]))]
    assert r"\sum_{i=0}^{d_k-1}" in card_text(at)


def test_the_softmax_exercise_names_its_keys_by_position():
    run = reference_run()
    ex = expected(run, "softmax_entry")
    keys, j = ex.params["source"]["keys"], ex.given["j"]
    at = open_card("6")
    (given,) = tables(at)
    assert [str(c) for c in given.columns] == [f"j = {p}" if c == j else str(p) for c, p in enumerate(keys)]
    assert f"key at position {keys[j]} " in card_text(at)


def test_the_neuron_view_numbers_dimensions_from_0():
    at = open_page("pages/attention.py", {"attn_explore": "neuron_view", "d_model": "32", "num_heads": "4"})
    assert_clean(at)
    bars = [
        trace for chart in at.get("plotly_chart") for trace in json.loads(chart.proto.spec)["data"]
        if trace.get("type") == "bar"
    ]
    assert bars
    for trace in bars:
        assert list(trace["x"]) == list(range(8)), trace["x"]
    assert any(r"\sum_{i=0}^{d_k-1} q_i" in x.value for x in at.latex)  # its dot product too


def test_sums_over_dimensions_and_positions_run_from_0():
    model = open_page("pages/model.py", {"model_view": "residual_ffn"})
    overview = open_page("pages/overview.py", {"weights": "minilm"}, weights=None)
    latex = [x.value for at in (model, overview) for x in at.latex]
    assert not any(re.search(r"sum_\{i=1\}", x) for x in latex), latex
    assert any(r"\sum_{i=0}^{d-1} v_i" in x for x in latex)
    assert any(r"\sum_{i=0}^{S-1} \text{memory}_i" in x for x in latex)  # the encoder's mean over positions


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize(
    ("page", "query"),
    [
        ("pages/embeddings.py", {}),
        ("pages/positional.py", {}),
        ("pages/attention.py", {}),
        ("pages/model.py", {"model_view": "residual_ffn"}),  # its residual heatmap's dimension axis
    ],
)
def test_each_page_that_numbers_dimensions_says_they_count_from_0(page, query, lang):
    at = open_page(page, {"lang": lang, **query})
    assert_clean(at)
    said = t(f"{page.removeprefix('pages/').removesuffix('.py')}.dims_from_0", lang)
    shown = [x.value for x in (*at.caption, *at.markdown)]
    assert sum(said in s for s in shown) == 1, shown
