"""The classroom under a flood, in real processes: ``deploy.local.Cluster`` (HAProxy, a replica,
Redis) and Chromium.

- a PIN guesser's refused tries rerun the "Take over a room" form alone, never the page (each try is
  read off the websocket: Streamlit says whether a run was the whole script or a fragment);
- after Redis comes back, the lecturer's "rooms are unavailable" clears and a student who opened the
  room's hall page while it was away (served, saying why it shows no slide) follows the lecture at the
  lecturer's step, nobody pressing anything, the page never reloaded;
- a browser that sends its own X-Forwarded-For is still counted by the address HAProxy saw: its
  rooms are refused once that address has started its share.

Streamlit 1.67's server (uvicorn) itself reads X-Forwarded-For from a proxy on loopback
(``FORWARDED_ALLOW_IPS``, default ``127.0.0.1,::1``) and reports its last address that is not
loopback as ``st.context.ip_address``; a browser here is on loopback too, so it would report the
browser's own claim. The replicas here are told to trust no proxy of their own
(``FORWARDED_ALLOW_IPS`` an address that never connects), as a replica behind HAProxy on another
host or container is (deploy/docker-compose.yml): the address is then ui/classroom/clients.py's to find.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis
from browserhelpers import settled
from classroomhelpers import (
    CATCH_UP,
    FOLLOW,
    HALL_HEADING,
    LECTURER,
    TIMEOUT,
    UNAVAILABLE,
    clean,
    follows,
    moves,
    open_lecture,
    said,
    shows,
    start_room,
)
from hallwatch import mark, quiet, same_page, says, watch
from playwright.sync_api import Browser, BrowserContext, Page, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from deploy.local import Cluster
from ui.classroom.rooms import MAX_PIN_FAILURES, TooMany, client_key
from ui.classroom.rooms_redis import RedisStore

pytestmark = pytest.mark.browser

BROWSER = "127.0.0.1"  # every browser here reaches HAProxy from loopback: the address it forwards


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    env = {"FORWARDED_ALLOW_IPS": "192.0.2.1"}  # see above
    with Cluster(replicas=1, persist=True, log_dir=tmp_path_factory.mktemp("flood"), env=env) as running:
        yield running
        tracebacks = [p.name for p in running.apps if "Traceback" in p.tail(10**7)]
        assert tracebacks == [], f"a traceback in the log of {tracebacks} ({running.dir})"


@pytest.fixture
def person(browser: Browser, browser_context_args):
    made: list[BrowserContext] = []

    def make(**options) -> BrowserContext:
        made.append(browser.new_context(**browser_context_args, **options))
        return made[-1]

    yield make
    for context in made:
        context.close()


@pytest.fixture
def fresh_bounds(cluster):
    """The rooms the browsers' address started are forgotten after the test (the next may start one)."""
    yield
    redis.Redis.from_url(cluster.redis_url).delete(f"glassbox:client:{client_key(BROWSER)}:rooms")


def script_runs(page: Page) -> list[str]:
    """How each script run of ``page`` ended, as the server says it (``FINISHED_SUCCESSFULLY``: the
    whole page; ``FINISHED_FRAGMENT_RUN_SUCCESSFULLY``: one fragment), appended as they arrive."""
    runs: list[str] = []

    def heard(payload) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg.FromString(payload)
            if msg.WhichOneof("type") == "script_finished":
                runs.append(ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished))

    page.on("websocket", lambda ws: ws.on("framereceived", heard))
    return runs


def ended(page: Page, runs: list[str], before: int) -> None:
    """Wait until a run of ``page`` after the first ``before`` has ended."""
    deadline = time.monotonic() + TIMEOUT / 1000
    while len(runs) <= before:
        assert time.monotonic() < deadline, "no run ended"
        page.wait_for_timeout(50)  # Playwright hands over the websocket's frames while it waits


def test_a_pin_guessers_refused_tries_rerun_the_form_alone(cluster, person, fresh_bounds):
    teacher = open_lecture(person(), cluster.url + LECTURER, 3)
    code, _ = start_room(teacher)
    guesser = person().new_page()
    runs = script_runs(guesser)
    guesser.goto(cluster.url + "/lecture")
    shows(guesser, 1, timeout=TIMEOUT)
    settled(guesser)
    ended(guesser, runs, 0)
    before = len(runs)
    assert runs[-1] == "FINISHED_SUCCESSFULLY"  # the page itself
    form = guesser.locator(".st-key-room_bar")
    for i in range(MAX_PIN_FAILURES + 4):
        if not guesser.locator(".st-key-room_recover_code input").is_visible():
            form.get_by_test_id("stPopoverButton").click()
        guesser.locator(".st-key-room_recover_code input").fill(code)
        guesser.locator(".st-key-room_recover_pin input").fill("000000")  # not the PIN, or once in 10⁶
        tries = len(runs)
        guesser.get_by_test_id("stBaseButton-secondaryFormSubmit").click()
        ended(guesser, runs, tries)
        assert set(runs[tries:]) == {"FINISHED_FRAGMENT_RUN_SUCCESSFULLY"}, runs[tries:]  # the form alone
        key = "classroom.wrong_pin" if i < MAX_PIN_FAILURES else "classroom.pin_locked"
        expect(guesser.locator(".st-key-room_recover_said")).to_contain_text(said(key, code=code))
    assert set(runs[before:]) == {"FINISHED_FRAGMENT_RUN_SUCCESSFULLY"}, runs[before:]
    clean(teacher, guesser)


def test_after_redis_returns_the_lecturer_and_a_latecomer_are_in_step_by_themselves(
    cluster, person, fresh_bounds
):
    teacher = open_lecture(person(), cluster.url + LECTURER, 3)
    _, url = start_room(teacher)
    cluster.stop_redis()
    try:
        moves(teacher, "PageDown", 4)
        expect(teacher.get_by_text(said(UNAVAILABLE))).to_be_visible(timeout=FOLLOW)
        late = watch(person()).new_page()
        assert late.goto(url).status == 200  # the room's hall page while Redis is away: served
        says(late, UNAVAILABLE, timeout=FOLLOW)  # and it says why it shows no slide
        expect(late.locator(HALL_HEADING)).to_have_text("")
        mark(late)
    finally:
        cluster.start_redis()
    expect(teacher.get_by_text(said(UNAVAILABLE))).to_have_count(0, timeout=CATCH_UP)
    follows(late, 4, timeout=CATCH_UP)
    quiet(late, FOLLOW)
    moves(teacher, "PageDown", 5)
    follows(late, 5)
    assert same_page(late)
    clean(teacher)


def test_a_browsers_own_forwarded_for_does_not_escape_the_bound_on_rooms(cluster, person, fresh_bounds):
    store = RedisStore(cluster.redis_url)
    try:
        while True:  # the browsers' address starts its share of rooms
            store.create(client=BROWSER)
    except TooMany as error:
        assert error.reason == "rooms"
    spoofer = open_lecture(person(extra_http_headers={"X-Forwarded-For": "203.0.113.9"}),
                           cluster.url + "/lecture", 1)
    spoofer.locator(".st-key-room_start button").click()
    expect(spoofer.get_by_text(said("classroom.too_many_rooms", minutes=10))).to_be_visible(timeout=TIMEOUT)
    expect(spoofer.locator(".st-key-room_code_big")).to_have_count(0)
    clean(spoofer)
