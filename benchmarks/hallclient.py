"""Followers of a lecture hall room as raw Server-Sent Events streams, many per process (asyncio).

    follower = Follower("http://127.0.0.1:8501", "K7MQ2P")
    await follower.follow()          # GET /r/K7MQ2P/events?lang=en until closed or cancelled
    follower.steps                   # step -> time.monotonic() its first ``room`` event arrived

What a browser's EventSource does, without the browser: one HTTP/1.1 GET on its own connection
(``asyncio.open_connection``), the chunked body undone and the events parsed by hand
(ui/hall/broadcast.py: ``hello``, then ``room`` events with the room version as ``id``, comments as
keep-alives). Nothing is drawn; a follower that is refused, cut off or told ``away``/``gone`` keeps
the reason in ``errors`` and does not reconnect: a benchmark must show it, not smooth it over.

As a worker process (benchmarks/classroom.py starts them) it holds many followers and answers one
JSON line per command read on stdin::

    {"cmd": "join", "url": U, "code": C, "lang": "en", "at": [t, ...], "wait": 30}
        one follower opening at each monotonic instant t; the answer once each has its first slide,
        failed, or waited ``wait`` seconds: {"joined": k, "failed": f}
    {"cmd": "mark"}        {"bytes": every byte received so far, "live": open streams}
    {"cmd": "want", "step": S, "until": t}   once every open stream has step S, or at t: {"have": k}
    {"cmd": "stop"}        the streams closed; {"followers": [...], "lag": [[t, late], ...]}
"""

from __future__ import annotations

import asyncio
import json
import re
import resource
import sys
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

CONNECT_S = 10.0  # a connection (or its response head) that takes longer is a failed join
HEADING = re.compile(r"(\d+) / (\d+) ")  # a slide's heading: "{step} / {total} · {title}"
SERVER_COOKIE = "glassbox_server"  # HAProxy's affinity cookie (deploy/haproxy*.cfg): names the replica
LAG_PERIOD_S = 0.05

_PARSED: dict[tuple, tuple] = {}  # (event id, data size) -> (version, step, heading step or None)


def raise_fd_limit() -> tuple[int, int]:
    """Open files: the soft limit up to the hard one (each stream is a socket); the limits now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)


def room_of(event_id: bytes | None, lines: list[bytes]) -> tuple:
    """(version, step, the step its slide's heading names or None without a slide) of a room event's
    ``data:`` lines. The id is the room version and every follower of a language gets the same bytes,
    so each version is parsed once per process (all of a worker's followers read one language)."""
    key = (event_id, sum(len(line) for line in lines))
    found = _PARSED.get(key) if event_id is not None else None
    if found is None:
        message = json.loads(b"\n".join(line[5:].removeprefix(b" ") for line in lines))
        room, slide = message.get("room", {}), message.get("slide")
        shown = HEADING.match(slide.get("heading", "")) if slide else None
        found = (room.get("version"), room.get("step"), int(shown[1]) if shown else None)
        if len(_PARSED) > 256:
            _PARSED.clear()
        _PARSED[key] = found
    return found


@dataclass
class Follower:
    """One student's stream: what arrived when, and what went wrong."""

    url: str
    code: str
    lang: str = "en"
    opened: float = float("nan")  # time.monotonic() the connection was started
    joined: float | None = None  # when the first room event with a slide arrived
    steps: dict[int, float] = field(default_factory=dict)  # step -> first arrival of a room event of it
    versions: list[int] = field(default_factory=list)  # the room versions received, in order
    out_of_order: int = 0  # room events of a step older than one received before
    bytes: int = 0  # every byte read from the socket (head, chunk framing, events, keep-alives)
    events: int = 0  # room events
    keepalives: int = 0
    replica: str = ""  # the balancer's affinity cookie on the answer ("" without a balancer)
    errors: list[str] = field(default_factory=list)
    closed: bool = False

    async def follow(self) -> None:
        self.opened = time.monotonic()
        writer = None
        try:
            parts = urlsplit(self.url)
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(parts.hostname, parts.port, limit=2**24), CONNECT_S
            )
            writer.write(
                f"GET /r/{self.code}/events?lang={self.lang} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
                "Accept: text/event-stream\r\nCache-Control: no-cache\r\n\r\n".encode()
            )
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), CONNECT_S)
            self.bytes += len(head)
            if await self._refused(head, reader):
                return
            await self._read(reader, b"transfer-encoding: chunked" in head.lower())
        except asyncio.CancelledError:
            raise
        except (OSError, EOFError, asyncio.LimitOverrunError, ValueError) as exc:  # refused, cut, garbled
            self.errors.append(f"{type(exc).__name__}: {exc}"[:200])
        finally:
            self.closed = True
            if writer is not None:
                writer.close()

    async def _refused(self, head: bytes, reader: asyncio.StreamReader) -> bool:
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "set-cookie":
                key, _, val = value.split(";", 1)[0].strip().partition("=")
                if key == SERVER_COOKIE:
                    self.replica = val
            elif name.strip().lower() == "content-encoding" and value.strip() not in ("", "identity"):
                self.errors.append(f"the stream came {value.strip()}-encoded")
                return True
        if status == 200:
            return False
        body = b""
        length = re.search(rb"content-length:\s*(\d+)", head, re.IGNORECASE)
        if length:
            body = await asyncio.wait_for(reader.readexactly(min(int(length[1]), 2000)), CONNECT_S)
        self.errors.append(f"HTTP {status}: {body.decode(errors='replace')[:160]}")
        return True

    async def _read(self, reader: asyncio.StreamReader, chunked: bool) -> None:
        """The body, chunked or not, cut into lines (a single-byte ``find``: memchr); a blank line
        ends an event. An event's data line (the slide, tens of kB) is copied once."""
        rest = b""  # a line not complete yet
        event: list[bytes] = []  # the lines of the event being read
        while True:
            if chunked:
                line = await reader.readuntil(b"\r\n")
                size = int(line.split(b";", 1)[0], 16)
                piece = await reader.readexactly(size + 2)
                self.bytes += len(line) + size + 2
                if size == 0:
                    self.errors.append("the server ended the stream")
                    return
                piece = piece[:-2]
            else:
                piece = await reader.read(65536)
                if not piece:
                    self.errors.append("the server closed the stream")
                    return
                self.bytes += len(piece)
            now = time.monotonic()
            buf, start = rest + piece if rest else piece, 0
            while (end := buf.find(b"\n", start)) >= 0:
                if end == start:
                    if event:
                        self._event(event, now)
                        event = []
                elif buf[start] == 58:  # ":": a comment, the stream's keep-alive
                    self.keepalives += 1
                else:
                    event.append(buf[start:end])
                start = end + 1
            rest = buf[start:]

    def _event(self, lines: list[bytes], now: float) -> None:
        kind, event_id = "message", None
        data = [line for line in lines if line.startswith(b"data:")]
        for line in lines:
            if line.startswith(b"event:"):
                kind = line[6:].strip().decode()
            elif line.startswith(b"id:"):
                event_id = line[3:].strip()
        if kind == "room":
            self._room(event_id, data, now)
        elif kind in ("away", "gone"):
            self.errors.append(f"{kind}: {b''.join(data).decode(errors='replace')[:120]}")

    def _room(self, event_id: bytes | None, data: list[bytes], now: float) -> None:
        version, step, shown = room_of(event_id, data)
        self.events += 1
        self.versions.append(version)
        if shown is not None and shown != step:
            self.errors.append(f"room step {step}, its slide's heading says step {shown}")
        if self.steps and step < max(self.steps):
            self.out_of_order += 1
        self.steps.setdefault(step, now)
        if shown is not None and self.joined is None:
            self.joined = now

    def summary(self) -> dict:
        return {
            "opened": self.opened, "joined": self.joined, "steps": self.steps, "versions": self.versions,
            "out_of_order": self.out_of_order, "bytes": self.bytes, "events": self.events,
            "keepalives": self.keepalives, "replica": self.replica, "errors": self.errors[:5],
            "closed": self.closed,
        }  # fmt: skip


async def loop_lag(out: list[tuple[float, float]]) -> None:
    """(when, how late) this event loop woke a sleeper: a busy client stamps its arrivals late."""
    while True:
        t0 = time.monotonic()
        await asyncio.sleep(LAG_PERIOD_S)
        now = time.monotonic()
        out.append((now, now - t0 - LAG_PERIOD_S))


# -- the worker process ---------------------------------------------------------------------------------


class Worker:
    def __init__(self) -> None:
        self.followers: list[Follower] = []
        self.tasks: list[asyncio.Task] = []
        self.lag: list[tuple[float, float]] = []

    async def join(self, url: str, code: str, lang: str, at: list[float], wait: float) -> dict:
        async def one(follower: Follower, t: float) -> None:
            await asyncio.sleep(max(0.0, t - time.monotonic()))
            await follower.follow()

        for t in at:
            follower = Follower(url, code, lang)
            self.followers.append(follower)
            self.tasks.append(asyncio.create_task(one(follower, t)))
        deadline = max(at, default=time.monotonic()) + wait
        await self._until(lambda f: f.joined is not None, deadline)
        return {"joined": sum(f.joined is not None for f in self.followers),
                "failed": sum(f.joined is None for f in self.followers)}  # fmt: skip

    async def _until(self, done, deadline: float) -> None:
        """Until ``done(f)`` for every open follower, or ``deadline``: looked at every 0.1 s, only the
        followers still waited for (the arrival times are stamped as they come, not here)."""
        waiting = self.followers
        while waiting := [f for f in waiting if not (done(f) or f.closed)]:
            if time.monotonic() >= deadline:
                return
            await asyncio.sleep(0.1)

    async def serve(self) -> None:
        raise_fd_limit()
        lagging = asyncio.create_task(loop_lag(self.lag))
        reader = asyncio.StreamReader(limit=2**24)
        loop = asyncio.get_running_loop()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while line := await reader.readline():
            command = json.loads(line)
            cmd = command.pop("cmd")
            if cmd == "join":
                answer = await self.join(**command)
            elif cmd == "mark":
                answer = {"bytes": sum(f.bytes for f in self.followers),
                          "live": sum(not f.closed for f in self.followers)}  # fmt: skip
            elif cmd == "want":
                await self._until(lambda f, step=command["step"]: step in f.steps, command["until"])
                answer = {"have": sum(command["step"] in f.steps for f in self.followers)}
            elif cmd == "stop":
                for task in self.tasks:
                    task.cancel()
                await asyncio.gather(*self.tasks, return_exceptions=True)
                lagging.cancel()
                answer = {"followers": [f.summary() for f in self.followers], "lag": self.lag}
            else:
                answer = {"error": f"unknown command {cmd}"}
            sys.stdout.write(json.dumps(answer) + "\n")
            sys.stdout.flush()
            if cmd == "stop":
                return


if __name__ == "__main__":
    asyncio.run(Worker().serve())
