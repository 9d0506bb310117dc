"""Predict, then reveal, in a room (ui/classroom/quiz.py): the lecturer (AppTest) asks a question generated
from the model on screen, students answer once from the hall page (its routes, in-process: hallclient),
the lecturer's tally counts them, the reveal shows the model's real answer on the projector and in every
student's message; a closed question, a second answer and a student who never drives. The model's answer
is checked against a trace computed here with core."""

from __future__ import annotations

import pytest
import torch
from apphelpers import assert_clean, open_page
from hallclient import Student
from test_classroom import Spy, click, keyed, start_room, texts

import core.tracing.pipeline as P
import ui.classroom.panels as classroom
import ui.classroom.rooms as rooms
from core.teaching.exercises import check
from i18n import t
from ui.hall import routes

SENTENCE = "我爱北京天安门"  # seven distinct characters: every option is a bare token


@pytest.fixture
def store(monkeypatch):
    fresh = Spy()
    monkeypatch.setattr(classroom, "_STORE", fresh)
    routes._ANSWERS.clear()  # the answer route's rate limit: each test starts with none
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
    students = [Student(code), Student(code, "zh", host="10.0.0.2")]
    for student in students:
        asked = student.question()
        assert asked["number"] == q.number and q.params["layer"] in asked["text"]
        assert asked["options"] == list(q.options) and not asked["revealed"] and asked["answer"] is None
    sent = {"counted": True, "said": t("hall.sent")}
    assert students[0].answer(option=q.options.index(best)) == (200, sent)
    wrong = next(o for o in q.options if o != best)
    assert students[1].answer(option=q.options.index(wrong))[0] == 200
    lecturer.run()
    assert answered(lecturer) == t("classroom.q.answered", n=2)
    tally = store.tally(code)
    assert tally.answered == 2 and tally.counts[q.options.index(best)] == 1
    # a replayed answer from the same browser is refused, not counted twice
    assert students[0].answer(option=0) == (200, {"counted": False, "said": t("hall.answered")})
    assert store.tally(code).answered == 2
    click(lecturer, "room_reveal")
    assert_clean(lecturer)
    words = t("classroom.q.answer_weight", "en", option=f"`{best}`", value="|").split("|")[0]
    assert any(text.startswith(words) for text in texts(keyed(lecturer, "room_result")))
    for student in students:
        revealed = student.question()
        assert revealed["revealed"] and q.options[revealed["answer"]] == best
        assert revealed["counts"] == list(store.tally(code).counts)
        words = t("classroom.q.answer_weight", student.lang, option=f"`{best}`", value="|").split("|")[0]
        assert revealed["answer_text"].startswith(words)
    assert students[1].answer(option=0) == (409, {"error": t("hall.closed", "zh")})  # revealed: over


def test_closing_a_question_clears_it_everywhere_and_a_late_answer_is_told(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    ask(lecturer, "BPE")
    student = Student(code)
    asked = student.question()
    assert asked["text"] == t("classroom.q.bpe_count", k=store.state(code).question.params["k"])
    click(lecturer, "room_question_close")
    assert store.state(code).question is None and student.question() is None
    assert student.answer(asked["number"], option=0) == (409, {"error": t("hall.closed")})  # sent too late
    assert store.tally(code) is None
    assert "room_question_pick" in [s.key for s in lecturer.selectbox]  # the lecturer may ask again


def test_the_question_follows_the_slide_and_every_kind_is_offered(store):
    lecturer, code = start_room({"weights": "trained", "sentence": SENTENCE, "step": "7"})
    options = lecturer.selectbox(key="room_question_pick").options
    assert options[0].startswith("Cross-attention")  # the cross-attention slide asks about it first
    assert not any("`" in o for o in options) and any("“" in o for o in options)  # plain text: tokens quoted
    kinds = ("Encoder self-attention", "Decoder masked", "Cross-attention", "Which next token", "BPE",
             "With ")
    for start in kinds:
        assert any(o.startswith(start) for o in options), (start, options)
    before = list(options)
    click(lecturer, "room_question_new")
    assert lecturer.selectbox(key="room_question_pick").options != before  # another draw


def test_a_student_never_changes_the_question(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    ask(lecturer, "BPE")
    before = store.state(code)
    store.calls.clear()  # from here on, only the student's browser calls the store
    student = Student(code)
    student.answer(option=1)
    student.answer(option=2)
    assert set(store.calls) <= {"state", "seen", "answer", "tally"}, store.calls
    assert store.state(code) == before


def test_a_room_with_a_question_is_worded_in_each_students_language(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2", "lang": "en"})
    ask(lecturer, "BPE")
    k = store.state(code).question.params["k"]
    assert Student(code, "zh").question()["text"] == t("classroom.q.bpe_count", "zh", k=k)
    assert Student(code, "en").question()["text"] == t("classroom.q.bpe_count", "en", k=k)


# -- floods ---------------------------------------------------------------------------------------------


def test_answers_beyond_the_rooms_bound_are_told_not_counted(store, monkeypatch):
    monkeypatch.setattr(rooms, "MAX_ANSWERS", 2)
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    ask(lecturer, "BPE")
    replies = [Student(code, host=f"10.0.0.{i}").answer(option=0) for i in range(3)]
    assert [status for status, _ in replies] == [200, 200, 409]
    assert replies[2][1] == {"error": t("classroom.q.full")}  # the third: told, not counted
    assert store.tally(code).answered == 2
    lecturer.run()
    assert answered(lecturer) == t("classroom.q.answered", n=2)


def test_a_thousand_rooms_made_in_a_loop_drop_no_room_in_use_and_are_told_why(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    student = Student(code)
    refused = 0
    for _ in range(1000):  # a script creating rooms in a loop: every room is new, so in use
        try:
            store.create()
        except rooms.TooMany as error:
            assert error.reason == "full"
            refused += 1
    assert len(store) == rooms.MAX_ROOMS and refused == 1000 - (rooms.MAX_ROOMS - 1)
    lecturer.run()
    assert_clean(lecturer)
    assert [w.value for w in lecturer.warning] == []  # the lecture goes on
    assert store.state(code).step == 2 and student.message()["slide"]["step"] == 2
    another = open_page("pages/lecture.py")
    click(another, "room_start")
    assert_clean(another)
    assert t("classroom.full") in [w.value for w in another.warning]


# -- an exercise given to the room ----------------------------------------------------------------------


def test_an_exercise_given_to_the_room_is_checked_on_the_server_and_counts_the_first_check(store):
    """The lecturer gives the class an exercise; each student's message carries its card (the same
    numbers as the projector's); a typed number is checked by the server against core's exercise, the
    verdict comes back (a miss with the worked solution), and the first readable check of each browser
    counts right or wrong in the tally."""
    from test_exercises_ui import reference_run

    import figures.classroom.exercises as fx
    from core.teaching.exercises import exercises_for

    query = {"weights": "trained", "sentence": SENTENCE, "step": "5"}
    lecturer, code = start_room(query)
    ask(lecturer, "Compute")
    q = store.state(code).question
    assert q.kind == "exercise" and q.options == ("right", "wrong")
    given = exercises_for(reference_run(query), int(q.params["seed"]))
    (exercise,) = [e for e in given if e.id == q.params["id"]]
    assert "room_exercise_shown_answer" in [w.key for w in lecturer.text_input]  # numbers on the projector
    right, wrong, late = Student(code), Student(code, "zh", host="10.0.0.2"), Student(code, host="10.0.0.3")
    assert wrong.question()["card"] == fx.card_view(exercise, "zh")  # the projector's numbers, in 中文
    status, reply = right.answer(value=f"{exercise.answer:.6f}")
    assert status == 200 and reply["counted"] and reply["verdict"]["tone"] == "right"
    status, reply = wrong.answer(value=f"{exercise.answer + 1:.6f}")
    assert status == 200 and reply["counted"] and reply["verdict"]["tone"] == "wrong"
    assert reply["verdict"]["solution"] and reply["verdict"]["text"] == fx.verdict_text(
        exercise, check(exercise, f"{exercise.answer + 1:.6f}"), "zh")
    status, reply = wrong.answer(value="1,500")  # not a number anyone can read: said, not counted
    assert status == 200 and not reply["counted"] and reply["verdict"]["tone"] == "problem"
    status, reply = wrong.answer(value=f"{exercise.answer:.6f}")  # right now: the student's to learn from
    assert reply["verdict"]["tone"] == "right" and not reply["counted"]
    assert late.answer(value=f"{exercise.answer:.6f}")[1]["counted"]
    assert store.tally(code).counts == (2, 1)
    assert right.answer(option=0) == (400, {"error": t("hall.exercise")})  # a vote is not a check
    lecturer.run()
    assert answered(lecturer) == t("classroom.q.answered", n=3)
    click(lecturer, "room_reveal")
    result = " ".join(texts(keyed(lecturer, "room_result")))
    assert t("classroom.q.exercise_answer", value=f"{exercise.answer:.4g}") in result
    assert right.question()["answer_text"] == t("classroom.q.exercise_answer", value=f"{exercise.answer:.4g}")


# -- one view, built once for the class -----------------------------------------------------------------


def test_students_following_one_slide_share_its_figure_built_once(store, monkeypatch):
    import figures.classroom.lecture as lecture

    built = []
    real = lecture.heads_figure  # the slide's figure, as the lecture's sections call it
    monkeypatch.setattr(lecture, "heads_figure", lambda *a, **k: built.append(1) or real(*a, **k))
    sentence = "shared slide, built once"  # a sentence no other test shows: nothing cached yet
    lecturer, code = start_room({"sentence": sentence, "step": "5"})
    students = [Student(code) for _ in range(3)] + [Student(code, "zh")]
    for student in students:
        assert student.message()["slide"]["heading"].startswith("5 / 13")
    assert len(built) == 2  # once in English (the lecturer and three students), once in 中文


def test_the_lecturers_list_follows_the_interface_language(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    english = lecturer.selectbox(key="room_question_pick").options
    lecturer.button_group(key="lang").set_value("zh").run()  # the sidebar's segmented control
    chinese = lecturer.selectbox(key="room_question_pick").options
    assert chinese != english and any("词元" in title for title in chinese)


def test_the_switch_a_head_off_step_asks_what_the_changed_model_predicts(store):
    """On the lecture's last step the room is first offered "with these parts off, which token will
    the model rank first?": its options and answer are both real runs' (core's, computed here), a
    student answers in 中文, and the reveal names the intact model's answer beside the changed one's."""
    from core.interventions.runs import intact_and_ablated_traces
    from core.teaching.questions import changed_position

    lecturer, code = start_room({"weights": "trained", "sentence": SENTENCE, "step": "13"})
    options = lecturer.selectbox(key="room_question_pick").options
    assert options[0].startswith("With cross.2.1, cross.2.2, cross.2.3, cross.2.4 switched off"), options[0]
    ask(lecturer, "With ")
    q = store.state(code).question
    assert q.kind == "ablation"
    pipe = P.load_pipeline(P.PipelineSettings(weights="trained"))
    _, _, before, after = intact_and_ablated_traces(pipe, SENTENCE)
    position = changed_position(before, after, last=False)
    best = pipe.tgt_labels[int(after.logits[0, position].argmax())]
    intact = pipe.tgt_labels[int(before.logits[0, position].argmax())]
    assert best != intact and {best, intact} <= set(q.options)
    student = Student(code, "zh")
    asked = student.question()
    assert asked["text"].startswith("关闭 cross.2.1")
    assert student.answer(option=q.options.index(best))[0] == 200
    click(lecturer, "room_reveal")
    assert_clean(lecturer)
    revealed = student.question()
    assert q.options[revealed["answer"]] == best and f"`{intact}`" in revealed["answer_text"]
