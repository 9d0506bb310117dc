"""Cached model and runs: the model per configuration, a run per (configuration, input).

Each cache (``ui.budget.cached``) keeps one object per key, shared between sessions: one model per
``PipelineSettings`` (frozen, hashable), one run per input. Every cache of the server is bounded by one
budget in bytes (``GLASSBOX_CACHE_MB``, ``ui.budget``): storing a new entry drops the least recently used
ones, from any cache, until the total fits; each cache also keeps at most ``max_entries``. A run is read,
never changed: ``st.cache_data`` would hand every rerun its own copy, at the price of pickling the run
once and unpickling it on every rerun of every page (d_model=512, 6 layers: ~10 MB, 20-50 ms for a new
run and 6-15 ms a rerun in the app). tests/app/conftest.py checks after every app test that no cached
run was changed. A parameter whose name starts with ``_`` is not part of a cache key: ``_pipe`` is
found again from ``key``.

The pretrained all-MiniLM-L6-v2 (~90 MB) has fixed sizes: its key drops the sidebar's sizes
(:func:`cache_key`), so moving a size slider never loads a second copy.

Nothing here raises into a page: a failure becomes a message and ``None``, never a traceback.
"""

from __future__ import annotations

import logging

import streamlit as st

from ui.budget import cached
from ui.settings import Settings, literal, minilm_available
from ui.sidebar import t

log = logging.getLogger("glassbox.ui")


# A dropped pipeline's random weights go now (``Pipeline.release``), not when the collector finds the
# old runs that still name the pipeline. ``grows``: random weights are drawn after the pipeline is
# stored, part by part, by what reads them; measured again after each use until they are all drawn.
@cached(max_entries=8, on_release=lambda pipe: pipe.release(),
        grows=lambda pipe: not getattr(pipe, "drawn", True))
def _load(key):
    from core.pipeline import load_pipeline

    return load_pipeline(key)


# At most 16 runs, and the budget's bytes: a 512-token run of a d_model=512, 6-layer model holds ~475 MB
@cached(max_entries=16)
def _run(_pipe, key, kind: str, sentence: str, target: str, max_tokens: int):
    """``kind`` (what the pipeline really is) is part of the key: a pipeline that fell back to random
    weights must not be handed a run cached from the real one under the same settings."""
    from core.pipeline import run_pipeline

    return run_pipeline(_pipe, sentence, target, max_tokens=max_tokens)


@cached(max_entries=16)
def _source_run(_pipe, key, kind: str, sentence: str, max_tokens: int):
    """The encoder's input alone (``core.pipeline.source_run``); keyed like ``_run``."""
    from core.pipeline import source_run

    return source_run(_pipe, sentence, max_tokens=max_tokens)


@cached(max_entries=16)
def _encoder_trace(_pipe, key, kind: str, sentence: str, max_tokens: int, norm: str | None):
    from core.pipeline import encoder_trace

    return encoder_trace(_pipe, sentence, max_tokens=max_tokens, norm=norm)


def get_encoder_trace(settings: Settings, pipe, norm: str | None = None):
    """``core.pipeline.encoder_trace`` of the sidebar's sentence (the run's encoder numbers, no decoder
    drawn or run; ``norm``: the other LayerNorm placement's, same weights), cached per model and input.
    For views that show the encoder alone; the page has checked the sentence (``get_run``) first."""
    return _encoder_trace(pipe, cache_key(settings), getattr(pipe, "kind", ""), settings.sentence,
                          settings.max_tokens, norm)


def cache_key(settings: Settings):
    """The ``PipelineSettings`` that key the caches: for MiniLM only the weights matter.

    (Without the package the pipeline falls back to random weights, which do use the sizes.)
    """
    key = settings.pipeline_settings()
    if key.weights == "minilm" and minilm_available():
        return type(key)(weights="minilm")
    return key


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
            st.info(t("run.no_pipeline"))
        return None
    try:
        if settings.weights == "session":
            return _session_pipeline(settings)
        with st.spinner(t("run.building")):
            return _load(cache_key(settings))
    except Exception as exc:  # a page shows a message, never a traceback
        log.exception("load_pipeline failed for %s", settings)
        if not quiet:
            st.error(t("run.build_failed", error=f"{type(exc).__name__}: {literal(exc, 300)}"))
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


def get_sentence_pipeline(settings: Settings, needs_decoder: bool = False):
    """The (cached) Pipeline for the sidebar's sentence, or None with a message saying why (an empty
    sentence, no pipeline, or an encoder-only model on a page that ``needs_decoder``). For a page
    that runs the sentence its own way (Masks: in a padded batch); the others call :func:`get_run`."""
    if not settings.sentence.strip():
        st.info(t("run.empty_sentence"))
        return None
    pipe = get_pipeline(settings)
    if pipe is None:
        return None
    if needs_decoder and not getattr(pipe.config, "decoder", True):
        st.info(t("run.encoder_only", model=getattr(pipe, "name", "") or "This model"))
        return None
    return pipe


def show_failure(exc: Exception, settings: Settings, what: str = "run_pipeline") -> None:
    """A model run that failed: logged with its traceback, shown on the page as one message."""
    log.exception("%s failed for %s", what, settings)
    st.error(t("run.failed", error=f"{type(exc).__name__}: {literal(exc, 300)}"))


def run_target(settings: Settings) -> str:
    """The target sentence a run reads: the sidebar's, but none for MiniLM (an encoder only)."""
    return "" if cache_key(settings).weights == "minilm" else settings.target


def get_run(settings: Settings, max_tokens: int | None = None, needs_decoder: bool = False,
            source_only: bool = False):
    """The (cached) Run of the sidebar's sentence and target, or None with a message saying why.

    ``max_tokens`` defaults to the sidebar's "Tokens shown". A page that draws the decoder passes
    ``needs_decoder=True``: with an encoder-only model (all-MiniLM-L6-v2) it gets None and a message.
    ``source_only=True``: a ``core.pipeline.SourceRun`` (tokens and the encoder's input, no layer run;
    random weights draw only their embedding table), for pages that show nothing after the embeddings.
    """
    if max_tokens is None:
        max_tokens = settings.max_tokens
    pipe = get_sentence_pipeline(settings, needs_decoder)
    if pipe is None:
        return None
    from core.pipeline import EmptyInput

    key = cache_key(settings)
    target = run_target(settings)
    try:
        with st.spinner(t("run.running")):
            kind = getattr(pipe, "kind", "")
            if source_only:
                run = _source_run(pipe, key, kind, settings.sentence, max_tokens)
            else:
                run = _run(pipe, key, kind, settings.sentence, target, max_tokens)
    except EmptyInput:
        st.info(t("run.no_tokens"))
        return None
    except Exception as exc:
        show_failure(exc, settings)
        return None
    if getattr(run, "truncated", False):
        total = getattr(run, "total_tokens", "more")
        st.warning(t("run.truncated", total=total, shown=len(run.src_tokens), limit=max_tokens))
    return run
