"""ui.hall.broadcast: one channel per followed room, each version built once per language and the same
bytes written to every follower; the newest version only to a follower behind; a reconnect with the
version it has gets nothing until the next; a change told from another thread arrives at once; a store
that stops answering is said, and the room comes back with it."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from hallclient import Away

from i18n import t
from ui.classroom.rooms import MemoryStore
from ui.hall.broadcast import Hall


class Built:
    """A build that records each (version, lang) it is asked for."""

    def __init__(self) -> None:
        self.calls: list[tuple[int, str]] = []

    def __call__(self, state, tally, lang: str) -> str:
        self.calls.append((state.version, lang))
        return json.dumps({"room": {"code": state.code, "version": state.version, "step": state.step},
                           "lang": lang})


def events(raw: bytes) -> tuple[str, dict | None, int | None]:
    """(event name, its JSON data, its id) of one Server-Sent Event; a comment is ("", None, None)."""
    name, data, event_id = "", None, None
    for line in raw.decode().splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
        elif line.startswith("id: "):
            event_id = int(line[4:])
    return name, data, event_id


class Follower:
    """A follower's stream read by a task of its own (as the route's response reads it), so that a test
    may wait for an event with a timeout without ending the stream."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self.received: asyncio.Queue = asyncio.Queue()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for raw in self.stream:
            await self.received.put(events(raw))

    async def next(self, timeout: float = 5.0) -> tuple[str, dict | None, int | None]:
        return await asyncio.wait_for(self.received.get(), timeout)

    async def aclose(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.stream.aclose()


async def next_room(follower: Follower, timeout: float = 5.0) -> dict:
    while True:
        name, data, _ = await follower.next(timeout)
        if name == "room":
            return data


@pytest.fixture
def room():
    store = MemoryStore()
    created = store.create(step=1, settings={"weights": "random"})
    return store, created.code, created.secret


def hall_of(store, build, poll: float = 30.0) -> Hall:
    hall = Hall(build, poll=poll)
    hall.connect(lambda: store)
    return hall


def test_each_version_is_built_once_per_language_whatever_the_followers(room):
    store, code, secret = room
    build = Built()

    async def main():
        hall = hall_of(store, build)
        streams = [Follower(hall.follow(code, lang)) for lang in ["en"] * 30 + ["zh"] * 20]
        for s in streams:
            assert (await s.next())[0] == "hello"
        firsts = [await next_room(s) for s in streams]
        assert {(f["room"]["version"], f["lang"]) for f in firsts} == {(store.version(code), "en"),
                                                                       (store.version(code), "zh")}
        version = store.update(code, secret, step=2)
        hall.notify(code)
        seconds = [await next_room(s) for s in streams]
        assert {s["room"]["step"] for s in seconds} == {2}
        before = firsts[0]["room"]["version"]
        expected = [(before, "en"), (before, "zh"), (version, "en"), (version, "zh")]
        assert sorted(build.calls) == sorted(expected)
        for s in streams:
            await s.aclose()
        assert hall.followers() == 0
        await hall.close()

    asyncio.run(main())


def test_a_follower_behind_gets_the_newest_version_only(room):
    store, code, secret = room

    async def room_event(stream) -> dict:  # the stream read directly: nothing reads it in between
        while True:
            name, data, _ = events(await anext(stream))
            if name == "room":
                return data

    async def main():
        hall = hall_of(store, Built())
        stream = hall.follow(code, "en")
        first = await room_event(stream)
        for step in (2, 3, 4):  # three changes while the follower reads nothing
            store.update(code, secret, step=step)
            hall.notify(code)
            await asyncio.sleep(0.2)
        newest = await room_event(stream)
        assert newest["room"]["step"] == 4 and newest["room"]["version"] > first["room"]["version"]
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(room_event(stream), 0.5)  # nothing older queued behind it
        await stream.aclose()
        await hall.close()

    asyncio.run(main())


def test_a_reconnect_with_the_version_it_has_waits_for_the_next(room):
    store, code, secret = room

    async def main():
        hall = hall_of(store, Built())
        first = Follower(hall.follow(code, "en"))
        await first.next()
        version = (await next_room(first))["room"]["version"]
        again = Follower(hall.follow(code, "en", last=version))  # the stream's Last-Event-ID after a drop
        await again.next()
        with pytest.raises(TimeoutError):
            await next_room(again, timeout=0.5)
        other = Follower(hall.follow(code, "en", last=version - 1))  # behind: the current one at once
        await other.next()
        assert (await next_room(other, timeout=1.0))["room"]["version"] == version
        store.update(code, secret, step=5)
        hall.notify(code)
        assert (await next_room(again))["room"]["step"] == 5
        for s in (first, again, other):
            await s.aclose()
        await hall.close()

    asyncio.run(main())


def test_a_change_told_from_another_thread_arrives_long_before_the_poll(room):
    store, code, secret = room

    async def main():
        hall = hall_of(store, Built(), poll=30.0)
        hall.attach(asyncio.get_running_loop())
        stream = Follower(hall.follow(code, "en"))
        await stream.next()
        await next_room(stream)

        def lecturer():  # the lecturer's page runs in a thread of Streamlit's
            store.update(code, secret, step=7)
            hall.notify(code)

        threading.Thread(target=lecturer).start()
        assert (await next_room(stream, timeout=3.0))["room"]["step"] == 7
        await stream.aclose()
        await hall.close()

    asyncio.run(main())


def test_an_unknown_room_says_so_and_a_failed_build_is_told_not_hidden():
    store = MemoryStore()

    def broken(state, tally, lang):
        raise RuntimeError("no such model here")

    async def main():
        hall = hall_of(store, broken)
        stream = Follower(hall.follow("ABCDEF", "en"))
        await stream.next()
        name, data, _ = await stream.next()
        assert name == "gone" and "ABCDEF" in data["said"]
        await stream.aclose()
        code = store.create(step=1).code
        stream = Follower(hall.follow(code, "zh"))
        await stream.next()
        said = (await next_room(stream))["said"]
        assert "no such model here" in said and said.startswith("这张幻灯片")
        await stream.aclose()
        await hall.close()

    asyncio.run(main())


def test_a_store_that_stops_answering_is_said_once_and_the_slide_comes_back_with_it(room):
    """The shared store away (Redis restarting): every follower is told once, in its language, and keeps
    its slide; when the store answers, the room's message comes again (the note goes) within a poll."""
    store, code, secret = room
    flaky = Away(store)

    async def main():
        hall = Hall(Built(), poll=0.2)
        hall.connect(lambda: flaky)
        en, zh = Follower(hall.follow(code, "en")), Follower(hall.follow(code, "zh"))
        for s in (en, zh):
            await s.next()
            await next_room(s)
        flaky.away = True
        for s, lang in ((en, "en"), (zh, "zh")):
            name, data, _ = await s.next(timeout=2.0)
            assert name == "away" and data["said"] == t("classroom.unavailable", lang)
        with pytest.raises(TimeoutError):  # said once, not at every poll
            await en.next(timeout=0.8)
        flaky.away = False
        for s in (en, zh):
            assert (await next_room(s, timeout=2.0))["room"]["version"] == store.version(code)
        store.update(code, secret, step=3)
        hall.notify(code)
        assert (await next_room(en))["room"]["step"] == 3
        for s in (en, zh):
            await s.aclose()
        await hall.close()

    asyncio.run(main())
