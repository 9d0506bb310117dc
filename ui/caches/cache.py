"""The server's models and runs, kept for every session under one byte budget (``ui.caches.budget``).

Each cache (``ui.caches.budget.cached``) keeps one object per key, shared between sessions: one pipeline (its
model) per ``PipelineSettings`` (frozen, hashable), one run part per input, the Tokenization page's
tokenizers and texts. Storing a new entry drops the least recently used ones, from any cache, until the
total fits ``GLASSBOX_CACHE_MB``; each cache also keeps at most ``max_entries``. ``core`` caches no model
or run of its own: this is the one place they are kept. A run is read, never changed (one object, not
a copy per rerun as ``st.cache_data`` would hand out; tests/app/conftest.py checks that no page changed
one). A parameter whose name starts with ``_`` is not part of a cache key: ``_pipe`` is found again
from ``key``.

Models with fixed sizes (all-MiniLM-L6-v2, the small GPT) are keyed without the sidebar's sizes
(:func:`cache_key`), so moving a size slider never loads a second copy. Nothing here raises into a
page: a failure becomes a message and ``None``, never a traceback.
"""

from __future__ import annotations

import logging
import threading

import streamlit as st

from core.names import Weights
from ui.caches.budget import cached
from ui.page.lang import t
from ui.page.settings import Settings, gpt_available, literal, minilm_available

log = logging.getLogger("glassbox.ui")


# A dropped pipeline's random weights go now (``Pipeline.release``), not when the collector finds the
# old runs that still name the pipeline. ``grows``: random weights are drawn after the pipeline is
# stored, part by part, by what reads them; measured again after each use until they are all drawn.
@cached(max_entries=8, on_release=lambda pipe: pipe.release(),
        grows=lambda pipe: not pipe.drawn)
def _load(key, _progress=None):
    """``_progress(fraction, what)``: hears of a model folder's load
    (``ui.folders.hf_pipeline.load_model``)."""
    if key.weights == Weights.HF:
        from ui.folders.hf_pipeline import load_model

        return load_model(key.model, _progress)
    from core.tracing.pipeline import load_pipeline

    return load_pipeline(key)


# A model folder that failed to load, by name: (when, the exception), so that a rerun does not read a
# broken folder's weights again; tried again after ui.folders.models.SCAN_SECONDS (a fixed folder shows then).
_FAILED: dict[str, tuple[float, Exception]] = {}


# At most 16 runs, and the budget's bytes: a 512-token run of a d_model=512, 6-layer model holds ~475 MB
@cached(max_entries=16)
def _run(_pipe, key, weights: str, sentence: str, target: str, max_tokens: int):
    """``weights`` (what the pipeline really shows) is part of the key: a pipeline that fell back to random
    weights must not be handed a run cached from the real one under the same settings."""
    from core.tracing.pipeline import run_pipeline

    return run_pipeline(_pipe, sentence, target, max_tokens=max_tokens)


@cached(max_entries=16)
def _source_trace(_pipe, key, weights: str, sentence: str, max_tokens: int):
    """The encoder's input alone (``core.tracing.pipeline.source_trace``); keyed like ``_run``."""
    from core.tracing.pipeline import source_trace

    return source_trace(_pipe, sentence, max_tokens=max_tokens)


@cached(max_entries=16)
def _encoder_trace(_pipe, key, weights: str, sentence: str, max_tokens: int, norm: str | None):
    """The encoder alone (``core.tracing.pipeline.encoder_trace``; ``norm``: the other residual
    arrangement)."""
    from core.tracing.pipeline import encoder_trace

    return encoder_trace(_pipe, sentence, max_tokens=max_tokens, norm=norm)


# A decoding keeps each step's trace; kept as one shared object like every run: ``st.cache_data``
# would pickle a copy of every step's trace and unpickle it on every rerun.
@cached(max_entries=16)
def _greedy(_pipe, key, weights: str, sentence: str, max_tokens: int):
    """Greedy decoding of the sentence (``core.tracing.pipeline.greedy_sentence``), for runs that do not
    decode."""
    from core.tracing.pipeline import greedy_sentence

    return greedy_sentence(_pipe, sentence, max_tokens)


class CachedParts:
    """The parts of a ``core.tracing.run.SentenceRun``, each from the caches above (shared by every
    session). A
    part that fails shows one message and stops the script: never a traceback on the page."""

    def __init__(self, settings: Settings, pipe, quiet: bool = False) -> None:
        self.settings, self.pipe, self.quiet = settings, pipe, quiet
        s = settings
        self.key = (pipe, cache_key(s), pipe.weights, s.sentence)

    def _computed(self, what: str, part, *args):
        """``part(*self.key, *args)``; a spinner while it is computed (none for a kept part: a spinner
        costs a thread and messages on every rerun of every follower). Quiet (no page): it raises."""
        if self.quiet:
            return part(*self.key, *args)
        try:
            if part.has(*self.key, *args):
                return part(*self.key, *args)
            with st.spinner(t("run.running")):
                return part(*self.key, *args)
        except Exception as exc:
            show_failure(exc, self.settings, what)
            st.stop()

    def whole(self):
        target, max_tokens = run_target(self.settings), self.settings.max_tokens
        return self._computed("run_pipeline", _run, target, max_tokens)

    def source(self):
        return self._computed("source_trace", _source_trace, self.settings.max_tokens)

    def encoder(self, norm: str | None):
        return self._computed("encoder_trace", _encoder_trace, self.settings.max_tokens, norm)

    def greedy(self):
        return self._computed("greedy_sentence", _greedy, self.settings.max_tokens)


def cache_key(settings: Settings):
    """The ``PipelineSettings`` that key the caches: for MiniLM and the small GPT only the weights matter.

    (Without the package the pipeline falls back to random weights, which do use the sizes.)
    """
    key = settings.pipeline_settings()
    off = dict(ablate=key.ablate, ablate_mode=key.ablate_mode)  # parts switched off: other runs
    if key.weights == Weights.MINILM and minilm_available():
        return type(key)(weights=Weights.MINILM, **off)
    if key.weights == Weights.GPT and gpt_available():
        return type(key)(weights=Weights.GPT, **off)
    return key


def intact_key(key):
    """The key of the pipeline with nothing switched off, which an ablated one is made from (the
    weights are loaded once, whatever is switched off)."""
    from dataclasses import replace

    return replace(key, ablate="", ablate_mode="zero") if key.ablate else key


def pipeline_available() -> bool:
    try:
        import core.tracing.pipeline  # noqa: F401
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
        if settings.weights == Weights.SESSION:
            return _with_parts_off(_session_pipeline(settings), settings)
        key = intact_key(cache_key(settings))
        if _load.has(key):  # kept: no spinner (see CachedParts._computed)
            return _with_parts_off(_load(key), settings)
        if key.weights == Weights.HF:
            return _with_parts_off(_model_folder(key), settings)
        with st.spinner(t("run.building")):
            return _with_parts_off(_load(key), settings)
    except ModelFailed:
        return None
    except Exception as exc:  # a page shows a message, never a traceback
        log.exception("load_pipeline failed for %s", settings)
        if not quiet:
            st.error(t("run.build_failed", error=f"{type(exc).__name__}: {literal(exc, 300)}"))
        return None


def _with_parts_off(pipe, settings: Settings):
    """``pipe`` with the parts ``settings.ablate`` names switched off (``core.interventions.runs.ablated``,
    kept with the pipeline); the mean of a part is taken once, under a spinner."""
    if not settings.ablate:
        return pipe
    from core.interventions.runs import ablated

    key = ("ablated", settings.ablate, settings.ablate_mode)
    if key in pipe.twins or settings.ablate_mode != "mean" or "reference-means" in pipe.twins:
        return ablated(pipe, settings.ablate, settings.ablate_mode)
    with st.spinner(t("run.building")):
        return ablated(pipe, settings.ablate, settings.ablate_mode)


class ModelFailed(Exception):
    """A model folder could not be loaded: ``model_failure`` says why."""


def _model_folder(key):
    """A model folder's pipeline, loaded under a progress bar; a failure is kept (:data:`_FAILED`) and
    raised as :class:`ModelFailed`."""
    import time

    from ui.folders.models import SCAN_SECONDS

    failed = _FAILED.get(key.model)
    if failed is not None and time.monotonic() - failed[0] < SCAN_SECONDS:
        raise ModelFailed(key.model)
    bar = st.progress(0.0, text=t("models.loading", name=key.model, what="config.json"))

    def progress(fraction: float, what: str) -> None:
        bar.progress(min(max(fraction, 0.0), 1.0), text=t("models.loading", name=key.model, what=what))

    try:
        return _load(key, progress)
    except Exception as exc:  # ModelChoiceError, ModelUnusable, or anything reading the files raised
        log.warning("model folder %s could not be loaded: %s", key.model, exc)
        if len(_FAILED) >= 32:
            _FAILED.clear()
        _FAILED[key.model] = (time.monotonic(), exc)
        raise ModelFailed(key.model) from exc
    finally:
        bar.empty()


def model_failure(value: str, lang: str) -> str | None:
    """Why the model folder ``value`` could not be loaded (in ``lang``), or None if it did not fail."""
    from ui.page.settings import model_refusal

    failed = _FAILED.get(value)
    return None if failed is None else model_refusal(failed[1], lang)


def _session_pipeline(settings: Settings):
    """The pipeline around the model trained in this browser session (kept in its session state)."""
    from core.tracing.pipeline import pipeline_from_model

    state = st.session_state
    cached = state.get("_session_pipeline")
    if cached is not None and cached[0] == settings.session_tag:
        return cached[1]
    result = state["session_model"]
    m = result.metrics
    if result.task == "lm":  # a language model trained on the Training page
        from core.tracing.pipeline import gpt_pipeline

        label = (f"Weights: a small GPT trained in this session ({m.get('steps', '?')} steps, "
                 f"test perplexity {m['test']['perplexity']:.1f})")
        pipe = gpt_pipeline(settings.pipeline_settings(), result.model, result.tokenizer, m,
                            weights=Weights.SESSION, label=label)
        state["_session_pipeline"] = (settings.session_tag, pipe)
        return pipe
    label = (
        f"Weights: trained in this session on the {result.task!r} task "
        f"({m.get('steps', '?')} steps, test token accuracy {m.get('test_token_acc', 0):.1%})"
    )
    pipe = pipeline_from_model(result.model, *result.vocabs, result.task, m, label=label,
                               weights=Weights.SESSION)
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
    if needs_decoder and pipe.config.stack == "encoder":
        st.info(t("run.encoder_only", model=pipe.name or "This model"))
        return None
    return pipe


def show_failure(exc: Exception, settings: Settings, what: str = "run_pipeline") -> None:
    """A model run that failed: logged with its traceback, shown on the page as one message."""
    log.exception("%s failed for %s", what, settings)
    st.error(t("run.failed", error=f"{type(exc).__name__}: {literal(exc, 300)}"))


def run_target(settings: Settings) -> str:
    """The target sentence a run reads: the sidebar's, but none for MiniLM (an encoder only) or a model
    folder (one stack reads the sentence)."""
    return "" if cache_key(settings).weights in (Weights.MINILM, Weights.HF, Weights.GPT) else settings.target


def quiet_run(settings: Settings):
    """The run ``get_run`` gives, from the same caches, for code that draws no page (the lecture hall's
    slides): nothing is shown, a failure raises. Weights trained in a session are that session's only."""
    from core.tracing.run import SentenceRun

    if settings.weights == Weights.SESSION:
        raise ValueError("weights trained in a browser session are that session's only")
    if not settings.sentence.strip():
        raise ValueError("the sentence is empty")
    key = cache_key(settings)
    pipe = _load(intact_key(key))
    if settings.ablate:  # (no spinner: no page)
        from core.interventions.runs import ablated

        pipe = ablated(pipe, settings.ablate, settings.ablate_mode)
    return SentenceRun(pipe, settings.sentence, run_target(settings), settings.max_tokens,
                       parts=CachedParts(settings, pipe, quiet=True))


def get_run(settings: Settings, needs_decoder: bool = False):
    """The run of the sidebar's sentence and target (a ``core.tracing.run.SentenceRun``: each part is
    computed when a
    view first reads it, from caches shared by every session), or None with a message saying why.

    A page that draws the decoder passes ``needs_decoder=True``: with an encoder-only model
    (all-MiniLM-L6-v2) it gets None and a message.
    """
    pipe = get_sentence_pipeline(settings, needs_decoder)
    if pipe is None:
        return None
    from core.tracing.pipeline import EmptyInput
    from core.tracing.run import SentenceRun

    try:
        run = SentenceRun(pipe, settings.sentence, run_target(settings), settings.max_tokens,
                      parts=CachedParts(settings, pipe))
    except EmptyInput:
        st.info(t("run.no_tokens"))
        return None
    except Exception as exc:
        show_failure(exc, settings)
        return None
    if run.truncated:
        st.warning(t("run.truncated", total=run.total_tokens, shown=len(run.src_tokens),
                     limit=settings.max_tokens))
    return run


# -- the Tokenization page's tokenizers ---------------------------------------------------------------
# A BPE training is kept like a run: one shared tokenizer per (text, merges, kind, plan), in the
# server's cache budget. The bytes of an upload do not bound the work of training on it (that grows
# with merges × the length of each word): the page plans each training first (``plan_bpe``, within a
# budget of ``core.tokenizers.bpe.training_work`` units) and trains as the plan says (``trained_bpe``).

BIG_TEXT = 100_000  # characters: a training on more waits for BIG_TRAINING (the shipped files: 80 KB)
# One big training at a time per server process: a training holds the GIL for its duration, so two at
# once would halve what every other session's page gets.
BIG_TRAINING = threading.Lock()


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@cached(max_entries=16)
def _bpe(text_hash: str, merges: int, kind: str, chars: int, max_word: int | None, _text: str):
    """Keyed by the text's hash (``_text`` is not hashed again), merges, kind and the plan's limits.
    A large text waits for the server's one big training at a time."""
    from core.tokenizers.bpe import BPETokenizer

    def train():
        return BPETokenizer.train(_text[:chars], merges, byte_level=(kind == "byte"), max_word=max_word)

    if chars <= BIG_TEXT:
        return train()
    with BIG_TRAINING:
        return train()


def trained_bpe(text: str, merges: int, kind: str, work=None):
    """The ``BPETokenizer`` of ``kind`` ("byte" or "classic") trained on ``text`` as ``work``
    (a ``TrainingWork`` plan) says; by default on the whole text (the page's small texts)."""
    chars, max_word = (len(text), None) if work is None else (work.chars, work.max_word)
    with st.spinner(t("tokenization.training")):
        return _bpe(_digest(text), merges, kind, chars, max_word, text)




@cached(max_entries=32)
def _plan(text_hash: str, merges: int, kind: str, budget: int, _text: str):
    from core.tokenizers.bpe import plan_training

    return plan_training(_text, merges, kind == "byte", budget)


def plan_bpe(text: str, merges: int, kind: str, budget: int):
    """``core.tokenizers.bpe.plan_training`` (a ``TrainingWork``), once per text, merges, kind and budget."""
    return _plan(_digest(text), merges, kind, budget, text)


@cached(max_entries=2)
def corpus_text(everything: bool = False) -> str:
    """en_zh.txt (English paragraphs and their Chinese versions), or every shipped corpus file."""
    from pathlib import Path

    corpus = Path(__file__).resolve().parents[2] / "assets" / "corpus"
    paths = sorted(corpus.glob("*.txt")) if everything else [corpus / "en_zh.txt"]
    return "\n".join(path.read_text(encoding="utf-8") for path in paths)


@cached(max_entries=1)
def wordpiece_tokenizer():
    """all-MiniLM-L6-v2's WordPiece (30,522 tokens), or None without the package."""
    from core.loading.bert import minilm_tokenizer

    try:
        return minilm_tokenizer()
    except (ImportError, OSError, ValueError):
        return None


def model_bpe():
    """Our byte-level BPE as the random-weights model reads it (1,000 merges on the shipped corpus,
    learned once per process by ``core.tracing.pipeline.corpus_tokenizer``)."""
    from core.tracing.pipeline import corpus_tokenizer

    return corpus_tokenizer()


# -- the Masks page's padded batch --------------------------------------------------------------------
# One shared object in the server's cache budget, not st.cache_data: the page only reads the batch, and
# cache_data would pickle it when stored and hand every rerun its own unpickled copy.


@cached(max_entries=16)
def _batch(_pipe, key, sentences: tuple[str, ...], encoder: bool, layers: int | None, max_tokens: int):
    """``core.tracing.batch.run_batch`` (``encoder``: an encoder-only model, part of the key)."""
    from core.tracing.batch import run_batch

    return run_batch(_pipe, list(sentences), max_tokens=max_tokens, layers=layers)


def batch_of(settings: Settings, pipe, sentences: list[str], attn_kind: str, max_tokens: int):
    """The padded batch of ``sentences`` (each cut at ``max_tokens``), traced as far as the attention
    of ``attn_kind`` (layer 1) needs: the encoder's and the decoder's self-attention of the first layer
    read nothing past it, so only that layer is run; cross-attention reads the whole encoder's output.
    Raises what ``run_batch`` raises (``EmptyInput`` for a sentence with no token)."""
    encoder_only = pipe.config.stack == "encoder"
    layers = None if attn_kind == "cross" else 1
    return _batch(pipe, cache_key(settings), tuple(sentences), encoder_only, layers, max_tokens)
