"""Attention: the head view and the neuron view, one head step by step with the real numbers, every
head of a layer, every layer × head, and where one token looks."""

import math

import numpy as np
import streamlit as st

import figures.attention as fa
import figures.attention_views as fv
import ui
import ui.widgets
from core.data import aligned_source
from i18n import t
from ui.cache import get_encoder_trace, run_target
from ui.components.head_view import show_head_view
from ui.tables import show_table

settings = ui.page_setup("nav.attention.title")
lang = settings.lang
EXPLORE_VIEWS = ["head_view", "neuron_view"]  # the upper tabs (drawn below); ?attn_explore=<view>
EXPLORE_LABELS = [ui.t(f"attention.tab.{v}") for v in EXPLORE_VIEWS]
# Values older links carry: a tab's or an option's label, in either language (ui/widgets.py)
TAB_ALIASES = ui.widgets.aliases(("head_view", "neuron_view", "heads", "grid", "query"),
                                 lambda v, lang: t(f"attention.tab.{v}", lang))
KIND_ALIASES = ui.widgets.aliases(fa.KINDS, fa.kind_label)


def kind_name(kind: str) -> str:
    return fa.kind_label(kind, lang)


# What runs follows what is shown. Every view reads one kind of attention (chosen per view, in the URL);
# while all of them read the encoder's, random weights draw and run the encoder alone (~40 % of the
# numbers at d_model=512, 6 layers; core.pipeline.encoder_trace: the same numbers as the whole run). A
# view switched to a decoder kind later (in its fragment) gets the whole run then (``trace_of``).
known = ui.get_pipeline(settings, quiet=True)  # cached; get_run below says why when there is none
has_decoder = known is None or getattr(known.config, "decoder", True)
kinds = list(fa.KINDS) if has_decoder else ["encoder"]  # an encoder-only model: encoder self-attention only
explore_open = ui.widgets.open_tab(EXPLORE_LABELS, "attn_explore", EXPLORE_VIEWS, TAB_ALIASES)
shown_kinds = {
    ui.widgets.chosen(key, kinds, "encoder", fmt=kind_name, aliases=KIND_ALIASES)
    for key in ("attn_kind", "hv_kind" if explore_open == EXPLORE_LABELS[0] else "nv_kind")
}
encoder_alone = known is not None and known.kind == "random" and has_decoder and shown_kinds == {"encoder"}
run = ui.get_run(settings, source_only=encoder_alone)
if run is None:
    st.stop()
pipe = ui.get_pipeline(settings)
if pipe is None:
    st.stop()
config = pipe.config
if encoder_alone:
    from core.pipeline import decoder_tokens

    src_tokens = run.src_tokens
    tgt_tokens = decoder_tokens(pipe, settings.sentence, run_target(settings), settings.max_tokens)
else:
    src_tokens, tgt_tokens = run.src_tokens, run.tgt_tokens


def trace_of(kind: str):
    """The trace a view of ``kind`` reads: the encoder's alone while that is all the page runs, else
    the whole run (made now if a view turned to the decoder since)."""
    if not encoder_alone:
        return run.trace
    if kind == "encoder":
        return get_encoder_trace(settings, pipe)
    whole = ui.get_run(settings)
    if whole is None:
        st.stop()
    return whole.trace


noisy = pipe.kind == "random"  # untrained: every pattern below is noise
layers = list(range(1, config.num_layers + 1))
heads = list(range(1, config.num_heads + 1))
d_k = config.d_model // config.num_heads
notices: list[str] = []


def choose(widget, label: str, key: str, options: list, default, what: str = "", fmt=str, into=None, **kw):
    return ui.widgets.choose(
        widget, label, key, options, default, notices if into is None else into, what, fmt, **kw
    )


def choose_position(label_key: str, key: str, tokens: list[str], default: int = 0, into=None) -> int:
    """A token of ``tokens`` by its position (from 0, as on every page), kept in the URL as ``key``."""
    return choose(st.selectbox, ui.t(label_key), key, list(range(len(tokens))), default,
                  ui.t("attention.what.position"), fmt=lambda i: f"{i} · {tokens[i]}", into=into)


def warn(found: list[str], box=st) -> None:
    for notice in found:
        box.warning(notice, icon=":material/warning:")
    found.clear()


def noise_caption() -> None:
    if noisy:
        st.caption(ui.t("attention.noise"))


def answer_beside(kind: str, key: str) -> None:
    """The model's answer beside a view whose rows are the decoder's tokens (none for the encoder's)."""
    if kind != "encoder":
        whole = ui.get_run(settings) if encoder_alone else run
        if whole is not None:
            ui.show_answer(whole, key=key)


# The paper's equation, as this model computes it: ALiBi adds its bias B to every self-attention score
# (cross-attention has none); RoPE rotates q and k by their positions before Q Kᵀ.
SOFTMAX = r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left("
ATTENTION = SOFTMAX + {
    "alibi": r"\frac{Q K^\top}{\sqrt{d_k}} + B\right) V,\quad B_{ij} = -m_h\,|i-j|",
    "rope": r"\frac{(R\,Q)(R\,K)^\top}{\sqrt{d_k}}\right) V",
}.get(getattr(config, "positions", "sinusoidal"), r"\frac{Q K^\top}{\sqrt{d_k}}\right) V")

st.latex(ATTENTION)
if getattr(config, "positions", "") in ("alibi", "rope"):  # what B or R is, in the page's language
    st.caption(ui.t(f"attention.formula.{config.positions}"))
st.markdown(ui.t("attention.intro", h=config.num_heads, d_model=config.d_model, d_k=d_k))
if kinds == ["encoder"]:
    st.info(
        ui.t("attention.encoder_only", model=getattr(pipe, "name", "") or "all-MiniLM-L6-v2"),
        icon=":material/info:",
    )
longest = max(len(src_tokens), len(tgt_tokens))
if longest > fa.GRID_POOL_MAX:  # the layers × heads overview draws blocks from here on
    st.info(ui.t("attention.long", n=longest), icon=":material/zoom_in:")
notice_box = st.container()  # filled at the end, shown here: what a URL or a size change altered


def kind_and_layer(prefix: str, left, right, found: list[str]) -> tuple[str, int]:
    """The kind of attention (in ``left``) and the layer, 0-based (in ``right``): ``{prefix}_kind``,
    ``{prefix}_layer`` in the URL."""
    with left:
        kind = choose(st.radio, ui.t("attention.widget.kind"), f"{prefix}_kind", kinds, "encoder",
                      fmt=kind_name, into=found, aliases=KIND_ALIASES, horizontal=True)
    with right:
        layer = choose(st.selectbox, ui.t("attention.widget.layer", n=config.num_layers), f"{prefix}_layer",
                       layers, 1, ui.t("attention.what.layer"), into=found)
    return kind, layer - 1



# -- head view ----------------------------------------------------------------------------------------
@st.fragment
def head_view() -> None:
    """Its own fragment: another layer or kind redraws this view only."""
    found: list[str] = []
    st.subheader(ui.t("attention.hv.title"))
    text, formula = st.columns([3, 2], vertical_alignment="center")
    text.markdown(ui.t("attention.hv.explain"))
    a, b = st.columns([2.2, 1])
    kind, layer = kind_and_layer("hv", a, b, found)
    warn(found)
    attn = fa.attention_of(trace_of(kind), kind, layer)
    bias = "" if attn.bias is None else r" + b_{ij}"  # ALiBi's bias is part of this attention's scores
    formula.latex(r"\alpha_{ij} = \mathrm{softmax}_j\!\left(\frac{q_i \cdot k_j}{\sqrt{d_k}}" + bias
                  + r"\right)")
    q_tokens, k_tokens = fa.tokens_of(kind, src_tokens, tgt_tokens)
    data = fv.head_view_data(attn, q_tokens, k_tokens, kind=kind, layer=layer, lang=lang)
    show_head_view(data, alt=ui.t("attention.hv.title"))
    st.caption(ui.t(f"attention.where.{kind}"))
    answer_beside(kind, "attn_hv_answer")
    if not data["all_lines"]:
        st.caption(ui.t("attention.hv.sparse", n=len(q_tokens), k=data["keep"]))
    noise_caption()


# -- neuron view --------------------------------------------------------------------------------------
@st.fragment
def neuron_view() -> None:
    """Its own fragment: choosing a pair of tokens redraws this view only."""
    found: list[str] = []
    st.subheader(ui.t("attention.nv.title"))
    explained = st.container()  # filled below: what the score is depends on the attention chosen (ALiBi)
    a, b, c = st.columns([2.2, 1, 1])
    kind, layer = kind_and_layer("nv", a, b, found)
    with c:
        head = (
            choose(
                st.selectbox,
                ui.t("attention.widget.head", n=config.num_heads),
                "nv_head",
                heads,
                1,
                ui.t("attention.what.head"),
                into=found,
            )
            - 1
        )
    attn = fa.attention_of(trace_of(kind), kind, layer)
    q_tokens, k_tokens = fa.tokens_of(kind, src_tokens, tgt_tokens)
    a, b = st.columns(2)
    with a:
        query = choose_position("attention.widget.query", "nv_query", q_tokens, into=found)
    with b:
        # by default: where the first query looks most
        strongest = int(fa.query_weights(attn, 0)[head].argmax())
        key = choose_position("attention.widget.key", "nv_key", k_tokens, strongest, into=found)
    warn(found)
    nums = fv.neuron_numbers(attn, head, query, key)
    explain = "attention.nv.explain" if nums.bias is None else "attention.nv.explain_alibi"
    explained.markdown(ui.t(explain, d_k=d_k))
    explained.latex(fv.score_formula(nums))
    ui.show_figure(
        fv.neuron_figure(nums, q_tokens[query], k_tokens[key], lang=lang),
        key="attn_neuron",
        name=f"attention-neuron-{kind}-layer{layer + 1}-head{head + 1}-q{query}-k{key}",
    )
    scores, allowed, _ = fv.score_row(attn, head, query)
    # e^s of every key this query may see; shifted by the largest score only if e^s would be huge (same ratio)
    shift = float(scores[allowed].max()) if allowed.any() else 0.0
    shift = shift if shift > 80 else 0.0
    if nums.allowed:
        top, bottom = (
            math.exp(nums.score - shift),
            float(np.exp(scores[allowed].astype(np.float64) - shift).sum()),
        )
        shifted = "" if abs(shift) < 5e-5 else rf"-\,({shift:.4f})"
        softmax = (
            rf"\alpha = \frac{{e^{{s{shifted}}}}}{{\sum_l e^{{s_l{shifted}}}}} = "
            rf"\frac{{{top:.4g}}}{{{bottom:.4g}}} = {nums.weight:.4f}"
        )
    else:
        softmax = r"\alpha = 0"
    st.latex(fv.score_numbers(nums, then=softmax))
    if nums.bias is not None:
        st.caption(ui.t("attention.nv.alibi_causal" if nums.causal else "attention.nv.alibi", head=head + 1,
                        m=fv.slope_text(nums.slope), distance=nums.distance, bias=f"{nums.bias + 0.0:.4f}"))
    if nums.allowed:
        st.caption(ui.t("attention.nv.softmax", n=int(allowed.sum())))
    else:
        st.info(ui.t("attention.nv.masked"), icon=":material/visibility_off:")
    answer_beside(kind, "attn_nv_answer")


# The head view and the neuron view, one at a time in tabs (which one is in the URL, ?attn_explore=
# head_view|neuron_view; the head view by default). Both drawn, a new model (seed, d_model) cost Chromium's
# renderer ~0.4 s more on this page at d_model=512, 8 heads, 6 layers than with neither; each is about
# half of it (the head view's document is made anew for new weights, the neuron view redraws its chart
# and formulas). Paired runs of both pages on one machine, benchmarks/app.py's seed change.
EXPLORE = dict(zip(EXPLORE_VIEWS, (head_view, neuron_view), strict=True))
explore_tabs = ui.widgets.tabs(EXPLORE_LABELS, "attn_explore", notices, EXPLORE_VIEWS, TAB_ALIASES)
for tab, draw in zip(explore_tabs, EXPLORE.values(), strict=True):
    if tab.open:
        with tab:
            draw()

# -- one head, step by step ---------------------------------------------------------------------------
st.subheader(ui.t("attention.steps.choose"))
left, mid, right = st.columns([2.2, 1, 1])
with left:
    kind = choose(st.radio, ui.t("attention.widget.kind"), "attn_kind", kinds, "encoder", fmt=kind_name,
                  aliases=KIND_ALIASES, horizontal=True)
with mid:
    layer = (
        choose(
            st.selectbox,
            ui.t("attention.widget.layer", n=config.num_layers),
            "attn_layer",
            layers,
            1,
            ui.t("attention.what.layer"),
        )
        - 1
    )
with right:
    head = (
        choose(
            st.selectbox,
            ui.t("attention.widget.head", n=config.num_heads),
            "attn_head",
            heads,
            1,
            ui.t("attention.what.head"),
        )
        - 1
    )

attn = fa.attention_of(trace_of(kind), kind, layer)
q_tokens, k_tokens = fa.tokens_of(kind, src_tokens, tgt_tokens)
st.caption(
    ui.t("attention.kind_layer", kind=kind_name(kind), layer=layer + 1)
    + " "
    + ui.t(f"attention.where.{kind}")
)
answer_beside(kind, "attn_answer")
steps = fa.head_steps(attn, head)
file_stem = f"attention-{kind}-layer{layer + 1}-head{head + 1}"
FITS = {1: 12, 2: 7, 3: 4}  # columns of written values that stay readable in 1, 2 or 3 page columns


def show_row(figs: dict, *names: str) -> None:
    """Figures side by side, or one under the other when their written values would not fit."""
    wide = max(fa.annotated_columns(figs[n]) for n in names)
    per_row = len(names) if wide <= FITS[len(names)] else 1
    for start in range(0, len(names), per_row):
        for col, name in zip(st.columns(per_row), names[start : start + per_row], strict=True):
            with col:
                # narrow columns: Streamlit's theme and its 12 px labels (only drawn when opened)
                ui.show_themed_figure(figs[name], key=f"attn_step_{name}", name=f"{file_stem}-{name}")


def step_by_step() -> None:
    weights = fa.head_weights(pipe.encoder_model if kind == "encoder" else pipe.model, kind, layer, head)
    figs = fa.step_figures(steps, weights, q_tokens, k_tokens, lang=lang)
    st.caption(ui.t("attention.steps.explain", n=fa.ANNOTATE_MAX))
    if any(fa.is_pooled(fig) for fig in figs.values()):
        st.caption(ui.t("attention.steps.pooled", max=fa.POOL_MAX))

    st.markdown(ui.t("attention.steps.input"))
    show_row(figs, *(("x_q", "x_kv") if kind == "cross" else ("x_q",)))

    st.markdown(ui.t("attention.steps.projections", d_model=config.d_model, d_k=d_k))
    st.latex(r"Q = X W_Q + b_Q,\quad K = X W_K + b_K,\quad V = X W_V + b_V")
    show_row(figs, "w_q", "w_k", "w_v")
    show_row(figs, "q", "k", "v")

    alibi = steps.bias is not None  # ALiBi self-attention: the scores are Q Kᵀ/√d_k + B
    slope = fv.head_slope(config.num_heads, head) if alibi else None
    if alibi:
        st.markdown(ui.t("attention.steps.scores_alibi", head=head + 1, m=fv.slope_text(slope)))
    else:
        st.markdown(ui.t("attention.steps.scores"))
    scaled = rf"\frac{{Q K^\top}}{{\sqrt{{d_k}}}} = \frac{{Q K^\top}}{{\sqrt{{{d_k}}}}}"
    if alibi:
        causal = fv.is_causal_bias(steps.bias)
        st.latex(rf"Q K^\top \quad\rightarrow\quad {scaled} + B,\qquad B_{{ij}} = {fv.bias_latex(causal)},"
                 rf"\quad m_{{{head + 1}}} = {fv.slope_latex(slope)}")
        figs["bias"] = fv.bias_figure(steps, q_tokens, k_tokens, lang=lang)
        show_row(figs, "qk", "bias", "scores")
    else:
        st.latex(rf"Q K^\top \quad\rightarrow\quad {scaled}")
        show_row(figs, "qk", "scores")

    st.markdown(ui.t("attention.steps.softmax"))
    argument = r"Q K^\top / \sqrt{d_k} + B" if alibi else r"Q K^\top / \sqrt{d_k}"
    st.latex(rf"\mathrm{{weights}} = \mathrm{{softmax}}\big(\mathrm{{mask}}({argument})\big)")
    show_row(figs, "mask", "weights")
    noise_caption()

    st.markdown(ui.t("attention.steps.heads"))
    st.latex(
        r"\mathrm{head}_j = \mathrm{weights}\cdot V,\qquad "
        r"\mathrm{MultiHead} = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_O + b_O"
    )
    show_row(figs, "head_out", "concat")
    st.caption(ui.t("attention.steps.frame", head=head + 1, d_k=d_k))
    show_row(figs, "w_o", "output")


st.subheader(ui.t("attention.steps.title", head=head + 1))
# The step-by-step figures (15) are computed and drawn only while this section is open (its state is in
# the URL, ?attn_steps=true): Chromium redraws the charts of a page one after another, and with them
# always drawn a new model took ~2 s to appear on this page instead of ~0.6 s (benchmarks/app.py).
steps_box = st.expander(
    ui.t("attention.steps.open" if steps.bias is None else "attention.steps.open_alibi"),
    key="attn_steps", bind="query-params", icon=":material/calculate:"
)
if steps_box.open:
    with steps_box:
        step_by_step()

# -- every head of this layer ---------------------------------------------------------------------------
def all_heads() -> None:
    st.subheader(ui.t("attention.all_heads.title", h=config.num_heads, layer=layer + 1))
    st.caption(ui.t("attention.all_heads.explain", kind=kind_name(kind)))
    ui.show_figure(
        fa.heads_figure(attn, q_tokens, k_tokens, selected=head, lang=lang),
        key="attn_heads",
        name=f"attention-{kind}-layer{layer + 1}-all-heads",
    )
    if noisy:
        noise_caption()
    elif pipe.kind == "trained" and kind == "cross":
        # What the cross-attention should show depends on what the model was trained to do (its task),
        # not on where its weights come from: a session model trained on "reverse" reads mirrored.
        expected = [aligned_source(pipe.task, t, len(k_tokens)) for t in range(len(q_tokens))]
        share = fa.aligned_share(steps.weights, expected)
        if share is None:
            note = ui.t("attention.trained.cross.task", task=pipe.task or "?")
        else:
            note = ui.t(f"attention.trained.cross.{pipe.task}", layer=layer + 1, head=head + 1,
                        share=f"{share:.0%}")
        st.info(note, icon=":material/school:")
        top = fa.argmax_keys(steps.weights)
        show_table(
            {
                ui.t("attention.table.input"): q_tokens,
                ui.t("attention.table.writes"): list(run.predicted[: len(q_tokens)]),
                ui.t("attention.table.looks_at"): [k_tokens[i] for i in top],
                ui.t("attention.table.weight"): [float(steps.weights[t, i]) for t, i in enumerate(top)],
            },
            hide_index=True,
        )
    elif pipe.kind == "trained":
        st.caption(ui.t("attention.trained.other"))
    else:  # trained in this session, or the pretrained encoder
        st.caption(
            ui.t("attention.trained.compare")
            + (" " + ui.t("attention.trained.bert") if pipe.kind == "pretrained" else "")
        )


# -- every layer, every head ----------------------------------------------------------------------------
def every_layer() -> None:
    st.subheader(ui.t("attention.grid.title", n=config.num_layers, h=config.num_heads))
    st.caption(ui.t("attention.grid.explain", kind=kind_name(kind), layer=layer + 1, head=head + 1))
    ui.show_figure(
        fa.grid_figure(trace_of(kind), kind, q_tokens=q_tokens, k_tokens=k_tokens, lang=lang),
        key="attn_grid",
        name=f"attention-{kind}-layers-heads",
    )


# -- one query ------------------------------------------------------------------------------------------
@st.fragment
def one_query() -> None:
    """Its own fragment: choosing a token or a bar mode redraws this chart only."""
    st.subheader(ui.t("attention.query.title"))
    a, b = st.columns([1, 2])
    with a:
        query = choose_position("attention.widget.query", "attn_query", q_tokens)
    with b:
        mode = choose(
            st.radio,
            ui.t("attention.widget.bars"),
            "attn_bar",
            list(fa.BAR_MODES),
            "head",
            fmt=lambda m: fa.bar_mode_label(m, lang),
            aliases=ui.widgets.aliases(fa.BAR_MODES, fa.bar_mode_label),
            horizontal=True,
        )
    warn(notices)
    ui.show_figure(
        fa.query_bars(attn, query, q_tokens, k_tokens, mode=mode, head=head, lang=lang),
        key="attn_query_bars",
        name=f"{file_stem}-query{query}",
    )
    if kind == "decoder":
        st.caption(ui.t("attention.query.causal"))


# Only the open tab is computed and drawn; which one is in the URL (?attn_view=heads|grid|query). With the
# three views always drawn, a new model (seed, d_model) took ~0.9-1.3 s to appear at d_model=512,
# 8 heads, 6 layers, one view ~0.7 s (benchmarks/app.py): Chromium draws a page's charts one by one.
VIEWS = {"heads": all_heads, "grid": every_layer, "query": one_query}
tabs = ui.widgets.tabs([ui.t(f"attention.tab.{v}") for v in VIEWS], "attn_view", notices, list(VIEWS),
                       TAB_ALIASES)
warn(notices, notice_box)  # the query view's fragment shows its own
for tab, draw in zip(tabs, VIEWS.values(), strict=True):
    if tab.open:
        with tab:
            draw()
