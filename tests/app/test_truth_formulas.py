"""The Attention page's own equations follow the model's positions: ALiBi's bias and RoPE's rotation are
in the formula exactly when the model has them."""

from __future__ import annotations

import pytest
from apphelpers import assert_clean, open_page

from i18n import t


def latex(at) -> list[str]:
    return [e.value.strip("$\n") for e in at.latex]  # st.latex sends "$$\n…\n$$"


@pytest.mark.parametrize("positions", ["sinusoidal", "learned", "rope", "alibi"])
def test_the_attention_equation_is_this_models(positions):
    at = open_page("pages/attention.py", {"positions": positions, "num_heads": "2"})
    assert_clean(at)
    top = latex(at)[0]
    assert top.startswith(r"\mathrm{Attention}(Q, K, V)")
    assert ("+ B" in top) == (positions == "alibi")
    assert (r"(R\,Q)(R\,K)^\top" in top) == (positions == "rope")


@pytest.mark.parametrize(("kind", "biased"), [("encoder", True), ("decoder", True), ("cross", False)])
def test_the_head_views_weights_include_alibis_bias_where_the_scores_do(kind, biased):
    query = {"positions": "alibi", "num_heads": "2", "hv_kind": t(f"attention.kind.{kind}", "en")}
    at = open_page("pages/attention.py", query)
    assert_clean(at)
    head_view = next(e for e in latex(at) if e.startswith(r"\alpha_{ij}"))
    assert ("b_{ij}" in head_view) == biased


@pytest.mark.parametrize(("positions", "sum_"), [
    ("sinusoidal", r"\sqrt{d_\text{model}} + PE(pos)"),
    ("learned", r"\sqrt{d_\text{model}} + P[pos]"),
    ("rope", r"\sqrt{d_\text{model}}"),
    ("alibi", r"\sqrt{d_\text{model}}"),
])
def test_the_positional_pages_encoder_input_is_this_models(positions, sum_):
    at = open_page("pages/positional.py", {"positions": positions, "num_heads": "2"})
    assert_clean(at)
    (equation,) = [e for e in latex(at) if e.startswith("x_{pos} = E[")]
    assert equation.endswith(sum_) and "LayerNorm" not in equation  # random weights: scaled, no norm


def test_the_positional_pages_learned_sum_draws_the_models_own_rows():
    from apphelpers import plotly_array, plotly_specs

    from core.tracing.pipeline import PipelineSettings, load_pipeline, run_pipeline
    from ui.page.settings import default_sentence

    at = open_page("pages/positional.py", {"positions": "learned", "d_model": "32", "num_heads": "2"})
    assert_clean(at)
    spec = next(s for s in plotly_specs(at) if any(
        a.get("text") == t("positional.sum.title.learned", "en") for a in s["layout"].get("annotations", [])))
    pipe = load_pipeline(PipelineSettings(weights="random", d_model=32, num_heads=2, d_ff=128,
                                          positions="learned"))
    run = run_pipeline(pipe, default_sentence("random"))
    middle = plotly_array(spec["data"][1]["z"]).reshape(len(run.src_tokens), 32)
    assert middle == pytest.approx(run.trace.positional[: len(run.src_tokens)].double().numpy(), abs=1e-6)
