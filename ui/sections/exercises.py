"""Compute it yourself: the Streamlit side of ``core/teaching/exercises.py``.

    found = exercises_at(run, "encoder", seed)      # this step's exercises (cached per run and seed)
    verdict = exercise_card(found[0], key="x")      # what to compute, the numbers, an answer box, the verdict
    self_study(run, "encoder")                      # the Lecture page: the card in an expander

A card is reusable: the Lecture page draws one for a student alone (``self_study``); a room gives the
same exercise to the class and counts the answers through ``on_checked``. An exercise follows from
(run, seed) alone, so a lecturer's screen and a student's agree; nothing is computed until the
expander is opened. User text reaches the page only through ``st.code``, a dataframe or ``literal()``.

Decisions (one seed for every kind, where a softmax exercise goes, rounding and tolerance, user
text): docs/decisions.md, ui/sections/exercises.py.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable

import pandas as pd
import streamlit as st

from core.teaching.exercises import MAX_TYPED, Exercise, Verdict, check, exercises_for
from core.teaching.questions import bpe_merges_possible, run_identity
from figures.drawing.text import literal
from ui import t
from ui.caches.budget import cached
from ui.page.figure import key_class
from ui.page.tables import show_table

log = logging.getLogger("glassbox.exercises")

# The Lecture page's step ids (figures/lecture.py STEPS) and the exercise kinds each one gives.
STEP_EXERCISES: dict[str, tuple[str, ...]] = {
    "tokens": ("bpe_count",),
    "positional": ("pe_entry",),
    "encoder": ("attention_score", "softmax_entry"),
    "decoder": ("softmax_entry",),
    "residual": ("layernorm_entry",),
}
SEED = "exercise_seed"  # the self-study card's seed, moved on by "New numbers"
MORE = 2  # decimals beyond the shown ones for the solution's steps, the model's value and a miss
NEW_TRIES = 8  # seeds "New numbers" tries for an exercise other than the one on screen
MAX_CHARS = 200  # the answer box: longer than anyone types (core.teaching.exercises refuses > MAX_TYPED)

# Fixed stylesheet (no user text) for one card, ``{cls}`` its key's CSS class: a projector's sizes.
STYLE = """<style>
.{cls} [data-testid="stMarkdownContainer"] p {{ font-size: 1.2rem; line-height: 1.4; }}
.{cls} [data-testid="stCaptionContainer"] p {{ font-size: 1.05rem; }}
.{cls} table {{ font-size: 1.15rem; }}
.{cls} table th, .{cls} table td {{ padding: 0.15rem 0.6rem; }}
.{cls} input {{ font-size: 1.3rem; }}
</style>"""
SELF_STYLE = """<style>
.st-key-exercise_self summary p { font-size: 1.3rem; font-weight: 600; }
</style>"""


# -- which exercises -----------------------------------------------------------------------------------


@cached(max_entries=64)
def _exercises(identity: str, seed: int, _run) -> list[Exercise]:
    """Every exercise of the run ``identity`` names (``_run``: that run, not part of the key)."""
    return exercises_for(_run, seed)


def _belongs(exercise: Exercise, step_name: str) -> bool:
    if exercise.kind not in STEP_EXERCISES.get(step_name, ()):
        return False
    source = exercise.params.get("source") or {}
    return "attn_kind" not in source or exercise.kind != "softmax_entry" or source["attn_kind"] == step_name


def exercises_at(run, step_name: str, seed: int) -> list[Exercise]:
    """The exercises of ``core.teaching.exercises.exercises_for(run, seed)`` that belong to the Lecture page's
    step ``step_name`` ([]: none). A softmax belongs to the step of the attention its row is from."""
    if not STEP_EXERCISES.get(step_name):
        return []
    return [e for e in _exercises(run_identity(run), seed, run) if _belongs(e, step_name)]


def find_exercise(run, seed: int, exercise_id: str) -> Exercise | None:
    """The exercise ``exercise_id`` of ``exercises_for(run, seed)``, or None."""
    return next((e for e in _exercises(run_identity(run), seed, run) if e.id == exercise_id), None)


@functools.lru_cache(maxsize=64)
def _mergeable(sentence: str) -> bool:
    return bpe_merges_possible(sentence) >= 1


def _offered(run, step_name: str) -> bool:
    """Whether the step can give an exercise, from what its slide has already computed: the config,
    the sentence, the decoder's tokens (the decoder's row needs 3 keys, as core.teaching.exercises says)."""
    kinds = STEP_EXERCISES.get(step_name, ())
    if "pe_entry" in kinds:
        return run.config.positions == "sinusoidal"
    if "bpe_count" in kinds:
        return _mergeable(run.sentence)
    if step_name == "decoder":
        return run.config.stack != "encoder" and len(run.tgt_tokens) >= 3
    if step_name in ("encoder", "residual") and run.config.stack == "decoder":  # of an encoder only
        return False
    return bool(kinds)


# -- numbers as shown ----------------------------------------------------------------------------------


def _decimals(exercise: Exercise) -> int:
    return int(exercise.params.get("decimals", 2))


def _num(x: float, decimals: int) -> str:
    shown = f"{float(x):.{decimals}f}"
    return shown[1:] if shown.startswith("-") and float(shown) == 0 else shown  # no "-0.00"


def _typed(x: float) -> str:
    """A number as it was read from what was typed ("0,5" → 0.5)."""
    return f"{x:.10g}"


def _token_list(tokens: list[str]) -> str:
    """Tokens in brackets, for a code block (which shows them verbatim)."""
    return " ".join(f"[{tok}]" for tok in tokens)


def _tolerance(exercise: Exercise) -> str:
    """The tolerance, two significant digits rounded down: the check accepts at least this."""
    tol = exercise.tolerance
    if not 0 < tol < math.inf:  # exact (a count), or anything goes (numbers too close to tell apart)
        return "0" if tol == 0 else "∞"
    digits = max(0, 1 - math.floor(math.log10(tol)))
    down = math.floor(tol * 10**digits + 1e-9) / 10**digits
    return f"{down:.{digits}f}".rstrip("0").rstrip(".")


def _eps(eps: float, tex: bool = False) -> str:
    """ε as a power of ten when it is one (10⁻⁵), else as Python writes it."""
    power = math.log10(eps) if eps > 0 else 0.5
    if power != round(power):
        return f"{eps:g}"
    n = int(round(power))
    return f"10^{{{n}}}" if tex else "10" + str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def _of_model(exercise: Exercise) -> bool:
    return bool((exercise.params.get("source") or {}).get("of_model"))


def _model_value(exercise: Exercise) -> float:
    """The model's value where the model computes exactly this, else the answer."""
    unrounded = exercise.unrounded
    return unrounded if _of_model(exercise) and unrounded is not None else exercise.answer


def exercise_title(exercise: Exercise) -> str:
    """A short label for a pick list: "Softmax: one weight of a row of 4 scores"."""
    given = exercise.given
    values = {
        "pe_entry": lambda: {"pos": given["pos"], "i": given["i"]},
        "attention_score": lambda: {"d_k": given["d_k"]},
        "softmax_entry": lambda: {"n": len(given["scores"])},
        "layernorm_entry": lambda: {"n": len(given["x"])},
        "bpe_count": lambda: {"k": given["k"]},
    }.get(exercise.kind, dict)()
    return t(f"exercises.title.{exercise.kind}", **values)


# -- tables and equations ------------------------------------------------------------------------------


def _grid(rows: list[tuple[str, list[str]]], columns: list[str]) -> None:
    """A small table of our own labels and numbers (st.table: large on a projector; Markdown, so a
    token goes in only as literal())."""
    frame = pd.DataFrame([cells for _, cells in rows], index=[label for label, _ in rows], columns=columns)
    st.table(frame, width="content")


def _columns(n: int, asked: int | None = None, numbers: list[int] | None = None) -> list[str]:
    """Column headers 0 … n − 1 (dimensions and positions count from 0, as in the paper's PE(pos, 2i)),
    or ``numbers`` (a row's key positions); the asked column says so: "j = 3"."""
    numbers = list(range(n)) if numbers is None else numbers
    return [f"j = {numbers[c]}" if c == asked else str(numbers[c]) for c in range(n)]


def _chain(parts: list[str], per_line: int = 3) -> str:
    """Equations side by side, ``per_line`` to a line (a tall card pushes the slide off the screen)."""
    lines = [r",\quad ".join(parts[i : i + per_line]) for i in range(0, len(parts), per_line)]
    return r"\begin{gathered}" + r" \\ ".join(lines) + r"\end{gathered}"


def _steps(exercise: Exercise) -> dict:
    return {step["name"]: step for step in exercise.solution}


FORMULA = {
    "pe_entry": (
        r"PE_{(pos,\,i)} = \begin{cases} \sin\!\big(pos / 10000^{2m/d_{\text{model}}}\big) & i = 2m \\ "
        r"\cos\!\big(pos / 10000^{2m/d_{\text{model}}}\big) & i = 2m+1 \end{cases}"
    ),
    "attention_score": r"s = \frac{q\cdot k}{\sqrt{d_k}} = \frac{1}{\sqrt{d_k}} \sum_{i=0}^{d_k-1} q_i\,k_i",
    # ALiBi adds its bias to the score the softmax reads
    "attention_score_alibi": (
        r"s = \frac{q\cdot k}{\sqrt{d_k}} + b = \frac{1}{\sqrt{d_k}} \sum_{i=0}^{d_k-1} q_i\,k_i"
        r" + b,\quad b = -m\,|i-j|"
    ),
    "softmax_entry": (
        r"\mathrm{softmax}(s)_j = \frac{e^{s_j}}{\sum_i e^{s_i}} "
        r"= \frac{e^{s_j - \max_i s_i}}{\sum_i e^{s_i - \max_i s_i}}"
    ),
    "layernorm_entry": (
        r"\begin{gathered} \mathrm{LN}(x)_j = \frac{x_j - \mu}{\sqrt{\sigma^2 + \varepsilon}} \\ "
        r"\mu = \frac{1}{n}\sum_i x_i,\quad \sigma^2 = \frac{1}{n}\sum_i (x_i - \mu)^2,"
        r"\quad \varepsilon = {eps} \end{gathered}"
    ),
    "bpe_count": r"(a, b) = \arg\max_{(a,\,b)} \operatorname{count}(a\,b),\qquad a\;b \;\to\; ab",
}


# -- what to compute -----------------------------------------------------------------------------------


def _intro(text: str, formula: str, note: str) -> None:
    """What to compute and where the number comes from (left), the formula (right): one row."""
    left, right = st.columns([3, 2], gap="medium", vertical_alignment="center")
    with left:
        st.markdown(text)
        st.caption(note)
    with right:
        st.latex(formula)


def _task_pe(exercise: Exercise, decimals: int, note: str) -> None:
    given, source = exercise.given, exercise.params.get("source") or {}
    token = literal(source["token"]) if "token" in source else "—"
    text = t("exercises.task.pe_entry", pos=given["pos"], i=given["i"], d_model=given["d_model"], token=token)
    _intro(text, FORMULA["pe_entry"], note)
    st.latex(rf"pos = {given['pos']},\quad i = {given['i']},\quad d_{{\text{{model}}}} = {given['d_model']}")


def _task_score(exercise: Exercise, decimals: int, note: str) -> None:
    given, source = exercise.given, exercise.params.get("source") or {}
    n = len(given["q"])
    text = t(
        "exercises.task.attention_score",
        query=literal(source.get("query_token", "?")),
        qpos=source.get("query", "?"),
        key=literal(source.get("key_token", "?")),
        kpos=source.get("key", "?"),
        head=source.get("head", 0) + 1,
        layer=source.get("layer", 0) + 1,
        d_k=given["d_k"],
        n=n,
        decimals=decimals,
    )
    alibi = "bias" in given
    _intro(text, FORMULA["attention_score_alibi" if alibi else "attention_score"], note)
    rows = [
        ("$q_i$", [_num(x, decimals) for x in given["q"]]),
        ("$k_i$", [_num(x, decimals) for x in given["k"]]),
    ]
    if "rest" not in given:
        _grid(rows, _columns(n))
    else:
        with st.container(horizontal=True, vertical_alignment="center", gap="large"):
            _grid(rows, _columns(n))
            with st.container(width="content"):
                st.caption(t("exercises.task.rest", others=given["d_k"] - n))
                st.latex(rf"\sum_{{i={n}}}^{{{given['d_k'] - 1}}} q_i\,k_i = {_num(given['rest'], decimals)}")
    if alibi:
        qpos, kpos = source.get("query", 0), source.get("key", 0)
        st.markdown(
            t(
                "exercises.task.bias",
                head=source.get("head", 0) + 1,
                m=f"{source.get('slope', 0.0):g}",
                qpos=qpos,
                kpos=kpos,
                distance=abs(qpos - kpos),
                bias=_num(given["bias"], decimals),
            )
        )


def _task_softmax(exercise: Exercise, decimals: int, note: str) -> None:
    given, source = exercise.given, exercise.params.get("source") or {}
    j, scores = given["j"], given["scores"]
    tokens = source.get("key_tokens") or [""] * len(scores)
    where = t(f"exercises.where.{source.get('attn_kind', 'encoder')}", layer=source.get("layer", 0) + 1)
    positions = source.get("keys") or list(range(len(scores)))
    text = t(
        "exercises.task.softmax_entry",
        col=positions[j],
        token=literal(tokens[j]),
        query=literal(source.get("query_token", "?")),
        head=source.get("head", 0) + 1,
        where=where,
        decimals=decimals,
    )
    _intro(text, FORMULA["softmax_entry"], note)
    _grid(
        [
            (t("exercises.key_row"), [literal(tok) for tok in tokens]),
            ("$s_i$", [_num(s, decimals) for s in scores]),
        ],
        _columns(len(scores), j, positions),
    )


def _task_layernorm(exercise: Exercise, decimals: int, note: str) -> None:
    given = exercise.given
    xs, j = given["x"], given["j"]
    text = t(
        "exercises.task.layernorm_entry", col=j, eps=_eps(given["eps"]), n=len(xs), decimals=decimals
    )
    _intro(text, FORMULA["layernorm_entry"].replace("{eps}", _eps(given["eps"], tex=True)), note)
    _grid([("$x_i$", [_num(x, decimals) for x in xs])], _columns(len(xs), j))


def _task_bpe(exercise: Exercise, decimals: int, note: str) -> None:
    given = exercise.given
    kind = "bpe_count" if given.get("byte_level", True) else "bpe_count_classic"
    _intro(t(f"exercises.task.{kind}", k=given["k"]), FORMULA["bpe_count"], note)
    st.code(given["text"], language=None, wrap_lines=True)
    start = exercise.solution[0]
    st.caption(t("exercises.bpe.start", n=start["value"]))
    st.code(_token_list(start["tokens"]), language=None, wrap_lines=True)
    if given.get("learned", given["k"]) < given["k"]:
        st.caption(t("exercises.bpe.learned", learned=given["learned"]))


TASKS = {
    "pe_entry": _task_pe,
    "attention_score": _task_score,
    "softmax_entry": _task_softmax,
    "layernorm_entry": _task_layernorm,
    "bpe_count": _task_bpe,
}


def _source_note(exercise: Exercise) -> str:
    """Honestly, what the number is: the model's own, or the same computation on some of its numbers."""
    source = exercise.params.get("source") or {}
    kind = exercise.kind
    if kind == "layernorm_entry":
        first, last = source.get("dims", [0, len(exercise.given["x"])])
        return t(
            f"exercises.source.layernorm_{source.get('norm', 'post')}",
            n=len(exercise.given["x"]),
            first=first,
            last=last - 1,
            token=literal(source.get("token", "?")),
        )
    if kind == "softmax_entry" and not _of_model(exercise):
        return t("exercises.source.softmax_part", n=len(exercise.given["scores"]))
    if kind == "pe_entry":
        return t("exercises.source.pe_entry", pos=exercise.given["pos"], i=exercise.given["i"])
    if kind == "attention_score" and source.get("positions") in ("alibi", "rope"):
        return t(f"exercises.source.attention_score_{source['positions']}")
    return t(f"exercises.source.{kind}")


def _rule(exercise: Exercise) -> str:
    """How close counts, said before the answer."""
    if exercise.tolerance == 0:
        return t("exercises.exact")
    if not math.isfinite(exercise.tolerance):
        return t("exercises.any")
    return t("exercises.tolerance", tolerance=_tolerance(exercise), decimals=_decimals(exercise))


# -- the verdict and the worked solution ---------------------------------------------------------------


def _verdict_text(exercise: Exercise, verdict: Verdict) -> str:
    d = _decimals(exercise) + MORE
    parsed = _typed(verdict.parsed)
    if exercise.kind == "bpe_count":
        k, answer = exercise.given["k"], exercise.answer
        if verdict.correct:
            return t("exercises.right_count", answer=answer, k=k)
        which = "too_many" if verdict.error > 0 else "too_few"
        return t(f"exercises.{which}", parsed=parsed, diff=_typed(abs(verdict.error)), answer=answer, k=k)
    values = {"parsed": parsed, "answer": _num(exercise.answer, d), "tolerance": _tolerance(exercise)}
    if verdict.correct:
        if _of_model(exercise) and exercise.unrounded is not None:
            return t("exercises.right_model", model=_num(_model_value(exercise), d), **values)
        return t("exercises.right", **values)
    which = "too_high" if verdict.error > 0 else "too_low"
    return t(f"exercises.{which}", diff=_num(abs(verdict.error), d), **values)


def _problem_text(verdict: Verdict, raw: str) -> str:
    return t(f"exercises.problem.{verdict.problem}", raw=literal(raw), n=len(raw), limit=MAX_TYPED)


def _frac(a: str, b: str) -> str:
    return rf"\frac{{{a}}}{{{b}}}"


def _latex_chain(parts: list[str]) -> None:
    st.latex(_chain(parts))


def _solution_pe(exercise: Exercise, d: int) -> None:
    s, given = _steps(exercise), exercise.given
    trig = r"\sin" if given["i"] % 2 == 0 else r"\cos"
    pair, exponent = s["pair"]["value"], _num(s["exponent"]["value"], d + 2)
    denominator, angle = _num(s["denominator"]["value"], d), _num(s["angle"]["value"], d)
    _latex_chain(
        [
            rf"2\lfloor {given['i']}/2 \rfloor = {pair}",
            f"{_frac(pair, given['d_model'])} = {exponent}",
            rf"10000^{{{exponent}}} = {denominator}",
            f"{_frac(given['pos'], denominator)} = {angle}",
            rf"{trig}({angle}) = {_num(s['result']['value'], d)}",
        ]
    )


def _solution_score(exercise: Exercise, d: int) -> None:
    s, given, shown = _steps(exercise), exercise.given, _decimals(exercise)
    products = s["products"]["value"]
    _grid(
        [
            ("$q_i$", [_num(x, shown) for x in given["q"]]),
            ("$k_i$", [_num(x, shown) for x in given["k"]]),
            (r"$q_i\,k_i$", [_num(x, d) for x in products]),
        ],
        _columns(len(products)),
    )
    dot = _num(s["sum"]["value"], d)
    total = r"q\cdot k = \sum_i q_i\,k_i"
    if "rest" in s:
        total += rf" = {_num(sum(products), d)} + ({_num(s['rest']['value'], shown)})"
    root = _num(s["sqrt_dk"]["value"], d)
    score = _frac(r"q\cdot k", r"\sqrt{d_k}")
    if "bias" not in s:
        _latex_chain(
            [
                f"{total} = {dot}",
                rf"\sqrt{{d_k}} = \sqrt{{{given['d_k']}}} = {root}",
                f"{score} = {_frac(dot, root)} = {_num(s['result']['value'], d)}",
            ]
        )
        return
    scaled, bias = _num(s["scaled"]["value"], d), _num(s["bias"]["value"], shown)
    _latex_chain(
        [
            f"{total} = {dot}",
            rf"\sqrt{{d_k}} = \sqrt{{{given['d_k']}}} = {root}",
            f"{score} = {_frac(dot, root)} = {scaled}",
            rf"{score} + b = {scaled} + ({bias}) = {_num(s['result']['value'], d)}",
        ]
    )


def _solution_softmax(exercise: Exercise, d: int) -> None:
    s, given, shown = _steps(exercise), exercise.given, _decimals(exercise)
    j = given["j"]
    _grid(
        [
            ("$s_i$", [_num(x, shown) for x in given["scores"]]),
            (r"$s_i - \max$", [_num(x, shown) for x in s["shifted"]["value"]]),
            (r"$e^{s_i - \max}$", [_num(x, d) for x in s["exps"]["value"]]),
        ],
        _columns(len(given["scores"]), j, (exercise.params.get("source") or {}).get("keys")),
    )
    top, total = _num(s["max"]["value"], shown), _num(s["sum"]["value"], d)
    weight = _frac(r"e^{s_j - \max}", r"\sum_i e^{s_i - \max}")
    _latex_chain(
        [
            rf"\max_i s_i = {top}",
            rf"\sum_i e^{{s_i - \max}} = {total}",
            f"{weight} = {_frac(_num(s['exps']['value'][j], d), total)} = {_num(s['result']['value'], d)}",
        ]
    )


def _solution_layernorm(exercise: Exercise, d: int) -> None:
    s, given, shown = _steps(exercise), exercise.given, _decimals(exercise)
    j = given["j"]
    _grid(
        [
            ("$x_i$", [_num(x, shown) for x in given["x"]]),
            (r"$x_i - \mu$", [_num(x, d) for x in s["deviations"]["value"]]),
            (r"$(x_i - \mu)^2$", [_num(x, d) for x in s["squares"]["value"]]),
        ],
        _columns(len(given["x"]), j),
    )
    sigma = _num(s["sigma"]["value"], d)
    entry = _frac(r"x_j - \mu", r"\sqrt{\sigma^2 + \varepsilon}")
    deviation = _num(s["deviations"]["value"][j], d)
    _latex_chain(
        [
            rf"\mu = {_num(s['mean']['value'], d)}",
            rf"\sigma^2 = {_num(s['variance']['value'], d)}",
            rf"\sqrt{{\sigma^2 + \varepsilon}} = {sigma}",
            f"{entry} = {_frac(deviation, sigma)} = {_num(s['result']['value'], d)}",
        ]
    )


def _solution_bpe(exercise: Exercise, d: int) -> None:
    s = exercise.solution
    merges, end = [step for step in s if step["name"] == "merge"], s[-1]
    if merges:
        show_table(
            {
                t("exercises.bpe.col_rank"): [m["rank"] for m in merges],
                t("exercises.bpe.col_pair"): [f"{m['pair'][0]} + {m['pair'][1]}" for m in merges],
                t("exercises.bpe.col_count"): [m["value"] for m in merges],
            },
            hide_index=True,
            width=560,
            height=min(36 * (len(merges) + 1) + 2, 260),
        )
    st.caption(t("exercises.bpe.end", k=len(merges), n=end["value"]))
    st.code(_token_list(end["tokens"]), language=None, wrap_lines=True)


SOLUTIONS = {
    "pe_entry": _solution_pe,
    "attention_score": _solution_score,
    "softmax_entry": _solution_softmax,
    "layernorm_entry": _solution_layernorm,
    "bpe_count": _solution_bpe,
}


def _show_verdict(exercise: Exercise, verdict: Verdict, raw: str, key: str) -> None:
    if verdict.parsed is None:
        st.warning(_problem_text(verdict, raw), icon=":material/edit:")
        return
    if verdict.correct:
        st.success(_verdict_text(exercise, verdict), icon=":material/check_circle:")
        return
    st.error(_verdict_text(exercise, verdict), icon=":material/cancel:")
    with st.container(key=f"{key}_solution"):
        st.markdown(f"**{t('exercises.solution')}**")
        SOLUTIONS[exercise.kind](exercise, _decimals(exercise) + MORE)
        if _of_model(exercise) and exercise.unrounded is not None:
            st.caption(t("exercises.model_value", model=_num(exercise.unrounded, _decimals(exercise) + MORE)))


# -- the card ------------------------------------------------------------------------------------------


def _check(exercise: Exercise, key: str, on_checked: Callable[[Verdict], None] | None) -> None:
    """The Check button: read what was typed, keep the verdict, tell ``on_checked`` (a number only)."""
    raw = st.session_state.get(f"{key}_answer", "") or ""
    verdict = check(exercise, raw)
    st.session_state[f"{key}_verdict"] = (exercise.id, verdict, raw)
    if on_checked is not None and verdict.parsed is not None:
        on_checked(verdict)


def _fresh(exercise: Exercise, key: str) -> None:
    """Another exercise in this card: the answer box empties and the old verdict goes."""
    state = st.session_state
    if state.get(f"{key}_exercise") != exercise.id:
        state[f"{key}_exercise"] = exercise.id
        state[f"{key}_answer"] = ""
        state.pop(f"{key}_verdict", None)


def exercise_card(
    exercise: Exercise, key: str, on_checked: Callable[[Verdict], None] | None = None
) -> Verdict | None:
    """The exercise in ``st.container(key=key)``: what to compute, the numbers, how close counts, an
    answer box (``{key}_answer``) and Check (``{key}_check``), then the verdict (a miss: the worked
    solution). ``on_checked(verdict)``: once per check of a readable number. Returns the last verdict
    of this card for this exercise, or None."""
    _fresh(exercise, key)
    decimals = _decimals(exercise)
    st.html(STYLE.format(cls=key_class(key)))
    with st.container(key=key):
        TASKS[exercise.kind](exercise, decimals, _source_note(exercise))
        with st.form(f"{key}_form", border=False), st.container(horizontal=True, vertical_alignment="bottom"):
            st.text_input(
                t("exercises.answer"),
                key=f"{key}_answer",
                max_chars=MAX_CHARS,
                placeholder=t("exercises.placeholder"),
                width=320,
            )
            st.form_submit_button(
                t("exercises.check"),
                key=f"{key}_check",
                on_click=_check,
                args=(exercise, key, on_checked),
                type="primary",
            )
            st.markdown(_rule(exercise))
        kept = st.session_state.get(f"{key}_verdict")
        if kept is None or kept[0] != exercise.id:
            return None
        _show_verdict(exercise, kept[1], kept[2], key)
        return kept[1]


# -- self-study on the Lecture page --------------------------------------------------------------------


def _new_numbers(run, step_name: str, kind: str, shown_id: str) -> None:
    """Next seed; a few more when the next one gives the same exercise (a short sentence has few)."""
    state = st.session_state
    seed = state.get(SEED, 0)
    for _ in range(NEW_TRIES):
        seed += 1
        if all(e.id != shown_id for e in exercises_at(run, step_name, seed) if e.kind == kind):
            break
    state[SEED] = seed


def _pick(found: list[Exercise], step_name: str) -> Exercise:
    """The exercise to show: the only one, or the one picked (by kind, kept across New numbers)."""
    if len(found) == 1:
        return found[0]
    by_kind = {e.kind: e for e in found}
    kind = st.segmented_control(
        t("exercises.pick"),
        list(by_kind),
        format_func=lambda k: exercise_title(by_kind[k]),
        key=f"exercise_pick_{step_name}",
        default=found[0].kind,
        required=True,
    )
    return by_kind.get(kind, found[0])


def self_study(run, step_name: str) -> None:
    """Below the slide: "Compute it yourself" (the expander ``exercise_self``), with this step's
    exercise, "New numbers" (``exercise_new``) and the card (``exercise_self_card``). Nothing when the
    step gives none; nothing computed while the expander is closed."""
    if not _offered(run, step_name):
        return
    st.html(SELF_STYLE)
    box = st.expander(
        t("exercises.expander"), key="exercise_self", on_change="rerun", icon=":material/calculate:"
    )
    if not box.open:
        return
    with box:
        try:
            found = exercises_at(run, step_name, st.session_state.get(SEED, 0))
        except Exception:  # a sentence no exercise was made for: a message, never a traceback
            log.exception("exercises_for failed at step %s", step_name)
            found = []
        if not found:
            st.info(t("exercises.none"))
            return
        with st.container(horizontal=True, vertical_alignment="bottom"):
            exercise = _pick(found, step_name)
            st.button(
                t("exercises.new"),
                key="exercise_new",
                icon=":material/casino:",
                on_click=_new_numbers,
                args=(run, step_name, exercise.kind, exercise.id),
            )
        exercise_card(exercise, "exercise_self_card")
