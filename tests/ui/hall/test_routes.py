"""The lecture hall's routes (ui/hall/routes.py) in-process: the follower page and its refusals, the old
student address forwarded, answers (one browser one vote, refusals, the flood bound), the files served.
A store of the test's own stands in for the server's (``ui.classroom.panels._STORE``)."""

from __future__ import annotations

import html

import pytest
from hallclient import Student, client

import ui.classroom.panels as classroom
import ui.classroom.rooms as rooms
from i18n import t
from ui.classroom.rooms import MemoryStore, Question
from ui.hall import routes


@pytest.fixture
def store(monkeypatch):
    fresh = MemoryStore()
    monkeypatch.setattr(classroom, "_STORE", fresh)
    routes._ANSWERS.clear()  # the rate limit's memory: each test starts with none
    return fresh


def open_room(store, step: int = 2, question: bool = True):
    created = store.create(step=step)
    store.update(created.code, created.secret, step=step, settings={"sentence": "the cat sat"})
    if question:
        store.ask(created.code, created.secret, Question("bpe_count", ("3", "4", "5"), 1, {"k": "2"}))
    return created.code, created.secret


# -- the page -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_is_fixed_markup_with_the_room_and_our_texts_and_sets_the_member_cookie(store, lang):
    code, _ = open_room(store)
    http = client()
    page = http.get(f"/r/{code}?lang={lang}")
    assert page.status_code == 200 and page.headers["cache-control"] == "no-store"
    assert f'<html lang="{"zh-CN" if lang == "zh" else "en"}">' in page.text
    assert 'src="/hall/follower.js"' in page.text and "https://" not in page.text  # nothing from outside
    member = http.cookies.get(routes.MEMBER_COOKIE)
    assert rooms.is_id(member)
    assert "httponly" in page.headers["set-cookie"].lower()
    again = http.get(f"/r/{code}")
    assert "set-cookie" not in again.headers  # the browser keeps its member id: one browser, one vote


def test_a_member_cookie_edited_by_hand_is_replaced(store):
    code, _ = open_room(store)
    page = client().get(f"/r/{code}", headers={"cookie": f"{routes.MEMBER_COOKIE}=a.b"})  # no id: refused
    assert page.status_code == 200
    name, _, value = page.headers["set-cookie"].partition(";")[0].partition("=")
    assert name == routes.MEMBER_COOKIE and rooms.is_id(value) and value != "a.b"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_bad_or_unknown_code_gets_a_page_that_says_so_without_a_script(store, lang):
    bad = client().get(f"/r/%3Cscript%3E?lang={lang}")
    assert bad.status_code == 400 and html.escape(t("hall.bad_code", lang)) in bad.text
    unknown = client().get(f"/r/K7MQ2P?lang={lang}")
    assert unknown.status_code == 404
    assert html.escape(t("hall.unknown", lang, code="K7MQ2P")) in unknown.text
    for refused in (bad, unknown):
        assert "<script" not in refused.text and "set-cookie" not in refused.headers


def test_one_address_per_room(store):
    code, _ = open_room(store)
    moved = client().get(f"/r/{code[:3].lower()}-{code[3:].lower()}?lang=zh")
    assert moved.status_code == 308 and moved.headers["location"] == f"/r/{code}?lang=zh"


def test_an_ended_room_still_opens_its_page_and_the_stream_says_it_ended(store):
    code, secret = open_room(store)
    store.end(code, secret)
    assert client().get(f"/r/{code}").status_code == 200
    said = Student.__new__(Student)
    said.code, said.lang = code, "zh"
    assert said.message()["said"] == t("classroom.ended", "zh", code=code)


# -- the old address ------------------------------------------------------------------------------------


def test_the_old_student_address_forwards_to_the_hall_page_with_its_language(store):
    http = client()
    for asked, location in [("/lecture?room=k7m-q2p&lang=zh", "/r/K7MQ2P?lang=zh"),
                            ("/lecture?room=K7MQ2P", "/r/K7MQ2P"),
                            ("/lecture?lang=fr&room=K7MQ2P", "/r/K7MQ2P")]:
        forwarded = http.get(asked)
        assert forwarded.status_code == 307 and forwarded.headers["location"] == location, asked


@pytest.mark.parametrize("asked", ["/lecture?room=%3Cb%3E", "/lecture?step=3", "/lecture", "/?room=K7MQ2P"])
def test_anything_else_passes_the_forward_untouched(store, asked):
    assert client().get(asked).status_code == 404  # this test's app has only the hall's routes


# -- answers --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_one_browser_one_vote(store, lang):
    code, _ = open_room(store)
    student = Student(code, lang)
    assert student.answer(option=1) == (200, {"counted": True, "said": t("hall.sent", lang)})
    assert student.answer(option=2) == (200, {"counted": False, "said": t("hall.answered", lang)})
    assert store.tally(code).counts == (0, 1, 0)
    other = Student(code, lang)
    assert other.answer(option=2)[0] == 200
    assert store.tally(code).counts == (0, 1, 1)


def test_an_answer_from_a_browser_the_room_has_not_seen_following_is_refused(store):
    code, _ = open_room(store)
    stranger = client()
    stranger.cookies.set(routes.MEMBER_COOKIE, "made-up-voter")
    refused = stranger.post(f"/r/{code}/answer", json={"question": 1, "option": 0})
    assert refused.status_code == 409 and refused.json() == {"error": t("classroom.q.not_following", "en")}
    assert store.tally(code).answered == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_refusals_are_a_status_and_a_message_in_the_students_language(store, lang):
    code, secret = open_room(store)
    student = Student(code, lang)
    number = student.question()["number"]
    http = student.http
    url = f"/r/{code}/answer?lang={lang}"
    cases = [
        (http.post(url, content=b"not json"), 400, t("hall.bad_request", lang)),
        (http.post(url, json={"question": number}), 400, t("hall.bad_request", lang)),
        (http.post(url, json={"question": number, "option": "<b>"}), 400, t("hall.bad_request", lang)),
        (http.post(url, json={"question": number, "option": 7}), 400, t("hall.bad_request", lang)),
        (http.post(url, json={"question": number, "option": 0, "pad": "x" * 2000}), 400,
         t("hall.bad_request", lang)),
        (http.post(url, json={"question": number + 1, "option": 0}), 409, t("hall.closed", lang)),
        (http.post(f"/r/ZZZZZZ/answer?lang={lang}", json={"question": 1, "option": 0}), 404,
         t("hall.unknown", lang, code="ZZZZZZ")),
        (http.post(f"/r/%3Cb%3E/answer?lang={lang}", json={"question": 1, "option": 0}), 400,
         t("hall.bad_code", lang)),
    ]
    for response, status, said in cases:
        assert (response.status_code, response.json()) == (status, {"error": said})
    store.ask(code, secret, None)  # closed before the answer arrived
    assert student.answer(number, option=0) == (409, {"error": t("hall.closed", lang)})
    assert store.tally(code) is None


def test_an_exercise_is_not_answered_with_an_option(store):
    code, secret = open_room(store, question=False)
    store.ask(code, secret, Question("exercise", ("right", "wrong"), None, {"id": "x", "seed": "0"}))
    student = Student(code)
    assert student.answer(option=0) == (400, {"error": t("hall.exercise", "en")})
    assert store.tally(code).answered == 0


def test_a_flood_of_answers_from_one_client_is_bounded_per_minute(store):
    code, _ = open_room(store)
    student = Student(code)
    statuses = [student.answer(option=0)[0] for _ in range(routes.ANSWERS_PER_MINUTE + 5)]
    assert statuses[: routes.ANSWERS_PER_MINUTE] == [200] * routes.ANSWERS_PER_MINUTE
    assert set(statuses[routes.ANSWERS_PER_MINUTE:]) == {429}
    assert store.tally(code).answered == 1
    elsewhere = Student(code, host="10.0.0.9")  # another client is not held back
    assert elsewhere.answer(option=1)[0] == 200


def test_the_rooms_bounds_on_answers_are_said(store, monkeypatch):
    monkeypatch.setattr(rooms, "MAX_ANSWERS", 2)
    code, _ = open_room(store)
    for host in ("10.0.0.1", "10.0.0.2"):
        assert Student(code, host=host).answer(option=0)[0] == 200
    third = Student(code, "zh", host="10.0.0.3")
    assert third.answer(option=0) == (409, {"error": t("classroom.q.full", "zh")})
    assert store.tally(code).answered == 2


# -- files ----------------------------------------------------------------------------------------------


def test_the_pages_files_are_served_and_nothing_else():
    http = client()
    files = [("follower.js", "javascript"), ("follower.css", "css"), ("plotly.min.js", "javascript"),
             ("katex.min.js", "javascript"), ("katex.min.css", "css")]
    for name, kind in files:
        served = http.get(f"/hall/{name}")
        assert served.status_code == 200 and kind in served.headers["content-type"], name
    assert http.get("/hall/fonts/KaTeX_Main-Regular.woff2").headers["content-type"] == "font/woff2"
    for refused in ("/hall/app.py", "/hall/..%2Fapp.py", "/hall/fonts/..%2F..%2Fkatex.min.js",
                    "/hall/fonts/KaTeX_x.ttf"):
        assert http.get(refused).status_code == 404, refused
