"""Predict, then reveal; compute it yourself, in a room (the Streamlit side of core/teaching/questions.py and
core/teaching/exercises.py for a class).

    quiz.lecturer_panel(store, code, secret, run)             # above the slide: the open question, its
                                                              # live tally, Reveal, Close
    quiz.ask_panel(store, code, secret, run, step_name)       # under the slide: pick and Ask

A room keeps a question as a ``ui.classroom.rooms.Question`` (options as labels, the model's answer, the
strings that word it), so every screen words it in its own language without running the model. A student
answers once, from the room's hall page (``ui/hall/``: a POST with the browser's member cookie); the
tally counts, never names. An
exercise is a question of kind ``exercise`` ("right" / "wrong": the student's first check). The lecturer
is first offered the slide's question (``STEP_QUESTION``). Decisions: docs/decisions.md, ui/classroom/quiz.py.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import streamlit as st

from core.teaching.exercises import Exercise
from core.teaching.questions import (
    MIN_OPTIONS,
    NoQuestion,
    questions_for,
    run_identity,
    self_attention_question,
)
from core.teaching.questions import Question as ModelQuestion
from figures.classroom.tally import tally_figure
from i18n import t as texts_in
from ui.classroom.rooms import Question as RoomQuestion
from ui.classroom.rooms import (
    QuestionState,
    RoomError,
    RoomStore,
)
from ui.page.figure import show_figure
from ui.page.lang import current_lang, t
from ui.page.settings import literal
from ui.sections import exercises

TALLY_SECONDS = 1.0  # the lecturer's tally fills in as answers arrive
SEED = "_glassbox_quiz_seed"  # the lecturer's draw: "Another question" moves it on
OFFERED = "_glassbox_quiz_offered"  # ((identity, seed, step, lang), offers): the lecturer's list
ANSWERED = "_glassbox_quiz_answered"  # {(code, number): option}: what this student answered
REFUSED = "_glassbox_quiz_refused"  # what the room refused the lecturer, said once
SAID = "_glassbox_quiz_said"  # (i18n key) what happened to a student's answer, said once
EXERCISE = "exercise"
RIGHT, WRONG = "right", "wrong"

# lecture step -> (question kind, attn_kind or "") offered first there
STEP_QUESTION = {
    "tokens": ("bpe_count", ""),
    "encoder": ("self_attention", "encoder"),
    "decoder": ("self_attention", "decoder"),
    "cross": ("cross_attention", ""),
    "masks": ("self_attention", "decoder"),
    "output": ("next_token", ""),
    "greedy": ("next_token", ""),
    "ablation": ("ablation", ""),
}


@dataclass(frozen=True)
class Offer:
    """One line of the lecturer's list: a question about the model, or an exercise."""

    title: str
    question: RoomQuestion
    first: bool  # what this slide is about


# -- what the room keeps -------------------------------------------------------------------------------


def _room_question(q: ModelQuestion) -> RoomQuestion:
    """A model question as the room keeps it: labels, the answer's index, the strings that word it."""
    p = q.params
    words = {
        "id": q.id,
        "attn_kind": str(p.get("attn_kind", "")),
        "layer": str(p["layer"] + 1) if "layer" in p else "",
        "head": str(p["head"] + 1) if p.get("head") is not None else "",
        "position": str(p.get("position", p.get("query", ""))),
        "token": str(p.get("query_token") or p.get("input_token") or ""),
        "k": str(p.get("k", "")),
        "parts": str(p.get("parts", "")).replace(",", ", "),
        "intact": str(p.get("intact", "")),
        "value": repr(float(q.value)),
    }
    return RoomQuestion(q.kind, q.options, q.answer, {k: v for k, v in words.items() if v})


def _room_exercise(ex: Exercise, seed: int) -> RoomQuestion:
    """An exercise as the room keeps it: which one (id and seed), its answer for the reveal."""
    params = {"id": ex.id, "seed": str(seed), "exercise": ex.kind, "value": repr(float(ex.answer))}
    return RoomQuestion(EXERCISE, (RIGHT, WRONG), None, params)


def _in(lang: str | None):
    """The text function of ``lang``, or of this page's language (None)."""
    return t if lang is None else (lambda key, **values: texts_in(key, lang, **values))


def question_text(kind: str, params: dict[str, str], lang: str | None = None) -> str:
    """The question in ``lang`` (default: this page's language), from what the room keeps (user text as
    code spans)."""
    say = _in(lang)
    if kind == EXERCISE:
        return say("classroom.q.exercise")
    values = {k: literal(v) if k in ("token", "intact") else v for k, v in params.items()}
    if kind == "self_attention":
        return say(f"classroom.q.self_attention.{params.get('attn_kind', 'encoder')}", **values)
    return say(f"classroom.q.{kind}", **values)


def option_text(kind: str, option: str, lang: str | None = None) -> str:
    return _in(lang)(f"classroom.q.{option}") if kind == EXERCISE else option


def answer_text(q: QuestionState, lang: str | None = None) -> str:
    """The reveal: the model's answer and its number (a weight, a probability, a count)."""
    say = _in(lang)
    value = float(q.params.get("value", "nan"))
    if q.kind == EXERCISE:
        return say("classroom.q.exercise_answer", value=f"{value:.4g}")
    option = literal(q.options[q.answer]) if q.answer is not None else "?"
    if q.kind == "ablation":
        return say("classroom.q.answer_ablation", option=option, value=f"{value:.2f}",
                   intact=literal(q.params.get("intact", "?")), parts=q.params.get("parts", ""))
    key = {"bpe_count": "count", "next_token": "probability"}.get(q.kind, "weight")
    return say(f"classroom.q.answer_{key}", option=option, value=f"{value:.2f}")


# -- the lecturer --------------------------------------------------------------------------------------


def _slide_question(run, step_name: str, seed: int) -> ModelQuestion | None:
    """The self-attention slides draw layer 1: their question is about layer 1 too (a head and a
    query drawn from ``seed``), so the answer is on the projector for whoever reads the heatmap."""
    attn_kind = {"encoder": "encoder", "decoder": "decoder", "masks": "decoder"}.get(step_name)
    if attn_kind is None or (attn_kind == "decoder" and run.config.stack == "encoder"):
        return None
    if attn_kind == "encoder" and run.config.stack == "decoder":  # a decoder only (GPT-2, Llama)
        return None
    tokens = run.src_tokens if attn_kind == "encoder" else run.tgt_tokens
    first = 0 if attn_kind == "encoder" else MIN_OPTIONS - 1  # a decoder query sees itself and before
    if len(tokens) <= first or len(tokens) < MIN_OPTIONS:
        return None
    rng = random.Random(f"slide:{attn_kind}:{seed}")
    head, query = rng.randrange(run.config.num_heads), rng.randrange(first, len(tokens))
    try:
        return self_attention_question(run.trace_of(attn_kind), attn_kind, 0, head, query, tokens, tokens,
                                       seed=seed, identity=run_identity(run))
    except NoQuestion:
        return None


def _ablation_question(run, seed: int) -> ModelQuestion | None:
    """"With these parts off, what will the model predict?": the parts the lecturer switched off, else
    the ones that teach (``core.interventions.runs.default_parts``); the options from both real runs."""
    if run.config.stack == "encoder":
        return None
    from core.interventions.runs import intact_and_ablated_traces
    from core.teaching.questions import ablation_question, changed_position

    _, off, before, after = intact_and_ablated_traces(run.pipe, run.sentence, run.target, run.max_tokens)
    position = changed_position(before, after, last=run.config.stack == "decoder")
    try:
        return ablation_question(before, after, run.pipe.tgt_labels, position, off.settings.ablate, seed=seed,
                                 identity=run_identity(run))
    except NoQuestion:
        return None


def _offers(run, step_name: str) -> list[Offer]:
    """The questions and exercises of the model on screen for this draw, this slide's first."""
    state = st.session_state
    seed = state.get(SEED, 0)
    identity = run_identity(run)
    kept = state.get(OFFERED)
    made_for = (identity, seed, step_name, current_lang())  # the titles are in the page's language
    if kept is not None and kept[0] == made_for:
        return kept[1]
    kind, attn_kind = STEP_QUESTION.get(step_name, ("", ""))
    slide = _slide_question(run, step_name, seed)
    questions = [q for q in questions_for(run, seed) if slide is None or (q.kind, q.params.get("attn_kind"))
                 != (slide.kind, slide.params["attn_kind"])]
    switched = _ablation_question(run, seed)
    questions += [switched] if switched is not None else []
    offers = []
    for q in ([slide] if slide is not None else []) + questions:
        first = q.kind == kind and attn_kind in ("", q.params.get("attn_kind"))
        kept_q = _room_question(q)
        offers.append(Offer(question_text(kept_q.kind, dict(kept_q.params)), kept_q, first))
    for ex in exercises.exercises_at(run, step_name, seed):
        title = t("classroom.q.compute", title=exercises.exercise_title(ex))
        offers.append(Offer(title, _room_exercise(ex, seed), True))
    offers.sort(key=lambda o: not o.first)  # stable: this slide's, then the others in their order
    state[OFFERED] = (made_for, offers)
    return offers


def _plain(title: str) -> str:
    """A question's words for a select box, which shows text as it is: a token's code span (``literal``)
    in quotation marks instead of between backticks."""
    return re.sub(r"`([^`]*)`", "“\\1”", title)


def _draw_again() -> None:
    st.session_state[SEED] = st.session_state.get(SEED, 0) + 1


def _call(action, store: RoomStore, code: str, secret: str, *args) -> None:
    """A button's action on the room; what the room refuses is said above the panel on the next draw
    (the store's messages never echo input)."""
    try:
        action(store, code, secret, *args)
    except RoomError as error:
        st.session_state[REFUSED] = str(error)


def _ask(store: RoomStore, code: str, secret: str, question: RoomQuestion) -> None:
    store.ask(code, secret, question)


def _open(store: RoomStore, code: str) -> QuestionState | None | bool:
    """The room's open question (``None``: none); ``False`` when the room cannot be read (the room
    panel says why)."""
    try:
        return store.state(code).question
    except RoomError:
        return False


def ask_panel(store: RoomStore, code: str, secret: str, run, step_name: str) -> None:
    """Under the slide, while no question is open: the list of questions and exercises about the model
    on screen (this slide's first), Ask, and "Other questions" (a new draw)."""
    if _open(store, code) is not None:
        return
    with st.container(key="room_quiz"):
        _say_refused()
        _pick(store, code, secret, run, step_name)


def lecturer_panel(store: RoomStore, code: str, secret: str, run) -> None:
    """Above the slide, while a question is open: the question, its live tally (or, revealed, the
    model's answer beside it), Reveal and Close."""
    q = _open(store, code)
    if not q:
        return
    with st.container(key="room_quiz"):
        _say_refused()
        _open_question(store, code, secret, q, run)


def _say_refused() -> None:
    """What the room refused the lecturer's last click (the question was closed elsewhere ...), once."""
    refused = st.session_state.pop(REFUSED, None)
    if refused:
        st.warning(refused, icon=":material/warning:")


def _pick(store: RoomStore, code: str, secret: str, run, step_name: str) -> None:
    offers = _offers(run, step_name)
    if not offers:
        st.caption(t("classroom.q.none"))
        return
    with st.container(horizontal=True, vertical_alignment="bottom"):
        choice = st.selectbox(
            t("classroom.q.pick"), range(len(offers)), format_func=lambda i: _plain(offers[i].title),
            key="room_question_pick", width=720,
        )
        st.button(t("classroom.q.again"), key="room_question_new", on_click=_draw_again,
                  icon=":material/casino:")
        st.button(t("classroom.q.ask"), key="room_ask", type="primary", icon=":material/campaign:",
                  on_click=_call, args=(_ask, store, code, secret, offers[choice or 0].question))


def _reveal(store: RoomStore, code: str, secret: str) -> None:
    store.reveal(code, secret)


def _close(store: RoomStore, code: str, secret: str) -> None:
    store.ask(code, secret, None)


def _open_question(store: RoomStore, code: str, secret: str, q: QuestionState, run) -> None:
    st.subheader(question_text(q.kind, q.params), anchor=False)
    if q.kind == EXERCISE:
        ex = exercises.find_exercise(run, int(q.params.get("seed", "0")), q.params.get("id", ""))
        if ex is not None:
            exercises.exercise_card(ex, key="room_exercise_shown")
    if q.revealed:
        _result(store, code, q)
    else:
        with st.container(key="room_tally_box"):  # a timed fragment in a container of its own: see
            _live_tally(store, code, q)  # ui.classroom.panels._presenter_panel
    with st.container(horizontal=True):
        if not q.revealed:
            st.button(t("classroom.q.reveal"), key="room_reveal", type="primary",
                      icon=":material/visibility:", on_click=_call, args=(_reveal, store, code, secret))
        st.button(t("classroom.q.close"), key="room_question_close", icon=":material/close:",
                  on_click=_call, args=(_close, store, code, secret))


@st.fragment(run_every=TALLY_SECONDS)
def _live_tally(store: RoomStore, code: str, q: QuestionState) -> None:
    try:
        tally = store.tally(code)
    except RoomError:
        return
    counts = tally.counts if tally is not None and tally.number == q.number else (0,) * len(q.options)
    answered = tally.answered if tally is not None and tally.number == q.number else 0
    with st.container(key="room_tally"):
        _tally_chart(q, counts, answered, revealed=False)


def _tally_chart(q: QuestionState, counts, answered: int, *, revealed: bool) -> None:
    lang = current_lang()
    options = [option_text(q.kind, o) for o in q.options]
    fig = tally_figure(options, counts, q.answer if revealed else None, lang=lang)
    with st.container(key="room_answered"):
        st.markdown(t("classroom.q.answered", n=answered))
    show_figure(fig, key=f"room_tally_chart_{'shown' if revealed else 'live'}", downloads=False)


def _result(store: RoomStore, code: str, q: QuestionState) -> None:
    """The model's answer next to the tally: the same on every screen."""
    try:
        tally = store.tally(code)
    except RoomError:
        tally = None
    ok = tally is not None and tally.number == q.number
    with st.container(key="room_result"):
        answer, chart = st.columns([1, 2], vertical_alignment="center")
        with answer:
            st.success(answer_text(q), icon=":material/check_circle:")
        with chart:
            _tally_chart(q, tally.counts if ok else (0,) * len(q.options), tally.answered if ok else 0,
                         revealed=True)
