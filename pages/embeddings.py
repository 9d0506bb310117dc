"""Embeddings: token → id → a row of the lookup table, scaled by √d_model; how similar the rows are."""

import streamlit as st

import ui
from figures.embeddings import (
    cosine_heatmap,
    embedding_arrays,
    embedding_heatmap,
    entry_histogram,
    lookup_rows,
    norm_bars,
    pca_scatter,
    scale_summary,
)

PLOT_CONFIG = {"displaylogo": False}

settings = ui.page_setup("nav.embeddings.title")
st.caption(
    "Each token id picks one row of a learned table E (vocabulary × d_model). That row, multiplied "
    "by √d_model, plus the positional encoding, is the vector the encoder reads."
)
run = ui.get_run(settings)
if run is None:
    st.stop()
pipe = ui.get_pipeline(settings)
trained = pipe.kind == "trained"
arrays = embedding_arrays(run.trace)
tokens = list(run.src_tokens)
d = arrays.d_model
vocab = pipe.config.src_vocab_size

# -- 1. the lookup --------------------------------------------------------------------------------
st.header("1 · The lookup: token → id → row of E")
left, right = st.columns([3, 2])
with left:
    st.latex(r"x_{\text{token}} = E[\,\text{id}\,] \in \mathbb{R}^{d_\text{model}},\qquad "
             rf"E \in \mathbb{{R}}^{{{vocab} \times {d}}}")
    st.markdown(
        "No arithmetic happens here: the id is just a row number. The table is a weight matrix like "
        "any other, so training moves the rows of tokens used in similar ways closer together."
    )
with right:
    st.metric("Rows in the table (source vocabulary)", f"{vocab:,}")
    st.metric("Width of each row (d_model)", d)
shown = min(len(tokens), 8)
st.caption(f"The first {shown} of the sentence's {len(tokens)} tokens and the first entries of their rows:")
st.dataframe(lookup_rows(tokens, arrays.ids.tolist(), arrays.lookup, n_tokens=8, n_dims=6),
             hide_index=True, width="stretch")

st.subheader("The sentence's rows, tokens × dimensions")
st.plotly_chart(embedding_heatmap(arrays.lookup, tokens), width="stretch", config=PLOT_CONFIG,
                key="emb_heatmap")
if trained:
    st.caption("Trained weights: these rows were learned while translating characters into pinyin.")
else:
    st.caption(f"Random weights: these rows are random numbers (seed {settings.seed}) — no pattern to find "
               "here; change the seed and every row changes.")

# -- 2. scaling -----------------------------------------------------------------------------------
st.header("2 · Why multiply by √d_model?")
s = scale_summary(arrays)
eq, facts = st.columns([3, 2])
with eq:
    st.latex(rf"\text{{input}}_{{pos}} = E[\text{{id}}]\cdot\sqrt{{d_\text{{model}}}} + PE(pos),\qquad "
             rf"\sqrt{{{d}}} = {arrays.scale:.2f}")
    st.markdown(
        "The paper (section 3.4) multiplies the embedding by √d_model. Table entries are small (they are "
        f"initialised with a spread that shrinks as the table grows; here their typical size is "
        f"{s.rms_lookup:.3f}), while every positional-encoding entry is a sine or cosine in [−1, 1] and a PE "
        "row has length √(d_model/2). Without the factor the position would drown the token; with it "
        "both have a comparable size."
    )
with facts:
    st.metric("Mean ‖E[id]‖ (row as stored)", f"{s.norm_lookup:.3f}")
    st.metric(f"Mean ‖E[id]·√{d}‖ (scaled)", f"{s.norm_scaled:.3f}")
    st.metric("‖PE(pos)‖ = √(d_model/2)", f"{s.norm_pe:.3f}")
st.caption(
    f"Share of the summed vector's length that is position: {s.pe_share_without_scaling:.0%} without "
    f"scaling, {s.pe_share_with_scaling:.0%} with it (mean lengths, this sentence)."
)
c1, c2 = st.columns(2)
with c1:
    st.markdown("**Length of each token's vectors**")
    st.plotly_chart(norm_bars(arrays, tokens), width="stretch", config=PLOT_CONFIG, key="emb_norms")
with c2:
    st.markdown("**All their entries**")
    st.plotly_chart(entry_histogram(arrays), width="stretch", config=PLOT_CONFIG, key="emb_hist")

# -- 3. similarity --------------------------------------------------------------------------------
st.header("3 · Which tokens have similar vectors?")
st.latex(r"\cos(a, b) = \frac{E[a]\cdot E[b]}{\lVert E[a]\rVert\,\lVert E[b]\rVert}")
if trained:
    st.info(
        "Trained weights: similarity reflects how the model learned to use the characters: characters it "
        "treats alike end up with similar rows. [UNK] tokens (English, emoji…) all share one row, so "
        "their cosine is 1.",
        icon=":material/school:",
    )
else:
    st.warning(
        "Random weights: these similarities are meaningless. Random vectors in many dimensions are "
        "almost orthogonal, so off-diagonal cosines sit near 0 "
        f"(spread about 1/√{d} ≈ {1 / arrays.scale:.2f}). "
        "That is the starting point training has to move away from. Only a repeated token shows 1.",
        icon=":material/casino:",
    )
c3, c4 = st.columns(2)
with c3:
    st.markdown("**Cosine similarity of the rows**")
    st.plotly_chart(cosine_heatmap(arrays.lookup, tokens), width="stretch",
                    config=PLOT_CONFIG, key="emb_cosine")
with c4:
    st.markdown("**The rows in 2-D (PCA)**")
    st.plotly_chart(pca_scatter(arrays.lookup, tokens), width="stretch",
                    config=PLOT_CONFIG, key="emb_pca")
st.caption(
    f"PCA: the {d}-dimensional rows projected onto the two directions along which these tokens differ most "
    "(the axes' percentages say how much of the spread each keeps). Close points = similar rows. "
    + ("With one token there is nothing to compare." if len(tokens) == 1 else "")
)
