"""Every page in a real Chromium: renders without an exception, by cold URL and by the sidebar, and
fetches nothing from outside its own server (the favicon included: Streamlit takes a Material icon's
from fonts.gstatic.com unless the page sets its own).

The tests run in file order on one server. The first request on a fresh server is a cold page URL
on purpose: it is the case where Streamlit runs the page without app.py (``pages/`` folder mode).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from browserhelpers import REDRAWN, assert_drawn_once, outside_requests, screenshot
from playwright.sync_api import Page, expect

from ui.page.nav import PAGES

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60_000  # the first session imports torch and builds the vocabulary
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'
# The lecture page hides the sidebar and the page title (presenter view): tests/browser/test_lecture.py
BROWSED = [p for p in PAGES if p[0] != "pages/lecture.py"]


def url_path(script: str) -> str:
    return "" if script == PAGES[0][0] else Path(script).stem


def wait_rendered(page: Page, title: str, badge: str = "Weights: ") -> None:
    """The page's script has finished. ``title`` is the nav title; a page's h1 may say more;
    ``badge`` starts the weights badge (in 中文: "权重：")."""
    expect(page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True)).to_be_visible(
        timeout=TIMEOUT
    )
    expect(page.locator("h1").first).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text(badge).first).to_be_visible(timeout=TIMEOUT)
    # a rerun in progress shows the status widget; wait until the script has finished
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)


def assert_no_exception(page: Page) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)


# An equation wider than its column is cut at the column's edge (KaTeX's box scrolls sideways, and
# the scrollbar is hidden until hovered): on a projector the end of the formula is simply missing.
# A couple of pixels are KaTeX's rounding.
CUT_EQUATIONS = """() => [...document.querySelectorAll('.katex-display')]
  .filter((el) => el.scrollWidth > el.clientWidth + 3)
  .map((el) => (el.querySelector('annotation') || el).textContent.slice(0, 80))"""

def assert_no_cut_equations(page: Page) -> None:
    page.wait_for_timeout(300)  # KaTeX typesets after the element is mounted
    assert page.evaluate(CUT_EQUATIONS) == []


def test_cold_url_on_a_fresh_server_shows_the_url_state(page: Page, app_url: str):
    page.goto(f"{app_url}/attention?weights=random&d_model=128&num_heads=8")
    wait_rendered(page, "Attention")
    assert_no_exception(page)
    expect(page.locator(".st-key-d_model input")).to_have_value("128", timeout=TIMEOUT)
    expect(page.locator(".st-key-num_heads")).to_contain_text("8")
    assert "d_model=128" in page.url and "num_heads=8" in page.url


@pytest.mark.parametrize(("script", "title"), [(p[0], p[1]) for p in BROWSED])
def test_every_page_by_cold_url(page: Page, app_url: str, script: str, title: str):
    """The default view (trained checkpoint, d_model 128) as a visitor first sees it: the README shots."""
    outside = outside_requests(page, app_url)
    page.goto(f"{app_url}/{url_path(script)}")
    wait_rendered(page, title)
    assert_no_exception(page)
    expect(page.get_by_text("Weights: trained 汉字→拼音").first).to_be_visible(timeout=TIMEOUT)
    expect(page.locator(".st-key-d_model input")).to_have_value("128", timeout=TIMEOUT)
    expect(page.locator(f"{CHART} .main-svg").first).to_be_visible(timeout=TIMEOUT)
    assert_no_cut_equations(page)
    page.wait_for_timeout(1000)  # let charts finish drawing before the screenshot
    assert_drawn_once(page)
    # The README's picture of the page: its first figure at the top of the screen (the head view on
    # the Attention page), a little of what leads to it above. The page's top is title and text only.
    first = page.locator("iframe").first if script == "pages/attention.py" else page.locator(CHART).first
    first.evaluate("el => { el.style.scrollMarginTop = '70px'; el.scrollIntoView({block: 'start'}); }")
    page.wait_for_timeout(500)
    screenshot(page, f"{Path(script).stem}.png")
    assert outside == []


@pytest.mark.parametrize(("script", "title"), [(p[0], p[1]) for p in BROWSED])
def test_every_page_in_chinese_by_cold_url(page: Page, app_url: str, script: str, title: str):
    """中文 changes every text's width: equations and charts must still fit (at 1280 × 720)."""
    from i18n import t

    page.goto(f"{app_url}/{url_path(script)}?lang=zh")
    wait_rendered(page, t(f"nav.{Path(script).stem}.title", "zh"), badge="权重：")
    assert_no_exception(page)
    expect(page.locator(f"{CHART} .main-svg").first).to_be_visible(timeout=TIMEOUT)
    assert_no_cut_equations(page)
    assert_drawn_once(page)


def _tab_views() -> list[tuple[str, str]]:
    """(page, query) opening each tab but the first, by its id in the URL."""
    views = [("positional", f"pe_tab={s}") for s in ("learned", "rope", "alibi")]
    views += [("attention", f"attn_view={v}") for v in ("grid", "query")]
    views += [("attention", "attn_explore=neuron_view")]
    views += [("model", f"model_view={v}") for v in ("stream", "output", "decoding")]
    views += [("interventions", "iv_view=lens")]
    return views


def test_every_tab_draws_its_charts_once(page: Page, app_url: str):
    """The tabs a cold URL does not open (the first tab's charts are checked above), by URL: no chart
    needs a second drawing. (At 512/8/6 random the same held on 2026-11-25; not repeated here, for
    the suite's time: the sizes change the numbers, not the labels.)"""
    from i18n import t

    redrawn = {}
    for path, query in _tab_views():
        page.goto(f"{app_url}/{path}?{query}")
        wait_rendered(page, t(f"nav.{path}.title"))
        assert_no_exception(page)
        expect(page.locator(f"{CHART} .main-svg").first).to_be_visible(timeout=TIMEOUT)
        page.wait_for_timeout(500)
        if grew := page.evaluate(REDRAWN):
            redrawn[query] = grew
    assert redrawn == {}


def test_overview_chart_shows_the_sizes(page: Page, app_url: str):
    page.goto(f"{app_url}/?weights=random&d_model=256")
    wait_rendered(page, "Overview")
    chart = page.locator(CHART)
    expect(chart).to_have_count(1, timeout=TIMEOUT)
    texts = chart.evaluate("el => el.layout.annotations.map(a => a.text).join(' ')")
    assert "d_model = 256" in texts and ", 256)" in texts


def test_sidebar_navigation_keeps_the_settings(page: Page, app_url: str):
    page.goto(f"{app_url}/?weights=random&d_model=32&num_layers=3")
    wait_rendered(page, "Overview")
    for _script, title, *_ in BROWSED[1:] + BROWSED[:1]:
        page.get_by_test_id("stSidebarNav").get_by_role("link", name=title).click()
        wait_rendered(page, title)
        assert_no_exception(page)
        expect(page.locator(".st-key-d_model input")).to_have_value("32", timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"d_model=32"), timeout=TIMEOUT)
        expect(page).to_have_url(re.compile(r"num_layers=3"))


def test_script_in_the_sentence_is_text_not_code(page: Page, app_url: str):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(app_url)
    wait_rendered(page, "Overview")
    box = page.locator(".st-key-sentence textarea")
    payload = "<script>alert(1)</script><img src=x onerror=alert(2)><b>bold</b>"
    box.fill(payload)
    box.press("Control+Enter")
    expect(page.get_by_test_id("stCode").filter(has_text=payload).first).to_be_visible(timeout=TIMEOUT)
    wait_rendered(page, "Overview")
    page.wait_for_timeout(500)
    assert dialogs == []
    assert_no_exception(page)
    assert "sentence=" in page.url


def test_tampered_url_shows_a_message_not_a_traceback(page: Page, app_url: str):
    page.goto(f"{app_url}/masks?d_model=abc&num_heads=0&norm=foo&seed=-1e99")
    wait_rendered(page, "Masks")
    assert_no_exception(page)
    for key in ("d_model", "num_heads", "norm", "seed"):
        expect(page.get_by_text(f"Ignored {key}=")).to_be_visible()
    assert "d_model=abc" not in page.url


def test_cross_attention_of_a_chinese_phrase_screenshot(page: Page, app_url: str):
    """The README's picture of the alignment: each pinyin syllable attends to its character."""
    sentence = quote("音乐很好听")  # read right by the model: yīn yuè hěn hǎo tīng
    page.goto(f"{app_url}/attention?sentence={sentence}&attn_kind=Decoder+cross-attention&attn_layer=2")
    wait_rendered(page, "Attention")
    assert_no_exception(page)
    heading = page.get_by_role("heading", name="All 4 heads of layer 2")
    expect(page.locator(CHART).first).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(1500)
    heading.evaluate("h => h.scrollIntoView({block: 'start'})")  # the heading at the top: all heads in view
    page.wait_for_timeout(800)
    screenshot(page, "cross_attention_zh.png")


def test_chinese_interface_screenshot(page: Page, app_url: str):
    """The 中文 UI (README): sidebar, title, explanations and chart titles in Chinese, by URL."""
    from i18n import t

    sentence = quote("音乐很好听")
    page.goto(f"{app_url}/attention?lang=zh&sentence={sentence}")
    title = t("nav.attention.title", "zh")
    nav = page.get_by_test_id("stSidebarNav")
    expect(nav.get_by_role("link", name=title, exact=True)).to_be_visible(timeout=TIMEOUT)
    expect(page.locator("h1").first).to_have_text(re.compile(title), timeout=TIMEOUT)
    expect(page.get_by_text("权重：").first).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)
    assert_no_exception(page)
    expect(page.locator(CHART).first).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text(t("sidebar.sentence", "zh"))).to_be_visible()
    assert "lang=zh" in page.url
    page.wait_for_timeout(1500)
    screenshot(page, "zh_ui.png")
