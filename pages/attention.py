"""Attention: one head step by step with the real numbers, every head of a layer, every layer × head."""

import streamlit as st

import figures.attention as fa
import ui
import ui.widgets

settings = ui.page_setup("nav.attention.title")
run = ui.get_run(settings)
if run is None:
    st.stop()
pipe = ui.get_pipeline(settings)
config = pipe.config
trained = pipe.kind == "trained"
notices: list[str] = []


def choose(widget, label: str, key: str, options: list, default, what: str = "", fmt=str, **kw):
    return ui.widgets.choose(widget, label, key, options, default, notices, what, fmt, **kw)


st.latex(r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right) V")
st.caption(
    "Every token asks a question (its query q), every token offers a label (its key k) and a content "
    "(its value v). A query's weights say how much of each value it takes: softmax turns the scores "
    "q·k/√d_k into positive weights that sum to 1. The model does this h times in parallel (h heads), "
    f"each in its own d_k = {config.d_model}/{config.num_heads} = {config.d_model // config.num_heads} "
    "dimensional space."
)

notice_box = st.container()  # filled at the end, shown here: what a URL or a size change altered
left, mid, right = st.columns([2.2, 1, 1])
with left:
    kind = choose(
        st.radio, "Which attention", "attn_kind", list(fa.KINDS), "encoder", fmt=fa.KINDS.get, horizontal=True
    )
with mid:
    layer = (
        choose(
            st.selectbox,
            f"Layer (1…{config.num_layers})",
            "attn_layer",
            list(range(1, config.num_layers + 1)),
            1,
            "layer",
        )
        - 1
    )
with right:
    head = (
        choose(
            st.selectbox,
            f"Head (1…{config.num_heads})",
            "attn_head",
            list(range(1, config.num_heads + 1)),
            1,
            "head",
        )
        - 1
    )

attn = fa.attention_of(run.trace, kind, layer)
q_tokens, k_tokens = fa.tokens_of(kind, run.src_tokens, run.tgt_tokens)
where = {
    "encoder": "Queries, keys and values all come from the source sentence.",
    "decoder": (
        "Queries, keys and values all come from the decoder's input; the causal mask hides the "
        "future: position t sees positions 0…t only."
    ),
    "cross": (
        "Queries come from the decoder (target tokens, rows), keys and values from the encoder's "
        "output, the memory (source tokens, columns)."
    ),
}[kind]
st.caption(f"{fa.KINDS[kind]}, layer {layer + 1}: {where}")
noise = (
    "Random weights: these patterns are noise — the model has learned nothing yet. "
    "Switch to the trained checkpoint in the sidebar to see attention that means something."
)

# -- one head, step by step ---------------------------------------------------------------------------
steps = fa.head_steps(attn, head)
figs = fa.step_figures(steps, fa.head_weights(pipe.model, kind, layer, head), q_tokens, k_tokens)
dk = steps.d_k
st.subheader(f"Head {head + 1}, step by step (real numbers)")
st.caption(
    "Every matrix below is the model's own tensor for this sentence. Hover a cell for its exact value; "
    "values are written in the cells of small matrices (up to 12 × 12)."
)


def show(fig) -> None:
    st.plotly_chart(fig, width="stretch", config={"displayModeBar": False})


FITS = {1: 12, 2: 7, 3: 4}  # columns of written values that stay readable in 1, 2 or 3 page columns


def show_row(*names: str) -> None:
    """Figures side by side, or one under the other when their written values would not fit."""
    wide = max(fa.annotated_columns(figs[n]) for n in names)
    per_row = len(names) if wide <= FITS[len(names)] else 1
    for start in range(0, len(names), per_row):
        for col, name in zip(st.columns(per_row), names[start : start + per_row], strict=True):
            with col:
                show(figs[name])


st.markdown("**1. The input.** Each row is one token's vector from the previous layer.")
show_row(*(("x_q", "x_kv") if kind == "cross" else ("x_q",)))

st.markdown(f"**2. This head's projections** ({config.d_model} → {dk} dimensions).")
st.latex(r"Q = X W_Q + b_Q,\quad K = X W_K + b_K,\quad V = X W_V + b_V")
show_row("w_q", "w_k", "w_v")
show_row("q", "k", "v")

st.markdown("**3. Scores: how well each query matches each key,** scaled so softmax does not saturate.")
st.latex(
    rf"Q K^\top \quad\rightarrow\quad \frac{{Q K^\top}}{{\sqrt{{d_k}}}} = \frac{{Q K^\top}}{{\sqrt{{{dk}}}}}"
)
show_row("qk", "scores")

st.markdown(
    "**4. Mask, then softmax.** Masked cells (0 in the mask) get −∞ before softmax, so their weight "
    "is exactly 0; every row of weights sums to 1."
)
st.latex(r"\mathrm{weights} = \mathrm{softmax}\big(\mathrm{mask}(Q K^\top / \sqrt{d_k})\big)")
show_row("mask", "weights")
if not trained:
    st.caption(noise)

st.markdown("**5. Weighted sum of the values, then all heads together.**")
st.latex(
    r"\mathrm{head}_j = \mathrm{weights}\cdot V,\qquad "
    r"\mathrm{MultiHead} = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W_O + b_O"
)
show_row("head_out", "concat")
st.caption(f"The orange frame in the concatenation is head {head + 1}'s block of {dk} columns.")
show_row("w_o", "output")

# -- every head of this layer ---------------------------------------------------------------------------
st.subheader(f"All {config.num_heads} heads of layer {layer + 1}")
st.caption(
    f"{fa.KINDS[kind]}: rows are queries, columns are keys; each row sums to 1. Hover for exact weights."
)
show(fa.heads_figure(attn, q_tokens, k_tokens, selected=head))
if not trained:
    st.caption(noise)
elif kind == "cross":
    share = fa.diagonal_share(steps.weights)
    st.info(
        "Trained 汉字→拼音: in cross-attention each pinyin syllable attends to its own character — the "
        "bright diagonal. (Decoder position t writes syllable t, so it looks at character t.) "
        f"In head {head + 1}, {share:.0%} of the rows have their strongest weight on the diagonal.",
        icon=":material/school:",
    )
    top = fa.argmax_keys(steps.weights)
    st.dataframe(
        {
            "decoder input": q_tokens,
            "writes": list(run.predicted[: len(q_tokens)]),
            "looks most at": [k_tokens[i] for i in top],
            "weight": [float(steps.weights[t, i]) for t, i in enumerate(top)],
        },
        hide_index=True,
    )
else:
    st.caption(
        "Trained weights: compare heads — some look at the previous or the same position, some spread out. "
        "The clearest pattern is in the decoder cross-attention (choose it above)."
    )

# -- every layer, every head ----------------------------------------------------------------------------
st.subheader(f"Every layer × every head: {config.num_layers} × {config.num_heads}")
st.caption(
    f"{fa.KINDS[kind]} of all layers at a glance (rows: layers, columns: heads). "
    f"The head shown step by step above is layer {layer + 1}, head {head + 1}."
)
show(fa.grid_figure(run.trace, kind, q_tokens=q_tokens, k_tokens=k_tokens))


# -- one query token ------------------------------------------------------------------------------------
@st.fragment
def one_query() -> None:
    """Its own fragment: choosing a token or a bar mode redraws this chart only."""
    st.subheader("Where does one token look?")
    a, b = st.columns([1, 2])
    with a:
        query = choose(
            st.selectbox,
            "Query token",
            "attn_query",
            list(range(len(q_tokens))),
            0,
            "position",
            fmt=lambda i: f"{i + 1} · {q_tokens[i]}",
        )
    with b:
        mode = choose(
            st.radio, "Bars", "attn_bar", list(fa.BAR_MODES), "head", fmt=fa.BAR_MODES.get, horizontal=True
        )
    for notice in notices:
        st.warning(notice, icon=":material/warning:")
    notices.clear()
    show(fa.query_bars(attn, query, q_tokens, k_tokens, mode=mode, head=head))
    if kind == "decoder":
        st.caption(
            "Keys after the query token get weight 0: the causal mask keeps the decoder from peeking ahead."
        )


for notice in notices:
    notice_box.warning(notice, icon=":material/warning:")
notices.clear()  # the fragment shows its own
one_query()
