"""One name per thing: the small vocabularies that core, the settings, the pages and the texts share.

A ``StrEnum`` member *is* its string (``Weights.TRAINED == "trained"``), so the values travel through
URLs, cache keys and i18n keys unchanged, and a misspelt name fails where it is written.
"""

from __future__ import annotations

from enum import StrEnum


class Weights(StrEnum):
    """Which weights are on screen: the sidebar's choice, the pipeline's (after any fallback) and the
    key of every text that names them (``sidebar.weights.<value>``)."""

    TRAINED = "trained"  # the shipped 汉字→拼音 checkpoint (assets/pinyin.pt): task "pinyin"
    RANDOM = "random"  # freshly drawn from a seed: attention is noise, and every view says so
    SESSION = "session"  # trained on the Training page in this browser session: its task is chosen there
    # the small GPT trained here on English and Chinese text (assets/gpt.pt, core/training/language.py):
    # task "lm"
    GPT = "gpt"
    MINILM = "minilm"  # the pretrained all-MiniLM-L6-v2 encoder (sentence-transformers), optional extra
    # a model folder from disk (GPT-2, BERT or Llama family, core/loading); the sidebar's value is
    # "hf:<name>" (ui/folders/models.py), the pipeline's weights this kind and its ``name``
    HF = "hf"

