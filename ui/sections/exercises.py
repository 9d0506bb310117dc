"""Compute it yourself: the Streamlit side of ``core/teaching/exercises.py`` (the card as data, the same
for the lecture hall's follower page: ``figures/classroom/exercises.py``).

    found = exercises_at(run, "encoder", seed)      # this step's exercises (cached per run and seed)
    verdict = exercise_card(found[0], key="x")      # what to compute, the numbers, an answer box, the verdict
    self_study(run, "encoder")                      # the Lecture page: the card in an expander

A card is reusable: the Lecture page draws one for a student alone (``self_study``); a room gives the
same exercise to the class and counts the answers through ``on_checked``. An exercise follows from
(run, seed) alone, so a lecturer's screen and a student's agree; nothing is computed until the
expander is opened. User text reaches the page only through ``st.code``, a dataframe or ``literal()``.

Decisions (one seed for every kind, where a softmax exercise goes, rounding and tolerance, user
text): docs/decisions.md, ui/sections/exercises.py.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

import pandas as pd
import streamlit as st

import figures.classroom.exercises as fx
from core.teaching.exercises import Exercise, Verdict, check, exercises_for
from core.teaching.questions import bpe_merges_possible, run_identity
from ui import current_lang, t
from ui.caches.budget import cached
from ui.page.figure import key_class
from ui.page.tables import show_table

log = logging.getLogger("glassbox.exercises")

# The Lecture page's step ids (figures/classroom/lecture.py STEPS) and the exercise kinds each one gives.
STEP_EXERCISES: dict[str, tuple[str, ...]] = {
    "tokens": ("bpe_count",),
    "positional": ("pe_entry",),
    "encoder": ("attention_score", "softmax_entry"),
    "decoder": ("softmax_entry",),
    "residual": ("layernorm_entry",),
}
SEED = "exercise_seed"  # the self-study card's seed, moved on by "New numbers"
NEW_TRIES = 8  # seeds "New numbers" tries for an exercise other than the one on screen
MAX_CHARS = 200  # the answer box: longer than anyone types (core.teaching.exercises refuses > MAX_TYPED)

# Fixed stylesheet (no user text) for one card, ``{cls}`` its key's CSS class: a projector's sizes.
STYLE = """<style>
.{cls} [data-testid="stMarkdownContainer"] p {{ font-size: 1.2rem; line-height: 1.4; }}
.{cls} [data-testid="stCaptionContainer"] p {{ font-size: 1.05rem; }}
.{cls} table {{ font-size: 1.15rem; }}
.{cls} table th, .{cls} table td {{ padding: 0.15rem 0.6rem; }}
.{cls} input {{ font-size: 1.3rem; }}
</style>"""
SELF_STYLE = """<style>
.st-key-exercise_self summary p { font-size: 1.3rem; font-weight: 600; }
</style>"""


# -- which exercises -----------------------------------------------------------------------------------


@cached(max_entries=64)
def _exercises(identity: str, seed: int, _run) -> list[Exercise]:
    """Every exercise of the run ``identity`` names (``_run``: that run, not part of the key)."""
    return exercises_for(_run, seed)


def _belongs(exercise: Exercise, step_name: str) -> bool:
    if exercise.kind not in STEP_EXERCISES.get(step_name, ()):
        return False
    source = exercise.params.get("source") or {}
    return "attn_kind" not in source or exercise.kind != "softmax_entry" or source["attn_kind"] == step_name


def exercises_at(run, step_name: str, seed: int) -> list[Exercise]:
    """The exercises of ``core.teaching.exercises.exercises_for(run, seed)`` that belong to the Lecture page's
    step ``step_name`` ([]: none). A softmax belongs to the step of the attention its row is from."""
    if not STEP_EXERCISES.get(step_name):
        return []
    return [e for e in _exercises(run_identity(run), seed, run) if _belongs(e, step_name)]


def find_exercise(run, seed: int, exercise_id: str) -> Exercise | None:
    """The exercise ``exercise_id`` of ``exercises_for(run, seed)``, or None."""
    return next((e for e in _exercises(run_identity(run), seed, run) if e.id == exercise_id), None)


@functools.lru_cache(maxsize=64)
def _mergeable(sentence: str) -> bool:
    return bpe_merges_possible(sentence) >= 1


def _offered(run, step_name: str) -> bool:
    """Whether the step can give an exercise, from what its slide has already computed: the config,
    the sentence, the decoder's tokens (the decoder's row needs 3 keys, as core.teaching.exercises says)."""
    kinds = STEP_EXERCISES.get(step_name, ())
    if "pe_entry" in kinds:
        return run.config.positions == "sinusoidal"
    if "bpe_count" in kinds:
        return _mergeable(run.sentence)
    if step_name == "decoder":
        return run.config.stack != "encoder" and len(run.tgt_tokens) >= 3
    if step_name in ("encoder", "residual") and run.config.stack == "decoder":  # of an encoder only
        return False
    return bool(kinds)


# -- drawing a card's blocks (figures/classroom/exercises.py builds them) ------------------------------


def exercise_title(exercise: Exercise) -> str:
    """A short label for a pick list, in the page's language."""
    return fx.exercise_title(exercise, current_lang())


def _table(block: dict) -> None:
    """A small table: our own labels and numbers as Markdown (st.table: large on a projector; a token
    goes in only as literal()), or plain text (the sentence's own pairs: a dataframe)."""
    labels = [label for label, _ in block["rows"]]
    cells = [row for _, row in block["rows"]]
    if block["markdown"]:
        st.table(pd.DataFrame(cells, index=labels, columns=block["columns"]), width="content")
        return
    show_table({column: [row[c] for row in cells] for c, column in enumerate(block["columns"])},
               hide_index=True, width=560, height=min(36 * (len(cells) + 1) + 2, 260))


def draw_blocks(blocks: list[dict]) -> None:
    for block in blocks:
        kind = block["kind"]
        if kind == "text":
            st.markdown(block["text"])
        elif kind == "note":
            st.caption(block["text"])
        elif kind == "latex":
            st.latex(block["latex"])
        elif kind == "code":
            st.code(block["code"], language=None, wrap_lines=True)
        elif kind == "table":
            _table(block)
        elif kind == "row" and block["weights"]:
            for part, column in zip(block["parts"], st.columns(block["weights"], gap="medium",
                                                                 vertical_alignment="center"), strict=True):
                with column:
                    draw_blocks(part)
        elif kind == "row":
            with st.container(horizontal=True, vertical_alignment="center", gap="large"):
                for part in block["parts"]:
                    with st.container(width="content"):
                        draw_blocks(part)


def _show_verdict(said: dict, key: str) -> None:
    tone = said["tone"]
    if tone == "problem":
        st.warning(said["text"], icon=":material/edit:")
        return
    if tone == "right":
        st.success(said["text"], icon=":material/check_circle:")
        return
    st.error(said["text"], icon=":material/cancel:")
    with st.container(key=f"{key}_solution"):
        st.markdown(f"**{said['solution_title']}**")
        draw_blocks(said["solution"])
        if said["model"]:
            st.caption(said["model"])


# -- the card ------------------------------------------------------------------------------------------


def _check(exercise: Exercise, key: str, on_checked: Callable[[Verdict], None] | None) -> None:
    """The Check button: read what was typed, keep the verdict, tell ``on_checked`` (a number only)."""
    raw = st.session_state.get(f"{key}_answer", "") or ""
    verdict = check(exercise, raw)
    st.session_state[f"{key}_verdict"] = (exercise.id, verdict, raw)
    if on_checked is not None and verdict.parsed is not None:
        on_checked(verdict)


def _fresh(exercise: Exercise, key: str) -> None:
    """Another exercise in this card: the answer box empties and the old verdict goes."""
    state = st.session_state
    if state.get(f"{key}_exercise") != exercise.id:
        state[f"{key}_exercise"] = exercise.id
        state[f"{key}_answer"] = ""
        state.pop(f"{key}_verdict", None)


def exercise_card(
    exercise: Exercise, key: str, on_checked: Callable[[Verdict], None] | None = None
) -> Verdict | None:
    """The exercise in ``st.container(key=key)``: what to compute, the numbers, how close counts, an
    answer box (``{key}_answer``) and Check (``{key}_check``), then the verdict (a miss: the worked
    solution). ``on_checked(verdict)``: once per check of a readable number. Returns the last verdict
    of this card for this exercise, or None."""
    _fresh(exercise, key)
    lang = current_lang()
    card = fx.card_view(exercise, lang)
    st.html(STYLE.format(cls=key_class(key)))
    with st.container(key=key):
        draw_blocks(card["blocks"])
        with st.form(f"{key}_form", border=False), st.container(horizontal=True, vertical_alignment="bottom"):
            st.text_input(
                t("exercises.answer"),
                key=f"{key}_answer",
                max_chars=MAX_CHARS,
                placeholder=t("exercises.placeholder"),
                width=320,
            )
            st.form_submit_button(
                t("exercises.check"),
                key=f"{key}_check",
                on_click=_check,
                args=(exercise, key, on_checked),
                type="primary",
            )
            st.markdown(card["rule"])
        kept = st.session_state.get(f"{key}_verdict")
        if kept is None or kept[0] != exercise.id:
            return None
        _show_verdict(fx.verdict_view(exercise, kept[1], kept[2], lang), key)
        return kept[1]


# -- self-study on the Lecture page --------------------------------------------------------------------


def _new_numbers(run, step_name: str, kind: str, shown_id: str) -> None:
    """Next seed; a few more when the next one gives the same exercise (a short sentence has few)."""
    state = st.session_state
    seed = state.get(SEED, 0)
    for _ in range(NEW_TRIES):
        seed += 1
        if all(e.id != shown_id for e in exercises_at(run, step_name, seed) if e.kind == kind):
            break
    state[SEED] = seed


def _pick(found: list[Exercise], step_name: str) -> Exercise:
    """The exercise to show: the only one, or the one picked (by kind, kept across New numbers)."""
    if len(found) == 1:
        return found[0]
    by_kind = {e.kind: e for e in found}
    kind = st.segmented_control(
        t("exercises.pick"),
        list(by_kind),
        format_func=lambda k: exercise_title(by_kind[k]),
        key=f"exercise_pick_{step_name}",
        default=found[0].kind,
        required=True,
    )
    return by_kind.get(kind, found[0])


def self_study(run, step_name: str) -> None:
    """Below the slide: "Compute it yourself" (the expander ``exercise_self``), with this step's
    exercise, "New numbers" (``exercise_new``) and the card (``exercise_self_card``). Nothing when the
    step gives none; nothing computed while the expander is closed."""
    if not _offered(run, step_name):
        return
    st.html(SELF_STYLE)
    box = st.expander(
        t("exercises.expander"), key="exercise_self", on_change="rerun", icon=":material/calculate:"
    )
    if not box.open:
        return
    with box:
        try:
            found = exercises_at(run, step_name, st.session_state.get(SEED, 0))
        except Exception:  # a sentence no exercise was made for: a message, never a traceback
            log.exception("exercises_for failed at step %s", step_name)
            found = []
        if not found:
            st.info(t("exercises.none"))
            return
        with st.container(horizontal=True, vertical_alignment="bottom"):
            exercise = _pick(found, step_name)
            st.button(
                t("exercises.new"),
                key="exercise_new",
                icon=":material/casino:",
                on_click=_new_numbers,
                args=(run, step_name, exercise.kind, exercise.id),
            )
        exercise_card(exercise, "exercise_self_card")
