"""Embeddings: the lookup table, the ``× sqrt(d_model)`` scaling, and how similar the tokens' vectors are.

Pure functions, no Streamlit: a trace (or numpy arrays) and tokens in, ``go.Figure`` or plain data out.
The numbers the page shows are computed here, so the page never touches a tensor.

    arrays = embedding_arrays(run.trace)                 # lookup, scaled, pe, embedded: (S, d) each
    fig = embedding_heatmap(arrays.lookup, run.src_tokens)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from figures.style import (
    SIGNED_SCALE,
    apply_style,
    escape_label,
    heatmap,
    token_label,
)

# Colours of the three things compared on this page (and the positional page): colour-blind safe.
LOOKUP_COLOR = "#9e9e9e"  # the raw table row: small
SCALED_COLOR = "#1f77b4"  # × sqrt(d_model)
PE_COLOR = "#ff7f0e"  # the positional encoding


@dataclass(frozen=True)
class EmbeddingArrays:
    """One sentence's source vectors as numpy arrays, batch element 0. Shapes (S, d_model)."""

    ids: np.ndarray  # (S,) int
    lookup: np.ndarray  # the table rows E[id]
    scaled: np.ndarray  # E[id] · sqrt(d_model)
    pe: np.ndarray  # PE rows 0..S-1
    embedded: np.ndarray  # scaled + pe = what the encoder reads (trace.src_embedded)

    @property
    def d_model(self) -> int:
        return int(self.lookup.shape[1])

    @property
    def scale(self) -> float:
        return math.sqrt(self.d_model)


def embedding_arrays(trace) -> EmbeddingArrays:
    """The trace's source embedding tensors as numpy (batch element 0)."""
    lookup = trace.src_token_embedding[0].detach().double().numpy()  # (S, d)
    S, d = lookup.shape
    pe = trace.positional[:S].detach().double().numpy()  # (S, d)
    return EmbeddingArrays(
        ids=trace.src_ids[0].detach().numpy().astype(int),
        lookup=lookup,
        scaled=lookup * math.sqrt(d),
        pe=pe,
        embedded=trace.src_embedded[0].detach().double().numpy(),
    )


# -- the lookup ------------------------------------------------------------------------------------


def lookup_rows(tokens: Sequence[str], ids: Sequence[int], lookup: np.ndarray, n_tokens: int = 8,
                n_dims: int = 6) -> list[dict]:
    """Token → id → the first entries of its table row, for a small table (st.dataframe shows text)."""
    rows = []
    for i, (tok, idx) in enumerate(zip(tokens[:n_tokens], ids[:n_tokens], strict=False)):
        row = {"position": i, "token": str(tok), "id": int(idx)}
        for j in range(min(n_dims, lookup.shape[1])):
            row[f"E[id, {j}]"] = round(float(lookup[i, j]), 4)
        if lookup.shape[1] > n_dims:
            row["…"] = "…"
        rows.append(row)
    return rows


def _dimension_axis(fig: go.Figure, d: int) -> None:
    """Dimensions are numbers: let plotly pick a few ticks instead of d crowded labels."""
    fig.update_xaxes(tickmode="auto", nticks=min(d, 16), tickvals=None, ticktext=None,
                     title="dimension j", side="top")


def embedding_heatmap(lookup: np.ndarray, tokens: Sequence[str], *, title: str | None = None,
                      height: int | None = None) -> go.Figure:
    """Tokens × dimensions: each row is the token's row of the lookup table (before scaling)."""
    lookup = np.asarray(lookup, dtype=float)
    S, d = lookup.shape
    bound = float(np.abs(lookup).max()) if lookup.size else 1.0
    fig = heatmap(
        lookup,
        [str(j) for j in range(d)],
        list(tokens),
        title=title,
        colorscale=SIGNED_SCALE,
        zmid=0.0,
        zmin=-bound,
        zmax=bound,
        colorbar_title="E[id, j]",
        x_title="dimension",
        y_title="token",
        height=height or max(260, 90 + 30 * S),
    )
    _dimension_axis(fig, d)
    return fig


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
    )


def norm_bars(a: EmbeddingArrays, tokens: Sequence[str], *, height: int | None = None) -> go.Figure:
    """Per token, the length of its vector: table row, row × sqrt(d_model), and the PE row it gets."""
    S = len(tokens)
    x = list(range(S))
    series = [
        ("E[id], the table row", np.linalg.norm(a.lookup, axis=1), LOOKUP_COLOR),
        (f"E[id]·√{a.d_model}, scaled", np.linalg.norm(a.scaled, axis=1), SCALED_COLOR),
        ("PE(pos), the position", np.linalg.norm(a.pe, axis=1), PE_COLOR),
    ]
    labels = [f"{escape_label(t)} ·{i}" for i, t in enumerate(tokens)]
    fig = go.Figure()
    for name, values, color in series:
        fig.add_trace(go.Bar(
            x=x, y=values, name=escape_label(name), marker_color=color, customdata=labels,
            hovertemplate=f"%{{customdata}}<br>{escape_label(name)}: %{{y:.4f}}<extra></extra>",
        ))
    fig.update_layout(barmode="group", bargap=0.25,
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    fig.update_xaxes(tickmode="array", tickvals=x, ticktext=[token_label(t) for t in tokens], tickangle=-45,
                     automargin=True, range=[-0.6, S - 0.4])
    fig.update_yaxes(title="vector length (L2 norm)", rangemode="tozero")
    apply_style(fig, height=height or 380)
    fig.update_layout(margin={"t": 70})
    return fig


def entry_histogram(a: EmbeddingArrays, *, bins: int = 60, height: int | None = None) -> go.Figure:
    """Distribution of the entries: table rows, scaled rows and PE rows of this sentence, overlaid."""
    values = [a.lookup.ravel(), a.scaled.ravel(), a.pe.ravel()]
    lo = float(min(v.min() for v in values)) if a.lookup.size else -1.0
    hi = float(max(v.max() for v in values)) if a.lookup.size else 1.0
    size = (hi - lo) / bins if hi > lo else 0.1
    fig = go.Figure()
    for name, v, color in (
        ("E[id] entries", values[0], LOOKUP_COLOR),
        (f"E[id]·√{a.d_model} entries", values[1], SCALED_COLOR),
        ("PE entries (in [-1, 1])", values[2], PE_COLOR),
    ):
        fig.add_trace(go.Histogram(
            x=v, name=escape_label(name), marker_color=color, opacity=0.6,
            xbins={"start": lo, "end": hi + size, "size": size},
            hovertemplate=f"{escape_label(name)}<br>range %{{x}}<br>count %{{y}}<extra></extra>",
        ))
    fig.update_layout(barmode="overlay",
                      legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "x": 0})
    fig.update_xaxes(title="entry value")
    fig.update_yaxes(title="count")
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
                   height: int | None = None) -> go.Figure:
    """cos(E[a], E[b]) between every pair of the sentence's tokens (scaling does not change it)."""
    S = len(tokens)
    side = max(320, min(720, 110 + 34 * S))
    return heatmap(
        cosine_matrix(x),
        list(tokens),
        list(tokens),
        title=title,
        colorscale=SIGNED_SCALE,
        zmin=-1.0,
        zmax=1.0,
        zmid=0.0,
        colorbar_title="cosine",
        x_title="token",
        y_title="token",
        value_format=".3f",
        height=height or side,
    )


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
                height: int | None = None) -> go.Figure:
    """The tokens' vectors projected on their two main directions, each point labelled by its token."""
    coords, ratio = pca_2d(x)
    labels = [token_label(t) for t in tokens]
    hover = [f"{escape_label(t)} ·{i}" for i, t in enumerate(tokens)]
    fig = go.Figure(go.Scatter(
        x=coords[:, 0],
        y=coords[:, 1],
        mode="markers+text",
        text=labels,
        textposition="top center",
        customdata=hover,
        marker={"size": 12, "color": SCALED_COLOR, "line": {"width": 1, "color": "white"}},
        hovertemplate="%{customdata}<br>PC1 %{x:.4f}<br>PC2 %{y:.4f}<extra></extra>",
        cliponaxis=False,
    ))
    fig.update_xaxes(title=f"PC1 ({ratio[0]:.0%} of the variance)", zeroline=True)
    fig.update_yaxes(title=f"PC2 ({ratio[1]:.0%} of the variance)", zeroline=True)
    apply_style(fig, height=height or 440, title=title)
    fig.update_layout(showlegend=False)
    return fig
