"""Attention figures: one head step by step, every head of a layer, the layers × heads grid, one query.

Pure: (trace, model weights, tokens) -> numpy arrays -> ``go.Figure``; no Streamlit.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V          head_j = Attention(X W_Qʲ, X W_Kʲ, X W_Vʲ)
    MultiHead(X) = Concat(head_1, …, head_h) W_O

The numbers on screen are the trace's own tensors (``core.model.trace.AttentionTrace``); the only things
computed here are the unscaled Q Kᵀ (= scores · √d_k) and the concatenation of the heads. The figures
are built with :mod:`figures.drawing.toolbox`: a big matrix (up to 512 tokens) is an overview of blocks of
neighbouring positions (a 512 × 512 weight matrix 128 × 128 cells), exact numbers a hover away in the
one-query bars and the neuron view. Every text comes from ``i18n`` in the language ``lang``.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from figures.drawing.style import (
    AUTO_ANGLE_WIDTH,
    MASK_SCALE,
    WEIGHTS_SCALE,
    escape_label,
    reserve_margins,
    token_label,
    unique_labels,
)
from figures.drawing.toolbox import (
    MAX_TICKS,
    as_numpy,
    block_axis,
    block_reduce,
    build_figure,
    domains,
    heatmap_on_axes,
    hover_template,
    matrix_figure,
    pool_factor,
    token_axis,
)
from i18n import t

# The three attentions of the model: URL value -> its English name (``kind_label`` translates it).
KINDS: dict[str, str] = {
    "encoder": "Encoder self-attention",
    "decoder": "Decoder masked self-attention",
    "cross": "Decoder cross-attention",
}
HEADS_POOL_MAX = 64  # every head of a layer: up to 16 heatmaps side by side
# Every head of a layer on a projector: a repeated sequence (two copies of ~16-20 tokens) keeps its
# token labels (smaller) and, with at most 8 heads, two heatmaps a row, so a stripe is seen from the back.
HEADS_TICKS_MAX = 40
HEADS_WIDE_FROM = 24  # more tokens than this: small tick labels, two heatmaps a row
GRID_POOL_MAX = 32  # layers × heads: up to 6 × 16 small multiples


def kinds_of(stack: str) -> list[str]:
    """The attentions a model of ``stack`` (``ModelConfig.stack``) has (keys of KINDS): the paper's model
    all three; an encoder only (BERT) its self-attention; a decoder only (GPT-2, Llama) the masked
    self-attention of its one stack."""
    return {"encoder": ["encoder"], "decoder": ["decoder"]}.get(stack, list(KINDS))


def kind_label(attn_kind: str, lang: str = "en") -> str:
    """ "Encoder self-attention", "编码器自注意力"…: what the page calls one kind of attention."""
    return t(f"attention.kind.{attn_kind}", lang)


def attention_of(trace, attn_kind: str, layer: int):
    """The AttentionTrace of one attention block: attn_kind in KINDS, layer counted from 0."""
    if attn_kind == "encoder":
        return trace.encoder[layer].self_attn
    if attn_kind == "decoder":
        return trace.decoder[layer].self_attn
    if attn_kind == "cross":
        return trace.decoder[layer].cross_attn
    raise ValueError(f"attn_kind={attn_kind!r} must be one of {tuple(KINDS)}")


def tokens_of(
    attn_kind: str, src_tokens: Sequence[str], tgt_tokens: Sequence[str]
) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens): encoder S×S, decoder self T×T, cross T (queries) × S (keys)."""
    if attn_kind == "encoder":
        return list(src_tokens), list(src_tokens)
    if attn_kind == "decoder":
        return list(tgt_tokens), list(tgt_tokens)
    return list(tgt_tokens), list(src_tokens)


# -- grouped-query attention: query heads that share a key/value head ------------------------------


def kv_groups(num_heads: int, num_kv_heads: int | None) -> list[range]:
    """The query heads (from 0) that read each key/value head; [] when every head has its own.

    core/model/attention.py repeats key/value head g for query heads g·r … g·r + r − 1 (r = h / kv heads,
    Hugging Face's repeat_kv), so the trace holds one k and v per query head, equal within a group.

    >>> kv_groups(4, 2), kv_groups(4, None)
    ([range(0, 2), range(2, 4)], [])
    """
    kv = num_kv_heads or num_heads
    if kv >= num_heads:
        return []
    r = num_heads // kv
    return [range(g * r, (g + 1) * r) for g in range(kv)]


def kv_group_of(head: int, num_heads: int, num_kv_heads: int | None) -> tuple[int, range] | None:
    """(key/value head, the query heads sharing it) of query head ``head``, all from 0; None without
    grouped-query attention."""
    for g, heads in enumerate(kv_groups(num_heads, num_kv_heads)):
        if head in heads:
            return g, heads
    return None


def groups_text(num_heads: int, num_kv_heads: int | None, lang: str = "en") -> str:
    """ "heads 1–2 share key/value head 1; heads 3–4 share key/value head 2" (heads from 1), every
    group named as the model has it; "" when every head has its own keys and values."""
    said = [
        t("attention.gqa.group", lang, first=heads[0] + 1, last=heads[-1] + 1, kv=g + 1)
        for g, heads in enumerate(kv_groups(num_heads, num_kv_heads))
    ]
    return t("attention.gqa.sep", lang).join(said)


def sharing_text(num_heads: int, num_kv_heads: int | None, lang: str = "en") -> str:
    """Which query heads read the same keys and values, from the model's grouping: one key/value head
    for all (multi-query attention), or the groups one by one; "" when every head has its own."""
    groups = kv_groups(num_heads, num_kv_heads)
    if not groups:
        return ""
    if len(groups) == 1:
        return t("attention.gqa.one", lang, h=num_heads)
    said = groups_text(num_heads, num_kv_heads, lang)
    return t("attention.gqa.explain", lang, h=num_heads, kv=len(groups), groups=said)


# -- the numbers of one head -----------------------------------------------------------------------


@dataclass(frozen=True)
class HeadWeights:
    """One head's slice of the projections, written the paper's way: Q = X W_Q + b_Q.

    ``nn.Linear`` stores W as (out, in) and computes x Wᵀ + b, so W_Qʲ (d_model, d_k) is the
    transpose of rows j·d_k…(j+1)·d_k of ``w_q.weight``. W_O is the whole (d_model, d_model)
    matrix: it mixes all heads. Grouped-query attention: W_K and W_V are those of the key/value head
    ``kv_head`` that head j shares with ``shared`` (None: the head's own). A bias the model does not
    have (Llama's, Qwen2's b_O) is None.
    """

    w_q: np.ndarray  # (d_model, d_k)
    b_q: np.ndarray | None  # (d_k,)
    w_k: np.ndarray
    b_k: np.ndarray | None
    w_v: np.ndarray
    b_v: np.ndarray | None
    w_o: np.ndarray  # (d_model, d_model) = w_o.weight.T
    b_o: np.ndarray | None  # (d_model,)
    kv_head: int | None = None  # grouped-query attention: the key/value head W_K, W_V belong to (from 0)
    shared: range | None = None  # … and the query heads that share it (from 0)


def attention_module(model, attn_kind: str, layer: int):
    """``model.<encoder|decoder>.layers[layer].<self_attn|cross_attn>``."""
    if attn_kind == "encoder":
        return model.encoder.layers[layer].self_attn
    if attn_kind == "decoder":
        return model.decoder.layers[layer].self_attn
    if attn_kind == "cross":
        return model.decoder.layers[layer].cross_attn
    raise ValueError(f"attn_kind={attn_kind!r} must be one of {tuple(KINDS)}")


def head_weights(model, attn_kind: str, layer: int, head: int) -> HeadWeights:
    mha = attention_module(model, attn_kind, layer)
    group = kv_group_of(head, mha.h, mha.kv_heads)
    kv = head if group is None else group[0]  # W_K, W_V hold one block of rows per key/value head

    def part(linear, j: int) -> tuple[np.ndarray, np.ndarray | None]:
        rows = slice(j * mha.d_k, (j + 1) * mha.d_k)  # head j's rows of the projection
        bias = None if linear.bias is None else as_numpy(linear.bias[rows])
        return as_numpy(linear.weight[rows]).T, bias

    (w_q, b_q), (w_k, b_k), (w_v, b_v) = part(mha.w_q, head), part(mha.w_k, kv), part(mha.w_v, kv)
    b_o = None if mha.w_o.bias is None else as_numpy(mha.w_o.bias)
    shared = {} if group is None else {"kv_head": group[0], "shared": group[1]}
    return HeadWeights(w_q, b_q, w_k, b_k, w_v, b_v, as_numpy(mha.w_o.weight).T, b_o, **shared)


def projection_text(which: str, w: HeadWeights, rotated: bool = False) -> str:
    """ "Q = X W_Q + b_Q" as this head computes it: without the bias the model lacks; with RoPE, Q and
    K are the rotated ones the trace keeps: "K = R(X W_K)". ``which``: "Q", "K" or "V"."""
    bias = {"Q": w.b_q, "K": w.b_k, "V": w.b_v}[which]
    product = f"X W_{which}" + ("" if bias is None else f" + b_{which}")
    return f"{which} = R({product})" if rotated and which != "V" else f"{which} = {product}"


def projection_latex(w: HeadWeights, rotated: bool = False) -> str:
    r"""The three projections as LaTeX, e.g. ``Q = R\,(X W_Q + b_Q),\quad …``."""
    return r",\quad ".join(projection_text(x, w, rotated).replace("R(", r"R\,(") for x in "QKV")


def output_text(w: HeadWeights) -> str:
    """ "Concat · W_O + b_O" without b_O when the model has none."""
    bias = "" if w.b_o is None else " + b_O"
    return r"\mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_O" + bias


@dataclass(frozen=True)
class HeadSteps:
    """One head of one sentence (batch row 0), every step as a numpy array."""

    head: int
    d_k: int
    x_q: np.ndarray  # (L_q, d_model) the layer input the queries come from
    x_kv: np.ndarray  # (L_k, d_model) the input the keys and values come from
    q: np.ndarray  # (L_q, d_k)
    k: np.ndarray  # (L_k, d_k)
    v: np.ndarray  # (L_k, d_k)
    qk: np.ndarray  # (L_q, L_k) Q Kᵀ, before the scaling
    scores: np.ndarray  # (L_q, L_k) Q Kᵀ / √d_k
    mask: np.ndarray  # (L_q, L_k) bool, True = may attend
    weights: np.ndarray  # (L_q, L_k) softmax of the masked scores
    head_out: np.ndarray  # (L_q, d_k) weights · V
    concat: np.ndarray  # (L_q, d_model) all heads side by side
    output: np.ndarray  # (L_q, d_model) concat · W_O + b_O
    bias: np.ndarray | None = None  # (L_q, L_k) ALiBi's position bias, already inside ``scores``


def head_steps(attn, head: int, row: int = 0) -> HeadSteps:
    h = attn.q.shape[1]
    d_k = attn.q.shape[-1]
    scores = as_numpy(attn.scores[row, head])
    heads = as_numpy(attn.heads[row])  # (h, L_q, d_k)
    bias = attn.bias
    if bias is not None:  # ALiBi: scores = Q Kᵀ / √d_k + bias, so Q Kᵀ is what is left times √d_k
        bias = np.broadcast_to(as_numpy(bias), attn.scores.shape)[row, head]
    return HeadSteps(
        head=head,
        d_k=d_k,
        x_q=as_numpy(attn.query_input[row]),
        x_kv=as_numpy(attn.key_input[row]),
        q=as_numpy(attn.q[row, head]),
        k=as_numpy(attn.k[row, head]),
        v=as_numpy(attn.v[row, head]),
        qk=(scores if bias is None else scores - bias) * np.float32(math.sqrt(d_k)),
        scores=scores,
        mask=as_numpy(attn.mask[row, head]).astype(bool),
        weights=as_numpy(attn.weights[row, head]),
        head_out=heads[head],
        concat=np.concatenate([heads[j] for j in range(h)], axis=-1),  # (L_q, h·d_k)
        output=as_numpy(attn.output[row]),
        bias=bias,
    )


def argmax_keys(weights: np.ndarray) -> list[int]:
    """For each query row, the key it attends to most."""
    return [int(i) for i in np.asarray(weights).argmax(axis=-1)]


def aligned_share(weights: np.ndarray, expected: Sequence[int | None]) -> float | None:
    """Fraction of the query rows that have an expected key (``expected[t]``; None: none) whose
    strongest key is that one; None when no row has one. ``core.training.pairs.aligned_source`` gives
    a task's.

    >>> aligned_share(np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]]), [1, 1, None])
    0.5
    """
    pairs = [(i, j) for i, j in zip(argmax_keys(weights), expected, strict=False) if j is not None]
    return sum(i == j for i, j in pairs) / len(pairs) if pairs else None


# -- one matrix ------------------------------------------------------------------------------------


W_O_FULL_MAX = 128  # a bigger W_O is shown as the rows one head multiplies: 512² cells are 1.5 MB a redraw


def w_o_figure(w_o: np.ndarray, head: int, d_k: int, d_model: int, *, lang: str = "en") -> go.Figure:
    """W_O whole when it is small; otherwise the d_k rows that head ``head`` (0-based) multiplies.

    Concat · W_O = Σ_j head_j · W_O[j·d_k:(j+1)·d_k], so one head's block of rows is its whole say
    in the output.
    """
    dims = {
        "row_title": t("attention.axis.concat_dim", lang),
        "col_title": t("attention.axis.output_dim", lang),
        "lang": lang,
    }
    if d_model <= W_O_FULL_MAX:
        return matrix_figure(w_o, d_model, d_model, title=t("attention.step.w_o_all", lang), **dims)
    rows = [str(i) for i in range(head * d_k, (head + 1) * d_k)]
    return matrix_figure(
        w_o[head * d_k : (head + 1) * d_k],
        rows,
        d_model,
        title=t("attention.step.w_o_rows", lang, first=rows[0], last=rows[-1], head=head + 1),
        **dims,
    )


def _tr(key: str, lang: str, **values) -> str:
    return t(f"attention.{key}", lang, **values)


def step_figures(
    s: HeadSteps,
    w: HeadWeights,
    q_tokens: Sequence[str],
    k_tokens: Sequence[str],
    *,
    lang: str = "en",
    rotated: bool = False,
) -> dict[str, go.Figure]:
    """Every step of head ``s.head``, in the order of the computation (``rotated``: RoPE turned q and
    k by their positions, and the trace's Q and K are the rotated ones)."""
    figs = {
        **_projection_figures(s, w, q_tokens, k_tokens, lang, rotated),
        **_score_figures(s, q_tokens, k_tokens, lang),
        **_output_figures(s, w, q_tokens, lang),
    }
    _outline_head(figs["concat"], s)
    return figs


def _kv_title(which: str, w: HeadWeights, head: int, lang: str) -> str:
    """ "W_K, head 3", or under grouped-query attention "W_K, key/value head 2 (heads 3–4)"."""
    if w.kv_head is None:
        return _tr(f"step.w_{which}", lang, head=head + 1)
    first, last = w.shared[0] + 1, w.shared[-1] + 1
    return _tr(f"step.w_{which}_shared", lang, kv=w.kv_head + 1, first=first, last=last)


def _projection_figures(
    s: HeadSteps, w: HeadWeights, q_tokens: Sequence[str], k_tokens: Sequence[str], lang: str, rotated: bool
) -> dict[str, go.Figure]:
    """X (and the memory), head j's W_Q, W_K, W_V, and Q, K, V."""
    j, dk, d_model = s.head + 1, s.d_k, s.x_q.shape[1]
    title = {x: projection_text(x, w, rotated) for x in "QKV"}
    token, dim, dk_dim = _tr("axis.token", lang), _tr("axis.dimension", lang), _tr("axis.dk_dim", lang)
    query, key = _tr("axis.query", lang), _tr("axis.key", lang)
    w_dims = {"row_title": _tr("axis.d_model_dim", lang), "col_title": dk_dim, "lang": lang}
    x = {"row_title": token, "col_title": dim, "lang": lang}
    return {
        "x_q": matrix_figure(s.x_q, q_tokens, d_model, title=_tr("step.x", lang), **x),
        "x_kv": matrix_figure(s.x_kv, k_tokens, d_model, title=_tr("step.memory", lang), **x),
        "w_q": matrix_figure(w.w_q, d_model, dk, title=_tr("step.w_q", lang, head=j), **w_dims),
        "w_k": matrix_figure(w.w_k, d_model, dk, title=_kv_title("k", w, s.head, lang), **w_dims),
        "w_v": matrix_figure(w.w_v, d_model, dk, title=_kv_title("v", w, s.head, lang), **w_dims),
        "q": matrix_figure(s.q, q_tokens, dk, title=title["Q"], row_title=query, col_title=dk_dim, lang=lang),
        "k": matrix_figure(s.k, k_tokens, dk, title=title["K"], row_title=key, col_title=dk_dim, lang=lang),
        "v": matrix_figure(s.v, k_tokens, dk, title=title["V"], row_title=key, col_title=dk_dim, lang=lang),
    }


def _score_figures(
    s: HeadSteps, q_tokens: Sequence[str], k_tokens: Sequence[str], lang: str
) -> dict[str, go.Figure]:
    """Q Kᵀ, the scaled scores (+ ALiBi's bias), the mask and the softmax weights: queries × keys."""
    dk = s.d_k
    m = {"row_title": _tr("axis.query", lang), "col_title": _tr("axis.key", lang), "lang": lang}
    scores_title = f"Q Kᵀ / √{dk}" if s.bias is None else f"Q Kᵀ / √{dk} + {_tr('step.alibi_bias', lang)}"
    return {
        "qk": matrix_figure(s.qk, q_tokens, k_tokens, title="Q Kᵀ", text_format=".1f", **m),
        "scores": matrix_figure(s.scores, q_tokens, k_tokens, title=scores_title, **m),
        "mask": matrix_figure(
            s.mask.astype(np.float32),
            q_tokens,
            k_tokens,
            title=_tr("step.mask", lang),
            colorscale=MASK_SCALE,
            zmin=0,
            zmax=1,
            text_format=".0f",
            **m,
        ),
        "weights": matrix_figure(
            s.weights,
            q_tokens,
            k_tokens,
            title=_tr("step.weights", lang),
            colorscale=WEIGHTS_SCALE,
            zmin=0,
            zmax=1,
            colorbar_title=_tr("axis.weight", lang),
            pool="max",  # an overview keeps each block's strongest weight visible
            **m,
        ),
    }


def _output_figures(s: HeadSteps, w: HeadWeights, q_tokens: Sequence[str], lang: str) -> dict[str, go.Figure]:
    """weights · V, the concatenation of the heads, W_O and the output."""
    j, dk, d_model = s.head + 1, s.d_k, s.x_q.shape[1]
    query, dim = _tr("axis.query", lang), _tr("axis.dimension", lang)
    return {
        "head_out": matrix_figure(
            s.head_out,
            q_tokens,
            dk,
            title=_tr("step.head_out", lang, head=j),
            row_title=query,
            col_title=_tr("axis.dk_dim", lang),
            lang=lang,
        ),
        "concat": matrix_figure(
            s.concat,
            q_tokens,
            d_model,
            title=_tr("step.concat", lang, h=d_model // dk),
            row_title=query,
            col_title=dim,
            lang=lang,
        ),
        "w_o": w_o_figure(w.w_o, s.head, dk, d_model, lang=lang),
        "output": matrix_figure(
            s.output,
            q_tokens,
            d_model,
            title=_tr("step.output" if w.b_o is not None else "step.output_nobias", lang),
            row_title=query,
            col_title=dim,
            lang=lang,
        ),
    }


def _outline_head(concat: go.Figure, s: HeadSteps) -> None:
    """Outline head j's block inside the concatenation (in cells: blocks of f dimensions when pooled)."""
    f = pool_factor(s.x_q.shape[1])
    concat.layout.shapes = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": s.head * s.d_k / f - 0.5,
            "x1": (s.head + 1) * s.d_k / f - 0.5,
            "y0": 0,
            "y1": 1,
            "line": {"color": "#e07b00", "width": 3},
        }
    ]


# -- every head, every layer -----------------------------------------------------------------------


def _grid_shape(n: int, max_cols: int = 4) -> tuple[int, int]:
    cols = max(1, min(n, max_cols))
    return math.ceil(n / cols), cols


def heads_figure(
    attn,
    q_tokens: Sequence[str],
    k_tokens: Sequence[str],
    *,
    row: int = 0,
    selected: int | None = None,
    height: int | None = None,
    titles: Sequence[str] | None = None,
    lang: str = "en",
) -> go.Figure:
    """One heatmap per head (rows = queries, columns = keys), one shared 0–1 colour scale; ``titles``
    (one per head, e.g. "head 2 · induction") replace "head j" above the heatmaps.

    Beyond HEADS_POOL_MAX tokens each heatmap is an overview: a cell is the largest weight of its
    block of neighbouring positions (the hover says which).
    """
    weights = as_numpy(attn.weights[row])  # (h, L_q, L_k)
    h, n_q, n_k = weights.shape
    f_q, f_k = pool_factor(n_q, HEADS_POOL_MAX), pool_factor(n_k, HEADS_POOL_MAX)
    longest = max(n_q, n_k)
    wide = longest > HEADS_WIDE_FROM and h <= 8
    n_rows, n_cols = _grid_shape(h, 2 if wide else 4)
    show_ticks = longest <= HEADS_TICKS_MAX  # beyond, labels would overlap: hover names them
    small = {"tickfont": {"size": 10}} if longest > HEADS_WIDE_FROM else {}
    if f_q > 1:
        ys, y_axis = block_axis(q_tokens, f_q, autorange="reversed")
    else:
        ys, y_axis = token_axis(q_tokens, autorange="reversed")
    if f_k > 1:
        xs, x_axis = block_axis(k_tokens, f_k, tickangle=-90)
    else:
        xs, x_axis = token_axis(k_tokens, tickangle=-90 if n_k > 5 else 0)
    value = t("attention.axis.weight", lang) if f_q == f_k == 1 else t("attention.hover.block_max", lang)
    where = f"{t('attention.axis.query', lang)}: %{{y}}", f"{t('attention.axis.key', lang)}: %{{x}}"
    col_dom = domains(n_cols, 0.05)
    traces, layout = [], {}
    for j in range(h):
        r, c = divmod(j, n_cols)
        n = "" if j == 0 else str(j + 1)
        name = t("attention.head_n", lang, n=j + 1)
        z = block_reduce(weights[j], f_q, f_k, "max")
        hover = hover_template(escape_label(name), *where, value=escape_label(value))
        traces.append(_head_heatmap(j, z, xs, ys, name, hover, lang))
        layout[f"xaxis{n}"] = {
            **x_axis,
            "domain": col_dom[c],
            "anchor": f"y{n}",
            "showticklabels": show_ticks,
            **small,
        }
        layout[f"yaxis{n}"] = {
            **y_axis,
            "anchor": f"x{n}",
            "showticklabels": show_ticks and c == 0,
            **small,
        }
    mark = t("attention.step_by_step_mark", lang)
    names = [titles[j] if titles is not None else t("attention.head_n", lang, n=j + 1) for j in range(h)]
    lines = _wrapped_titles(names, mark, selected, layout, traces, col_dom)
    extra = (max(len(x) for x in lines) - 1) * HEAD_TITLE_LINE  # px the wrapped titles add above a row
    if height is None:
        per_row = max(220, min(560 if wide else 420, 90 + 16 * len(ys))) + (70 if show_ticks else 0)
        height = n_rows * (per_row + extra) + 40
    margin = {"l": 10, "r": 10, "t": 40 + extra, "b": 10}
    # the gap between rows holds the x labels of the row above and the titles of the row below
    plot = max(height - margin["t"] - margin["b"], 1)
    gap = (0.16 if show_ticks else 0.08) + extra / plot
    row_dom = list(reversed(domains(n_rows, gap)))  # first row on top
    notes = []
    for j in range(h):
        r, c = divmod(j, n_cols)
        layout[f"yaxis{'' if j == 0 else j + 1}"]["domain"] = row_dom[r]
        notes.append(_head_title(lines[j], j == selected, sum(col_dom[c]) / 2, row_dom[r][1]))
    layout.update(height=height, annotations=notes, margin=margin)
    return build_figure(traces, layout)


HEAD_TITLE_SIZE = 18
HEAD_TITLE_LINE = 23  # px between two lines of a head's title (plotly: 1.3 em)


def _wrapped_titles(names: list[str], mark: str, selected: int | None, layout: dict, traces: list[dict],
                    col_dom: list) -> list[list[str]]:
    """Each head's title as lines that fit above its column, the selected head's followed by ``mark``
    (on a line of its own when it does not fit the last one), on a figure AUTO_ANGLE_WIDTH px wide (a
    full-width chart of the page) less the margins its labels and colour bar take.

    A title is centred on its column: first every title gets the px from one column's centre to the
    next (then no two can meet), then each may widen into what its neighbours in the row leave free
    (a short "head 2" beside a long "head 3 (step by step)"), the outer ones as far as the plot's
    edges.
    """
    margin = reserve_margins({**layout, "margin": {"l": 10, "r": 10}}, traces)
    plot = AUTO_ANGLE_WIDTH - margin["l"] - margin["r"]
    n_cols = len(col_dom)
    slot = plot * (col_dom[1][0] if n_cols > 1 else 1.0)  # px between the centres of two columns
    air = 12  # px kept free between two neighbouring titles

    def wrap(j: int, room: float) -> list[str]:
        lines = wrap_label(names[j], room)
        if j != selected:
            return lines
        if title_px(lines[-1] + mark) <= room:
            return [*lines[:-1], lines[-1] + mark]
        return lines + wrap_label(mark.strip(), room)

    def width(lines: list[str]) -> float:
        return max(title_px(line) for line in lines)

    out = [wrap(j, slot - air) for j in range(len(names))]
    for j in range(len(names)):
        c, centre = j % n_cols, plot * sum(col_dom[j % n_cols]) / 2
        # the outer columns' stop at the plot's edges: the first row's tick labels and the colour bar
        # are beyond them
        left = centre if c == 0 else slot - width(out[j - 1]) / 2
        right = plot - centre if c == n_cols - 1 or j + 1 == len(names) else slot - width(out[j + 1]) / 2
        room = 2 * min(left, right) - air
        if room > slot - air:
            out[j] = wrap(j, room)
    return out


def wrap_label(text: str, room: float, size: int = HEAD_TITLE_SIZE) -> list[str]:
    """``text`` cut into lines of at most ``room`` px (estimated by :func:`title_px`): at
    spaces, and between two wide characters (Chinese needs no space); a closing bracket or punctuation
    mark stays with what it closes. A single word wider than ``room`` is cut between characters.

    >>> wrap_label("head 2 · previous-token (step by step)", 150)
    ['head 2 ·', 'previous-token', '(step by step)']
    >>> wrap_label("头 2 · 前一词元（逐步展示）", 150)
    ['头 2 · 前一词元', '（逐步展示）']
    """
    units: list[str] = []  # pieces a line may end after, each with the space before it
    for ch in text:
        wide = unicodedata.east_asian_width(ch) in "WF"
        closing = unicodedata.category(ch) in ("Pe", "Pf", "Po")
        opens_after = bool(units) and unicodedata.category(units[-1][-1]) in ("Ps", "Pi")
        if not units or (ch.isspace() and not units[-1].isspace()) or (
                (wide or _wide_end(units[-1])) and not closing and not opens_after):
            units.append(ch)
        else:
            units[-1] += ch
    lines: list[str] = []
    for unit in units:
        if lines and title_px(lines[-1] + unit, size) <= room:
            lines[-1] += unit
            continue
        unit = unit.lstrip() if lines else unit
        while len(unit) > 1 and title_px(unit, size) > room:  # a word wider than a line
            cut = max([1] + [k for k in range(1, len(unit) + 1) if title_px(unit[:k], size) <= room])
            lines.append(unit[:cut])
            unit = unit[cut:]
        lines.append(unit)
    return [line.strip() for line in lines if line.strip()] or [""]


def _wide_end(unit: str) -> bool:
    return unicodedata.east_asian_width(unit[-1]) in "WF"


def title_px(text: str, size: int = HEAD_TITLE_SIZE) -> float:
    """How wide a head's title is drawn, in px, a little generous: wide characters (CJK) one em,
    capitals 0.7, digits 0.6, other characters 0.5 (``figures.drawing.style.label_px``'s 0.58 for every
    Latin character would wrap titles that fit: lower case is narrower).

    >>> title_px("头 2"), title_px("Ab1")
    (37.8, 32.4)
    """
    def em(ch: str) -> float:
        if unicodedata.east_asian_width(ch) in "WF":
            return 1.0
        return 0.7 if ch.isupper() else 0.6 if ch.isdigit() else 0.5
    return round(sum(em(ch) for ch in text) * size, 1)


def _head_heatmap(j: int, z: np.ndarray, xs: list, ys: list, name: str, hover: str, lang: str) -> dict:
    """Head j's heatmap on its own pair of axes; the first one shows the shared colour bar."""
    return heatmap_on_axes(
        j, z, xs, ys,
        zmin=0,
        zmax=1,
        colorscale=WEIGHTS_SCALE,
        showscale=j == 0,
        name=escape_label(name),
        colorbar={"title": {"text": escape_label(t("attention.axis.weight", lang))}, "thickness": 14},
        hovertemplate=hover,
    )  # fmt: skip


def _head_title(lines: list[str], picked: bool, x: float, y: float) -> dict:
    """A head's name above its heatmap, in lines that fit its column; the head shown step by step in
    orange, marked."""
    return {
        "text": "<br>".join(escape_label(line) for line in lines),
        "showarrow": False,
        "xref": "paper",
        "yref": "paper",
        "x": x,
        "y": y,
        "xanchor": "center",
        "yanchor": "bottom",
        "font": {"size": HEAD_TITLE_SIZE, "color": "#e07b00" if picked else "#222222"},
    }


def grid_gap(n: int) -> int:
    """Empty cells between two small multiples of ``n`` cells in the one-heatmap grid: ~1/8 of one.

    >>> grid_gap(4), grid_gap(13), grid_gap(32)
    (1, 2, 4)
    """
    return max(1, round(n / 8))


def grid_block(index: int, n: int) -> slice:
    """Where small multiple ``index`` (a layer's row, a head's column) of ``n`` cells sits in the grid."""
    start = index * (n + grid_gap(n))
    return slice(start, start + n)


def grid_figure(
    trace,
    attn_kind: str,
    *,
    row: int = 0,
    q_tokens: Sequence[str] | None = None,
    k_tokens: Sequence[str] | None = None,
    block_notes: Sequence[Sequence[str]] | None = None,
    lang: str = "en",
) -> go.Figure:
    """Small multiples of one kind of attention: a layer a row, a head a column, no tick labels.
    ``block_notes[i][j]``: a word written in the top corner of layer i, head j ("induction"; "": none).

    Drawn as ONE heatmap (the blocks separated by empty cells, the hover naming layer, head, query and
    key): one trace on one pair of axes is far quicker for the browser to redraw after a slider move
    than a heatmap per (layer, head). ``grid_block`` says where each (layer, head) lies.
    It does not depend on the layer and head on screen, so choosing another head leaves its spec
    unchanged and the browser does not redraw it. Beyond GRID_POOL_MAX tokens a cell is the largest
    weight of a block of neighbouring positions.
    """
    n_layers = len(trace.encoder if attn_kind == "encoder" else trace.decoder)
    weights = [
        as_numpy(attention_of(trace, attn_kind, i).weights[row]) for i in range(n_layers)
    ]  # (h, L_q, L_k) each
    h, L_q, L_k = weights[0].shape if weights else (0, 0, 0)
    f_q, f_k = pool_factor(L_q, GRID_POOL_MAX), pool_factor(L_k, GRID_POOL_MAX)
    ys, xs = _grid_labels(q_tokens, L_q, f_q), _grid_labels(k_tokens, L_k, f_k)
    n_q, n_k = len(ys), len(xs)
    height_cells = n_layers * n_q + (n_layers - 1) * grid_gap(n_q)
    width_cells = h * n_k + (h - 1) * grid_gap(n_k)
    z = np.full((max(height_cells, 0), max(width_cells, 0)), np.nan, dtype=np.float32)  # NaN: a gap
    for i in range(n_layers):
        for j in range(h):
            z[grid_block(i, n_q), grid_block(j, n_k)] = block_reduce(weights[i][j], f_q, f_k, "max")
    x_names, y_names = _grid_names(xs, ys, h, n_layers, width_cells, height_cells, lang)
    value = t("attention.axis.weight", lang) if f_q == f_k == 1 else t("attention.hover.block_max", lang)
    hidden = {"type": "category", "showticklabels": False, "showgrid": False, "zeroline": False, "ticks": ""}
    traces = [
        {
            "type": "heatmap",
            "z": z,
            "x": x_names,
            "y": y_names,
            "zmin": 0,
            "zmax": 1,
            "colorscale": WEIGHTS_SCALE,
            "hoverongaps": False,
            "colorbar": {"title": {"text": escape_label(t("attention.axis.weight", lang))}, "thickness": 14},
            "hovertemplate": hover_template("%{y}", "%{x}", value=escape_label(value)),
        }
    ]
    cell = 120 if h <= 4 else 95 if h <= 8 else 60
    layout = {
        "xaxis": {**hidden},
        "yaxis": {**hidden, "autorange": "reversed"},
        "height": n_layers * cell + 60,
        "annotations": _grid_titles(h, n_k, width_cells, n_layers, n_q, height_cells, lang)
        + _block_notes(block_notes, n_k, width_cells, n_q, height_cells),
        "margin": {"l": 40, "r": 10, "t": 40, "b": 10},
    }
    return build_figure(traces, layout)


def _block_notes(
    notes: Sequence[Sequence[str]] | None, n_k: int, width_cells: int, n_q: int, height_cells: int
) -> list[dict]:
    """Each non-empty note at the top right of its block (a causal block is empty above its diagonal)."""
    found = []
    for i, row in enumerate(notes or []):
        for j, text in enumerate(row):
            if text:
                found.append({
                    "text": escape_label(text),
                    "x": grid_block(j, n_k).stop / max(width_cells, 1),
                    "y": 1 - grid_block(i, n_q).start / max(height_cells, 1),
                    "xanchor": "right", "yanchor": "top", "xref": "paper", "yref": "paper",
                    "showarrow": False, "font": {"size": 13, "color": "#e07b00"},
                })  # fmt: skip
    return found


def _grid_names(
    xs: list[str], ys: list[str], h: int, n_layers: int, width_cells: int, height_cells: int, lang: str
) -> tuple[list[str], list[str]]:
    """The grid's category names, which carry the hover's words (one string per column and row, not
    per cell): "head j · key: x", "layer i · query: y"; the gaps get names of their own (categories
    must be distinct) and no hover (hoverongaps=False)."""
    query, key = t("attention.axis.query", lang), t("attention.axis.key", lang)
    x_names, y_names = [f"·{c}" for c in range(width_cells)], [f"·{r}" for r in range(height_cells)]
    for j in range(h):
        head = escape_label(t("attention.head_n", lang, n=j + 1))
        x_names[grid_block(j, len(xs))] = [f"{head} · {key}: {x}" for x in xs]
    for i in range(n_layers):
        layer = escape_label(t("attention.layer_n", lang, n=i + 1))
        y_names[grid_block(i, len(ys))] = [f"{layer} · {query}: {y}" for y in ys]
    return x_names, y_names


def _grid_labels(tokens: Sequence[str] | None, n: int, f: int) -> list[str]:
    """One label per cell along a grid axis: blocks of ``f`` positions, tokens, or position numbers."""
    if f > 1:
        return block_axis(tokens if tokens is not None else n, f)[0]
    return unique_labels(tokens) if tokens is not None else [str(i) for i in range(n)]


def _grid_titles(
    h: int, n_k: int, width_cells: int, n_layers: int, n_q: int, height_cells: int, lang: str
) -> list[dict]:
    """ "head j" above each column of small multiples, "layer i" left of each row."""
    notes = []
    for j in range(h):  # paper coordinates: cell c spans [c, c + 1] / width_cells
        block = grid_block(j, n_k)
        notes.append(
            {
                "text": escape_label(t("attention.head_n", lang, n=j + 1)) if h <= 8 else f"{j + 1}",
                "x": (block.start + n_k / 2) / max(width_cells, 1),
                "y": 1,
                "yanchor": "bottom",
                "xref": "paper",
                "yref": "paper",
                "showarrow": False,
            }
        )
    for i in range(n_layers):  # layer 1 on top (the y axis is reversed)
        block = grid_block(i, n_q)
        notes.append(
            {
                "text": escape_label(t("attention.layer_n", lang, n=i + 1)),
                "x": 0,
                "y": 1 - (block.start + n_q / 2) / max(height_cells, 1),
                "xanchor": "right",
                "xref": "paper",
                "yref": "paper",
                "showarrow": False,
                "textangle": -90,
            }
        )
    return notes


# -- one query -------------------------------------------------------------------------------------

# How the bars of one query are drawn: URL value -> English name (``bar_mode_label`` translates it).
BAR_MODES: dict[str, str] = {"head": "the selected head", "mean": "average of all heads", "all": "every head"}


def bar_mode_label(mode: str, lang: str = "en") -> str:
    return t(f"attention.bars.{mode}", lang)


def query_weights(attn, query: int, *, row: int = 0) -> np.ndarray:
    """(h, L_k): what query position ``query`` gives each key, per head."""
    return as_numpy(attn.weights[row, :, query, :])


def query_bars(
    attn,
    query: int,
    q_tokens: Sequence[str],
    k_tokens: Sequence[str],
    *,
    mode: str = "head",
    head: int = 0,
    row: int = 0,
    height: int = 380,
    lang: str = "en",
) -> go.Figure:
    """One bar per key token: the chosen query's weights for one head, the mean over heads, or every head.

    Exact at any length (512 keys are 512 bars); beyond MAX_TICKS keys every n-th is written on the axis.
    """
    w = query_weights(attn, query, row=row)  # (h, L_k)
    if mode == "head":
        series = [(t("attention.head_n", lang, n=head + 1), w[head])]
    elif mode == "mean":
        series = [(t("attention.bars.mean_of", lang, h=w.shape[0]), w.mean(axis=0))]
    elif mode == "all":
        series = [(t("attention.head_n", lang, n=j + 1), w[j]) for j in range(w.shape[0])]
    else:
        raise ValueError(f"mode={mode!r} must be one of {tuple(BAR_MODES)}")
    xs, x_axis = token_axis(k_tokens, t("attention.axis.key_token", lang), max_ticks=MAX_TICKS)
    q_name = f"{token_label(q_tokens[query])}·{query}"
    query_word, key_word = t("attention.axis.query", lang), t("attention.axis.key", lang)
    weight = escape_label(t("attention.axis.weight", lang))
    traces = [
        {
            "type": "bar",
            "x": xs,
            "y": values,
            "name": escape_label(name),
            "hovertemplate": hover_template(
                escape_label(name), f"{query_word}: {q_name}", f"{key_word}: %{{x}}", value=weight, var="y"
            ),
        }
        for name, values in series
    ]
    return build_figure(
        traces,
        {
            "height": height,
            "barmode": "group",
            "showlegend": len(series) > 1,
            "legend": {"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0},
            "xaxis": x_axis,
            "yaxis": {
                "range": [0, 1],
                "title": {"text": escape_label(t("attention.axis.attention_weight", lang))},
            },
            "margin": {"l": 10, "r": 10, "t": 50 if len(series) > 1 else 20, "b": 10},
        },
    )
