"""Interventions in a real browser (issue 41): a head switched off beside its picker reaches the URL and
every page's badge, patching 重庆 into 重要 draws its heatmaps in both languages (the README's pictures),
every layer's guess draws, and the Overview puts the intact answer beside the changed one."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from browserhelpers import screenshot, settled
from playwright.sync_api import Page, expect

from i18n import t

TIMEOUT = 60_000
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'
pytestmark = pytest.mark.browser


def test_a_head_switched_off_on_the_attention_page_is_off_on_every_page(page: Page, app_url: str):
    page.goto(f"{app_url}/attention?weights=gpt&attn_layer=2&attn_head=1")
    settled(page)
    label = t("interventions.switch.head", "en", layer=2, head=1)
    page.locator(".st-key-attn_ablate").get_by_text(label).click()
    expect(page.locator(".st-key-ablation_badge")).to_contain_text("2.1", timeout=TIMEOUT)
    assert "ablate=dec.2.1" in page.url
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Overview", exact=True).click()
    settled(page)
    expect(page.locator(".st-key-ablation_badge")).to_contain_text("2.1", timeout=TIMEOUT)
    expect(page.locator(".st-key-ablation_compare")).to_contain_text(t("interventions.compare.intact", "en"))
    page.locator(".st-key-ablate_clear button").click()
    expect(page.locator(".st-key-ablation_badge")).to_have_count(0, timeout=TIMEOUT)
    assert "ablate=" not in page.url


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_patching_chongqing_into_zhongyao_draws_both_grids(page: Page, app_url: str, lang: str):
    """The README's 重庆/重要 heatmaps: encoder layer 1's head 2 carries 庆/要 to 重 (the cell reads
    0.75 and is the darkest of its grid), in English and 中文."""
    page.goto(f"{app_url}/interventions?iv_view=patch&lang={lang}")
    settled(page)
    charts = page.locator(CHART)
    expect(charts).to_have_count(2, timeout=TIMEOUT)
    heads = charts.first
    expect(heads.locator(".main-svg").first).to_be_visible(timeout=TIMEOUT)
    expect(heads).to_contain_text("0.75")  # the cell's number, written for the back of the room
    expect(heads).to_contain_text(t("interventions.row.enc", lang, layer=1))
    expect(page.get_by_text(t("interventions.patch.heads.title", lang))).to_be_visible()
    page.get_by_text(t("interventions.patch.heads.title", lang)).evaluate(
        "el => { el.style.scrollMarginTop = '70px'; el.scrollIntoView({block: 'start'}); }"
    )
    page.wait_for_timeout(800)
    screenshot(page, f"patching_{lang}.png")


def test_an_unpatchable_pair_is_said_in_the_browser(page: Page, app_url: str):
    clean, corrupt = quote("the cat sat"), quote("the dog sat down there")
    page.goto(f"{app_url}/interventions?weights=random&iv_view=patch&patch_pair=own"
              f"&patch_clean={clean}&patch_corrupt={corrupt}")
    settled(page)
    expect(page.get_by_test_id("stAlert").filter(has_text="5 and 9")).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(page.locator(CHART)).to_have_count(0)


def test_every_layers_guess_draws_a_row_per_position(page: Page, app_url: str):
    page.goto(f"{app_url}/interventions?weights=gpt&iv_view=lens&lang=zh")
    settled(page)
    chart = page.locator(CHART).first
    expect(chart.locator(".main-svg").first).to_be_visible(timeout=TIMEOUT)
    expect(chart).to_contain_text(t("interventions.lens.row", "zh", layer=2))
    expect(page.get_by_text(t("interventions.lens.norm.LayerNorm", "zh", norm="LayerNorm"))).to_be_visible()
