"""Several servers, one room (issue 28; students on the hall page since issue 40) in real processes:
``deploy/local.py`` starts Redis, two Streamlit replicas and HAProxy with cookie affinity on loopback
ports; Chromium contexts (one per person: no shared cookies) are pinned to a replica with HAProxy's own
cookie, as its first answer would have pinned them. The lecturer drives from the Lecture page (a
Streamlit session); every student follows on the room's hall page, ``/r/CODE``, whose event stream
goes to the replica the cookie names.

- a lecturer on server A and students on server B: each step reaches the students within 5 s (B's
  hall hears of A's change through Redis pub/sub; its channel also looks every 2 s);
- a replica killed mid-lecture: the students whose stream was on it come back by themselves, without
  a reload (their EventSource reconnects, HAProxy redispatches the new stream to the live replica: any
  replica streams any room, the stream needs no stickiness), on the current step; the lecturer
  reloads, is still the presenter on the live replica and drives on; the students on the other
  replica never lost their stream;
- Redis restarted with its data (append-only file): the room goes on, without anyone doing anything;
- Redis stopped: every page is still served (each page of the app, and the room's hall page), the
  lecturer's page and the students' hall pages say rooms are unavailable and keep the slide; once
  Redis is back the class catches up at the lecturer's step by itself;
- Redis restarted without its data: the lecturer's page and the hall pages say the room ended
  (``classroom.lost``), never a traceback.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from classroomhelpers import (
    CATCH_UP,
    FOLLOW,
    HALL_HEADING,
    LECTURER,
    TIMEOUT,
    UNAVAILABLE,
    clean,
    follow,
    follows,
    hall_text,
    moves,
    open_lecture,
    said,
    shows,
    start_room,
)
from hallwatch import mark, quiet, same_page, says, streams, watch
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
    """``person(cluster, "app1")``: a new browser whose requests HAProxy sends to replica app1, its
    hall pages' streams watched (tests/browser/hallwatch.py)."""
    made: list[BrowserContext] = []

    def make(cluster: Cluster, replica: str) -> BrowserContext:
        context = watch(browser.new_context(**browser_context_args))
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
    """A lecturer on replica ``teacher_on`` in a room at step 4; a student following on the hall page
    through each of ``students_on``, marked (``same_page``). (lecturer page, [student pages], code)"""
    teacher = open_lecture(person(cluster, teacher_on), cluster.url + LECTURER, 3)
    code, url = start_room(teacher)
    assert url.startswith(cluster.url), url  # the address students see is the load balancer's
    pupils = [follow(person(cluster, on), url, 3) for on in students_on]
    moves(teacher, "PageDown", 4)
    for pupil in pupils:
        follows(pupil, 4)
        quiet(pupil, FOLLOW)
        mark(pupil)
    return teacher, pupils, code


def unavailable(page: Page, timeout: float = FOLLOW) -> None:
    """The Lecture page says rooms are unavailable."""
    expect(page.get_by_text(said(UNAVAILABLE))).to_be_visible(timeout=timeout)
    clean(page)


def test_a_lecturer_on_one_server_and_students_on_the_other_follow_each_other(cluster, person):
    teacher, pupils, code = lecture_with(cluster, person, "app1", "app2", "app2")
    for step in (5, 6):
        moves(teacher, "PageDown", step)
        for pupil in pupils:
            follows(pupil, step)  # within FOLLOW: woken through Redis (or the channel's own look)
    assert {replica_of(p.context) for p in pupils} == {"app2"}
    assert replica_of(teacher.context) == "app1"
    assert all(same_page(p) and streams(p)["opened"] == 1 for p in pupils)
    clean(teacher)


def test_a_replica_killed_mid_lecture_its_students_come_back_by_themselves(cluster, person):
    teacher, (moved, stayed), code = lecture_with(cluster, person, "app1", "app1", "app2")
    cluster.kill_replica(0)
    try:
        # the student on the killed replica: its stream reconnects by itself, to the live replica
        moved.wait_for_function("() => window.__hallStreams.opened >= 2", timeout=FOLLOW)
        quiet(moved, FOLLOW)
        teacher.reload()  # the lecturer's browser, on the other replica now: still the presenter
        shows(teacher, 4, timeout=TIMEOUT)
        expect(teacher.locator(".st-key-room_code_big")).to_have_text(code)
        moves(teacher, "PageDown", 5)
        follows(moved, 5)
        follows(stayed, 5)
        moves(teacher, "PageDown", 6)
        follows(moved, 6)
        follows(stayed, 6)
        assert same_page(moved) and same_page(stayed)  # nobody reloaded a hall page
        assert streams(stayed)["opened"] == 1  # the other replica's students never lost their stream
        assert {replica_of(p.context) for p in (teacher, moved, stayed)} == {"app2"}
        clean(teacher)
    finally:
        cluster.start_replica(0)


def test_redis_restarted_with_its_data_the_room_goes_on(cluster, person):
    teacher, (pupil, other), code = lecture_with(cluster, person, "app1", "app1", "app2")
    cluster.restart_redis()
    moves(teacher, "PageDown", 5)
    follows(pupil, 5, timeout=CATCH_UP)
    follows(other, 5, timeout=CATCH_UP)
    moves(teacher, "PageDown", 6)
    for page in (pupil, other):
        follows(page, 6)
        quiet(page, FOLLOW)
        assert same_page(page)
    clean(teacher)


def test_without_redis_every_page_is_served_and_the_class_catches_up_when_it_returns(cluster, person):
    teacher, (pupil, other), code = lecture_with(cluster, person, "app1", "app1", "app2")
    url = f"{cluster.url}/r/{code}"
    cluster.stop_redis()
    try:
        moves(teacher, "PageDown", 5)  # the lecturer teaches on, and is told
        unavailable(teacher)
        for page in (pupil, other):  # each hall's channel finds the store away: the slide stays, and why
            says(page, UNAVAILABLE, timeout=FOLLOW)
            follows(page, 4)
        late = person(cluster, "app2").new_page()  # the room's address opened while Redis is away
        assert late.goto(url).status == 200
        says(late, UNAVAILABLE, timeout=FOLLOW)
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
    finally:
        cluster.start_redis()
    # nobody pressed anything: the lecturer's head count sent step 5 again, every hall looked
    for page in (pupil, other, late):
        follows(page, 5, timeout=CATCH_UP)
        quiet(page, FOLLOW)
    moves(teacher, "PageDown", 6)
    for page in (pupil, other, late):
        follows(page, 6)
    assert same_page(pupil) and same_page(other)
    clean(teacher)


def test_redis_restarted_without_its_data_ends_the_room_on_every_screen(person, tmp_path):
    with Cluster(replicas=1, persist=False, log_dir=tmp_path) as forgets:
        teacher, (pupil, other), code = lecture_with(forgets, person, "app1", "app1", "app1")
        forgets.restart_redis()
        expect(teacher.get_by_text(said("classroom.lost", code=code))).to_be_visible(timeout=CATCH_UP)
        clean(teacher)
        expect(teacher.locator(".st-key-room_start button")).to_be_visible()
        for page in (pupil, other):
            expect(hall_text(page)).to_have_text(said("classroom.lost", code=code), timeout=CATCH_UP)
            expect(page.locator(HALL_HEADING)).to_have_text("")
            expect(page.locator("#leave")).to_be_hidden()
            assert "Traceback" not in page.locator("body").inner_text()
            assert same_page(page)
        assert "Traceback" not in forgets.apps[0].tail(10**7)
        assert re.search(r"\bUP\b", forgets.backend_status()["app1"])
