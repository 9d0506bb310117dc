"""The classroom (issue 27): a lecturer presses Next, how soon does every student's page show the step?

    .venv/bin/python benchmarks/classroom.py                  # N = 10, 20, 40; 6 steps; 3 browsers
    .venv/bin/python benchmarks/classroom.py --quick          # N = 3, 2 steps, 1 browser: a smoke run
    .venv/bin/python benchmarks/classroom.py --n 40 --steps 10 --browsers 2 --gap 2

One ``streamlit run app.py`` per N (benchmarks/stclient.py's Server). Per N:
1. The lecturer (a websocket session, stclient's protocol) opens ``/lecture``, clicks ``room_start``
   and reads the room code (the markdown of ``room_code_big``: 6 characters of ui.rooms.ALPHABET,
   also in the student URL of the st.code under it).
2. N websocket students and B Chromium pages (Playwright, Debian's Chromium, headless, one browser
   context each: no shared cookies) open ``/lecture?room=CODE`` at random moments within the same
   5 s. Join time: opening → the slide heading ("S / total · title", the st.header of
   ``lecture_slide``) is on the page. Websocket: the server has sent the heading's delta; browser:
   ``.st-key-lecture_slide h2`` has the text (timed in Python, ``time.monotonic``).
3. Idle: 10 s with nobody moving. Each follower's page re-reads the room every second (an
   st.fragment with run_every); the server's CPU per second then is the price of following.
4. The lecturer clicks ``lecture_next`` K times, ``--gap`` seconds apart plus 0 to 1 s (out of phase
   with the students' polling). Propagation: the click's BackMsg sent → each student's page shows
   "S / total" for the new step; a follower sees it once its fragment's next tick notices that the
   room's version moved and reruns the whole page. Not seen 10 s after the click: an error.

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
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import platform
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version

import websockets
from load import machine, sample_rss
from serverprocess import CHROMIUM, CHROMIUM_FLAGS  # tests/browser: on sys.path once load imported stclient
from stclient import LOG_DIR, ROOT, RunResult, Server, Session, percentile
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState


def _rooms_module():
    """ui/rooms.py is stdlib only; importing it through the ui package would import torch as well."""
    spec = importlib.util.spec_from_file_location("glassbox_rooms", ROOT / "ui" / "rooms.py")
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
        self.full_runs = 0
        self.finished: Counter[int] = Counter()  # script_finished status -> how many
        # A full run that registers a fragment (auto_rerun) also sends the fragment's container (an
        # add_block with its fragment_id); a full run whose container never came is counted.
        self.fragments_run: tuple[set[str], set[str]] = (set(), set())  # (auto_rerun ids, block ids)
        self.lost_containers = 0
        self.ticks = 0  # fragment reruns asked for
        self.received = 0  # bytes of ForwardMsgs
        self.fragment_runs = 0
        self._timers: dict[str, tuple[float, asyncio.Task]] = {}
        self._news = asyncio.Event()
        self._reader: asyncio.Task | None = None

    async def start(self) -> None:
        self.opened = time.monotonic()
        await self.open()
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


# -- the phases ----------------------------------------------------------------------------------------


async def idle_cost(server: Server, seconds: float, ws: list[Client]) -> dict:
    """The server's CPU per second while nobody moves; the followers' fragments still tick."""
    ticks0 = sum(c.fragment_runs for c in ws)
    cpu0, t0 = server.cpu_seconds(), time.monotonic()
    await asyncio.sleep(seconds)
    wall = time.monotonic() - t0
    ticks = sum(c.fragment_runs for c in ws) - ticks0
    return {
        "cpu_per_s": (server.cpu_seconds() - cpu0) / wall,
        "ticks_per_follower_s": ticks / max(1, len(ws)) / wall,
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


async def propagate(server: Server, lecturer: Client, ws: list[Client], tabs: list[Tab], args) -> dict:
    """K presses of Next, ``args.gap`` s (+ 0 to 1 s) apart; the server's CPU over the whole phase."""
    rng = random.Random(len(ws))
    cpu0, t0 = server.cpu_seconds(), time.monotonic()
    sent: dict[int, float] = {}
    for _ in range(args.steps):
        step, sent[step] = await press_next(lecturer, ws, tabs)
        # Every full run restarts a page's 1 s timer, so after a step the class polls in phase; a
        # lecturer's presses are not in phase with it: up to one polling period of jitter.
        gap = args.gap + rng.uniform(0, 1.0)
        await asyncio.sleep(max(0.0, gap - (time.monotonic() - sent[step])))
    return {"sent": sent, "cpu_s": server.cpu_seconds() - cpu0, "wall_s": time.monotonic() - t0}


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


async def run_level(n: int, args, chromium) -> dict:
    """A fresh server: the room, N + B followers joining, the idle cost, K steps; then the figures."""
    with Server() as server:
        lecturer, code = await open_room(server.url)
        rss, stop = [], asyncio.Event()
        sampler = asyncio.create_task(sample_rss(server, rss, stop))
        ws, tabs = [], []
        try:
            ws, tabs = await join_all(server.url, code, n, args.browsers if chromium else 0, chromium)
            await asyncio.sleep(2.0)  # the last joiners' pages finish drawing
            idle = await idle_cost(server, args.idle, ws)
            runs0, bytes0 = [c.full_runs for c in ws], sum(c.received for c in ws)
            steps = await propagate(server, lecturer, ws, tabs, args)
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
        level = Level(n, code, lecturer, ws, tabs, idle, steps, runs, page_errors, server.log_errors(), rss)
    return summarise(level)


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
                out.append(f"{name} {i}: late for steps {late}; headings at {shown}; {f.state()}")
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


# -- main ----------------------------------------------------------------------------------------------


async def run_all(args) -> list[dict]:
    from playwright.async_api import async_playwright  # noqa: PLC0415 (only this benchmark needs it)

    async with async_playwright() as p:
        chromium = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS + NO_THROTTLING)
        print(machine_line(chromium.version), flush=True)
        print(
            f"settings: N = {args.n}, {args.steps} steps, {args.browsers} browsers, gap {args.gap:g} s, "
            f"idle {args.idle:g} s, joins spread over {SPREAD_S:g} s, a miss after {MISS_S:g} s"
        )
        results = []
        for n in args.n:
            started = time.monotonic()
            print(f"\n(N = {n}: load average before {' '.join(f'{x:.2f}' for x in os.getloadavg())})")
            results.append(await run_level(n, args, chromium if args.browsers else None))
            report(results[-1], args.gap)
            print(f"  (wall {time.monotonic() - started:.0f} s)", flush=True)
        await chromium.close()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[10, 20, 40], help="websocket followers per level")
    ap.add_argument("--steps", type=int, default=6, help="presses of Next per level (K)")
    ap.add_argument("--browsers", type=int, default=3, help="Chromium followers per level (B)")
    ap.add_argument("--gap", type=float, default=3.0, help="seconds between two presses of Next")
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of the idle measurement")
    ap.add_argument("--quick", action="store_true", help="N = 3, 2 steps, 1 browser, idle 5 s")
    args = ap.parse_args()
    if args.quick:
        args.n, args.steps, args.browsers, args.idle = [3], 2, 1, 5.0
    started = time.monotonic()
    results = asyncio.run(run_all(args))
    table(results)
    ok = verdicts(results)
    print(
        f"wall time {time.monotonic() - started:.0f} s; load average after "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
