"""Several servers, one room (issue 28) in real processes: ``deploy/local.py`` starts Redis, two
Streamlit replicas and HAProxy with cookie affinity on loopback ports; Chromium contexts (one per
person: no shared cookies) are pinned to a replica with HAProxy's own cookie, as its first answer
would have pinned them.

- a lecturer on server A and students on server B follow each other (a student sees a step within
  5 s: through Redis pub/sub, since a follower's own poll comes only every 20 s);
- a replica killed mid-lecture: its lecturer and students reload, the load balancer sends them to the
  other replica, the lecturer is still the presenter and drives on, the students are back in the room
  at the current step; the students on the other replica never noticed;
- Redis restarted with its data (append-only file): the room goes on, without anyone doing anything;
- Redis stopped: every page of the app is still served, the Lecture page says rooms are unavailable
  (and starts none); once Redis is back the class catches up at the lecturer's step on its own;
- Redis restarted without its data: every screen says the room ended, never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from classroomhelpers import (
    CATCH_UP,
    FOLLOW,
    LECTURER,
    TIMEOUT,
    UNAVAILABLE,
    clean,
    moves,
    open_lecture,
    said,
    shows,
    start_room,
    status,
)
from playwright.sync_api import Browser, BrowserContext, Page, expect

from deploy.local import COOKIE, Cluster
from ui.page.nav import PAGES, page_name

pytestmark = pytest.mark.browser



@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    """Logs, configuration and Redis's data in pytest's temporary folder (kept after a failure; not
    test-results/, which pytest-playwright empties when its first test starts)."""
    with Cluster(replicas=2, persist=True, log_dir=tmp_path_factory.mktemp("cluster")) as running:
        yield running
        tracebacks = [p.name for p in running.apps if "Traceback" in p.tail(10**7)]
        assert tracebacks == [], f"a traceback in the log of {tracebacks} ({running.dir})"


@pytest.fixture
def person(browser: Browser, browser_context_args):
    """``person(cluster, "app1")``: a new browser whose requests HAProxy sends to replica app1."""
    made: list[BrowserContext] = []

    def make(cluster: Cluster, replica: str) -> BrowserContext:
        context = browser.new_context(**browser_context_args)
        context.add_cookies([{"name": COOKIE, "value": replica, "url": cluster.url}])
        made.append(context)
        return context

    yield make
    for context in made:
        context.close()


def replica_of(context: BrowserContext) -> str:
    (value,) = [c["value"] for c in context.cookies() if c["name"] == COOKIE]
    return value


def lecture_with(cluster: Cluster, person, teacher_on: str, *students_on: str):
    """A lecturer on replica ``teacher_on`` in a room at step 4; a student following on each of
    ``students_on``. (lecturer page, [student pages], code)"""
    teacher = open_lecture(person(cluster, teacher_on), cluster.url + LECTURER, 3)
    code, url = start_room(teacher)
    assert url.startswith(cluster.url), url  # the address students see is the load balancer's
    pupils = [open_lecture(person(cluster, on), url, 3) for on in students_on]
    moves(teacher, "PageDown", 4)
    for pupil in pupils:
        shows(pupil, 4)
        expect(status(pupil)).to_contain_text(said("classroom.following", code=code))
    return teacher, pupils, code


def unavailable(page: Page, timeout: float = FOLLOW) -> None:
    expect(page.get_by_text(said(UNAVAILABLE))).to_be_visible(timeout=timeout)
    clean(page)


def test_a_lecturer_on_one_server_and_students_on_the_other_follow_each_other(cluster, person):
    teacher, pupils, code = lecture_with(cluster, person, "app1", "app2", "app2")
    for step in (5, 6):
        moves(teacher, "PageDown", step)
        for pupil in pupils:
            shows(pupil, step)  # within FOLLOW: woken through Redis, not by the 20 s poll
    assert {replica_of(p.context) for p in pupils} == {"app2"}
    assert replica_of(teacher.context) == "app1"
    clean(teacher, *pupils)


def test_a_replica_killed_mid_lecture_moves_its_people_and_the_lecture_goes_on(cluster, person):
    teacher, (moved, stayed), code = lecture_with(cluster, person, "app1", "app1", "app2")
    cluster.kill_replica(0)
    try:
        teacher.reload()  # the lecturer's browser, on the other replica now: still the presenter
        shows(teacher, 4, timeout=TIMEOUT)
        expect(teacher.locator(".st-key-room_code_big")).to_have_text(code)
        moves(teacher, "PageDown", 5)
        shows(stayed, 5)
        moved.reload()  # the student: back in the room, at the lecturer's step
        shows(moved, 5, timeout=TIMEOUT)
        expect(status(moved)).to_contain_text(said("classroom.following", code=code))
        moves(teacher, "PageDown", 6)
        shows(moved, 6)
        shows(stayed, 6)
        assert {replica_of(p.context) for p in (teacher, moved, stayed)} == {"app2"}
        clean(teacher, moved, stayed)
    finally:
        cluster.start_replica(0)


def test_redis_restarted_with_its_data_the_room_goes_on(cluster, person):
    teacher, (pupil, other), code = lecture_with(cluster, person, "app1", "app1", "app2")
    cluster.restart_redis()
    moves(teacher, "PageDown", 5)
    shows(pupil, 5, timeout=CATCH_UP)
    shows(other, 5, timeout=CATCH_UP)
    expect(status(other)).to_contain_text(said("classroom.following", code=code))
    moves(teacher, "PageDown", 6)
    shows(other, 6)
    clean(teacher, pupil, other)


def test_without_redis_every_page_is_served_and_the_class_catches_up_when_it_returns(cluster, person):
    teacher, (pupil, other), code = lecture_with(cluster, person, "app1", "app1", "app2")
    cluster.stop_redis()
    try:
        moves(teacher, "PageDown", 5)  # the lecturer teaches on, and is told
        unavailable(teacher)
        unavailable(pupil)  # woken by its own server: the room's last step, and why
        shows(pupil, 4)
        visitor = person(cluster, "app2").new_page()
        for script, *_ in PAGES:  # every page, alone
            visitor.goto(f"{cluster.url}/{page_name(script)}")
            expect(visitor.get_by_test_id("stMain")).to_be_visible(timeout=TIMEOUT)
            expect(
                visitor.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')
            ).to_have_count(1, timeout=TIMEOUT)
            clean(visitor)
        visitor.locator(".st-key-room_start button").click()  # on the Lecture page, the last one
        unavailable(visitor)
        expect(visitor.locator(".st-key-room_code_big")).to_have_count(0)
        unavailable(other, timeout=30_000)  # its own poll (every 20 s) found the store away
    finally:
        cluster.start_redis()
    shows(pupil, 5, timeout=CATCH_UP)  # nobody pressed anything: the head count sent step 5 again
    shows(other, 5, timeout=CATCH_UP)
    moves(teacher, "PageDown", 6)
    shows(other, 6)
    clean(teacher, pupil, other)


def test_redis_restarted_without_its_data_ends_the_room_on_every_screen(person, tmp_path):
    with Cluster(replicas=1, persist=False, log_dir=tmp_path) as forgets:
        teacher, (pupil,), code = lecture_with(forgets, person, "app1", "app1")
        forgets.restart_redis()
        for page in (teacher, pupil):
            expect(page.get_by_text(said("classroom.lost", code=code))).to_be_visible(timeout=CATCH_UP)
            clean(page)
        expect(status(pupil)).to_have_count(0)
        shows(pupil, 4)  # the slide stays
        expect(teacher.locator(".st-key-room_start button")).to_be_visible()
        assert "Traceback" not in forgets.apps[0].tail(10**7)
        assert re.search(r"\bUP\b", forgets.backend_status()["app1"])
