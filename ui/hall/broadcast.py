"""One channel per followed room: each new version of the room is built once per language in use and
the same bytes are written to every follower of that language.

    HALL.notify(code)                           # any thread: room ``code`` changed (the lecturer's page)
    async for event in HALL.follow(code, "zh", last):  # a follower's stream (Server-Sent Events)

A channel watches its room while it has followers: it wakes when told (``notify``, or another
server's announcement through the store) and also looks every ``POLL_SECONDS``, so a lost
announcement costs at most that; a store that does not answer is said (``away``) until it does.
The store and the slides are read in worker threads, never on the event loop. A follower that cannot
keep up gets the newest version only: a step it missed is never queued behind the next. Each event
carries the room's version as its id: a follower that reconnects with ``Last-Event-ID`` gets the
current version at once, or nothing until the next if it has it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from i18n import t
from ui.classroom.rooms import RoomError, RoomState, RoomStore, Tally, Unavailable, UnknownRoom
from ui.hall.slides import room_message

log = logging.getLogger("glassbox.hall")

POLL_SECONDS = 2.0  # a channel looks at its room this often even when nobody tells it of a change
KEEPALIVE_SECONDS = 15.0  # a comment line on a quiet stream: proxies keep it open, a dead client shows
RETRY_MS = (1000, 3000)  # a follower's reconnect wait, drawn per stream: a restart is no thundering herd
SEEN_SECONDS = 15.0  # a follower's stream tells the store it is there this often (the head count)
MAX_FOLLOWERS = 5000  # streams one server holds at once, every room together


END = b""  # put in a follower's queue: its stream ends (the server is stopping)


class HallFull(Exception):
    """This server follows ``MAX_FOLLOWERS`` streams already."""


Build = Callable[[RoomState, Tally | None, str], str]


@dataclass
class Channel:
    """A followed room: its last version, that version's event per language, the followers' queues."""

    code: str
    version: int | None = None
    events: dict[str, bytes] = field(default_factory=dict)
    queues: dict[str, set[asyncio.Queue]] = field(default_factory=dict)
    woken: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task | None = None
    away: bool = False  # the store did not answer the last look (the followers were told)

    def followers(self) -> int:
        return sum(len(q) for q in self.queues.values())


def sse(event: str, data: str, event_id: int | None = None, retry_ms: int | None = None) -> bytes:
    """One Server-Sent Event (``data`` is one line of JSON: it holds no newline)."""
    lines = []
    if retry_ms is not None:
        lines.append(f"retry: {retry_ms}")
    if event_id is not None:
        lines.append(f"id: {event_id}")
    lines += [f"event: {event}", f"data: {data}", "", ""]
    return "\n".join(lines).encode("utf-8")


def _away(lang: str) -> bytes:
    """The store does not answer: the follower keeps its slide, and its page says why nothing moves."""
    return sse("away", json.dumps({"said": t("classroom.unavailable", lang)}, ensure_ascii=False))


class Hall:
    """Every followed room of this server. ``store`` is read in threads; ``build(state, tally, lang)``
    makes the JSON of one room version in one language (``ui.hall.slides.room_message``)."""

    def __init__(self, build: Build, poll: float = POLL_SECONDS) -> None:
        self._build, self._poll = build, poll
        self._store: Callable[[], RoomStore] | None = None
        self._channels: dict[str, Channel] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()  # the loop as notify() reads it from other threads
        self._ending = False  # end_streams was called: the server is stopping

    # -- any thread ------------------------------------------------------------------------------

    def connect(self, store: Callable[[], RoomStore]) -> None:
        """``store()`` is the room store (``ui.classroom.panels.room_store``, which connects it)."""
        self._store = store

    def store(self) -> RoomStore:
        if self._store is None:
            raise RuntimeError("the hall has no room store: import ui.classroom.panels first")
        return self._store()

    def notify(self, code: str) -> None:
        """Room ``code`` changed: its channel looks now (a no-op when nobody here follows it)."""
        with self._lock:
            loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake, code)

    def end_streams(self) -> None:
        """The server is stopping: every stream ends now (its follower reconnects, to this server once
        it is back or to another), and none starts. Uvicorn waits for open responses before it stops,
        and a stream never ends by itself."""
        with self._lock:
            loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._end_all)

    def notify_all(self) -> None:
        """Announcements may have been missed (the shared store was away): every channel looks."""
        with self._lock:
            loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake_all)

    # -- the event loop --------------------------------------------------------------------------

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            self._loop = loop

    async def close(self) -> None:
        self._ending = False  # a hall attached again (a test's next loop) follows again
        for channel in list(self._channels.values()):
            if channel.task is not None:
                channel.task.cancel()
        self._channels.clear()
        with self._lock:
            self._loop = None

    def followers(self) -> int:
        return sum(c.followers() for c in self._channels.values())

    def _wake(self, code: str) -> None:
        channel = self._channels.get(code)
        if channel is not None:
            channel.woken.set()

    def _wake_all(self) -> None:
        for channel in self._channels.values():
            channel.woken.set()

    def _end_all(self) -> None:
        self._ending = True
        for channel in self._channels.values():
            for queues in channel.queues.values():
                for queue in queues:
                    if queue.full():
                        queue.get_nowait()
                    queue.put_nowait(END)

    async def follow(self, code: str, lang: str, last: int | None = None) -> AsyncIterator[bytes]:
        """The events of room ``code`` for one follower in ``lang``: the current version at once (unless
        it is ``last``, which the follower has), then each new one; a comment when all is quiet."""
        if self._loop is None:
            self.attach(asyncio.get_running_loop())
        if self._ending or self.followers() >= MAX_FOLLOWERS:
            raise HallFull()
        channel = self._channels.get(code)
        if channel is None:
            channel = self._channels[code] = Channel(code)
        queue: asyncio.Queue = asyncio.Queue(maxsize=1)
        channel.queues.setdefault(lang, set()).add(queue)
        try:
            yield sse("hello", json.dumps({"code": code}), retry_ms=random.randint(*RETRY_MS))
            if channel.task is None or channel.task.done():
                channel.task = asyncio.create_task(self._watch(channel))
            elif lang not in channel.events:
                channel.woken.set()  # a language nobody here followed yet: build it now
            elif channel.version != last:
                yield channel.events[lang]
            if channel.away:  # told to the others when the store went: a newcomer is told now
                yield _away(lang)
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                if event is END:
                    return
                yield event
        finally:
            queues = channel.queues.get(lang, set())
            queues.discard(queue)
            if not queues:
                channel.queues.pop(lang, None)
                channel.events.pop(lang, None)
            if not channel.queues and self._channels.get(code) is channel:
                del self._channels[code]
                if channel.task is not None:
                    channel.task.cancel()

    async def _watch(self, channel: Channel) -> None:
        """While the room has followers here: look, build what changed, send it; wait to be woken."""
        while self._channels.get(channel.code) is channel:
            channel.woken.clear()
            try:
                await self._look(channel)
            except asyncio.CancelledError:
                raise
            except Exception:  # a failure of one look must not end the room's stream: the next looks again
                log.exception("room %s: looking at the room failed", channel.code)
            try:
                await asyncio.wait_for(channel.woken.wait(), self._poll)
            except TimeoutError:
                pass

    async def _look(self, channel: Channel) -> None:
        store = self.store()
        try:
            version = await asyncio.to_thread(store.version, channel.code)
        except UnknownRoom:  # a room this channel had shown is lost (the store forgot it), else unknown
            key = "hall.unknown" if channel.version is None else "classroom.lost"
            self._send_all(channel, None, lambda lang: sse("gone", json.dumps(
                {"said": t(key, lang, code=channel.code)}, ensure_ascii=False)))
            return
        except Unavailable:  # the shared store is away: followers keep their slide, told why nothing moves
            if not channel.away:
                channel.away = True
                self._send_all(channel, None, _away)
            return
        back, channel.away = channel.away, False
        langs = set(channel.queues)
        if version == channel.version and langs <= set(channel.events):
            if back:  # nothing moved meanwhile: the slide they have again, which clears the note
                self._send_all(channel, version, channel.events.get)
            return
        try:
            state = await asyncio.to_thread(store.state, channel.code)
            tally = await asyncio.to_thread(store.tally, channel.code) if state.question else None
        except RoomError:
            channel.away = back  # not read after all: whoever has the note keeps it until a look clears it
            return
        same = state.version == channel.version  # a language new here: the others are built already
        events = {lang: event for lang, event in channel.events.items() if same and lang in langs}
        for lang in langs - set(events):
            events[lang] = await asyncio.to_thread(self._event, state, tally, lang)
        # a follower told the store was away gets the slide again, which clears the note
        new = {lang: events[lang] for lang in events if not same or back or lang not in channel.events}
        channel.version, channel.events = state.version, events
        self._send_all(channel, state.version, new.get)

    def _event(self, state: RoomState, tally: Tally | None, lang: str) -> bytes:
        try:
            data = self._build(state, tally, lang)
        except Exception as exc:  # a slide this server cannot build: the follower is told, not left waiting
            log.exception("room %s: the slide of version %s failed in %s", state.code, state.version, lang)
            said = t("hall.slide_failed", lang, error=f"{type(exc).__name__}: {exc}"[:300])
            room = {"code": state.code, "version": state.version, "step": state.step, "ended": state.ended}
            data = json.dumps({"room": room, "said": said, "lang": lang}, ensure_ascii=False)
        return sse("room", data, event_id=state.version)

    @staticmethod
    def _send_all(channel: Channel, version: int | None, event_of: Callable[[str], bytes | None]) -> None:
        for lang, queues in channel.queues.items():
            event = event_of(lang)
            if event is None:
                continue
            for queue in queues:
                if queue.full():  # a follower behind by a version gets only the newest
                    queue.get_nowait()
                queue.put_nowait(event)


# This server's hall: the routes stream from it, the lecturer's page tells it of every change.
HALL = Hall(room_message)
