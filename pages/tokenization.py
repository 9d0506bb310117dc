"""Tokenization: BPE learned merge by merge (classic ``</w>`` and GPT-2 byte-level), ids, special tokens,
and WordPiece (BERT's tokenizer, read by the pretrained all-MiniLM-L6-v2) beside byte-level BPE.
The sections: ui/sections/tokenization.py; URL values, the film's play button and the training text:
ui/sections/tokenization_tables.py."""

import streamlit as st

import ui
from core.names import Weights
from ui.sections import tokenization_tables as ut
from ui.sections.tokenization import (
    film_section,
    ids_section,
    merges_section,
    model_section,
    own_tokenizer,
    textbook_section,
    train,
    versus_section,
    wordpiece_section,
)

settings = ui.page_setup("nav.tokenization.title")
lang, sentence = settings.lang, settings.sentence
minilm = settings.weights == Weights.MINILM
pipe = None if minilm else ui.get_pipeline(settings, quiet=True)  # quiet: no pipeline, no section
own = own_tokenizer(pipe)  # a model folder, or a language model trained here: its own tokenizer first
st.caption(ui.t("tokenization.caption.minilm" if minilm else "tokenization.caption"))
if minilm:
    st.subheader(ui.t("tokenization.wp.title.model"))
    wordpiece_section(sentence, lang)
    st.divider()
if own:
    model_section(pipe, sentence, lang)
    st.divider()

choice = ut.choose_training(lang)
tokenizers = train(ut.training_text(choice.source, lang), choice, lang)
film_section(tokenizers, sentence)
textbook_section(choice.source, lang)
merges_section(tokenizers)
versus_section(tokenizers, sentence)
ids_section(tokenizers, sentence)
if not own:
    model_section(pipe, sentence, lang)
if not minilm:
    with st.expander(ui.t("tokenization.wp.title.compare")):
        wordpiece_section(sentence, lang)
