"""Compute it yourself, as data: what a card shows for a ``core.teaching.exercises.Exercise`` (the task, its
numbers, how close counts) and what a check of a typed answer says (the verdict, the worked solution), in
one language. One builder, two renderers: ui/sections/exercises.py draws it with Streamlit, the lecture
hall's follower page (ui/hall/static/follower.js) in the browser.

    card = card_view(exercise, "zh")                    # {"title", "blocks", "rule"}
    said = verdict_view(exercise, check(exercise, raw), raw, "zh")  # {"tone", "text", "solution", "model"}

A block is a dict with a ``kind``: "text" (Markdown of our own words; user text only through
``literal()``), "note" (a caption), "latex", "table" (``columns``; ``rows`` of [label, cells]; labels and
cells are Markdown with $math$ when ``markdown``, else plain text), "code" (verbatim: user text) and
"row" (``parts``: lists of blocks side by side, ``weights`` their widths, or each as wide as it needs).
"""

from __future__ import annotations

import math

from core.teaching.exercises import MAX_TYPED, Exercise, Verdict
from figures.drawing.text import literal
from i18n import t

MORE = 2  # decimals beyond the shown ones for the solution's steps, the model's value and a miss

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


# -- blocks ----------------------------------------------------------------------------------------------


def text(markdown: str) -> dict:
    return {"kind": "text", "text": markdown}


def note(markdown: str) -> dict:
    return {"kind": "note", "text": markdown}


def latex(source: str) -> dict:
    return {"kind": "latex", "latex": source}


def code(verbatim: str) -> dict:
    return {"kind": "code", "code": verbatim}


def table(rows: list[tuple[str, list[str]]], columns: list[str], markdown: bool = True) -> dict:
    return {
        "kind": "table",
        "columns": columns,
        "rows": [[label, cells] for label, cells in rows],
        "markdown": markdown,
    }


def row(*parts: list[dict], weights: list[float] | None = None) -> dict:
    return {"kind": "row", "parts": list(parts), "weights": weights}


# -- numbers as shown ------------------------------------------------------------------------------------


def decimals(exercise: Exercise) -> int:
    return int(exercise.params.get("decimals", 2))


def num(x: float, places: int) -> str:
    shown = f"{float(x):.{places}f}"
    return shown[1:] if shown.startswith("-") and float(shown) == 0 else shown  # no "-0.00"


def typed(x: float) -> str:
    """A number as it was read from what was typed ("0,5" → 0.5)."""
    return f"{x:.10g}"


def token_list(tokens: list[str]) -> str:
    """Tokens in brackets, for a code block (which shows them verbatim)."""
    return " ".join(f"[{tok}]" for tok in tokens)


def tolerance(exercise: Exercise) -> str:
    """The tolerance, two significant digits rounded down: the check accepts at least this."""
    tol = exercise.tolerance
    if not 0 < tol < math.inf:  # exact (a count), or anything goes (numbers too close to tell apart)
        return "0" if tol == 0 else "∞"
    digits = max(0, 1 - math.floor(math.log10(tol)))
    down = math.floor(tol * 10**digits + 1e-9) / 10**digits
    return f"{down:.{digits}f}".rstrip("0").rstrip(".")


def eps_text(eps: float, tex: bool = False) -> str:
    """ε as a power of ten when it is one (10⁻⁵), else as Python writes it."""
    power = math.log10(eps) if eps > 0 else 0.5
    if power != round(power):
        return f"{eps:g}"
    n = int(round(power))
    return f"10^{{{n}}}" if tex else "10" + str(n).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def of_model(exercise: Exercise) -> bool:
    return bool((exercise.params.get("source") or {}).get("of_model"))


def model_value(exercise: Exercise) -> float:
    """The model's value where the model computes exactly this, else the answer."""
    unrounded = exercise.unrounded
    return unrounded if of_model(exercise) and unrounded is not None else exercise.answer


def columns(n: int, asked: int | None = None, numbers: list[int] | None = None) -> list[str]:
    """Column headers 0 … n − 1 (dimensions and positions count from 0, as in the paper's PE(pos, 2i)),
    or ``numbers`` (a row's key positions); the asked column says so: "j = 3"."""
    numbers = list(range(n)) if numbers is None else numbers
    return [f"j = {numbers[c]}" if c == asked else str(numbers[c]) for c in range(n)]


def chain(parts: list[str], per_line: int = 3) -> str:
    """Equations side by side, ``per_line`` to a line (a tall card pushes the slide off the screen)."""
    lines = [r",\quad ".join(parts[i : i + per_line]) for i in range(0, len(parts), per_line)]
    return r"\begin{gathered}" + r" \\ ".join(lines) + r"\end{gathered}"


def _steps(exercise: Exercise) -> dict:
    return {step["name"]: step for step in exercise.solution}


def exercise_title(exercise: Exercise, lang: str) -> str:
    """A short label for a pick list: "Softmax: one weight of a row of 4 scores"."""
    given = exercise.given
    values = {
        "pe_entry": lambda: {"pos": given["pos"], "i": given["i"]},
        "attention_score": lambda: {"d_k": given["d_k"]},
        "softmax_entry": lambda: {"n": len(given["scores"])},
        "layernorm_entry": lambda: {"n": len(given["x"])},
        "bpe_count": lambda: {"k": given["k"]},
    }.get(exercise.kind, dict)()
    return t(f"exercises.title.{exercise.kind}", lang, **values)


# -- what to compute -------------------------------------------------------------------------------------


def _intro(words: str, formula: str, source: str) -> dict:
    """What to compute and where the number comes from (left), the formula (right): one row."""
    return row([text(words), note(source)], [latex(formula)], weights=[3, 2])


def _task_pe(exercise: Exercise, places: int, source: str, lang: str) -> list[dict]:
    given, src = exercise.given, exercise.params.get("source") or {}
    token = literal(src["token"]) if "token" in src else "—"
    words = t(
        "exercises.task.pe_entry", lang, pos=given["pos"], i=given["i"], d_model=given["d_model"], token=token
    )
    return [
        _intro(words, FORMULA["pe_entry"], source),
        latex(
            rf"pos = {given['pos']},\quad i = {given['i']},\quad d_{{\text{{model}}}} = {given['d_model']}"
        ),
    ]


def _task_score(exercise: Exercise, places: int, source: str, lang: str) -> list[dict]:
    given, src = exercise.given, exercise.params.get("source") or {}
    n = len(given["q"])
    words = t(
        "exercises.task.attention_score",
        lang,
        query=literal(src.get("query_token", "?")),
        qpos=src.get("query", "?"),
        key=literal(src.get("key_token", "?")),
        kpos=src.get("key", "?"),
        head=src.get("head", 0) + 1,
        layer=src.get("layer", 0) + 1,
        d_k=given["d_k"],
        n=n,
        decimals=places,
    )
    alibi = "bias" in given
    blocks = [_intro(words, FORMULA["attention_score_alibi" if alibi else "attention_score"], source)]
    grid = table(
        [("$q_i$", [num(x, places) for x in given["q"]]), ("$k_i$", [num(x, places) for x in given["k"]])],
        columns(n),
    )
    if "rest" not in given:
        blocks.append(grid)
    else:
        rest = [
            note(t("exercises.task.rest", lang, others=given["d_k"] - n)),
            latex(rf"\sum_{{i={n}}}^{{{given['d_k'] - 1}}} q_i\,k_i = {num(given['rest'], places)}"),
        ]
        blocks.append(row([grid], rest))
    if alibi:
        qpos, kpos = src.get("query", 0), src.get("key", 0)
        blocks.append(
            text(
                t(
                    "exercises.task.bias",
                    lang,
                    head=src.get("head", 0) + 1,
                    m=f"{src.get('slope', 0.0):g}",
                    qpos=qpos,
                    kpos=kpos,
                    distance=abs(qpos - kpos),
                    bias=num(given["bias"], places),
                )
            )
        )
    return blocks


def _task_softmax(exercise: Exercise, places: int, source: str, lang: str) -> list[dict]:
    given, src = exercise.given, exercise.params.get("source") or {}
    j, scores = given["j"], given["scores"]
    tokens = src.get("key_tokens") or [""] * len(scores)
    where = t(f"exercises.where.{src.get('attn_kind', 'encoder')}", lang, layer=src.get("layer", 0) + 1)
    positions = src.get("keys") or list(range(len(scores)))
    words = t(
        "exercises.task.softmax_entry",
        lang,
        col=positions[j],
        token=literal(tokens[j]),
        query=literal(src.get("query_token", "?")),
        head=src.get("head", 0) + 1,
        where=where,
        decimals=places,
    )
    grid = table(
        [
            (t("exercises.key_row", lang), [literal(tok) for tok in tokens]),
            ("$s_i$", [num(s, places) for s in scores]),
        ],
        columns(len(scores), j, positions),
    )
    return [_intro(words, FORMULA["softmax_entry"], source), grid]


def _task_layernorm(exercise: Exercise, places: int, source: str, lang: str) -> list[dict]:
    given = exercise.given
    xs, j = given["x"], given["j"]
    words = t(
        "exercises.task.layernorm_entry", lang, col=j, eps=eps_text(given["eps"]), n=len(xs), decimals=places
    )
    formula = FORMULA["layernorm_entry"].replace("{eps}", eps_text(given["eps"], tex=True))
    return [
        _intro(words, formula, source),
        table([("$x_i$", [num(x, places) for x in xs])], columns(len(xs), j)),
    ]


def _task_bpe(exercise: Exercise, places: int, source: str, lang: str) -> list[dict]:
    given = exercise.given
    kind = "bpe_count" if given.get("byte_level", True) else "bpe_count_classic"
    start = exercise.solution[0]
    blocks = [
        _intro(t(f"exercises.task.{kind}", lang, k=given["k"]), FORMULA["bpe_count"], source),
        code(given["text"]),
        note(t("exercises.bpe.start", lang, n=start["value"])),
        code(token_list(start["tokens"])),
    ]
    if given.get("learned", given["k"]) < given["k"]:
        blocks.append(note(t("exercises.bpe.learned", lang, learned=given["learned"])))
    return blocks


TASKS = {
    "pe_entry": _task_pe,
    "attention_score": _task_score,
    "softmax_entry": _task_softmax,
    "layernorm_entry": _task_layernorm,
    "bpe_count": _task_bpe,
}


def source_note(exercise: Exercise, lang: str) -> str:
    """Honestly, what the number is: the model's own, or the same computation on some of its numbers."""
    src = exercise.params.get("source") or {}
    kind = exercise.kind
    if kind == "layernorm_entry":
        first, last = src.get("dims", [0, len(exercise.given["x"])])
        return t(
            f"exercises.source.layernorm_{src.get('norm', 'post')}",
            lang,
            n=len(exercise.given["x"]),
            first=first,
            last=last - 1,
            token=literal(src.get("token", "?")),
        )
    if kind == "softmax_entry" and not of_model(exercise):
        return t("exercises.source.softmax_part", lang, n=len(exercise.given["scores"]))
    if kind == "pe_entry":
        return t("exercises.source.pe_entry", lang, pos=exercise.given["pos"], i=exercise.given["i"])
    if kind == "attention_score" and src.get("positions") in ("alibi", "rope"):
        return t(f"exercises.source.attention_score_{src['positions']}", lang)
    return t(f"exercises.source.{kind}", lang)


def rule(exercise: Exercise, lang: str) -> str:
    """How close counts, said before the answer."""
    if exercise.tolerance == 0:
        return t("exercises.exact", lang)
    if not math.isfinite(exercise.tolerance):
        return t("exercises.any", lang)
    return t("exercises.tolerance", lang, tolerance=tolerance(exercise), decimals=decimals(exercise))


def card_view(exercise: Exercise, lang: str) -> dict:
    """The card before any answer: its title, what to compute with the numbers, how close counts."""
    places = decimals(exercise)
    blocks = TASKS[exercise.kind](exercise, places, source_note(exercise, lang), lang)
    return {
        "id": exercise.id,
        "kind": exercise.kind,
        "title": exercise_title(exercise, lang),
        "blocks": blocks,
        "rule": rule(exercise, lang),
    }


# -- the verdict and the worked solution -----------------------------------------------------------------


def verdict_text(exercise: Exercise, verdict: Verdict, lang: str) -> str:
    d = decimals(exercise) + MORE
    parsed = typed(verdict.parsed)
    if exercise.kind == "bpe_count":
        k, answer = exercise.given["k"], exercise.answer
        if verdict.correct:
            return t("exercises.right_count", lang, answer=answer, k=k)
        which = "too_many" if verdict.error > 0 else "too_few"
        return t(
            f"exercises.{which}", lang, parsed=parsed, diff=typed(abs(verdict.error)), answer=answer, k=k
        )
    values = {"parsed": parsed, "answer": num(exercise.answer, d), "tolerance": tolerance(exercise)}
    if verdict.correct:
        if of_model(exercise) and exercise.unrounded is not None:
            return t("exercises.right_model", lang, model=num(model_value(exercise), d), **values)
        return t("exercises.right", lang, **values)
    which = "too_high" if verdict.error > 0 else "too_low"
    return t(f"exercises.{which}", lang, diff=num(abs(verdict.error), d), **values)


def problem_text(verdict: Verdict, raw: str, lang: str) -> str:
    return t(f"exercises.problem.{verdict.problem}", lang, raw=literal(raw), n=len(raw), limit=MAX_TYPED)


def frac(a: str, b: str) -> str:
    return rf"\frac{{{a}}}{{{b}}}"


def _solution_pe(exercise: Exercise, d: int, lang: str) -> list[dict]:
    s, given = _steps(exercise), exercise.given
    trig = r"\sin" if given["i"] % 2 == 0 else r"\cos"
    pair, exponent = s["pair"]["value"], num(s["exponent"]["value"], d + 2)
    denominator, angle = num(s["denominator"]["value"], d), num(s["angle"]["value"], d)
    return [
        latex(
            chain(
                [
                    rf"2\lfloor {given['i']}/2 \rfloor = {pair}",
                    f"{frac(pair, given['d_model'])} = {exponent}",
                    rf"10000^{{{exponent}}} = {denominator}",
                    f"{frac(given['pos'], denominator)} = {angle}",
                    rf"{trig}({angle}) = {num(s['result']['value'], d)}",
                ]
            )
        )
    ]


def _solution_score(exercise: Exercise, d: int, lang: str) -> list[dict]:
    s, given, shown = _steps(exercise), exercise.given, decimals(exercise)
    products = s["products"]["value"]
    grid = table(
        [
            ("$q_i$", [num(x, shown) for x in given["q"]]),
            ("$k_i$", [num(x, shown) for x in given["k"]]),
            (r"$q_i\,k_i$", [num(x, d) for x in products]),
        ],
        columns(len(products)),
    )
    dot = num(s["sum"]["value"], d)
    total = r"q\cdot k = \sum_i q_i\,k_i"
    if "rest" in s:
        total += rf" = {num(sum(products), d)} + ({num(s['rest']['value'], shown)})"
    root = num(s["sqrt_dk"]["value"], d)
    score = frac(r"q\cdot k", r"\sqrt{d_k}")
    parts = [f"{total} = {dot}", rf"\sqrt{{d_k}} = \sqrt{{{given['d_k']}}} = {root}"]
    if "bias" not in s:
        parts.append(f"{score} = {frac(dot, root)} = {num(s['result']['value'], d)}")
    else:
        scaled, bias = num(s["scaled"]["value"], d), num(s["bias"]["value"], shown)
        parts += [
            f"{score} = {frac(dot, root)} = {scaled}",
            rf"{score} + b = {scaled} + ({bias}) = {num(s['result']['value'], d)}",
        ]
    return [grid, latex(chain(parts))]


def _solution_softmax(exercise: Exercise, d: int, lang: str) -> list[dict]:
    s, given, shown = _steps(exercise), exercise.given, decimals(exercise)
    j = given["j"]
    grid = table(
        [
            ("$s_i$", [num(x, shown) for x in given["scores"]]),
            (r"$s_i - \max$", [num(x, shown) for x in s["shifted"]["value"]]),
            (r"$e^{s_i - \max}$", [num(x, d) for x in s["exps"]["value"]]),
        ],
        columns(len(given["scores"]), j, (exercise.params.get("source") or {}).get("keys")),
    )
    top, total = num(s["max"]["value"], shown), num(s["sum"]["value"], d)
    weight = frac(r"e^{s_j - \max}", r"\sum_i e^{s_i - \max}")
    return [
        grid,
        latex(
            chain(
                [
                    rf"\max_i s_i = {top}",
                    rf"\sum_i e^{{s_i - \max}} = {total}",
                    f"{weight} = {frac(num(s['exps']['value'][j], d), total)} "
                    f"= {num(s['result']['value'], d)}",
                ]
            )
        ),
    ]


def _solution_layernorm(exercise: Exercise, d: int, lang: str) -> list[dict]:
    s, given, shown = _steps(exercise), exercise.given, decimals(exercise)
    j = given["j"]
    grid = table(
        [
            ("$x_i$", [num(x, shown) for x in given["x"]]),
            (r"$x_i - \mu$", [num(x, d) for x in s["deviations"]["value"]]),
            (r"$(x_i - \mu)^2$", [num(x, d) for x in s["squares"]["value"]]),
        ],
        columns(len(given["x"]), j),
    )
    sigma = num(s["sigma"]["value"], d)
    entry = frac(r"x_j - \mu", r"\sqrt{\sigma^2 + \varepsilon}")
    deviation = num(s["deviations"]["value"][j], d)
    return [
        grid,
        latex(
            chain(
                [
                    rf"\mu = {num(s['mean']['value'], d)}",
                    rf"\sigma^2 = {num(s['variance']['value'], d)}",
                    rf"\sqrt{{\sigma^2 + \varepsilon}} = {sigma}",
                    f"{entry} = {frac(deviation, sigma)} = {num(s['result']['value'], d)}",
                ]
            )
        ),
    ]


def _solution_bpe(exercise: Exercise, d: int, lang: str) -> list[dict]:
    s = exercise.solution
    merges, end = [step for step in s if step["name"] == "merge"], s[-1]
    blocks = []
    if merges:  # the pairs are the sentence's own text: a plain table, never Markdown
        heads = [
            t("exercises.bpe.col_rank", lang),
            t("exercises.bpe.col_pair", lang),
            t("exercises.bpe.col_count", lang),
        ]
        rows = [("", [m["rank"], f"{m['pair'][0]} + {m['pair'][1]}", m["value"]]) for m in merges]
        blocks.append(table(rows, heads, markdown=False))
    return blocks + [
        note(t("exercises.bpe.end", lang, k=len(merges), n=end["value"])),
        code(token_list(end["tokens"])),
    ]


SOLUTIONS = {
    "pe_entry": _solution_pe,
    "attention_score": _solution_score,
    "softmax_entry": _solution_softmax,
    "layernorm_entry": _solution_layernorm,
    "bpe_count": _solution_bpe,
}


def verdict_view(exercise: Exercise, verdict: Verdict, raw: str, lang: str) -> dict:
    """What a check says: ``tone`` "problem" (not a number: why), "right" or "wrong"; a miss comes with the
    worked solution (``solution``: blocks) and, where the model computes exactly this, its own value."""
    if verdict.parsed is None:
        return {"tone": "problem", "text": problem_text(verdict, raw, lang), "solution": [], "model": None}
    said = verdict_text(exercise, verdict, lang)
    if verdict.correct:
        return {"tone": "right", "text": said, "solution": [], "model": None}
    d = decimals(exercise) + MORE
    model = None
    if of_model(exercise) and exercise.unrounded is not None:
        model = t("exercises.model_value", lang, model=num(exercise.unrounded, d))
    return {
        "tone": "wrong",
        "text": said,
        "solution": SOLUTIONS[exercise.kind](exercise, d, lang),
        "model": model,
        "solution_title": t("exercises.solution", lang),
    }
