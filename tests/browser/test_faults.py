"""The server dies mid-lecture and is restarted: a reload restores every setting from the URL.

Its own server (the shared ``app_url`` one must survive): started, killed with SIGKILL (no clean
shutdown), restarted on the same port. Session state lives in the server's memory and is lost; what
the student sees must come back from the URL alone.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from serverprocess import free_port, streamlit_command, wait_healthy

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60_000


def start_server(port: int, log) -> subprocess.Popen:
    proc = subprocess.Popen(streamlit_command(port), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_healthy(proc, f"http://127.0.0.1:{port}")
    except RuntimeError as e:
        proc.kill()
        pytest.fail(str(e))
    return proc


def stop(proc: subprocess.Popen, kill: bool = False) -> None:
    if proc.poll() is None:
        proc.kill() if kill else proc.terminate()
        proc.wait(timeout=15)


def wait_rendered(page: Page, title: str) -> None:
    expect(page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True)).to_be_visible(
        timeout=TIMEOUT
    )
    expect(page.get_by_text("Weights: ").first).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)


def assert_state(page: Page, sentence: str) -> None:
    expect(page.locator(".st-key-d_model input")).to_have_value("128", timeout=TIMEOUT)
    expect(page.locator(".st-key-num_heads")).to_contain_text("8")
    expect(page.locator(".st-key-seed input")).to_have_value("7")
    expect(page.locator(".st-key-sentence textarea")).to_have_value(sentence)
    expect(page.get_by_text("seed 7").first).to_be_visible()
    expect(page.locator(".st-key-attn_layer")).to_contain_text("2")
    expect(page.get_by_test_id("stException")).to_have_count(0)


def test_kill_and_restart_the_server_then_reload_restores_the_view(page: Page):
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    (ROOT / "test-results").mkdir(exist_ok=True)
    with open(ROOT / "test-results" / "streamlit-faults.log", "w") as log:
        proc = start_server(port, log)
        try:
            page.goto(f"{url}/attention?weights=random&d_model=128&num_heads=8&seed=7&num_layers=2&attn_layer=2")
            wait_rendered(page, "Attention")
            box = page.locator(".st-key-sentence textarea")
            sentence = "restart me 重启 🙂"
            box.fill(sentence)
            box.press("Control+Enter")
            expect(page).to_have_url(re.compile("sentence="), timeout=TIMEOUT)
            wait_rendered(page, "Attention")
            assert_state(page, sentence)
            before = page.url

            stop(proc, kill=True)  # SIGKILL: no goodbye to the browser
            page.wait_for_timeout(1500)
            proc = start_server(port, log)  # same port: the URL the students have still works
            page.reload()
            wait_rendered(page, "Attention")
            assert_state(page, sentence)
            assert page.url == before
        finally:
            stop(proc)
