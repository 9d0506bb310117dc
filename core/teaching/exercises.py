"""Compute it yourself: one number of the model on screen, by hand, from numbers the page shows.

Each generator returns an :class:`Exercise`: the numbers shown (``given``, rounded as shown), the
answer computed *from those rounded numbers*, a tolerance that follows the rounding, a worked
solution whose steps (dicts: ``name``, ``formula``, ``value``, ...) carry the real intermediate
numbers, and ``unrounded``, the same computation on the numbers before rounding.

    exercise = attention_score(q, k)       # q, k: one query and one key of a head
    check(exercise, " .5 ")                # Verdict(correct=..., parsed=0.5, error=...)

What a student types is read by :func:`parse_number`, which never raises. What this module returns
is data; the words around it are the UI's.
Decisions (rounding, solution steps, typed input): docs/decisions.md, core/teaching/exercises.py.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.model.positional import alibi_slopes
from core.teaching.questions import bpe_merges_possible, run_identity, stable_id
from core.tokenizers.bpe import BPETokenizer

KINDS = ("pe_entry", "attention_score", "softmax_entry", "layernorm_entry", "bpe_count")
DECIMALS = 2  # numbers are shown with this many decimals
MAX_SHOWN = 8  # at most this many dimensions of a query and a key are shown (d_k ≤ 8 fits whole)
PE_TOLERANCE = 5e-3  # PE entry: the answer to 2 decimals (sin and cos need no rounded input)
LAYERNORM_SHOWN = 6  # numbers of the vector a LayerNorm exercise shows
MAX_TYPED = 64  # characters: a longer answer is not a number anyone typed


@dataclass(frozen=True)
class Exercise:
    """One number to compute: ``answer`` (from the rounded ``given``), within ``tolerance``.

    ``params``: what the exercise is about (``source``: where in the model the numbers come from, when
    they do; otherwise the numbers themselves), the input of ``id``; ``unrounded``: the same
    computation on the numbers before rounding (None when there was nothing to round off).
    """

    kind: str
    id: str
    given: dict
    answer: float | int
    tolerance: float
    solution: list
    params: dict
    unrounded: float | int | None = None

    def __hash__(self) -> int:  # given and params are dicts: equal exercises have equal ids
        return hash(self.id)


@dataclass(frozen=True)
class Verdict:
    """``correct``: |parsed - answer| ≤ tolerance. ``error``: parsed - answer (signed: too high > 0).
    ``problem`` when nothing could be read: "empty", "too_long", "not_a_number", "not_finite" or
    "ambiguous" (a comma that may be a decimal comma or a thousands separator: "1,500")."""

    correct: bool
    parsed: float | None
    error: float | None
    problem: str = ""


class NoExercise(ValueError):
    """This run cannot give that exercise (e.g. a PE entry for a model that adds no sinusoidal PE)."""


def _shown(x: float, decimals: int) -> float:
    """``x`` as shown: rounded to ``decimals`` (no "-0.00": a rounded zero is 0.0)."""
    return round(float(x), decimals) + 0.0


def _floats(xs) -> list[float]:
    """A tensor or a sequence as a list of Python floats."""
    return [float(x) for x in (xs.tolist() if hasattr(xs, "tolist") else xs)]


def _half_unit(decimals: int) -> float:
    """Half a unit of the last decimal shown: the most a shown number is off from the real one."""
    return 0.5 * 10.0**-decimals


def _exercise(
    kind: str,
    given: dict,
    answer,
    tolerance: float,
    solution: list,
    source: dict | None,
    identity: str,
    unrounded=None,
    **asked,
) -> Exercise:
    """The exercise, its id from the kind, what was asked (``asked``, and ``source`` or else the numbers
    shown: two bare exercises on other numbers must not share an id) and ``identity``."""
    params = asked | ({"source": source} if source is not None else {"given": given})
    return Exercise(
        kind, stable_id(kind, params, identity), given, answer, tolerance, solution, params, unrounded
    )


# -- the positional encoding ---------------------------------------------------------------------------


def pe_entry(
    pos: int,
    i: int,
    d_model: int,
    *,
    identity: str = "",
    source: dict | None = None,
    model_value: float | None = None,
) -> Exercise:
    """PE[pos, i] of the paper's sinusoidal encoding: sin (i even) or cos (i odd) of
    pos / 10000^(2⌊i/2⌋/d_model). Given pos, i and d_model; tolerance PE_TOLERANCE (5e-3: the answer to
    2 decimals). ``model_value``: the model's own entry (``trace.positional[pos, i]``), as ``unrounded``.

    >>> pe_entry(1, 0, 4).answer == math.sin(1.0)
    True
    """
    for name, n in (("pos", pos), ("i", i), ("d_model", d_model)):
        if isinstance(n, bool) or not isinstance(n, int):
            raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if pos < 0 or d_model < 1 or not 0 <= i < d_model:
        raise ValueError(f"need pos ≥ 0 and 0 ≤ i < d_model, got pos={pos}, i={i}, d_model={d_model}")
    two_i = 2 * (i // 2)
    exponent = two_i / d_model
    denominator = 10000.0**exponent
    angle = pos / denominator
    trig = "sin" if i % 2 == 0 else "cos"
    value = math.sin(angle) if trig == "sin" else math.cos(angle)
    solution = [
        {"name": "pair", "formula": "2⌊i/2⌋", "value": two_i},
        {"name": "exponent", "formula": "2⌊i/2⌋ / d_model", "value": exponent},
        {"name": "denominator", "formula": "10000^(2⌊i/2⌋/d_model)", "value": denominator},
        {"name": "angle", "formula": "pos / 10000^(2⌊i/2⌋/d_model)", "value": angle},
        {"name": "result", "formula": f"{trig}(angle)", "value": value},
    ]
    given = {"pos": pos, "i": i, "d_model": d_model}
    return _exercise("pe_entry", given, value, PE_TOLERANCE, solution, source, identity, model_value, **given)


# -- an attention score --------------------------------------------------------------------------------


def attention_score(
    q,
    k,
    *,
    bias: float | None = None,
    shown: int = MAX_SHOWN,
    decimals: int = DECIMALS,
    identity: str = "",
    source: dict | None = None,
) -> Exercise:
    """q·k/√d_k of one query and one key of a head (``q``, ``k``: its d_k numbers each, unrounded),
    plus ``bias`` when the model adds one to the score (ALiBi's −m·|i − j|): given rounded as ``bias``,
    added in the solution's last step, so the answer is the score the model's softmax reads.

    Shown: the first ``shown`` (≤ 8) numbers of each, rounded to ``decimals``. When the head has more
    dimensions (the trained model's d_k is 32) the rest of the dot product, Σ q_i·k_i over the
    dimensions not shown, is given as one number ``rest`` (rounded too): the student still computes
    the model's score, with the model's d_k. The answer is computed from the rounded numbers shown;
    ``unrounded`` from the numbers before rounding (the model's score, up to float32 rounding).

    Tolerance, from the rounding: with u = half a unit of the last decimal shown (0.005 at 2), a
    student who rounds each of the n products, √d_k and the result to the shown decimals is off by at
    most n·u/r (the products), |answer|·u/r (√d_k) and u (the result), where r = √d_k - u is the
    smallest a rounded √d_k can be: tolerance = u·(1 + (n + |answer|)/(√d_k - u)).

    >>> attention_score([1.0, 2.0], [3.0, 0.5]).answer == 4 / math.sqrt(2)
    True
    """
    q, k = _floats(q), _floats(k)
    if not q or len(q) != len(k):
        raise ValueError(f"q and k need the same number of dimensions (≥ 1), got {len(q)} and {len(k)}")
    if not 1 <= shown <= MAX_SHOWN:
        raise ValueError(f"shown={shown} must be between 1 and {MAX_SHOWN}")
    d_k, n = len(q), min(shown, len(q))
    q_shown, k_shown = [_shown(x, decimals) for x in q[:n]], [_shown(x, decimals) for x in k[:n]]
    given: dict = {"q": q_shown, "k": k_shown, "d_k": d_k}
    if d_k > n:  # the products of the dimensions not shown, summed
        given["rest"] = _shown(math.fsum(a * b for a, b in zip(q[n:], k[n:], strict=True)), decimals)
    if bias is not None:
        given["bias"] = _shown(bias, decimals)
    answer, solution = _score_steps(q_shown, k_shown, given.get("rest"), d_k, given.get("bias"))
    root = math.sqrt(d_k)
    u = _half_unit(decimals)
    # the bias is given, not computed: adding it moves nothing a student rounds
    scaled = answer - given.get("bias", 0.0)
    tolerance = u * (1 + (n + abs(scaled)) / (root - u))
    unrounded = math.fsum(a * b for a, b in zip(q, k, strict=True)) / root + float(bias or 0.0)
    return _exercise(
        "attention_score",
        given,
        answer,
        tolerance,
        solution,
        source,
        identity,
        unrounded,
        decimals=decimals,
        shown=n,
    )


def _score_steps(
    q: list[float], k: list[float], rest: float | None, d_k: int, bias: float | None = None
) -> tuple[float, list]:
    """(q·k/√d_k (+ b) from the numbers shown, the worked solution's steps)."""
    products = [a * b for a, b in zip(q, k, strict=True)]
    solution: list = [
        {
            "name": "products",
            "formula": "q_i·k_i",
            "value": products,
            "inputs": [[a, b] for a, b in zip(q, k, strict=True)],
        }
    ]
    if rest is not None:
        solution.append({"name": "rest", "formula": f"Σ_(i={len(q)}..{d_k - 1}) q_i·k_i", "value": rest})
    dot = math.fsum(products) + (rest or 0.0)
    root = math.sqrt(d_k)
    solution += [
        {"name": "sum", "formula": "q·k = Σ q_i·k_i", "value": dot},
        {"name": "sqrt_dk", "formula": "√d_k", "value": root},
        {"name": "scaled" if bias is not None else "result", "formula": "q·k / √d_k", "value": dot / root},
    ]
    if bias is None:
        return dot / root, solution
    solution += [
        {"name": "bias", "formula": "b = -m·|i - j|", "value": bias},
        {"name": "result", "formula": "q·k / √d_k + b", "value": dot / root + bias},
    ]
    return dot / root + bias, solution


# -- softmax -------------------------------------------------------------------------------------------


def softmax_entry(
    scores, j: int, *, decimals: int = DECIMALS, identity: str = "", source: dict | None = None
) -> Exercise:
    """softmax(scores)[j] of a row of 2–8 scores (3–4 to do by hand), shown rounded to ``decimals``;
    the answer from the rounded scores. The solution subtracts the row's maximum first (the result is
    the same: e^(-max) cancels; the numbers are smaller, as the model computes it).

    Tolerance 2u (0.01 at 2 decimals): u for the answer rounded to the shown decimals, and room for a
    student who rounds each e^(s_i - max) to one decimal more: those are at most 1 and their sum at
    least 1, so that moves the answer by at most (1 + n)·u/10 ≤ u/2 for n ≤ 4.

    >>> round(softmax_entry([0.0, 0.0, 0.0], 1).answer, 4)
    0.3333
    """
    raw = _floats(scores)
    if not 2 <= len(raw) <= 8:
        raise ValueError(f"a row of 2 to 8 scores, got {len(raw)}")
    if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < len(raw):
        raise ValueError(f"j={j!r} must be a position in the row (0 to {len(raw) - 1})")
    row = [_shown(s, decimals) for s in raw]
    top = max(row)
    shifted = [s - top for s in row]
    exps = [math.exp(s) for s in shifted]
    total = math.fsum(exps)
    answer = exps[j] / total
    solution = [
        {"name": "max", "formula": "max_i s_i", "value": top},
        {"name": "shifted", "formula": "s_i - max", "value": shifted},
        {"name": "exps", "formula": "e^(s_i - max)", "value": exps},
        {"name": "sum", "formula": "Σ e^(s_i - max)", "value": total},
        {"name": "result", "formula": "e^(s_j - max) / Σ e^(s_i - max)", "value": answer},
    ]
    unrounded = math.exp(raw[j] - max(raw)) / math.fsum(math.exp(s - max(raw)) for s in raw)
    given = {"scores": row, "j": j}
    return _exercise(
        "softmax_entry",
        given,
        answer,
        2 * _half_unit(decimals),
        solution,
        source,
        identity,
        unrounded,
        decimals=decimals,
        j=j,
    )


# -- LayerNorm -----------------------------------------------------------------------------------------


def layernorm_entry(
    x, j: int, eps: float = 1e-5, *, decimals: int = DECIMALS, identity: str = "", source: dict | None = None
) -> Exercise:
    """LayerNorm(x)[j] with γ = 1, β = 0: (x_j - mean) / √(var + eps), the variance the population's
    (divided by n, as torch computes it), of a short vector (2–8 numbers; 4–8 to do by hand) shown
    rounded to ``decimals``; the answer from the rounded numbers.

    Tolerance, from the rounding: a student who rounds the mean and σ = √(var + eps) to the shown
    decimals is off by at most u/s (the mean) and |answer|·u/s (σ), where s = σ - u is the smallest a
    rounded σ can be, and u more for the result: tolerance = u·(1 + (1 + |answer|)/(σ - u)) (infinite
    when σ ≤ u). A vector whose numbers barely differ makes σ small and the tolerance wide: the exercise
    is then ill-conditioned (``exercises_for`` picks numbers that vary).

    >>> layernorm_entry([1.0, 3.0], 1, eps=0.0).answer
    1.0
    """
    raw = _floats(x)
    if not 2 <= len(raw) <= 8:
        raise ValueError(f"a vector of 2 to 8 numbers, got {len(raw)}")
    if isinstance(j, bool) or not isinstance(j, int) or not 0 <= j < len(raw):
        raise ValueError(f"j={j!r} must be a position in the vector (0 to {len(raw) - 1})")
    if not eps >= 0:
        raise ValueError(f"eps={eps} must be ≥ 0")
    xs = [_shown(v, decimals) for v in raw]
    answer, solution = _layernorm_steps(xs, j, eps)
    sigma = solution[4]["value"]
    u = _half_unit(decimals)
    tolerance = u * (1 + (1 + abs(answer)) / (sigma - u)) if sigma > u else math.inf
    unrounded = _layernorm_steps(raw, j, eps)[0]
    given = {"x": xs, "j": j, "eps": eps}
    return _exercise(
        "layernorm_entry",
        given,
        answer,
        tolerance,
        solution,
        source,
        identity,
        unrounded,
        decimals=decimals,
        j=j,
    )


def _layernorm_steps(xs: Sequence[float], j: int, eps: float) -> tuple[float, list]:
    """(LayerNorm(xs)[j], the worked solution's steps)."""
    n = len(xs)
    mean = math.fsum(xs) / n
    deviations = [v - mean for v in xs]
    squares = [d * d for d in deviations]
    variance = math.fsum(squares) / n
    sigma = math.sqrt(variance + eps)
    answer = deviations[j] / sigma if sigma > 0 else 0.0
    return answer, [
        {"name": "mean", "formula": "μ = Σ x_i / n", "value": mean},
        {"name": "deviations", "formula": "x_i - μ", "value": deviations},
        {"name": "squares", "formula": "(x_i - μ)²", "value": squares},
        {"name": "variance", "formula": "σ² = Σ (x_i - μ)² / n", "value": variance},
        {"name": "sigma", "formula": "√(σ² + ε)", "value": sigma},
        {"name": "result", "formula": "(x_j - μ) / √(σ² + ε)", "value": answer},
    ]


# -- BPE -----------------------------------------------------------------------------------------------


def bpe_count(
    text: str, k: int, byte_level: bool = True, *, identity: str = "", source: dict | None = None
) -> Exercise:
    """How many tokens ``text`` has after merge ``k`` of BPE trained on ``text`` itself (core's BPE;
    fewer merges if the text runs out of pairs first: ``given["learned"]`` says how many were).
    An integer: tolerance 0. The solution: the tokens before any merge, then each merge (the pair, as
    labels) with the count after it, and the tokens at the end.

    >>> bpe_count("aaabdaaabac", 3).answer
    5
    """
    from core.tracing.pipeline import display_token  # the app's token labels (a partial character as bytes)

    tok = BPETokenizer.train(text, k, byte_level=byte_level)
    segmentations = tok.segmentations(text)
    labels = [[display_token(tok, t) for t in seg] for seg in (segmentations[0], segmentations[-1])]
    solution: list = [
        {
            "name": "start",
            "formula": "UTF-8 bytes" if byte_level else "characters + </w>",
            "value": len(segmentations[0]),
            "tokens": labels[0],
        }
    ]
    for rank, (a, b) in enumerate(tok.merges):
        pair = [display_token(tok, a), display_token(tok, b)]
        solution.append(
            {
                "name": "merge",
                "formula": "a + b → ab",
                "pair": pair,
                "rank": rank + 1,
                "value": len(segmentations[rank + 1]),
            }
        )
    answer = len(segmentations[-1])
    solution.append({"name": "result", "formula": "count", "value": answer, "tokens": labels[1]})
    given = {"text": text, "k": k, "byte_level": byte_level, "learned": len(tok.merges)}
    return _exercise(
        "bpe_count",
        given,
        answer,
        0.0,
        solution,
        source,
        identity,
        None,
        text=text,
        k=k,
        byte_level=byte_level,
    )


# -- reading what a student typed ----------------------------------------------------------------------

# Full-width forms (an IME in full-width mode) and the Chinese full stop (an IME in Chinese punctuation
# mode types "。" for "."), the minus sign and dashes that are typed or pasted for "-".
_TYPED = str.maketrans(
    {chr(0xFF10 + d): str(d) for d in range(10)}
    | {"．": ".", "。": ".", "｡": ".", "，": ",", "＋": "+", "－": "-", "ｅ": "e", "Ｅ": "E", "％": "%"}
    | dict.fromkeys("\u2212\u2010\u2011\u2012\u2013\ufe63", "-")
)
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_THOUSANDS = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?")
_AMBIGUOUS = re.compile(r"[+-]?[1-9][0-9]{0,2},[0-9]{3}")  # "1,500": 1.5 or 1500?
_NOT_FINITE = {"inf", "infinity", "nan"}


def parse_number(raw: object) -> tuple[float | None, str]:
    """(the number a student typed, "") or (None, the problem): never raises. (An int or a float, as
    a number widget gives, is taken as it is.)

    Accepted: surrounding spaces; a sign, also a Unicode minus (−) or a dash, and spaces after it;
    ".5", "5.", "5e-1"; full-width digits and signs ("０.５"); "。" for "." (Chinese punctuation mode);
    a trailing "%" (a hundredth: "50%" is 0.5).
    The comma, decided so: in strict thousands groups with a decimal point or more than one comma it
    separates thousands ("1,234.5", "1,000,000"); a lone comma is a decimal comma ("1,5" is 1.5,
    "0,125" is 0.125), except a lone comma between one to three digits (not a leading 0) and exactly
    three ("1,500"), which is either and so refused as "ambiguous". Refused too: "" ("empty"), more
    than MAX_TYPED characters ("too_long"), inf and nan, or a number too large for a float
    ("not_finite"), and anything else ("not_a_number": "1/2", "1 000", "0x1", "1_000", "½").

    >>> parse_number(" −0,5 ")
    (-0.5, '')
    >>> parse_number("1,500")
    (None, 'ambiguous')
    """
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):  # a number widget's value
        value = float(raw) if abs(raw) < 1e308 else math.inf  # (an int beyond floats: not finite)
        return (value, "") if math.isfinite(value) else (None, "not_finite")
    if not isinstance(raw, str):
        return None, "not_a_number"
    if len(raw) > MAX_TYPED:
        return None, "too_long"
    text = raw.translate(_TYPED).strip()
    if not text:
        return None, "empty"
    text = re.sub(r"^([+-])\s+", r"\1", text)
    scale = 1.0
    if text.endswith("%"):
        text, scale = text[:-1].rstrip(), 0.01
    if text.lower().lstrip("+-") in _NOT_FINITE:
        return None, "not_finite"
    if "," in text:
        if _THOUSANDS.fullmatch(text) and ("." in text or text.count(",") > 1):
            text = text.replace(",", "")
        elif _AMBIGUOUS.fullmatch(text):
            return None, "ambiguous"
        elif text.count(",") == 1 and "." not in text:
            text = text.replace(",", ".")
    if not _NUMBER.fullmatch(text):
        return None, "not_a_number"
    value = float(text) * scale
    return (value, "") if math.isfinite(value) else (None, "not_finite")


def check(exercise: Exercise, raw: object) -> Verdict:
    """Is what the student typed the answer, within the exercise's tolerance (inclusive, plus a 1e-9
    relative slack: the float nearest a typed boundary such as 0.505 may lie a hair beyond it)?"""
    parsed, problem = parse_number(raw)
    if parsed is None:
        return Verdict(False, None, None, problem)
    error = parsed - exercise.answer
    slack = 1e-9 * max(1.0, abs(exercise.answer))
    return Verdict(abs(error) <= exercise.tolerance + slack, parsed, error)


# -- the exercises a run can give ----------------------------------------------------------------------


def exercises_for(run, seed: int = 0) -> list[Exercise]:
    """An exercise of every kind this run can give, its numbers drawn from ``seed``: a PE entry (models
    that add the sinusoidal encoding), the score of a query and a key of head 0 in the first encoder
    layer (the model's own score: ALiBi's bias included), a softmax entry (a decoder self-attention
    row of 3–4 keys when there is one: the model's own weights; else 3–4 keys of an encoder row,
    renormalised), one LayerNorm entry of 6 numbers of the vector entering the first encoder layer's
    first LayerNorm, the BPE count of the sentence after a merge. ``run``: a
    ``core.tracing.run.SentenceRun``."""
    identity = run_identity(run)
    rng = random.Random(f"exercises:{seed}")
    out = []
    for make in (_pe_for, _score_for, _softmax_for, _layernorm_for, _bpe_for):
        try:
            out.append(make(run, rng, identity))
        except NoExercise:
            continue
    return out


def _pe_for(run, rng: random.Random, identity: str) -> Exercise:
    config = run.config
    if config.positions != "sinusoidal":
        raise NoExercise(f"positions={config.positions!r}: no sinusoidal PE is added")
    n = len(run.src_tokens)
    pos = rng.randrange(1, n) if n > 1 else 0  # position 0 is all 0s and 1s
    i = rng.randrange(min(config.d_model, 2 * MAX_SHOWN))  # the fast-turning pairs: sin and cos vary most
    model_value = float(run.source.positional[pos, i])
    source = {"positional": "sinusoidal", "token": run.src_tokens[pos], "of_model": True}
    return pe_entry(pos, i, config.d_model, identity=identity, source=source, model_value=model_value)


def _score_for(run, rng: random.Random, identity: str) -> Exercise:
    if run.config.stack == "decoder":
        raise NoExercise("decoder only: no encoder layer")
    attn = run.encoder[0].self_attn
    allowed = attn.mask[0, 0].nonzero().tolist()  # (query, key) pairs head 0 may attend
    query, key = allowed[rng.randrange(len(allowed))]
    # The model's score is q·k/√d_k plus what positions add to it (ALiBi's −m·|i − j|); RoPE's q and k
    # are in the trace already rotated, so their dot product is the model's own.
    bias = None if attn.bias is None else float(attn.bias[0, 0, query, key])
    positions = {"positions": run.config.positions} if run.config.positions in ("rope", "alibi") else {}
    if bias is not None:
        positions["slope"] = float(alibi_slopes(run.config.num_heads)[0])
    source = positions | {
        "attn_kind": "encoder",
        "layer": 0,
        "head": 0,
        "query": query,
        "key": key,
        "query_token": run.src_tokens[query],
        "key_token": run.src_tokens[key],
        "of_model": True,
    }
    q, k = attn.q[0, 0, query], attn.k[0, 0, key]
    return attention_score(q, k, bias=bias, identity=identity, source=source)


def _softmax_for(run, rng: random.Random, identity: str) -> Exercise:
    if run.config.stack != "encoder" and len(run.tgt_tokens) >= 3:
        attn, kind, tokens = run.trace.decoder[0].self_attn, "decoder", run.tgt_tokens
        query = rng.choice([p for p in (2, 3) if p < len(tokens)])
        keys = list(range(query + 1))  # causal: exactly the keys it may attend
    elif run.config.stack == "decoder":
        raise NoExercise("decoder only: a row needs 3 keys")
    else:
        attn, kind, tokens = run.encoder[0].self_attn, "encoder", run.src_tokens
        query = rng.randrange(len(tokens))
        allowed = attn.mask[0, 0, query].nonzero().flatten().tolist()
        if len(allowed) < 3:
            raise NoExercise("a row needs 3 keys")
        keys = allowed if len(allowed) <= 4 else sorted(rng.sample(allowed, 4))
    whole = keys == attn.mask[0, 0, query].nonzero().flatten().tolist()
    j = rng.randrange(len(keys))
    source = {
        "attn_kind": kind,
        "layer": 0,
        "head": 0,
        "query": query,
        "keys": keys,
        "query_token": tokens[query],
        "key_tokens": [tokens[c] for c in keys],
        "of_model": whole,
    }
    return softmax_entry(attn.scores[0, 0, query, keys], j, identity=identity, source=source)


def _layernorm_for(run, rng: random.Random, identity: str) -> Exercise:
    if run.config.stack == "decoder":
        raise NoExercise("decoder only: no encoder layer")
    layer = run.encoder[0]
    # post-norm: LayerNorm(x + Sublayer(x)); pre-norm: x + Sublayer(LayerNorm(x))
    vectors = layer.input + layer.self_attn.output if run.config.norm == "post" else layer.input
    n = LAYERNORM_SHOWN
    chunks = range(0, min(vectors.size(2) - n + 1, 8 * n), n)  # the first few groups of n dimensions
    starts = [(p, d) for p in range(vectors.size(1)) for d in chunks]
    # numbers that vary: a small σ makes the result hang on the rounding (and the tolerance wide)
    starts.sort(key=lambda s: (-float(vectors[0, s[0], s[1] : s[1] + n].std(unbiased=False)), s))
    pos, start = rng.choice(starts[: max(1, len(starts) // 4)])
    j = rng.randrange(n)
    source = {
        "vector": "encoder.0.layernorm_input",
        "norm": run.config.norm,
        "position": pos,
        "dims": [start, start + n],
        "token": run.src_tokens[pos],
        "of_model": False,
    }
    x = vectors[0, pos, start : start + n]
    return layernorm_entry(x, j, run.config.layer_norm_eps, identity=identity, source=source)


def _bpe_for(run, rng: random.Random, identity: str) -> Exercise:
    possible = bpe_merges_possible(run.sentence)
    if possible < 1:
        raise NoExercise("the sentence has no pair to merge")
    return bpe_count(run.sentence, rng.randint(1, possible), identity=identity, source={"text": "sentence"})
