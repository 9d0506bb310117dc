"""Mask figures: a padded batch, the key-padding and causal masks, their merge, and what masking does.

Convention, everywhere in Glassbox: a boolean mask means True = may attend (drawn blue, value 1).
PyTorch's ``nn.MultiheadAttention`` uses the opposite (True = masked out).

    key padding  (B, 1, 1, S)   query may look at every real key, never at a [PAD]
    causal       (1, 1, T, T)   query t may look at keys 0…t
    merged       (B, h, T, T)   padding ∧ causal, broadcast over heads and queries

Pure: (core.tracing.batch.BatchRun / arrays, tokens) -> go.Figure; no Streamlit. Texts come from ``i18n``
in the language ``lang``. Sizes stay small: the page cuts every sentence at 32 tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from core.tokenizers.vocab import PAD
from figures.drawing.style import (
    FONT_FAMILY,
    MASK_SCALE,
    SIGNED_SCALE,
    WEIGHTS_SCALE,
    escape_label,
    token_label,
)
from figures.drawing.toolbox import (
    as_numpy,
    build_figure,
    domains,
    heatmap_on_axes,
    hover_template,
    token_axis,
)
from i18n import t

# This page's figures sit side by side in narrow columns or hold three panels: 15 px labels and a
# 19 px title (the app's 18 / 22 px would collide). Drawn with our style, not Streamlit's theme,
# which restyled all six in the browser on every rerun.
FONT_SIZE, TITLE_SIZE = 15, 19


def _build(
    traces: list[dict], layout: dict, title: str | None = None, font_size: int = FONT_SIZE
) -> go.Figure:
    layout = {"font": {"family": FONT_FAMILY, "size": font_size, "color": "#222222"}, **layout}
    return build_figure(traces, layout, title=title, title_size=TITLE_SIZE)

MASK_KINDS = ("encoder", "decoder", "cross")  # the three attentions; kind_label names them
CELL_TEXT_MAX = 20  # write ids into the cells of the id matrix up to this many columns


def kind_label(attn_kind: str, lang: str = "en") -> str:
    """"Encoder self-attention (padding)" …: what the page calls an attention."""
    return t(f"masks.kind.{attn_kind}", lang)


def mask_colorbar(
    lang: str = "en", title_key: str = "masks.fig.may_attend", ticks: tuple[str, str] | None = None
) -> dict:
    """The 0/1 colour bar of a mask picture: grey 0 (False), blue 1 (True)."""
    false, true = ticks or (t("masks.fig.false", lang), t("masks.fig.true", lang))
    return {
        "title": {"text": escape_label(t(title_key, lang))},
        "tickvals": [0, 1],
        "ticktext": [escape_label(false), escape_label(true)],
        "thickness": 14,
    }


def padded_tokens(tokens: Sequence[Sequence[str]], width: int) -> list[list[str]]:
    """Each row's tokens, filled with [PAD] up to ``width``."""
    return [list(row) + [PAD] * (width - len(row)) for row in tokens]


def row_names(n: int, lang: str = "en") -> list[str]:
    return [t("masks.fig.sentence", lang, n=b + 1) for b in range(n)]


def _position_axis(title: str, L: int) -> dict:
    return {
        "title": {"text": escape_label(title)},
        "side": "top",
        "dtick": 1 if L <= 24 else 4,
        "showgrid": False,
    }


def ids_figure(
    ids, tokens: Sequence[Sequence[str]], pad_id: int, *, title: str, lang: str = "en"
) -> go.Figure:
    """The (B, L) id matrix: real tokens blue, [PAD] grey; ids in the cells, the token in the hover."""
    ids = as_numpy(ids)
    B, L = ids.shape
    real = (ids != pad_id).astype(np.float32)
    labels = padded_tokens(tokens, L)
    position, token, id_ = (t(f"masks.fig.{k}", lang) for k in ("position", "token", "id"))
    hover = [
        [f"{token_label(labels[b][i], 40)} ({id_} {int(ids[b, i])})" for i in range(L)] for b in range(B)
    ]
    trace = {
        "type": "heatmap",
        "z": real,
        "x": list(range(L)),
        "y": row_names(B, lang),
        "customdata": hover,
        "colorscale": MASK_SCALE,
        "zmin": 0,
        "zmax": 1,
        "xgap": 2,
        "ygap": 2,
        "colorbar": mask_colorbar(lang, "masks.fig.real_token", ("0 [PAD]", t("masks.fig.real", lang))),
        "hovertemplate": f"%{{y}}, {position} %{{x}}<br>{token}: %{{customdata}}<extra></extra>",
    }
    if L <= CELL_TEXT_MAX:
        trace.update(
            text=[[str(int(v)) for v in row] for row in ids], texttemplate="%{text}", textfont={"size": 14}
        )
    return _build(
        [trace],
        {
            "height": 150 + 45 * B,
            "xaxis": _position_axis(position, L),
            "yaxis": {"autorange": "reversed", "showgrid": False, "type": "category"},
            "margin": {"l": 10, "r": 10, "t": 100, "b": 10},
        },
        title=title,
    )


def padding_figure(padding, *, title: str | None = None, lang: str = "en") -> go.Figure:
    """(B, 1, 1, L) -> a B × L picture of the key-padding mask."""
    m = as_numpy(padding)[:, 0, 0, :].astype(np.float32)  # (B, L)
    B, L = m.shape
    key, may = t("masks.fig.key_position", lang), t("masks.fig.may_attend", lang)
    return _build(
        [
            {
                "type": "heatmap",
                "z": m,
                "x": list(range(L)),
                "y": row_names(B, lang),
                "colorscale": MASK_SCALE,
                "zmin": 0,
                "zmax": 1,
                "xgap": 2,
                "ygap": 2,
                "colorbar": mask_colorbar(lang),
                "hovertemplate": f"%{{y}}, {key} %{{x}}<br>{may}: %{{z}}<extra></extra>",
            }
        ],
        {
            "height": 150 + 45 * B,
            "xaxis": _position_axis(key, L),
            "yaxis": {"autorange": "reversed", "showgrid": False, "type": "category"},
            "margin": {"l": 10, "r": 10, "t": 100, "b": 10},
        },
        title=t("masks.fig.padding_title", lang) if title is None else title,
    )


def causal_figure(causal, *, title: str | None = None, lang: str = "en") -> go.Figure:
    m = as_numpy(causal)[0, 0].astype(np.float32)  # (T, T)
    T = m.shape[0]
    key, query, may = (t(f"masks.fig.{k}", lang) for k in ("key_position", "query_position", "may_attend"))
    return _build(
        [
            {
                "type": "heatmap",
                "z": m,
                "x": list(range(T)),
                "y": list(range(T)),
                "colorscale": MASK_SCALE,
                "zmin": 0,
                "zmax": 1,
                "xgap": 1 if T <= 64 else 0,
                "ygap": 1 if T <= 64 else 0,
                "colorbar": mask_colorbar(lang),
                "hovertemplate": f"{query} %{{y}}, {key} %{{x}}<br>{may}: %{{z}}<extra></extra>",
            }
        ],
        {
            "height": 380,
            "xaxis": {"title": {"text": escape_label(key)}, "side": "top", "showgrid": False},
            "yaxis": {"title": {"text": escape_label(query)}, "autorange": "reversed", "showgrid": False},
            "margin": {"l": 10, "r": 10, "t": 100, "b": 10},
        },
        title=t("masks.fig.causal_title", lang) if title is None else title,
    )


def merged_figure(
    mask,
    q_tokens: Sequence[Sequence[str]],
    k_tokens: Sequence[Sequence[str]],
    *,
    head: int = 0,
    height: int = 420,
    lang: str = "en",
) -> go.Figure:
    """The [B, h, q, k] mask an attention really used, one heatmap per batch row (head ``head``;
    every head has the same mask). Axis labels are each row's own tokens, [PAD]-filled."""
    m = as_numpy(mask)[:, head].astype(np.float32)  # (B, L_q, L_k)
    B, L_q, L_k = m.shape
    q_rows, k_rows = padded_tokens(q_tokens, L_q), padded_tokens(k_tokens, L_k)
    col_dom = domains(B, 0.08)
    traces, layout, notes = [], {}, []
    show_ticks = max(L_q, L_k) <= 20
    for b in range(B):
        n = "" if b == 0 else str(b + 1)
        sentence = t("masks.fig.sentence", lang, n=b + 1)
        ys, y_axis = token_axis(q_rows[b], autorange="reversed")
        xs, x_axis = token_axis(k_rows[b], tickangle=-90)
        traces.append(_sentence_mask(m[b], xs, ys, b, sentence, lang=lang))
        layout[f"xaxis{n}"] = {
            **x_axis,
            "domain": col_dom[b],
            "anchor": f"y{n}",
            "showticklabels": show_ticks,
        }
        layout[f"yaxis{n}"] = {**y_axis, "anchor": f"x{n}", "showticklabels": show_ticks}
        notes.append(_panel_title(escape_label(sentence), col_dom[b], TITLE_SIZE - 2))
    layout.update(height=height, annotations=notes, margin={"l": 10, "r": 10, "t": 40, "b": 10})
    return _build(traces, layout)


def _sentence_mask(z: np.ndarray, xs, ys, b: int, sentence: str, *, lang: str) -> dict:
    """Batch row ``b``'s (L_q, L_k) mask as a heatmap trace on its own axes; the first shows the scale."""
    query, key, may = (t(f"masks.fig.{k}", lang) for k in ("query", "key", "may_attend"))
    hover = f"{sentence}<br>{query}: %{{y}}<br>{key}: %{{x}}<br>{may}: %{{z}}<extra></extra>"
    return heatmap_on_axes(b, z, xs, ys, colorscale=MASK_SCALE, zmin=0, zmax=1, xgap=1, ygap=1,
                           showscale=b == 0, colorbar=mask_colorbar(lang), hovertemplate=hover)


def _panel_title(text: str, dom, size: int) -> dict:
    """A panel's heading: an annotation centred above the panel's column ``dom`` (paper units)."""
    return {
        "text": text,
        "x": sum(dom) / 2,
        "y": 1,
        "xref": "paper",
        "yref": "paper",
        "yanchor": "bottom",
        "showarrow": False,
        "font": {"size": size},
    }


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    """softmax over the last axis, with no mask: what attention would be if nothing were hidden."""
    z = np.asarray(scores, dtype=np.float64)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)


def mask_check(weights: np.ndarray, mask: np.ndarray) -> tuple[float, float]:
    """(largest weight on a masked cell, largest |row sum − 1|): both 0 up to float error."""
    w, m = np.asarray(weights), np.asarray(mask, dtype=bool)
    masked = float(np.abs(w[~m]).max()) if (~m).any() else 0.0
    return masked, float(np.abs(w.sum(axis=-1) - 1).max())


def masking_figure(
    scores, mask, weights, q_tokens: Sequence[str], k_tokens: Sequence[str], *, bias=None, height: int = 440,
    font_size: int = FONT_SIZE, lang: str = "en",
) -> go.Figure:
    """Three panels for one sentence and head: the scores (masked cells marked ×), softmax without the
    mask, and softmax with it (the model's real weights: masked cells exactly 0).

    ``bias`` (L_q, L_k): what positions added to these scores (ALiBi: ``HeadSteps.bias``), else None.
    The scores panel then says that its scores are Q Kᵀ/√d_k + B, and its hover gives both terms
    (``customdata``: [..., 0] = Q Kᵀ/√d_k, [..., 1] = B), which add up to the score drawn.
    """
    scores, mask, weights = as_numpy(scores), as_numpy(mask).astype(bool), as_numpy(weights)
    bias = None if bias is None else np.asarray(as_numpy(bias), dtype=np.float32)
    ys, y_axis = token_axis(q_tokens, autorange="reversed")
    xs, x_axis = token_axis(k_tokens, tickangle=-90)
    show_ticks = max(len(ys), len(xs)) <= 20
    col_dom = [(0.0, 0.27), (0.38, 0.65), (0.71, 0.98)]  # room for the score colour bar after panel 1
    traces, layout, notes = [], {}, []
    for p, panel in enumerate(_masking_panels(scores, weights, bias, lang)):
        n = "" if p == 0 else str(p + 1)
        trace = _masking_panel(p, panel, xs, ys, col_dom[0][1], lang)
        if p == 0:
            _score_terms(trace, panel, scores, mask, bias, lang)
        traces.append(trace)
        layout[f"xaxis{n}"] = {
            **x_axis,
            "domain": col_dom[p],
            "anchor": f"y{n}",
            "showticklabels": show_ticks,
        }
        layout[f"yaxis{n}"] = {**y_axis, "anchor": f"x{n}", "showticklabels": show_ticks and p == 0}
        notes.append(_panel_title(panel[0], col_dom[p], font_size))  # our own text (with <br>)
    layout.update(height=height, annotations=notes, margin={"l": 10, "r": 10, "t": 70, "b": 10})
    return _build(traces, layout, font_size=font_size)


def _masking_panels(scores: np.ndarray, weights: np.ndarray, bias, lang: str) -> list[tuple]:
    """(name, z, colour scale, zmin, zmax, value's name) of the three panels: the scores, softmax
    without the mask, softmax with it."""
    top = float(np.abs(scores).max()) or 1.0
    score, weight = t("masks.fig.score", lang), t("masks.fig.weight", lang)
    scores_title = t("masks.fig.panel.scores" if bias is None else "masks.fig.panel.scores_alibi", lang)
    return [
        (scores_title, scores, SIGNED_SCALE, -top, top, score),
        (t("masks.fig.panel.without", lang), softmax_rows(scores), WEIGHTS_SCALE, 0, 1, weight),
        (t("masks.fig.panel.with", lang), weights, WEIGHTS_SCALE, 0, 1, weight),
    ]


def _masking_panel(p: int, panel: tuple, xs, ys, bar_x: float, lang: str) -> dict:
    """Panel ``p`` as a heatmap trace; the scores' colour bar sits right after the first panel
    (``bar_x``), the weights' at the figure's right (the middle panel shares it)."""
    name, z, scale, lo, hi, value = panel
    query, key = t("masks.fig.query", lang), t("masks.fig.key", lang)
    bar = {"title": {"text": escape_label(value)}, "thickness": 12, "len": 0.8, "y": 0.4}
    if p == 0:
        bar.update(x=bar_x + 0.01, xanchor="left")
    hover = hover_template(name.replace("<br>", " "), f"{query}: %{{y}}", f"{key}: %{{x}}", value=value)
    return heatmap_on_axes(p, z, xs, ys, colorscale=scale, zmin=lo, zmax=hi, showscale=p != 1, colorbar=bar,
                           hovertemplate=hover)


def _score_terms(trace: dict, panel: tuple, scores: np.ndarray, mask: np.ndarray, bias, lang: str) -> None:
    """The scores panel (in place): × on the masked cells and, with a bias, both terms in the hover."""
    name, value = panel[0], panel[-1]
    cross = [["×" if not ok else "" for ok in row] for row in mask]
    trace.update(text=cross, texttemplate="%{text}", textfont={"size": 14, "color": "#222222"})
    if bias is None:
        return
    # the two terms of each score: Q Kᵀ/√d_k and the bias, (L_q, L_k, 2)
    terms = np.stack([scores.astype(np.float64) - bias, bias.astype(np.float64)], axis=-1)
    trace["customdata"] = terms.tolist()
    query, key = t("masks.fig.query", lang), t("masks.fig.key", lang)
    trace["hovertemplate"] = hover_template(
        name.replace("<br>", " "), f"{query}: %{{y}}", f"{key}: %{{x}}",
        "QKᵀ/√d_k: %{customdata[0]:.4f}", f"{escape_label(t('masks.fig.alibi_bias', lang))}: "
        "%{customdata[1]:.4f}", value=value,
    )


def token_table(tokens: Sequence[Sequence[str]], width: int, lang: str = "en") -> dict[str, list[str]]:
    """{"row": [...], "0": [row tokens at 0], …} for st.dataframe: the padded tokens as plain text."""
    rows = padded_tokens(tokens, width)
    return {t("masks.table.row", lang): row_names(len(rows), lang)} | {
        str(i): [r[i] for r in rows] for i in range(width)
    }
