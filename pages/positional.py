"""Positional encoding: sin/cos of the position, the table, why offsets are a rotation, and the sum."""

import streamlit as st

import ui
from figures.embeddings import embedding_arrays
from figures.positional import (
    DEFAULT_MAX_POS,
    MAX_DIMS_SHOWN,
    MAX_POS_RANGE,
    check_dims,
    check_max_pos,
    gram_heatmap,
    offset_dot_curves,
    pe_curves,
    pe_heatmap,
    pe_table,
    period,
    rotation_error,
    sum_heatmaps,
    training_length,
)

PLOT_CONFIG = {"displaylogo": False}
NOTICES = "_pe_notices"  # messages about URL values that were replaced; cleared by the next change

settings = ui.page_setup("nav.positional.title")
st.caption(
    "Attention compares every token with every other one and by itself ignores order: “dog bites man” "
    "and “man bites dog” would look the same. So each position gets its own vector, added to the token's."
)
run = ui.get_run(settings)  # the sections below without a sentence still draw; a message says why
pipe = ui.get_pipeline(settings) if run is not None else None
d = settings.d_model  # with trained weights page_setup already gives the checkpoint's sizes
trained = pipe is not None and pipe.kind == "trained"
trained_len = training_length(pipe.kind, pipe.metrics) if pipe is not None else None
state = st.session_state


def _clear_notices() -> None:
    state[NOTICES] = []


# Page widgets bound to the URL: Streamlit drops an invalid ?pe_dims / ?pe_max_pos silently, so the
# raw values are checked here first (on the first run of the page) and a replaced value is announced.
notices = list(state.get(NOTICES, []))
if "pe_dims" not in state:
    dims, note = check_dims(st.query_params.get_all("pe_dims"), d)
    state["pe_dims"] = dims
    notices += [note] if note else []
else:
    current = list(state["pe_dims"])
    kept = [j for j in current if isinstance(j, int) and 0 <= j < d]
    if kept != current:
        dropped = [j for j in current if j not in kept]
        notices.append(f"d_model is now {d}: dimension(s) {dropped} no longer exist and were removed.")
        state["pe_dims"] = kept or check_dims([], d)[0]
if "pe_max_pos" not in state:
    max_pos, note = check_max_pos(st.query_params.get("pe_max_pos"))
    state["pe_max_pos"] = max_pos
    notices += [note] if note else []
state[NOTICES] = notices
for notice in notices:
    st.warning(notice, icon=":material/warning:")

# -- 1. the formula and the curves ----------------------------------------------------------------
st.header("1 · A sine and a cosine per pair of dimensions")
st.latex(r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_\text{model}}}\right),\qquad "
         r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_\text{model}}}\right)")
st.markdown(
    f"Each pair of dimensions (2i, 2i+1) turns at its own speed ω_i = 1/10000^(2i/d_model): the first "
    f"pair repeats every 2π ≈ 6.3 positions, the last of the {d} dimensions only every "
    f"{period(d - 1, d):,.0f} positions. "
    "Like the hands of a clock, fast and slow together give every position a distinct pattern."
)


@st.fragment
def curves_section(d: int, trained_len: int | None, sentence_len: int | None) -> None:
    """The widgets and the curves: a fragment, so moving the slider redraws this chart only."""
    left, right = st.columns([2, 1])
    with left:
        dims = st.multiselect(
            f"Dimensions to plot (0 … {d - 1}, at most {MAX_DIMS_SHOWN})",
            list(range(d)),
            key="pe_dims",
            max_selections=MAX_DIMS_SHOWN,
            bind="query-params",
            on_change=_clear_notices,
        )
    with right:
        lo, hi = MAX_POS_RANGE
        max_pos = st.slider(
            "Positions to draw",
            lo,
            hi,
            key="pe_max_pos",
            bind="query-params",
            on_change=_clear_notices,
            help=f"Default {DEFAULT_MAX_POS}. The formula is defined for every position, far beyond any "
            "sentence.",
        )
    if dims:
        st.plotly_chart(
            pe_curves(d, dims, max_pos, trained_len=trained_len, sentence_len=sentence_len),
            width="stretch", config=PLOT_CONFIG, key="pe_curves_chart",
        )
    else:
        st.info("No dimension selected: pick one or more above to see its curve.")


curves_section(d, trained_len, len(run.src_tokens) if run is not None else None)
if trained_len:
    st.caption(
        f"Trained weights: the model was trained on short phrases (at most {trained_len - 1} characters; "
        f"positions 0–{trained_len - 1}, shaded). The curves go on smoothly for any position, but the model "
        "has never seen attention patterns at larger offsets, so do not expect it to handle long inputs."
    )
else:
    st.caption(
        "Random weights: nothing was trained, so no position is “familiar” to the model. (The shipped "
        "trained model only saw short phrases of a few characters.) The encoding itself needs no training: "
        "it is a fixed formula, defined for every position."
    )

# -- 2. the table ---------------------------------------------------------------------------------
st.header("2 · The whole table: positions × dimensions")
rows = max(64, len(run.src_tokens) if run is not None else 0)
st.plotly_chart(pe_heatmap(pe_table(rows, d)), width="stretch", config=PLOT_CONFIG, key="pe_heatmap_chart")
st.caption(
    f"Rows are positions 0–{rows - 1}, columns the {d} dimensions. Left columns flip quickly from row to "
    "row (fast pairs), right columns barely change (slow pairs): nearby positions get similar rows."
)

# -- 3. why it works: offsets ---------------------------------------------------------------------
st.header("3 · Why it works: a shift by k is a rotation")
st.latex(r"PE(p+k) = M_k\, PE(p),\qquad M_k = \operatorname{diag}_i\!\begin{pmatrix} \cos k\omega_i & "
         r"\sin k\omega_i \\ -\sin k\omega_i & \cos k\omega_i \end{pmatrix},\qquad "
         r"\omega_i = \frac{1}{10000^{2i/d_\text{model}}}")
eq, note = st.columns([3, 2])
with eq:
    st.markdown(
        "Each 2×2 block turns one (sin, cos) pair by the angle k·ω_i. M_k depends on the offset k, not on "
        "p: a layer can learn “look k tokens back” once and use it at every position. And the dot product "
        "of two positions depends only on how far apart they are:"
    )
    st.latex(r"PE(p)\cdot PE(q) = \sum_i \cos\big((p-q)\,\omega_i\big)")
    st.caption(
        "This needs an even d_model: every sine needs its cosine partner. With an odd d_model the last "
        "dimension is a lone sine and the dot product would depend on p. The sidebar only offers even sizes."
    )
with note:
    st.metric("max |M₅·PE(p) − PE(p+5)| over p < 64", f"{rotation_error(d, 5):.1e}",
              help="Computed here with the model's own table: zero up to float32 rounding.")
c1, c2 = st.columns(2)
with c1:
    st.plotly_chart(gram_heatmap(pe_table(64, d)), width="stretch", config=PLOT_CONFIG, key="pe_gram_chart")
    st.caption("PE·PEᵀ for positions 0–63: every diagonal (same offset p − q) has one colour.")
with c2:
    st.plotly_chart(offset_dot_curves(d), width="stretch", config=PLOT_CONFIG, key="pe_offset_chart")
    st.caption("PE(p)·PE(p+k) against the offset k, for four starting positions p: the curves coincide.")

# -- 4. embedding + PE ----------------------------------------------------------------------------
st.header("4 · The encoder input: E·√d_model + PE")
st.latex(r"x_{pos} = E[\text{id}_{pos}]\cdot\sqrt{d_\text{model}} + PE(pos)")
if run is None:
    st.info("Type a sentence in the sidebar to see its tokens' embeddings, their PE rows and the sum.")
    st.stop()
arrays = embedding_arrays(run.trace)
st.plotly_chart(sum_heatmaps(arrays.scaled, arrays.pe, arrays.embedded, list(run.src_tokens)),
                width="stretch", config=PLOT_CONFIG, key="pe_sum_chart")
st.caption(
    "Left: the token's scaled row (see the Embeddings page); middle: the row of the table above for its "
    "position; right: their sum, exactly the model's input (trace.src_embedded). One colour scale for "
    "all three."
    + ("" if trained else " Random weights: the left panel is random numbers; the PE panel is exact anyway.")
)
