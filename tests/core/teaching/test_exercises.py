"""core.teaching.exercises: compute-it-yourself exercises. Each answer is checked against an independent
reference on the numbers shown (core.model.positional, torch, torch.softmax, torch's layer_norm, core's BPE
and
Hugging Face `tokenizers`), the tolerances hold what they promise, and the parser reads what students
type without ever raising."""

import itertools
import math
import random

import pytest
import torch
import torch.nn.functional as F

import core.tracing.pipeline as P
from core.model.positional import sinusoidal_encoding
from core.teaching.exercises import (
    MAX_TYPED,
    PE_TOLERANCE,
    Exercise,
    Verdict,
    attention_score,
    bpe_count,
    check,
    exercises_for,
    layernorm_entry,
    parse_number,
    pe_entry,
    softmax_entry,
)
from core.tokenizers.bpe import BPETokenizer
from core.tracing.run import SentenceRun
from tests.hf_reference import hf_count

SENTENCE = "重庆很重要"
MIXED = "注意力就是一切 Attention is all you need"


@pytest.fixture(scope="module")
def minilm(minilm_pipe):
    return SentenceRun(minilm_pipe, 'The cat sat on the mat')


def rounded(xs, decimals=2):
    return torch.tensor([round(float(x), decimals) for x in xs], dtype=torch.float64)


def steps(exercise: Exercise) -> dict:
    return {s["name"]: s for s in exercise.solution}


# -- PE -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pos", "i", "d_model"),
    [(0, 0, 4), (0, 1, 4), (1, 0, 128), (3, 7, 128), (17, 64, 128), (5, 6, 7), (63, 31, 64), (2, 2, 6)],
)
def test_pe_entry_against_sinusoidal_encoding(pos, i, d_model):
    e = pe_entry(pos, i, d_model)
    assert e.answer == pytest.approx(float(sinusoidal_encoding(pos + 1, d_model)[pos, i]), abs=1e-6)
    assert e.given == {"pos": pos, "i": i, "d_model": d_model} and e.tolerance == PE_TOLERANCE == 5e-3
    s = steps(e)
    assert s["pair"]["value"] == 2 * (i // 2)
    assert s["angle"]["value"] == pytest.approx(pos / 10000 ** (2 * (i // 2) / d_model))
    assert s["result"]["formula"] == ("sin(angle)" if i % 2 == 0 else "cos(angle)")
    assert s["result"]["value"] == e.answer


def test_pe_entry_refuses_what_is_no_entry():
    for args in ((0, 4, 4), (-1, 0, 4), (0, -1, 4), (0, 0, 0)):
        with pytest.raises(ValueError):
            pe_entry(*args)
    with pytest.raises(TypeError):
        pe_entry(1.5, 0, 4)


# -- q·k/√d_k ----------------------------------------------------------------------------------------


def test_attention_score_whole_vectors_when_d_k_is_at_most_8(mixed_random):
    e = next(x for x in exercises_for(mixed_random, 0) if x.kind == "attention_score")
    src = e.params["source"]
    attn = mixed_random.encoder[0].self_attn
    q, k = attn.q[0, 0, src["query"]], attn.k[0, 0, src["key"]]
    assert (src["layer"], src["head"], q.numel()) == (0, 0, 8)
    assert e.given["q"] == rounded(q).tolist() and e.given["k"] == rounded(k).tolist()
    assert "rest" not in e.given and e.given["d_k"] == 8
    assert e.answer == pytest.approx(float(rounded(q) @ rounded(k) / math.sqrt(8)), abs=1e-12)
    assert e.unrounded == pytest.approx(float(attn.scores[0, 0, src["query"], src["key"]]), abs=1e-5)


def test_attention_score_of_a_wide_head_gives_the_rest_of_the_sum(trained):
    """The trained model's heads have d_k = 32: 8 dimensions shown, the other 24 products' sum given."""
    e = next(x for x in exercises_for(trained, 3) if x.kind == "attention_score")
    src = e.params["source"]
    attn = trained.encoder[0].self_attn
    q, k = attn.q[0, 0, src["query"]].double(), attn.k[0, 0, src["key"]].double()
    assert len(e.given["q"]) == len(e.given["k"]) == 8 and e.given["d_k"] == 32
    assert e.given["rest"] == round(float(q[8:] @ k[8:]), 2)
    expected = (rounded(q[:8]) @ rounded(k[:8]) + e.given["rest"]) / math.sqrt(32)
    assert e.answer == pytest.approx(float(expected), abs=1e-12)
    assert e.unrounded == pytest.approx(
        float(attn.scores[0, 0, src["query"], src["key"]]), rel=1e-5, abs=1e-5
    )
    s = steps(e)
    assert s["products"]["value"] == pytest.approx((rounded(q[:8]) * rounded(k[:8])).tolist())
    assert s["sum"]["value"] == pytest.approx(float(rounded(q[:8]) @ rounded(k[:8])) + e.given["rest"])
    assert s["sqrt_dk"]["value"] == math.sqrt(32) and s["result"]["value"] == e.answer


def test_attention_score_tolerance_covers_a_student_who_rounds_every_step():
    """The tolerance promises: rounding each product, √d_k and the result to 2 decimals stays inside."""
    rng = random.Random(0)
    for _ in range(300):
        d_k = rng.randint(1, 8)
        q = [rng.uniform(-3, 3) for _ in range(d_k)]
        k = [rng.uniform(-3, 3) for _ in range(d_k)]
        e = attention_score(q, k)
        products = [round(a * b, 2) for a, b in zip(e.given["q"], e.given["k"], strict=True)]
        student = round(sum(products) / round(math.sqrt(d_k), 2), 2)
        assert check(e, f"{student}").correct, (q, k, student, e.answer, e.tolerance)
        assert e.tolerance == pytest.approx(0.005 * (1 + (d_k + abs(e.answer)) / (math.sqrt(d_k) - 0.005)))


def test_softmax_and_layernorm_tolerances_cover_a_student_who_rounds_on_the_way():
    """Softmax: each e^(s_i - max) rounded to 3 decimals, the answer to 2. LayerNorm: the mean, σ and
    the answer rounded to 2 decimals. Both stay inside the tolerance the docstrings derive."""
    rng = random.Random(2)
    for _ in range(500):
        n, j = rng.randint(3, 4), 0
        e = softmax_entry([rng.uniform(-6, 6) for _ in range(n)], j)
        top = max(e.given["scores"])
        exps = [round(math.exp(s - top), 3) for s in e.given["scores"]]
        assert check(e, str(round(exps[j] / sum(exps), 2))).correct
        n = rng.randint(4, 8)
        e = layernorm_entry([rng.uniform(-3, 3) for _ in range(n)], j)
        xs = e.given["x"]
        mean = sum(xs) / n
        sigma = round(math.sqrt(sum((x - mean) ** 2 for x in xs) / n + e.given["eps"]), 2)
        assert check(e, str(round((xs[j] - round(mean, 2)) / sigma, 2))).correct


def test_attention_score_refuses_mismatched_vectors():
    with pytest.raises(ValueError):
        attention_score([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        attention_score([], [])


# -- softmax ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scores", [[0.1, 0.2, 0.3], [2.345, -1.0, 0.5, 0.0], [-20.34, -8.53, -4.09, -1.63]])
def test_softmax_entry_against_torch_softmax_on_the_rounded_scores(scores):
    for j in range(len(scores)):
        e = softmax_entry(scores, j)
        assert e.given["scores"] == rounded(scores).tolist()
        assert e.answer == pytest.approx(float(torch.softmax(rounded(scores), 0)[j]), abs=1e-15)
        assert e.unrounded == pytest.approx(
            float(torch.softmax(torch.tensor(scores, dtype=torch.float64), 0)[j])
        )
        assert steps(e)["result"]["value"] == e.answer and e.tolerance == 0.01


def test_softmax_of_a_decoder_row_is_the_models_weight(trained):
    """A decoder query at position 2 or 3 sees 3 or 4 keys: its whole row, the model's own weights."""
    e = next(x for x in exercises_for(trained, 1) if x.kind == "softmax_entry")
    src = e.params["source"]
    assert src["attn_kind"] == "decoder" and src["of_model"] and src["keys"] == list(range(src["query"] + 1))
    weights = trained.trace.decoder[0].self_attn.weights[0, 0, src["query"]]
    assert e.unrounded == pytest.approx(float(weights[e.given["j"]]), abs=1e-6)
    assert 3 <= len(e.given["scores"]) <= 4


def test_softmax_of_an_encoder_only_row_is_renormalised_over_the_keys_shown(minilm):
    e = next(x for x in exercises_for(minilm, 0) if x.kind == "softmax_entry")
    src = e.params["source"]
    assert src["attn_kind"] == "encoder" and 3 <= len(src["keys"]) <= 4
    weights = minilm.trace.encoder[0].self_attn.weights[0, 0, src["query"], src["keys"]].double()
    assert e.unrounded == pytest.approx(float(weights[e.given["j"]] / weights.sum()), abs=1e-6)
    assert src["of_model"] == (len(src["keys"]) == len(minilm.src_tokens))


# -- LayerNorm ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "eps"),
    [
        ([1.0, 2.0, 3.0, 4.0], 1e-5),
        ([0.123, -2.5, 7.777, 0.0, 1.1, -3.3], 1e-12),
        ([5.0, 5.01, 4.99, 5.0, 5.02, 4.98, 5.0, 5.0], 1e-5),
    ],
)
def test_layernorm_entry_against_torch_layer_norm(x, eps):
    xs = rounded(x)
    expected = F.layer_norm(xs, (len(x),), eps=eps)  # γ = 1, β = 0, population variance
    for j in range(len(x)):
        e = layernorm_entry(x, j, eps)
        assert e.given == {"x": xs.tolist(), "j": j, "eps": eps}
        assert e.answer == pytest.approx(float(expected[j]), abs=1e-9)
        s = steps(e)
        assert s["variance"]["value"] == pytest.approx(float(xs.var(unbiased=False)))
        assert s["mean"]["value"] == pytest.approx(float(xs.mean())) and s["result"]["value"] == e.answer


def test_layernorm_exercise_reads_the_vector_the_first_layernorm_reads(trained):
    """Post-norm: LayerNorm(x + Sublayer(x)). The exercise's numbers are a slice of that input."""
    e = next(x for x in exercises_for(trained, 2) if x.kind == "layernorm_entry")
    src = e.params["source"]
    layer, model_layer = trained.encoder[0], trained.pipe.model.encoder.layers[0]
    vectors = layer.input + layer.self_attn.output
    norm = model_layer.sublayer1.norm
    assert torch.allclose(
        F.layer_norm(vectors, (vectors.size(-1),), norm.weight, norm.bias, norm.eps),
        layer.after_attn,
        atol=1e-5,
    )
    start, stop = src["dims"]
    x = vectors[0, src["position"], start:stop]
    assert e.given["x"] == rounded(x).tolist() and e.given["eps"] == trained.config.layer_norm_eps
    assert e.unrounded == pytest.approx(
        float(F.layer_norm(x.double(), (stop - start,), eps=norm.eps)[e.given["j"]])
    )
    assert not src["of_model"]


# -- BPE ----------------------------------------------------------------------------------------------



@pytest.mark.parametrize("text", [SENTENCE, "aaabdaaabac", MIXED, "🙂🙂 ok 🙂"])
@pytest.mark.parametrize("k", [0, 1, 4, 30])
def test_bpe_count_against_core_bpe_and_hugging_face(text, k):
    e = bpe_count(text, k)
    assert e.answer == len(BPETokenizer.train(text, k).tokenize(text)) == hf_count(text, k)
    assert e.tolerance == 0 and isinstance(e.answer, int)
    counts = [s["value"] for s in e.solution]
    assert counts[0] == len(text.encode("utf-8")) and counts[-1] == e.answer
    assert all(a > b for a, b in itertools.pairwise(counts[:-1]))  # every merge shortens the text
    assert len(e.solution) == e.given["learned"] + 2 and e.given["learned"] <= k


def test_bpe_count_solution_names_each_merge():
    e = bpe_count("aaabdaaabac", 3)
    assert [s["pair"] for s in e.solution if s["name"] == "merge"] == [["a", "a"], ["a", "b"], ["aa", "ab"]]
    assert e.solution[-1]["tokens"] == ["aaab", "d", "aaab", "a", "c"]


# -- check and the parser -----------------------------------------------------------------------------


PARSED = [
    ("0.5", 0.5),
    (" .5 ", 0.5),
    ("5e-1", 0.5),
    ("\u22120.5", -0.5),
    ("1,5", 1.5),
    ("０.５", 0.5),
    ("－０．５", -0.5),
    ("0。5", 0.5),
    ("０，２５", 0.25),
    ("+.5", 0.5),
    ("5.", 5.0),
    ("-0", 0.0),
    ("- 0.5", -0.5),
    ("\u00a00.5\u2009", 0.5),
    ("50%", 0.5),
    ("12", 12.0),
    ("1E2", 100.0),
    ("0,125", 0.125),
    ("-0,5", -0.5),
    ("1,234.5", 1234.5),
    ("1,000,000", 1e6),
    ("\u20130.25", -0.25),
    ("1" + "0" * 60, 1e60),
    (0.25, 0.25),
    (3, 3.0),
]
REFUSED = [
    ("", "empty"),
    ("   ", "empty"),
    ("abc", "not_a_number"),
    ("inf", "not_finite"),
    ("-inf", "not_finite"),
    ("nan", "not_finite"),
    ("Infinity", "not_finite"),
    ("1e999", "not_finite"),
    ("1,500", "ambiguous"),
    ("-12,345", "ambiguous"),
    ("1/2", "not_a_number"),
    ("1 000", "not_a_number"),
    ("0x10", "not_a_number"),
    ("1_000", "not_a_number"),
    ("½", "not_a_number"),
    ("1.2.3", "not_a_number"),
    ("1,2,3", "not_a_number"),
    ("1,5.0", "not_a_number"),
    ("--1", "not_a_number"),
    ("1e", "not_a_number"),
    ("e5", "not_a_number"),
    (".", "not_a_number"),
    ("-", "not_a_number"),
    ("٠.٥", "not_a_number"),
    ("x" * 10_000, "too_long"),
    ("1" * 10_000, "too_long"),
    (None, "not_a_number"),
    (True, "not_a_number"),
    (float("nan"), "not_finite"),
    (10**400, "not_finite"),
    ("0.5\x00", "not_a_number"),
]


@pytest.mark.parametrize(("raw", "value"), PARSED)
def test_parse_number_reads(raw, value):
    assert parse_number(raw) == (value, "")


@pytest.mark.parametrize(("raw", "problem"), REFUSED)
def test_parse_number_refuses(raw, problem):
    assert parse_number(raw) == (None, problem)
    e = softmax_entry([0.0, 0.0, 0.0], 0)
    assert check(e, raw) == Verdict(False, None, None, problem)


def test_parse_number_never_raises_on_any_text():
    rng = random.Random(1)
    alphabet = "0123456789.,-+eE% \u2212\uff10\uff0e\u3002abc\x00\ud800🙂"
    for _ in range(3000):
        raw = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        value, problem = parse_number(raw)
        assert (value is None) == bool(problem)
        assert value is None or math.isfinite(value)
    assert parse_number("9" * MAX_TYPED)[0] == float("9" * MAX_TYPED)


def test_check_accepts_within_the_tolerance_and_refuses_just_outside():
    e = softmax_entry([0.1, 0.2, 0.3], 2)
    for delta in (0.0, 0.5, -0.5, 0.999, -0.999):
        verdict = check(e, repr(e.answer + delta * e.tolerance))
        assert verdict.correct and verdict.error == pytest.approx(delta * e.tolerance)
    for delta in (1.001, -1.001, 3.0):
        verdict = check(e, repr(e.answer + delta * e.tolerance))
        assert not verdict.correct and verdict.parsed is not None
        assert verdict.error == pytest.approx(delta * e.tolerance)


def test_check_a_typed_boundary_is_inside():
    e = pe_entry(0, 0, 4)  # sin 0 = 0, tolerance 0.005
    assert check(e, "0.005").correct and check(e, "-0.005").correct
    assert not check(e, "0.0051").correct and not check(e, "-0.0051").correct


def test_check_an_integer_answer_is_exact():
    e = bpe_count("aaabdaaabac", 3)
    assert check(e, "5").correct and check(e, "5.0").correct and check(e, "５").correct
    assert not check(e, "4").correct and not check(e, "6").correct and not check(e, "5.01").correct
    assert check(e, "6").error == 1.0


# -- what a run gives ---------------------------------------------------------------------------------


ALL = ["pe_entry", "attention_score", "softmax_entry", "layernorm_entry", "bpe_count"]


@pytest.mark.parametrize("seed", [0, 1])
def test_exercises_for_the_trained_checkpoint(trained, seed):
    exercises = exercises_for(trained, seed)
    assert [e.kind for e in exercises] == ALL
    pe = exercises[0]
    pos, i = pe.given["pos"], pe.given["i"]
    assert pe.unrounded == pytest.approx(float(trained.trace.positional[pos, i]), abs=1e-6)
    assert pe.answer == pytest.approx(pe.unrounded, abs=1e-6)
    for e in exercises:
        assert check(e, repr(e.answer)).correct
        assert e.params["source"]


def test_exercises_for_random_weights_and_minilm(mixed_random, minilm):
    assert [e.kind for e in exercises_for(mixed_random, 0)] == ALL
    # MiniLM learned its positions: no sinusoidal PE entry to compute
    assert [e.kind for e in exercises_for(minilm, 0)] == ALL[1:]


def test_exercises_are_deterministic_and_ids_stable(trained):
    again = SentenceRun(P.load_pipeline(P.PipelineSettings(weights="trained")), SENTENCE)
    assert exercises_for(trained, 4) == exercises_for(again, 4)
    ids = [e.id for e in exercises_for(trained, 4)]
    assert len(set(ids)) == len(ids)
    assert set(ids).isdisjoint(e.id for e in exercises_for(SentenceRun(trained.pipe, "重要"), 4))


def test_bare_exercises_on_other_numbers_have_other_ids():
    assert attention_score([1.0, 2.0], [3.0, 4.0]).id != attention_score([1.0, 2.0], [3.0, 4.5]).id
    assert softmax_entry([1.0, 2.0, 3.0], 0).id != softmax_entry([1.0, 2.0, 3.0], 1).id
    assert pe_entry(1, 2, 8).id == pe_entry(1, 2, 8).id != pe_entry(1, 2, 8, identity="other run").id
