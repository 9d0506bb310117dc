"""Model folders in a real Chromium (issue 29): a server started with GLASSBOX_MODELS naming tiny
random GPT-2, Qwen2 and BERT folders (tests/modelfolders.py); every page with a decoder-only model by
its URL, in English and 中文, draws without an exception; the README's screenshot of a decoder-only
model's attention.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
from browserhelpers import screenshot
from playwright.sync_api import Page, expect
from serverprocess import Server, free_port, models_env, streamlit_command

from i18n import t
from tests.modelfolders import make_model_folders
from ui.page.nav import PAGES

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60_000
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'
# what the sidebar says of an encoder-decoder model's inputs: untrue of a decoder-only one
ONE_STACK_NEVER = ("sidebar.sentence", "sidebar.target.placeholder")


@pytest.fixture(scope="module")
def models_url(tmp_path_factory):
    """A server of its own whose GLASSBOX_MODELS names the tiny folders."""
    root = make_model_folders(tmp_path_factory.mktemp("models"))
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "streamlit.log"
    server = Server(streamlit_command(port), port, log, env=models_env(root))
    try:
        yield server.url
    finally:
        server.stop()


def _settled(page: Page, badge: str) -> None:
    expect(page.locator("h1").first).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_text(badge).first).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)
    expect(page.get_by_test_id("stException")).to_have_count(0)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("script", [p[0] for p in PAGES if p[0] != "pages/lecture.py"])
def test_every_page_with_a_decoder_only_model(page: Page, models_url: str, script: str, lang: str):
    stem = "" if script == PAGES[0][0] else Path(script).stem
    page.goto(f"{models_url}/{stem}?weights=hf:qwen2-tiny&lang={lang}")
    _settled(page, "qwen2-tiny")
    expect(page.get_by_text("model folder" if lang == "en" else "模型文件夹").first).to_be_visible()


def test_decoder_only_attention_screenshot(page: Page, models_url: str):
    """The README's picture: a decoder-only model's causal self-attention, every head, with the
    grouped-query attention said as it is (4 query heads sharing 2 key/value heads), and every head's
    title above its own heatmap."""
    sentence = quote("The cat sat on the mat. The cat sat on the mat.")
    page.goto(f"{models_url}/attention?weights=hf:qwen2-tiny&sentence={sentence}")
    _settled(page, "qwen2-tiny")
    expect(page.get_by_text("share key/value head").first).to_be_visible(timeout=TIMEOUT)
    expect(page.locator(CHART).first).to_be_visible(timeout=TIMEOUT)
    heading = page.get_by_role("heading", name="All 4 heads of layer 1")
    expect(heading).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(1500)
    heading.evaluate("h => h.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    # a one-stack model has no encoder input, no decoder input and no greedy output to feed one
    screenshot(page, "decoder_attention.png", absent=[t(key, "en") for key in ONE_STACK_NEVER])
