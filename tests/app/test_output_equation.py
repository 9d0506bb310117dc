"""Every output equation follows the model (issue 38, item 6): softmax(h W + b) where the model's
output layer adds a bias (the 汉字→拼音 checkpoint, random weights), softmax(h W) where it has none
(the small GPT: W = Eᵀ, tied). The reference is the model itself: its output layer's bias tensor."""

from __future__ import annotations

import re

import pytest
from apphelpers import assert_clean, open_page

import core.tracing.pipeline as P

# weights, the Lecture page's output step for that model (one stack: no encoder, no cross-attention)
MODELS = [("trained", "11"), ("random", "11"), ("gpt", "9")]


def output_equations(at) -> list[str]:
    """The LaTeX that writes the output layer: a softmax of h times an output matrix."""
    latex = [x.value for x in at.latex]
    return [x for x in latex if re.search(r"softmax\}?\}?(\\big)?\(\(?h_[it]\\?,? ?W", x)]


def has_bias(weights: str) -> bool:
    model = P.load_pipeline(P.PipelineSettings(weights=weights)).model
    return model.generator.bias is not None


@pytest.mark.parametrize(("weights", "step"), MODELS)
def test_the_output_equation_has_b_exactly_when_the_output_layer_has_a_bias(weights, step):
    bias = has_bias(weights)
    assert bias == (weights != "gpt")  # the three models differ where the issue says
    pages = [
        ("pages/overview.py", {}),
        ("pages/model.py", {"model_view": "output"}),
        ("pages/lecture.py", {"step": step}),
    ]
    wrong = []
    for page, query in pages:
        at = open_page(page, query, weights=weights)
        assert_clean(at)
        found = output_equations(at)
        assert found, (page, [x.value for x in at.latex])
        wrong += [(page, equation) for equation in found if ("+ b" in equation) != bias]
    assert wrong == []
