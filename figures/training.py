"""Training curves, the learning-rate schedule and the trained-vs-random comparison: pure plotly figures."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

import i18n
from figures.drawing.style import apply_style, escape_label, fit_margins, heatmap

SCHEDULE_POINTS = 400  # points of the planned learning-rate curve (a budget has up to 5,000 steps)


def _style(fig: go.Figure, **kwargs) -> go.Figure:
    return fit_margins(apply_style(fig, **kwargs))


def _tr(key: str, lang: str, **values: object) -> str:
    return i18n.t(f"training.fig.{key}", lang, **values)


def curves(history: list[dict], *, lang: str = "en") -> go.Figure:
    """Loss and accuracy against the step, from ``core.training.loop.Progress`` reports (live or final)."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=(_tr("loss_title", lang), _tr("acc_title", lang)),
                        horizontal_spacing=0.12)
    steps = [h["step"] for h in history]
    fig.add_trace(go.Scatter(x=steps, y=[h["loss"] for h in history], mode="lines", name=_tr("loss", lang),
                             line={"width": 3}), row=1, col=1)
    fig.add_trace(go.Scatter(x=steps, y=[h["acc"] for h in history], mode="lines",
                             name=_tr("train_acc", lang), line={"width": 3}), row=1, col=2)
    val = [h for h in history if h.get("val")]
    if val:
        fig.add_trace(go.Scatter(x=[h["step"] for h in val], y=[h["val"]["token_acc"] for h in val],
                                 mode="lines+markers", name=_tr("val_acc", lang),
                                 marker={"size": 10}), row=1, col=2)
    fig.update_xaxes(title_text=_tr("step", lang))
    fig.update_yaxes(range=[0, 1.02], row=1, col=2)
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return _style(fig, height=380)


def lm_curves(history: list[dict], *, lang: str = "en") -> go.Figure:
    """A language model's training (``core.training.loop.Progress`` reports): the loss, the best
    prefix-matching score of any head and the validation perplexity against the step. The last two are
    measured at the evaluation steps only (the reports whose ``val`` / ``heads`` are set)."""
    titles = (_tr("loss_title", lang), _tr("pm_title", lang), _tr("ppl_title", lang))
    fig = make_subplots(rows=1, cols=3, subplot_titles=titles, horizontal_spacing=0.09)
    steps = [h["step"] for h in history]
    fig.add_trace(go.Scatter(x=steps, y=[h["loss"] for h in history], mode="lines", name=_tr("loss", lang),
                             line={"width": 3}), row=1, col=1)
    val = [h for h in history if h.get("val")]
    fig.add_trace(go.Scatter(x=[h["step"] for h in val], y=[h["val"]["loss"] for h in val],
                             mode="lines+markers", name=_tr("val_loss", lang), marker={"size": 7}),
                  row=1, col=1)
    probed = [h for h in history if h.get("heads")]
    fig.add_trace(go.Scatter(x=[h["step"] for h in probed], y=[h["heads"]["best_pm"] for h in probed],
                             mode="lines+markers", name=_tr("best_pm", lang), marker={"size": 8},
                             line={"width": 3, "color": "#c05621"}), row=1, col=2)
    fig.add_trace(go.Scatter(x=[h["step"] for h in val], y=[h["val"]["perplexity"] for h in val],
                             mode="lines+markers", name=_tr("val_ppl", lang), marker={"size": 7}),
                  row=1, col=3)
    fig.update_xaxes(title_text=_tr("step", lang))
    fig.update_yaxes(range=[0, 1.02], row=1, col=2)  # a share of attention
    fig.update_yaxes(type="log", row=1, col=3)  # from the vocabulary's size down to tens
    fig.update_layout(legend={"orientation": "h", "y": -0.25})
    return _style(fig, height=380)


# -- the learning rate -----------------------------------------------------------------------------


def planned_rate(
    step: int, steps: int, d_model: int, warmup: int, cooldown: float, factor: float = 1.0
) -> float:
    """The rate a seq2seq task trains with at ``step`` of a ``steps`` budget when the steps run out
    first: the paper's warm-up schedule, lowered linearly to 0 over the last ``cooldown`` of the budget."""
    from core.training.schedule import cooled, noam_lr

    return cooled(noam_lr(step, d_model, warmup, factor), (step - 1) / steps, cooldown)


def task_warmup(task: str) -> int:
    """The warm-up steps ``task`` trains with (its recipe's)."""
    from core.training.settings import RECIPES

    return RECIPES[task].warmup


def lr_schedule(
    steps: int,
    d_model: int,
    warmup: int,
    cooldown: float,
    history: list[dict] | None = None,
    *,
    lang: str = "en",
) -> go.Figure:
    """The planned learning rate over a ``steps`` budget (line), and the rates a run really used
    (markers, from its progress reports) when ``history`` is given. The warm-up's end is marked."""
    xs = _schedule_steps(steps, warmup)
    rates = [planned_rate(int(s), steps, d_model, warmup, cooldown) for s in xs]
    return _schedule_figure(xs, rates, steps, warmup, history, lang)


def planned_lm_rate(step: int, steps: int, train) -> float:
    """The rate the language model trains with at ``step`` of a ``steps`` budget when the steps run out
    first (``train``: its TrainingSettings, lr and warmup): a linear warm-up, then a cosine from lr to
    lr/10."""
    # the one definition of the schedule, so the curve cannot drift from it
    from core.training.schedule import warmup_cosine

    # the loop reads the budget's share as it stood before the step
    return warmup_cosine(step, (step - 1) / steps, train.lr, train.warmup)


def lm_lr_schedule(steps: int, train, history: list[dict] | None = None, *,
                   lang: str = "en") -> go.Figure:
    """:func:`lr_schedule` for the language model: warm-up, then cosine to lr/10 (``train``: its
    TrainingSettings, lr and warmup)."""
    warmup = train.warmup
    xs = _schedule_steps(steps, warmup)
    rates = [planned_lm_rate(int(s), steps, train) for s in xs]
    return _schedule_figure(xs, rates, steps, warmup, history, lang)


def _schedule_steps(steps: int, warmup: int) -> np.ndarray:
    xs = np.unique(np.linspace(1, steps, min(steps, SCHEDULE_POINTS)).round().astype(int))
    return np.union1d(xs, [min(warmup, steps)])  # the peak is a point of the curve


def _schedule_figure(xs, rates, steps: int, warmup: int, history: list[dict] | None, lang: str) -> go.Figure:
    hover = _tr("lr_hover", lang) + "<extra></extra>"
    fig = go.Figure(
        go.Scatter(x=xs, y=rates, mode="lines", name=_tr("lr_planned", lang),
                   line={"width": 3, "color": "#2b6cb0"}, hovertemplate=hover)
    )
    if history:
        fig.add_trace(
            go.Scatter(x=[h["step"] for h in history], y=[h["lr"] for h in history], mode="markers",
                       name=_tr("lr_used", lang), marker={"size": 9, "color": "#c05621"},
                       hovertemplate=hover)
        )
    if warmup < steps:
        fig.add_vline(x=warmup, line={"dash": "dot", "color": "#555555"},
                      annotation_text=_tr("lr_warmup", lang, warmup=warmup), annotation_position="top right")
    fig.update_xaxes(title=_tr("step", lang), rangemode="tozero")
    fig.update_yaxes(title=_tr("lr", lang), rangemode="tozero", exponentformat="e")
    _style(fig, height=340)
    fig.update_layout(legend={"orientation": "h", "y": -0.3, "x": 0.0})
    return fig


# -- trained vs random -----------------------------------------------------------------------------


def cross_attention(
    weights, tgt_tokens: list[str], src_tokens: list[str], title: str, *, lang: str = "en"
) -> go.Figure:
    """Head-averaged cross-attention of the last decoder layer: rows = decoder positions, columns = source.

    ``title`` (e.g. "trained weights") sits above the subtitle "last decoder layer, heads averaged";
    the source tokens go below the grid, so the title never meets them in a half-width column.
    """
    fig = heatmap(weights, src_tokens, tgt_tokens, title=title, zmin=0, zmax=1,
                  colorbar_title=_tr("weight", lang), x_title=_tr("cross_x", lang),
                  y_title=_tr("cross_y", lang), height=440)
    fig.update_layout(title_subtitle_text=escape_label(_tr("cross_subtitle", lang)), margin_t=80)
    fig.update_xaxes(side="bottom")
    return fit_margins(fig)


def last_cross_attention(trace):
    """(T, S) numpy: the last decoder layer's cross-attention of the first sentence, averaged over heads."""
    return trace.decoder[-1].cross_attn.weights[0].mean(0).numpy()
