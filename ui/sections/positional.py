"""The Positional encoding page's sections: the paper's sinusoids (curves, table, offsets as rotations,
the sum), then four schemes side by side (sinusoidal, learned, RoPE, ALiBi): how each reaches the
scores, whether a score depends only on the distance, and what happens past the training length.
Every section reads ``Model``: the model on screen, or the sidebar's sizes when none loads."""

import math
from dataclasses import dataclass

import numpy as np
import streamlit as st

import ui
from core.names import Weights
from figures import positional as fp
from figures.embeddings import embedding_arrays
from i18n import t
from ui.page import widgets

NOTICES = "_pe_notices"  # messages about URL values that were replaced; cleared by the next change
SCHEMES = ("sinusoidal", "learned", "rope", "alibi")
EXAMPLE_LEN = 64  # the training length drawn when the weights were not trained on sentences
RANDOM_TABLE_ROWS = 64  # the freshly initialised learned table shown without MiniLM
ALIBI_PANEL_LEN = 12  # query/key positions in the ALiBi bias panels


@dataclass(frozen=True)
class Model:
    """What the sections read of the model on screen (without one: the sidebar's sizes)."""

    d: int  # d_model
    heads: int
    scheme: str  # how positions reach attention (ModelConfig.positions)
    learned_table: np.ndarray | None  # (max_len, d): the model's learned position rows, if it has them
    train_len: int  # positions seen in training; an example length when ``example``
    example: bool
    lang: str
    folder: str = ""  # a model folder's name (hf:<name>): whether it was trained, nothing says
    rope_theta: float = 10000.0  # RoPE's base (config.rope_theta)
    rope_pairing: str = "interleaved"  # | "half": dimension i turns with i + d_k/2 (config.rope_pairing)
    one_stack: bool = False  # a decoder only: no cross-attention, its first layer reads the embeddings
    lm: bool = False  # a language model trained here (task "lm"): train_len is its window of tokens
    trained_len: int | None = None  # positions seen in training, when its task says (None: unknown)

    @property
    def d_k(self) -> int:
        return self.d // self.heads

    @property
    def no_pair(self) -> bool:
        """RoPE turns pairs of dimensions (core.model.positional.apply_rope): a head of d_k = 1 has none."""
        return self.d_k < 2

    @property
    def blind(self) -> bool:
        """This model has no position information in its encoder at all."""
        return self.scheme == "rope" and self.no_pair

    @property
    def n_beyond(self) -> int:
        return max(2 * self.train_len, 32)



def model_of(pipe, settings: ui.Settings) -> Model:
    """The model on screen as the sections read it; without a pipeline (``pipe`` None), the sidebar's
    sizes and the paper's sinusoids."""
    config = pipe.config if pipe is not None else None
    d = config.d_model if config is not None else settings.d_model  # trained/pretrained: the checkpoint's
    heads = config.num_heads if config is not None else settings.num_heads
    scheme = config.positions if config is not None else "sinusoidal"
    trained_len = fp.training_length(pipe.task, pipe.metrics) if pipe is not None else None
    learned_table = None
    if scheme == "learned" and pipe is not None:
        learned_table = pipe.src_embedding.position.weight.detach().double().numpy()  # (max_len, d)
    folder = pipe.name if pipe is not None and pipe.weights == Weights.HF else ""
    if trained_len:
        train_len, example = trained_len, False
    elif learned_table is not None:
        train_len, example = learned_table.shape[0], False
    elif folder:  # the positions its configuration allows (max_position_embeddings), not an example
        train_len, example = config.max_len, False
    else:
        train_len, example = EXAMPLE_LEN, True
    lm = pipe is not None and pipe.task == "lm" and bool(trained_len)
    if config is None:
        return Model(d, heads, scheme, learned_table, train_len, example, settings.lang, lm=lm,
                     trained_len=trained_len)
    return Model(d, heads, scheme, learned_table, train_len, example, settings.lang, folder=folder,
                 rope_theta=config.rope_theta, rope_pairing=config.rope_pairing,
                 one_stack=config.stack == "decoder", lm=lm, trained_len=trained_len)


def url_notices(d: int, lang: str) -> list[str]:
    """Page widgets bound to the URL: Streamlit drops an invalid ?pe_dims / ?pe_max_pos silently, so the
    raw values are checked here first (on the first run of the page) and a replaced value is announced.
    -> the notices to show (kept until the next change of a widget)."""
    state = st.session_state
    notices = list(state.get(NOTICES, []))
    if "pe_dims" not in state:
        dims, note = widgets.check_dims(st.query_params.get_all("pe_dims"), d, lang)
        state["pe_dims"] = dims
        notices += [note] if note else []
    else:
        current = list(state["pe_dims"])
        kept = [j for j in current if isinstance(j, int) and 0 <= j < d]
        if kept != current:
            dropped = [j for j in current if j not in kept]
            notices.append(ui.t("positional.notice.dims_removed", d=d, dropped=dropped))
            state["pe_dims"] = kept or widgets.check_dims([], d, lang)[0]
    if "pe_max_pos" not in state:
        max_pos, note = widgets.check_max_pos(st.query_params.get("pe_max_pos"), lang)
        state["pe_max_pos"] = max_pos
        notices += [note] if note else []
    state[NOTICES] = notices
    return notices

rotation_error = st.cache_data(max_entries=32)(fp.rotation_error)  # a float per d_model


def _clear_notices() -> None:
    st.session_state[NOTICES] = []


@st.fragment
def curves_section(d: int, trained_len: int | None, sentence_len: int | None, lang: str) -> None:
    """The widgets and the curves: a fragment, so moving the slider redraws this chart only."""
    left, right = st.columns([2, 1])
    with left:
        dims = st.multiselect(
            ui.t("positional.curves.dims", last=d - 1, limit=fp.MAX_DIMS_SHOWN),
            list(range(d)),
            key="pe_dims",
            max_selections=fp.MAX_DIMS_SHOWN,
            bind="query-params",
            on_change=_clear_notices,
        )
    with right:
        lo, hi = fp.MAX_POS_RANGE
        max_pos = st.slider(
            ui.t("positional.curves.max_pos"),
            lo,
            hi,
            key="pe_max_pos",
            bind="query-params",
            on_change=_clear_notices,
            help=ui.t("positional.curves.max_pos.help", default=fp.DEFAULT_MAX_POS),
        )
    if dims:
        fig = ui.memo_figure(fp.pe_curves, d, dims, max_pos, trained_len=trained_len,
                             sentence_len=sentence_len, lang=lang)
        ui.show_figure(fig, key="pe_curves_chart", name="positional-curves")
    else:
        st.info(ui.t("positional.curves.none"))


def encoder_input_section(run, m: Model, scales: bool, trained: bool) -> None:
    """The token rows, the position rows and what the encoder reads, for this sentence (``scales``: the
    model scales its token rows by √d_model; ``trained``: its weights learned a task)."""
    d, scheme, lang = m.d, m.scheme, m.lang
    if run is None:
        st.info(ui.t("positional.sum.no_sentence"))
        return
    if m.blind:
        st.info(ui.t("positional.sum.no_positions"))
        return
    if scheme in ("rope", "alibi"):
        alone = "positional.sum.in_attention" if scales else "positional.sum.in_attention.unscaled"
        st.info(ui.t(alone, scheme=ui.t(f"positional.tab.{scheme}")))
        return
    normed = run.config.embed_norm  # BERT: LayerNorm(E + P + T); GPT-2: E + P
    tokens = list(run.src_tokens)
    if scales:
        arrays = embedding_arrays(run.source)
        first, titles = arrays.scaled, None
        position_rows, embedded = arrays.pe, arrays.embedded
        if scheme == "learned":  # the model's own learned rows, not the sinusoid table above
            titles = [f"E[id]·√{d}", ui.t("positional.sum.title.learned"), ui.t("positional.fig.sum.input")]
    else:  # BERT: the lookup itself, the learned rows and LayerNorm(E + P + T)
        tr = run.source
        first = tr.src_token_embedding[0].double().numpy()
        position_rows = tr.positional[: len(tokens)].double().numpy()
        embedded = tr.src_embedded[0].double().numpy()
        titles = [ui.t("positional.sum.title.lookup"), ui.t("positional.sum.title.learned"),
                  ui.t("positional.sum.title.normed" if normed else "positional.sum.title.input")]
    fig = fp.sum_heatmaps(first, position_rows, embedded, tokens, titles=titles, lang=lang)
    ui.show_figure(fig, key="pe_sum_chart", name="positional-sum")
    step = math.ceil(len(tokens) / fp.MAX_TICKS)
    if step > 1:
        st.caption(ui.t("positional.many_tokens", n=len(tokens), step=step))
    if scales and scheme == "learned":
        st.caption(ui.t("positional.sum.caption.learned_scaled"))
    elif scales:
        extra = "" if trained else ui.t("positional.sum.caption.random")
        st.caption(ui.t("positional.sum.caption") + extra)
    else:
        st.caption(ui.t("positional.sum.caption.learned" if normed else "positional.sum.caption.unscaled"))


def tab_label(s: str, scheme: str) -> str:
    name = ui.t(f"positional.tab.{s}")
    return ui.t("positional.tab.current", name=name) if s == scheme else name


# ?pe_tab=<scheme>; links made before carry the tab's label, in either language, with or without the
# "✓ this model" of the model they were made with
TAB_ALIASES = widgets.aliases(
    SCHEMES, lambda s, lang: t(f"positional.tab.{s}", lang),
    lambda s, lang: t("positional.tab.current", lang, name=t(f"positional.tab.{s}", lang)),
)


def spread_metric(curves: dict) -> None:
    st.metric(ui.t("positional.metric.spread"), f"{fp.offset_spread(curves):.2g}",
              help=ui.t("positional.metric.spread.help"))


def sinusoidal_tab(m: Model) -> None:
    d, train_len, n_beyond, example, lang = m.d, m.train_len, m.n_beyond, m.example, m.lang
    st.subheader(ui.t("positional.part.reach"))
    st.latex(r"q_i\cdot k_j = \big((x_i + PE_i)W_Q\big)\cdot\big((x_j + PE_j)W_K\big)")
    st.markdown(ui.t("positional.sin.reach"))
    st.subheader(ui.t("positional.part.relative"))
    st.latex(r"PE(p)\cdot PE(p+k) = \sum_i \cos(k\,\omega_i)")
    starts, max_offset = (0, 10, 25, 50), 60
    dots = fp.offset_dots(fp.pe_table(max(starts) + max_offset + 1, d), starts, max_offset)
    ui.show_figure(ui.memo_figure(fp.offset_curves, dots, y_title="PE(p)·PE(p+k)", lang=lang),
                   key="pe_offset_chart", name="positional-sinusoidal-offsets")
    spread_metric(dots)
    st.caption(ui.t("positional.sin.relative"))
    st.subheader(ui.t("positional.part.beyond"))
    ui.show_figure(ui.memo_figure(fp.beyond_sinusoidal, d, train_len, n_beyond, example=example, lang=lang),
                   key="pe_sin_beyond_chart", name="positional-sinusoidal-beyond")
    st.caption(ui.t("positional.sin.beyond"))


def learned_tab(m: Model) -> None:
    d, learned_table, lang = m.d, m.learned_table, m.lang
    table = learned_table if learned_table is not None else fp.random_learned_table(RANDOM_TABLE_ROWS, d)
    table_rows = table.shape[0]
    st.subheader(ui.t("positional.part.reach"))
    st.latex(r"x_{pos} = E[\text{id}_{pos}] + P[pos],\qquad "
             r"P \in \mathbb{R}^{\text{max\_len}\times d_\text{model}}")
    st.markdown(ui.t("positional.learned.reach"))
    ui.show_figure(ui.memo_figure(fp.table_heatmap, table, lang=lang), key="pe_learned_table_chart",
                   name="positional-learned-table")
    if learned_table is not None:
        step = math.ceil(table_rows / fp.MAX_TABLE_ROWS)
        own = ("positional.learned.reach.folder" if m.folder else "positional.learned.reach.lm" if m.lm
               else "positional.learned.reach.minilm")
        st.caption(ui.t(own, rows=table_rows, d=table.shape[1], step=step, model=m.folder,
                        n=m.train_len, last=m.train_len - 1))
    else:
        st.caption(ui.t("positional.learned.reach.random", rows=table_rows))
    st.subheader(ui.t("positional.part.relative"))
    st.latex(r"P[p]\cdot P[p+k] = \;?")
    starts, max_offset = fp.fit_starts(table_rows)
    learned_dots = fp.offset_dots(table, starts, max_offset)
    ui.show_figure(ui.memo_figure(fp.offset_curves, learned_dots, y_title="P[p]·P[p+k]", lang=lang),
                   key="pe_learned_offset_chart", name="positional-learned-offsets")
    spread_metric(learned_dots)
    st.caption(ui.t("positional.learned.relative")
               + (ui.t("positional.learned.relative.minilm")
                  if learned_table is not None and not (m.folder or m.lm) else ""))
    st.subheader(ui.t("positional.part.beyond"))
    seen = m.train_len if m.lm else None  # a language model's windows may not reach its last rows
    ui.show_figure(ui.memo_figure(fp.beyond_learned, table, 2 * table_rows, trained_len=seen, lang=lang),
                   key="pe_learned_beyond_chart", name="positional-learned-beyond")
    st.caption(ui.t("positional.learned.beyond"))


def theta_text(theta: float) -> str:
    """RoPE's base as written in a configuration: 10000, 1000000, 500000.5."""
    return str(int(theta)) if float(theta).is_integer() else f"{theta:g}"


def rope_latex(m: Model) -> str:
    """RoPE's rotation as this model applies it: its base θ (config.rope_theta) and which dimensions it
    turns together, (2i, 2i+1) as in the RoPE paper, or (i, i + d_k/2) as HF's Llama and Qwen2 do
    ("half"). A model whose positions are not RoPE gets the paper's form."""
    own = m.scheme == "rope"
    base = theta_text(m.rope_theta) if own else "10000"
    half = own and m.rope_pairing == "half"
    first, second = (r"x_{i}", r"x_{i+d_k/2}") if half else (r"x_{2i}", r"x_{2i+1}")
    return (rf"R_p\begin{{pmatrix}} {first} \\ {second}\end{{pmatrix}} = "
            r"\begin{pmatrix} \cos p\theta_i & -\sin p\theta_i \\ \sin p\theta_i & \cos p\theta_i"
            r"\end{pmatrix}"
            rf"\begin{{pmatrix}} {first} \\ {second}\end{{pmatrix}},"
            rf"\quad \theta_i = {base}^{{-2i/d_k}},\quad "
            r"\text{score}_{mn} = \frac{(R_m q_m)\cdot(R_n k_n)}{\sqrt{d_k}}")


def rope_tab(m: Model) -> None:
    d, heads, d_k, no_pair, blind, lang = m.d, m.heads, m.d_k, m.no_pair, m.blind, m.lang
    train_len, n_beyond, example = m.train_len, m.n_beyond, m.example
    if no_pair:  # the rotation panels and the angles past the training length need a pair: none here
        nothing = (ui.t("positional.rope.no_pair.model", d_model=d, h=heads) if blind
                   else ui.t("positional.rope.no_pair.other"))
        st.warning(nothing, icon=":material/warning:")
    st.subheader(ui.t("positional.part.reach"))
    st.latex(rope_latex(m))
    half = m.scheme == "rope" and m.rope_pairing == "half"
    st.markdown(ui.t("positional.rope.reach.half" if half else "positional.rope.reach"))
    if m.scheme == "rope" and m.folder:  # the charts below turn pairs (2i, 2i+1) with base 10000
        pairs = ui.t("positional.rope.pairs.half" if half else "positional.rope.pairs.interleaved")
        theta = theta_text(m.rope_theta)
        st.caption(ui.t("positional.rope.folder", model=m.folder, theta=theta, pairs=pairs))
    if not no_pair:
        st.markdown(ui.t("positional.rope.reach.panels"))
        ui.show_figure(ui.memo_figure(fp.rope_rotation_figure, d_k, fp.rope_pairs(d_k), 8, lang=lang),
                       key="pe_rope_rotation_chart", name="positional-rope-rotation")
        # "the encoder's output carries positions": not at d_k = 1, and not for a model with no encoder
        st.caption(ui.t("positional.rope.cross.one_stack" if m.one_stack else "positional.rope.cross"))
    st.subheader(ui.t("positional.part.relative"))
    st.latex(r"(R_m q)\cdot(R_n k) = q\cdot R_{n-m}\,k")
    rope_curves = fp.rope_offset_scores(d_k)
    rope_axis = ui.t("positional.fig.rope.score_axis")
    ui.show_figure(ui.memo_figure(fp.offset_curves, rope_curves, y_title=rope_axis, lang=lang),
                   key="pe_rope_offset_chart", name="positional-rope-offsets")
    spread_metric(rope_curves)
    st.caption(ui.t("positional.rope.no_pair.relative" if no_pair else "positional.rope.relative"))
    st.subheader(ui.t("positional.part.beyond"))
    if no_pair:
        st.caption(ui.t("positional.rope.no_pair.beyond"))
        return
    ui.show_figure(ui.memo_figure(fp.beyond_rope, d_k, train_len, n_beyond, example=example, lang=lang),
                   key="pe_rope_beyond_chart", name="positional-rope-beyond")
    st.caption(ui.t("positional.rope.beyond"))


def alibi_tab(m: Model) -> None:
    heads, train_len, n_beyond, example, lang = m.heads, m.train_len, m.n_beyond, m.example, m.lang
    st.subheader(ui.t("positional.part.reach"))
    st.latex(r"\text{score}_{ij} = \frac{q_i\cdot k_j}{\sqrt{d_k}} - m_h\,|i-j|")
    st.markdown(ui.t("positional.alibi.reach"))
    rule = fp.alibi_rule(heads)  # the slopes of this head count, as core makes them
    st.latex(fp.alibi_rule_latex(rule))
    st.markdown(fp.alibi_rule_text(rule, lang))
    causal = st.toggle(ui.t("positional.alibi.causal"), key="pe_alibi_causal",
                       help=ui.t("positional.alibi.causal.help"))
    bias_fig = ui.memo_figure(fp.alibi_heatmaps, heads, ALIBI_PANEL_LEN, fp.alibi_heads(heads), causal=causal,
                              lang=lang)
    ui.show_figure(bias_fig, key="pe_alibi_bias_chart", name="positional-alibi-bias")
    st.caption(ui.t("positional.alibi.cross"))
    st.subheader(ui.t("positional.part.relative"))
    st.latex(r"\text{bias}(p, p+k) = -m_h\,|k|")
    alibi_curves = fp.alibi_offset_bias(heads, 0)
    alibi_axis = ui.t("positional.fig.alibi.offset_axis")
    ui.show_figure(ui.memo_figure(fp.offset_curves, alibi_curves, y_title=alibi_axis, lang=lang),
                   key="pe_alibi_offset_chart", name="positional-alibi-offsets")
    spread_metric(alibi_curves)
    st.caption(ui.t("positional.alibi.relative"))
    st.subheader(ui.t("positional.part.beyond"))
    ui.show_figure(ui.memo_figure(fp.beyond_alibi, heads, train_len, n_beyond, example=example, lang=lang),
                   key="pe_alibi_beyond_chart", name="positional-alibi-beyond")
    st.caption(ui.t("positional.alibi.beyond"))
