"""Embeddings: the lookup table, the ``× sqrt(d_model)`` scaling, and how similar the tokens' vectors are.

Pure functions: a trace (or numpy arrays) and tokens in, ``go.Figure`` or plain data out; the page never
touches a tensor. Every text comes from ``i18n`` in the language ``lang``.

    arrays = embedding_arrays(run.trace, pipe.config)    # lookup, scaled, pe, embedded: (S, d) each
    fig = embedding_heatmap(arrays.lookup, run.src_tokens, lang="zh")

BERT (all-MiniLM-L6-v2, ``config.scale_embeddings=False``) does not scale: ``scaled`` is then the
lookup itself, ``pe`` its learned position rows, and ``embedded`` LayerNorm(E[id] + P[pos] + T[0]).
RoPE and ALiBi add no position row (``pe`` is zeros): no position series is drawn.

Token axes are categories ``token·i``; beyond TOKEN_TICKS_MAX tokens plotly thins the tick labels and
the PCA points lose their text labels (the hover keeps them).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from figures.drawing.style import (
    SIGNED_SCALE,
    apply_style,
    escape_label,
    token_label,
    unique_labels,
)
from i18n import t

# Colours of the three things compared on this page (and the positional page): colour-blind safe.
LOOKUP_COLOR = "#9e9e9e"  # the raw table row: small
SCALED_COLOR = "#1f77b4"  # × sqrt(d_model)
PE_COLOR = "#ff7f0e"  # the positional encoding
TOKEN_TICKS_MAX = 64  # up to this many tokens every one is named on the axis; beyond, plotly thins them
MAX_HEIGHT = 720  # a 512-token heatmap stays one screen high (zoom to read rows)


@dataclass(frozen=True)
class EmbeddingArrays:
    """One sentence's source vectors as numpy arrays, batch element 0. Shapes (S, d_model)."""

    ids: np.ndarray  # (S,) int
    lookup: np.ndarray  # the table rows E[id]
    scaled: np.ndarray  # E[id] · sqrt(d_model) (BERT: E[id] itself, it does not scale)
    pe: np.ndarray  # position rows 0..S-1 (sinusoidal PE, or BERT's learned P)
    embedded: np.ndarray  # what the encoder reads (trace.src_embedded): scaled + pe, or BERT's LayerNorm
    scale_embeddings: bool = True  # False: no × sqrt(d_model) (BERT)
    positions: str = "sinusoidal"  # "learned": trained position rows (BERT)
    embed_norm: bool = False  # unscaled models: a LayerNorm on the sum (BERT); False: the sum itself (GPT-2)

    @property
    def d_model(self) -> int:
        return int(self.lookup.shape[1])

    @property
    def adds_positions(self) -> bool:
        """Whether a position row is added to the lookup (sinusoidal, learned); RoPE, ALiBi add none."""
        return self.positions in ("sinusoidal", "learned")

    @property
    def scale(self) -> float:
        """sqrt(d_model): the paper's factor (whether or not this model applies it)."""
        return math.sqrt(self.d_model)

    @property
    def factor(self) -> float:
        """The factor this model really multiplies the lookup by: sqrt(d_model), or 1 (BERT)."""
        return self.scale if self.scale_embeddings else 1.0


def embedding_arrays(trace, config=None) -> EmbeddingArrays:
    """The trace's source embedding tensors as numpy (batch element 0).

    ``config`` (a ``ModelConfig``; None = the paper's model) says whether the lookup was scaled and
    which positions were added.
    """
    scaled_model = config is None or config.scale_embeddings
    lookup = trace.src_token_embedding[0].detach().double().numpy()  # (S, d)
    S, d = lookup.shape
    pe = trace.positional[:S].detach().double().numpy()  # (S, d)
    return EmbeddingArrays(
        ids=trace.src_ids[0].detach().numpy().astype(int),
        lookup=lookup,
        scaled=lookup * math.sqrt(d) if scaled_model else lookup,
        pe=pe,
        embedded=trace.src_embedded[0].detach().double().numpy(),
        scale_embeddings=scaled_model,
        positions="sinusoidal" if config is None else config.positions,
        embed_norm=config is not None and config.embed_norm,
    )


def _token_axis(tokens: Sequence[str]) -> tuple[list[str], dict]:
    """(category values ``token·i``, axis settings): every token named up to TOKEN_TICKS_MAX, then thinned."""
    values = unique_labels(tokens)
    axis: dict = {"type": "category", "showgrid": False}
    if len(tokens) <= TOKEN_TICKS_MAX:
        axis.update(tickmode="array", tickvals=values, ticktext=[token_label(tok) for tok in tokens])
    else:
        axis.update(tickmode="auto", nticks=24)
    return values, axis


def _z(values: np.ndarray) -> np.ndarray:
    """float32 for big grids (half the bytes sent), full precision for small ones (exact hovers)."""
    return values.astype(np.float32) if values.size > 64 * 64 else values


# -- the lookup ------------------------------------------------------------------------------------


def lookup_rows(tokens: Sequence[str], ids: Sequence[int], lookup: np.ndarray, n_tokens: int = 8,
                n_dims: int = 6, *, lang: str = "en") -> list[dict]:
    """Token → id → the first entries of its table row, for a small table (st.dataframe shows text)."""
    position, token, id_ = (t(f"embeddings.table.{k}", lang) for k in ("position", "token", "id"))
    rows = []
    for i, (tok, idx) in enumerate(zip(tokens[:n_tokens], ids[:n_tokens], strict=False)):
        row = {position: i, token: str(tok), id_: int(idx)}
        for j in range(min(n_dims, lookup.shape[1])):
            row[f"E[id, {j}]"] = round(float(lookup[i, j]), 4)
        if lookup.shape[1] > n_dims:
            row["…"] = "…"
        rows.append(row)
    return rows


def _tick_step(n: int, most: int = 8) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … that puts at most ``most`` ticks on 0 … n-1."""
    step = 1
    while -(-n // step) > most:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2
    return step


def embedding_heatmap(lookup: np.ndarray, tokens: Sequence[str], *, title: str | None = None,
                      height: int | None = None, lang: str = "en") -> go.Figure:
    """Tokens × dimensions: each row is the token's row of the lookup table (before scaling)."""
    lookup = np.asarray(lookup, dtype=float)
    S, d = lookup.shape
    bound = float(np.abs(lookup).max()) if lookup.size else 1.0
    ys, y_axis = _token_axis(tokens)
    token, dim, value = (t(f"embeddings.axis.{k}", lang) for k in ("token", "dimension", "value"))
    fig = go.Figure(go.Heatmap(
        z=_z(lookup),
        x=list(range(d)),
        y=ys,
        colorscale=SIGNED_SCALE,
        zmid=0.0,
        zmin=-bound,
        zmax=bound,
        colorbar={"title": {"text": "E[id, j]"}},
        hovertemplate=f"{token}: %{{y}}<br>{dim}: %{{x}}<br>{value}: %{{z:.4f}}<extra></extra>",
    ))
    # Dimensions are numbers: at most 8 ticks, 1-2-5 apart, never turned (plotly turned its own pick
    # of ~13 upright at the lecture's font and width, after drawing: a second drawing every rerun).
    fig.update_xaxes(tickmode="linear", tick0=0, dtick=_tick_step(d), tickangle=0,
                     title=t("embeddings.axis.dimension_j", lang), side="top", showgrid=False)
    fig.update_yaxes(**y_axis, title=token, autorange="reversed")
    return apply_style(fig, height=height or min(MAX_HEIGHT, max(260, 90 + 30 * S)), title=title)


# -- the × sqrt(d_model) scaling -------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleSummary:
    """Typical sizes (root mean square of the entries, mean row norm) of lookup, scaled rows and PE."""

    d_model: int
    rms_lookup: float
    rms_scaled: float
    rms_pe: float
    norm_lookup: float
    norm_scaled: float
    norm_pe: float
    norm_embedded: float = 0.0  # what the encoder reads (BERT: after the LayerNorm)

    @property
    def pe_share_without_scaling(self) -> float:
        """‖PE‖ / (‖PE‖ + ‖E‖): how much of the sum would be position if the rows were not scaled."""
        return self.norm_pe / (self.norm_pe + self.norm_lookup)

    @property
    def pe_share_with_scaling(self) -> float:
        return self.norm_pe / (self.norm_pe + self.norm_scaled)


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x)))) if x.size else 0.0


def scale_summary(a: EmbeddingArrays) -> ScaleSummary:
    return ScaleSummary(
        d_model=a.d_model,
        rms_lookup=_rms(a.lookup),
        rms_scaled=_rms(a.scaled),
        rms_pe=_rms(a.pe),
        norm_lookup=float(np.linalg.norm(a.lookup, axis=1).mean()),
        norm_scaled=float(np.linalg.norm(a.scaled, axis=1).mean()),
        norm_pe=float(np.linalg.norm(a.pe, axis=1).mean()),
        norm_embedded=float(np.linalg.norm(a.embedded, axis=1).mean()),
    )


def _parts(a: EmbeddingArrays) -> list[tuple[str, np.ndarray, str]]:
    """The things compared, (text key suffix, (S, d) values, colour): the table row, what the model
    makes of it (× sqrt(d_model); BERT: the LayerNorm output), and the position row it adds (none for
    RoPE and ALiBi: a series of zeros would claim a position row that the model does not have)."""
    parts = [
        ("lookup", a.lookup, LOOKUP_COLOR),
        ("scaled", a.scaled, SCALED_COLOR) if a.scale_embeddings
        else ("normed" if a.embed_norm else "input", a.embedded, SCALED_COLOR),
    ]
    if a.adds_positions:
        key = "pe" if a.positions == "sinusoidal" else "learned_pe"
        parts.append((key, a.pe, PE_COLOR))
    return parts


def series(a: EmbeddingArrays, lang: str = "en",
           prefix: str = "embeddings.series") -> list[tuple[str, np.ndarray, str]]:
    """(name, values, colour) of the things compared; names from ``prefix.<part>`` texts."""
    return [(t(f"{prefix}.{key}", lang, d=a.d_model), values, color) for key, values, color in _parts(a)]


def _position_axis(fig: go.Figure, tokens: Sequence[str]) -> None:
    S = len(tokens)
    if S <= TOKEN_TICKS_MAX:
        fig.update_xaxes(tickmode="array", tickvals=list(range(S)),
                         ticktext=[token_label(tok) for tok in tokens], tickangle=-45)
    else:  # 512 tokens: numbered positions, the hover names the token
        fig.update_xaxes(tickmode="auto", nticks=16)
    fig.update_xaxes(automargin=True, range=[-0.6, S - 0.4])


def norm_bars(a: EmbeddingArrays, tokens: Sequence[str], *, height: int | None = None,
              lang: str = "en") -> go.Figure:
    """Per token, the length of its vector: table row, row × sqrt(d_model), and the position row it gets."""
    x = list(range(len(tokens)))
    labels = [f"{escape_label(tok)} ·{i}" for i, tok in enumerate(tokens)]
    fig = go.Figure()
    for name, values, color in series(a, lang):
        fig.add_trace(go.Bar(
            x=x, y=np.linalg.norm(values, axis=1), name=escape_label(name), marker_color=color,
            customdata=labels,
            hovertemplate=f"%{{customdata}}<br>{escape_label(name)}: %{{y:.4f}}<extra></extra>",
        ))
    fig.update_layout(barmode="group", bargap=0.25,
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    _position_axis(fig, tokens)
    fig.update_yaxes(title=t("embeddings.axis.norm", lang), rangemode="tozero")
    apply_style(fig, height=height or 380)
    fig.update_layout(margin={"t": 70})
    return fig


def entry_histogram(a: EmbeddingArrays, *, bins: int = 60, height: int | None = None,
                    lang: str = "en") -> go.Figure:
    """Distribution of the entries: table rows, scaled rows and position rows of this sentence, overlaid.

    One bar per bin of width (max − min) / ``bins`` (the same bins for every series)."""
    parts = series(a, lang, prefix="embeddings.hist")
    values = [v.ravel() for _, v, _ in parts]
    lo = float(min(v.min() for v in values)) if a.lookup.size else -1.0
    hi = float(max(v.max() for v in values)) if a.lookup.size else 1.0
    size = (hi - lo) / bins if hi > lo else 0.1
    count_word, range_word = t("embeddings.axis.count", lang), t("embeddings.hist.range", lang)
    edges = lo + size * np.arange(bins + 2)  # one spare bin: the maximum falls inside, not on the edge
    centres = (edges[:-1] + edges[1:]) / 2
    # Counted here, drawn as bars: a histogram trace would send all S × d_model × 3 entries (512 × 512
    # tokens × dims: 3 MB) to the browser; the counts are bins + 1 numbers.
    fig = go.Figure()
    for (name, _, color), v in zip(parts, values, strict=True):
        counts, _ = np.histogram(v, bins=edges)
        fig.add_trace(go.Bar(
            x=centres, y=counts, width=size, name=escape_label(name), marker_color=color, opacity=0.6,
            marker_line_width=0,
            hovertemplate=f"{escape_label(name)}<br>{range_word} %{{x:.3f}} ± {size / 2:.3f}<br>"
                          f"{count_word} %{{y}}<extra></extra>",
        ))
    fig.update_layout(barmode="overlay",
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    fig.update_xaxes(title=t("embeddings.axis.entry", lang))
    fig.update_yaxes(title=count_word)
    apply_style(fig, height=height or 380)
    fig.update_layout(margin={"t": 70})
    return fig


# -- similarity -----------------------------------------------------------------------------------


def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """(S, d) -> (S, S) cosine similarities; a zero row has similarity 0 with everything (and itself)."""
    x = np.asarray(x, dtype=float)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    return np.clip(unit @ unit.T, -1.0, 1.0)


def cosine_heatmap(x: np.ndarray, tokens: Sequence[str], *, title: str | None = None,
                   height: int | None = None, lang: str = "en") -> go.Figure:
    """cos(E[a], E[b]) between every pair of the sentence's tokens (scaling does not change it)."""
    S = len(tokens)
    values, axis = _token_axis(tokens)
    token, cosine = t("embeddings.axis.token", lang), t("embeddings.axis.cosine", lang)
    fig = go.Figure(go.Heatmap(
        z=_z(cosine_matrix(x)),
        x=values,
        y=values,
        colorscale=SIGNED_SCALE,
        zmin=-1.0,
        zmax=1.0,
        zmid=0.0,
        colorbar={"title": {"text": escape_label(cosine)}},
        hovertemplate=f"{token}: %{{y}}<br>{token}: %{{x}}<br>{cosine}: %{{z:.3f}}<extra></extra>",
    ))
    fig.update_xaxes(**axis, title=token, side="top")
    fig.update_yaxes(**axis, title=token, autorange="reversed")
    return apply_style(fig, height=height or max(320, min(MAX_HEIGHT, 110 + 34 * S)), title=title)


def pca_2d(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Project (S, d) rows on their 2 main directions: -> (coords (S, 2), explained variance ratio (2,)).

    Works for any S: with 1 token both coordinates are 0, with 2 tokens the second one is 0 (two
    points span one direction). Signs of principal axes are arbitrary; they are fixed so that the
    largest-magnitude loading of each axis is positive, so the picture does not flip between runs.
    """
    x = np.asarray(x, dtype=float)
    S = x.shape[0]
    coords = np.zeros((S, 2))
    ratio = np.zeros(2)
    if S < 2:
        return coords, ratio
    centred = x - x.mean(axis=0, keepdims=True)
    _, sing, vt = np.linalg.svd(centred, full_matrices=False)  # vt: (min(S, d), d)
    k = min(2, vt.shape[0])
    for c in range(k):
        if sing[c] <= 1e-12 * max(sing[0], 1e-300):
            continue  # a direction with no spread (e.g. all points identical): leave it at 0
        axis = vt[c]
        if axis[np.argmax(np.abs(axis))] < 0:
            axis = -axis
        coords[:, c] = centred @ axis
    total = float(np.square(sing).sum())
    if total > 0:
        ratio[:k] = np.square(sing[:k]) / total
    return coords, ratio


def pca_scatter(x: np.ndarray, tokens: Sequence[str], *, title: str | None = None,
                height: int | None = None, lang: str = "en") -> go.Figure:
    """The tokens' vectors projected on their two main directions, each point labelled by its token."""
    coords, ratio = pca_2d(x)
    labelled = len(tokens) <= TOKEN_TICKS_MAX  # 512 labels would hide the points: the hover names them
    hover = [f"{escape_label(tok)} ·{i}" for i, tok in enumerate(tokens)]
    fig = go.Figure(go.Scatter(
        x=coords[:, 0],
        y=coords[:, 1],
        mode="markers+text" if labelled else "markers",
        text=[token_label(tok) for tok in tokens] if labelled else None,
        textposition="top center",
        customdata=hover,
        marker={"size": 12 if labelled else 7, "color": SCALED_COLOR, "line": {"width": 1, "color": "white"}},
        hovertemplate="%{customdata}<br>PC1 %{x:.4f}<br>PC2 %{y:.4f}<extra></extra>",
        cliponaxis=False,
    ))
    fig.update_xaxes(title=t("embeddings.axis.pc", lang, n=1, share=f"{ratio[0]:.0%}"), zeroline=True)
    fig.update_yaxes(title=t("embeddings.axis.pc", lang, n=2, share=f"{ratio[1]:.0%}"), zeroline=True)
    apply_style(fig, height=height or 440, title=title)
    fig.update_layout(showlegend=False)
    return fig
