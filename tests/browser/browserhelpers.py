"""Browser-test helpers, imported by the tests as `browserhelpers` (tests/browser is on pytest's
pythonpath, as tests/app is for `apphelpers`)."""

from __future__ import annotations

from playwright.sync_api import Page

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
