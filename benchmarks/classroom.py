"""The lecture hall (issue 40): a lecturer presses Next, how soon does every follower of ``/r/CODE`` have it?

    .venv/bin/python benchmarks/classroom.py                  # N = 100, 300, 1000 on one server, 10 steps
    .venv/bin/python benchmarks/classroom.py --lb 2           # then Redis + 2 replicas + HAProxy, N = 2000
    .venv/bin/python benchmarks/classroom.py --quick --no-old # N = 20, 3 steps, 1 browser: a smoke run

Per level: a fresh ``streamlit run app.py`` (stclient's Server; embedded rooms, no Redis) or, with
``--lb R``, a fresh ``deploy.local.Cluster(replicas=R, redis=True)`` reached through HAProxy's URL, each
replica warmed by a /lecture run. The lecturer is a websocket session (stclient's protocol) on
``/lecture``: ``room_start``, the code from ``room_code_big``. N stream followers (benchmarks/hallclient.py:
raw HTTP/1.1 Server-Sent Events, many per asyncio worker process, ``--procs``) and B Chromium pages
(Playwright, Debian's Chromium) open the room at uniform random moments of the same 10 s. Join: the
connection started → the first ``room`` event with a slide (a browser: ``h2#heading`` shows "S / total").
Then ``--idle`` s with nobody moving, then K presses of ``lecture_next``, ``--gap`` s + 0–1 s apart,
timed from the click; the lecturer does not wait for the class. Propagation: the click's message sent →
a stream's first ``room`` event of the new step (a browser: its heading shows it, polled by
``wait_for_function`` and timed here). Lost steps: a step a follower had not 10 s after its click, or a
step older than one it had already. Every time is ``time.monotonic()`` (one clock for all processes).

CPU from /proc/PID/stat, each server with its process tree: over the steps phase, less the idle
phase's rate over the same time, per step and per follower per step (the lecturer's own page runs are
in it); beside it the marginal cost, the slope of CPU per step against followers over the levels run.
RSS per follower: the servers' RSS with everyone joined less before the joins, over N. Bytes: what a
stream reads per step, HTTP framing and keep-alives included. The client shares the 2 cores with the
servers: its CPU (workers, this process, Chromium) and its event loop's lateness are reported, a late
loop stamps arrivals late. Refusals (the hall's MAX_FOLLOWERS, a full balancer, too few file
descriptors: the soft limit is raised to the hard one here and inherited by every server) are errors,
never retried. Behind HAProxy (``balance leastconn``: an open stream counts) each stream's replica is its
``glassbox_server`` cookie; the frontend's session limit and peaks come from HAProxy's stats socket.

``--old REV`` (default the last commit of the Streamlit-session design): the benchmark of that commit,
run from a temporary ``git worktree`` (removed at the end) at ``--old-n`` followers, 6 steps, 1 browser;
its table rows printed beside these. One table at the end with the machine and a verdict per target
(issue 40): N = 1,000 on one server p95 ≤ 1 s and 0 lost steps; N = 300 joining in 10 s, join p95 ≤ 2 s;
≤ 0.5 ms of server CPU per follower per step (at N = 1,000); 2 replicas, N = 2,000, p95 ≤ 1.5 s; a target
whose level was not run is not judged. Exit status 1 on a missed target, an error or a lost step.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from hallclient import HEADING, SERVER_COOKIE, raise_fd_limit
from load import machine
from serverprocess import CHROMIUM, CHROMIUM_FLAGS  # tests/browser: on sys.path once load imported stclient
from stclient import LOG_DIR, ROOT, RunResult, Server, Session, percentile
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

HALLCLIENT = Path(__file__).resolve().parent / "hallclient.py"
ALPHABET = re.search(r'ALPHABET = "(\w+)"', (ROOT / "ui/classroom/rooms.py").read_text())[1]
MAX_FOLLOWERS = int(re.search(r"MAX_FOLLOWERS = (\d+)", (ROOT / "ui/hall/broadcast.py").read_text())[1])
CODE = re.compile(f"[{ALPHABET}]{{6}}")
SPREAD_S = 10.0  # the followers open the room within the same 10 s
MISS_S = 10.0  # a step not had this long after its click is lost; a join slower than this is late
JOIN_WAIT_S = 30.0  # how long after its opening a late joiner is waited for, to report its time
OLD_REV = "70fdd6c"  # main's last commit where each follower was a Streamlit session
OLD_TIMEOUT_S = 1200.0
SEEN_JS = """(step) => {
  const text = document.getElementById('heading')?.textContent ?? '';
  return step === null ? /^\\d+ \\/ \\d+ /.test(text) : text.startsWith(step + ' / ');
}"""
NO_THROTTLING = [  # a student's tab is in front: headless pages must not slow their timers
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]


@dataclass(frozen=True)
class Goal:
    """One target of issue 40: ``value(level) <= limit`` at ``n`` followers in ``mode``."""

    label: str
    mode: str  # "embedded" or "2 replicas"
    n: int
    limit: float
    value: Callable[[dict], float]
    unit: str = " s"


GOALS = [
    Goal("N = 1,000 on one server: propagation p95 ≤ 1 s", "embedded", 1000, 1.0,
         lambda r: percentile(r["propagation"]["all"], 95)),
    Goal("N = 1,000 on one server: 0 lost steps", "embedded", 1000, 0, lambda r: r["lost"], ""),
    Goal("N = 300 joining within the same 10 s: join p95 ≤ 2 s", "embedded", 300, 2.0,
         lambda r: percentile(r["join"]["all"], 95)),
    Goal("≤ 0.5 ms of server CPU per follower per step", "embedded", 1000, 0.5,
         lambda r: r["cpu_ms_per_follower_step"], " ms"),
    Goal("2 replicas: N = 2,000, propagation p95 ≤ 1.5 s", "2 replicas", 2000, 1.5,
         lambda r: percentile(r["propagation"]["all"], 95)),
]  # fmt: skip


def replica_of(set_cookies: list[str]) -> str:
    """The replica a balancer's answer names (its affinity cookie); "" when it set none."""
    for header in set_cookies:
        name, _, value = header.split(";", 1)[0].partition("=")
        if name.strip() == SERVER_COOKIE:
            return value.strip()
    return ""


# -- the lecturer: a websocket tab on /lecture ----------------------------------------------------------


class Lecturer(Session):
    """The lecturer's tab: every message the server sends is read as it comes, the step its heading shows
    is timestamped (``steps``), and its ``run_every`` fragments (the head count) tick as the browser's do."""

    def __init__(self, base_url: str):
        super().__init__(base_url)
        self.page_name = "lecture"
        self.texts: list[str] = []  # texts since the last full run started
        self.step = self.total = 0
        self.steps: dict[int, float] = {}  # step -> when its heading first arrived
        self.full_runs = 0
        self.errors: list[str] = []
        self.replica = ""
        self._timers: dict[str, tuple[float, asyncio.Task]] = {}
        self._news = asyncio.Event()
        self._reader: asyncio.Task | None = None

    async def start(self) -> None:
        await self.open()
        self.replica = replica_of(self.ws.response.headers.get_all("Set-Cookie"))
        await self.ws.send(self.rerun_msg().SerializeToString())
        self._reader = asyncio.create_task(self._read())

    async def click(self, key: str) -> float:
        """Click the button ``key``; returns when its message was sent."""
        msg = self.rerun_msg(once=(WidgetState(id=self._id(key), trigger_value=True),)).SerializeToString()
        sent = time.monotonic()
        await self.ws.send(msg)
        return sent

    async def wait_for(self, done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not done():
            if (left := deadline - time.monotonic()) <= 0:
                return False
            self._news.clear()
            try:
                await asyncio.wait_for(self._news.wait(), left)
            except TimeoutError:
                pass
        return True

    def room_code(self) -> str | None:
        """The code in ``room_code_big``, once the follower URL (the st.code under it) shows it too."""
        urls = " ".join(t for t in self.texts if "/r/" in t)
        return next((t for t in self.texts if CODE.fullmatch(t) and f"/r/{t}" in urls), None)

    async def close(self) -> None:
        for _, timer in self._timers.values():
            timer.cancel()
        if self._reader is not None:
            self._reader.cancel()
        await super().close()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                fwd = ForwardMsg()
                fwd.ParseFromString(raw)
                self._handle(fwd, time.monotonic())
                self._news.set()
        except Exception as exc:  # a closed socket mid-run is an error of the run
            self.errors.append(f"{type(exc).__name__}: {exc}")
            self._news.set()

    def _handle(self, fwd: ForwardMsg, now: float) -> None:
        kind = fwd.WhichOneof("type")
        if kind == "delta":
            result = RunResult(0.0, "ok")
            self._read_delta(fwd.delta, result)
            self.texts += result.texts
            self.errors += result.errors
            for text in result.texts:
                if m := HEADING.match(text):
                    self.step, self.total = int(m[1]), int(m[2])
                    self.steps.setdefault(self.step, now)
        elif kind == "new_session" and not fwd.metadata.run.fragment_ids:
            self.texts = []
            self._stop_timers(list(self._timers))  # the frontend clears them when a full run starts
        elif self.follow_page(fwd):
            pass
        elif kind == "auto_rerun":
            self._start_timer(fwd.auto_rerun.fragment_id, fwd.auto_rerun.interval)
        elif kind == "stop_auto_rerun":
            self._stop_timers(fwd.stop_auto_rerun.fragment_ids)
        elif kind == "script_finished":
            if fwd.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                self.full_runs += 1
            elif fwd.script_finished not in (ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
                                             ForwardMsg.FINISHED_EARLY_FOR_RERUN):  # fmt: skip
                self.errors.append(f"script_finished={fwd.script_finished}")

    def _start_timer(self, fragment_id: str, interval: float) -> None:
        old = self._timers.get(fragment_id)
        if old is not None and old[0] == interval:
            return
        self._stop_timers([fragment_id])
        self._timers[fragment_id] = (interval, asyncio.create_task(self._tick(fragment_id, interval)))

    def _stop_timers(self, fragment_ids) -> None:
        for fragment_id in fragment_ids:
            entry = self._timers.pop(fragment_id, None)
            if entry is not None:
                entry[1].cancel()

    async def _tick(self, fragment_id: str, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self.ws.send(self.rerun_msg(fragment_id=fragment_id).SerializeToString())
            except Exception:  # the reader has recorded why the socket closed
                return


async def open_room(url: str) -> tuple[Lecturer, str]:
    """The lecturer: /lecture, Start a room, the code from the page."""
    lecturer = Lecturer(url)
    await lecturer.start()
    if not await lecturer.wait_for(lambda: "room_start" in lecturer.widgets and lecturer.full_runs, 180):
        raise RuntimeError(f"the lecturer's page has no room_start button: {lecturer.errors[:3]}")
    await lecturer.click("room_start")
    if not await lecturer.wait_for(lambda: lecturer.room_code() is not None and lecturer.step, 60):
        raise RuntimeError(f"no room code on the lecturer's page: {lecturer.errors[:3]}")
    return lecturer, lecturer.room_code()


async def warm(url: str) -> None:
    """One /lecture run directly on a replica: its first run imports torch, which is no follower's join."""
    tab = Lecturer(url)
    await tab.start()
    try:
        if not await tab.wait_for(lambda: tab.full_runs > 0, 180):
            raise RuntimeError(f"{url}: no first run of /lecture: {tab.errors[:3]}")
    finally:
        await tab.close()


# -- the Chromium followers -------------------------------------------------------------------------------


@dataclass
class Tab:
    """A Chromium page on /r/CODE: when it opened, when its heading first showed each step."""

    page: object  # playwright Page
    opened: float = float("nan")
    joined: float | None = None
    steps: dict[int, float] = field(default_factory=dict)
    replica: str = ""
    errors: list[str] = field(default_factory=list)  # uncaught exceptions on the page, failed waits


async def sees(tab: Tab, step: int | None, timeout: float) -> bool:
    """Wait until the heading shows ``step`` (None: any step); record when (here, in Python)."""
    try:
        await tab.page.wait_for_function(SEEN_JS, arg=step, polling="raf", timeout=timeout * 1000)
    except Exception as exc:  # playwright's TimeoutError, or a closed page: the step is lost
        try:
            text = await tab.page.text_content("#heading", timeout=1000)
        except Exception:
            text = "(unreadable)"
        tab.errors.append(f"step {step}: {type(exc).__name__}; the heading shows {text!r}"[:200])
        return False
    now = time.monotonic()
    if step is None:
        step = int(HEADING.match(await tab.page.text_content("#heading"))[1])
    tab.steps.setdefault(step, now)
    return True


async def join_browser(browser, url: str, code: str, at: float) -> Tab:
    await asyncio.sleep(max(0.0, at - time.monotonic()))
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    tab = Tab(await context.new_page())
    tab.page.on("pageerror", lambda exc: tab.errors.append(f"page error: {exc}"[:200]))
    tab.opened = time.monotonic()
    try:
        await tab.page.goto(f"{url}/r/{code}", wait_until="commit")
    except Exception as exc:
        tab.errors.append(f"goto: {type(exc).__name__}: {exc}"[:200])
        return tab
    if await sees(tab, None, JOIN_WAIT_S):
        tab.joined = min(tab.steps.values())
    tab.replica = next((c["value"] for c in await context.cookies() if c["name"] == SERVER_COOKIE), "")
    return tab


# -- the stream followers, in worker processes (hallclient.py) --------------------------------------------


class Crowd:
    """N stream followers spread over ``procs`` worker processes, each answering one JSON line per
    command (hallclient.Worker)."""

    def __init__(self, procs: int, log: Path):
        self.procs, self.log = procs, log
        self.workers: list[asyncio.subprocess.Process] = []

    async def start(self) -> None:
        with open(self.log, "a") as out:
            for _ in range(self.procs):
                self.workers.append(await asyncio.create_subprocess_exec(
                    sys.executable, str(HALLCLIENT), stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE, stderr=out, limit=2**28))  # fmt: skip

    def pids(self) -> list[int]:
        return [w.pid for w in self.workers if w.returncode is None]

    async def _ask(self, worker, command: dict) -> dict:
        worker.stdin.write((json.dumps(command) + "\n").encode())
        await worker.stdin.drain()
        line = await worker.stdout.readline()
        if not line:
            raise RuntimeError(f"a stream worker exited ({worker.returncode}); see {self.log}")
        return json.loads(line)

    async def ask(self, command: dict | list[dict]) -> list[dict]:
        """The same command to every worker, or one command each."""
        commands = command if isinstance(command, list) else [command] * len(self.workers)
        return await asyncio.gather(*(self._ask(w, c) for w, c in zip(self.workers, commands, strict=True)))

    async def join(self, url: str, code: str, at: list[float]) -> None:
        shares = [at[i :: self.procs] for i in range(self.procs)]
        await self.ask([{"cmd": "join", "url": url, "code": code, "lang": "en", "at": s, "wait": JOIN_WAIT_S}
                        for s in shares])  # fmt: skip

    async def received(self) -> int:
        return sum(a["bytes"] for a in await self.ask({"cmd": "mark"}))

    async def stop(self) -> tuple[list[dict], list[tuple[float, float]]]:
        answers = await self.ask({"cmd": "stop"})
        for worker in self.workers:
            await worker.wait()
        followers = [f for a in answers for f in a["followers"]]
        for f in followers:
            f["steps"] = {int(s): t for s, t in f["steps"].items()}
        return followers, [tuple(x) for a in answers for x in a["lag"]]

    async def close(self) -> None:
        """Whatever is still running (a level that failed half-way): ended."""
        for worker in self.workers:
            if worker.returncode is None:
                worker.terminate()
                try:
                    await asyncio.wait_for(worker.wait(), 10)
                except TimeoutError:
                    worker.kill()
                    await worker.wait()


# -- CPU and memory per process, from /proc ---------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int | str) -> list[str]:
    """/proc/PID/stat after the command's name: [1] ppid, [11] utime, [12] stime, [13] cutime, [14] cstime."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                out.setdefault(int(_stat(entry.name)[1]), []).append(int(entry.name))
            except OSError:  # exited while we looked
                pass
    return out


def tree(pid: int, kids: dict[int, list[int]], leave_out: set[int] = frozenset()) -> list[int]:
    """``pid`` and every process below it, but the subtrees of ``leave_out``."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        if p in leave_out:
            continue
        out.append(p)
        todo += kids.get(p, [])
    return out


def cpu_of(pids: list[int], reaped: bool = True) -> float:
    """user + system CPU seconds of the processes (all their threads), with their reaped children's."""
    total = 0.0
    for pid in pids:
        try:
            fields = _stat(pid)
        except OSError:
            continue
        total += sum(int(f) for f in fields[11 : 15 if reaped else 13]) / TICK
    return total


def machine_cpu() -> tuple[float, float]:
    """Seconds every core of the machine was busy so far, and seconds stolen by the hypervisor."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(
        int, Path("/proc/stat").read_text().split()[1:9]
    )
    return (user + nice + system + irq + softirq) / TICK, steal / TICK


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def open_files_limit(pid: int) -> str:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return "/".join(line.split()[3:5])
    return "?"


@dataclass
class Target:
    """The servers of one level: ``pids()`` names the app processes app1..appR and, behind a balancer,
    redis and haproxy; ``url`` is where the people go; ``crowd`` the stream workers (client CPU)."""

    url: str
    pids: Callable[[], dict[str, int]]
    logs: list[Path]
    balancer: Callable[[], dict] | None = None  # HAProxy's frontend figures (show stat)
    crowd: Crowd | None = None
    peaks: dict[str, float] = field(default_factory=dict)  # app process -> largest RSS seen, MB

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far: each server with its process tree; the stream workers ("streams"); this
        process (the lecturer, Playwright's client: "me"); Playwright's driver and Chromium ("browsers");
        the whole machine."""
        kids, servers = children(), self.pids()
        workers = self.crowd.pids() if self.crowd else []
        out = {name: cpu_of(tree(pid, kids)) for name, pid in servers.items()}
        out["streams"] = sum(cpu_of(tree(pid, kids)) for pid in workers)
        out["me"] = cpu_of([os.getpid()], reaped=False)
        others = set(servers.values()) | set(workers)
        out["browsers"] = cpu_of([p for c in kids.get(os.getpid(), []) for p in tree(c, kids, others)])
        out["machine"], out["steal"] = machine_cpu()
        return out

    def rss(self) -> dict[str, float]:
        """Each app server's RSS now (MB); the peaks are kept."""
        now = {name: rss_mb(pid) for name, pid in self.pids().items() if name.startswith("app")}
        for name, mb in now.items():
            self.peaks[name] = max(self.peaks.get(name, 0.0), mb)
        return now

    def log_errors(self) -> list[str]:
        texts = "\n".join(log.read_text(errors="replace") for log in self.logs if log.exists())
        return [line for line in texts.splitlines() if "Traceback" in line or "Uncaught" in line]


def apps(cpu: dict[str, float]) -> float:
    return sum(v for name, v in cpu.items() if name.startswith("app"))


def since(target: Target, before: dict[str, float]) -> dict[str, float]:
    return {name: v - before.get(name, 0.0) for name, v in target.cpu().items()}


async def sample_rss(target: Target, stop: asyncio.Event) -> None:
    while not stop.is_set():
        target.rss()
        try:
            await asyncio.wait_for(stop.wait(), 1.0)
        except TimeoutError:
            pass


# -- one level --------------------------------------------------------------------------------------------


@dataclass
class Level:
    """What one level measured, raw: summarise() makes the figures."""

    mode: str
    n: int
    code: str = ""
    lecturer: Lecturer | None = None
    followers: list[dict] = field(default_factory=list)  # hallclient.Follower.summary()s
    tabs: list[Tab] = field(default_factory=list)
    lag: list[tuple[float, float]] = field(default_factory=list)
    rss_before: dict[str, float] = field(default_factory=dict)
    rss_joined: dict[str, float] = field(default_factory=dict)
    join_cpu: dict[str, float] = field(default_factory=dict)
    idle: dict = field(default_factory=dict)  # cpu, wall_s
    steps: dict = field(default_factory=dict)  # sent (step -> click), cpu, wall_s, t0, t1, bytes
    limits: str = ""
    balancer: dict = field(default_factory=dict)
    log_errors: list[str] = field(default_factory=list)
    peaks: dict[str, float] = field(default_factory=dict)


async def measure(target: Target, level: Level, args, chromium) -> Level:
    """The room, N + B followers joining, the idle cost, K steps, against servers already running."""
    lecturer, level.code = await open_room(target.url)
    level.lecturer = lecturer
    if lecturer.step + args.steps > lecturer.total:
        raise SystemExit(
            f"--steps: the lecture has {lecturer.total} steps, the room starts on {lecturer.step}"
        )
    crowd = target.crowd = Crowd(args.procs, LOG_DIR / f"streams-{level.mode.replace(' ', '')}-{level.n}.log")
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_rss(target, stop))
    waits: list[asyncio.Task] = []
    try:
        await crowd.start()
        await asyncio.sleep(1.0)  # the room's first slide sent, the workers started
        level.rss_before = target.rss()
        level.limits = limits_line(target)
        rng = random.Random(level.n)
        t0 = time.monotonic() + 0.5
        at = sorted(t0 + rng.uniform(0, SPREAD_S) for _ in range(level.n))
        tab_at = [t0 + rng.uniform(0, SPREAD_S) for _ in range(args.browsers if chromium else 0)]
        cpu0 = target.cpu()
        joined = await asyncio.gather(
            crowd.join(target.url, level.code, at),
            *(join_browser(chromium, target.url, level.code, t) for t in tab_at),
        )
        level.join_cpu = since(target, cpu0)
        level.tabs = list(joined[1:])
        await asyncio.sleep(2.0)  # the last joiners' slides drawn
        level.rss_joined = target.rss()
        cpu0, t0 = target.cpu(), time.monotonic()
        await asyncio.sleep(args.idle)
        level.idle = {"cpu": since(target, cpu0), "wall_s": time.monotonic() - t0}
        level.steps = await propagate(target, lecturer, level.tabs, args, waits)
    finally:
        for wait in waits:
            wait.cancel()
        stop.set()
        await sampler
        try:
            if crowd.workers:
                level.followers, level.lag = await asyncio.wait_for(crowd.stop(), 60)
        finally:
            await crowd.close()
            await lecturer.close()
            for tab in level.tabs:
                await tab.page.context.close()
    if target.balancer is not None:
        level.balancer = target.balancer()
    level.log_errors, level.peaks = target.log_errors(), dict(target.peaks)
    return level


async def propagate(target: Target, lecturer: Lecturer, tabs: list[Tab], args, waits: list) -> dict:
    """K presses of Next, ``args.gap`` s (+ 0 to 1 s) after the last click; then every follower is given
    MISS_S from the last click. The CPU, the bytes and the wall time of the whole phase."""
    rng = random.Random(args.steps)
    crowd = target.crowd
    bytes0 = await crowd.received()
    cpu0, t0 = target.cpu(), time.monotonic()
    sent: dict[int, float] = {}
    for _ in range(args.steps):
        step = lecturer.step + 1
        waits += [asyncio.create_task(sees(tab, step, MISS_S + 1.0)) for tab in tabs]  # lost: summarise()
        await asyncio.sleep(0.1)  # the browsers' wait_for_function calls are in place
        sent[step] = await lecturer.click("lecture_next")
        if not await lecturer.wait_for(lambda s=step: s in lecturer.steps, MISS_S):
            lecturer.errors.append(f"the lecturer's own page did not show step {step} in {MISS_S:g} s")
        gap = args.gap + rng.uniform(0, 1.0)
        await asyncio.sleep(max(0.0, gap - (time.monotonic() - sent[step])))
    last = max(sent)
    await crowd.ask({"cmd": "want", "step": last, "until": sent[last] + MISS_S})
    await asyncio.gather(*waits)
    cpu, t1 = since(target, cpu0), time.monotonic()
    return {"sent": sent, "cpu": cpu, "wall_s": t1 - t0, "t0": t0, "t1": t1,
            "bytes": await crowd.received() - bytes0}  # fmt: skip


def limits_line(target: Target) -> str:
    fds = {name: open_files_limit(pid) for name, pid in target.pids().items()}
    soft, hard = raise_fd_limit()
    import uvicorn  # noqa: PLC0415 (what the servers run on: its defaults)

    config = uvicorn.Config(app=None)
    return (
        f"open files: this process {soft}/{hard}, {', '.join(f'{k} {v}' for k, v in fds.items())}; "
        f"the hall's MAX_FOLLOWERS {MAX_FOLLOWERS} per server; uvicorn backlog {config.backlog}, "
        f"limit_concurrency {config.limit_concurrency}"
    )


async def run_embedded(n: int, args, chromium) -> dict:
    """One ``streamlit run app.py``, no Redis: the rooms live in the server."""
    os.environ.pop("GLASSBOX_REDIS_URL", None)
    with Server() as server:
        target = Target(server.url, lambda: {"app1": server.proc.pid}, [server.log_path])
        level = await measure(target, Level("embedded", n), args, chromium)
    return summarise(level, args)


async def run_cluster(replicas: int, n: int, args, chromium) -> dict:
    """A fresh Cluster(replicas=R, redis=True), each replica warmed; every follower through HAProxy."""
    sys.path.insert(0, str(ROOT))
    from deploy.local import BACKEND, Cluster, haproxy_show_stat  # noqa: PLC0415 (only --lb needs it)

    LOG_DIR.mkdir(parents=True, exist_ok=True)
    folder = tempfile.mkdtemp(prefix=f"lb{replicas}-n{n}-", dir=LOG_DIR)
    with Cluster(replicas=replicas, redis=True, log_dir=folder) as cluster:
        await asyncio.gather(*(warm(url) for url in cluster.replica_urls))

        def frontend() -> dict:
            rows = haproxy_show_stat(cluster.stats_socket)
            front = next(r for r in rows if r["pxname"] == BACKEND and r["svname"] == "FRONTEND")
            servers = {
                r["svname"]: r["smax"]
                for r in rows
                if r["pxname"] == BACKEND and r["svname"] in cluster.names
            }
            return {"slim": front["slim"], "smax": front["smax"], "ereq": front["ereq"],
                    "dreq": front["dreq"],
                    "servers_smax": servers}  # fmt: skip

        logs = [cluster.dir / f"{name}.log" for name in cluster.names]
        target = Target(cluster.url, cluster.pids, logs, frontend)
        level = await measure(target, Level(f"{replicas} replica{'s' * (replicas > 1)}", n), args, chromium)
    result = summarise(level, args)
    result["folder"] = folder
    return result


# -- the figures ------------------------------------------------------------------------------------------


def summarise(level: Level, args) -> dict:
    sent, followers, tabs = level.steps["sent"], level.followers, level.tabs
    k, total = len(sent), len(followers) + len(tabs)
    join = {
        "streams": [f["joined"] - f["opened"] for f in followers if f["joined"] is not None],
        "browsers": [t.joined - t.opened for t in tabs if t.joined is not None],
    }
    join["all"] = join["streams"] + join["browsers"]
    prop: dict[str, list[float]] = {"streams": [], "browsers": []}
    lost = Counter()
    for kind, steps_of in (
        ("streams", [f["steps"] for f in followers]),
        ("browsers", [t.steps for t in tabs]),
    ):
        for steps in steps_of:
            for step, at in sent.items():
                if step in steps and steps[step] - at <= MISS_S:
                    prop[kind].append(steps[step] - at)
                else:
                    lost[kind] += 1
    prop["all"] = prop["streams"] + prop["browsers"]
    out_of_order = sum(f["out_of_order"] for f in followers)
    idle, steps = level.idle, level.steps
    idle_rate = {name: v / idle["wall_s"] for name, v in idle["cpu"].items()}
    net = apps(steps["cpu"]) - apps(idle_rate) * steps["wall_s"]
    t0, t1 = steps["t0"], steps["t1"]
    lag = [late for when, late in level.lag if t0 <= when <= t1]
    events_in_steps = [sum(1 for s in f["steps"] if s in sent) for f in followers]
    refused = [e for f in followers for e in f["errors"]]
    errors = {
        "stream errors (refused, cut off, away)": sum(bool(f["errors"]) for f in followers),
        "failed joins": sum(f["joined"] is None for f in followers) + sum(t.joined is None for t in tabs),
        "browser page errors": sum(e.startswith(("page error", "goto")) for t in tabs for e in t.errors),
        "lecturer errors": len(level.lecturer.errors),
        "server log tracebacks": len(level.log_errors),
    }  # fmt: skip
    rss_joined = sum(level.rss_joined.values())
    return {
        "mode": level.mode, "n": level.n, "browsers": len(tabs), "code": level.code, "steps": k,
        "gap": args.gap, "join": join,
        "joined_in_time": (sum(j <= MISS_S for j in join["streams"]), len(followers),
                           sum(j <= MISS_S for j in join["browsers"]), len(tabs)),
        "propagation": prop, "lost": sum(lost.values()) + out_of_order, "lost_by": dict(lost),
        "out_of_order": out_of_order,
        "lecturer_own": [level.lecturer.steps[s] - at for s, at in sent.items() if s in level.lecturer.steps],
        "room_events_per_step": sum(f["events"] for f in followers) / max(1, len(followers) * (k + 1)),
        "errors": errors,
        "error_samples": [*Counter(refused).most_common(4), *((e, 1) for t in tabs for e in t.errors[:2]),
                          *((e, 1) for e in level.lecturer.errors[:3]),
                          *((e, 1) for e in level.log_errors[:3])],
        "idle_cores": apps(idle_rate), "steps_wall_s": steps["wall_s"], "cpu_raw_s": apps(steps["cpu"]),
        "cpu_s_per_step": net / k,
        "cpu_ms_per_follower_step": 1000 * net / (k * total),
        "join_cpu_ms_per_join": 1000 * apps(level.join_cpu) / max(1, total),
        "cores": {name: v / steps["wall_s"] for name, v in steps["cpu"].items()},
        "client_ms_per_step": {name: 1000 * steps["cpu"][name] / k for name in ("streams", "me", "browsers")},
        "lag_p95_s": percentile(lag, 95), "lag_max_s": max(lag, default=float("nan")),
        "rss_before_mb": sum(level.rss_before.values()), "rss_joined_mb": rss_joined,
        "rss_kb_per_follower": 1024 * (rss_joined - sum(level.rss_before.values())) / max(1, total),
        "rss_peaks": level.peaks,
        "kb_per_follower_step": steps["bytes"] / 1000 / max(1, len(followers) * k),
        "steps_had": (min(events_in_steps, default=0), max(events_in_steps, default=0)),
        "spread": {"lecturer": level.lecturer.replica or "app1",
                   "streams": Counter(f["replica"] or "app1" for f in followers),
                   "browsers": Counter(t.replica or "app1" for t in tabs)},
        "balancer": level.balancer, "limits": level.limits,
    }  # fmt: skip


def marginal(results: list[dict], mode: str) -> float | None:
    """ms of server CPU per step per added follower: the least-squares slope over the levels of ``mode``."""
    points = [(r["n"] + r["browsers"], 1000 * r["cpu_s_per_step"]) for r in results if r["mode"] == mode]
    if len({x for x, _ in points}) < 2:
        return None
    mx, my = sum(x for x, _ in points) / len(points), sum(y for _, y in points) / len(points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


# -- the report -------------------------------------------------------------------------------------------


def stats(values: list[float]) -> str:
    if not values:
        return "—"
    return (f"p50 {percentile(values, 50):.2f} s  p95 {percentile(values, 95):.2f} s  max {max(values):.2f} s"
            f"  (n={len(values)})")  # fmt: skip


def three(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{percentile(values, 50):.2f} / {percentile(values, 95):.2f} / {max(values):.2f} s"


def spread(on: Counter) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(on.items())) or "none"


def report(r: dict) -> None:
    print(f"\n{r['mode']}, N = {r['n']} streams + {r['browsers']} Chromium, room {r['code']}, "
          f"{r['steps']} steps {r['gap']:g} s (+0–1 s) apart")  # fmt: skip
    print(f"  {r['limits']}")
    for label, figures in (
        ("join: open → first slide", r["join"]),
        ("propagation: click → the step", r["propagation"]),
    ):
        for kind in ("all", "streams", "browsers"):
            print(f"  {label if kind == 'all' else '':<32} {kind:<8} {stats(figures[kind])}")
    s_in, s_n, b_in, b_n = r["joined_in_time"]
    print(f"  joined within {MISS_S:g} s: {s_in} of {s_n} streams, {b_in} of {b_n} browsers")
    print(f"  {'lecturer: click → own heading':<41} {stats(r['lecturer_own'])}")
    lo, hi = r["steps_had"]
    print(f"  lost steps: {r['lost']} (not had in {MISS_S:g} s: {r['lost_by'] or 0}; out of order: "
          f"{r['out_of_order']}); steps a stream had: {lo} to {hi} of {r['steps']}; room events per stream "
          f"per step {r['room_events_per_step']:.2f}")  # fmt: skip
    print(f"  server CPU: idle {r['idle_cores']:.3f} cores; the steps phase {r['cpu_raw_s']:.2f} s over "
          f"{r['steps_wall_s']:.0f} s; net of idle {1000 * r['cpu_s_per_step']:.0f} ms per step = "
          f"{r['cpu_ms_per_follower_step']:.3f} ms per follower per step; joins "
          f"{r['join_cpu_ms_per_join']:.1f} ms per follower")  # fmt: skip
    print(f"  server RSS: {r['rss_before_mb']:.0f} MB before the joins, {r['rss_joined_mb']:.0f} MB with "
          f"everyone: {r['rss_kb_per_follower']:.0f} kB per follower; max "
          f"{', '.join(f'{k} {v:.0f} MB' for k, v in r['rss_peaks'].items())}")  # fmt: skip
    print(f"  bytes: {r['kb_per_follower_step']:.1f} kB per stream follower per step")
    c = r["client_ms_per_step"]
    print(f"  client CPU per step: stream workers {c['streams']:.0f} ms "
          f"({1000 * c['streams'] / max(1, r['n']):.0f} µs per stream), this process (lecturer, Playwright) "
          f"{c['me']:.0f} ms, Playwright's driver and Chromium {c['browsers']:.0f} ms; the workers' event "
          f"loop late over the steps: p95 {r['lag_p95_s']:.3f} s, max {r['lag_max_s']:.3f} s")  # fmt: skip
    cores = r["cores"]
    names = sorted(k for k in cores if k.startswith("app")) + [
        "redis",
        "haproxy",
        "streams",
        "me",
        "browsers",
    ]
    ours = sum(v for k, v in cores.items() if k not in ("machine", "steal"))
    print(f"  cores busy over the steps: {', '.join(f'{k} {cores[k]:.2f}' for k in names if k in cores)}, "
          f"others {max(0.0, cores['machine'] - ours):.2f}; machine {cores['machine']:.2f} of "
          f"{os.cpu_count()} (steal {cores['steal']:.2f})")  # fmt: skip
    sp = r["spread"]
    if r["balancer"]:
        b = r["balancer"]
        print(f"  through HAProxy: lecturer on {sp['lecturer']}; streams {spread(sp['streams'])}; browsers "
              f"{spread(sp['browsers'])}; frontend session limit {b['slim']}, peak {b['smax']}, request "
              f"errors {b['ereq']}, denied {b['dreq']}; peak sessions per replica "
              f"{b['servers_smax']}")  # fmt: skip
    detail = ", ".join(f"{k} {v}" for k, v in r["errors"].items())
    print(f"  errors: {sum(r['errors'].values())} ({detail})")
    for text, count in r["error_samples"][:10]:
        print(f"    {count} × {text[:300]}")


def table(results: list[dict], old: list[dict]) -> None:
    print("\n| mode | N (+ browsers) | propagation p50 / p95 / max | streams p95 · browsers p95 "
          "| join p50 / p95 / max | joined ≤ 10 s | lost steps | errors | server CPU / step "
          "| per follower / step | RSS server · per follower | kB / follower / step | client workers / step "
          "· loop late p95 |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        p = r["propagation"]
        s_in, s_n, b_in, b_n = r["joined_in_time"]
        print(f"| {r['mode']} | {r['n']} (+{r['browsers']}) | {three(p['all'])} | "
              f"{percentile(p['streams'], 95):.2f} · {percentile(p['browsers'], 95):.2f} s | "
              f"{three(r['join']['all'])} | "
              f"{s_in + b_in} of {s_n + b_n} | {r['lost']} | {sum(r['errors'].values())} | "
              f"{1000 * r['cpu_s_per_step']:.0f} ms | {r['cpu_ms_per_follower_step']:.3f} ms | "
              f"{max(r['rss_peaks'].values()):.0f} MB · {r['rss_kb_per_follower']:.0f} kB | "
              f"{r['kb_per_follower_step']:.1f} kB | {r['client_ms_per_step']['streams']:.0f} ms · "
              f"{r['lag_p95_s']:.3f} s |")  # fmt: skip
    for mode in sorted({r["mode"] for r in results}):
        slope = marginal(results, mode)
        if slope is not None:
            print(
                f"marginal server CPU, {mode}: {slope:.3f} ms per step per added follower (the slope over N)"
            )
    if old:
        print(f"\nbeside the old design ({OLD_REV}: every follower a Streamlit session), the same run:")
        print("| design | N (+ browsers) | propagation p95 | server CPU / follower / step | server RSS max |")
        print("|---|---|---|---|---|")
        for r in results:
            print(f"| hall ({r['mode']}) | {r['n']} (+{r['browsers']}) | "
                  f"{percentile(r['propagation']['all'], 95):.2f} s | "
                  f"{r['cpu_ms_per_follower_step']:.3f} ms | "
                  f"{max(r['rss_peaks'].values()):.0f} MB |")  # fmt: skip
        for o in old:
            print(f"| Streamlit sessions | {o['n']} (+{o['browsers']}) | {o['p95']:.2f} s | "
                  f"{o['cpu_ms']:.0f} ms "
                  f"({o['cpu_raw_ms']:.0f} raw) | {o['rss_mb']:.0f} MB |")  # fmt: skip


def verdicts(results: list[dict]) -> bool:
    """Each goal at its own N and mode; a goal whose level was not run is not judged (the nearest level
    run of its mode is shown, for a smoke run). True when every goal judged is met and no level had an
    error or a lost step."""
    print()
    ok = True
    for goal in GOALS:
        runs = [r for r in results if r["mode"] == goal.mode]
        at = next((r for r in runs if r["n"] == goal.n), None)
        if at is None:
            near = min(runs, key=lambda r: abs(r["n"] - goal.n), default=None)
            seen = f"; at N = {near['n']}: {goal.value(near):.3g}{goal.unit}" if near else ""
            print(f"target {goal.label}: not judged (no {goal.mode} level of N = {goal.n}{seen})")
            continue
        value = goal.value(at)
        ok &= value <= goal.limit
        print(f"target {goal.label}: {'met' if value <= goal.limit else 'MISSED'} ({value:.3g}{goal.unit})")
    errors = sum(sum(r["errors"].values()) for r in results)
    lost = sum(r["lost"] for r in results)
    print(f"errors over all levels: {errors}; lost steps over all levels: {lost}")
    return ok and not errors and not lost


def machine_line(chromium_version: str) -> str:
    m = machine()
    return (
        f"machine: {m['nproc']} cores, {m['cpu']}, {m['ram_gib']} GiB RAM, shared by the servers and every "
        f"client here (stream workers, the lecturer, Chromium); Python {platform.python_version()}, "
        f"Streamlit {version('streamlit')}, Playwright {version('playwright')}, Chromium {chromium_version}; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


# -- the old design, from its own commit --------------------------------------------------------------------


def old_design(rev: str, n: int, steps: int, browsers: int) -> list[dict]:
    """The benchmark of ``rev`` run from a temporary worktree of that commit (removed after); the rows of
    its table. Its own targets are its business; a run with no table is an error (RuntimeError)."""
    base = Path(tempfile.mkdtemp(prefix="glassbox-old-"))
    tree_dir = base / "tree"
    log = LOG_DIR / f"classroom-old-{rev}.log"
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree_dir), rev], check=True
    )
    try:
        (tree_dir / ".venv").symlink_to((ROOT / ".venv").resolve())
        cmd = [str(tree_dir / ".venv/bin/python"), "benchmarks/classroom.py", "--n", str(n),
               "--steps", str(steps), "--browsers", str(browsers)]  # fmt: skip
        print(
            f"\n(the old design: {' '.join(cmd[1:])} in a worktree of {rev}; its output in {log})", flush=True
        )
        env = {k: v for k, v in os.environ.items() if k != "GLASSBOX_REDIS_URL"}
        with open(log, "w") as out:
            proc = subprocess.Popen(
                cmd, cwd=tree_dir, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )  # its group: its server and Chromium with it
            try:
                proc.wait(OLD_TIMEOUT_S)
            except BaseException:
                end_group(proc)
                raise
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree_dir)], check=False)
        shutil.rmtree(base, ignore_errors=True)
    text = log.read_text(errors="replace")
    rows = [parse_old_row(line) for line in text.splitlines() if re.match(r"\| \d+ \(\+\d+\) \|", line)]
    for line in text.splitlines():
        if line.startswith(("target ", "errors over all", "wall time")):
            print(f"  old: {line}")
    if not rows:
        raise RuntimeError(f"the old design's benchmark printed no table (exit {proc.returncode}); see {log}")
    return rows


def end_group(proc: subprocess.Popen) -> None:
    """The old benchmark's process group (it, its server, its Chromium): SIGTERM, SIGKILL after 15 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(15)
            return
        except subprocess.TimeoutExpired:
            continue


def parse_old_row(line: str) -> dict:
    """``| N (+B) | p50 / p95 / max s | browsers p95 | join … | errors | X ms (Y raw) | idle | RSS MB |``."""
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    numbers = [[float(x) for x in re.findall(r"-?\d+(?:\.\d+)?|nan", c)] for c in cells]
    return {"n": int(numbers[0][0]), "browsers": int(numbers[0][1]), "p95": numbers[1][1],
            "errors": int(numbers[4][0]), "cpu_ms": numbers[5][0], "cpu_raw_ms": numbers[5][1],
            "rss_mb": numbers[7][0]}  # fmt: skip


# -- main -------------------------------------------------------------------------------------------------


async def run_all(args) -> list[dict]:
    """Each level in turn, one Chromium for all."""
    from playwright.async_api import async_playwright  # noqa: PLC0415 (only this benchmark needs it)

    plan = [(f"embedded, N = {n}", run_embedded, (n,)) for n in ([] if args.no_embedded else args.n)]
    plan += [(f"{r} replica(s), N = {n}", run_cluster, (r, n)) for r in args.lb for n in args.lb_n]
    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS + NO_THROTTLING)
        try:
            args.machine = machine_line(chromium.version)
            print(args.machine, flush=True)
            print(f"settings: {args.steps} steps, {args.browsers} browsers, gap {args.gap:g} s (+0–1 s), "
                  f"idle {args.idle:g} s, joins spread over {SPREAD_S:g} s, a step lost after {MISS_S:g} s, "
                  f"{args.procs} stream worker process(es)")  # fmt: skip
            results = []
            for label, run, level_args in plan:
                started = time.monotonic()
                print(f"\n({label}: load average before {' '.join(f'{x:.2f}' for x in os.getloadavg())})",
                      flush=True)  # fmt: skip
                results.append(await run(*level_args, args, chromium if args.browsers else None))
                report(results[-1])
                print(f"  (wall {time.monotonic() - started:.0f} s)", flush=True)
        finally:
            await chromium.close()
    return results


def counts(text: str) -> list[int]:
    """``100,300`` → [100, 300]."""
    return [int(x) for x in text.split(",") if x]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=counts, default=[100, 300, 1000], help="stream followers per embedded level")
    ap.add_argument("--no-embedded", action="store_true", help="only the --lb levels")
    ap.add_argument("--lb", type=counts, default=[], help="replica counts behind HAProxy with Redis, e.g. 2")
    ap.add_argument("--lb-n", type=counts, default=[2000], help="stream followers per --lb level")
    ap.add_argument("--steps", type=int, default=10, help="presses of Next per level (K)")
    ap.add_argument("--gap", type=float, default=2.0, help="seconds from a click to the next, plus 0 to 1 s")
    ap.add_argument("--browsers", type=int, default=3, help="Chromium followers per level (B)")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of the idle measurement")
    ap.add_argument("--procs", type=int, default=1, help="worker processes holding the stream followers")
    ap.add_argument("--quick", action="store_true", help="N = 20, 3 steps, 1 browser, idle 5 s; --lb-n 20")
    ap.add_argument("--old", default=OLD_REV, metavar="REV", help="the old design's commit, run beside")
    ap.add_argument("--old-n", type=int, help="followers of the old design's level (default 40; --quick 5)")
    ap.add_argument("--old-steps", type=int, help="its presses of Next (default 6; --quick 3)")
    ap.add_argument("--no-old", action="store_true", help="skip the old design")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.lb_n, args.steps, args.browsers, args.idle = [20], [20], 3, 1, 5.0
    args.old_n = args.old_n or (5 if args.quick else 40)
    args.old_steps = args.old_steps or (3 if args.quick else 6)
    return args


def main() -> None:
    args = parse()
    raise_fd_limit()  # before any server starts: they inherit it
    started = time.monotonic()
    results = asyncio.run(run_all(args))
    old, old_failed = [], None
    if not args.no_old:
        try:
            old = old_design(args.old, args.old_n, args.old_steps, 1)
        except Exception as exc:  # the comparison is missing: said, and the run fails
            old_failed = str(exc)
            print(f"\nthe old design's run failed: {exc}")
    table(results, old)
    print(args.machine.replace("load average", "load average at the start"))
    ok = verdicts(results) and old_failed is None
    print(f"wall time {time.monotonic() - started:.0f} s; load average after "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")  # fmt: skip
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
