"""The sidebar drives the charts in a real Chromium: a new sentence, a slider step, a cold URL.

Uses conftest.py's server (``app_url``) and Chromium (a missing browser fails, never skips). Mostly
on the Attention page, whose "All h heads" chart is one heatmap subplot per head, tokens on its axes;
the last test switches the Full model page's tabs.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from playwright.sync_api import Locator, Page, expect

pytestmark = pytest.mark.browser

TIMEOUT = 60_000  # the first session imports torch; the machine may be shared
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'


def settled(page: Page) -> None:
    """The script has finished and no chart is still a placeholder (plotly is a lazy chunk)."""
    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(
        1, timeout=TIMEOUT
    )
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)
    placeholders = page.locator('[data-testid="stMain"] [data-testid="stSkeleton"]')
    expect(placeholders).to_have_count(0, timeout=TIMEOUT)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def heads_chart(page: Page) -> Locator:
    """The "All h heads of layer 1" chart: its selected head is annotated "(step by step)"."""
    chart = page.locator(CHART).filter(has_text="(step by step)")
    expect(chart).to_have_count(1, timeout=TIMEOUT)
    return chart


def head_subplots(page: Page) -> Locator:
    return heads_chart(page).locator(".cartesianlayer .subplot")


def test_a_new_sentence_updates_the_attention_heatmaps(page: Page, app_url: str):
    page.goto(f"{app_url}/attention?weights=random")
    settled(page)
    ticks = heads_chart(page).locator(".xtick text")
    expect(ticks.filter(has_text="注意力")).to_have_count(1, timeout=TIMEOUT)  # the default sentence

    box = page.locator(".st-key-sentence textarea")
    box.fill("猫 你好 dog")
    box.press("Control+Enter")
    # 你 and 好 are tokens of the vocabulary; 猫 is not, so it is shown as its UTF-8 bytes ⟨e7⟩⟨8c⟩⟨ab⟩
    expect(ticks.filter(has_text="你")).to_have_count(1, timeout=TIMEOUT)
    expect(ticks.filter(has_text="⟨e7⟩")).to_have_count(1)
    expect(ticks.filter(has_text="注意力")).to_have_count(0)  # no stale tick labels left
    expect(heads_chart(page).locator(".ytick text").filter(has_text="你")).to_have_count(1)
    expect(page).to_have_url(re.compile(r"sentence="))
    settled(page)


def test_the_heads_slider_changes_the_number_of_head_heatmaps(page: Page, app_url: str):
    page.goto(f"{app_url}/attention?weights=random")  # d_model=64, 4 heads; choices 1, 2, 4, 8, 16
    settled(page)
    expect(head_subplots(page)).to_have_count(4, timeout=TIMEOUT)

    slider = page.locator(".st-key-num_heads input[type=range]")
    slider.focus()
    slider.press("ArrowRight")
    expect(page.locator(".st-key-num_heads").get_by_test_id("stSliderThumbValue")).to_have_text("8")
    expect(head_subplots(page)).to_have_count(8, timeout=TIMEOUT)
    expect(heads_chart(page)).to_contain_text("head 8")
    expect(page).to_have_url(re.compile(r"num_heads=8"), timeout=TIMEOUT)
    settled(page)

    slider.focus()
    slider.press("ArrowLeft")
    slider.press("ArrowLeft")  # 8 → 4 → 2
    expect(head_subplots(page)).to_have_count(2, timeout=TIMEOUT)
    expect(page).to_have_url(re.compile(r"num_heads=2"), timeout=TIMEOUT)
    settled(page)


def test_a_cold_url_with_settings_shows_that_state(page: Page, app_url: str):
    page.goto(f"{app_url}/attention?weights=random&d_model=128&num_heads=8&sentence={quote('你好')}")
    settled(page)
    expect(page.locator(".st-key-d_model input")).to_have_value("128", timeout=TIMEOUT)
    expect(page.locator(".st-key-num_heads").get_by_test_id("stSliderThumbValue")).to_have_text("8")
    expect(page.locator(".st-key-sentence textarea")).to_have_value("你好")
    expect(head_subplots(page)).to_have_count(8, timeout=TIMEOUT)
    expect(heads_chart(page).locator(".xtick text")).to_have_text(["你", "好"])
    expect(page.get_by_text("All 8 heads of layer 1")).to_be_visible()


def test_the_step_by_step_section_opens_on_demand_and_keeps_its_state_in_the_url(page: Page, app_url: str):
    page.goto(f"{app_url}/attention?weights=random")
    settled(page)
    steps = page.locator('[class*="st-key-attn_step_"] [data-testid="stPlotlyChart"]')
    expect(steps).to_have_count(0)
    page.locator(".st-key-attn_steps summary").click()
    expect(steps).to_have_count(15, timeout=TIMEOUT)  # X, W_Q … W_O, output
    expect(page).to_have_url(re.compile(r"attn_steps=true"), timeout=TIMEOUT)
    settled(page)
    page.goto(f"{app_url}/attention?weights=random&attn_steps=true")  # the shared link opens it again
    settled(page)
    expect(steps).to_have_count(15, timeout=TIMEOUT)  # X, W_Q … W_O, output


# In the page, every animation frame until the page is idle again: how many stale elements were seen,
# and the lowest opacity any of them had (Streamlit's own style fades them to 0.33 after 0.5 s).
WATCH_STALE = """() => { window.__staleWatch = new Promise(resolve => {
  let seen = 0, lowest = 1, frames = 0, running = false;
  const app = document.querySelector('[data-testid="stApp"]');
  const tick = () => {
    frames += 1;
    const stale = document.querySelectorAll('[data-testid="stElementContainer"][data-stale="true"]');
    seen = Math.max(seen, stale.length);
    for (const el of stale) lowest = Math.min(lowest, parseFloat(getComputedStyle(el).opacity));
    running = running || app.dataset.testScriptState === "running";
    const idle = running && app.dataset.testScriptState === "notRunning" && stale.length === 0;
    if (idle) resolve({seen, lowest, frames});
    else if (frames > 1800) resolve({seen, lowest, frames, timedOut: true});
    else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
}); }"""


def test_a_rerun_keeps_the_old_page_steady_until_it_is_redrawn(page: Page, app_url: str):
    """While a new model is built (d_model 512, 6 layers: well over a second of frames here) the old
    charts stay fully opaque: no fade-out and back on the projector (ui.page.sidebar.STEADY_RERUN_CSS)."""
    page.goto(f"{app_url}/attention?weights=random&d_model=512&num_heads=8&num_layers=6&seed=3")
    settled(page)
    page.evaluate(WATCH_STALE)  # starts watching before the change (returns at once)
    box = page.locator(".st-key-seed input")
    box.fill("4")
    box.press("Enter")
    result = page.evaluate("() => window.__staleWatch")
    assert not result.get("timedOut"), result
    assert result["seen"] > 10, result  # Streamlit did mark the old page stale during the rerun...
    assert result["lowest"] == 1, result  # ...and none of it faded
    settled(page)


def test_the_full_model_page_shows_one_section_at_a_time_and_keeps_it_in_the_url(page: Page, app_url: str):
    from i18n import t

    def charts(key: str) -> Locator:
        return page.locator(f".st-key-{key} .js-plotly-plot")

    page.goto(f"{app_url}/model?weights=random")
    settled(page)
    expect(charts("model_residual")).to_have_count(1, timeout=TIMEOUT)  # the first tab: 1–2
    expect(page.locator(CHART)).to_have_count(3)  # residual, FFN, units off
    page.get_by_role("tab", name=t("model.tab.decoding", "en")).click()
    expect(charts("model_step_cross")).to_have_count(1, timeout=TIMEOUT)  # decoded when opened
    expect(charts("model_residual")).to_have_count(0)
    expect(page).to_have_url(re.compile(r"model_view=decoding"), timeout=TIMEOUT)  # its id, any language
    settled(page)
    expect(page.locator(CHART)).to_have_count(2)  # this step's probabilities and cross-attention

    stream = quote(t("model.tab.stream", "zh"))
    page.goto(f"{app_url}/model?weights=random&lang=zh&model_view={stream}")  # a shared link, in 中文
    settled(page)
    expect(charts("model_stream")).to_have_count(1, timeout=TIMEOUT)
    expect(page.locator(CHART)).to_have_count(1)
    opened = page.get_by_role("tab", name=t("model.tab.stream", "zh"))
    expect(opened).to_have_attribute("aria-selected", "true")

    page.goto(f"{app_url}/model?weights=random&model_decode=true")  # a link made before the tabs
    settled(page)
    expect(charts("model_step_cross")).to_have_count(1, timeout=TIMEOUT)
    expect(page).not_to_have_url(re.compile(r"model_decode"), timeout=TIMEOUT)
