"""Lecture mode in a real Chromium: the keys a clicker sends, the URL per step, the folded sidebar,
the browser-made downloads (SVG, PNG) and the CSV; and the README screenshot (1280×720)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browserhelpers import REDRAWN, keys_ready, outside_requests, screenshot
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60_000  # the first session imports torch and builds the model
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'


def wait_step(page: Page, step: int, total: int = 13) -> None:
    """Step ``step`` is on screen, its URL says so, its chart is drawn and the script has finished."""
    expect(page.locator(".st-key-lecture_slide h2")).to_have_text(
        re.compile(rf"^{step} / {total} · "), timeout=TIMEOUT
    )
    expect(page).to_have_url(re.compile(rf"[?&]step={step}(&|$)"), timeout=TIMEOUT)
    expect(page.locator(CHART)).to_have_count(1, timeout=TIMEOUT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    keys_ready(page)


def test_clicker_keys_move_between_steps_and_the_url_follows(page: Page, app_url: str):
    page.goto(f"{app_url}/lecture?weights=random")
    wait_step(page, 1)
    page.keyboard.press("PageDown")
    wait_step(page, 2)
    assert "weights=random" in page.url  # the sidebar's parameters stay beside step=
    page.keyboard.press("PageUp")
    wait_step(page, 1)
    page.keyboard.press("ArrowRight")
    wait_step(page, 2)
    page.keyboard.press("Space")
    wait_step(page, 3)
    page.keyboard.press("ArrowLeft")
    wait_step(page, 2)
    # the buttons click too; Space on the focused button moves once, not twice (button + shortcut)
    page.locator(".st-key-lecture_next button").click()
    wait_step(page, 3)
    page.keyboard.press("Space")
    wait_step(page, 4)
    page.wait_for_timeout(1500)
    wait_step(page, 4)


def test_every_slide_is_drawn_once(page: Page, app_url: str):
    """The slides' figures get the presenter's larger fonts and their margins reserved again for them
    (figures.drawing.presenter): no slide needs a second drawing (step 3's embedding table did until its
    dimension axis got fixed ticks that never turn upright). Nothing is fetched from outside the server."""
    outside = outside_requests(page, app_url)
    page.goto(f"{app_url}/lecture?step=1")
    redrawn = {}
    for step in range(1, 13):
        if step > 1:
            page.keyboard.press("PageDown")
        wait_step(page, step)
        page.wait_for_timeout(300)
        if grew := page.evaluate(REDRAWN):
            redrawn[step] = grew
    assert redrawn == {}
    assert outside == []


def test_sidebar_is_folded_away_and_the_slide_fills_the_screen(page: Page, app_url: str):
    page.goto(f"{app_url}/lecture?weights=random&step=5")
    wait_step(page, 5)
    expect(page.get_by_test_id("stSidebar")).not_to_be_in_viewport()
    expect(page.locator(CHART)).to_be_in_viewport(ratio=1)  # the whole figure, no scrolling
    slide = page.locator(".st-key-lecture_slide").bounding_box()
    assert slide is not None and slide["x"] < 120  # not pushed right by a sidebar
    text = page.locator(".st-key-lecture_text p").first
    assert float(text.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")) >= 20


def test_downloads_csv_svg_and_png(page: Page, app_url: str, tmp_path: Path):
    page.goto(f"{app_url}/lecture?weights=random&step=5")
    wait_step(page, 5)
    found = {}
    for label in ("Data (CSV)", "Image (SVG)", "Image (PNG, 2×)"):
        button = page.get_by_role("button", name=label, exact=True)
        if not button.is_visible():  # the image buttons click the chart's toolbar: the popover closes
            page.get_by_role("button", name="Download", exact=True).click()
        with page.expect_download(timeout=TIMEOUT) as info:
            button.click()
        download = info.value
        path = tmp_path / download.suggested_filename
        download.save_as(path)
        found[path.suffix] = (download.suggested_filename, path.read_bytes())
    name, csv_data = found[".csv"]
    assert name == "lecture-05-encoder.csv"
    assert csv_data.startswith(b"\xef\xbb\xbftrace,type,row,column,x,y,z,text")
    assert "注意力".encode() in csv_data  # the default sentence's first token
    name, svg = found[".svg"]
    assert name == "lecture-05-encoder.svg" and svg.startswith(b"<svg") and "注意力".encode() in svg
    name, png = found[".png"]
    assert name == "lecture-05-encoder.png" and png.startswith(b"\x89PNG")
    width = int.from_bytes(png[16:20], "big")
    chart_width = page.locator(CHART).bounding_box()["width"]
    assert width == pytest.approx(2 * chart_width, abs=4)  # 2× scale: sharp on a slide
    wait_step(page, 5)  # a download does not rerun the page or move the lecture


def test_lecture_screenshot(page: Page, app_url: str):
    """The README's picture: the default (trained 汉字→拼音) model's greedy decoding slide."""
    page.goto(f"{app_url}/lecture?step=12")
    wait_step(page, 12)
    expect(page.get_by_text("Weights: trained 汉字→拼音").first).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(1000)  # let the chart finish drawing
    screenshot(page, "lecture.png")
