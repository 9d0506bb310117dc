"""Cached model and runs: the model per configuration, a run per (configuration, input).

``st.cache_resource`` keeps one model object per ``PipelineSettings`` (frozen, hashable) and
shares it between sessions; ``st.cache_data`` keeps traces, bounded by ``max_entries``. A parameter
whose name starts with ``_`` is not part of a cache key: ``_pipe`` is found again from ``key``.

Nothing here raises into a page: a failure becomes a message and ``None``, never a traceback.
"""

from __future__ import annotations

import logging

import streamlit as st

from ui.settings import MAX_TOKENS, Settings, literal

log = logging.getLogger("glassbox.ui")


@st.cache_resource(max_entries=8, show_spinner="Building the model…")
def _load(key):
    from core.pipeline import load_pipeline

    return load_pipeline(key)


@st.cache_data(max_entries=64, show_spinner="Running the model…")
def _run(_pipe, key, sentence: str, target: str, max_tokens: int):
    from core.pipeline import run_pipeline

    return run_pipeline(_pipe, sentence, target, max_tokens=max_tokens)


def pipeline_available() -> bool:
    try:
        import core.pipeline  # noqa: F401
    except ImportError:
        return False
    return True


def get_pipeline(settings: Settings, quiet: bool = False):
    """The (cached) Pipeline for these settings, or None with a message on the page (unless quiet)."""
    if not pipeline_available():
        if not quiet:
            st.info("The model pipeline (core/pipeline.py) is not in this build yet: model views are empty.")
        return None
    try:
        if settings.weights == "session":
            return _session_pipeline(settings)
        return _load(settings.pipeline_settings())
    except Exception as exc:  # a page shows a message, never a traceback
        log.exception("load_pipeline failed for %s", settings)
        if not quiet:
            st.error(f"The model could not be built: {type(exc).__name__}: {literal(exc, 300)}")
        return None


def _session_pipeline(settings: Settings):
    """The pipeline around the model trained in this browser session (kept in its session state)."""
    from core.pipeline import pipeline_from_model

    state = st.session_state
    cached = state.get("_session_pipeline")
    if cached is not None and cached[0] == settings.session_tag:
        return cached[1]
    result = state["session_model"]
    m = result.metrics
    label = (
        f"Weights: trained in this session on the {result.task!r} task "
        f"({m.get('steps', '?')} steps, test token accuracy {m.get('test_token_acc', 0):.1%})"
    )
    pipe = pipeline_from_model(result.model, *result.vocabs, result.task, m, label=label)
    state["_session_pipeline"] = (settings.session_tag, pipe)
    return pipe


def get_run(settings: Settings, max_tokens: int = MAX_TOKENS):
    """The (cached) Run of the sidebar's sentence and target, or None with a message saying why."""
    if not settings.sentence.strip():
        st.info(
            "The sentence is empty: type a sentence in the sidebar (any language) to see the model at work."
        )
        return None
    pipe = get_pipeline(settings)
    if pipe is None:
        return None
    from core.pipeline import EmptyInput

    try:
        run = _run(pipe, settings.pipeline_settings(), settings.sentence, settings.target, max_tokens)
    except EmptyInput:
        st.info("The sentence is empty for the model (it has no tokens): type some text in the sidebar.")
        return None
    except Exception as exc:
        log.exception("run_pipeline failed for %s", settings)
        st.error(f"The model could not run on this text: {type(exc).__name__}: {literal(exc, 300)}")
        return None
    if getattr(run, "truncated", False):
        total = getattr(run, "total_tokens", "more")
        st.warning(
            f"The sentence has {total} tokens; the model sees only the first {len(run.src_tokens)} "
            f"(at most {max_tokens}, to keep every view legible)."
        )
    return run
