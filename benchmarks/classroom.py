"""The classroom (issue 27): a lecturer presses Next, how soon does every student's page show the step?

    .venv/bin/python benchmarks/classroom.py                  # N = 10, 20, 40; 6 steps; 3 browsers
    .venv/bin/python benchmarks/classroom.py --quick          # N = 3, 2 steps, 1 browser: a smoke run
    .venv/bin/python benchmarks/classroom.py --n 40 --steps 10 --browsers 2 --gap 2

One ``streamlit run app.py`` per N (benchmarks/stclient.py's Server). Per N:
1. The lecturer (a websocket session, stclient's protocol) opens ``/lecture``, clicks ``room_start``
   and reads the room code (the markdown of ``room_code_big``: 6 characters of ui.classroom.rooms.ALPHABET,
   also in the student URL of the st.code under it).
2. N websocket students and B Chromium pages (Playwright, Debian's Chromium, headless, one browser
   context each: no shared cookies) open ``/lecture?room=CODE`` at random moments within the same
   5 s. Join time: opening → the slide heading ("S / total · title", the st.header of
   ``lecture_slide``) is on the page. Websocket: the server has sent the heading's delta; browser:
   ``.st-key-lecture_slide h2`` has the text (timed in Python, ``time.monotonic``).
3. Idle: 10 s with nobody moving. Each follower's page looks at the room every FOLLOW_SECONDS (an
   st.fragment with run_every, ui/classroom/panels.py); the server's CPU per second then is the price of
   following.
4. The lecturer clicks ``lecture_next`` K times, ``--gap`` seconds apart plus 0 to 1 s (out of phase
   with the students' polling). Propagation: the click's BackMsg sent → each student's page shows
   "S / total" for the new step; a follower sees it once its server wakes its page (ui/classroom/wake.py: the
   lecturer's server at once, the others when Redis brings them the lecturer's announcement), or at
   its next poll if a wake was lost. Not seen 10 s after the click: an error.

Reported per N: propagation and join p50 / p95 / max (websocket, browsers, all), at two moments: the
heading shown, and the whole page sent (the run that drew the step has finished: the websocket's
``script_finished``, the browser's script state back to ``notRunning``; plotly's drawing is not in
it). Errors: missed steps, slow joins, exception elements, failed runs, closed sockets, tracebacks
in the server log, exceptions on the browser pages. Full page runs per follower over the steps (K
expected: more means the room's version moved without a step). Server CPU per follower update: the
propagation phase's CPU less the idle rate over the same time, divided by followers × K (the raw
figure beside it; the lecturer's own K runs are in both). Bytes a follower receives per step; server
RSS. Targets (issue 27): at N = 40, propagation p95 ≤ 2 s and join p95 ≤ 5 s.
For each follower that missed a step: when it showed each step, and what its page says; a browser
page also leaves a screenshot in $TMPDIR/glassbox-bench. And the websocket full runs that registered
a fragment (``auto_rerun``) but whose fragment container (an ``add_block`` with its fragment id)
never arrived: Streamlit dropped it, and a browser that loses it can lose the element after it too.

A websocket client here is a browser tab that stays open (``Client``): it reads every message the
server sends, also for the runs the server starts itself (a fragment's ``st.rerun(scope="app")``),
and runs each ``st.fragment(run_every=…)`` on a timer as Streamlit's frontend does (``setInterval``
per fragment, cleared when a full run starts). Chromium pages run with background throttling off: a
student's tab is in front, and headless pages must not slow their timers.

**Through the load balancer** (issue 28), ``--lb 1,2,3 [--n 40,80]``: per N, first the single-server
embedded mode above (one ``streamlit run app.py``, no Redis, no balancer; ``--no-embedded`` skips it),
then per replica count R a fresh ``deploy.local.Cluster(replicas=R, redis=True)`` (Redis, R replicas,
HAProxy), the same scenario through the balancer's URL. Each replica is warmed first (a /lecture page
run directly on it: its torch import is not a student's join). A websocket through HAProxy is
balanced ``leastconn`` and stays on its replica for the socket's life; the replica a follower is on is
the ``glassbox_server`` cookie HAProxy sets on the websocket's 101 answer (a Chromium page: the
cookie in its context). CPU is read from /proc per process over each phase: the replicas (summed:
"CPU per follower update"), Redis and HAProxy apart, the client, which shares the cores with the
servers (this process: the lecturer and the websocket followers; "browsers": Playwright's driver and
Chromium), and the whole machine (whatever else runs on it shows as "others"). "CPU per step" is a
phase's CPU over the K steps: a replica is one Python process, so its CPU per step is about the
time its last follower waits. The client's event loop lag over the steps says when the client itself
stamps late. RSS per replica; at the end, what Redis holds (MEMORY USAGE of every key) and the RSS of
Redis and HAProxy. A lost room: at the end, a newcomer on each replica (directly) does not show the
lecturer's last step, or a follower missed a step. One table at the end, the machine with it; the
target (issue 28): N = 80 with 2 replicas, p95 step propagation ≤ 2 s, 0 errors, 0 lost rooms.
``--env NAME=VALUE`` (repeatable) is set for every server started (e.g. ``GLASSBOX_WAKE=0``).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib.util
import os
import platform
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import websockets
from load import machine, sample_rss
from serverprocess import CHROMIUM, CHROMIUM_FLAGS  # tests/browser: on sys.path once load imported stclient
from stclient import LOG_DIR, ROOT, RunResult, Server, Session, percentile
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState


def _rooms_module():
    """ui/classroom/rooms.py is stdlib only; importing it through the ui package would import torch as
    well."""
    spec = importlib.util.spec_from_file_location("glassbox_rooms", ROOT / "ui" / "classroom" / "rooms.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


_rooms = _rooms_module()
CODE = re.compile(f"[{_rooms.ALPHABET}]{{{_rooms.CODE_LENGTH}}}")
HEADING = re.compile(r"(\d+) / (\d+) ")  # lecture.heading: "{step} / {total} · {title}"
H2 = ".st-key-lecture_slide h2"
SEEN_JS = """([h2, step]) => {
  const h = document.querySelector(h2);
  if (!h) return false;
  return step === null ? /^\\d+ \\/ \\d+ /.test(h.textContent) : h.textContent.startsWith(step + ' / ');
}"""
FINISHED_JS = """() => document.querySelector('[data-testid="stApp"]')
  ?.getAttribute('data-test-script-state') === 'notRunning'"""
PAGE_STATE_JS = """(h2) => JSON.stringify({
  heading: document.querySelector(h2)?.textContent ?? null,
  script: document.querySelector('[data-testid="stApp"]')?.getAttribute('data-test-script-state'),
  alerts: [...document.querySelectorAll('[data-testid="stAlert"], [data-testid="stException"]')]
    .map((e) => e.textContent.slice(0, 120)),
  dialog: document.querySelector('[role="dialog"]')?.textContent?.slice(0, 120) ?? null,
})"""
MISS_S = 10.0  # a follower that has not seen a step (or the slide, joining) this long after is an error
JOIN_WAIT_S = 60.0  # how long a late joiner is waited for, to report its time
SPREAD_S = 5.0  # the students open the room URL within the same 5 s
TARGET_PROPAGATION_S = 2.0
TARGET_JOIN_S = 5.0
TARGET_N = 40
NO_THROTTLING = [
    "--disable-background-timer-throttling",
    "--disable-renderer-backgrounding",
    "--disable-backgrounding-occluded-windows",
]
OK_FINISH = (
    ForwardMsg.FINISHED_SUCCESSFULLY,
    ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
    ForwardMsg.FINISHED_EARLY_FOR_RERUN,
)
SERVER_COOKIE = "glassbox_server"  # HAProxy's affinity cookie (deploy/haproxy*.cfg): names the replica
TARGET_LB_N, TARGET_LB_REPLICAS = 80, 2


def replica_of(set_cookies: list[str]) -> str:
    """The replica a balancer's answer names (its affinity cookie); "" when it set none."""
    for header in set_cookies:
        name, _, value = header.split(";", 1)[0].partition("=")
        if name.strip() == SERVER_COOKIE:
            return value.strip()
    return ""


# -- a websocket tab that stays open -------------------------------------------------------------------


class Client(Session):
    """One open tab on ``/{page}?{query}``: every message the server sends is read as it comes; each
    step heading's first arrival is timestamped (``steps``); fragments with run_every tick."""

    def __init__(self, base_url: str, query: str = "", page: str = "lecture"):
        super().__init__(base_url, query)
        self.page_name = page  # the first run opens /{page}, as a browser sends its URL's path
        self.opened = float("nan")
        self.steps: dict[int, float] = {}  # step -> time.monotonic() its heading first arrived
        self.whole: dict[int, float] = {}  # step -> when the run that drew it had sent the whole page
        self.step = self.total = 0  # the last heading's "step / total"
        self.texts: list[str] = []  # texts since the last full run started
        self.errors: list[str] = []
        self.replica = ""  # the HAProxy server this tab's websocket went to ("" without a balancer)
        self.full_runs = 0
        self.finished: Counter[int] = Counter()  # script_finished status -> how many
        # A full run that registers a fragment (auto_rerun) also sends the fragment's container (an
        # add_block with its fragment_id); a full run whose container never came is counted.
        self.fragments_run: tuple[set[str], set[str]] = (set(), set())  # (auto_rerun ids, block ids)
        self.lost_containers = 0
        self.ticks = 0  # fragment reruns asked for
        self.tick_times: list[float] = []  # when each was sent (time.monotonic)
        self.received = 0  # bytes of ForwardMsgs
        self.fragment_runs = 0
        self._timers: dict[str, tuple[float, asyncio.Task]] = {}
        self._news = asyncio.Event()
        self._reader: asyncio.Task | None = None

    async def start(self) -> None:
        self.opened = time.monotonic()
        await self.open()
        self.replica = replica_of(self.ws.response.headers.get_all("Set-Cookie"))
        await self.ws.send(self.rerun_msg().SerializeToString())
        self._reader = asyncio.create_task(self._read())

    async def click(self, key: str) -> float:
        """Click the button ``key`` (its trigger is sent once); returns when the BackMsg was sent."""
        state = WidgetState(id=self._id(key), trigger_value=True)
        msg = self.rerun_msg(once=(state,)).SerializeToString()
        sent = time.monotonic()
        await self.ws.send(msg)
        return sent

    async def wait_for(self, done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._news.clear()
            try:
                await asyncio.wait_for(self._news.wait(), left)
            except TimeoutError:
                pass
        return True

    async def close(self) -> None:
        for _, timer in self._timers.values():
            timer.cancel()
        if self._reader is not None:
            self._reader.cancel()
        await super().close()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                self.received += len(raw)
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
            if fwd.delta.WhichOneof("type") == "add_block" and fwd.delta.fragment_id:
                self.fragments_run[1].add(fwd.delta.fragment_id)
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
            self.fragments_run = (set(), set())
            self._stop_timers(list(self._timers))  # the frontend clears them when a full run starts
        elif self.follow_page(fwd):
            pass
        elif kind == "auto_rerun":
            self.fragments_run[0].add(fwd.auto_rerun.fragment_id)
            self._start_timer(fwd.auto_rerun.fragment_id, fwd.auto_rerun.interval)
        elif kind == "stop_auto_rerun":
            self._stop_timers(fwd.stop_auto_rerun.fragment_ids)
        elif kind == "script_finished":
            self._finished(fwd.script_finished, now)

    def _finished(self, status: int, now: float) -> None:
        self.finished[status] += 1
        if status == ForwardMsg.FINISHED_SUCCESSFULLY:
            self.full_runs += 1
            self.lost_containers += bool(self.fragments_run[0] - self.fragments_run[1])
            if self.step:
                self.whole.setdefault(self.step, now)
        elif status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
            self.fragment_runs += 1
        elif status not in OK_FINISH:
            self.errors.append(f"script_finished={status}")

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
            self.ticks += 1
            self.tick_times.append(time.monotonic())
            try:
                await self.ws.send(self.rerun_msg(fragment_id=fragment_id).SerializeToString())
            except websockets.ConnectionClosed:  # the reader has recorded why
                return

    def state(self) -> str:
        """For the report of a miss: its runs, its step, and what its page says about the room."""
        said = [t[:90] for t in self.texts if "room" in t.lower()][:2]
        alone = "room_start" in self.widgets  # its page once offered to start a room: not in one then
        return (
            f"script_finished {dict(self.finished)}, {len(self._timers)} fragment timers, {self.ticks} ticks "
            f"sent, page at step {self.step}, says {said}, ever outside a room: {alone}"
        )

    def room_code(self) -> str | None:
        """The code in ``room_code_big``, once the student URL (an st.code) shows the same one."""
        codes = [t for t in self.texts if CODE.fullmatch(t)]
        urls = " ".join(t for t in self.texts if "room=" in t)
        return next((c for c in codes if f"room={c}" in urls), None)


# -- the people in the room ----------------------------------------------------------------------------


async def open_room(url: str) -> tuple[Client, str]:
    """The lecturer: /lecture, Start a room, the code from the page."""
    lecturer = Client(url)
    await lecturer.start()
    if not await lecturer.wait_for(lambda: "room_start" in lecturer.widgets and lecturer.full_runs, 180):
        raise RuntimeError(f"the lecturer's page has no room_start button: {lecturer.errors[:3]}")
    await lecturer.click("room_start")
    if not await lecturer.wait_for(lambda: lecturer.room_code() is not None, 60):
        raise RuntimeError(f"no room code on the lecturer's page: {lecturer.errors[:3]}")
    return lecturer, lecturer.room_code()


@dataclass
class Tab:
    """A Chromium page following the room: ``steps`` and ``whole`` as the websocket Client's."""

    page: object  # playwright Page
    opened: float = float("nan")
    steps: dict[int, float] = field(default_factory=dict)
    whole: dict[int, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what the page showed when a wait timed out
    replica: str = ""  # the balancer's affinity cookie in its context once it joined

    def state(self) -> str:
        return "; ".join(self.notes[-2:])

    async def note(self, step: int | None) -> None:
        """What the page shows now (heading, script state, alerts), and a screenshot of it."""
        shot = LOG_DIR / f"classroom-miss-{id(self)}-{step}.png"
        try:
            await self.page.screenshot(path=shot)
            shows = await self.page.evaluate(PAGE_STATE_JS, H2)
        except Exception as exc:
            shows = f"unreadable ({type(exc).__name__})"
        self.notes.append(f"page at step {step}: {shows}; {shot}")


async def sees(tab: Tab, step: int | None, timeout: float) -> bool:
    """Wait until the page's heading shows ``step`` (``None``: any step), then until the run that
    drew it has finished (the frontend's script state); record both moments."""
    deadline = time.monotonic() + timeout
    try:
        await tab.page.wait_for_function(SEEN_JS, arg=[H2, step], polling="raf", timeout=timeout * 1000)
        now = time.monotonic()
        if step is None:
            step = int(HEADING.match(await tab.page.locator(H2).first.text_content())[1])
        tab.steps.setdefault(step, now)
        left = max(0.001, deadline - time.monotonic())
        await tab.page.wait_for_function(FINISHED_JS, polling="raf", timeout=left * 1000)
        tab.whole.setdefault(step, time.monotonic())
    except Exception:  # playwright's TimeoutError, or a closed page: counted as a miss
        await tab.note(step)
        return False
    return True


async def join_ws(url: str, code: str, delay: float) -> Client:
    await asyncio.sleep(delay)
    client = Client(url, f"room={code}")
    await client.start()
    await client.wait_for(lambda: bool(client.steps), JOIN_WAIT_S)
    return client


async def join_browser(browser, url: str, code: str, delay: float) -> Tab:
    await asyncio.sleep(delay)
    context = await browser.new_context(viewport={"width": 1280, "height": 800})
    tab = Tab(await context.new_page())
    tab.opened = time.monotonic()
    await tab.page.goto(f"{url}/lecture?room={code}", wait_until="commit")
    await sees(tab, None, JOIN_WAIT_S)
    cookies = await context.cookies()
    tab.replica = next((c["value"] for c in cookies if c["name"] == SERVER_COOKIE), "")
    return tab


def joined_at(follower: Client | Tab, seen: str = "steps") -> float | None:
    """Opening → the first slide's heading (``seen="whole"``: its whole page) was on the page."""
    times = getattr(follower, seen)
    return min(times.values()) - follower.opened if times else None


async def join_all(url: str, code: str, n: int, browsers: int, chromium) -> tuple[list[Client], list[Tab]]:
    """N websocket students and ``browsers`` Chromium pages, each opening at a random moment of SPREAD_S."""
    rng = random.Random(n)
    ws = [join_ws(url, code, rng.uniform(0, SPREAD_S)) for _ in range(n)]
    tabs = [join_browser(chromium, url, code, rng.uniform(0, SPREAD_S)) for _ in range(browsers)]
    joined = await asyncio.gather(*ws, *tabs)
    return joined[:n], joined[n:]


# -- what the phases measure: CPU and memory per process, from /proc --------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int | str) -> list[str]:
    """/proc/PID/stat after the command's name: [0] state, [1] ppid, ..., [11] utime, [12] stime."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_cpu(pid: int) -> float:
    """user + system CPU seconds of ``pid`` (all its threads) so far; 0 once it is gone."""
    try:
        fields = _stat(pid)
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def browsers_cpu(servers: set[int]) -> float:
    """Every process below this one (Playwright's driver, Chromium) but the ``servers``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(entry.name)[1]), []).append(int(entry.name))
            except OSError:  # exited while we looked
                pass
    total, todo = 0.0, list(children.get(os.getpid(), []))
    while todo:
        pid = todo.pop()
        if pid not in servers:
            total += process_cpu(pid)
            todo += children.get(pid, [])
    return total


def machine_cpu() -> tuple[float, float]:
    """Seconds every core of the machine was busy so far, and seconds stolen by the hypervisor."""
    fields = Path("/proc/stat").read_text().split()[1:9]  # the first line: all cores together
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields)
    return (user + nice + system + irq + softirq) / TICK, steal / TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


@dataclass
class Target:
    """The servers one level runs against: ``pids()`` names the app processes app1..appR (one for the
    single server) and, behind a balancer, redis and haproxy; ``url`` is where the people go."""

    url: str
    pids: Callable[[], dict[str, int]]
    logs: list[Path]
    peaks: dict[str, float] = field(default_factory=dict)  # app process -> largest RSS seen, MB

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of each server process, of the client (this process, the websocket people:
        "client"; Playwright and Chromium: "browsers") and of the whole machine."""
        pids = self.pids()
        out = {name: process_cpu(pid) for name, pid in pids.items()}
        out["client"] = process_cpu(os.getpid())
        out["browsers"] = browsers_cpu(set(pids.values()))
        out["machine"], out["steal"] = machine_cpu()
        return out

    def cpu_seconds(self) -> float:
        """The app servers' CPU summed."""
        return sum(process_cpu(pid) for name, pid in self.pids().items() if name.startswith("app"))

    def rss_mb(self) -> float:
        """The largest app server's RSS now (MB); each one's peak is kept in ``peaks``."""
        now = {}
        for name, pid in self.pids().items():
            if name.startswith("app"):
                try:
                    now[name] = rss_mb(pid)
                except OSError:
                    continue
                self.peaks[name] = max(self.peaks.get(name, 0.0), now[name])
        return max(now.values(), default=float("nan"))

    def log_errors(self) -> list[str]:
        texts = "\n".join(log.read_text(errors="replace") for log in self.logs if log.exists())
        return [line for line in texts.splitlines() if "Traceback" in line or "Uncaught" in line]


def apps_cpu(cpu: dict[str, float]) -> float:
    return sum(v for name, v in cpu.items() if name.startswith("app"))


def cpu_since(target: Target, before: dict[str, float]) -> dict[str, float]:
    return {name: v - before.get(name, 0.0) for name, v in target.cpu().items()}


async def loop_lag(out: list[float], stop: asyncio.Event, period: float = 0.05) -> None:
    """How late this client's event loop wakes a sleeper: a busy client stamps its messages late."""
    while not stop.is_set():
        t0 = time.monotonic()
        await asyncio.sleep(period)
        out.append(time.monotonic() - t0 - period)


# -- the phases ----------------------------------------------------------------------------------------


async def idle_cost(target: Target, seconds: float, ws: list[Client]) -> dict:
    """The servers' CPU per second while nobody moves; the followers' fragments still tick."""
    ticks0 = sum(c.fragment_runs for c in ws)
    cpu0, t0 = target.cpu(), time.monotonic()
    await asyncio.sleep(seconds)
    wall = time.monotonic() - t0
    cpu = cpu_since(target, cpu0)
    ticks = sum(c.fragment_runs for c in ws) - ticks0
    return {
        "cpu_per_s": apps_cpu(cpu) / wall,
        "ticks_per_follower_s": ticks / max(1, len(ws)) / wall,
        "cpu": cpu,
        "wall_s": wall,
    }


async def press_next(lecturer: Client, ws: list[Client], tabs: list[Tab]) -> tuple[int, float]:
    """One Next: the browsers' waits start first (a change is never missed), then the click; returns
    the step and when its BackMsg was sent, once every follower has shown it or MISS_S passed."""
    step = lecturer.step + 1
    if step > lecturer.total:
        raise SystemExit(f"--steps: the lecture has {lecturer.total} steps; the room is on step {step - 1}")
    waits = [asyncio.create_task(sees(tab, step, MISS_S)) for tab in tabs]
    await asyncio.sleep(0.1)  # the browsers' wait_for_function calls are in place
    sent = await lecturer.click("lecture_next")
    pending = [c.wait_for(lambda c=c: step in c.whole, MISS_S) for c in [*ws, lecturer]]
    await asyncio.gather(*pending, *waits)
    return step, sent


async def propagate(target: Target, lecturer: Client, ws: list[Client], tabs: list[Tab], args) -> dict:
    """K presses of Next, ``args.gap`` s (+ 0 to 1 s) apart; the CPU over the whole phase."""
    rng = random.Random(len(ws))
    lag, stop = [], asyncio.Event()
    lagging = asyncio.create_task(loop_lag(lag, stop))
    cpu0, t0 = target.cpu(), time.monotonic()
    sent: dict[int, float] = {}
    for _ in range(args.steps):
        step, sent[step] = await press_next(lecturer, ws, tabs)
        # Every full run restarts a page's 1 s timer, so after a step the class polls in phase; a
        # lecturer's presses are not in phase with it: up to one polling period of jitter.
        gap = args.gap + rng.uniform(0, 1.0)
        await asyncio.sleep(max(0.0, gap - (time.monotonic() - sent[step])))
    cpu, wall = cpu_since(target, cpu0), time.monotonic() - t0
    stop.set()
    await lagging
    return {"sent": sent, "cpu_s": apps_cpu(cpu), "wall_s": wall, "cpu": cpu, "lag": lag}


def delays(followers: list, sent: dict[int, float], seen: str = "steps") -> tuple[list[float], int]:
    """Click → follower shows the step's heading (``seen="whole"``: its whole page), for every step and
    follower; and how many never did within MISS_S."""
    out, missed = [], 0
    for step, at in sent.items():
        for f in followers:
            shown = getattr(f, seen)
            if step in shown and shown[step] - at <= MISS_S:
                out.append(shown[step] - at)
            else:
                missed += 1
    return out, missed


# -- one N ---------------------------------------------------------------------------------------------


@dataclass
class Level:
    """What one N measured: the people, and the phases' raw figures."""

    n: int
    code: str
    lecturer: Client
    ws: list[Client]
    tabs: list[Tab]
    idle: dict
    steps: dict  # propagate()'s: sent (step -> click time), cpu_s, wall_s; bytes the websockets received
    runs: list[int]  # full page runs per websocket follower during the steps
    page_errors: int  # exception elements on the browser pages at the end
    log_errors: list[str]
    rss: list[float]
    peaks: dict[str, float] = field(default_factory=dict)  # app process -> its largest RSS, MB


def single(server: Server) -> Target:
    """The one ``streamlit run app.py`` of the single-server mode, as a Target."""
    return Target(server.url, lambda: {"app1": server.proc.pid}, [server.log_path])


async def run_level(n: int, args, chromium) -> dict:
    """A fresh server: the room, N + B followers joining, the idle cost, K steps; then the figures."""
    with Server() as server:
        level = await measure(single(server), n, args, chromium)
    return summarise(level)


async def measure(target: Target, n: int, args, chromium) -> Level:
    """The room, N + B followers joining, the idle cost, K steps, against servers already running."""
    lecturer, code = await open_room(target.url)
    rss, stop = [], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(target, rss, stop))
    ws, tabs = [], []
    try:
        ws, tabs = await join_all(target.url, code, n, args.browsers if chromium else 0, chromium)
        await asyncio.sleep(2.0)  # the last joiners' pages finish drawing
        idle = await idle_cost(target, args.idle, ws)
        runs0, bytes0 = [c.full_runs for c in ws], sum(c.received for c in ws)
        steps = await propagate(target, lecturer, ws, tabs, args)
        runs = [c.full_runs - r for c, r in zip(ws, runs0, strict=True)]
        steps["bytes"] = sum(c.received for c in ws) - bytes0
        page_errors = sum([await tab.page.get_by_test_id("stException").count() for tab in tabs])
    finally:
        stop.set()
        await sampler
        for follower in [lecturer, *ws]:
            await follower.close()
        for tab in tabs:
            await tab.page.context.close()
    level = Level(n, code, lecturer, ws, tabs, idle, steps, runs, page_errors, target.log_errors(), rss)
    level.peaks = dict(target.peaks)
    return level


def timings(level: Level, seen: str) -> tuple[dict, dict, int]:
    """Join and propagation times (websocket, browsers, all) up to ``seen`` ("steps": the heading,
    "whole": the whole page); and how many step changes were missed."""
    join = {"ws": [joined_at(c, seen) for c in level.ws], "browser": [joined_at(t, seen) for t in level.tabs]}
    join = {kind: [j for j in js if j is not None] for kind, js in join.items()}
    ws, ws_missed = delays(level.ws, level.steps["sent"], seen)
    tabs, tabs_missed = delays(level.tabs, level.steps["sent"], seen)
    join["all"] = join["ws"] + join["browser"]
    return join, {"ws": ws, "browser": tabs, "all": ws + tabs}, ws_missed + tabs_missed


def summarise(level: Level) -> dict:
    join, propagation, missed = timings(level, "steps")
    join_whole, propagation_whole, unfinished = timings(level, "whole")
    followers, k, runs = len(level.ws) + len(level.tabs), len(level.steps["sent"]), level.runs
    net = level.steps["cpu_s"] - level.idle["cpu_per_s"] * level.steps["wall_s"]
    joined = [joined_at(f) for f in [*level.ws, *level.tabs]]
    clients = [level.lecturer, *level.ws]
    errors = {
        "missed steps": missed,
        "pages not whole in time": unfinished - missed,
        "slow or failed joins": sum(j is None or j > MISS_S for j in joined),
        "client errors": sum(len(c.errors) for c in clients),
        "exceptions on browser pages": level.page_errors,
        "server log tracebacks": len(level.log_errors),
    }
    return {
        "n": level.n,
        "browsers": len(level.tabs),
        "code": level.code,
        "steps": k,
        "join": join,
        "join_whole": join_whole,
        "propagation": propagation,
        "propagation_whole": propagation_whole,
        "lecturer_own": delays([level.lecturer], level.steps["sent"])[0],
        "errors": errors,
        "error_samples": misses(level)[:8]
        + [e for c in clients for e in c.errors][:3]
        + level.log_errors[:3],
        "runs_per_follower": (min(runs, default=0), sum(runs) / max(1, len(runs)), max(runs, default=0)),
        "lost_containers": (sum(c.lost_containers for c in level.ws), sum(c.full_runs for c in level.ws)),
        "idle_cpu_per_s": level.idle["cpu_per_s"],
        "idle_ticks_per_follower_s": level.idle["ticks_per_follower_s"],
        "idle_ms_per_follower_s": 1000 * level.idle["cpu_per_s"] / followers,
        "update_ms_raw": 1000 * level.steps["cpu_s"] / (followers * k),
        "update_ms_net": 1000 * net / (followers * k),
        "kb_per_update": level.steps["bytes"] / 1000 / max(1, len(level.ws) * k),
        "rss_max_mb": max(level.rss, default=float("nan")),
    }


def misses(level: Level) -> list[str]:
    """Per follower that did not show a step (or its whole page) in time: which steps, when it showed
    each one (seconds after that step's click), and what its page says now."""
    out = []
    for name, followers in (("websocket", level.ws), ("browser", level.tabs)):
        for i, f in enumerate(followers):
            sent = level.steps["sent"]
            late = [s for s, at in sent.items() if f.whole.get(s, at + 99) - at > MISS_S]
            if late:
                shown = {s: round(f.steps[s] - sent[s], 2) for s in sent if s in f.steps}
                ticks = [round(t - sent[late[0]], 2) for t in getattr(f, "tick_times", [])]
                polls = f"; its poll ticks at {ticks} s after step {late[0]}'s click" if ticks else ""
                out.append(f"{name} {i}: late for steps {late}; headings at {shown}{polls}; {f.state()}")
    return out


# -- the report ----------------------------------------------------------------------------------------


def stats(values: list[float]) -> str:
    if not values:
        return "—"
    return (
        f"p50 {percentile(values, 50):.2f} s  p95 {percentile(values, 95):.2f} s  "
        f"max {max(values):.2f} s  (n={len(values)})"
    )


def times(label: str, figures: dict) -> None:
    """One measure: all followers, then websocket and browsers apart."""
    for kind, name in (("all", "all      "), ("ws", "websocket"), ("browser", "browsers ")):
        print(f"  {label if kind == 'all' else '':<38} {name} {stats(figures[kind])}")


def report(r: dict, gap: float) -> None:
    print(
        f"\nN = {r['n']} websocket + {r['browsers']} Chromium followers, room {r['code']}, "
        f"{r['steps']} steps {gap:g} s apart"
    )
    times("join: open → slide heading", r["join"])
    times("join: open → whole page sent", r["join_whole"])
    times("propagation: click → new heading", r["propagation"])
    times("propagation: click → whole page sent", r["propagation_whole"])
    print(f"  {'lecturer: click → own heading':<38} {'':9} {stats(r['lecturer_own'])}")
    lo, mean, hi = r["runs_per_follower"]
    print(
        f"  full page runs per websocket follower over the steps: {mean:.2f} (min {lo}, max {hi}; "
        f"expected {r['steps']})"
    )
    lost, full = r["lost_containers"]
    print(f"  websocket full runs whose fragment container never arrived: {lost} of {full}")
    print(
        f"  idle: server CPU {1000 * r['idle_cpu_per_s']:.0f} ms/s = {r['idle_ms_per_follower_s']:.1f} ms "
        f"per follower per second ({r['idle_ticks_per_follower_s']:.2f} fragment ticks/follower/s)"
    )
    print(
        f"  server CPU per follower update: {r['update_ms_net']:.0f} ms net of the idle polling "
        f"({r['update_ms_raw']:.0f} ms raw); {r['kb_per_update']:.0f} kB to a websocket follower per step"
    )
    print(f"  server RSS max {r['rss_max_mb']:.0f} MB")
    detail = ", ".join(f"{k} {v}" for k, v in r["errors"].items())
    print(f"  errors: {sum(r['errors'].values())} ({detail})")
    for sample in r["error_samples"]:
        print(f"    {sample[:400]}")


def table(results: list[dict]) -> None:
    print(
        "\n| N (+ browsers) | propagation p50 / p95 / max | browsers p95 | join p50 / p95 / max | errors "
        "| CPU / follower update | idle CPU / follower / s | RSS max |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        p, j = r["propagation"]["all"], r["join"]["all"]
        print(
            f"| {r['n']} (+{r['browsers']}) | {percentile(p, 50):.2f} / {percentile(p, 95):.2f} / "
            f"{max(p, default=float('nan')):.2f} s | {percentile(r['propagation']['browser'], 95):.2f} s | "
            f"{percentile(j, 50):.2f} / {percentile(j, 95):.2f} / {max(j, default=float('nan')):.2f} s | "
            f"{sum(r['errors'].values())} | {r['update_ms_net']:.0f} ms ({r['update_ms_raw']:.0f} raw) | "
            f"{r['idle_ms_per_follower_s']:.1f} ms | {r['rss_max_mb']:.0f} MB |"
        )


def verdicts(results: list[dict]) -> bool:
    """The issue's targets at N = TARGET_N (or the largest N run); True when all are met, error-free."""
    r = next((r for r in results if r["n"] == TARGET_N), results[-1])
    prop = percentile(r["propagation"]["all"], 95)
    join = percentile(r["join"]["all"], 95)
    checks = [
        (
            f"step propagation p95 ≤ {TARGET_PROPAGATION_S:g} s at N = {r['n']}",
            prop <= TARGET_PROPAGATION_S,
            prop,
        ),
        (f"join p95 ≤ {TARGET_JOIN_S:g} s at N = {r['n']}", join <= TARGET_JOIN_S, join),
    ]
    print()
    for label, met, value in checks:
        print(f"target {label}: {'met' if met else 'MISSED'} ({value:.2f} s)")
    errors = sum(sum(r["errors"].values()) for r in results)
    print(f"errors over all N: {errors}")
    return all(met for _, met, _ in checks) and not errors


def machine_line(chromium_version: str) -> str:
    m = machine()
    return (
        f"machine: {m['nproc']} cores, {m['cpu']}, {m['ram_gib']} GiB RAM; "
        f"Python {platform.python_version()}, "
        f"Streamlit {version('streamlit')}, Playwright {version('playwright')}, Chromium {chromium_version}; "
        f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


# -- through the load balancer (issue 28) ---------------------------------------------------------------


def cluster_class():
    """deploy.local.Cluster; the project's root on sys.path first, as when this file runs as a script."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from deploy.local import Cluster  # noqa: PLC0415 (only the --lb mode needs it)

    return Cluster


async def warm(url: str) -> None:
    """One /lecture run directly on a replica: its first run imports torch, which is no student's join."""
    client = Client(url)
    await client.start()
    try:
        if not await client.wait_for(lambda: client.full_runs > 0, 180):
            raise RuntimeError(f"{url}: no first run of /lecture: {client.errors[:3]}")
    finally:
        await client.close()


async def room_answers(direct: dict[str, str], code: str) -> dict[str, int | None]:
    """Per replica (directly, not through the balancer): the step a newcomer's page shows; None: none."""
    out = {}
    for name, url in direct.items():
        client = Client(url, f"room={code}")
        await client.start()
        try:
            await client.wait_for(lambda c=client: bool(c.steps), JOIN_WAIT_S)
        finally:
            await client.close()
        out[name] = client.step or None
    return out


async def run_embedded(n: int, args, chromium) -> dict:
    """The single-server embedded mode (no Redis, no balancer), as the benchmark without --lb runs it."""
    with Server() as server:
        level = await measure(single(server), n, args, chromium)
        answers = await room_answers({"app1": server.url}, level.code)
    return summarise_lb(level, "embedded", answers)


async def run_cluster(replicas: int, n: int, args, chromium) -> dict:
    """A fresh Cluster(replicas=R, redis=True), each replica warmed; the level through HAProxy."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    folder = tempfile.mkdtemp(prefix=f"lb{replicas}-n{n}-", dir=LOG_DIR)
    with cluster_class()(replicas=replicas, redis=True, log_dir=folder) as cluster:
        direct = dict(zip(cluster.names, cluster.replica_urls, strict=True))
        await asyncio.gather(*(warm(url) for url in direct.values()))
        logs = [cluster.dir / f"{name}.log" for name in cluster.names]
        level = await measure(Target(cluster.url, cluster.pids, logs), n, args, chromium)
        answers = await room_answers(direct, level.code)
        held = stores(cluster.redis_url, cluster.pids())
    result = summarise_lb(level, f"{replicas} replica{'s' * (replicas > 1)}", answers)
    result.update(folder=folder, stores=held)
    return result


def stores(redis_url: str, pids: dict[str, int]) -> str:
    """What Redis holds once the level is over (the room, its members, no one's answers), and the
    memory of Redis and HAProxy."""
    import redis  # noqa: PLC0415 (the --lb mode only)

    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(count=1000))
        held = sum(client.memory_usage(key, samples=0) or 0 for key in keys)  # every element counted
        used = client.info("memory")["used_memory"]
    finally:
        client.close()
    return (
        f"Redis {len(keys)} keys holding {held / 1000:.1f} kB (MEMORY USAGE), used_memory "
        f"{used / 2**20:.1f} MB, RSS {rss_mb(pids['redis']):.0f} MB; "
        f"HAProxy RSS {rss_mb(pids['haproxy']):.0f} MB"
    )


def cores(cpu: dict[str, float], wall: float) -> dict[str, float]:
    """CPU seconds over a phase → cores busy on average; "others": the machine less every process here
    (at least 0: /proc/stat and each process count in clock ticks, rounded apart)."""
    ours = sum(v for name, v in cpu.items() if name not in ("machine", "steal"))
    return {**{name: v / wall for name, v in cpu.items()}, "others": max(0.0, cpu["machine"] - ours) / wall}


def summarise_lb(level: Level, mode: str, answers: dict[str, int | None]) -> dict:
    """summarise()'s figures and, per process, where the followers are, what each process spent."""
    r = summarise(level)
    updates = (len(level.ws) + len(level.tabs)) * r["steps"]
    steps = level.steps
    final = level.lecturer.step
    lag, steps_cores = steps["lag"], cores(steps["cpu"], steps["wall_s"])
    r.update(
        mode=mode,
        lecturer_on=level.lecturer.replica or "app1",
        ws_on=Counter(c.replica or "app1" for c in level.ws),
        tabs_on=Counter(t.replica or "app1" for t in level.tabs),
        steps_wall_s=steps["wall_s"],
        steps_cores=steps_cores,
        idle_wall_s=level.idle["wall_s"],
        idle_cores=cores(level.idle["cpu"], level.idle["wall_s"]),
        per_update_ms={
            **{k: 1000 * steps["cpu"].get(k, 0.0) / updates for k in ("redis", "haproxy")},
            # the client's own work per websocket follower, Chromium's per page (each step drawn)
            "client": 1000 * steps["cpu"]["client"] / max(1, len(level.ws) * r["steps"]),
            "browsers": 1000 * steps["cpu"]["browsers"] / max(1, len(level.tabs) * r["steps"]),
        },
        per_step_s={k: v * steps["wall_s"] / r["steps"] for k, v in steps_cores.items()},
        lag_p95_s=percentile(lag, 95),
        lag_max_s=max(lag, default=float("nan")),
        rss_peaks=dict(sorted(level.peaks.items())),
        final_step=final,
        answers=answers,
        lost_rooms=int(any(s != final for s in answers.values()) or r["errors"]["missed steps"] > 0),
    )
    return r


NOT_APPS = ("redis", "haproxy", "client", "browsers")


def busy(figures: dict[str, float]) -> str:
    names = sorted(k for k in figures if k.startswith("app")) + [*NOT_APPS, "others"]
    return ", ".join(f"{k} {figures[k]:.2f}" for k in names if k in figures)


def spread(on: Counter) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(on.items())) or "none"


def report_lb(r: dict) -> None:
    """The lines the single-server report has not: where each follower is, each process's CPU."""
    print(
        f"  {r['mode']}: lecturer on {r['lecturer_on']}; websocket followers on {spread(r['ws_on'])}; "
        f"browsers on {spread(r['tabs_on'])}"
    )
    for phase in ("steps", "idle"):
        c = r[f"{phase}_cores"]
        print(
            f"  cores busy over the {phase} ({r[f'{phase}_wall_s']:.0f} s): {busy(c)}; "
            f"machine {c['machine']:.2f} of {os.cpu_count()} (steal {c['steal']:.2f})"
        )
    u, step = r["per_update_ms"], r["per_step_s"]
    print(f"  CPU per step (s): {busy(step)}; machine {step['machine']:.2f}")
    print(
        f"  per follower update: replicas {r['update_ms_net']:.0f} ms net ({r['update_ms_raw']:.0f} raw), "
        f"Redis {u['redis']:.2f} ms, HAProxy {u['haproxy']:.2f} ms; the client {u['client']:.1f} ms per "
        f"websocket follower, Chromium {u['browsers']:.0f} ms per page"
    )
    print(f"  client event loop late over the steps: p95 {r['lag_p95_s']:.3f} s, max {r['lag_max_s']:.3f} s")
    print(f"  RSS max per replica: {', '.join(f'{k} {v:.0f} MB' for k, v in r['rss_peaks'].items())}")
    if "stores" in r:
        print(f"  at the end: {r['stores']}")
    said = ", ".join(f"{k} {v}" for k, v in r["answers"].items())
    print(f"  the room at the end (lecturer at step {r['final_step']}): a newcomer sees step {said}; "
          f"lost rooms {r['lost_rooms']}")  # fmt: skip


def table_lb(results: list[dict]) -> None:
    print(
        "\n| mode | N (+ browsers) | lecturer · followers per replica | propagation p50 / p95 / max "
        "| join p50 / p95 / max | errors | lost rooms | CPU / follower update (replicas) "
        "| Redis · HAProxy / update "
        "| CPU per step: busiest replica · replicas · Redis · HAProxy · client · browsers · others "
        "| client loop late p95 | RSS max per replica |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in sorted(results, key=lambda r: r["n"]):
        p, j, c, u = r["propagation"]["all"], r["join"]["all"], r["per_step_s"], r["per_update_ms"]
        on = r["ws_on"] + r["tabs_on"]
        apps = [v for k, v in c.items() if k.startswith("app")]
        balancer = f"{u['redis']:.2f} · {u['haproxy']:.2f} ms" if "redis" in c else "—"
        print(
            f"| {r['mode']} | {r['n']} (+{r['browsers']}) | {r['lecturer_on']} · "
            f"{' / '.join(str(on.get(k, 0)) for k in r['rss_peaks'])} | "
            f"{percentile(p, 50):.2f} / {percentile(p, 95):.2f} / {max(p, default=float('nan')):.2f} s | "
            f"{percentile(j, 50):.2f} / {percentile(j, 95):.2f} / {max(j, default=float('nan')):.2f} s | "
            f"{sum(r['errors'].values())} | {r['lost_rooms']} | "
            f"{r['update_ms_net']:.0f} ms ({r['update_ms_raw']:.0f} raw) | "
            f"{balancer} | "
            f"{max(apps):.2f} · {sum(apps):.2f} · "
            f"{' · '.join(f'{c[k]:.2f}' if k in c else '—' for k in (*NOT_APPS, 'others'))} s | "
            f"{r['lag_p95_s']:.3f} s | "
            f"{' / '.join(f'{v:.0f}' for v in r['rss_peaks'].values())} MB |"
        )


def verdicts_lb(results: list[dict]) -> bool:
    """The issue's target on every run of N = 80 with 2 replicas; True when met and nothing erred."""
    mode = f"{TARGET_LB_REPLICAS} replicas"
    print()
    met_all = True
    for r in [r for r in results if r["mode"] == mode and r["n"] == TARGET_LB_N]:
        prop, errors = percentile(r["propagation"]["all"], 95), sum(r["errors"].values())
        met = prop <= TARGET_PROPAGATION_S and not errors and not r["lost_rooms"]
        met_all &= met
        print(
            f"target N = {TARGET_LB_N}, {mode}: p95 step propagation ≤ {TARGET_PROPAGATION_S:g} s, "
            f"0 errors, 0 lost rooms: {'met' if met else 'MISSED'} "
            f"({prop:.2f} s, {errors} errors, {r['lost_rooms']} lost)"
        )
    errors = sum(sum(r["errors"].values()) for r in results)
    print(f"errors over all runs: {errors}; lost rooms: {sum(r['lost_rooms'] for r in results)}")
    return met_all and not errors


# -- main ----------------------------------------------------------------------------------------------


async def run_all(args, plan: list[tuple[str, Callable]]) -> list[dict]:
    """Each ``(label, run)`` of the plan in turn, one Chromium for all; ``run(chromium)`` → figures."""
    from playwright.async_api import async_playwright  # noqa: PLC0415 (only this benchmark needs it)

    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS + NO_THROTTLING)
        args.machine = machine_line(chromium.version)
        print(args.machine, flush=True)
        print(
            f"settings: N = {args.n}, {args.steps} steps, {args.browsers} browsers, gap {args.gap:g} s, "
            f"idle {args.idle:g} s, joins spread over {SPREAD_S:g} s, a miss after {MISS_S:g} s"
        )
        if args.lb:
            embedded = "no" if args.no_embedded else "yes"
            print(f"  replicas behind HAProxy: {args.lb}; the embedded mode too: {embedded}; env {args.env}")
        results = []
        for label, run in plan:
            started = time.monotonic()
            print(f"\n({label}: load average before {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
            results.append(await run(chromium if args.browsers else None))
            report(results[-1], args.gap)
            if "mode" in results[-1]:
                report_lb(results[-1])
            print(f"  (wall {time.monotonic() - started:.0f} s)", flush=True)
        await chromium.close()
    return results


def plan(args) -> list[tuple[str, Callable]]:
    """Without --lb: one server per N. With it: per N, the embedded mode, then each replica count."""
    if not args.lb:
        return [(f"N = {n}", functools.partial(run_level, n, args)) for n in args.n]
    out = []
    for n in args.n:
        if not args.no_embedded:
            out.append((f"embedded, N = {n}", functools.partial(run_embedded, n, args)))
        out += [(f"{r} replica(s), N = {n}", functools.partial(run_cluster, r, n, args)) for r in args.lb]
    return out


def counts(text: str) -> list[int]:
    """``40,80`` → [40, 80]."""
    return [int(x) for x in text.split(",") if x]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=counts, nargs="+", help="websocket followers per level (default 10 20 40; "
                    "with --lb 40,80)")  # fmt: skip
    ap.add_argument("--steps", type=int, default=6, help="presses of Next per level (K)")
    ap.add_argument("--browsers", type=int, default=3, help="Chromium followers per level (B)")
    ap.add_argument("--gap", type=float, default=3.0, help="seconds between two presses of Next")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of the idle measurement")
    ap.add_argument("--quick", action="store_true", help="N = 3, 2 steps, 1 browser, idle 5 s")
    ap.add_argument("--lb", type=counts, help="replica counts behind HAProxy with Redis, e.g. 1,2,3")
    ap.add_argument("--no-embedded", action="store_true", help="with --lb: skip the single-server mode")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="set for every server started (repeatable), e.g. GLASSBOX_WAKE=0")  # fmt: skip
    args = ap.parse_args(argv)
    args.n = [n for group in args.n for n in group] if args.n else ([40, 80] if args.lb else [10, 20, 40])
    if args.quick:
        args.n, args.steps, args.browsers, args.idle = [3], 2, 1, 5.0
    return args


def main() -> None:
    args = parse()
    for pair in args.env:  # the servers inherit this process's environment (a Cluster adds its own)
        name, _, value = pair.partition("=")
        os.environ[name] = value
    if args.lb:
        os.environ.pop("GLASSBOX_REDIS_URL", None)  # the embedded mode is the one without Redis
    started = time.monotonic()
    results = asyncio.run(run_all(args, plan(args)))
    if args.lb:
        table_lb(results)
        print(args.machine.replace("load average", "load average at the start"))
        ok = verdicts_lb(results)
    else:
        table(results)
        ok = verdicts(results)
    print(
        f"wall time {time.monotonic() - started:.0f} s; load average after "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
