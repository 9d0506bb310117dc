"""Interventions on the pages: the model with parts switched off beside the intact one (the Overview).

The parts are the settings' (``ablate=``); the intact run is the same sentence with nothing off, from
the same caches (the weights are loaded once: ``ui.caches.cache.get_pipeline``).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from core.interventions.runs import answer_probs, copy_losses
from ui.caches.budget import cached
from ui.caches.cache import cache_key, get_pipeline, get_run
from ui.page.ablation import parts_text
from ui.page.lang import t
from ui.page.settings import Settings


@cached(max_entries=8)
def _copy_losses(_pipe, key):
    """``core.interventions.runs.copy_losses`` of a pipeline, by its settings (parts off included)."""
    return copy_losses(_pipe)


def intact_settings(settings: Settings) -> Settings:
    return replace(settings, ablate="", ablate_mode="zero")


def compare_with_intact(settings: Settings, run) -> None:
    """With parts switched off: the intact model's answer beside this one's, token by token with the
    probability each gave, the continuation a language model writes, and a language model's loss on
    the second copy of a repeated random sequence. In a container keyed ``ablation_compare``."""
    if not settings.ablate or run is None or run.config.stack == "encoder":
        return
    intact = get_run(intact_settings(settings))
    if intact is None:
        return
    with st.container(key="ablation_compare"):
        st.subheader(t("interventions.compare.title"))
        mine, theirs = answer_probs(run), answer_probs(intact)
        changed = sum(a[0] != b[0] for a, b in zip(mine, theirs, strict=False)) + abs(len(mine) - len(theirs))
        st.caption(t("interventions.compare.same") if not changed else
                   t("interventions.compare.differs", n=changed, total=max(len(mine), len(theirs))))
        off = t("interventions.compare.ablated", parts=parts_text(settings, run.config))
        left, right = st.columns(2)
        for column, title, answer, whole in ((left, t("interventions.compare.intact"), theirs, intact),
                                             (right, off, mine, run)):
            with column:
                st.markdown(f"**{title}**")
                _answer_table(answer, whole)
        _copy_loss_rows(settings, run)


def _answer_table(answer: list[tuple[str, float]], run) -> None:
    """The answer, written out, then each token with its probability (a table: user text is never HTML)."""
    st.code(" ".join(token for token, _ in answer) or "∅", language=None, wrap_lines=True)
    if run.answer_kind == "next":
        decoding = run.decoding
        if decoding is not None:
            start = len(run.src_tokens)
            written = [run.pipe.tgt_labels[i] for i in decoding.tokens[0, start:].tolist()]
            st.caption(t("interventions.compare.generated", n=len(written)))
            st.code("".join(written).replace("␣", " ").replace("⏎", "\n") or "∅", language=None,
                    wrap_lines=True)
    st.dataframe(
        {t("interventions.compare.answer"): [token for token, _ in answer],
         t("interventions.compare.prob"): [round(p, 4) for _, p in answer]},
        hide_index=False, width="stretch",
    )


def _copy_loss_rows(settings: Settings, run) -> None:
    """A language model's loss on each copy of a random sequence written twice, intact and with parts off."""
    pipe = get_pipeline(settings, quiet=True)
    intact_pipe = get_pipeline(intact_settings(settings), quiet=True)
    if pipe is None or intact_pipe is None or pipe.config.stack != "decoder":
        return
    with st.spinner(t("run.running")):
        ours = _copy_losses(pipe, cache_key(settings))
        theirs = _copy_losses(intact_pipe, cache_key(intact_settings(settings)))
    from core.training.language import PROBE

    st.markdown(f"**{t('interventions.compare.loss')}**", help=t("interventions.compare.loss.help",
                                                                  n=PROBE["length"]))
    left, right = st.columns(2)
    left.metric(t("interventions.compare.intact"), t("interventions.compare.loss.value", loss=theirs[1],
                                                     first=theirs[0]))
    right.metric(t("interventions.compare.ablated", parts=parts_text(settings, run.config)),
                 t("interventions.compare.loss.value", loss=ours[1], first=ours[0]),
                 delta=f"{ours[1] - theirs[1]:+.2f}", delta_color="inverse")
