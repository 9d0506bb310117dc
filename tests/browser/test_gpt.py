"""The small GPT in a real Chromium (issue 30): every page with weights=gpt by its URL, in English and
中文, draws without an exception and names the weights; the README's screenshot of an induction head on
a sequence repeated twice, the head chosen by its measured prefix-matching score.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest
import torch
from browserhelpers import screenshot, settled
from playwright.sync_api import Page, expect

from core.teaching.induction import repeated_text
from core.tracing.pipeline import PipelineSettings, load_pipeline
from core.training.language import induction_probe
from i18n import t
from ui.page.nav import PAGES

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60_000
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'
BADGE = {"en": "small GPT trained here", "zh": "在这里训练的小 GPT"}


def _settled(page: Page, lang: str) -> None:
    """The page has finished drawing (browserhelpers.settled), with no exception, naming the small GPT."""
    settled(page, TIMEOUT)
    expect(page.get_by_test_id("stException")).to_have_count(0)
    expect(page.get_by_text(BADGE[lang]).first).to_be_visible(timeout=TIMEOUT)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("script", [p[0] for p in PAGES if p[0] != "pages/lecture.py"])
def test_every_page_with_the_small_gpt(page: Page, app_url: str, script: str, lang: str):
    stem = "" if script == PAGES[0][0] else Path(script).stem
    page.goto(f"{app_url}/{stem}?weights=gpt&lang={lang}")
    _settled(page, lang)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_induction_head_screenshot(page: Page, app_url: str, lang: str):
    """The strongest induction head (by the probe the Attention page shows) on a repeated sequence:
    the stripe one below the diagonal of the second copy. English for the README, 中文 to look at."""
    pipe = load_pipeline(PipelineSettings(weights="gpt"))
    probe = induction_probe(pipe.model)
    pm = torch.tensor(probe["prefix_matching"])
    layer, head = divmod(int(pm.argmax()), pm.size(1))
    sentence = repeated_text(pipe.src_encode, pipe.src_labels, length=16, seed=3)
    assert sentence
    page.goto(f"{app_url}/attention?weights=gpt&lang={lang}&sentence={quote(sentence)}"
              f"&attn_layer={layer + 1}&attn_head={head + 1}")
    _settled(page, lang)
    expect(page.get_by_role("heading", name=t("induction.title", lang))).to_be_visible(timeout=TIMEOUT)
    title = t("attention.all_heads.title", lang, h=pm.size(1), layer=layer + 1)
    heading = page.get_by_role("heading", name=title)
    expect(heading).to_be_visible(timeout=TIMEOUT)
    role = t("induction.role.induction", lang)
    expect(page.locator(CHART).filter(has_text=role).first).to_be_visible(timeout=TIMEOUT)
    page.wait_for_timeout(1500)
    heading.evaluate("h => h.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(800)
    screenshot(page, "induction_head.png" if lang == "en" else "induction_head_zh.png")
