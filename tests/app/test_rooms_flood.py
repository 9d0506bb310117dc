"""Rooms under a flood from one client: a client that started too many rooms, a full server, a PIN
guesser (the Lecture page, through AppTest); a script voting with fresh ids (the hall's answer route,
in-process: hallclient); a Redis URL with an option the client does not take; a student who opened the
room while Redis was away.

AppTest's sessions have no address (``ui.classroom.clients.client`` says ``local``); a test that needs several
clients sets the one the next run sees (``as_client``); a hall client names its own address."""

from __future__ import annotations

import pytest
from apphelpers import assert_clean, open_page
from hallclient import Student, client
from serverprocess import free_port
from test_classroom import PAGE, Spy, click, heading, keyed, said, shown, start_room, submit, texts
from test_quiz import SENTENCE, ask

import ui.classroom.panels as classroom
import ui.classroom.rooms as rooms
import ui.classroom.rooms_redis
from i18n import t
from ui.classroom.clients import LOCAL
from ui.classroom.rooms_redis import RedisStore
from ui.hall import routes


@pytest.fixture
def store(monkeypatch):
    fresh = Spy()
    monkeypatch.setattr(classroom, "_STORE", fresh)
    routes._ANSWERS.clear()
    return fresh


def as_client(monkeypatch, address: str) -> None:
    """The next runs' sessions come from ``address``."""
    monkeypatch.setattr(classroom, "client", lambda: address)


# -- item 14: rooms ---------------------------------------------------------------------------------


def test_a_client_that_started_too_many_rooms_is_told_why_and_its_rooms_go_on(store):
    started = [store.create(client=LOCAL) for _ in range(rooms.CLIENT_ROOMS)]  # this browser's client
    page = open_page(PAGE)
    click(page, "room_start")
    assert_clean(page)
    assert said(page) == [t("classroom.too_many_rooms", minutes=10)]
    assert "room_start" in [b.key for b in page.button]  # no room panel for a room that was not made
    assert len(store) == rooms.CLIENT_ROOMS
    assert all(store.state(room.code).version == 1 for room in started)


def test_another_client_still_starts_a_room(store, monkeypatch):
    for _ in range(rooms.CLIENT_ROOMS):
        store.create(client="203.0.113.66")
    as_client(monkeypatch, "198.51.100.1")
    lecturer, code = start_room()
    assert store.state(code).step == 1


# -- item 15: the PIN -------------------------------------------------------------------------------


def try_pin(page, code: str, pin: str):
    page.text_input(key="room_recover_code").input(code)
    page.text_input(key="room_recover_pin").input(pin)
    return submit(page)


def test_a_pin_guesser_locks_out_itself_and_the_lecturer_takes_the_room_over(store, monkeypatch):
    lecturer, code = start_room({"step": "4"})
    (pin,) = texts(keyed(lecturer, "room_pin"))
    wrong = f"{(int(pin) + 1) % 10**6:06d}"
    as_client(monkeypatch, "203.0.113.66")
    guesser = open_page(PAGE)
    for i in range(8):
        try_pin(guesser, code, wrong)
        assert_clean(guesser)
        key = "classroom.wrong_pin" if i < rooms.MAX_PIN_FAILURES else "classroom.pin_locked"
        assert texts(keyed(guesser, "room_recover_said")) == [t(key, code=code)]
    try_pin(guesser, code, pin)  # locked out: even the right PIN, from the guesser's client
    assert texts(keyed(guesser, "room_recover_said")) == [t("classroom.pin_locked", code=code)]
    as_client(monkeypatch, "198.51.100.1")  # the lecturer's laptop
    laptop = open_page(PAGE)
    try_pin(laptop, code, pin)
    assert_clean(laptop)
    assert t("classroom.recovered", code=code) in said(laptop)
    assert shown(laptop) == heading(4, "positional")


# -- item 16: answers -------------------------------------------------------------------------------


def test_a_script_voting_from_one_client_leaves_the_class_its_answers(store, monkeypatch):
    """A script opening the hall page again and again (a fresh member cookie each time) from one address:
    it counts ``CLIENT_ANSWERS`` times, then is told; the class on other addresses is counted."""
    monkeypatch.setattr(rooms, "CLIENT_ANSWERS", 2)
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    ask(lecturer, "BPE")
    replies = [Student(code, host="203.0.113.66").answer(option=0) for _ in range(3)]  # fresh voters
    assert [status for status, _ in replies] == [200, 200, 429]
    assert replies[2][1] == {"error": t("classroom.q.full_here")}
    for i in range(3):
        assert Student(code, host=f"198.51.100.{i}").answer(option=1)[0] == 200
    tally = store.tally(code)
    assert tally.counts[:2] == (2, 3) and tally.answered == 5


def test_an_answer_from_a_browser_that_follows_is_counted_and_a_made_up_voter_is_refused(store):
    lecturer, code = start_room({"sentence": SENTENCE, "step": "2"})
    ask(lecturer, "BPE")
    q = store.state(code).question
    with pytest.raises(rooms.NotFollowing):  # a voter id no page ever followed with
        store.answer(code, q.number, "made-up", 0, client="203.0.113.66")
    assert Student(code).answer(option=0)[0] == 200
    assert store.tally(code).answered == 1


# -- item 17: a Redis URL with an option ---------------------------------------------------------------


@pytest.mark.parametrize("query", ["timeout=1", "foo=bar"])
def test_a_redis_url_with_an_option_the_client_does_not_take_leaves_every_page_working(
    monkeypatch, redis_server, query
):
    monkeypatch.setenv(classroom.REDIS_URL, f"{redis_server.url}?{query}")
    store = classroom._make_store()
    monkeypatch.setattr(classroom, "_STORE", store)
    page = open_page(PAGE)
    click(page, "room_start")
    assert_clean(page)
    assert t("classroom.unavailable") in said(page)
    assert client().get("/r/K7MQ2P").status_code == 200  # the page opens; its stream says the store is away
    refused = client().post("/r/K7MQ2P/answer", json={"question": 1, "option": 0})
    assert refused.status_code == 503 and refused.json() == {"error": t("classroom.unavailable")}
    assert f"option {query.split('=')[0]!r}" in store.problem  # and the operator's log says which


# -- item 20: a student who came while Redis was away ------------------------------------------------


def test_a_student_who_opened_the_room_while_redis_was_away_gets_the_page_and_then_the_room(
    redis_server, monkeypatch
):
    """The hall page opens while the store does not answer (not "no such room": it cannot know), and the
    room's message is what the stream sends once the store answers (tests/ui/hall/test_broadcast.py)."""
    redis_server.client.flushdb()
    monkeypatch.setattr(ui.classroom.rooms_redis, "RETRY_SECONDS", 0.0)
    live = RedisStore(redis_server.url)
    monkeypatch.setattr(classroom, "_STORE", live)
    lecturer, code = start_room({"step": "5"})
    monkeypatch.setattr(classroom, "_STORE", RedisStore(f"redis://127.0.0.1:{free_port()}/0"))  # away
    http = client()
    assert http.get(f"/r/{code}").status_code == 200
    monkeypatch.setattr(classroom, "_STORE", live)  # back
    student = Student(code)
    assert student.message()["slide"]["heading"] == heading(5, "encoder")
    lecturer.run()
    assert_clean(lecturer)
