"""Overview: the whole pipeline on one diagram, with the current sizes and real tensor shapes."""

import streamlit as st

import ui
from figures.overview import DiagramSizes, pipeline_diagram

settings = ui.page_setup("nav.overview.title")

st.caption(
    "“Attention Is All You Need” (Vaswani et al., 2017): an encoder reads the sentence, a decoder "
    "writes the output one token at a time while attending to the encoder's memory."
)
run = ui.get_run(settings)
pipe = ui.get_pipeline(settings) if run is not None else None

given = bool(settings.target.strip())
if given:
    target_source, target_note = "given target", settings.target
elif pipe is not None and pipe.kind == "random":
    target_source = "the sentence"
    target_note = (
        "(empty: random weights have no output worth feeding back, so the decoder reads the sentence)"
    )
else:
    target_source, target_note = "greedy output", "(empty: the decoder is fed the model's own greedy output)"

if run is not None:
    src_tokens, tgt_tokens = list(run.src_tokens), list(run.tgt_tokens)
    config = pipe.config
    sizes = DiagramSizes(
        d_model=config.d_model,
        num_heads=config.num_heads,
        num_layers=config.num_layers,
        d_ff=config.d_ff,
        S=len(src_tokens),
        T=len(tgt_tokens),
        src_vocab=config.src_vocab_size,
        tgt_vocab=config.tgt_vocab_size,
        target_source=target_source,
    )
else:
    src_tokens, tgt_tokens = [], []
    # Without a run the lengths are unknown: the diagram still shows every size from the sidebar.
    sizes = DiagramSizes(
        d_model=settings.d_model,
        num_heads=settings.num_heads,
        num_layers=settings.num_layers,
        d_ff=settings.d_ff_value,
        S=0,
        T=0,
    )

st.plotly_chart(pipeline_diagram(sizes), width="stretch", config={"displayModeBar": False})

left, right = st.columns(2)
with left:
    ui.show_text(settings.sentence, "Sentence (as typed)")
    if src_tokens:
        ui.show_tokens(src_tokens, f"{len(src_tokens)} source tokens")
with right:
    ui.show_text(target_note, "Target")
    if tgt_tokens:
        ui.show_tokens(tgt_tokens, f"{len(tgt_tokens)} target tokens")

st.subheader("The stages, one page each")
ui.page_links(skip="pages/overview.py")
