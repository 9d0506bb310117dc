"""Compute it yourself (ui/sections/exercises.py) through AppTest: on the Lecture page, at the step of each
exercise kind, the card shows the model's numbers (checked against the model's own tensors), takes
the exact answer (from core.teaching.exercises on a run built here the app's way) and a student's rounded one,
shows a miss with the worked solution's real numbers (recomputed here from the numbers shown), and
names what it cannot read; Chinese; New numbers; nothing drawn, nor computed, where there is no
exercise or the expander is closed; and a card's on_checked callback."""

from __future__ import annotations

import math
import re

import pytest
from apphelpers import assert_clean, open_page
from streamlit.testing.v1 import AppTest

import figures.classroom.exercises as fx
import ui.sections.exercises as ux
from core.teaching.exercises import exercises_for
from core.tracing.pipeline import PipelineSettings, load_pipeline
from core.tracing.run import SentenceRun
from i18n import t
from ui.page.settings import validate

PAGE = "pages/lecture.py"
CARD = "exercise_self_card"
CJK = re.compile(r"[\u4e00-\u9fff]")
STEP_OF = {
    "bpe_count": "2",
    "pe_entry": "4",
    "attention_score": "5",
    "softmax_entry": "6",
    "layernorm_entry": "9",
}
NAME_OF = {"2": "tokens", "4": "positional", "5": "encoder", "6": "decoder", "9": "residual"}


# -- helpers -------------------------------------------------------------------------------------------


def reference_run(query: dict[str, str] | None = None) -> SentenceRun:
    """The run the Lecture page shows for ``query`` (random weights, as apphelpers opens pages), built
    here without the app's caches."""
    settings = validate({"weights": "random", **(query or {})}).settings
    return SentenceRun(
        load_pipeline(settings.pipeline_settings()), settings.sentence, settings.target, settings.max_tokens
    )


def expected(run: SentenceRun, kind: str, seed: int = 0):
    (exercise,) = [e for e in exercises_for(run, seed) if e.kind == kind]
    return exercise


def open_card(step: str, query: dict[str, str] | None = None) -> AppTest:
    """The Lecture page at ``step`` with "Compute it yourself" opened."""
    at = open_page(PAGE, {"step": step, **(query or {})})
    at.session_state["exercise_self"] = True
    at.run()
    assert_clean(at)
    return at


def answer(at: AppTest, typed: str, card: str = CARD) -> AppTest:
    at.text_input(key=f"{card}_answer").input(typed)
    at.button(key=f"{card}_check").click().run()
    assert_clean(at)
    return at


def keyed(at: AppTest, key: str) -> list:
    """The blocks drawn with ``key`` (Streamlit ends a keyed element's id with ``-key``)."""
    found = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            if str(getattr(getattr(child, "proto", None), "id", "") or "").endswith(f"-{key}"):
                found.append(child)
            walk(child)

    walk(at.main)
    return found


def texts(node) -> list[str]:
    """Every text under ``node``: Markdown, LaTeX, captions, code, alerts, and the cells of tables."""
    out = []
    for child in getattr(node, "children", {}).values():
        kind = type(child).__name__
        if kind in ("Table", "Dataframe"):
            frame = child.value
            out += [str(c) for c in frame.columns] + [str(i) for i in frame.index]
            out += [str(v) for row in frame.itertuples(index=False) for v in row]
        elif kind != "Block" and isinstance(getattr(child, "value", None), str):
            out.append(child.value)
        out += texts(child)
    return out


def card_text(at: AppTest, card: str = CARD) -> str:
    (node,) = keyed(at, card)
    return "\n".join(texts(node))


def tables(at: AppTest, card: str = CARD) -> list:
    (node,) = keyed(at, card)
    found = []

    def walk(n):
        for child in getattr(n, "children", {}).values():
            if type(child).__name__ == "Table":
                found.append(child.value)
            walk(child)

    walk(node)
    return found


def floats(cells) -> list[float]:
    return [float(c) for c in cells]


# -- each kind at its step -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run():
    return reference_run()


def test_no_exercise_is_drawn_nor_computed_until_the_expander_opens(monkeypatch):
    calls = []
    real = ux.exercises_for
    monkeypatch.setattr(ux, "exercises_for", lambda r, seed=0: calls.append(seed) or real(r, seed))
    query = {"step": "5", "sentence": "lazy cats sleep all day"}  # a sentence no other test caches
    at = open_page(PAGE, query)
    assert len(keyed(at, "exercise_self")) == 1 and not keyed(at, CARD)
    assert t("exercises.expander", "en") in [e.label for e in at.expander]
    assert calls == []
    at.session_state["exercise_self"] = True
    at.run()
    assert keyed(at, CARD) and calls == [0]
    at.run()
    assert calls == [0]  # cached per (run, seed)


@pytest.mark.parametrize(
    "query", [{"step": "3"}, {"step": "7"}, {"step": "10"}, {"step": "4", "positions": "learned"}]
)
def test_a_step_without_an_exercise_shows_nothing(query):
    at = open_page(PAGE, query)
    assert_clean(at)
    assert not keyed(at, "exercise_self") and not keyed(at, CARD)
    assert t("exercises.expander", "en") not in [e.label for e in at.expander]


def test_pe_entry(run):
    at = open_card(STEP_OF["pe_entry"])
    ex = expected(run, "pe_entry")
    assert tables(at) == []
    (given,) = [m for m in texts(keyed(at, CARD)[0]) if m.lstrip("$\n").startswith("pos = ")]
    pos, i, d_model = (int(n) for n in re.findall(r"= (\d+)", given))
    assert (pos, i, d_model) == (ex.given["pos"], ex.given["i"], run.config.d_model)
    angle = pos / 10000 ** (2 * (i // 2) / d_model)  # the paper's formula, here
    value = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    assert value == pytest.approx(float(run.source.positional[pos, i]), abs=1e-6)
    assert "±0.005" in card_text(at)  # the tolerance, before any answer
    check_right_wrong_unreadable(at, ex, value, f"{angle:.4f}")


def test_attention_score(run):
    at = open_card(STEP_OF["attention_score"])
    ex = expected(run, "attention_score")
    source = ex.params["source"]
    attn = run.encoder[0].self_attn
    (given,) = tables(at)
    q, k = floats(given.loc["$q_i$"]), floats(given.loc["$k_i$"])
    assert len(q) == len(k) == min(8, run.config.d_k)
    assert q == [round(float(x), 2) + 0.0 for x in attn.q[0, 0, source["query"], : len(q)]]
    assert k == [round(float(x), 2) + 0.0 for x in attn.k[0, 0, source["key"], : len(k)]]
    assert f"`{source['query_token']}`" in card_text(at)  # a token only as a code span
    rest = ex.given.get("rest", 0.0)
    score = (math.fsum(a * b for a, b in zip(q, k, strict=True)) + rest) / math.sqrt(run.config.d_k)
    assert score == pytest.approx(ex.answer, abs=1e-12)
    product = f"{q[0] * k[0]:.4f}"  # the first product, in the solution's table
    check_right_wrong_unreadable(
        at, ex, score, product, (r"$q_i\,k_i$", [a * b for a, b in zip(q, k, strict=True)])
    )


def test_softmax_entry(run):
    at = open_card(STEP_OF["softmax_entry"])
    ex = expected(run, "softmax_entry")
    source = ex.params["source"]
    assert source["attn_kind"] == "decoder"
    (given,) = tables(at)
    scores = floats(given.loc["$s_i$"])
    model = run.trace.decoder[0].self_attn.scores[0, 0, source["query"], source["keys"]]
    assert scores == [round(float(s), 2) + 0.0 for s in model]
    assert list(given.loc[t("exercises.key_row", "en")]) == [f"`{tok}`" for tok in source["key_tokens"]]
    j = ex.given["j"]
    exps = [math.exp(s - max(scores)) for s in scores]
    weight = exps[j] / math.fsum(exps)
    assert "±0.01" in card_text(at)
    check_right_wrong_unreadable(at, ex, weight, f"{exps[j]:.4f}", (r"$e^{s_i - \max}$", exps))


def test_layernorm_entry(run):
    import torch

    at = open_card(STEP_OF["layernorm_entry"])
    ex = expected(run, "layernorm_entry")
    source = ex.params["source"]
    (given,) = tables(at)
    xs = floats(given.loc["$x_i$"])
    layer = run.encoder[0]
    start, end = source["dims"]
    vector = (layer.input + layer.self_attn.output)[0, source["position"], start:end]  # post-norm
    assert xs == [round(float(x), 2) + 0.0 for x in vector]
    shown = torch.tensor(xs, dtype=torch.float64)
    normed = torch.nn.functional.layer_norm(shown, (len(xs),), eps=run.config.layer_norm_eps)
    sigma = math.sqrt(float(shown.var(unbiased=False)) + run.config.layer_norm_eps)
    assert "not the model's own LayerNorm output" in card_text(at)  # of_model: False, said so
    deviations = (shown - shown.mean()).tolist()
    check_right_wrong_unreadable(
        at, ex, float(normed[ex.given["j"]]), f"{sigma:.4f}", (r"$x_i - \mu$", deviations)
    )


def test_bpe_count(run):
    at = open_card(STEP_OF["bpe_count"])
    ex = expected(run, "bpe_count")
    assert run.sentence in card_text(at) and t("exercises.exact", "en") in card_text(at)
    # the bytes to start from are given: as many tokens as the sentence has UTF-8 bytes
    assert t("exercises.bpe.start", "en", n=len(run.sentence.encode("utf-8"))) in card_text(at)
    merges = [s for s in ex.solution if s["name"] == "merge"]
    at = answer(at, str(ex.answer))
    assert [m.value for m in at.success] == [
        t("exercises.right_count", "en", answer=ex.answer, k=ex.given["k"])
    ]
    at = answer(at, str(ex.answer + 2))
    (error,) = at.error
    assert error.value == t(
        "exercises.too_many", "en", parsed=ex.answer + 2, diff=2, answer=ex.answer, k=ex.given["k"]
    )
    (merge_table,) = [d.value for d in at.dataframe]
    pairs = list(merge_table[t("exercises.bpe.col_pair", "en")])
    assert pairs == [f"{m['pair'][0]} + {m['pair'][1]}" for m in merges]
    assert list(merge_table[t("exercises.bpe.col_count", "en")]) == [m["value"] for m in merges]
    assert merges[-1]["value"] == ex.answer
    unreadable(at)


def check_right_wrong_unreadable(
    at: AppTest, ex, reference: float, step_number: str, row: tuple[str, list[float]] | None = None
) -> None:
    """The exact answer, a student's rounded one (decimal comma, Unicode minus) and the reference
    computed by the test are right; a miss shows the solution with ``step_number`` (and its table the
    row ``row``: a label and the numbers, to 4 decimals); unreadable text gets a warning."""
    assert ex.answer == pytest.approx(reference, abs=1e-9)
    tolerance = fx.tolerance(ex)
    for typed in (repr(ex.answer), f"{ex.answer:.2f}".replace(".", ",").replace("-", "\u2212")):
        at = answer(at, typed)
        (success,) = at.success
        assert f"±{tolerance}" in success.value and f"{ex.answer:.4f}" in success.value
        if ex.unrounded is not None and ex.params["source"].get("of_model"):
            assert f"{ex.unrounded:.4f}" in success.value  # the model's own value
        assert not at.error and not keyed(at, f"{CARD}_solution")
    typed = f"{ex.answer + 10 * ex.tolerance + 0.25:.4f}"
    at = answer(at, typed)
    (error,) = at.error
    assert error.value == t(
        "exercises.too_high",
        "en",
        parsed=f"{float(typed):.10g}",
        diff=f"{float(typed) - ex.answer:.4f}",
        answer=f"{ex.answer:.4f}",
        tolerance=tolerance,
    )
    (solution,) = keyed(at, f"{CARD}_solution")
    assert step_number in "\n".join(texts(solution)), (step_number, texts(solution))
    if row is not None:
        label, numbers = row
        assert list(tables(at)[-1].loc[label]) == [f"{x:.4f}".replace("-0.0000", "0.0000") for x in numbers]
    at = answer(at, f"{ex.answer - 10 * ex.tolerance - 0.25:.4f}")
    assert "too low" in at.error[0].value
    unreadable(at)


def unreadable(at: AppTest) -> None:
    for typed, problem in (
        ("abc", "not_a_number"),
        ("1,500", "ambiguous"),
        ("", "empty"),
        ("7" * 70, "too_long"),
        ("inf", "not_finite"),
    ):
        at = answer(at, typed)
        said = t(
            f"exercises.problem.{problem}",
            "en",
            raw=f"`{typed}`" if typed else "`(empty)`",
            n=len(typed),
            limit=64,
        )
        assert said in [w.value for w in at.warning], typed
        assert not at.error and not at.success and not keyed(at, f"{CARD}_solution"), typed


# -- language, New numbers ------------------------------------------------------------------------------


def test_chinese(run):
    at = open_card(STEP_OF["attention_score"], {"lang": "zh"})
    assert t("exercises.expander", "zh") in [e.label for e in at.expander]
    text = card_text(at)
    assert "计算编码器第 1 层第 1 个头中" in text and "即算对" in text
    assert (
        at.button(key=f"{CARD}_check").label == "核对" and at.button(key="exercise_new").label == "换一组数"
    )
    at = answer(at, "abc")
    assert at.warning[-1].value == t("exercises.problem.not_a_number", "zh", raw="`abc`")
    ex = expected(run, "attention_score")
    at = answer(at, str(ex.answer + 1))
    assert CJK.search(at.error[0].value) and "详解" in card_text(at)


def test_new_numbers_change_the_exercise_and_clear_the_answer(run):
    at = open_card(STEP_OF["attention_score"])
    before = tables(at)[0]
    at = answer(at, "0.1")
    assert at.error
    at.button(key="exercise_new").click().run()
    assert_clean(at)
    seed = at.session_state["exercise_seed"]
    assert seed >= 1
    ex = expected(run, "attention_score", seed)
    (after,) = tables(at)
    assert floats(after.loc["$q_i$"]) == ex.given["q"] and floats(after.loc["$k_i$"]) == ex.given["k"]
    assert not after.equals(before) and ex.id != expected(run, "attention_score").id
    assert at.text_input(key=f"{CARD}_answer").value == "" and not at.error  # a fresh card
    at = answer(at, repr(ex.answer))
    assert at.success


def test_several_exercises_at_one_step_get_a_pick_list():
    """A decoder too short for a softmax row (a one-token target): the softmax is an encoder row, so
    the encoder step gives two exercises."""
    run = reference_run({"sentence": "hello there world", "target": "x"})  # decoder: [BOS] x, too short
    assert len(run.tgt_tokens) < 3
    at = open_card(STEP_OF["attention_score"], {"sentence": "hello there world", "target": "x"})
    pick = at.button_group(key="exercise_pick_encoder")
    assert pick.options and len(pick.options) == 2
    pick.set_value("softmax_entry").run()
    ex = expected(run, "softmax_entry")
    (given,) = tables(at)
    assert floats(given.loc["$s_i$"]) == ex.given["scores"]
    assert "not the model's own weight" in card_text(at) or ex.params["source"]["of_model"]
    at = answer(at, repr(ex.answer))
    assert at.success


# -- the functions the rooms use -----------------------------------------------------------------------


def test_exercises_at_find_and_titles():
    pipe = load_pipeline(PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=1, seed=3))
    run = SentenceRun(pipe, "the cat sat on the mat")
    everything = exercises_for(run, 5)
    at = {step: [e.kind for e in ux.exercises_at(run, step, 5)] for step in ux.STEP_EXERCISES}
    assert at == {
        "tokens": ["bpe_count"],
        "positional": ["pe_entry"],
        "encoder": ["attention_score"],
        "decoder": ["softmax_entry"],
        "residual": ["layernorm_entry"],
    }
    assert ux.exercises_at(run, "embeddings", 5) == [] and ux.exercises_at(run, "nonsense", 5) == []
    for e in everything:
        assert ux.find_exercise(run, 5, e.id) == e
    assert ux.find_exercise(run, 5, "0" * 12) is None
    by_kind = {e.kind: e for e in everything}
    n, k = len(by_kind["softmax_entry"].given["scores"]), by_kind["bpe_count"].given["k"]
    assert ux.exercise_title(by_kind["softmax_entry"]) == f"Softmax: one weight of a row of {n} scores"
    assert ux.exercise_title(by_kind["bpe_count"]) == f"BPE: the token count after merge {k}"
    short = SentenceRun(pipe, "the cat sat", target="x")
    kinds = {step: [e.kind for e in ux.exercises_at(short, step, 0)] for step in ("encoder", "decoder")}
    assert kinds == {"encoder": ["attention_score", "softmax_entry"], "decoder": []}
    assert not ux._offered(short, "decoder") and ux._offered(run, "decoder")
    learned = SentenceRun(
        load_pipeline(
            PipelineSettings(weights="random", d_model=32, num_heads=4, num_layers=1, positions="learned")
        ),
        "the cat",
    )
    assert not ux._offered(learned, "positional") and ux.exercises_at(learned, "positional", 0) == []


def test_tolerance_is_stated_rounded_down():
    from dataclasses import replace

    from core.teaching.exercises import softmax_entry

    ex = softmax_entry([1.0, 2.0, 3.0], 0)
    stated = {
        tol: fx.tolerance(replace(ex, tolerance=tol))
        for tol in (0.01, 0.005, 0.0193, 0.0078608, 2.37, 0, math.inf)
    }
    assert stated == {
        0.01: "0.01",
        0.005: "0.005",
        0.0193: "0.019",
        0.0078608: "0.0078",
        2.37: "2.3",
        0: "0",
        math.inf: "∞",
    }


def card_script():
    import streamlit as st

    from core.teaching.exercises import softmax_entry
    from ui.sections.exercises import exercise_card

    exercise = softmax_entry([1.0, 2.0, 3.0], 2)
    got = st.session_state.setdefault("got", [])
    st.session_state["returned"] = exercise_card(exercise, "unit", on_checked=got.append)


def test_on_checked_gets_each_readable_check_once():
    at = AppTest.from_function(card_script, default_timeout=30).run()
    assert_clean(at)
    assert at.session_state["returned"] is None and at.session_state["got"] == []
    answer(at, "0.665", "unit")  # softmax([1, 2, 3])[2] = 0.6652…
    (first,) = at.session_state["got"]
    assert first.correct and first.parsed == 0.665 and at.session_state["returned"] == first
    answer(at, "abc", "unit")
    assert len(at.session_state["got"]) == 1 and at.session_state["returned"].problem == "not_a_number"
    answer(at, "0,5", "unit")
    at.run()  # a rerun without a click checks nothing
    got = at.session_state["got"]
    assert len(got) == 2 and not got[1].correct and got[1].error == pytest.approx(0.5 - 0.66524, abs=1e-5)
    assert at.session_state["returned"] == got[1]
