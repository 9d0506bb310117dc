"""Browser-test helpers, imported by the tests as `browserhelpers` (tests/browser is on pytest's
pythonpath, as tests/app is for `apphelpers`)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Page, expect

# A chart drawn in our style (no template: not Streamlit's theme, which restyles and redraws anyway)
# whose labels, colour bar or legend needed more room than figures.drawing.style reserved: plotly grew the
# margin after drawing and drew the whole chart a second time, ~20-50 ms of Chromium on every rerun.
REDRAWN = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')]
  .filter((gd) => gd._fullLayout && !gd.layout.template)
  .map((gd) => {
    const m = gd._fullLayout.margin, s = gd._fullLayout._size;
    const grew = ['l', 'r', 't', 'b'].filter((k) => s[k] > m[k] + 0.5).map((k) => `${k} ${m[k]}->${s[k]}`);
    const key = (gd.closest('[class*="st-key-"]')?.className.match(/st-key-\\S+/) || ['?'])[0];
    return grew.length ? `${key}: ${grew.join(', ')}` : null;
  })
  .filter(Boolean)"""


def assert_drawn_once(page: Page) -> None:
    """No chart of ours needed a second drawing for room it lacked (see REDRAWN)."""
    assert page.evaluate(REDRAWN) == []


# Every visible plotly chart has drawn its SVG (a chart in a closed tab is not visible: skipped).
CHARTS_DRAWN = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
  .filter((chart) => chart.offsetParent !== null)
  .every((chart) => chart.querySelector('.js-plotly-plot .main-svg') !== null)"""


def settled(page: Page, timeout: float = 60_000) -> None:
    """Wait until the page has done what its script sent: Streamlit reports the script finished, no
    rerun is in progress (status widget), no chart is still a placeholder (plotly is a lazy chunk)
    and every visible chart is drawn. A condition, not a fixed pause: what the page will show is
    all there, so whatever markup would have run (a dialog, an image) has had its chance."""
    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(
        1, timeout=timeout
    )
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=timeout)
    placeholders = page.locator('[data-testid="stMain"] [data-testid="stSkeleton"]')
    expect(placeholders).to_have_count(0, timeout=timeout)
    page.wait_for_function(CHARTS_DRAWN, timeout=timeout)


LOCAL = ("data:", "blob:", "about:")


def outside_requests(page: Page, app_url: str) -> list[str]:
    """Every request ``page`` makes from now on to anywhere but the app's own server, as it is made: a
    lecture hall may have no internet. The favicon, icons and fonts are asked for after the script's
    run, so a test reads the list after its page has settled and drawn."""
    origin = urlsplit(app_url).netloc
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(LOCAL) or urlsplit(r.url).netloc == origin
            else outside.append(r.url))
    return outside


# -- the README's screenshots ----------------------------------------------------------------------

SHOTS = Path(__file__).resolve().parents[2] / "assets" / "screenshots"

# The texts of the page as a visitor reads them: text nodes inside the viewport, and the placeholders
# of empty boxes (a textarea's placeholder is no text node, and it is what a screenshot shows).
SCREEN_TEXTS = """() => {
  const out = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode, text = node.textContent.trim();
    if (!text) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    const b = range.getBoundingClientRect();
    const inside = b.bottom > 0 && b.top < innerHeight && b.right > 0 && b.left < innerWidth;
    if (b.width > 0 && inside) out.push(text);
  }
  for (const el of document.querySelectorAll('[placeholder]'))
    if (!el.value && el.offsetParent !== null) out.push(el.getAttribute('placeholder').trim());
  return out;
}"""


def screenshot(page: Page, name: str, *, absent: Sequence[str] = ()) -> Path:
    """Write the README picture ``assets/screenshots/<name>`` of ``page`` and record it
    (:func:`record_screenshot`)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path))
    record_screenshot(path, [page], absent=absent)
    return path


def record_screenshot(path: Path, pages: Sequence[Page], *, absent: Sequence[str] = ()) -> None:
    """After a test wrote the README picture ``path`` of ``pages``: none of the ``absent`` texts (what
    the app must not say there) is on screen, and ``<path>.json`` records which test wrote it, the PNG's
    SHA-256 and every text of the app (i18n, in any language) the picture shows, key by key.
    tests/repo/test_screenshots.py reads the record: a picture no test writes, one changed since, or one
    showing a text the app no longer has is stale."""
    from i18n import LANGS, placeholders, strings

    shown = [text for page in pages for text in page.evaluate(SCREEN_TEXTS)]
    found = [text for text in absent if any(text in s for s in shown)]
    assert not found, f"{path.name} shows what the app must not say there: {found}"
    on_screen = set(shown)
    texts = {lang: {key: text for key, text in sorted(strings(lang).items())
                    if not placeholders(text) and text.strip() in on_screen}
             for lang in LANGS}
    test = os.environ["PYTEST_CURRENT_TEST"].split(" ")[0].split("[")[0]  # file::function
    record = {"test": test, "png_sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "texts": texts}
    text = json.dumps(record, ensure_ascii=False, indent=1) + "\n"
    path.with_suffix(".json").write_text(text, encoding="utf-8")


def keys_ready(page: Page, timeout: float = 60_000) -> None:
    """The Lecture page's key queue listens (ui/components/step_keys.js): its script loads after the
    page is drawn, and a key pressed before that on a page opened cold is not queued."""
    page.wait_for_function("() => window.__glassboxStepKeys?.listener != null", timeout=timeout)
