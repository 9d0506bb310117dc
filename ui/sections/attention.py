"""The Attention page's sections: the head view and the neuron view, one head step by step with the
real numbers, every head of a layer, every layer × head, where one token looks, and a decoder-only
model's induction heads. Each section reads a ``View``: one head of one attention block, chosen with
widgets kept in the URL (``choose_view``)."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

import figures.attention as fa
import figures.attention_views as fv
import figures.drawing.toolbox as toolbox
import ui
from core.names import Weights
from core.training.pairs import aligned_source
from i18n import t
from ui.components.head_view import show_head_view
from ui.interventions import switches as ablation
from ui.page import widgets
from ui.page.tables import show_table
from ui.sections import induction

if TYPE_CHECKING:
    from core.tracing.run import SentenceRun

EXPLORE_VIEWS = ("head_view", "neuron_view")  # the upper tabs: ?attn_explore=<view>, the head view by default
VIEWS = ("heads", "grid", "query")  # the lower tabs: ?attn_view=<view>, every head by default
# Values older links carry: a tab's or an option's label, in either language (ui/page/widgets.py)
TAB_ALIASES = widgets.aliases(EXPLORE_VIEWS + VIEWS, lambda v, lang: t(f"attention.tab.{v}", lang))
KIND_ALIASES = widgets.aliases(fa.KINDS, fa.kind_label)
BAR_ALIASES = widgets.aliases(fa.BAR_MODES, fa.bar_mode_label)
FITS = {1: 12, 2: 7, 3: 4}  # columns of written values that stay readable in 1, 2 or 3 page columns

# The paper's equation, as this model computes it: ALiBi adds its bias B to every self-attention score
# (cross-attention has none); RoPE rotates q and k by their positions before Q Kᵀ.
SOFTMAX = r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left("
SCALED = r"\frac{Q K^\top}{\sqrt{d_k}}\right) V"
SCALED_BY = {
    "alibi": r"\frac{Q K^\top}{\sqrt{d_k}} + B\right) V,\quad B_{ij} = -m_h\,|i-j|",
    "rope": r"\frac{(R\,Q)(R\,K)^\top}{\sqrt{d_k}}\right) V",
}


@dataclass(frozen=True)
class View:
    """One head of one attention block, as a section draws it (``layer`` and ``head`` from 0)."""

    run: SentenceRun
    attn_kind: str
    layer: int
    head: int
    q_tokens: list[str]
    k_tokens: list[str]
    lang: str
    probe: induction.HeadProbe | None = None  # a decoder-only model's heads, measured: their roles

    @property
    def attn(self):  # the block's AttentionTrace: every head
        return self.run.attention(self.attn_kind, self.layer)

    @functools.cached_property
    def steps(self) -> fa.HeadSteps:
        return fa.head_steps(self.attn, self.head)

    @property
    def d_k(self) -> int:
        return self.run.config.d_model // self.run.config.num_heads

    @property
    def kv_heads(self) -> int | None:  # fewer than num_heads: grouped-query attention (Llama, Qwen2)
        return self.run.config.num_kv_heads

    @property
    def rotated(self) -> bool:  # RoPE turns self-attention's q and k by position; the trace keeps them turned
        return self.run.config.positions == "rope" and self.attn_kind != "cross"

    @property
    def where(self) -> str:  # where queries, keys and values come from: a decoder only reads the sentence
        one_stack = self.attn_kind == "decoder" and self.run.config.stack == "decoder"
        return ui.t("attention.where.causal" if one_stack else f"attention.where.{self.attn_kind}")

    @property
    def kind_name(self) -> str:  # "Encoder self-attention", "编码器自注意力"…
        return fa.kind_label(self.attn_kind, self.lang)

    @property
    def stem(self) -> str:  # the start of a downloaded figure's file name
        return f"attention-{self.attn_kind}-layer{self.layer + 1}-head{self.head + 1}"


def choose_view(
    run: SentenceRun, lang: str, prefix: str, columns, found: list[str],
    probe: induction.HeadProbe | None = None,
) -> View:
    """The attention a section shows, chosen in ``columns``: its kind, its layer and (given a third
    column) its head, kept in the URL as ``{prefix}_kind``, ``{prefix}_layer``, ``{prefix}_head``.
    With a ``probe`` each head's label names its role ("2 · induction (PM 0.71)")."""
    config = run.config
    # a model with one stack: that stack's attention
    kinds = fa.kinds_of(config.stack)
    label, kind_name = ui.t("attention.widget.kind"), functools.partial(fa.kind_label, lang=lang)
    with columns[0]:
        attn_kind = widgets.choose(
            st.radio,
            label,
            f"{prefix}_kind",
            kinds,
            kinds[0],
            found,
            fmt=kind_name,
            aliases=KIND_ALIASES,
            horizontal=True,
        )
    with columns[1]:
        layer = choose_number("layer", prefix, config.num_layers, found)
    head = 1
    if len(columns) > 2:
        with columns[2]:
            fmt = induction.head_format(probe, layer - 1, lang)
            head = choose_number("head", prefix, config.num_heads, found, fmt)
    q_tokens, k_tokens = fa.tokens_of(attn_kind, run.src_tokens, run.tgt_tokens)
    return View(run, attn_kind, layer - 1, head - 1, q_tokens, k_tokens, lang, probe)


def choose_number(what: str, prefix: str, n: int, found: list[str], fmt=str) -> int:
    """A layer or a head, 1 … ``n``, kept in the URL as ``{prefix}_{what}`` (``fmt`` labels them)."""
    label, numbers = ui.t(f"attention.widget.{what}", n=n), list(range(1, n + 1))
    return widgets.choose(
        st.selectbox, label, f"{prefix}_{what}", numbers, 1, found, ui.t(f"attention.what.{what}"), fmt
    )


def noise_caption(run: SentenceRun) -> None:
    if run.pipe.weights == Weights.RANDOM:  # untrained: every pattern on this page is noise
        st.caption(ui.t("attention.noise"))


def model_name(run: SentenceRun) -> str:
    """The model's own name ("gpt2", "all-MiniLM-L6-v2"), else "This model"."""
    name = run.pipe.name.removeprefix("hf:")
    return name or ("all-MiniLM-L6-v2" if run.config.stack == "encoder" else ui.t("attention.this_model"))


def answer_beside(view: View, key: str) -> None:
    """The model's answer beside a view whose rows are the decoder's tokens (none for the encoder's)."""
    if view.attn_kind != "encoder":
        ui.show_answer(view.run, key=key)


def induction_heads(run: SentenceRun, settings: ui.Settings) -> induction.HeadProbe | None:
    """A decoder-only model: its heads' roles and scores, and the button that repeats a sequence.
    Any other model: one line, and the button that shows the small GPT. -> the heads, measured."""
    probe = induction.head_probe(run.pipe, settings)
    if probe is None:
        st.caption(ui.t("induction.decoder_only"))
        induction.show_gpt_button()
        return None
    st.subheader(ui.t("induction.title"))
    induction.repeat_button(run.pipe, settings)
    repeated = induction.repeated_half(run.src_tokens)
    if repeated:
        st.info(ui.t("induction.repeat.shown", n=repeated), icon=":material/repeat:")
    induction.roles_section(probe, settings.lang)
    return probe


@st.fragment
def head_view(run: SentenceRun, lang: str, probe: induction.HeadProbe | None) -> None:
    """Its own fragment: another layer or kind redraws this view only."""
    found: list[str] = []
    st.subheader(ui.t("attention.hv.title"))
    text, formula = st.columns([3, 2], vertical_alignment="center")
    text.markdown(ui.t("attention.hv.explain"))
    view = choose_view(run, lang, "hv", st.columns([2.2, 1]), found)
    widgets.warn(found)
    bias = "" if view.attn.bias is None else r" + b_{ij}"  # ALiBi's bias is part of this attention's scores
    formula.latex(
        r"\alpha_{ij} = \mathrm{softmax}_j\!\left(\frac{q_i \cdot k_j}{\sqrt{d_k}}" + bias + r"\right)"
    )
    data = fv.head_view_data(
        view.attn, view.q_tokens, view.k_tokens, attn_kind=view.attn_kind, layer=view.layer, lang=lang
    )
    show_head_view(data, alt=ui.t("attention.hv.title"))
    st.caption(view.where)
    answer_beside(view, "attn_hv_answer")
    if not data["all_lines"]:
        st.caption(ui.t("attention.hv.sparse", n=len(view.q_tokens), k=data["keep"]))
    noise_caption(run)


@st.fragment
def neuron_view(run: SentenceRun, lang: str, probe: induction.HeadProbe | None) -> None:
    """Its own fragment: choosing a pair of tokens redraws this view only."""
    found: list[str] = []
    st.subheader(ui.t("attention.nv.title"))
    explained = st.container()  # filled below: what the score is depends on the attention chosen (ALiBi)
    view = choose_view(run, lang, "nv", st.columns([2.2, 1, 1]), found, probe)
    a, b = st.columns(2)
    with a:
        query = widgets.choose_position(ui.t("attention.widget.query"), "nv_query", view.q_tokens, found)
    with b:  # by default: where the first query looks most
        strongest = int(fa.query_weights(view.attn, 0)[view.head].argmax())
        key = widgets.choose_position(
            ui.t("attention.widget.key"), "nv_key", view.k_tokens, found, strongest
        )
    widgets.warn(found)
    nums = fv.neuron_numbers(view.attn, view.head, query, key, num_kv_heads=view.kv_heads)
    explain = "attention.nv.explain" if nums.bias is None else "attention.nv.explain_alibi"
    explained.markdown(ui.t(explain, d_k=view.d_k))
    explained.latex(fv.score_formula(nums))
    figure = fv.neuron_figure(nums, view.q_tokens[query], view.k_tokens[key], lang=lang)
    name = f"attention-neuron-{view.attn_kind}-layer{view.layer + 1}-head{view.head + 1}-q{query}-k{key}"
    ui.show_figure(figure, key="attn_neuron", name=name)
    softmax, seen = softmax_latex(view, nums, query)
    st.latex(fv.score_numbers(nums, then=softmax))
    if nums.bias is not None:
        alibi = "attention.nv.alibi_causal" if nums.causal else "attention.nv.alibi"
        slope, bias = fv.slope_text(nums.slope), f"{nums.bias + 0.0:.4f}"
        st.caption(ui.t(alibi, head=view.head + 1, m=slope, distance=nums.distance, bias=bias))
    if nums.shared is not None:  # grouped-query attention: this k is not the head's own
        first, last = nums.shared[0] + 1, nums.shared[-1] + 1
        st.caption(ui.t("attention.nv.shared", first=first, last=last, kv=nums.kv_head + 1))
    if view.rotated:
        st.caption(ui.t("attention.nv.rope"))
    if nums.allowed:
        st.caption(ui.t("attention.nv.softmax", n=seen))
    else:
        st.info(ui.t("attention.nv.masked"), icon=":material/visibility_off:")
    answer_beside(view, "attn_nv_answer")


def softmax_latex(view: View, nums, query: int) -> tuple[str, int]:
    """(α = e^s / Σ e^{s_l} written with this query's numbers, how many keys the query may see)."""
    scores, allowed, _ = fv.score_row(view.attn, view.head, query)
    if not nums.allowed:
        return r"\alpha = 0", int(allowed.sum())
    # e^s of every key this query may see; shifted by the largest score only if e^s would be huge (same ratio)
    shift = float(scores[allowed].max()) if allowed.any() else 0.0
    shift = shift if shift > 80 else 0.0
    top = math.exp(nums.score - shift)
    bottom = float(np.exp(scores[allowed].astype(np.float64) - shift).sum())
    shifted = "" if abs(shift) < 5e-5 else rf"-\,({shift:.4f})"
    latex = (
        rf"\alpha = \frac{{e^{{s{shifted}}}}}{{\sum_l e^{{s_l{shifted}}}}} = "
        rf"\frac{{{top:.4g}}}{{{bottom:.4g}}} = {nums.weight:.4f}"
    )
    return latex, int(allowed.sum())


def show_row(view: View, figs: dict, *names: str) -> None:
    """Figures side by side, or one under the other when their written values would not fit."""
    wide = max(toolbox.annotated_columns(figs[n]) for n in names)
    per_row = len(names) if wide <= FITS[len(names)] else 1
    for start in range(0, len(names), per_row):
        for col, name in zip(st.columns(per_row), names[start : start + per_row], strict=True):
            with col:
                # narrow columns: Streamlit's theme and its 12 px labels (only drawn when opened)
                ui.show_themed_figure(figs[name], key=f"attn_step_{name}", name=f"{view.stem}-{name}")


def step_by_step(view: View) -> None:
    config, d_k = view.run.config, view.d_k
    weights = fa.head_weights(view.run.model_of(view.attn_kind), view.attn_kind, view.layer, view.head)
    figs = fa.step_figures(
        view.steps, weights, view.q_tokens, view.k_tokens, lang=view.lang, rotated=view.rotated
    )
    st.caption(ui.t("attention.steps.explain", n=toolbox.ANNOTATE_MAX))
    if any(toolbox.is_pooled(fig) for fig in figs.values()):
        st.caption(ui.t("attention.steps.pooled", max=toolbox.POOL_MAX))

    st.markdown(ui.t("attention.steps.input"))
    show_row(view, figs, *(("x_q", "x_kv") if view.attn_kind == "cross" else ("x_q",)))

    st.markdown(ui.t("attention.steps.projections", d_model=config.d_model, d_k=d_k))
    st.latex(fa.projection_latex(weights, view.rotated))
    if weights.kv_head is not None:  # grouped-query attention: W_K, W_V, K, V belong to a group of heads
        group = {"kv": weights.kv_head + 1, "first": weights.shared[0] + 1, "last": weights.shared[-1] + 1}
        st.caption(ui.t("attention.steps.shared", head=view.head + 1, **group))
    if view.rotated:
        st.caption(ui.t("attention.steps.rope"))
    show_row(view, figs, "w_q", "w_k", "w_v")
    show_row(view, figs, "q", "k", "v")

    alibi = scores_step(view, figs)

    st.markdown(ui.t("attention.steps.softmax"))
    argument = r"Q K^\top / \sqrt{d_k} + B" if alibi else r"Q K^\top / \sqrt{d_k}"
    st.latex(rf"\mathrm{{weights}} = \mathrm{{softmax}}\big(\mathrm{{mask}}({argument})\big)")
    show_row(view, figs, "mask", "weights")
    noise_caption(view.run)

    st.markdown(ui.t("attention.steps.heads"))
    multi_head = r"\mathrm{head}_j = \mathrm{weights}\cdot V,\qquad \mathrm{MultiHead} = "
    st.latex(multi_head + fa.output_text(weights))
    show_row(view, figs, "head_out", "concat")
    st.caption(ui.t("attention.steps.frame", head=view.head + 1, d_k=d_k))
    show_row(view, figs, "w_o", "output")


def scores_step(view: View, figs: dict) -> bool:
    """Q Kᵀ / √d_k (with ALiBi: + B), written and drawn; whether ALiBi's bias is part of the scores."""
    steps, head = view.steps, view.head
    def scaled(plus: str = "") -> str:  # ALiBi's "+ B" belongs to both sides of the equation
        return rf"\frac{{Q K^\top}}{{\sqrt{{d_k}}}}{plus} = \frac{{Q K^\top}}{{\sqrt{{{view.d_k}}}}}{plus}"

    if steps.bias is None:
        st.markdown(ui.t("attention.steps.scores"))
        st.latex(rf"Q K^\top \quad\rightarrow\quad {scaled()}")
        show_row(view, figs, "qk", "scores")
        return False
    slope = fv.head_slope(view.run.config.num_heads, head)
    st.markdown(ui.t("attention.steps.scores_alibi", head=head + 1, m=fv.slope_text(slope)))
    causal = fv.is_causal_bias(steps.bias)
    st.latex(
        rf"Q K^\top \quad\rightarrow\quad {scaled(' + B')},\qquad B_{{ij}} = {fv.bias_latex(causal)},"
        rf"\quad m_{{{head + 1}}} = {fv.slope_latex(slope)}"
    )
    figs["bias"] = fv.bias_figure(steps, view.q_tokens, view.k_tokens, lang=view.lang)
    show_row(view, figs, "qk", "bias", "scores")
    return True


def all_heads(view: View) -> None:
    pipe, config = view.run.pipe, view.run.config
    st.subheader(ui.t("attention.all_heads.title", h=config.num_heads, layer=view.layer + 1))
    st.caption(ui.t("attention.all_heads.explain", kind=view.kind_name))
    titles = induction.head_titles(view.probe, view.layer, view.lang) if view.probe else None
    titles = off_titles(view, titles)
    heads = fa.heads_figure(
        view.attn, view.q_tokens, view.k_tokens, selected=view.head, titles=titles, lang=view.lang
    )
    ui.show_figure(
        heads, key="attn_heads", name=f"attention-{view.attn_kind}-layer{view.layer + 1}-all-heads"
    )
    options = [ablation.head_part(view.attn_kind, view.layer, j) for j in range(config.num_heads)]
    label = ui.t("interventions.switch.heads", layer=view.layer + 1)
    ablation.switches(pipe.settings, options, config, label, "attn_heads_off", view.lang,
                      short=lambda p: p.what)
    if pipe.weights == Weights.RANDOM:  # untrained: every pattern on this page is noise
        st.caption(ui.t("attention.noise"))
    elif pipe.weights == Weights.HF:  # pretrained or random: the folder does not say, so neither do we
        st.caption(ui.t("attention.loaded.compare", name=model_name(view.run)))
    elif pipe.task and view.attn_kind == "cross":
        learned_alignment(view)
    elif pipe.task and config.stack == "decoder":  # a language model: no cross-attention to point to
        st.caption(ui.t("attention.trained.one_stack"))
    elif pipe.task:
        st.caption(ui.t("attention.trained.other"))
    else:  # the pretrained encoder
        bert = " " + ui.t("attention.trained.bert") if pipe.weights == Weights.MINILM else ""
        st.caption(ui.t("attention.trained.compare") + bert)


def learned_alignment(view: View) -> None:
    """How much of this cross-attention head looks where the model's task says it should, token by token."""
    # What the cross-attention should show depends on what the model was trained to do (its task),
    # not on where its weights come from: a session model trained on "reverse" reads mirrored.
    task, weights, q_tokens, k_tokens = view.run.pipe.task, view.steps.weights, view.q_tokens, view.k_tokens
    expected = [aligned_source(task, i, len(k_tokens)) for i in range(len(q_tokens))]
    share = fa.aligned_share(weights, expected)
    if share is None:
        note = ui.t("attention.trained.cross.task", task=task)
    else:
        where = {"layer": view.layer + 1, "head": view.head + 1}
        note = ui.t(f"attention.trained.cross.{task}", **where, share=f"{share:.0%}")
    st.info(note, icon=":material/school:")
    top = fa.argmax_keys(weights)
    show_table(
        {
            ui.t("attention.table.input"): q_tokens,
            ui.t("attention.table.writes"): list(view.run.predicted[: len(q_tokens)]),
            ui.t("attention.table.looks_at"): [k_tokens[i] for i in top],
            ui.t("attention.table.weight"): [float(weights[i, k]) for i, k in enumerate(top)],
        },
        hide_index=True,
    )


def every_layer(view: View) -> None:
    config, tokens = view.run.config, {"q_tokens": view.q_tokens, "k_tokens": view.k_tokens}
    st.subheader(ui.t("attention.grid.title", n=config.num_layers, h=config.num_heads))
    st.caption(ui.t("attention.grid.explain", kind=view.kind_name, layer=view.layer + 1, head=view.head + 1))
    notes = induction.block_notes(view.probe, view.lang) if view.attn_kind == "decoder" else None
    notes = off_notes(view, notes)
    trace = view.run.trace_of(view.attn_kind)
    grid = fa.grid_figure(trace, view.attn_kind, **tokens, block_notes=notes, lang=view.lang)
    ui.show_figure(grid, key="attn_grid", name=f"attention-{view.attn_kind}-layers-heads")
    options = [ablation.head_part(view.attn_kind, i, j)
               for i in range(config.num_layers) for j in range(config.num_heads)]
    label = ui.t("interventions.switch.grid", kind=view.kind_name)
    ablation.switches(view.run.pipe.settings, options, config, label, "attn_grid_off", view.lang,
                      short=lambda p: f"{p.layer}.{p.what}")


def off_titles(view: View, titles: list[str] | None) -> list[str] | None:
    """The all-heads figure's titles with "· off" after each head switched off (None: nothing off)."""
    on_screen = view.run.pipe.settings
    off = [ablation.is_off(on_screen, ablation.head_part(view.attn_kind, view.layer, j))
           for j in range(view.run.config.num_heads)]
    if not any(off):
        return titles
    titles = titles or [ui.t("attention.head_n", n=j + 1) for j in range(len(off))]
    said = ui.t("interventions.head.off", title="{}")
    return [said.format(title) if o else title for title, o in zip(titles, off, strict=True)]


def off_notes(view: View, notes: list[list[str]] | None) -> list[list[str]] | None:
    """The grid's block notes with "off" on every head switched off (None: nothing off, no notes)."""
    c, on_screen = view.run.config, view.run.pipe.settings
    off = [[ablation.is_off(on_screen, ablation.head_part(view.attn_kind, i, j)) for j in range(c.num_heads)]
           for i in range(c.num_layers)]
    if not any(map(any, off)):
        return notes
    notes = notes or [[""] * c.num_heads for _ in range(c.num_layers)]
    word = ui.t("interventions.grid.off")
    return [[" · ".join(filter(None, (n, word if o else ""))) for n, o in zip(row, offs, strict=True)]
            for row, offs in zip(notes, off, strict=True)]


@st.fragment
def one_query(view: View) -> None:
    """Its own fragment: choosing a token or a bar mode redraws this chart only."""
    found: list[str] = []
    st.subheader(ui.t("attention.query.title"))
    a, b = st.columns([1, 2])
    with a:
        query = widgets.choose_position(ui.t("attention.widget.query"), "attn_query", view.q_tokens, found)
    with b:
        label, mode_name = ui.t("attention.widget.bars"), functools.partial(fa.bar_mode_label, lang=view.lang)
        mode = widgets.choose(
            st.radio,
            label,
            "attn_bar",
            list(fa.BAR_MODES),
            "head",
            found,
            fmt=mode_name,
            aliases=BAR_ALIASES,
            horizontal=True,
        )
    widgets.warn(found)
    bars = fa.query_bars(
        view.attn, query, view.q_tokens, view.k_tokens, mode=mode, head=view.head, lang=view.lang
    )
    ui.show_figure(bars, key="attn_query_bars", name=f"{view.stem}-query{query}")
    if view.attn_kind == "decoder":
        st.caption(ui.t("attention.query.causal"))
