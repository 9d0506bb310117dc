"""The pages of the app, in reading order: app.py builds the navigation from this list."""

from __future__ import annotations

import streamlit as st

from i18n import DEFAULT_LANG, t

# (script, English title, icon, one-line description for the overview). Shown translated: the
# i18n keys are nav.<name>.title and nav.<name>.desc, <name> being the script's file name.
# The app's favicon, set before the navigation (app.py, ui.page_setup): with none, Streamlit shows the
# page's Material icon fetched from fonts.gstatic.com, and nothing may be fetched from outside the
# server (a lecture hall may be offline). An emoji the browser draws: no file, no request.
FAVICON = "🔍"

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
    (
        "pages/interventions.py",
        "Interventions",
        ":material/science:",
        "Switch heads off, patch one sentence into another, every layer's guess",
    ),
    ("pages/training.py", "Training", ":material/model_training:", "Train a small model live, then use it"),
    (
        "pages/lecture.py",
        "Lecture mode",
        ":material/co_present:",
        "The whole model, one large figure per screen; PageUp / PageDown to move",
    ),
]


def page_name(script: str) -> str:
    """ "pages/attention.py" -> "attention": the page's part of its i18n keys (and of its URL)."""
    return script.rsplit("/", 1)[-1].removesuffix(".py")


def navigation_pages(lang: str = DEFAULT_LANG) -> list:
    return [
        st.Page(
            script,
            title=t(f"nav.{page_name(script)}.title", lang),
            icon=icon,
            url_path=page_name(script),
            default=(i == 0),
        )
        for i, (script, _, icon, _) in enumerate(PAGES)
    ]


def page_links(skip: str | None = None, lang: str = DEFAULT_LANG) -> None:
    """A link to each page (with its description), e.g. under the overview diagram."""
    for script, _, icon, _ in PAGES:
        if script != skip:
            name = page_name(script)
            label = f"{t(f'nav.{name}.title', lang)} — {t(f'nav.{name}.desc', lang)}"
            st.page_link(script, label=label, icon=icon)
