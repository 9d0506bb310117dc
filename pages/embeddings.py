"""Embeddings: token → id → a row of the lookup table, scaled by √d_model; how similar the rows are.

A pretrained BERT encoder (all-MiniLM-L6-v2) does not scale: section 2 then shows what it does instead
(learned position and token-type rows, then a LayerNorm). What is added to the row follows the model's
``positions``: a sine/cosine PE, a learned row P[pos], or nothing (RoPE, ALiBi act inside attention).
A model folder (GPT-2, Llama) may neither scale nor normalise: its row (+ P[pos]) is the input itself.
Whether a folder's weights were trained Glassbox cannot know: its texts say neither.
"""

import streamlit as st

import ui
from core.names import Weights
from figures.embeddings import (
    TOKEN_TICKS_MAX,
    cosine_heatmap,
    embedding_arrays,
    embedding_heatmap,
    entry_histogram,
    lookup_rows,
    norm_bars,
    pca_scatter,
    scale_summary,
)
from ui.page.tables import show_table

CAPTIONS = {"sinusoidal": "embeddings.caption", "learned": "embeddings.caption.learned",
            "rope": "embeddings.caption.rope", "alibi": "embeddings.caption.alibi"}
SCHEMES = {"rope": "RoPE", "alibi": "ALiBi", "learned": "", "sinusoidal": ""}

settings = ui.page_setup("nav.embeddings.title")
lang = settings.lang
intro = st.container()  # the caption depends on the model, known only after the run
run = ui.get_run(settings)
pipe = run.pipe if run is not None else None
paper = pipe is None or pipe.config.scale_embeddings
positions = pipe.config.positions if pipe is not None else "sinusoidal"
normed = pipe is not None and pipe.config.embed_norm  # BERT: LayerNorm(E + P + T)
folder = pipe is not None and pipe.weights == Weights.HF  # trained or not: the folder does not say
if paper:
    caption = CAPTIONS[positions]
elif normed:
    caption = "embeddings.caption.folder.bert" if folder else "embeddings.caption.bert"
else:  # neither scaled nor normalised (GPT-2, Llama): the row, plus a learned position row or nothing
    caption = f"embeddings.caption.unscaled.{'learned' if positions == 'learned' else 'in_attention'}"
if run is None:
    intro.caption(ui.t(caption))
    st.stop()
model_name = pipe.name or ui.t("embeddings.this_model")
intro.caption(ui.t(caption, model=model_name, rows=f"{pipe.config.max_len:,}", scheme=SCHEMES[positions]))
arrays = embedding_arrays(run.source, pipe.config)
tokens = list(run.src_tokens)
d = arrays.d_model
vocab = pipe.config.src_vocab_size
many = len(tokens) > TOKEN_TICKS_MAX

# -- 1. the lookup --------------------------------------------------------------------------------
st.header(ui.t("embeddings.lookup.header"))
left, right = st.columns([3, 2])
with left:
    st.latex(r"x_{\text{token}} = E[\,\text{id}\,] \in \mathbb{R}^{d_\text{model}},\qquad "
             rf"E \in \mathbb{{R}}^{{{vocab} \times {d}}}")
    st.markdown(ui.t("embeddings.lookup.explain"))
with right:
    st.metric(ui.t("embeddings.metric.rows"), f"{vocab:,}")
    st.metric(ui.t("embeddings.metric.width"), d)
shown = min(len(tokens), 8)
st.caption(ui.t("embeddings.lookup.table", shown=shown, n=len(tokens)) + " " + ui.t("embeddings.dims_from_0"))
show_table(lookup_rows(tokens, arrays.ids.tolist(), arrays.lookup, n_tokens=8, n_dims=6, lang=lang),
           hide_index=True, width="stretch")

st.subheader(ui.t("embeddings.rows.header"))
ui.show_figure(embedding_heatmap(arrays.lookup, tokens, lang=lang), key="emb_heatmap",
               name="embeddings-lookup")
if pipe.weights == Weights.MINILM:
    st.caption(ui.t("embeddings.rows.pretrained", vocab=f"{vocab:,}"))
elif folder:
    st.caption(ui.t("embeddings.rows.folder", model=model_name))
elif pipe.task == "lm":  # a language model trained here (the small GPT, or one of the Training page)
    st.caption(ui.t("embeddings.rows.lm"))
elif pipe.task == "pinyin":
    st.caption(ui.t("embeddings.rows.trained"))
elif pipe.task:  # learned on another task (a model trained on the Training page)
    st.caption(ui.t("embeddings.rows.trained_task", task=pipe.task))
else:
    st.caption(ui.t("embeddings.rows.random", seed=settings.seed))
if many:
    st.caption(ui.t("embeddings.many_tokens", n=len(tokens), limit=TOKEN_TICKS_MAX))

# -- 2. scaling (the paper), or what BERT does instead ---------------------------------------------
s = scale_summary(arrays)
if arrays.scale_embeddings:
    st.header(ui.t("embeddings.scale.header"))
    eq, facts = st.columns([3, 2])
    # what is added to the scaled row: the sinusoid PE, a learned row P[pos], or nothing (RoPE, ALiBi)
    added = {"sinusoidal": " + PE(pos)", "learned": " + P[pos]"}.get(arrays.positions, "")
    with eq:
        st.latex(rf"\text{{input}}_{{pos}} = E[\text{{id}}]\cdot\sqrt{{d_\text{{model}}}}{added},\qquad "
                 rf"\sqrt{{{d}}} = {arrays.scale:.2f}")
        if arrays.positions == "sinusoidal":
            st.markdown(ui.t("embeddings.scale.explain", rms=f"{s.rms_lookup:.3f}"))
        elif arrays.positions == "learned":
            st.markdown(ui.t("embeddings.scale.explain.learned", rms=f"{s.rms_lookup:.3f}",
                             rms_pe=f"{s.rms_pe:.3f}"))
        else:
            st.markdown(ui.t("embeddings.scale.explain.in_attention", rms=f"{s.rms_lookup:.3f}",
                             scheme={"rope": "RoPE", "alibi": "ALiBi"}[arrays.positions]))
    with facts:
        st.metric(ui.t("embeddings.metric.norm_lookup"), f"{s.norm_lookup:.3f}")
        st.metric(ui.t("embeddings.metric.norm_scaled", d=d), f"{s.norm_scaled:.3f}")
        if arrays.positions == "sinusoidal":
            st.metric(ui.t("embeddings.metric.norm_pe"), f"{s.norm_pe:.3f}")
        elif arrays.positions == "learned":
            st.metric(ui.t("embeddings.metric.norm_learned_pe"), f"{s.norm_pe:.3f}")
    if arrays.adds_positions:
        st.caption(ui.t("embeddings.scale.share", without=f"{s.pe_share_without_scaling:.0%}",
                        with_=f"{s.pe_share_with_scaling:.0%}"))
elif not arrays.embed_norm:  # GPT-2, Llama: no factor, no LayerNorm
    st.header(ui.t(f"embeddings.unscaled.header.{'learned' if arrays.adds_positions else 'in_attention'}"))
    eq, facts = st.columns([3, 2])
    with eq:
        added = r" + P[pos]" if arrays.adds_positions else ""
        st.latex(rf"\text{{input}}_{{pos}} = E[\text{{id}}]{added}")
        if arrays.adds_positions:
            rows = f"{pipe.config.max_len:,}"
            st.markdown(ui.t("embeddings.unscaled.explain.learned", model=model_name, rows=rows,
                             rms=f"{s.rms_lookup:.3f}", rms_pe=f"{s.rms_pe:.3f}"))
        else:
            st.markdown(ui.t("embeddings.unscaled.explain.in_attention", model=model_name,
                             scheme=SCHEMES[arrays.positions] or arrays.positions, rms=f"{s.rms_lookup:.3f}"))
    with facts:
        st.metric(ui.t("embeddings.metric.norm_lookup"), f"{s.norm_lookup:.3f}")
        if arrays.adds_positions:
            st.metric(ui.t("embeddings.metric.norm_learned_pe"), f"{s.norm_pe:.3f}")
            st.metric(ui.t("embeddings.metric.norm_input"), f"{s.norm_embedded:.3f}")
    if arrays.adds_positions:
        st.caption(ui.t("embeddings.unscaled.share", share=f"{s.pe_share_without_scaling:.0%}"))
else:
    st.header(ui.t("embeddings.bert.header"))
    eq, facts = st.columns([3, 2])
    with eq:
        st.latex(r"\text{input}_{pos} = \mathrm{LayerNorm}\big(E[\text{id}] + P[pos] + T[0]\big)")
        st.latex(r"\mathrm{LayerNorm}(v) = \gamma \odot \frac{v - \mathrm{mean}(v)}{\mathrm{std}(v)} + \beta")
        st.markdown(ui.t("embeddings.bert.explain.folder", model=model_name, rows=f"{pipe.config.max_len:,}")
                    if folder else ui.t("embeddings.bert.explain"))
        st.markdown(ui.t("embeddings.bert.why"))
    with facts:
        st.metric(ui.t("embeddings.metric.norm_lookup"), f"{s.norm_lookup:.3f}")
        st.metric(ui.t("embeddings.metric.norm_learned_pe"), f"{s.norm_pe:.3f}")
        st.metric(ui.t("embeddings.metric.norm_normed"), f"{s.norm_embedded:.3f}")
    st.caption(ui.t("embeddings.bert.share", share=f"{s.pe_share_without_scaling:.0%}",
                    normed=f"{s.norm_embedded:.2f}"))
c1, c2 = st.columns(2)
with c1:
    st.markdown(ui.t("embeddings.norms.title"))
    ui.show_figure(norm_bars(arrays, tokens, lang=lang), key="emb_norms", name="embeddings-lengths",
                   column=0.5)
with c2:
    st.markdown(ui.t("embeddings.hist.title"))
    ui.show_figure(entry_histogram(arrays, lang=lang), key="emb_hist", name="embeddings-entries",
                   column=0.5)

# -- 3. similarity --------------------------------------------------------------------------------
st.header(ui.t("embeddings.similarity.header"))
st.latex(r"\cos(a, b) = \frac{E[a]\cdot E[b]}{\lVert E[a]\rVert\,\lVert E[b]\rVert}")
st.markdown(ui.t("embeddings.similarity.explain"))
if pipe.weights == Weights.MINILM:
    st.info(ui.t("embeddings.similarity.pretrained"), icon=":material/school:")
elif folder:
    st.info(ui.t("embeddings.similarity.folder", model=model_name, d=d, spread=f"{1 / arrays.scale:.2f}"),
            icon=":material/folder_open:")
elif pipe.task == "lm":  # its byte-level BPE spells every character: no [UNK] row to mention
    st.info(ui.t("embeddings.similarity.lm"), icon=":material/school:")
elif pipe.task == "pinyin":
    st.info(ui.t("embeddings.similarity.trained"), icon=":material/school:")
elif pipe.task:
    st.info(ui.t("embeddings.similarity.trained_task", task=pipe.task), icon=":material/school:")
else:
    st.warning(ui.t("embeddings.similarity.random", d=d, spread=f"{1 / arrays.scale:.2f}"),
               icon=":material/casino:")
c3, c4 = st.columns(2)
with c3:
    st.markdown(ui.t("embeddings.cosine.title"))
    ui.show_figure(cosine_heatmap(arrays.lookup, tokens, lang=lang), key="emb_cosine",
                   name="embeddings-cosine", column=0.5)
with c4:
    st.markdown(ui.t("embeddings.pca.title"))
    ui.show_figure(pca_scatter(arrays.lookup, tokens, lang=lang), key="emb_pca", name="embeddings-pca",
                   column=0.5)
one_token = " " + ui.t("embeddings.pca.one_token") if len(tokens) == 1 else ""
st.caption(ui.t("embeddings.pca.caption", d=d) + one_token)
