"""The two views attention tools are loved for: the head view and the neuron view.

Pure: (trace, tokens) -> plain data or ``go.Figure``; no Streamlit.

Head view (after bertviz's): the query tokens on the left, the key tokens on the right, and one line
from query i to key j per head, in the head's colour, its opacity the weight α_ij
(``AttentionTrace.weights[0, head, i, j]``). :func:`head_view_data` returns what the small HTML/JS
component (``ui/components/head_view.html``) draws, at most LINE_BUDGET lines in all.

Neuron view: for one head and one (query, key) pair, the d_k numbers of q and k, their products and
their sum q · k, then the model's score q · k / √d_k (with ALiBi's bias as a term of its own) and the
softmax weight the model gave the pair.
Decisions (plain strings, the line budget, the bias term): docs/decisions.md, figures/attention_views.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from core.model.positional import alibi_slopes
from figures.attention import kind_label, kv_group_of
from figures.drawing.style import escape_label, token_label
from figures.drawing.toolbox import as_numpy, build_figure, domains, matrix_figure
from figures.positional import slope_text
from i18n import t

# One colour per head (up to 16 heads: the sidebar offers divisors of d_model up to 16), distinct
# on white and on a projector: the ten of d3's category10 (bertviz's), then six darker ones.
HEAD_COLORS: tuple[str, ...] = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd",
)  # fmt: skip
LINE_BUDGET = 24_000  # lines sent to the browser at most (SVG stays fluid; ~300 kB of JSON)
WEIGHT_DIGITS = 4  # a line's opacity is its weight rounded to 4 decimals (finer is invisible)
LABEL_CHARS = 14  # tokens longer than this are shortened in the columns; the status line shows them whole
FULL_CHARS = 60


def head_color(head: int) -> str:
    return HEAD_COLORS[head % len(HEAD_COLORS)]


def plain_label(token: str, max_chars: int = LABEL_CHARS) -> str:
    """A token as plain text (for ``textContent``, not HTML): whitespace made visible, long ones shortened.

    The same text as ``figures.drawing.style.token_label`` shows on a plotly axis, without the HTML escaping
    that plotly needs and the DOM does not.

    >>> plain_label("<b>"), plain_label(" the")
    ('<b>', '␣the')
    """
    shown = token_label(token, max_chars)
    return shown.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def lines_per_query(n_queries: int, n_keys: int, n_heads: int, budget: int = LINE_BUDGET) -> int:
    """How many lines each query keeps per head: all of them while the total fits ``budget``.

    >>> lines_per_query(10, 10, 4), lines_per_query(512, 512, 12)
    (10, 3)
    """
    return max(1, min(n_keys, budget // max(1, n_queries * n_heads)))


def strongest_lines(weights: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query, key, weight) of each query's ``keep`` largest weights in a (L_q, L_k) matrix.

    Weights are rounded to WEIGHT_DIGITS decimals and lines that round to 0 are left out (a masked
    key, or a weight below 0.00005: an invisible line).
    """
    n_q, n_k = weights.shape
    if keep >= n_k:
        keys = np.broadcast_to(np.arange(n_k), (n_q, n_k))
    else:
        keys = np.argpartition(-weights, keep - 1, axis=1)[:, :keep]  # (L_q, keep), unordered
    queries = np.broadcast_to(np.arange(n_q)[:, None], keys.shape)
    w = np.round(np.take_along_axis(weights, keys, axis=1).astype(np.float64), WEIGHT_DIGITS)
    shown = w > 0
    return queries[shown], keys[shown], w[shown]


def head_view_data(
    attn,
    q_tokens: Sequence[str],
    k_tokens: Sequence[str],
    *,
    attn_kind: str,
    layer: int,
    row: int = 0,
    budget: int = LINE_BUDGET,
    lang: str = "en",
) -> dict:
    """Everything the head-view component draws, as JSON-ready values (no HTML anywhere).

    ``heads[j]`` has the head's name, colour and its lines: ``q[n] -> k[n]`` with opacity ``w[n]``.
    """
    weights = as_numpy(attn.weights[row]).astype(np.float32)  # (h, L_q, L_k)
    h, n_q, n_k = weights.shape
    keep = lines_per_query(n_q, n_k, h, budget)
    heads = []
    for j in range(h):
        q, k, w = strongest_lines(weights[j], keep)
        heads.append(
            {
                "name": t("attention.head_n", lang, n=j + 1),
                "color": head_color(j),
                "q": q.tolist(),
                "k": k.tolist(),
                "w": w.tolist(),
            }
        )

    def texts(*keys: str, **values) -> dict[str, str]:
        return {key: t(f"attention.hv.js.{key}", lang, **values) for key in keys}

    return {
        "left": [plain_label(tok) for tok in q_tokens],
        "right": [plain_label(tok) for tok in k_tokens],
        "left_full": [plain_label(tok, FULL_CHARS) for tok in q_tokens],
        "right_full": [plain_label(tok, FULL_CHARS) for tok in k_tokens],
        "heads": heads,
        "keep": keep,
        "all_lines": keep >= n_k,
        "title": t("attention.hv.js.title", lang, kind=kind_label(attn_kind, lang), layer=layer + 1),
        "texts": texts(
            "heads", "all", "none", "stretch", "zoom", "hint", "queries", "keys", "status_query",
            "status_key", "strongest", "nothing",
        ),
    }  # fmt: skip


# -- neuron view -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class NeuronNumbers:
    """One head's numbers for one (query, key) pair: from q and k to the weight."""

    head: int
    query: int
    key: int
    d_k: int
    q: np.ndarray  # (d_k,) the query's vector in this head (trace.q)
    k: np.ndarray  # (d_k,) the key's vector (trace.k)
    product: np.ndarray  # (d_k,) q_i · k_i, elementwise
    dot: float  # Σ_i q_i k_i = q · k
    scaled: float  # q · k / √d_k, computed here
    score: float  # the model's own score (trace.scores), before masking: ``scaled`` + (``bias`` or 0)
    weight: float  # the model's softmax weight for the pair (trace.weights)
    allowed: bool  # False: the mask hides this key from this query (its weight is 0)
    bias: float | None = None  # what positions added to the score (ALiBi: trace.bias); None: nothing
    slope: float | None = None  # ALiBi: this head's slope m_h
    distance: int | None = None  # ALiBi: |i − j|, or i − j in the decoder: bias = −slope · distance
    causal: bool = False  # ALiBi's decoder form −m_h·(i − j) (positive where the causal mask hides)
    # grouped-query attention: k is key/value head ``kv_head``'s, the same for every head in ``shared``
    kv_head: int | None = None
    shared: range | None = None


def is_causal_bias(plane: np.ndarray) -> bool:
    """Is this head's (L_q, L_k) ALiBi bias the decoder's −m·(i − j)? Only that form is ever positive
    (above the diagonal); the encoder's −m·|i − j| never is. With one key both forms are 0 alike."""
    return bool((np.asarray(plane) > 0).any())


def head_slope(num_heads: int, head: int) -> float:
    """ALiBi's slope m_h of head ``head`` (0-based) of a model with ``num_heads`` heads (core's)."""
    return float(alibi_slopes(num_heads)[head])


def neuron_numbers(
    attn, head: int, query: int, key: int, *, row: int = 0, num_kv_heads: int | None = None
) -> NeuronNumbers:
    """``num_kv_heads``: the model's key/value heads (grouped-query attention when fewer than its
    heads: the trace repeats each key/value head's k for the heads that share it)."""
    group = kv_group_of(head, attn.q.shape[1], num_kv_heads)
    shared = {} if group is None else {"kv_head": group[0], "shared": group[1]}
    q = as_numpy(attn.q[row, head, query]).astype(np.float32)
    k = as_numpy(attn.k[row, head, key]).astype(np.float32)
    product = q * k
    dot = float(product.astype(np.float64).sum())
    d_k = q.shape[-1]
    added = attn.bias
    alibi = {}
    if added is not None:  # ALiBi self-attention: scores = q·k/√d_k + bias
        plane = np.broadcast_to(as_numpy(added), attn.scores.shape)[row, head]
        causal = is_causal_bias(plane)
        alibi = {
            "bias": float(plane[query, key]),
            "slope": head_slope(attn.q.shape[1], head),
            "distance": query - key if causal else abs(query - key),
            "causal": causal,
        }
    return NeuronNumbers(
        head=head,
        query=query,
        key=key,
        d_k=d_k,
        q=q,
        k=k,
        product=product,
        dot=dot,
        scaled=dot / math.sqrt(d_k),
        score=float(as_numpy(attn.scores[row, head, query, key])),
        weight=float(as_numpy(attn.weights[row, head, query, key])),
        allowed=bool(as_numpy(attn.mask[row, head, query, key])),
        **alibi,
        **shared,
    )


def slope_latex(m: float) -> str:
    r"""A slope as LaTeX: ``\tfrac{1}{4}`` for 1/4, else its three digits (``0.707``)."""
    text = slope_text(m)
    return rf"\tfrac{{1}}{{{text[2:]}}}" if text.startswith("1/") else text


def bias_latex(causal: bool, i: str = "i", j: str = "j") -> str:
    """ALiBi's bias as LaTeX: −m_h·|i − j|, or the decoder's −m_h·(i − j)."""
    return rf"-m_h\,({i}-{j})" if causal else rf"-m_h\,|{i}-{j}|"


def score_formula(nums: NeuronNumbers) -> str:
    """The neuron view's equations in symbols: q·k, the score s (with ALiBi's b as a term when the
    model adds one, on a second line) and the weight."""
    dot = r"q \cdot k = \sum_{i=0}^{d_k-1} q_i\, k_i"
    softmax = r"\alpha_j = \frac{e^{s_j}}{\sum_l e^{s_l}}"
    if nums.bias is None:
        return rf"{dot} \qquad s = \frac{{q \cdot k}}{{\sqrt{{d_k}}}} \qquad {softmax}"
    return (
        rf"\begin{{gathered}} {dot} \qquad s = \frac{{q \cdot k}}{{\sqrt{{d_k}}}} + b_{{ij}} \\ "
        rf"b_{{ij}} = {bias_latex(nums.causal)} \qquad {softmax} \end{{gathered}}"
    )


def score_numbers(nums: NeuronNumbers, then: str = "") -> str:
    """The same equations with this pair's numbers, ``then`` (the weight's, which the page computes)
    at the end: every term is written, so the equation adds up with the numbers beside it."""
    dot = f"{nums.dot:.4f}"
    scaled = rf"\frac{{{dot}}}{{\sqrt{{{nums.d_k}}}}}"
    tail = rf" \qquad {then}" if then else ""
    if nums.bias is None:
        return rf"q \cdot k = {dot} \qquad s = {scaled} = {nums.score:.4f}{tail}"
    bias = f"{nums.bias + 0.0:.4f}"  # + 0.0: no "-0.0000" on the diagonal
    distance = str(nums.distance) if nums.distance >= 0 else f"({nums.distance})"
    return (
        rf"\begin{{gathered}} q \cdot k = {dot} \qquad "
        rf"s = {scaled} + b = {nums.scaled:.4f} + ({bias}) = {nums.score:.4f} \\ "
        rf"b = -{slope_latex(nums.slope)} \cdot {distance} = {bias}{tail} \end{{gathered}}"
    )


def bias_figure(steps, q_tokens: Sequence[str], k_tokens: Sequence[str], *, lang: str = "en") -> go.Figure:
    """One head's ALiBi bias B (``HeadSteps.bias``, the trace's), query × key: the term added to
    Q Kᵀ / √d_k in the step-by-step view."""
    num_heads = steps.concat.shape[-1] // steps.d_k
    causal = is_causal_bias(steps.bias)
    return matrix_figure(
        steps.bias,
        q_tokens,
        k_tokens,
        title=t(
            "attention.step.bias_causal" if causal else "attention.step.bias",
            lang,
            m=slope_text(head_slope(num_heads, steps.head)),
        ),
        row_title=t("attention.axis.query", lang),
        col_title=t("attention.axis.key", lang),
        lang=lang,
    )


def score_row(attn, head: int, query: int, *, row: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(scores, mask, weights) of one query over every key: what softmax sees and gives."""
    return (
        as_numpy(attn.scores[row, head, query]),
        as_numpy(attn.mask[row, head, query]).astype(bool),
        as_numpy(attn.weights[row, head, query]),
    )


POSITIVE, NEGATIVE = "#2b6cb0", "#c53030"  # products: a positive one adds to q·k, a negative one takes away


def neuron_figure(
    nums: NeuronNumbers, q_token: str, k_token: str, *, lang: str = "en", height: int | None = None
) -> go.Figure:
    """Three rows of d_k bars: q, k and q⊙k (blue adds to the dot product, red takes away).

    The numbers q·k, q·k/√d_k and the weight are written above the rows and kept in
    ``layout.meta`` (exact, for tests and downloads).
    """
    d_k = nums.d_k
    doms = list(reversed(domains(3, 0.14)))  # q on top
    traces, layout, notes = [], {}, []
    for r, (sym, values, colors, title) in enumerate(_neuron_rows(nums, q_token, k_token, lang)):
        n = "" if r == 0 else str(r + 1)
        traces.append(_neuron_bars(n, sym, values, colors, d_k, lang))
        layout[f"xaxis{n}"] = _neuron_x_axis(n, r, d_k, lang)
        top = float(np.abs(values).max()) if values.size else 1.0
        layout[f"yaxis{n}"] = {
            "anchor": f"x{n}",
            "domain": doms[r],
            "range": [-1.1 * (top or 1.0), 1.1 * (top or 1.0)],
            "zeroline": True,
            "zerolinecolor": "#888888",
            "nticks": 4,
        }
        notes.append(_neuron_row_title(title, doms[r][1]))
    layout["xaxis"].pop("matches")
    layout.update(
        height=height or 560,
        annotations=notes,
        bargap=0.15 if d_k <= 64 else 0,
        margin={"l": 10, "r": 10, "t": 70, "b": 10},
        meta={"dot": nums.dot, "scaled": nums.scaled, "bias": nums.bias, "score": nums.score,
              "weight": nums.weight, "d_k": d_k},
    )
    return build_figure(traces, layout, title=_neuron_summary(nums, lang))


def _neuron_rows(nums: NeuronNumbers, q_token: str, k_token: str, lang: str) -> list[tuple]:
    """(symbol, d_k values, bar colours, the row's title) of the rows q, k and q⊙k, top to bottom."""
    color = head_color(nums.head)
    return [
        (
            "q",
            nums.q,
            [color] * nums.d_k,
            t("attention.nv.fig.q", lang, token=plain_label(q_token), pos=nums.query),
        ),
        ("k", nums.k, [color] * nums.d_k, _key_title(nums, k_token, lang)),
        (
            "q⊙k",
            nums.product,
            [POSITIVE if v >= 0 else NEGATIVE for v in nums.product.tolist()],
            t("attention.nv.fig.product", lang, dot=f"{nums.dot:.4f}"),
        ),
    ]


def _key_title(nums: NeuronNumbers, k_token: str, lang: str) -> str:
    """The k row's title; under grouped-query attention it names the key/value head k comes from."""
    where = {"token": plain_label(k_token), "pos": nums.key}
    if nums.kv_head is None:
        return t("attention.nv.fig.k", lang, **where)
    first, last = nums.shared[0] + 1, nums.shared[-1] + 1
    return t("attention.nv.fig.k_shared", lang, **where, kv=nums.kv_head + 1, first=first, last=last)


def _neuron_bars(n: str, sym: str, values: np.ndarray, colors: list[str], d_k: int, lang: str) -> dict:
    """One row's bar trace, dimension 0…d_k − 1 (dimensions count from 0, as positions do), on the
    axes ``x{n}``, ``y{n}``."""
    dim = escape_label(t("attention.nv.fig.dim", lang))
    return {
        "type": "bar",
        "x": list(range(d_k)),
        "y": values,
        "marker": {"color": colors},
        "xaxis": f"x{n}",
        "yaxis": f"y{n}",
        "name": sym,
        "showlegend": False,
        "hovertemplate": f"{dim} %{{x}}<br>{sym}: %{{y:.7g}}<extra></extra>",
    }


def _neuron_x_axis(n: str, r: int, d_k: int, lang: str) -> dict:
    """Row ``r``'s dimension axis: shared with the first row's, numbered and titled under the last."""
    title = t("attention.nv.fig.dims", lang, last=d_k - 1)
    return {
        "anchor": f"y{n}",
        "domain": [0, 1],
        "matches": "x" if r else None,
        "showticklabels": r == 2,
        "tickmode": "auto",
        "nticks": min(d_k, 16),
        "showgrid": False,
        "range": [-0.6, d_k - 0.4],
        **({"title": {"text": escape_label(title)}} if r == 2 else {}),
    }


def _neuron_row_title(title: str, y: float) -> dict:
    """A row's title, left-aligned just above the row (``y``: the row's top, paper units)."""
    return {
        "text": escape_label(title),  # the token is in it: escaped, never markup
        "xref": "paper",
        "yref": "paper",
        "x": 0,
        "y": y,
        "xanchor": "left",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": 17},
    }


def _neuron_summary(nums: NeuronNumbers, lang: str) -> str:
    """The figure's title: q·k, q·k/√d_k (+ the bias), the score and the weight, to 4 decimals."""
    return t(
        "attention.nv.fig.summary" if nums.bias is None else "attention.nv.fig.summary_bias",
        lang,
        dot=f"{nums.dot:.4f}",
        d_k=nums.d_k,
        scaled=f"{nums.scaled:.4f}",
        bias=f"{(nums.bias or 0.0) + 0.0:.4f}",
        score=f"{nums.score:.4f}",
        weight=f"{nums.weight:.4f}",
    )
