"""A real Streamlit server and Debian's Chromium for the browser tests.

Browser tests never skip: a missing Chromium is a failure, here and in CI.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: apt-get install -y chromium (browser tests must not skip)")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 720}}


@pytest.fixture(scope="session")
def shared_context(browser, browser_context_args):
    """One browser context for the whole run, as a student's browser is: Streamlit's and plotly's
    scripts come from its HTTP cache, compiled code and all, instead of being fetched and compiled
    again for every test (a fresh context per test: ~1 s more of each 6-7 s page load here, measured
    over 6 pages twice). Every test still gets a page of its own, and every page load is a new
    Streamlit session; the app keeps nothing in the browser but the URL."""
    context = browser.new_context(**browser_context_args)
    yield context
    context.close()


@pytest.fixture
def page(shared_context):
    page = shared_context.new_page()
    yield page
    page.close()


@pytest.fixture(scope="session")
def app_url():
    """Start ``streamlit run app.py`` on a free port; yield its base URL; stop it."""
    port = _free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.headless", "true",
        "--server.port", str(port),
        "--server.address", "127.0.0.1",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip
    (ROOT / "test-results").mkdir(exist_ok=True)
    log = open(ROOT / "test-results" / "streamlit.log", "w")  # closed in the finally below
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"streamlit exited with {proc.returncode}; see test-results/streamlit.log")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().decode().strip() == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("streamlit did not answer /_stcore/health within 60 s")
            time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
