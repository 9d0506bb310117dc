"""Predict, then reveal, in a room (ui/classroom/quiz.py) through AppTest: the lecturer asks a question
generated
from the model on screen, students answer once on their own pages, the lecturer's tally counts them,
the reveal shows the model's real answer on every screen; a closed question, a second answer and a
student who never drives. The model's answer is checked against a trace computed here with core."""

from __future__ import annotations

import pytest
import torch
from apphelpers import assert_clean, open_page
from test_classroom import Spy, click, join, keyed, start_room, texts

import core.tracing.pipeline as P
import ui.classroom.panels as classroom
import ui.classroom.rooms as rooms
from i18n import t

SENTENCE = "我爱北京天安门"  # seven distinct characters: every option is a bare token


@pytest.fixture
def store(monkeypatch):
    fresh = Spy()
    monkeypatch.setattr(classroom, "_STORE", fresh)
    return fresh


@pytest.fixture(scope="module")
def trained_run():
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"))
    return P.run_pipeline(pipe, SENTENCE)


def ask(lecturer, kind_prefix: str):
    """The lecturer picks the first question whose wording starts with ``kind_prefix`` and asks it."""
    pick = lecturer.selectbox(key="room_question_pick")
    (index,) = [i for i, title in enumerate(pick.options) if title.startswith(kind_prefix)][:1]
    pick.set_value(index).run()
    click(lecturer, "room_ask")
    assert_clean(lecturer)
    return lecturer


def answered(at) -> str:
    return next(m.value for m in at.markdown if "answered" in m.value or "作答" in m.value)


def test_a_question_is_answered_once_counted_and_revealed_with_the_models_answer(store, trained_run):
    lecturer, code = start_room({"weights": "trained", "sentence": SENTENCE, "step": "5"})
    ask(lecturer, "Encoder self-attention")
    q = store.state(code).question
    assert q is not None and q.kind == "self_attention" and not q.revealed
    assert q.answer is None  # nobody can read the answer before the reveal
    # The model's answer, computed here: the key that head `head` of encoder layer `layer` weighs most.
    attn = trained_run.trace.encoder[int(q.params["layer"]) - 1].self_attn
    row = attn.weights[0, int(q.params["head"]) - 1, int(q.params["position"])]
    best = trained_run.src_tokens[int(torch.argmax(row))]
    students = [join(code), join(code, "zh")]
    for student in students:
        box = keyed(student, "room_question")
        assert any(q.params["layer"] in text for text in texts(box))
        assert "room_answer_submit" in [b.key for b in student.button]
    students[0].radio(key="room_answer_choice").set_value(best)
    click(students[0], "room_answer_submit")
    assert "room_answer_submit" not in [b.key for b in students[0].button]  # one answer: the form is gone
    assert t("classroom.q.in", option=f"`{best}`") in [m.value for m in students[0].info]
    wrong = next(o for o in q.options if o != best)
    students[1].radio(key="room_answer_choice").set_value(wrong)
    click(students[1], "room_answer_submit")
    lecturer.run()
    assert answered(lecturer) == t("classroom.q.answered", n=2)
    tally = store.tally(code)
    assert tally.answered == 2 and tally.counts[q.options.index(best)] == 1
    # a replayed answer from the same member is refused, not counted twice
    member = students[0].session_state[classroom.MEMBER]
    assert store.answer(code, q.number, member, 0) is False
    assert store.tally(code).answered == 2
    click(lecturer, "room_reveal")
    for screen, lang in ((lecturer, "en"), (students[0].run(), "en"), (students[1].run(), "zh")):
        assert_clean(screen)
        result = texts(keyed(screen, "room_result"))
        revealed = store.state(code).question
        assert revealed.revealed and revealed.options[revealed.answer] == best
        words = t("classroom.q.answer_weight", lang, option=f"`{best}`", value="|").split("|")[0]
        assert any(text.startswith(words) for text in result), result


def test_closing_a_question_clears_it_everywhere_and_a_late_answer_is_told(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    ask(lecturer, "BPE")
    student = join(code)
    assert t("classroom.q.bpe_count", k=store.state(code).question.params["k"]) in texts(
        keyed(student, "room_question")
    )
    student.radio(key="room_answer_choice").set_value(store.state(code).question.options[0])
    click(lecturer, "room_question_close")
    assert store.state(code).question is None
    click(student, "room_answer_submit")  # sent after the lecturer closed it
    assert_clean(student)
    assert t("classroom.q.closed") in [w.value for w in student.warning]
    assert store.tally(code) is None
    student.run()
    assert "room_answer_choice" not in [r.key for r in student.radio]
    assert "room_question_pick" in [s.key for s in lecturer.selectbox]  # the lecturer may ask again


def test_the_question_follows_the_slide_and_every_kind_is_offered(store):
    lecturer, code = start_room({"weights": "trained", "sentence": SENTENCE, "step": "7"})
    options = lecturer.selectbox(key="room_question_pick").options
    assert options[0].startswith("Cross-attention")  # the cross-attention slide asks about it first
    for start in ("Encoder self-attention", "Decoder masked", "Cross-attention", "Which next token", "BPE"):
        assert any(o.startswith(start) for o in options), (start, options)
    before = list(options)
    click(lecturer, "room_question_new")
    assert lecturer.selectbox(key="room_question_pick").options != before  # another draw


def test_a_student_sees_no_ask_controls_and_never_changes_the_question(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    ask(lecturer, "BPE")
    student = join(code)
    keys = [b.key for b in student.button]
    assert not {"room_ask", "room_reveal", "room_question_close", "room_question_new"} & set(keys)
    assert "room_question_pick" not in [s.key for s in student.selectbox]
    store.calls.clear()  # from here on, only the student's page calls the store
    student.radio(key="room_answer_choice").set_value(store.state(code).question.options[1])
    click(student, "room_answer_submit")
    student.run()
    assert set(store.calls) <= {"state", "version", "seen", "answer", "tally"}, store.calls


def test_a_room_with_a_question_is_worded_in_each_students_language(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2", "lang": "en"})
    ask(lecturer, "BPE")
    student = join(code, "zh")
    k = store.state(code).question.params["k"]
    assert t("classroom.q.bpe_count", "zh", k=k) in texts(keyed(student, "room_question"))


# -- floods ---------------------------------------------------------------------------------------------


def test_answers_beyond_the_rooms_bound_are_told_not_counted(store, monkeypatch):
    import ui.classroom.rooms as rooms

    monkeypatch.setattr(rooms, "MAX_ANSWERS", 2)
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    ask(lecturer, "BPE")
    options = store.state(code).question.options
    for _ in range(3):
        student = join(code)
        student.radio(key="room_answer_choice").set_value(options[0])
        click(student, "room_answer_submit")
        assert_clean(student)
    assert t("classroom.q.full") in [w.value for w in student.warning]  # the third: told, not counted
    assert store.tally(code).answered == 2
    lecturer.run()
    assert answered(lecturer) == t("classroom.q.answered", n=2)


def test_a_thousand_rooms_made_in_a_loop_drop_no_room_in_use_and_are_told_why(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    student = join(code)
    refused = 0
    for _ in range(1000):  # a script creating rooms in a loop: every room is new, so in use
        try:
            store.create()
        except rooms.TooMany as error:
            assert error.reason == "full"
            refused += 1
    assert len(store) == rooms.MAX_ROOMS and refused == 1000 - (rooms.MAX_ROOMS - 1)
    lecturer.run()
    student.run()
    for screen in (lecturer, student):
        assert_clean(screen)
        assert [w.value for w in screen.warning] == []  # the lecture goes on
    assert store.state(code).step == 2
    another = open_page("pages/lecture.py")
    click(another, "room_start")
    assert_clean(another)
    assert t("classroom.full") in [w.value for w in another.warning]


# -- an exercise given to the room ----------------------------------------------------------------------


def test_an_exercise_given_to_the_room_counts_who_got_it_right_the_first_time(store):
    from test_exercises_ui import reference_run

    from core.teaching.exercises import exercises_for

    query = {"weights": "trained", "sentence": SENTENCE, "step": "5"}
    lecturer, code = start_room(query)
    ask(lecturer, "Compute")
    q = store.state(code).question
    assert q.kind == "exercise" and q.options == ("right", "wrong")
    given = exercises_for(reference_run(query), int(q.params["seed"]))
    (exercise,) = [e for e in given if e.id == q.params["id"]]
    assert "room_exercise_shown_answer" in [w.key for w in lecturer.text_input]  # numbers on the projector
    right, wrong, late = join(code), join(code, "zh"), join(code)
    for student, typed in ((right, exercise.answer), (wrong, exercise.answer + 1), (late, exercise.answer)):
        student.text_input(key="room_exercise_card_answer").input(f"{typed:.6f}")
        click(student, "room_exercise_card_check")
        assert_clean(student)
    # a second check after a wrong one is the student's to learn from, not a second vote
    wrong.text_input(key="room_exercise_card_answer").input(f"{exercise.answer:.6f}")
    click(wrong, "room_exercise_card_check")
    assert wrong.success  # right now, on the student's own card
    assert store.tally(code).counts == (2, 1)
    lecturer.run()
    assert answered(lecturer) == t("classroom.q.answered", n=3)
    click(lecturer, "room_reveal")
    for screen in (lecturer, right.run()):
        result = " ".join(texts(keyed(screen, "room_result")))
        assert t("classroom.q.exercise_answer", value=f"{exercise.answer:.4g}") in result


# -- one view, built once for the class -----------------------------------------------------------------


def test_students_following_one_slide_share_its_figure_built_once(store, monkeypatch):
    import figures.lecture as lecture

    built = []
    real = lecture.heads_figure  # the slide's figure, as the lecture's sections call it
    monkeypatch.setattr(lecture, "heads_figure", lambda *a, **k: built.append(1) or real(*a, **k))
    sentence = "shared slide, built once"  # a sentence no other test shows: nothing cached yet
    lecturer, code = start_room({"sentence": sentence, "step": "5"})
    students = [join(code) for _ in range(3)] + [join(code, "zh")]
    for student in students:
        assert student.header[0].value.startswith("5 / 12")
    assert len(built) == 2  # once in English (the lecturer and three students), once in 中文


def test_the_lecturers_list_follows_the_interface_language(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    english = lecturer.selectbox(key="room_question_pick").options
    lecturer.button_group(key="lang").set_value("zh").run()  # the sidebar's segmented control
    chinese = lecturer.selectbox(key="room_question_pick").options
    assert chinese != english and any("词元" in title for title in chinese)
