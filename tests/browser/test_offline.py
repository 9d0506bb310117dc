"""Nothing is fetched from outside the app's own server: a lecture hall may have no internet. Every
page opened by its URL in a real Chromium, each request it makes recorded (the favicon included:
Streamlit takes a Material icon's from fonts.gstatic.com unless the page sets its own)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from browserhelpers import settled
from playwright.sync_api import Page

from ui.page.nav import PAGES

pytestmark = pytest.mark.browser

TIMEOUT = 60_000  # the first session imports torch and builds the vocabulary
LOCAL = ("data:", "blob:", "about:")


@pytest.mark.parametrize("script", [p[0] for p in PAGES], ids=lambda s: Path(s).stem)
def test_a_page_fetches_nothing_from_outside_its_server(page: Page, app_url: str, script: str):
    origin = urlsplit(app_url).netloc
    outside = []
    page.on("request", lambda r: None if r.url.startswith(LOCAL) or urlsplit(r.url).netloc == origin
            else outside.append(r.url))
    path = "" if script == PAGES[0][0] else Path(script).stem
    page.goto(f"{app_url}/{path}?weights=random")
    settled(page, timeout=TIMEOUT)
    page.wait_for_timeout(1500)  # the favicon, icons and fonts are asked for after the run
    assert outside == []
