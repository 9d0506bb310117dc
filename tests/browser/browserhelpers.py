"""Browser-test helpers, imported by the tests as `browserhelpers` (tests/browser is on pytest's
pythonpath, as tests/app is for `apphelpers`)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

# A chart drawn in our style (no template: not Streamlit's theme, which restyles and redraws anyway)
# whose labels, colour bar or legend needed more room than figures.style reserved: plotly grew the
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
