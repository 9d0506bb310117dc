"""Showing user text safely: as text, never as Markdown or HTML.

User text goes to ``st.code``/``st.text`` (or plotly, through ``figures.drawing.style.escape_label``), never
to ``st.markdown``/``st.write``: ``<script>`` and ``**bold**`` must appear exactly as typed.
"""

from __future__ import annotations

import streamlit as st

from ui.page.lang import t


def show_text(text: str, label: str | None = None) -> None:
    """User text, verbatim, wrapped, in a code block (which escapes everything)."""
    if label:
        st.caption(label)
    st.code(text if text else t("common.empty"), language=None, wrap_lines=True)


def show_tokens(tokens: list[str], label: str | None = None) -> None:
    """Tokens as a bracketed list, verbatim (repr shows spaces and control characters)."""
    if label:
        st.caption(label)
    shown = " ".join(f"[{token}]" for token in tokens) if tokens else t("common.no_tokens")
    st.code(shown, language=None, wrap_lines=True)


def show_answer(run, key: str) -> None:
    """The model's output for the sentence (``core.tracing.pipeline.WholeRun.answer``), labelled by where it
    comes
    from: the pinyin it wrote, or the next token it expects after each decoder position. In a container
    keyed ``key``. Nothing for no run (None) or a run without a decoder (an encoder has no answer)."""
    if run is None or not run.trace.decoder:
        return
    with st.container(key=key):
        kind = run.answer_kind
        if kind == "greedy":
            st.caption(t("answer.greedy"))
            st.code(" ".join(run.answer) or t("common.no_tokens"), language=None, wrap_lines=True)
        else:
            show_tokens(run.answer, t(f"answer.{kind}"))
