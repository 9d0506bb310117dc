"""What a follower receives: the room's slide as data, in the follower's language, as one JSON text.

    message = room_message(state, tally, "zh")   # the room's step, built as the lecturer's page built it

The slide is the same ``figures.classroom.lecture.SlideView`` the lecturer's page draws (one builder),
from the same caches (``ui.page.figure.shared_view``): a step the lecturer's page showed is not built again.
The room's settings are validated as a URL's are, in the follower's language.
"""

from __future__ import annotations

import json

from core.teaching.exercises import Exercise
from figures.classroom.exercises import card_view
from figures.classroom.lecture import Context, shown_steps, slide_view, view_json
from i18n import LANGS, t
from ui.caches.cache import quiet_run
from ui.classroom.quiz import EXERCISE, answer_text, option_text, question_text
from ui.classroom.rooms import EXPIRED, RoomState, Tally
from ui.page.figure import shared_view
from ui.page.settings import validate_in
from ui.sections.exercises import find_exercise


def slide_json(settings: dict[str, str], step: int, lang: str) -> str:
    """Step ``step`` (clamped to the model's steps) of the run the room's settings name, as JSON."""
    s = validate_in(settings, lang).settings
    run = quiet_run(s)
    ctx = Context(run, s.sentence, lang)
    step = min(max(step, 1), len(shown_steps(ctx)))
    view = shared_view(run, f"lecture.{step}", lang, lambda: slide_view(ctx, step, settings))
    return view_json(view)


def room_exercise(state: RoomState) -> Exercise | None:
    """The exercise the room's open question gives, from the room's own run; None: not an exercise, or
    one this server cannot make (the lecturer's session-trained weights cannot come along)."""
    q = state.question
    if q is None or q.kind != EXERCISE:
        return None
    run = quiet_run(validate_in(state.settings, LANGS[0]).settings)
    return find_exercise(run, int(q.params.get("seed", "0")), q.params.get("id", ""))


def question_data(state: RoomState, tally: Tally | None, lang: str) -> dict | None:
    """The open question as a follower reads it: its words, options, the tally once revealed; an
    exercise's card (``figures.classroom.exercises.card_view``: what to compute and the numbers)."""
    q = state.question
    if q is None:
        return None
    counts = list(tally.counts) if tally is not None and tally.number == q.number and q.revealed else None
    card = None
    if q.kind == EXERCISE:
        exercise = room_exercise(state)
        missing = {"missing": t("classroom.q.no_exercise", lang)}
        card = card_view(exercise, lang) if exercise is not None else missing
    return {
        "number": q.number,
        "kind": q.kind,
        "text": question_text(q.kind, q.params, lang),
        "options": [option_text(q.kind, o, lang) for o in q.options],
        "revealed": q.revealed,
        "answer": q.answer if q.revealed else None,
        "answer_text": answer_text(q, lang) if q.revealed else None,
        "counts": counts,
        "card": card,
    }


def room_message(state: RoomState, tally: Tally | None, lang: str) -> str:
    """The whole message of one room version in ``lang``: the room, its question and its slide."""
    lang = lang if lang in LANGS else LANGS[0]
    room = {"code": state.code, "version": state.version, "step": state.step, "ended": state.ended,
            "end_reason": state.end_reason}
    # the room's own settings (the Leave link opens them): the slide's may have been built by the
    # lecturer's page first, and carries what that page passed
    head = {"room": room, "question": question_data(state, tally, lang), "lang": lang,
            "settings": dict(state.settings)}
    if state.ended:
        key = "classroom.expired" if state.end_reason == EXPIRED else "classroom.ended"
        head["said"] = t(key, lang, code=state.code)
        return json.dumps(head, ensure_ascii=False)
    if state.step < 1:  # the lecturer has not shown a slide yet
        head["said"] = t("hall.waiting", lang)
        return json.dumps(head, ensure_ascii=False)
    slide = slide_json(state.settings, state.step, lang)
    return json.dumps(head, ensure_ascii=False)[:-1] + ', "slide": ' + slide + "}"
