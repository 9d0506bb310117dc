"""Masks: a padded batch, the key-padding and causal masks, their merge to [B, h, q, k], and their effect."""

import streamlit as st

import figures.attention as fa
import figures.masks as fm
import ui
import ui.widgets
from ui.settings import clean_text

settings = ui.page_setup("nav.masks.title")
run = ui.get_run(settings)  # the sidebar sentence is row 1; its message covers the empty case
if run is None:
    st.stop()
pipe = ui.get_pipeline(settings)
notices: list[str] = []
notice_box = st.container()


@st.cache_data(max_entries=32, show_spinner="Running the batch…")
def batch_of(_pipe, key, sentences: tuple[str, ...]):
    from core.batch import run_batch

    return run_batch(_pipe, list(sentences))


def choose(widget, label: str, key: str, options: list, default, what: str = "", fmt=str, **kw):
    return ui.widgets.choose(widget, label, key, options, default, notices, what, fmt, **kw)


st.info(
    "Convention: everywhere in Glassbox a mask value **True (1, blue) = may attend**, False (0, grey) = "
    "hidden. PyTorch's `nn.MultiheadAttention` uses the opposite: there `True` means *masked out*.",
    icon=":material/info:",
)
st.caption(
    "Sentences of different lengths share one tensor only if the short ones are filled with [PAD]. "
    "Masks make sure the filler changes nothing, and that the decoder cannot peek at the next token."
)

st.subheader("1. A padded batch")
a, b = st.columns(2)
extras = []
for col, key, default in ((a, "mask_extra_1", "你好"), (b, "mask_extra_2", "Hi there!")):
    with col:
        text = st.text_input(
            f"Sentence {len(extras) + 2}", value=default, key=key, bind="query-params", max_chars=200
        )
        extras.append(clean_text(text, "extra sentence", notices))
sentences = [settings.sentence] + [t for t in extras if t.strip()]
if len(sentences) < len(extras) + 1:
    st.caption("Empty sentences are left out of the batch.")
try:
    batch = batch_of(pipe, settings.pipeline_settings(), tuple(sentences))
except ValueError as exc:  # an extra sentence with no token (e.g. only spaces for the model)
    st.info(f"This batch cannot run: {exc}. Type some text.")
    st.stop()
if any(batch.truncated):
    st.caption("Sentences longer than 32 tokens are cut to 32 on this page.")
B, S = batch.src_ids.shape
T = batch.tgt_ids.shape[1]
st.caption(
    f"Source ids (B, S) = ({B}, {S}): every row is padded with [PAD] (id {batch.pad_id}) to the longest. "
    f"Row 1 is the sidebar sentence."
)
st.dataframe(fm.token_table(batch.src_tokens, S), hide_index=True)
st.plotly_chart(
    fm.ids_figure(batch.src_ids, batch.src_tokens, batch.pad_id, title=f"source ids ({B}, {S})"),
    width="stretch",
    config={"displayModeBar": False},
)
decoder_in = (
    "[BOS] + the sentence itself (random weights: the model's own output would be noise)"
    if pipe.kind == "random"
    else "[BOS] + the model's greedy pinyin output for that sentence"
)
st.caption(f"Decoder input (B, T) = ({B}, {T}): {decoder_in}, padded the same way.")
st.plotly_chart(
    fm.ids_figure(batch.tgt_ids, batch.tgt_tokens, batch.pad_id, title=f"target ids ({B}, {T})"),
    width="stretch",
    config={"displayModeBar": False},
)

st.subheader("2. The two masks")
a, b = st.columns([1.4, 1])
with a:
    st.markdown("**Key padding**: no query may look at a [PAD] key.")
    st.latex(r"\mathrm{pad}[b, 0, 0, j] = (\mathrm{id}_{b,j} \neq \mathrm{PAD})")
    st.plotly_chart(
        fm.padding_figure(batch.src_padding, title=f"source key padding ({B}, 1, 1, {S})"),
        width="stretch",
        config={"displayModeBar": False},
    )
with b:
    st.markdown("**Causal (look-ahead)**: query t sees keys 0…t only.")
    st.latex(r"\mathrm{causal}[0, 0, t, j] = (j \le t)")
    st.plotly_chart(
        fm.causal_figure(batch.causal, title=f"causal (1, 1, {T}, {T})"),
        width="stretch",
        config={"displayModeBar": False},
    )

st.subheader("3. Merged and broadcast to [B, h, q, k]")
st.latex(
    r"\mathrm{mask} = \mathrm{pad}_{(B,1,1,T)} \wedge \mathrm{causal}_{(1,1,T,T)} "
    r"\;\rightarrow\; (B, 1, T, T) \;\xrightarrow{\text{broadcast}}\; (B, h, T, T)"
)
kind = choose(
    st.radio,
    "Which attention",
    "mask_kind",
    list(fm.MASK_KINDS),
    "decoder",
    fmt=fm.MASK_KINDS.get,
    horizontal=True,
)
attn = fa.attention_of(batch.trace, kind, 0)
q_rows = batch.src_tokens if kind == "encoder" else batch.tgt_tokens
k_rows = batch.tgt_tokens if kind == "decoder" else batch.src_tokens
h = attn.mask.shape[1]
st.caption(
    f"The mask this attention really used, {tuple(attn.mask.shape)}: one picture per sentence; all {h} heads "
    "share it. Rows are queries, columns keys; [PAD] rows are computed too, but nothing reads them."
)
st.plotly_chart(
    fm.merged_figure(attn.mask, q_rows, k_rows), width="stretch", config={"displayModeBar": False}
)

st.subheader("4. What masking does to the weights")
st.latex(
    r"\mathrm{softmax}\big(\mathrm{scores}\ \text{with}\ -\infty\ \text{where mask is False}\big)"
    r"\ \Rightarrow\ \text{weight} = 0\ \text{there; each row still sums to 1}"
)
a, b = st.columns(2)
with a:
    row = choose(st.selectbox, "Sentence", "mask_row", list(range(1, B + 1)), 1, "sentence") - 1
with b:
    head = choose(st.selectbox, "Head (layer 1)", "mask_head", list(range(1, h + 1)), 1, "head") - 1
steps = fa.head_steps(attn, head, row=row)
q_tok = fm.padded_tokens(q_rows, steps.mask.shape[0])[row]
k_tok = fm.padded_tokens(k_rows, steps.mask.shape[1])[row]
st.plotly_chart(
    fm.masking_figure(steps.scores, steps.mask, steps.weights, q_tok, k_tok),
    width="stretch",
    config={"displayModeBar": False},
)
masked_max, row_error = fm.mask_check(steps.weights, steps.mask)
st.caption(
    f"Sentence {row + 1}, head {head + 1}: the largest weight on a masked cell is {masked_max:g} "
    f"(exactly 0), and every row sums to 1 (largest deviation {row_error:.1e}, float rounding). "
    "Without the mask, [PAD] keys and future tokens would take a share of every row."
)
if pipe.kind == "random":
    st.caption("Random weights: the scores themselves are noise; what the mask does to them is not.")

for notice in notices:
    notice_box.warning(notice, icon=":material/warning:")
