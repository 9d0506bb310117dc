"""A real Streamlit server and Debian's Chromium for the browser tests.

Browser tests never skip: a missing Chromium is a failure, here and in CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from serverprocess import CHROMIUM, CHROMIUM_FLAGS, Server, free_port, streamlit_command

ROOT = Path(__file__).resolve().parents[2]


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
def app_url(tmp_path_factory):
    """Start ``streamlit run app.py`` on a free port; yield its base URL; stop it."""
    port = free_port()
    # its log in this worker's temporary folder: another worker's playwright plugin empties test-results/
    server = Server(streamlit_command(port), port, tmp_path_factory.mktemp("server") / "streamlit.log")
    try:
        yield server.url
    finally:
        server.stop()
