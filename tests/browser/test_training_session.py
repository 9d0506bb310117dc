"""A training belongs to its tab, and the Training page's buttons follow its job, in a real Chromium.

A server of this module's own, started with a short ``server.disconnectedSessionTTL`` (how long a
closed tab's session is kept for a reconnect; config.toml says 30 s), so that a closed tab's session
ends within the test. Every page is a tab of its own, hence a Streamlit session of its own.
"""

from __future__ import annotations

import time

import pytest
from browserhelpers import settled
from playwright.sync_api import BrowserContext, Page, expect
from serverprocess import Server, free_port, streamlit_command

from i18n import t
from ui.sections.training_jobs import MAX_CONCURRENT_TRAININGS

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
GRACE = 3  # seconds: the test server's disconnectedSessionTTL
IDLE_SHARE = 0.10  # of one core: a server with no training running and no tab busy


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    port = free_port()
    cmd = streamlit_command(port, "--server.disconnectedSessionTTL", str(GRACE))
    server = Server(cmd, port, tmp_path_factory.mktemp("server") / "streamlit.log")
    yield server
    server.stop()


def training_page(context: BrowserContext, server: Server) -> Page:
    """A new tab on the Training page, random weights (d_model 64, 2 layers), steps at their maximum
    (5000: the reverse task then runs for minutes on this machine, the 2-minute time limit first)."""
    page = context.new_page()
    page.goto(f"{server.url}/training?weights=random")
    settled(page)
    steps = page.locator(".st-key-train_steps input[type=range]")
    thumb = page.locator(".st-key-train_steps").get_by_test_id("stSliderThumbValue")
    for _ in range(3):  # a key pressed while the page was still wiring its widgets can be lost
        settled(page)  # and one pressed while a rerun replaces the slider (a busy machine: seen in CI)
        steps.focus()
        steps.press("End")
        try:  # a list: every thumb label (the one of the run before lingers briefly) says 5000
            expect(thumb).to_have_text(["5000"], timeout=5_000)
            break
        except AssertionError:
            continue
    expect(thumb).to_have_text(["5000"])
    settled(page)
    return page


def start(page: Page) -> None:
    button = page.locator(".st-key-train_start button")
    expect(button).to_have_count(1, timeout=TIMEOUT)  # not the button of a run being replaced
    button.click()


def expect_training(page: Page) -> None:
    """The job runs: a progress bar showing steps, Start disabled, Stop enabled."""
    expect(page.get_by_test_id("stProgress")).to_contain_text("step", timeout=TIMEOUT)
    expect(page.locator(".st-key-train_start button")).to_be_disabled()
    expect(page.locator(".st-key-train_stop button")).to_be_enabled()


def idle_within(server: Server, seconds: float, window: float = 2.0) -> float | None:
    """The first moment, within ``seconds``, the server uses less than IDLE_SHARE of a core over
    ``window`` seconds: how long that took, or None."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        before, t0 = server.cpu_seconds(), time.monotonic()
        time.sleep(window)
        if (server.cpu_seconds() - before) / (time.monotonic() - t0) < IDLE_SHARE:
            return time.monotonic() - start
    return None


def test_closing_its_tab_stops_a_training_and_frees_its_slot(server: Server, shared_context: BrowserContext):
    busy = t("training.busy", "en", n=MAX_CONCURRENT_TRAININGS)
    owners = [training_page(shared_context, server) for _ in range(MAX_CONCURRENT_TRAININGS)]
    for page in owners:
        start(page)
        expect_training(page)
    other = training_page(shared_context, server)
    start(other)
    expect(other.get_by_text(busy)).to_be_visible(timeout=TIMEOUT)  # every slot is taken
    for page in owners:
        page.close()  # the tab, hence its websocket: the session is kept GRACE s for a reconnect
    closed = time.monotonic()
    # The trainings stop at their next step once the sessions have ended: the server falls idle.
    # (They had minutes left: a training that outlives its tab keeps a core busy until then.)
    took = idle_within(server, GRACE + 30)
    assert took is not None, "the closed tabs' trainings still run"
    assert time.monotonic() - closed >= GRACE, "a closed tab may come back within the grace time"
    start(other)  # the student who was refused gets a slot now
    expect_training(other)
    expect(other.get_by_text(busy)).to_have_count(0)
    other.locator(".st-key-train_stop button").click()
    expect(other.locator(".st-key-train_start button")).to_be_enabled(timeout=TIMEOUT)
    other.close()


def test_after_stop_start_is_enabled_again_without_a_second_click(server: Server,
                                                                 shared_context: BrowserContext):
    page = training_page(shared_context, server)
    start(page)
    expect_training(page)
    page.locator(".st-key-train_stop button").click()
    # Stop is disabled as soon as it is pressed; the page says the run is stopping, then shows the
    # result, and Start is enabled again with nothing else clicked.
    expect(page.locator(".st-key-train_stop button")).to_be_disabled(timeout=5_000)
    expect(page.get_by_text("Training stopped by you after")).to_be_visible(timeout=30_000)
    expect(page.locator(".st-key-train_start button")).to_be_enabled(timeout=5_000)
    expect(page.locator(".st-key-train_stop button")).to_be_disabled()
    expect(page.get_by_test_id("stProgress")).to_have_count(0)
    settled(page)
    page.close()
