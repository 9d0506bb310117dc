"""Induction heads on the Attention page: every head's scores
(``core.training.language.induction_probe``, measured once per model and shared by every session),
its role (``core.teaching.induction.head_roles``), and the buttons that put a repeated sequence in the
sidebar's sentence or switch to the small GPT.

    probe = head_probe(pipe, settings)     # None unless the model on screen is decoder-only
    head_label(probe, layer, head, lang)   # "2 · induction (PM 0.71)"
"""

from __future__ import annotations

import functools
import itertools
import logging
from dataclasses import dataclass

import streamlit as st

from core.names import Weights
from core.teaching.induction import (
    INDUCTION_MIN_COPYING,
    INDUCTION_MIN_PM,
    PREVIOUS_MIN_PT,
    head_roles,
    repeated_text,
)
from i18n import t as _t
from ui import Settings, t
from ui.caches.budget import cached
from ui.caches.cache import cache_key
from ui.page.lang import STORE
from ui.page.settings import gpt_available, literal, validate
from ui.page.sidebar import NOTICES, SENTENCE_OWN, SESSION_MODEL
from ui.page.tables import show_table

log = logging.getLogger("glassbox.ui")

# Tokens per copy: both copies fit the default 64 tokens, and the layers × heads grid draws up to
# figures.attention.GRID_POOL_MAX = 32 tokens one cell each, so its stripe is not pooled away.
REPEAT_LENGTH = 16
_SEEDS = itertools.count(1)  # each click draws another sequence; the sentence itself goes in the URL


@dataclass(frozen=True)
class HeadProbe:
    """Every head's scores (layers × heads lists) and role, and how they were measured."""

    prefix_matching: list[list[float]]
    previous_token: list[list[float]]
    copying: list[list[float]]
    roles: list[list[str]]
    length: int  # random tokens per copy
    batch: int  # sequences measured
    loss_first_copy: float
    loss_second_copy: float

    def induction_heads(self) -> list[tuple[int, int]]:
        """(layer, head) from 0 of every induction head, the strongest prefix matching first."""
        roles = enumerate(self.roles)
        found = [(i, j) for i, row in roles for j, role in enumerate(row) if role == "induction"]
        return sorted(found, key=lambda lh: -self.prefix_matching[lh[0]][lh[1]])


# Keyed by the model's settings, the weights on screen and a session model's tag: the probe reads the
# weights only (a 12-layer model folder takes seconds), never the sentence.
@cached(max_entries=8)
def _probe(_pipe, key, weights: str, tag: str) -> HeadProbe:
    import torch

    from core.training.language import induction_probe

    with torch.no_grad():
        p = induction_probe(_pipe.model)
    roles = head_roles(p["prefix_matching"], p["previous_token"], p["copying"])
    return HeadProbe(
        p["prefix_matching"],
        p["previous_token"],
        p["copying"],
        roles,
        p["length"],
        p["batch"],
        p["loss_first_copy"],
        p["loss_second_copy"],
    )


def head_probe(pipe, settings: Settings) -> HeadProbe | None:
    """The heads of the model on screen, measured (a spinner the first time); None unless decoder-only,
    or (with a message) when the probe fails: a page shows no traceback."""
    if pipe.config.stack != "decoder":
        return None
    args = (pipe, cache_key(settings), str(pipe.weights), settings.session_tag)
    try:
        if _probe.has(*args):
            return _probe(*args)
        with st.spinner(t("run.running")):
            return _probe(*args)
    except Exception as exc:  # e.g. a model folder with fewer positions than the probe's sequences
        log.exception("induction_probe failed for %s", settings)
        st.caption(t("induction.failed", error=f"{type(exc).__name__}: {literal(exc, 200)}"))
        return None


def role_name(role: str, lang: str) -> str:
    return _t(f"induction.role.{role}", lang)


def head_label(probe: HeadProbe, layer: int, head: int, lang: str) -> str:
    """The head selector's label of ``head`` (from 0) in ``layer``: "2 · induction (PM 0.71)"."""
    role = role_name(probe.roles[layer][head], lang)
    pm = f"{probe.prefix_matching[layer][head]:.2f}"
    return _t("induction.head_label", lang, n=head + 1, role=role, pm=pm)


def head_titles(probe: HeadProbe, layer: int, lang: str) -> list[str]:
    """The all-heads figure's subplot titles for ``layer``: "head 2 · induction"."""
    return [
        _t("induction.head_title", lang, n=j + 1, role=role_name(role, lang))
        for j, role in enumerate(probe.roles[layer])
    ]


def block_notes(probe: HeadProbe | None, lang: str) -> list[list[str]] | None:
    """The layers × heads grid's notes: the role of every head that has one ("" for "other")."""
    if probe is None:
        return None
    return [[role_name(role, lang) if role != "other" else "" for role in row] for row in probe.roles]


def head_format(probe: HeadProbe | None, layer: int, lang: str):
    """A head selectbox's ``format_func`` (options 1 … h); the language bound now (AppTest calls it
    outside the run)."""
    if probe is None:
        return str
    return functools.partial(lambda n, lang: head_label(probe, layer, n - 1, lang), lang=lang)


def roles_section(probe: HeadProbe, lang: str) -> None:
    """The caption saying how the heads were measured, the roles found, and the table of every head."""
    st.markdown(_t("induction.explain", lang, batch=probe.batch, length=probe.length))
    rule = {"pm": INDUCTION_MIN_PM, "copying": INDUCTION_MIN_COPYING, "pt": PREVIOUS_MIN_PT}
    st.caption(_t("induction.rule", lang, **rule))
    found = probe.induction_heads()
    if found:
        heads = ", ".join(_t("induction.where", lang, layer=i + 1, head=j + 1) for i, j in found)
        st.success(_t("induction.found", lang, heads=heads), icon=":material/repeat:")
    else:
        st.info(_t("induction.none", lang, pm=INDUCTION_MIN_PM), icon=":material/repeat:")
    better = probe.loss_second_copy < probe.loss_first_copy - 0.05  # nats: below that, noise of 8 sequences
    verdict = _t("induction.loss.better" if better else "induction.loss.same", lang)
    st.caption(
        _t(
            "induction.loss",
            lang,
            first=f"{probe.loss_first_copy:.2f}",
            second=f"{probe.loss_second_copy:.2f}",
            verdict=verdict,
        )
    )
    show_table(roles_table(probe, lang), hide_index=True, key="induction_roles")


def roles_table(probe: HeadProbe, lang: str) -> dict[str, list]:
    """Columns of the roles table: one row per (layer, head), scores rounded to 3 digits."""
    rows = [(i, j) for i in range(len(probe.roles)) for j in range(len(probe.roles[i]))]

    def col(key: str) -> str:
        return _t(f"induction.table.{key}", lang)

    return {
        col("layer"): [i + 1 for i, _ in rows],
        col("head"): [j + 1 for _, j in rows],
        col("role"): [role_name(probe.roles[i][j], lang) for i, j in rows],
        col("pm"): [round(probe.prefix_matching[i][j], 3) for i, j in rows],
        col("pt"): [round(probe.previous_token[i][j], 3) for i, j in rows],
        col("copying"): [round(probe.copying[i][j], 3) for i, j in rows],
    }


# -- the buttons: a repeated sentence, or the small GPT ------------------------------------------------


def _apply(changes: dict) -> None:
    """Change stored settings as the sidebar's own widgets do (validated; the URL follows on the rerun)."""
    state = st.session_state
    values = {**state[STORE].to_dict(), **changes}
    if "sentence" in changes:
        state[SENTENCE_OWN] = True
    elif not state.get(SENTENCE_OWN):
        del values["sentence"]  # validate gives the default of the (new) weights
    session = state.get(SESSION_MODEL)
    task = getattr(session, "task", "") or ""
    checked = validate(values, session_model=session is not None, session_task=task)
    state[STORE] = checked.settings
    state[NOTICES] = checked.notices


REPEAT_FAILED = "_induction_repeat_failed"  # the last click found no text to repeat: said under the button


def _repeat(pipe, length: int) -> None:
    text = repeated_text(pipe.src_encode, pipe.src_labels, length, seed=next(_SEEDS))
    st.session_state[REPEAT_FAILED] = not text
    if text:
        _apply({"sentence": text})


def repeat_length(settings: Settings) -> int:
    """Tokens per copy: REPEAT_LENGTH, fewer when the sidebar's token limit would cut the second copy."""
    return max(2, min(REPEAT_LENGTH, settings.max_tokens // 2))


def repeated_half(tokens: list[str]) -> int:
    """n when ``tokens`` are n tokens written twice (n ≥ 2), else 0."""
    n = len(tokens) // 2
    return n if n >= 2 and len(tokens) == 2 * n and tokens[:n] == tokens[n:] else 0


def repeat_button(pipe, settings: Settings) -> None:
    """``repeat_sequence``: the sentence becomes a random sequence of this model's tokens, written twice."""
    n = repeat_length(settings)
    st.button(
        t("induction.repeat"),
        key="repeat_sequence",
        help=t("induction.repeat.help", n=n),
        on_click=_repeat,
        args=(pipe, n),
        icon=":material/repeat:",
    )
    if st.session_state.pop(REPEAT_FAILED, False):
        st.caption(t("induction.repeat.none"))


def show_gpt_button() -> bool:
    """``show_gpt`` (when the small GPT is there): switch the weights to it. Whether it was shown."""
    if not gpt_available():
        return False
    st.caption(t("induction.show_gpt.why"))
    st.button(
        t("induction.show_gpt"),
        key="show_gpt",
        on_click=_apply,
        args=({"weights": Weights.GPT},),
        icon=":material/swap_horiz:",
    )
    return True
