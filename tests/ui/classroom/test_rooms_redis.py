"""What only the Redis store has: keys that expire, no key made of student input, two servers sharing
rooms and telling each other of changes, and a Redis that stops, restarts or was never there.
(``tests/ui/classroom/test_rooms.py`` runs every rule of a room on this store too.)"""

from __future__ import annotations

import logging
import threading
import time

import pytest
import redis
from redisserver import RedisServer
from serverprocess import free_port

import ui.classroom.rooms_redis
from ui.classroom.rooms import NotPresenter, Question, RoomError, Unavailable, UnknownRoom
from ui.classroom.rooms_redis import KEEP_SECONDS, RedisStore

ASK = Question("next_token", ("cat", "dog"), answer=1)


@pytest.fixture
def server(redis_server):
    redis_server.client.flushdb()
    return redis_server


@pytest.fixture
def no_pause(monkeypatch):
    """A store tries Redis again at once after a failure (the pause is for a class of pages)."""
    monkeypatch.setattr(ui.classroom.rooms_redis, "RETRY_SECONDS", 0.0)


def a_busy_room(store):
    room = store.create(settings={"sentence": "重庆很重要 🙂"}, client="203.0.113.7")
    with pytest.raises(NotPresenter):
        store.recover(room.code, f"{(int(room.pin) + 1) % 10**6:06d}", client="203.0.113.8")
    store.update(room.code, room.secret, step=3)
    store.ask(room.code, room.secret, ASK)
    store.seen(room.code, "voter-1")
    store.answer(room.code, 1, "voter-1", 1, client="203.0.113.7")
    return room


def test_every_key_expires(server):
    store = RedisStore(server.url)
    room = a_busy_room(store)
    keys = server.client.keys("*")
    # the room, its answers, its members, the index, its PIN failures, its answers' clients, and the
    # rooms its client started
    assert len(keys) == 7, keys
    for key in keys:
        assert 0 < server.client.ttl(key) <= KEEP_SECONDS, key
    store.end(room.code, room.secret)
    for key in server.client.keys("*"):
        assert 0 < server.client.ttl(key) <= KEEP_SECONDS, key


BAD_CODES = ["", "AAAAAA:x", "*", "glassbox:rooms", "ABCDEF\n", "K7MO2P", "../" * 30, "x" * 10_000, "房间码"]
BAD_IDS = ["", "a b", "a:b", "*", "x" * 65, "名字", "\x00", "a\nb"]


def test_no_student_input_becomes_a_key(server):
    store = RedisStore(server.url)
    room = a_busy_room(store)
    before = sorted(server.client.keys("*"))
    for code in BAD_CODES:
        with pytest.raises(RoomError):
            store.state(code)
        with pytest.raises(RoomError):
            store.seen(code, "member-2")
    for member in BAD_IDS:
        with pytest.raises(RoomError):
            store.seen(room.code, member)
        with pytest.raises(RoomError):
            store.answer(room.code, 1, member, 0)
    with pytest.raises(UnknownRoom):  # a well-formed code of no room makes no key either
        store.seen("K7MQ2P", "member-2")
    assert sorted(server.client.keys("*")) == before
    assert server.client.hkeys(store.keys(room.code)[1]) == ["voter-1"]


def test_two_servers_share_one_room(server):
    a, b = RedisStore(server.url), RedisStore(server.url)
    room = a.create(step=1, settings={"sentence": "the cat sat"})
    assert b.state(room.code).settings == {"sentence": "the cat sat"}
    b_version = a.update(room.code, room.secret, step=2)
    assert b.version(room.code) == b_version and b.state(room.code).step == 2
    secret = b.recover(room.code, a.pin(room.code, room.secret))  # the lecturer moves to server B
    b.ask(room.code, secret, ASK)
    a.seen(room.code, "voter-a")
    b.seen(room.code, "voter-b")
    a.answer(room.code, 1, "voter-a", 0)
    b.answer(room.code, 1, "voter-b", 1)
    assert a.tally(room.code).counts == (1, 1)
    with pytest.raises(NotPresenter):
        b.update(room.code, "not the secret", step=9)


def test_answers_from_many_threads_on_two_servers_are_counted_once_each(server):
    a, b = RedisStore(server.url), RedisStore(server.url)
    room = a.create()
    a.ask(room.code, room.secret, ASK)
    barrier = threading.Barrier(8)

    def vote(store, worker):
        barrier.wait()
        for i in range(50):
            store.seen(room.code, f"voter-{i}")
            store.answer(room.code, 1, f"voter-{i}", worker % 2)  # everyone votes for 50 ids

    threads = [threading.Thread(target=vote, args=(a if w % 2 else b, w)) for w in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert a.tally(room.code).answered == 50


def wait_for(predicate, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.02)


def test_a_change_announced_by_one_server_wakes_the_others_not_itself(server):
    a, b, c = RedisStore(server.url), RedisStore(server.url), RedisStore(server.url)
    heard = {"a": [], "b": [], "c": []}
    for name, store in zip("abc", (a, b, c), strict=True):
        store.listen(heard[name].append)
    time.sleep(0.3)  # the subscriptions are made in the listeners' threads
    room = a.create()
    a.announce(room.code)
    wait_for(lambda: heard["b"] == [room.code] and heard["c"] == [room.code])
    time.sleep(0.2)
    assert heard["a"] == []
    a.listen(heard["a"].append)  # listening twice is one listener
    b.announce("not a code")  # nothing is sent for what is not a code
    server.client.publish("glassbox:changed", "someone *")  # nor heard
    b.announce(room.code)
    wait_for(lambda: heard["a"] == [room.code])
    time.sleep(0.2)
    assert heard == {"a": [room.code], "b": [room.code], "c": [room.code, room.code]}


def test_without_persistence_a_restart_forgets_rooms_and_servers_hear_again(no_pause):
    server = RedisServer()
    try:
        a, b = RedisStore(server.url), RedisStore(server.url)
        heard = []
        b.listen(heard.append, lambda: heard.append("resync"))
        room = a.create()
        time.sleep(0.3)  # b has subscribed
        server.stop()
        with pytest.raises(Unavailable):
            a.state(room.code)
        with pytest.raises(Unavailable):
            a.create()
        a.announce(room.code)  # never raises: followers see the change at their next look
        server.start()
        with pytest.raises(UnknownRoom):  # the room is gone with the data: pages say it ended
            a.state(room.code)
        again = a.create()
        a.update(again.code, again.secret, step=4)  # the scripts are loaded again
        wait_for(lambda: "resync" in heard)  # back: what was announced meanwhile may be lost
        wait_for(lambda: (a.announce(again.code), again.code in heard)[1])
    finally:
        server.stop()


def test_a_redis_that_does_not_answer_fails_fast_and_says_so(server):
    store = RedisStore(server.url)
    room = store.create()
    dead = RedisStore(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    began = time.monotonic()
    for _ in range(20):
        with pytest.raises(Unavailable) as refused:
            dead.state(room.code)
    assert time.monotonic() - began < 3  # the first call fails, the next ones wait for RETRY_SECONDS
    assert "unavailable" in str(refused.value)


@pytest.mark.parametrize("url", ["", "localhost:6379", "http://127.0.0.1:6379", "redis://127.0.0.1:notaport"])
def test_a_malformed_url_makes_rooms_unavailable_not_a_crash(url, caplog):
    store = RedisStore(url)
    with pytest.raises(Unavailable):
        store.create()
    with pytest.raises(Unavailable):
        store.state("K7MQ2P")
    store.announce("K7MQ2P")
    store.listen(lambda code: None)


@pytest.mark.parametrize(
    ("url", "option"),
    [("redis://127.0.0.1:6379/0?timeout=1", "timeout"), ("redis://127.0.0.1:6379/0?foo=bar", "foo"),
     ("redis://127.0.0.1:6379/0?socket_timeout=soon", "socket_timeout")],
)
def test_an_option_the_client_does_not_take_is_named_at_start_and_nothing_raises(url, option, caplog):
    store = RedisStore(url)
    for call in (store.create, lambda: store.state("K7MQ2P"), lambda: store.seen("K7MQ2P", "m")):
        with pytest.raises(Unavailable):
            call()
    store.announce("K7MQ2P")
    store.listen(lambda code: None)
    assert f"the Redis client does not take the option {option!r}" in store.problem
    assert any(option in record.getMessage() and record.levelname == "ERROR" for record in caplog.records)


def test_an_option_the_client_takes_is_kept(server):
    store = RedisStore(f"{server.url}?socket_timeout=2&health_check_interval=5")
    assert store.problem is None
    assert store.state(store.create().code).version == 1


def test_whatever_the_client_raises_is_unavailable_not_a_traceback(server, no_pause, monkeypatch):
    store = RedisStore(server.url)
    room = store.create()

    def chokes(*args, **kwargs):
        raise TypeError("AbstractConnection.__init__() got an unexpected keyword argument 'timeout'")

    monkeypatch.setattr(store._client, "evalsha", chokes)
    with pytest.raises(Unavailable):
        store.state(room.code)
    monkeypatch.undo()
    assert store.state(room.code).version == 1


def test_the_listener_listens_again_after_an_unexpected_error(server, no_pause, monkeypatch):
    a, b = RedisStore(server.url), RedisStore(server.url)
    heard = []
    real, tries = b._subscriber.pubsub, []

    def flaky(**kwargs):
        tries.append(1)
        if len(tries) == 1:
            raise TypeError("an option the client chokes on")
        return real(**kwargs)

    monkeypatch.setattr(b._subscriber, "pubsub", flaky)
    b.listen(heard.append)
    room = a.create()
    wait_for(lambda: (a.announce(room.code), room.code in heard)[1])


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # it dies on purpose
def test_a_listener_that_died_is_started_again_by_the_next_call(server, no_pause, monkeypatch):
    a, b = RedisStore(server.url), RedisStore(server.url)
    heard, died = [], threading.Event()
    real = b._listen

    def dies_once(*args):
        monkeypatch.setattr(b, "_listen", real)
        died.set()
        raise RuntimeError("the listening thread ends")

    monkeypatch.setattr(b, "_listen", dies_once)
    b.listen(heard.append)
    room = a.create()
    assert died.wait(10)
    time.sleep(0.2)  # the thread has ended
    b.version(room.code)  # any call of this server's pages
    wait_for(lambda: (a.announce(room.code), room.code in heard)[1])


def test_an_outage_is_logged_once_and_the_return_once(server, monkeypatch, caplog):
    """A listener that cannot reach Redis tries again every RETRY_SECONDS; the log says so once per
    outage, not once per try (an evening without Redis must not fill the server's log)."""
    monkeypatch.setattr(ui.classroom.rooms_redis, "RETRY_SECONDS", 0.05)
    a, b = RedisStore(server.url), RedisStore(server.url)
    tries = []
    real = b._subscriber.pubsub

    def away_for_a_while(**kwargs):
        tries.append(1)
        if len(tries) <= 20:
            raise redis.ConnectionError("Connection refused")
        return real(**kwargs)

    monkeypatch.setattr(b._subscriber, "pubsub", away_for_a_while)
    heard = []
    with caplog.at_level(logging.WARNING, logger=ui.classroom.rooms_redis.log.name):
        b.listen(heard.append)
        room = a.create()
        wait_for(lambda: (a.announce(room.code), room.code in heard)[1])
    said = [r.getMessage() for r in caplog.records if "room announcements" in r.getMessage()]
    assert len(tries) > 20
    assert len(said) == 2 and "stopped" in said[0] and "heard again" in said[1], said
