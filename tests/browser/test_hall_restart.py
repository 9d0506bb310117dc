"""A restarted server (issue 40, part 4) in real processes: Redis holds the rooms (``deploy/local.py``'s
cluster with one replica, reached directly, as a lecturer's own server is), several students follow a
room on its hall page, and the server process is killed (SIGKILL) and started again on the same port.

- while the server is away every student's page says "Reconnecting…" (after 2 s without a stream);
- within 10 s of the server answering again every student's stream is open again, without a reload (a
  mark set on ``window`` before is still there), on the current step: each reconnection sends the
  version its page shows (``Last-Event-ID``), and the page says nothing more;
- the lecturer reloads on the new server, is still the presenter, and moves on: every student follows;
- the reconnect wait is jittered: each stream's first event sets its own ``retry:`` (1–3 s), read raw
  from several streams, so a restarted server is not asked by every follower at the same moment;
- Ctrl-C or SIGTERM stops a server whose streams are open, within seconds (a server of its own).
"""

from __future__ import annotations

import http.client
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from classroomhelpers import (
    FOLLOW,
    LECTURER,
    TIMEOUT,
    clean,
    follow,
    follows,
    moves,
    open_lecture,
    shows,
    start_room,
)
from hallwatch import mark, quiet, same_page, says, streams, watch
from playwright.sync_api import Browser, BrowserContext, Request, expect

from deploy.local import APP_START_SECONDS, Cluster, healthy, wait_for
from ui.classroom.rooms_redis import RedisStore
from ui.hall.broadcast import RETRY_MS

pytestmark = pytest.mark.browser

STUDENTS = 4
BACK_SECONDS = 10.0  # issue 40: every follower back on the current step within this of the server's return


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    """Redis (the rooms outlive the server) and one replica; HAProxy is started too, and not used."""
    with Cluster(replicas=1, persist=False, log_dir=tmp_path_factory.mktemp("restart")) as running:
        yield running
        assert "Traceback" not in running.apps[0].tail(10**7), running.dir


@pytest.fixture
def people(browser: Browser, browser_context_args) -> Iterator[list[BrowserContext]]:
    """A browser each (no shared cookies), their hall streams watched (tests/browser/hallwatch.py)."""
    made = [watch(browser.new_context(**browser_context_args)) for _ in range(STUDENTS + 1)]
    yield made
    for context in made:
        context.close()


def is_stream(request: Request) -> bool:
    return urlsplit(request.url).path.endswith("/events")


def test_a_restarted_server_has_every_student_back_on_the_current_step_without_a_reload(cluster, people):
    server = cluster.replica_urls[0]
    teacher = open_lecture(people[0], server + LECTURER, 3)
    code, url = start_room(teacher)
    assert url == f"{server}/r/{code}"
    pupils = [follow(context, url, 3) for context in people[1:]]
    moves(teacher, "PageDown", 4)
    for pupil in pupils:
        follows(pupil, 4)
        quiet(pupil, FOLLOW)
        mark(pupil)
    (version,) = {streams(pupil)["ids"][-1] for pupil in pupils}  # the room's version, as the pages have it
    tries: list[Request] = []  # every stream request from now on: the reconnections
    for pupil in pupils:
        pupil.on("request", lambda request: tries.append(request) if is_stream(request) else None)

    cluster.kill_replica(0)
    for pupil in pupils:
        says(pupil, "hall.reconnecting", timeout=FOLLOW)
    opened = [streams(pupil)["opened"] for pupil in pupils]
    cluster.apps[0].start()  # the same command, the same port
    wait_for(lambda: healthy(server), cluster.apps[0], APP_START_SECONDS, "/_stcore/health")
    up = time.monotonic()
    for pupil, before in zip(pupils, opened, strict=True):
        left = max(up + BACK_SECONDS - time.monotonic(), 0.001) * 1000
        pupil.wait_for_function(f"() => window.__hallStreams.opened > {before}", timeout=left)
        quiet(pupil, max(up + BACK_SECONDS - time.monotonic(), 0.001) * 1000)
    back = time.monotonic() - up
    print(f"{STUDENTS} students back {back:.1f} s after the server answered; {len(tries)} tries")
    assert back <= BACK_SECONDS
    for pupil in pupils:
        follows(pupil, 4)  # on the step they had: the server's is the same
        assert same_page(pupil)
    # each reconnection that reached the server asked from the version its page had (the headers as
    # sent: the provisional ones Playwright reports first lack what the EventSource adds)
    reached = [request for request in tries if request.failure is None]
    assert len(reached) == STUDENTS, [r.failure for r in tries]
    assert {request.all_headers().get("last-event-id") for request in reached} == {version}

    teacher.reload()  # the lecturer's page on the new server: still the presenter (its cookie)
    shows(teacher, 4, timeout=TIMEOUT)
    expect(teacher.locator(".st-key-room_code_big")).to_have_text(code)
    moves(teacher, "PageDown", 5)
    for pupil in pupils:
        follows(pupil, 5)
        assert same_page(pupil)
    clean(teacher)


def first_event(url: str) -> dict[str, str]:
    """The fields of the first event of the stream at ``url``, read raw (then the stream is closed)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.request("GET", parts.path, headers={"Accept": "text/event-stream"})
        response = connection.getresponse()
        assert response.status == 200, response.status
        assert response.getheader("content-type").startswith("text/event-stream")
        fields = {}
        while line := response.readline().decode().rstrip("\n"):
            name, _, value = line.partition(":")
            fields[name] = value.strip()
        return fields
    finally:
        connection.close()


def test_each_stream_is_told_its_own_reconnect_wait(cluster):
    store = RedisStore(cluster.redis_url)
    room = store.create(step=1)
    firsts = [first_event(f"{cluster.replica_urls[0]}/r/{room.code}/events") for _ in range(8)]
    assert {f["event"] for f in firsts} == {"hello"}
    waits = [int(f["retry"]) for f in firsts]
    assert all(RETRY_MS[0] <= w <= RETRY_MS[1] for w in waits), waits
    assert len(set(waits)) > 1, waits  # jittered: 8 equal draws of 2,001 would be one chance in 10^23


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_ctrl_c_or_sigterm_stops_a_server_whose_students_are_following(tmp_path, signal_name):
    """A lecturer's Ctrl-C (or a service manager's SIGTERM) stops the server although streams are open:
    the hall ends them at once (uvicorn waits for open responses, and a stream never ends by itself)."""
    import signal
    import threading

    from serverprocess import Server, free_port, streamlit_command

    port = free_port()
    # The server as a terminal starts it: with Ctrl-C's default action. A pytest-xdist worker ignores
    # SIGINT, and an ignored signal stays ignored in a child; a handled one is reset to the default.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        server = Server(streamlit_command(port), port, tmp_path / "streamlit.log")
    finally:
        signal.signal(signal.SIGINT, before)
    try:
        lecture = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        lecture.request("GET", "/r/K7MQ2P/events")  # an unknown room's stream is a stream too: it stays
        response = lecture.getresponse()
        assert response.status == 200 and response.readline().startswith(b"retry:")
        ended = threading.Event()

        def read_on() -> None:
            try:
                while response.readline():
                    pass
            finally:
                ended.set()

        threading.Thread(target=read_on, daemon=True).start()
        started = time.monotonic()
        server.proc.send_signal(getattr(signal, signal_name))
        server.proc.wait(timeout=20)
        assert time.monotonic() - started < 5.0, "the server waited for its streams"
        assert ended.wait(5.0)  # the stream was ended, not left hanging
        assert "Traceback" not in server.log(), server.log()[-2000:]
    finally:
        server.stop()
