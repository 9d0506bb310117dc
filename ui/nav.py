"""The pages of the app, in reading order: app.py builds the navigation from this list."""

from __future__ import annotations

import streamlit as st

# (script, title, icon, one-line description for the overview)
PAGES: list[tuple[str, str, str, str]] = [
    ("pages/overview.py", "Overview", ":material/account_tree:", "The whole pipeline with its tensor shapes"),
    ("pages/tokenization.py", "Tokenization", ":material/content_cut:", "Text → tokens → ids (BPE)"),
    ("pages/embeddings.py", "Embeddings", ":material/scatter_plot:", "ids → vectors, scaled by √d_model"),
    ("pages/positional.py", "Positional encoding", ":material/waves:", "sin/cos of position"),
    ("pages/attention.py", "Attention", ":material/hub:", "softmax(QKᵀ/√d_k)·V, per head"),
    ("pages/masks.py", "Masks", ":material/grid_on:", "Padding and causal masks"),
    (
        "pages/model.py",
        "Full model",
        ":material/stacks:",
        "Encoder, decoder and the next-token probabilities",
    ),
    ("pages/training.py", "Training", ":material/model_training:", "Train a small model live, then use it"),
]


def navigation_pages() -> list:
    return [
        st.Page(script, title=title, icon=icon, default=(i == 0))
        for i, (script, title, icon, _) in enumerate(PAGES)
    ]


def page_links(skip: str | None = None) -> None:
    """A link to each page (with its description), e.g. under the overview diagram."""
    for script, title, icon, description in PAGES:
        if script != skip:
            st.page_link(script, label=f"{title} — {description}", icon=icon)
