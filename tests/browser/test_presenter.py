"""The lecture's session side against a hostile class, in real processes: a Streamlit server of this
module's own (its CPU time read from /proc, its process paused to play a busy server) and Debian's
Chromium.

- a student's member cookie edited by hand (``glassbox_member=a.b``) is replaced by a new id, and the
  student's hall page (``/r/CODE``) does not loop: over a quiet window it asks the server nothing (its
  one event stream stays open, no reconnection, no reload), receives no event, and the server's CPU
  time is read;
- two presenter tabs of one browser (one cookie): the newest takes the room over, the older one says
  so and stops sending its step, and the class (on the hall page) stays on the newest one's step for
  several re-send periods; "Take over a room" from a second browser does the same;
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from browserhelpers import keys_ready, settled
from classroomhelpers import (
    HALL_HEADING,
    LECTURER,
    TIMEOUT,
    clean,
    follow,
    follows,
    heading,
    open_lecture,
    said,
    shows,
    start_room,
)
from hallwatch import quiet, streams, watch
from playwright.sync_api import Browser, BrowserContext, Page, expect
from serverprocess import Server, free_port, streamlit_command

from ui.classroom.panels import COUNT_SECONDS
from ui.classroom.rooms import is_id
from ui.hall.routes import MEMBER_COOKIE

pytestmark = pytest.mark.browser

QUIET_SECONDS = 10.0
# The whole server, a quiet room with one follower (its channel looks at the room every 2 s, the stream
# says it is there every 15 s), as a share of one core: 0.005 on the day it was written; a Streamlit
# page rerun in a loop took ~0.9.
MAX_CPU_SHARE = 0.1
RESEND_PERIODS = 2.5  # how long the class must stay put, in the lecturer's re-send periods (COUNT_SECONDS)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    """A server of this module's own: its CPU time is this module's to read, its process to pause."""
    port = free_port()
    own = Server(streamlit_command(port), port, tmp_path_factory.mktemp("server") / "streamlit.log")
    yield own
    own.stop()


@pytest.fixture
def contexts(browser: Browser, browser_context_args) -> Iterator[list[BrowserContext]]:
    """Browsers (contexts share no cookies: two laptops), made on demand and closed after the test."""
    made: list[BrowserContext] = []
    yield made
    for context in made:
        context.close()


def new_browser(contexts: list[BrowserContext], browser: Browser, args: dict) -> BrowserContext:
    context = browser.new_context(**args)
    contexts.append(context)
    return context


def test_a_member_cookie_edited_by_hand_is_replaced_and_the_hall_page_stays_quiet(
    server: Server, browser: Browser, browser_context_args, contexts
):
    lecturer = new_browser(contexts, browser, browser_context_args)
    teacher = open_lecture(lecturer, server.url + LECTURER, 3)
    code, url = start_room(teacher)
    teacher.close()  # the room lives on; the server has this student alone to serve

    student = watch(new_browser(contexts, browser, browser_context_args))
    student.add_cookies([{"name": MEMBER_COOKIE, "value": "a.b", "url": server.url}])
    pupil = student.new_page()
    asked: list[float] = []  # when the page made each request
    pupil.on("request", lambda _: asked.append(time.monotonic()))
    pupil.goto(url)
    follows(pupil, 3, timeout=TIMEOUT)  # the slide is drawn
    quiet(pupil, TIMEOUT)
    pupil.wait_for_timeout(2_000)  # the first drawing's own requests (KaTeX's fonts) are over
    cpu_before, start, heard = server.cpu_seconds(), time.monotonic(), len(streams(pupil)["events"])
    pupil.wait_for_timeout(QUIET_SECONDS * 1000)
    cpu, wall = server.cpu_seconds() - cpu_before, time.monotonic() - start
    requests = sum(1 for at in asked if start <= at <= start + wall)
    events = len(streams(pupil)["events"]) - heard
    print(f"a quiet follower: {requests} requests, {events} events, {cpu:.2f} s of CPU in {wall:.1f} s")
    assert (requests, events) == (0, 0), "the hall page asked or heard something in a quiet room"
    assert streams(pupil)["opened"] == 1
    assert cpu / wall < MAX_CPU_SHARE, f"the server used {cpu:.1f} s of CPU in {wall:.0f} quiet seconds"

    (member,) = [c["value"] for c in student.cookies() if c["name"] == MEMBER_COOKIE]
    assert member != "a.b" and is_id(member), member
    pupil.reload()  # the new id is the browser's now: kept, not replaced again
    follows(pupil, 3, timeout=TIMEOUT)
    assert [c["value"] for c in student.cookies() if c["name"] == MEMBER_COOKIE] == [member]


def stays(page: Page, step: int, seconds: float) -> None:
    """The hall page shows ``step`` at every look for ``seconds`` (a flip to another step fails at once)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        text = page.locator(HALL_HEADING).inner_text()
        assert text == heading(step), text
        page.wait_for_timeout(250)
    follows(page, step)


def superseded(page: Page, code: str) -> None:
    expect(page.locator(".st-key-room_superseded")).to_contain_text(
        said("lecture.superseded", code=code), timeout=(COUNT_SECONDS + 10) * 1000
    )
    expect(page.locator(".st-key-room_code_big")).to_have_count(0)


def test_the_newest_presenter_tab_drives_and_the_older_one_stops(
    server: Server, browser: Browser, browser_context_args, contexts
):
    lecturer = new_browser(contexts, browser, browser_context_args)
    first = open_lecture(lecturer, server.url + LECTURER, 3)
    code, url = start_room(first)
    student = new_browser(contexts, browser, browser_context_args)
    pupil = follow(student, url, 3)

    second = open_lecture(lecturer, server.url + f"/lecture?sentence={quote('我们去北京')}&step=8", 8)
    expect(second.locator(".st-key-room_code_big")).to_have_text(code, timeout=TIMEOUT)  # the cookie
    follows(pupil, 8, timeout=TIMEOUT)
    superseded(first, code)
    stays(pupil, 8, RESEND_PERIODS * COUNT_SECONDS)  # the older tab sends its step 3 no more
    shows(first, 3)  # and keeps its own page

    # "Take over a room" from another browser, with the PIN the presenting tab shows
    second.get_by_role("button", name=re.compile(said("classroom.pin_button"))).click()
    pin = second.locator(".st-key-room_pin code").inner_text().strip()
    laptop_context = new_browser(contexts, browser, browser_context_args)
    laptop = open_lecture(laptop_context, server.url + "/lecture", 1)
    laptop.get_by_role("button", name=re.compile(said("classroom.recover"))).click()
    laptop.locator(".st-key-room_recover_code input").fill(code)
    laptop.locator(".st-key-room_recover_pin input").fill(pin)
    laptop.get_by_role("button", name=said("classroom.recover_button"), exact=True).click()
    expect(laptop.locator(".st-key-room_code_big")).to_have_text(code, timeout=TIMEOUT)
    shows(laptop, 8, timeout=TIMEOUT)
    settled(laptop)
    keys_ready(laptop)
    laptop.mouse.click(5, 300)
    laptop.keyboard.press("PageDown")
    shows(laptop, 9, timeout=TIMEOUT)
    follows(pupil, 9, timeout=TIMEOUT)
    superseded(second, code)
    stays(pupil, 9, RESEND_PERIODS * COUNT_SECONDS)  # the tab at step 8 sends it no more

    # the older tab takes the room back with one click: the class follows it, the laptop stops
    first.locator(".st-key-room_present_here button").click()
    follows(pupil, 3, timeout=TIMEOUT)
    superseded(laptop, code)
    stays(pupil, 3, RESEND_PERIODS * COUNT_SECONDS)
    clean(first, second, laptop)
