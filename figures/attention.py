"""Attention figures: one head step by step, every head of a layer, the layers × heads grid, one query.

Pure: (trace, model weights, tokens) -> numpy arrays -> ``go.Figure``; no Streamlit.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V          head_j = Attention(X W_Qʲ, X W_Kʲ, X W_Vʲ)
    MultiHead(X) = Concat(head_1, …, head_h) W_O

The numbers on screen are the trace's own tensors (``core.trace.AttentionTrace``); the only things
computed here are the unscaled Q Kᵀ (= scores · √d_k) and the concatenation of the heads.

Heatmap axes that carry tokens are categories named ``token·index`` (unique, so two "the" keep
their own rows, and the hover names the token) with the plain tokens as tick text. Matrices are
sent as float32 (plotly encodes numpy arrays in binary), so d_model = 512 stays light.

Long sentences (up to 512 tokens): in a matrix of more than MAX_CELLS cells, an axis longer than
POOL_MAX is shown as an overview of blocks of f neighbouring positions (f = ⌈n / POOL_MAX⌉), each
cell the mean of its block (weights: the largest value, so one sharp weight is not averaged away).
A 512 × 512 weight matrix is then 128 × 128 cells instead of 1 MB per heatmap; exact numbers stay
a hover away in the one-query bars and the neuron view.

Every text comes from ``i18n`` in the language ``lang``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.colors import get_colorscale

from figures.style import (
    MASK_SCALE,
    SIGNED_SCALE,
    TITLE_FONT_SIZE,
    WEIGHTS_SCALE,
    apply_style,
    escape_label,
    fit_tick_fonts,
    reserve_margins,
    token_label,
    unique_labels,
)
from figures.text import literal  # URL values in notices (Markdown): inert inside a code span
from i18n import t

# The three attentions of the model: URL value -> its English name (``kind_label`` translates it).
KINDS: dict[str, str] = {
    "encoder": "Encoder self-attention",
    "decoder": "Decoder masked self-attention",
    "cross": "Decoder cross-attention",
}
ANNOTATE_MAX = 12  # write the values into the cells only up to 12 × 12: beyond, hover and colour
VALUE_FORMAT = ".7g"  # float32 has about 7 significant digits: the hover shows all of them
CELL_FONT_SIZE = 15
POOL_MAX = 128  # a big matrix's axes longer than this are drawn as blocks (an overview): 512² cells are 1 MB
MAX_CELLS = 65_536  # ... a matrix is big beyond this many cells (256 kB of float32)
HEADS_POOL_MAX = 64  # every head of a layer: up to 16 heatmaps side by side
GRID_POOL_MAX = 32  # layers × heads: up to 6 × 16 small multiples
MAX_TICKS = 40  # more tick labels than this would overlap: every n-th is written, the hover names all


def kind_label(kind: str, lang: str = "en") -> str:
    """ "Encoder self-attention", "编码器自注意力"…: what the page calls one kind of attention."""
    return t(f"attention.kind.{kind}", lang)


# -- choosing what to show -------------------------------------------------------------------------


def check_choice(
    key: str,
    raw,
    options: Sequence,
    default,
    what: str = "",
    fmt: Callable[[object], str] = str,
    lang: str = "en",
) -> tuple[object, str | None]:
    """A value from the URL (a widget's label, ``fmt(option)``) or from an earlier run (an option),
    checked against today's options.

    Returns (value, notice): the option itself if ``raw`` names one; a number outside the range of
    integer options is clamped to the nearest end (layer 5 when there are 2 layers -> layer 2);
    anything else falls back to ``default``. The notice says what was changed, or is None.

    >>> check_choice("attn_layer", "99", [1, 2], 1, "layer")
    (2, 'attn_layer=`99` is not available (layer 1–2): showing layer 2.')
    """
    by_text = {fmt(o): o for o in options} | {str(o): o for o in options}
    if str(raw) in by_text:
        return by_text[str(raw)], None
    shown = str(raw)[:40]
    value = default
    ints = all(isinstance(o, int) for o in options)
    if ints and options:
        try:
            number = float(str(raw).strip())
        except ValueError:
            number = math.nan
        if math.isfinite(number):
            value = min(max(round(number), min(options)), max(options))
    if ints and options:
        allowed, showing = f"{what} {min(options)}–{max(options)}".strip(), f"{what} {value}".strip()
    else:
        allowed = t("attention.choice.one_of", lang, options=", ".join(map(str, map(fmt, options))))
        showing = fmt(value)
    return value, t(
        "attention.choice.unavailable", lang, key=key, value=literal(shown), allowed=allowed, showing=showing
    )


def attention_of(trace, kind: str, layer: int):
    """The AttentionTrace of one attention block: kind in KINDS, layer counted from 0."""
    if kind == "encoder":
        return trace.encoder[layer].self_attn
    if kind == "decoder":
        return trace.decoder[layer].self_attn
    if kind == "cross":
        return trace.decoder[layer].cross_attn
    raise ValueError(f"kind={kind!r} must be one of {tuple(KINDS)}")


def tokens_of(kind: str, src_tokens: Sequence[str], tgt_tokens: Sequence[str]) -> tuple[list[str], list[str]]:
    """(query tokens, key tokens): encoder S×S, decoder self T×T, cross T (queries) × S (keys)."""
    if kind == "encoder":
        return list(src_tokens), list(src_tokens)
    if kind == "decoder":
        return list(tgt_tokens), list(tgt_tokens)
    return list(tgt_tokens), list(src_tokens)


def has_kind(trace, kind: str) -> bool:
    return kind == "encoder" or bool(trace.decoder)


def as_numpy(t) -> np.ndarray:
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


# -- the numbers of one head -----------------------------------------------------------------------


@dataclass(frozen=True)
class HeadWeights:
    """One head's slice of the projections, written the paper's way: Q = X W_Q + b_Q.

    ``nn.Linear`` stores W as (out, in) and computes x Wᵀ + b, so W_Qʲ (d_model, d_k) is the
    transpose of rows j·d_k…(j+1)·d_k of ``w_q.weight``. W_O is the whole (d_model, d_model)
    matrix: it mixes all heads.
    """

    w_q: np.ndarray  # (d_model, d_k)
    b_q: np.ndarray  # (d_k,)
    w_k: np.ndarray
    b_k: np.ndarray
    w_v: np.ndarray
    b_v: np.ndarray
    w_o: np.ndarray  # (d_model, d_model) = w_o.weight.T
    b_o: np.ndarray  # (d_model,)


def attention_module(model, kind: str, layer: int):
    """``model.<encoder|decoder>.layers[layer].<self_attn|cross_attn>``."""
    if kind == "encoder":
        return model.encoder.layers[layer].self_attn
    if kind == "decoder":
        return model.decoder.layers[layer].self_attn
    if kind == "cross":
        return model.decoder.layers[layer].cross_attn
    raise ValueError(f"kind={kind!r} must be one of {tuple(KINDS)}")


def head_weights(model, kind: str, layer: int, head: int) -> HeadWeights:
    mha = attention_module(model, kind, layer)
    rows = slice(head * mha.d_k, (head + 1) * mha.d_k)  # head j's rows of each projection

    def part(linear) -> tuple[np.ndarray, np.ndarray]:
        return as_numpy(linear.weight[rows]).T, as_numpy(linear.bias[rows])

    (w_q, b_q), (w_k, b_k), (w_v, b_v) = part(mha.w_q), part(mha.w_k), part(mha.w_v)
    return HeadWeights(w_q, b_q, w_k, b_k, w_v, b_v, as_numpy(mha.w_o.weight).T, as_numpy(mha.w_o.bias))


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
    bias = getattr(attn, "bias", None)
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


def diagonal_share(weights: np.ndarray) -> float:
    """Fraction of query rows whose strongest key is the one at the same position (alignment)."""
    return aligned_share(weights, range(np.asarray(weights).shape[0])) or 0.0


def aligned_share(weights: np.ndarray, expected: Sequence[int | None]) -> float | None:
    """Fraction of the query rows that have an expected key (``expected[t]``; None: none) whose
    strongest key is that one; None when no row has one. ``core.data.aligned_source`` gives a task's.

    >>> aligned_share(np.array([[0.1, 0.9], [0.8, 0.2], [0.5, 0.5]]), [1, 1, None])
    0.5
    """
    pairs = [(i, j) for i, j in zip(argmax_keys(weights), expected, strict=False) if j is not None]
    return sum(i == j for i, j in pairs) / len(pairs) if pairs else None


# -- building figures fast -------------------------------------------------------------------------
# Plotly's per-property validation costs milliseconds per figure and this page draws ~20 per rerun,
# so figures are built from plain dicts on a copy of apply_style's layout, without validation.
# The tests build every figure once with VALIDATE = True, which catches any misspelt property.
VALIDATE = False


@functools.lru_cache(maxsize=1)
def _base_layout() -> dict:
    """apply_style's layout (font, hoverlabel, margin, grid), with an explicitly empty template:
    without one plotly would apply its default template, the copy this module avoids."""
    layout = apply_style(go.Figure()).layout.to_plotly_json()
    layout["template"] = {}
    return layout


@functools.lru_cache(maxsize=16)
def _scale(name: str) -> list:
    """A named colour scale as explicit stops: plotly.js has its own, different "Blues" (dark to light)
    and no "RdBu_r"; only validation would have translated the name."""
    return get_colorscale(name)


def _styled_axis(axis: dict) -> dict:
    """apply_style's look; margins that grow to fit the labels, for an axis that writes any (an
    unlabelled one would still push the margin by a few px, and cost plotly a second drawing)."""
    styled = {**_base_layout()["xaxis"], **axis}
    if axis.get("showticklabels") is False and not axis.get("title"):
        styled["automargin"] = False
    return styled


def build_figure(
    traces: list[dict], layout: dict, title: str | None = None, title_size: int = TITLE_FONT_SIZE
) -> go.Figure:
    for trace in traces:
        if isinstance(trace.get("colorscale"), str):
            trace["colorscale"] = _scale(trace["colorscale"])
    base = dict(_base_layout())  # top-level keys are replaced, never mutated: a shallow copy is enough
    if title is not None:
        base["title"] = {
            "text": escape_label(title),
            "font": {"size": title_size},
            "x": 0.02,
            "y": 0.985,
            "yanchor": "top",
        }
    layout = {k: _styled_axis(v) if k.startswith(("xaxis", "yaxis")) else v for k, v in layout.items()}
    for name, update in fit_tick_fonts({**base, **layout}, traces).items():
        layout[name] = {**layout[name], **update}
    layout["margin"] = reserve_margins({**base, **layout}, traces)  # the title takes room too
    base.update(layout)
    fig = go.Figure(data=traces, layout=base, _validate=VALIDATE)
    fig._margins_reserved = True  # ui.show_figure need not measure again
    return fig


def domains(n: int, gap: float) -> list[tuple[float, float]]:
    """n equal intervals of [0, 1] with ``gap`` between neighbours."""
    size = (1 - gap * (n - 1)) / n if n else 1
    return [(i * (size + gap), i * (size + gap) + size) for i in range(n)]


def token_axis(
    tokens: Sequence[str], title: str = "", *, max_ticks: int | None = None, **kw
) -> tuple[list[str], dict]:
    """(category values ``token·i``, axis dict with the plain tokens as tick text).

    ``max_ticks``: with more tokens than this, only every n-th token is written on the axis (the
    hover still names every one).
    """
    values = unique_labels(tokens)
    every = math.ceil(len(values) / max_ticks) if max_ticks and len(values) > max_ticks else 1
    axis = {
        "type": "category",
        "tickmode": "array",
        "tickvals": values[::every],
        "ticktext": [token_label(tok) for tok in list(tokens)[::every]],
        "showgrid": False,
        **kw,
    }
    if title:
        axis["title"] = {"text": escape_label(title)}
    return values, axis


def dim_axis(n: int, title: str = "", **kw) -> tuple[list[int], dict]:
    axis = {"showgrid": False, "tickmode": "auto", "nticks": 8, "zeroline": False, **kw}
    if title:
        axis["title"] = {"text": escape_label(title)}
    return list(range(n)), axis


def hover_template(*lines: str, value: str = "value", var: str = "z") -> str:
    return "<br>".join(lines) + f"<br>{value}: %{{{var}:{VALUE_FORMAT}}}<extra></extra>"


# -- long sentences: blocks of neighbouring positions ----------------------------------------------


def pool_factor(n: int, limit: int = POOL_MAX) -> int:
    """How many neighbouring positions one cell stands for when an axis of ``n`` is drawn: 1 up to ``limit``.

    >>> pool_factor(512), pool_factor(128), pool_factor(129)
    (4, 1, 2)
    """
    return max(1, math.ceil(n / limit))


def block_reduce(z: np.ndarray, f_rows: int, f_cols: int, how: str = "mean") -> np.ndarray:
    """(R, C) -> (⌈R/f_rows⌉, ⌈C/f_cols⌉): the mean (or max) of each block; the last block may be smaller.

    >>> block_reduce(np.arange(6.0).reshape(2, 3), 1, 2, "max").tolist()
    [[1.0, 2.0], [4.0, 5.0]]
    """
    z = np.asarray(z, dtype=np.float32)
    if f_rows == f_cols == 1:
        return z
    r, c = z.shape
    rb, cb = math.ceil(r / f_rows), math.ceil(c / f_cols)
    padded = np.full((rb * f_rows, cb * f_cols), np.nan, dtype=np.float32)  # NaN: ignored by nanmean
    padded[:r, :c] = z
    blocks = padded.reshape(rb, f_rows, cb, f_cols)
    reduce = np.nanmax if how == "max" else np.nanmean
    return reduce(blocks, axis=(1, 3)).astype(np.float32)


def block_axis(
    labels: Sequence[str] | int, f: int, title: str = "", max_ticks: int = MAX_TICKS, **kw
) -> tuple[list[str], dict]:
    """Category values for blocks of ``f`` positions: ``first token…·a–b`` (tokens) or ``a–b`` (dims)."""
    n = labels if isinstance(labels, int) else len(labels)
    starts = list(range(0, n, f))
    spans = [(a, min(a + f, n) - 1) for a in starts]
    if isinstance(labels, int):
        values = [f"{a}–{b}" for a, b in spans]
        axis = {"type": "category", "showgrid": False, "tickmode": "auto", "nticks": 8, **kw}
    else:
        values = [f"{token_label(labels[a])}…·{a}–{b}" for a, b in spans]
        every = math.ceil(len(values) / max_ticks) if len(values) > max_ticks else 1
        axis = {
            "type": "category",
            "tickmode": "array",
            "tickvals": values[::every],
            "ticktext": [token_label(labels[a]) for a, _ in spans][::every],
            "showgrid": False,
            **kw,
        }
    if title:
        axis["title"] = {"text": escape_label(title)}
    return values, axis


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


def _matrix_axis(labels, factor: int, title: str):
    """One axis of a matrix figure: blocks of ``factor`` positions, numbered dimensions (``labels`` an
    int) or tokens."""
    if factor > 1:
        return block_axis(labels, factor, title)
    if isinstance(labels, int):
        return dim_axis(labels, title)
    return token_axis(labels, title, max_ticks=MAX_TICKS)


def matrix_figure(
    z,
    rows: Sequence[str] | int,
    cols: Sequence[str] | int,
    *,
    title: str,
    row_title: str,
    col_title: str,
    colorscale=SIGNED_SCALE,
    zmin: float | None = None,
    zmax: float | None = None,
    colorbar_title: str = "",
    height: int | None = None,
    text_format: str = ".2f",
    pool: str = "mean",
    lang: str = "en",
) -> go.Figure:
    """A matrix as a heatmap, first row on top. ``rows``/``cols``: tokens, or a number of dimensions.

    Values are written into the cells when the matrix is at most ANNOTATE_MAX × ANNOTATE_MAX; the
    hover always gives the exact value. A signed scale is centred on 0. In a matrix of more than
    MAX_CELLS cells, an axis longer than POOL_MAX is drawn in blocks (``pool``: "mean" or "max" of
    each block), and the hover says so.
    """
    z = np.asarray(z, dtype=np.float32)
    n_rows = rows if isinstance(rows, int) else len(rows)
    n_cols = cols if isinstance(cols, int) else len(cols)
    if z.shape != (n_rows, n_cols):
        raise ValueError(f"z has shape {z.shape}, labels need ({n_rows}, {n_cols})")
    big = n_rows * n_cols > MAX_CELLS  # up to 256 kB of float32 a matrix is sent whole, cell for cell
    f_rows, f_cols = (pool_factor(n_rows), pool_factor(n_cols)) if big else (1, 1)
    value_name = escape_label(t("attention.hover.value", lang))
    if f_rows > 1 or f_cols > 1:
        z = block_reduce(z, f_rows, f_cols, pool)
        value_name = escape_label(t(f"attention.hover.block_{pool}", lang))
    ys, y_axis = _matrix_axis(rows, f_rows, row_title)
    xs, x_axis = _matrix_axis(cols, f_cols, col_title)
    if colorscale == SIGNED_SCALE and zmin is None and zmax is None:
        top = float(np.abs(z).max()) if z.size else 0.0
        zmin, zmax = -(top or 1.0), top or 1.0
    small = z.shape[0] <= ANNOTATE_MAX and z.shape[1] <= ANNOTATE_MAX
    trace = {
        "type": "heatmap",
        "z": z,
        "x": xs,
        "y": ys,
        "colorscale": colorscale,
        "zmin": zmin,
        "zmax": zmax,
        "colorbar": {"title": {"text": escape_label(colorbar_title)}, "thickness": 14},
        "hovertemplate": hover_template(
            f"{escape_label(row_title)}: %{{y}}", f"{escape_label(col_title)}: %{{x}}", value=value_name
        ),
    }
    if small:
        trace.update(texttemplate=f"%{{z:{text_format}}}", textfont={"size": CELL_FONT_SIZE}, xgap=1, ygap=1)
    if height is None:
        height = int(min(520, max(260, 130 + 26 * len(ys))))
    return build_figure(
        [trace],
        {
            "meta": {"pooled": [f_rows, f_cols]},
            "height": height,
            "xaxis": {**x_axis, "side": "top"},
            "yaxis": {**y_axis, "autorange": "reversed"},
            "margin": {"l": 10, "r": 10, "t": 110, "b": 10},
        },
        title=title,
    )


def is_pooled(fig: go.Figure) -> bool:
    """Is this matrix figure an overview of blocks (not every cell its own)?"""
    meta = fig.layout.meta
    return isinstance(meta, dict) and max(meta.get("pooled", [1])) > 1


def annotated_columns(fig: go.Figure) -> int:
    """The number of columns of a matrix figure whose values are written in its cells, else 0."""
    trace = fig.data[0]
    return len(trace.x) if trace.texttemplate else 0


def step_figures(
    s: HeadSteps, w: HeadWeights, q_tokens: Sequence[str], k_tokens: Sequence[str], *, lang: str = "en"
) -> dict[str, go.Figure]:
    """Every step of head ``s.head``, in the order of the computation."""
    j, dk, d_model = s.head + 1, s.d_k, s.x_q.shape[1]

    def tr(key: str, **values) -> str:
        return t(f"attention.{key}", lang, **values)

    token, dim, dk_dim = tr("axis.token"), tr("axis.dimension"), tr("axis.dk_dim")
    query, key = tr("axis.query"), tr("axis.key")
    m = {"row_title": query, "col_title": key, "lang": lang}
    w_dims = {"row_title": tr("axis.d_model_dim"), "col_title": dk_dim, "lang": lang}
    figs = {
        "x_q": matrix_figure(
            s.x_q, q_tokens, d_model, title=tr("step.x"), row_title=token, col_title=dim, lang=lang
        ),
        "x_kv": matrix_figure(
            s.x_kv, k_tokens, d_model, title=tr("step.memory"), row_title=token, col_title=dim, lang=lang
        ),
        "w_q": matrix_figure(w.w_q, d_model, dk, title=tr("step.w_q", head=j), **w_dims),
        "w_k": matrix_figure(w.w_k, d_model, dk, title=tr("step.w_k", head=j), **w_dims),
        "w_v": matrix_figure(w.w_v, d_model, dk, title=tr("step.w_v", head=j), **w_dims),
        "q": matrix_figure(
            s.q, q_tokens, dk, title="Q = X W_Q + b_Q", row_title=query, col_title=dk_dim, lang=lang
        ),
        "k": matrix_figure(
            s.k, k_tokens, dk, title="K = X W_K + b_K", row_title=key, col_title=dk_dim, lang=lang
        ),
        "v": matrix_figure(
            s.v, k_tokens, dk, title="V = X W_V + b_V", row_title=key, col_title=dk_dim, lang=lang
        ),
        "qk": matrix_figure(s.qk, q_tokens, k_tokens, title="Q Kᵀ", text_format=".1f", **m),
        "scores": matrix_figure(
            s.scores,
            q_tokens,
            k_tokens,
            title=f"Q Kᵀ / √{dk}" if s.bias is None else f"Q Kᵀ / √{dk} + {tr('step.alibi_bias')}",
            **m,
        ),
        "mask": matrix_figure(
            s.mask.astype(np.float32),
            q_tokens,
            k_tokens,
            title=tr("step.mask"),
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
            title=tr("step.weights"),
            colorscale=WEIGHTS_SCALE,
            zmin=0,
            zmax=1,
            colorbar_title=tr("axis.weight"),
            pool="max",  # an overview keeps each block's strongest weight visible
            **m,
        ),
        "head_out": matrix_figure(
            s.head_out,
            q_tokens,
            dk,
            title=tr("step.head_out", head=j),
            row_title=query,
            col_title=dk_dim,
            lang=lang,
        ),
        "concat": matrix_figure(
            s.concat,
            q_tokens,
            d_model,
            title=tr("step.concat", h=d_model // dk),
            row_title=query,
            col_title=dim,
            lang=lang,
        ),
        "w_o": w_o_figure(w.w_o, s.head, dk, d_model, lang=lang),
        "output": matrix_figure(
            s.output, q_tokens, d_model, title=tr("step.output"), row_title=query, col_title=dim, lang=lang
        ),
    }
    # Outline head j's block inside the concatenation (in cells: blocks of f dimensions when pooled).
    f = pool_factor(d_model)
    figs["concat"].layout.shapes = [
        {
            "type": "rect",
            "xref": "x",
            "yref": "paper",
            "x0": s.head * dk / f - 0.5,
            "x1": (s.head + 1) * dk / f - 0.5,
            "y0": 0,
            "y1": 1,
            "line": {"color": "#e07b00", "width": 3},
        }
    ]
    return figs


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
    lang: str = "en",
) -> go.Figure:
    """One heatmap per head (rows = queries, columns = keys), one shared 0–1 colour scale.

    Beyond HEADS_POOL_MAX tokens each heatmap is an overview: a cell is the largest weight of its
    block of neighbouring positions (the hover says which).
    """
    weights = as_numpy(attn.weights[row])  # (h, L_q, L_k)
    h, n_q, n_k = weights.shape
    f_q, f_k = pool_factor(n_q, HEADS_POOL_MAX), pool_factor(n_k, HEADS_POOL_MAX)
    n_rows, n_cols = _grid_shape(h)
    show_ticks = max(n_q, n_k) <= 24  # beyond, labels would overlap: hover names them
    if f_q > 1:
        ys, y_axis = block_axis(q_tokens, f_q, autorange="reversed")
    else:
        ys, y_axis = token_axis(q_tokens, autorange="reversed")
    if f_k > 1:
        xs, x_axis = block_axis(k_tokens, f_k, tickangle=-90)
    else:
        xs, x_axis = token_axis(k_tokens, tickangle=-90 if n_k > 5 else 0)
    value = t("attention.axis.weight", lang) if f_q == f_k == 1 else t("attention.hover.block_max", lang)
    query = t("attention.axis.query", lang)
    key = t("attention.axis.key", lang)
    col_dom = domains(n_cols, 0.05)
    row_dom = list(reversed(domains(n_rows, 0.16 if show_ticks else 0.08)))  # first row on top
    traces, layout, notes = [], {}, []
    for j in range(h):
        r, c = divmod(j, n_cols)
        n = "" if j == 0 else str(j + 1)
        name = t("attention.head_n", lang, n=j + 1)
        traces.append(
            {
                "type": "heatmap",
                "z": block_reduce(weights[j], f_q, f_k, "max"),
                "x": xs,
                "y": ys,
                "xaxis": f"x{n}",
                "yaxis": f"y{n}",
                "zmin": 0,
                "zmax": 1,
                "colorscale": WEIGHTS_SCALE,
                "showscale": j == 0,
                "name": escape_label(name),
                "colorbar": {
                    "title": {"text": escape_label(t("attention.axis.weight", lang))},
                    "thickness": 14,
                },
                "hovertemplate": hover_template(
                    escape_label(name), f"{query}: %{{y}}", f"{key}: %{{x}}", value=escape_label(value)
                ),
            }
        )
        layout[f"xaxis{n}"] = {
            **x_axis,
            "domain": col_dom[c],
            "anchor": f"y{n}",
            "showticklabels": show_ticks,
        }
        layout[f"yaxis{n}"] = {
            **y_axis,
            "domain": row_dom[r],
            "anchor": f"x{n}",
            "showticklabels": show_ticks and c == 0,
        }
        picked = j == selected
        notes.append(
            {
                "text": escape_label(name + (t("attention.step_by_step_mark", lang) if picked else "")),
                "showarrow": False,
                "xref": "paper",
                "yref": "paper",
                "x": sum(col_dom[c]) / 2,
                "y": row_dom[r][1],
                "xanchor": "center",
                "yanchor": "bottom",
                "font": {"size": 18, "color": "#e07b00" if picked else "#222222"},
            }
        )
    if height is None:
        per_row = max(220, min(420, 90 + 16 * len(ys))) + (70 if show_ticks else 0)
        height = n_rows * per_row + 40
    layout.update(height=height, annotations=notes, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return build_figure(traces, layout)


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
    kind: str,
    *,
    row: int = 0,
    q_tokens: Sequence[str] | None = None,
    k_tokens: Sequence[str] | None = None,
    lang: str = "en",
) -> go.Figure:
    """Small multiples of one kind of attention: a layer a row, a head a column, no tick labels.

    Drawn as ONE heatmap (the blocks separated by empty cells, the hover naming layer, head, query and
    key): 48 heatmap traces on 48 pairs of axes took Chromium ~0.3 s to redraw after every slider
    move, a single trace a fraction of that. ``grid_block`` says where each (layer, head) lies.
    It does not depend on the layer and head on screen, so choosing another head leaves its spec
    unchanged and the browser does not redraw it. Beyond GRID_POOL_MAX tokens a cell is the largest
    weight of a block of neighbouring positions.
    """
    n_layers = len(trace.encoder if kind == "encoder" else trace.decoder)
    weights = [
        as_numpy(attention_of(trace, kind, i).weights[row]) for i in range(n_layers)
    ]  # (h, L_q, L_k) each
    h, L_q, L_k = weights[0].shape if weights else (0, 0, 0)
    f_q, f_k = pool_factor(L_q, GRID_POOL_MAX), pool_factor(L_k, GRID_POOL_MAX)
    if f_q > 1:
        ys = block_axis(q_tokens if q_tokens is not None else L_q, f_q)[0]
    else:
        ys = unique_labels(q_tokens) if q_tokens is not None else [str(i) for i in range(L_q)]
    if f_k > 1:
        xs = block_axis(k_tokens if k_tokens is not None else L_k, f_k)[0]
    else:
        xs = unique_labels(k_tokens) if k_tokens is not None else [str(i) for i in range(L_k)]
    n_q, n_k = len(ys), len(xs)
    g_q, g_k = grid_gap(n_q), grid_gap(n_k)
    height_cells = n_layers * n_q + (n_layers - 1) * g_q
    width_cells = h * n_k + (h - 1) * g_k
    z = np.full((max(height_cells, 0), max(width_cells, 0)), np.nan, dtype=np.float32)  # NaN: a gap
    for i in range(n_layers):
        for j in range(h):
            z[grid_block(i, n_q), grid_block(j, n_k)] = block_reduce(weights[i][j], f_q, f_k, "max")
    # Category names carry the hover's words (one string per column and row, not per cell); the gaps
    # get names of their own (categories must be distinct) and no hover (hoverongaps=False).
    query, key = t("attention.axis.query", lang), t("attention.axis.key", lang)
    x_names, y_names = [f"·{c}" for c in range(width_cells)], [f"·{r}" for r in range(height_cells)]
    for j in range(h):
        head = escape_label(t("attention.head_n", lang, n=j + 1))
        x_names[grid_block(j, n_k)] = [f"{head} · {key}: {x}" for x in xs]
    for i in range(n_layers):
        layer = escape_label(t("attention.layer_n", lang, n=i + 1))
        y_names[grid_block(i, n_q)] = [f"{layer} · {query}: {y}" for y in ys]
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
    cell = 120 if h <= 4 else 95 if h <= 8 else 60
    layout = {
        "xaxis": {**hidden},
        "yaxis": {**hidden, "autorange": "reversed"},
        "height": n_layers * cell + 60,
        "annotations": notes,
        "margin": {"l": 40, "r": 10, "t": 40, "b": 10},
    }
    return build_figure(traces, layout)


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
