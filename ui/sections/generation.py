"""A decoder-only model's generation by sampling, cached across sessions like every run.

    sampling = Sampling(temperature=0.8, top_k=40, top_p=0.9, seed=1, new_tokens=16)
    result = generation(settings, pipe, sampling)   # core.model.trace.DecodeResult, or None (a message shown)

One generation per (pipeline settings, sentence, token limit, sampling values): the same seed gives the
same tokens, so a student who shares a link sees the text the lecturer saw, computed once. ``_pipe`` is
not part of the key: it is found again from ``key`` (``ui.caches.cache``).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui import Settings, t
from ui.caches.budget import cached
from ui.caches.cache import cache_key, show_failure


@dataclass(frozen=True)
class Sampling:
    """How each next token is chosen (``core.tracing.generate.filter_logits``): temperature 0 is greedy; top_k
    and top_p None leave every token in."""

    temperature: float = 1.0
    top_k: int | None = None
    top_p: float | None = None
    seed: int = 0
    new_tokens: int = 16


# Each step keeps its trace; one shared object like every run (see ui.caches.cache._greedy).
@cached(max_entries=16)
def _generate(
    _pipe,
    key,
    weights: str,
    sentence: str,
    max_tokens: int,
    temperature: float,
    top_k: int | None,
    top_p: float | None,
    seed: int,
    new_tokens: int,
):
    from core.tracing.pipeline import generate

    return generate(
        _pipe,
        sentence,
        max_tokens,
        new_tokens=new_tokens,
        temperature=temperature,
        top_k=top_k,
        top_p=top_p,
        seed=seed,
    )


def generation(settings: Settings, pipe, sampling: Sampling):
    """The sidebar's sentence continued by ``pipe`` (a decoder-only model) as ``sampling`` says, step by
    step (``core.tracing.pipeline.generate``); None after a message when it failed: never a traceback."""
    s = sampling
    args = (
        pipe,
        cache_key(settings),
        pipe.weights,
        settings.sentence,
        settings.max_tokens,
        float(s.temperature),
        s.top_k,
        s.top_p,
        int(s.seed),
        int(s.new_tokens),
    )
    try:
        if _generate.has(*args):  # kept: no spinner (see ui.caches.cache.CachedParts._computed)
            return _generate(*args)
        with st.spinner(t("model.gen.spinner")):
            return _generate(*args)
    except Exception as exc:
        show_failure(exc, settings, "generate")
        return None
