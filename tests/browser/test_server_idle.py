"""An idle tab costs the server nothing, started exactly as the README starts it.

The README runs ``.venv/bin/streamlit run app.py`` in the app folder, with ``.venv`` (thousands of
folders) inside it. With Streamlit's file watcher on, that left the server at ~100 % of a core with
one tab open and nobody touching it ("Inotify queue overflowed"). conftest.py's server passes
``--server.fileWatcherType none``; this one must not, since what is guarded is the configuration
every start gets (.streamlit/config.toml). It adds only what running under test needs: a free port.
"""

from __future__ import annotations

import time

import pytest
from browserhelpers import settled
from playwright.sync_api import Page
from serverprocess import ROOT, Server, free_port

pytestmark = pytest.mark.browser

IDLE_SECONDS = 20
MAX_IDLE_SHARE = 0.10  # of one core; with the file watcher on it was ~1.0


@pytest.fixture
def readme_server(tmp_path):
    """The README's ``.venv/bin/streamlit run app.py``, on a free port (headless: no browser to open)."""
    streamlit = ROOT / ".venv" / "bin" / "streamlit"
    assert streamlit.is_file(), "the README's command runs the app's own .venv"
    port = free_port()
    cmd = [str(streamlit), "run", "app.py", "--server.port", str(port), "--server.headless", "true"]
    server = Server(cmd, port, tmp_path / "streamlit.log")
    yield server
    server.stop()


def test_an_idle_tab_costs_the_server_almost_no_cpu(readme_server: Server, page: Page):
    page.goto(f"{readme_server.url}/attention?weights=random")
    settled(page)
    time.sleep(2)  # the last websocket messages and the browser's follow-up requests
    before, start = readme_server.cpu_seconds(), time.monotonic()
    time.sleep(IDLE_SECONDS)
    used, wall = readme_server.cpu_seconds() - before, time.monotonic() - start
    assert readme_server.proc.poll() is None, "the server is still running"
    print(f"idle server: {used:.2f} s of CPU in {wall:.1f} s ({used / wall:.1%} of a core)")
    assert used / wall < MAX_IDLE_SHARE, (
        f"the server used {used:.1f} s of CPU in {wall:.0f} idle seconds ({used / wall:.0%} of a core); "
        f"its log ends: {readme_server.log()[-1500:]}"
    )
