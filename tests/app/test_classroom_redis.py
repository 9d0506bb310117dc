"""Rooms over Redis (a real redis-server): a lecturer (the Lecture page, AppTest) on one server and
students (the hall's routes, in-process: hallclient) on another, a store that stops answering (the
lecturer's page still draws and says so, the class goes on once it answers again), a store that lost
its rooms (the lecturer and the students are told the room ended), and ``GLASSBOX_REDIS_URL`` choosing
the store.

Two servers here are two ``RedisStore`` objects over one Redis, swapped in as the store before each
page's run or student's request (all in this process); tests/browser/test_cluster.py runs real servers."""

from __future__ import annotations

import pytest
from apphelpers import assert_clean
from hallclient import Student, client
from redisserver import RedisServer
from serverprocess import free_port
from test_classroom import click, heading, keyed, reloaded, said, shown, start_room, texts

import ui.classroom.panels as classroom
import ui.classroom.rooms_redis
from i18n import t
from ui.classroom.rooms import MemoryStore
from ui.classroom.rooms_redis import RedisStore


@pytest.fixture
def servers(redis_server, monkeypatch):
    """Server A's and server B's stores over one Redis; ``on(store)`` makes the next run use it."""
    redis_server.client.flushdb()
    monkeypatch.setattr(ui.classroom.rooms_redis, "RETRY_SECONDS", 0.0)
    a, b = RedisStore(redis_server.url), RedisStore(redis_server.url)
    return a, b


def on(monkeypatch, store):
    monkeypatch.setattr(classroom, "_STORE", store)


def test_a_lecturer_on_one_server_and_students_on_another_follow_each_other(servers, monkeypatch):
    a, b = servers
    on(monkeypatch, a)
    lecturer, code = start_room({"sentence": "重庆很重要", "step": "2"})
    on(monkeypatch, b)
    student, student_zh = Student(code), Student(code, "zh")
    assert student.message()["slide"]["heading"] == heading(2, "tokens")
    assert student_zh.message()["slide"]["heading"] == heading(2, "tokens", "zh")
    on(monkeypatch, a)
    click(lecturer, "lecture_next")
    assert b.state(code).step == 3  # server B reads what server A wrote
    on(monkeypatch, b)
    assert student.message()["slide"]["heading"] == heading(3, "embeddings")
    assert student_zh.message()["slide"]["heading"] == heading(3, "embeddings", "zh")
    on(monkeypatch, a)
    lecturer.run()
    assert lecturer.metric[0].value == "2"  # seen on server B, counted on server A


def test_two_presenter_tabs_on_two_servers_the_newest_drives(servers, monkeypatch):
    """The lecturer's two tabs, each served by another server (one cookie): the newer one's step holds,
    the older one says so and sends nothing, until it presents again."""
    a, b = servers
    on(monkeypatch, a)
    first, code = start_room({"step": "3"})
    secret = first.session_state[classroom.PRESENTER].secret
    on(monkeypatch, b)
    second = reloaded(monkeypatch, {"glassbox_presenter": f"{code}.{secret}"}, {"step": "8"})
    assert_clean(second)
    on(monkeypatch, a)
    for _ in range(2):
        first.run()
        assert_clean(first)
    assert a.state(code).step == 8
    assert t("lecture.superseded", code=code) in said(first)
    click(first, "room_present_here")
    assert b.state(code).step == 3
    on(monkeypatch, b)
    second.run()
    assert t("lecture.superseded", code=code) in said(second)
    assert a.state(code).step == 3


def test_a_store_that_stops_answering_is_said_and_the_class_goes_on_when_it_answers(servers, monkeypatch):
    a, _ = servers
    dead = RedisStore(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    on(monkeypatch, a)
    lecturer, code = start_room({"step": "4"})
    student = Student(code)
    on(monkeypatch, dead)
    lecturer.run()
    assert_clean(lecturer)
    assert t("classroom.unavailable") in said(lecturer)
    refused = student.http.post(f"/r/{code}/answer", json={"question": 1, "option": 0})
    assert refused.status_code == 503 and refused.json() == {"error": t("classroom.unavailable")}
    click(lecturer, "lecture_next")  # the lecturer keeps teaching; the room hears of it later
    assert_clean(lecturer)
    assert shown(lecturer) == heading(5, "encoder")
    on(monkeypatch, a)
    lecturer.run()  # the store answers again: the next run publishes the step on screen
    assert student.message()["slide"]["heading"] == heading(5, "encoder")
    assert t("classroom.unavailable") not in said(lecturer)


def test_nobody_starts_a_room_while_the_store_is_away(monkeypatch):
    on(monkeypatch, RedisStore(f"redis://127.0.0.1:{free_port()}/0"))
    from apphelpers import open_page  # noqa: PLC0415

    page = open_page("pages/lecture.py")
    click(page, "room_start")
    assert_clean(page)
    assert t("classroom.unavailable") in said(page)
    assert "room_start" in [b.key for b in page.button]  # no room panel for a room that is not
    assert client().get("/r/K7MQ2P").status_code == 200  # not "no such room": the store cannot say


def test_rooms_lost_with_the_store_end_on_every_screen_that_followed(monkeypatch):
    server = RedisServer()  # saves nothing: a restart forgets every room
    try:
        monkeypatch.setattr(ui.classroom.rooms_redis, "RETRY_SECONDS", 0.0)
        on(monkeypatch, RedisStore(server.url))
        lecturer, code = start_room()
        student = Student(code, "zh")
        server.stop()
        server.start()
        lecturer.run()
        assert_clean(lecturer)
        assert t("classroom.lost", code=code) in said(lecturer)
        gone = student.http.get(f"/r/{code}?lang=zh")  # the student's reload; the stream says "gone"
        assert gone.status_code == 404 and t("hall.unknown", "zh", code=code) in gone.text
        assert "room_start" in [b.key for b in lecturer.button]  # the lecturer can start a new one
        click(lecturer, "room_start")
        assert_clean(lecturer)
        (new,) = texts(keyed(lecturer, "room_code_big"))
        assert new != code
    finally:
        server.stop()


def test_the_environment_chooses_the_store(monkeypatch, redis_server):
    monkeypatch.delenv(classroom.REDIS_URL, raising=False)
    assert isinstance(classroom._make_store(), MemoryStore)
    monkeypatch.setenv(classroom.REDIS_URL, redis_server.url)
    store = classroom._make_store()
    assert isinstance(store, RedisStore)
    store.create()  # it reaches the server
    assert store._listening  # and hears the other servers
    monkeypatch.setenv(classroom.REDIS_URL, "not a url")
    on(monkeypatch, classroom._make_store())
    refused = client().post("/r/K7MQ2P/answer", json={"question": 1, "option": 0})
    assert refused.status_code == 503 and refused.json() == {"error": t("classroom.unavailable")}
