"""The lecturer's keys under load, in a real Chromium against a server of the test's own: every press
counts, none is lost while a rerun is pending (ui/page/keys.py, ui/components/step_keys.js)."""

from __future__ import annotations

import os
import re
import signal
import threading
import time

import pytest
from browserhelpers import keys_ready
from playwright.sync_api import Page, expect
from serverprocess import Server, free_port, streamlit_command

pytestmark = [pytest.mark.browser, pytest.mark.alone]  # its load is made to measure: nothing else beside it

TIMEOUT = 60_000  # the first session imports torch and builds the model
TOTAL = 13  # the random-weights model's lecture has every step
# 30 presses: two at step 1 (nothing before it), one past step 13 (nothing after it), and a last
# stretch that ends mid-lecture, so a lost press cannot hide behind an end.
KEYS = ["PageUp"] * 2 + ["PageDown"] * 10 + ["PageUp"] * 3 + ["PageDown"] * 6 + ["PageUp"] * 5 \
    + ["PageDown"] * 3 + ["PageUp"] * 1
GAP = 0.3  # seconds between presses: a lecturer clicking through quickly
STOPPED, PERIOD = 0.3, 0.45  # the server is paused 0.3 s of every 0.45 s: a machine under load


def expected(keys: list[str], step: int = 1) -> int:
    """Where the keys lead from ``step``, each stopped at the first and last step as a click would be."""
    for key in keys:
        step = min(max(step + (1 if key == "PageDown" else -1), 1), TOTAL)
    return step


@pytest.fixture
def server(tmp_path):
    port = free_port()
    server = Server(streamlit_command(port), port, tmp_path / "streamlit.log")
    yield server
    server.stop()


def heading(page: Page, step: int) -> None:
    expect(page.locator(".st-key-lecture_slide h2")).to_have_text(
        re.compile(rf"^{step} / {TOTAL} · "), timeout=TIMEOUT
    )


def settled_at(page: Page, step: int) -> None:
    heading(page, step)
    expect(page).to_have_url(re.compile(rf"[?&]step={step}(&|$)"), timeout=TIMEOUT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def slowed(pid: int, done: threading.Event) -> None:
    """Pause the process STOPPED s of every PERIOD s until ``done``; it always runs again at the end."""
    try:
        while not done.is_set():
            os.kill(pid, signal.SIGSTOP)
            time.sleep(STOPPED)
            os.kill(pid, signal.SIGCONT)
            done.wait(PERIOD - STOPPED)
    finally:
        os.kill(pid, signal.SIGCONT)


def test_every_key_press_counts_while_the_server_is_slow(page: Page, server: Server):
    assert len(KEYS) == 30 and expected(KEYS) == 10
    page.goto(f"{server.url}/lecture?weights=random&step=1")
    settled_at(page, 1)
    keys_ready(page, timeout=20_000)
    done = threading.Event()
    pauser = threading.Thread(target=slowed, args=(server.proc.pid, done), daemon=True)
    pauser.start()
    try:
        for key in KEYS:
            page.keyboard.press(key)
            time.sleep(GAP)
    finally:
        done.set()
        pauser.join()
    settled_at(page, expected(KEYS))
    page.wait_for_timeout(1500)  # nothing more is applied later: no press counted twice
    settled_at(page, expected(KEYS))
    # the keys are heard on the app's own window: the component is drawn in the page, not an iframe
    keys_ready(page, timeout=1000)




def test_the_keys_leave_with_the_page_and_old_presses_never_come_back(page: Page, server: Server):
    """On another page PageDown is the browser's again (no listener); back on the Lecture page one
    press moves one step: the presses applied before are not applied again."""
    page.goto(f"{server.url}/lecture?weights=random&step=1")
    settled_at(page, 1)
    keys_ready(page)
    for step in (2, 3):
        page.keyboard.press("PageDown")
        settled_at(page, step)
    page.get_by_test_id("stExpandSidebarButton").click()
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Attention", exact=True).click()
    expect(page).to_have_url(re.compile(r"/attention"), timeout=TIMEOUT)
    page.wait_for_function("() => window.__glassboxStepKeys.listener == null", timeout=TIMEOUT)
    page.keyboard.press("PageDown")  # the page scrolls; no step moves anywhere
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Lecture mode", exact=True).click()
    settled_at(page, 3)
    keys_ready(page)
    page.keyboard.press("PageDown")
    settled_at(page, 4)
    page.wait_for_timeout(1500)
    settled_at(page, 4)
