"""Masks: a padded batch, the key-padding and causal masks, their merge to [B, h, q, k], and their effect.

An encoder-only model (all-MiniLM-L6-v2) has only the key-padding mask: the decoder parts (decoder
input, causal mask, the decoder's attentions) say so instead of drawing. A decoder-only model (GPT-2,
Llama) has one input and one attention, padding ∧ causal: the encoder's and the cross-attention's parts
say so instead of drawing.
"""

import streamlit as st

import figures.attention as fa
import figures.masks as fm
import ui
from core.names import Weights
from ui.caches.cache import batch_of, get_sentence_pipeline, show_failure
from ui.page import widgets
from ui.page.settings import clean_text
from ui.page.tables import show_table

MAX_BATCH_TOKENS = 32  # every sentence of the batch is cut here: the grids stay legible
BROADCAST = r"\;\xrightarrow{\text{broadcast}}\;"
MERGED_LATEX = {  # the mask each attention uses, from its parts to [B, h, q, k]
    "encoder": r"\mathrm{mask} = \mathrm{pad}^{\text{src}}_{(B,1,1,S)}" + BROADCAST + "(B, h, S, S)",
    "decoder": r"\mathrm{mask} = \mathrm{pad}^{\text{tgt}}_{(B,1,1,T)} \wedge \mathrm{causal}_{(1,1,T,T)} "
    r"\;\rightarrow\; (B, 1, T, T)" + BROADCAST + "(B, h, T, T)",
    "cross": r"\mathrm{mask} = \mathrm{pad}^{\text{src}}_{(B,1,1,S)}" + BROADCAST + "(B, h, T, S)",
    "one_stack": r"\mathrm{mask} = \mathrm{pad}_{(B,1,1,L)} \wedge \mathrm{causal}_{(1,1,L,L)} "
    r"\;\rightarrow\; (B, 1, L, L)" + BROADCAST + "(B, h, L, L)",
}
# ?mask_kind=<kind> (ui/page/widgets.py); links made before carry its label, in either language
KIND_ALIASES = widgets.aliases(fm.MASK_KINDS, fm.kind_label)

settings = ui.page_setup("nav.masks.title")
lang = settings.lang
# The sidebar sentence is row 1 of the batch below: the page draws the batch's trace (and reads the
# sentence's own run only for the model's answer).
pipe = get_sentence_pipeline(settings)
if pipe is None:
    st.stop()
from core.tracing.pipeline import EmptyInput  # noqa: E402  (after the pipeline: ui.caches.cache checks core imports)

encoder_only = pipe.config.stack == "encoder"
one_stack = pipe.config.stack == "decoder"  # a decoder only: the sentences are its one input
model_name = pipe.name or ui.t("masks.this_model")
notices: list[str] = []
notice_box = st.container()

st.info(ui.t("masks.convention"), icon=":material/info:")
st.caption(ui.t("masks.intro.one_stack" if one_stack else "masks.intro", model=model_name))

# -- 1. a padded batch ----------------------------------------------------------------------------
st.subheader(ui.t("masks.batch.header"))
a, b = st.columns(2)
extras = []
for col, key, default in ((a, "mask_extra_1", "你好"), (b, "mask_extra_2", "Hi there!")):
    with col:
        text = st.text_input(
            ui.t("masks.batch.sentence_n", n=len(extras) + 2), value=default, key=key, bind="query-params",
            max_chars=200,
        )
        extras.append(clean_text(text, "sentence", notices, lang))
sentences = [settings.sentence] + [t for t in extras if t.strip()]
if len(sentences) < len(extras) + 1:
    st.caption(ui.t("masks.batch.left_out"))
# The page shows the first layer's attention of the kind chosen below (the radio's value, known now).
kinds = ["encoder"] if encoder_only else ["decoder"] if one_stack else list(fm.MASK_KINDS)
default_kind = kinds[0] if encoder_only else "decoder"
shown_kind = widgets.chosen("mask_kind", kinds, default_kind, aliases=KIND_ALIASES)
try:
    with st.spinner(ui.t("masks.batch.running")):
        batch = batch_of(settings, pipe, sentences, shown_kind, MAX_BATCH_TOKENS)
except EmptyInput as empty:  # a sentence with no token (e.g. only control characters for the model)
    st.info(ui.t("run.no_tokens" if empty.index == 0 else "masks.batch.cannot_run"))
    st.stop()
except Exception as exc:  # never a traceback
    show_failure(exc, settings, "run_batch")
    st.stop()
if any(batch.truncated):
    st.caption(ui.t("masks.batch.truncated", n=MAX_BATCH_TOKENS))
B, S = batch.src_ids.shape
T = batch.tgt_ids.shape[1]
st.markdown(ui.t("masks.batch.explain.filler" if one_stack else "masks.batch.explain"))
if one_stack:  # the model may have no pad token (GPT-2): say which id fills, and why it does not matter
    filler = {pipe.config.pad_id: "masks.batch.filler_pad", pipe.eos_id: "masks.batch.filler_eos"}.get(
        batch.pad_id, "masks.batch.filler_other")
    st.caption(ui.t("masks.batch.input", B=B, L=S, pad_id=batch.pad_id, model=model_name,
                    filler=ui.t(filler)))
else:
    st.caption(ui.t("masks.batch.source", B=B, S=S, pad_id=batch.pad_id))
show_table(fm.token_table(batch.src_tokens, S, lang=lang), hide_index=True)
ids_title = "masks.fig.input_ids" if one_stack else "masks.fig.source_ids"
ui.show_figure(
    fm.ids_figure(batch.src_ids, batch.src_tokens, batch.pad_id, title=ui.t(ids_title, B=B, S=S), lang=lang),
    key="mask_src_ids",
    name="masks-source-ids",
)
answered = None  # the sentence's own run, for the model's answer beside the decoder's rows
if encoder_only:
    st.info(ui.t("masks.encoder_only.batch", model=model_name), icon=":material/info:")
elif one_stack:  # no second input to draw; the model's answer is its next-token prediction
    st.info(ui.t("masks.one_stack.batch", model=model_name), icon=":material/info:")
    answered = ui.get_run(settings)
    if answered is not None:
        ui.show_answer(answered, key="masks_answer")
else:
    # the decoder reads the sentence itself (core.tracing.batch)
    random_weights = pipe.weights == Weights.RANDOM
    decoder_in = ui.t("masks.batch.decoder_random" if random_weights else "masks.batch.decoder_trained")
    st.caption(ui.t("masks.batch.decoder", B=B, T=T, what=decoder_in))
    ui.show_figure(
        fm.ids_figure(batch.tgt_ids, batch.tgt_tokens, batch.pad_id,
                      title=ui.t("masks.fig.target_ids", B=B, T=T), lang=lang),
        key="mask_tgt_ids",
        name="masks-target-ids",
    )
    answered = ui.get_run(settings)  # sentence 1 alone, as every other page runs it
    if answered is not None:
        ui.show_answer(answered, key="masks_answer")

# -- 2. the two masks -----------------------------------------------------------------------------
st.subheader(ui.t("masks.two.header"))
a, b = st.columns([1.4, 1])
with a:
    st.markdown(ui.t("masks.padding.explain.filler" if one_stack else "masks.padding.explain"))
    if one_stack:  # the attention mask gives it: the filler id may be a real token of the vocabulary
        st.latex(r"\mathrm{pad}[b, 0, 0, j] = (j < n_b)\quad(n_b\text{: the length of sentence } b)")
    else:
        st.latex(r"\mathrm{pad}[b, 0, 0, j] = (\mathrm{id}_{b,j} \neq \mathrm{PAD})")
    padding_title = "masks.fig.key_padding" if one_stack else "masks.fig.source_padding"
    ui.show_figure(
        fm.padding_figure(batch.src_padding, title=ui.t(padding_title, B=B, S=S), lang=lang),
        key="mask_padding",
        name="masks-key-padding",
    )
with b:
    st.markdown(ui.t("masks.causal.explain.one_stack" if one_stack else "masks.causal.explain"))
    st.latex(r"\mathrm{causal}[0, 0, t, j] = (j \le t)")
    if encoder_only:
        st.info(ui.t("masks.encoder_only.causal", model=model_name), icon=":material/info:")
    else:
        ui.show_figure(
            fm.causal_figure(batch.causal, title=ui.t("masks.fig.causal", T=T), lang=lang),
            key="mask_causal",
            name="masks-causal",
        )

# -- 3. merged and broadcast ----------------------------------------------------------------------
st.subheader(ui.t("masks.merged.header"))
kind = widgets.choose(
    st.radio,
    ui.t("masks.kind.label"),
    "mask_kind",
    kinds,
    default_kind,
    notices,
    fmt=lambda k: fm.kind_label(k, lang),
    aliases=KIND_ALIASES,
    horizontal=True,
)
if encoder_only or one_stack:
    st.caption(ui.t("masks.one_stack.kinds" if one_stack else "masks.encoder_only.kinds", model=model_name))
st.latex(MERGED_LATEX["one_stack" if one_stack else kind])
st.markdown(ui.t("masks.merged.explain.one_stack" if one_stack else "masks.merged.explain", model=model_name))
if kind == "cross" and batch.layers is not None:  # chosen() guessed otherwise: the whole encoder after all
    batch = batch_of(settings, pipe, sentences, kind, MAX_BATCH_TOKENS)
attn = fa.attention_of(batch.trace, kind, 0)
q_rows = batch.src_tokens if kind == "encoder" else batch.tgt_tokens
k_rows = batch.tgt_tokens if kind == "decoder" else batch.src_tokens
h = attn.mask.shape[1]
st.caption(ui.t("masks.merged.caption", shape=tuple(attn.mask.shape), h=h))
ui.show_figure(
    fm.merged_figure(attn.mask, q_rows, k_rows, lang=lang), key="mask_merged", name=f"masks-merged-{kind}"
)

# -- 4. the effect on the weights -----------------------------------------------------------------
st.subheader(ui.t("masks.effect.header"))
alibi = attn.bias is not None  # ALiBi self-attention: the scores hold its bias B
if alibi:  # the decoder's form is −m·(q − k), the encoder's −m·|q − k| (core.model.positional.alibi_bias)
    bias_form = r"-m_h\,(q-k)" if kind == "decoder" else r"-m_h\,|q-k|"
    st.latex(rf"\text{{scores}} = \frac{{QK^\top}}{{\sqrt{{d_k}}}} + B,\qquad B_{{qk}} = {bias_form}")
st.latex(
    r"\text{weights} = \mathrm{softmax}\big(\text{scores} + M\big),\qquad "
    r"M_{qk} = \begin{cases} 0 & \text{mask}_{qk} = \text{True} \\ -\infty & \text{mask}_{qk} = \text{False}"
    r"\end{cases}"
)
st.markdown(ui.t("masks.effect.explain"))
a, b = st.columns(2)
with a:
    row = widgets.choose(st.selectbox, ui.t("masks.effect.sentence"), "mask_row", list(range(1, B + 1)), 1,
                            notices, ui.t("masks.what.sentence")) - 1
with b:
    head = widgets.choose(st.selectbox, ui.t("masks.effect.head"), "mask_head", list(range(1, h + 1)), 1,
                             notices, ui.t("masks.what.head")) - 1
steps = fa.head_steps(attn, head, row=row)
q_tok = fm.padded_tokens(q_rows, steps.mask.shape[0])[row]
k_tok = fm.padded_tokens(k_rows, steps.mask.shape[1])[row]
if alibi:
    from core.model.positional import alibi_slopes
    from figures.positional import slope_text

    st.markdown(ui.t("masks.effect.alibi", form=ui.t(f"masks.effect.alibi.{kind}"), head=head + 1,
                     m=slope_text(float(alibi_slopes(h)[head]))))
ui.show_figure(
    fm.masking_figure(steps.scores, steps.mask, steps.weights, q_tok, k_tok, bias=steps.bias, lang=lang),
    key="mask_effect",
    name=f"masks-effect-{kind}-sentence{row + 1}-head{head + 1}",
)
masked_max, row_error = fm.mask_check(steps.weights, steps.mask)
st.caption(ui.t("masks.effect.check", row=row + 1, head=head + 1, masked=f"{masked_max:g}",
                error=f"{row_error:.1e}"))
if pipe.weights == Weights.RANDOM:
    st.caption(ui.t("masks.effect.random"))
if kind != "encoder" and row == 0 and answered is not None:
    ui.show_answer(answered, key="masks_effect_answer")

for notice in notices:
    notice_box.warning(notice, icon=":material/warning:")
