"""The attention-score exercise claims to be the model's own score; for every way of encoding positions
the app offers it is: the number the exercise computes, on the unrounded numbers, equals the score the
model's softmax reads (``AttentionTrace.scores``, ALiBi's bias included; RoPE's q and k rotated)."""

import math

import pytest

import core.tracing.pipeline as P
from core.model.positional import POSITIONS, alibi_slopes
from core.teaching.exercises import exercises_for
from core.tracing.run import SentenceRun

MIXED = "注意力就是一切 Attention is all you need"


def score_exercise(run: SentenceRun, seed: int):
    (exercise,) = [e for e in exercises_for(run, seed) if e.kind == "attention_score"]
    return exercise


@pytest.fixture(scope="module", params=POSITIONS)
def run(request):
    settings = P.PipelineSettings(weights="random", positions=request.param)
    return SentenceRun(P.load_pipeline(settings), MIXED)


@pytest.mark.parametrize("seed", range(6))
def test_the_exercise_computes_the_models_own_score(run, seed):
    e = score_exercise(run, seed)
    src = e.params["source"]
    assert src["of_model"]
    attn = run.encoder[0].self_attn
    model_score = float(attn.scores[0, 0, src["query"], src["key"]])
    assert e.unrounded == pytest.approx(model_score, abs=1e-5)
    # the answer from the numbers shown: q·k/√d_k of the rounded numbers, plus the bias as given
    dot = math.fsum(a * b for a, b in zip(e.given["q"], e.given["k"], strict=True)) + e.given.get("rest", 0.0)
    assert e.answer == pytest.approx(dot / math.sqrt(e.given["d_k"]) + e.given.get("bias", 0.0), abs=1e-12)


def test_under_alibi_the_bias_is_given_and_is_minus_slope_times_distance():
    """The issue's case: random weights with ALiBi, the mixed sentence, layer 1 head 1."""
    run = SentenceRun(P.load_pipeline(P.PipelineSettings(weights="random", positions="alibi")), MIXED)
    slope = float(alibi_slopes(run.config.num_heads)[0])
    biased = 0
    for seed in range(8):
        e = score_exercise(run, seed)
        src = e.params["source"]
        distance = abs(src["query"] - src["key"])
        assert src["positions"] == "alibi" and src["slope"] == slope
        assert e.given["bias"] == pytest.approx(round(-slope * distance, 2), abs=1e-12)
        steps = {s["name"]: s for s in e.solution}
        assert steps["bias"]["value"] == e.given["bias"]
        assert steps["result"]["value"] == pytest.approx(steps["scaled"]["value"] + e.given["bias"])
        biased += distance > 0
    assert biased  # at least one pair where the bias is not 0


def test_without_alibi_no_bias_is_given():
    for positions in ("sinusoidal", "learned", "rope"):
        run = SentenceRun(P.load_pipeline(P.PipelineSettings(weights="random", positions=positions)), MIXED)
        e = score_exercise(run, 0)
        assert "bias" not in e.given and "bias" not in {s["name"] for s in e.solution}
        assert e.params["source"].get("positions") == (positions if positions == "rope" else None)
