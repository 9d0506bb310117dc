"""Injection in a real Chromium: payloads in the sentence, the target and every URL parameter of every
page. Nothing may run (no dialog), link, load an image, or become math or bold; the text stays visible.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlencode

import pytest
from browserhelpers import settled
from playwright.sync_api import Page, expect

from ui.page.nav import PAGES

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click](http://example.com)",
    "![x](http://example.com/x.png)",
    r"$\frac{a}{b}$",
    "$$x$$",
    "**bold**",
]
SENTENCE = " ".join(PAYLOADS)
PAGE_KEYS = {
    "pages/overview.py": [],
    "pages/tokenization.py": ["tok_kind", "tok_labels", "tok_merges", "tok_step", "tok_text"],
    "pages/embeddings.py": [],
    "pages/positional.py": ["pe_dims", "pe_max_pos", "pe_tab"],
    "pages/attention.py": ["attn_kind", "attn_layer", "attn_head", "attn_query", "attn_bar", "attn_view",
                           "attn_explore", "hv_kind", "nv_query"],
    "pages/masks.py": ["mask_kind", "mask_row", "mask_head", "mask_extra_1", "mask_extra_2"],
    "pages/model.py": ["model_layer", "model_token", "model_head", "model_topk", "model_temperature",
                       "model_view"],
    "pages/training.py": ["train_task", "train_steps", "train_minutes"],
    "pages/lecture.py": ["step"],
    "pages/interventions.py": ["iv_view", "patch_pair", "patch_clean", "patch_corrupt", "ablate",
                               "ablate_mode"],
}  # fmt: skip


def url_path(script: str) -> str:
    return "" if script == PAGES[0][0] else Path(script).stem


def wait_rendered(page: Page, title: str) -> None:
    # attached, not visible: the lecture page folds the sidebar away
    expect(page.get_by_test_id("stSidebarNav").get_by_role("link", name=title, exact=True)).to_be_attached(
        timeout=TIMEOUT
    )
    expect(page.get_by_text("Weights: ").first).to_be_visible(timeout=TIMEOUT)
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)


def assert_nothing_injected(page: Page, where: str) -> None:
    expect(page.get_by_test_id("stException")).to_have_count(0)
    assert page.locator('a[href*="example.com"]').count() == 0, where
    assert page.locator('img[src*="example.com"], img[src="x"]').count() == 0, where
    tex = page.locator(".katex annotation").all_text_contents()  # KaTeX keeps its TeX source here
    assert not [t for t in tex if r"\frac{a}{b}" in t or t.strip() == "x"], (where, tex)
    assert page.locator("strong, b").filter(has_text=re.compile(r"^\s*bold\s*$")).count() == 0, where
    assert page.locator("script:not([src])").filter(has_text="alert(1)").count() == 0, where
    assert page.evaluate("() => window.__injected === undefined"), where


@pytest.mark.parametrize(("script", "title"), [(p[0], p[1]) for p in PAGES])
def test_payloads_in_every_url_parameter_are_text(page: Page, app_url: str, script: str, title: str):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    query = {"sentence": SENTENCE, "target": "**bold** $$x$$", "d_model": PAYLOADS[0], "norm": PAYLOADS[2]}
    for i, key in enumerate(PAGE_KEYS[script]):
        query[key] = PAYLOADS[(i + 1) % len(PAYLOADS)]
    if script == "pages/tokenization.py":
        query["tok_source"] = "pasted text"
    page.goto(f"{app_url}/{url_path(script)}?{urlencode(query)}")
    wait_rendered(page, title)
    settled(page, TIMEOUT)  # the script has finished and every chart is drawn: an injection has run by now
    assert dialogs == [], script
    assert_nothing_injected(page, script)
    # the tampered values are shown, as text, in the warnings
    expect(page.get_by_text("Ignored d_model=").first).to_be_visible()
    expect(page.locator("code").filter(has_text=PAYLOADS[0]).first).to_be_visible()
    expect(page.locator("code").filter(has_text=PAYLOADS[2]).first).to_be_visible()
    # and the sentence, verbatim, in its text box
    expect(page.locator(".st-key-sentence textarea")).to_have_value(SENTENCE)
    if script == "pages/overview.py":
        expect(page.get_by_test_id("stCode").filter(has_text=SENTENCE).first).to_be_visible()


@pytest.mark.parametrize("payload", PAYLOADS)
def test_typed_payload_is_text_on_the_overview_and_in_the_heatmap(page: Page, app_url: str, payload: str):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{app_url}/attention?weights=random")  # byte-level BPE: "<" is a token, not [UNK]
    wait_rendered(page, "Attention")
    box = page.locator(".st-key-sentence textarea")
    box.fill(payload)
    box.press("Control+Enter")
    expect(page).to_have_url(re.compile("sentence="), timeout=TIMEOUT)
    wait_rendered(page, "Attention")
    settled(page, TIMEOUT)
    assert dialogs == []
    assert_nothing_injected(page, payload)
    ticks = " ".join(page.locator('[data-testid="stPlotlyChart"] .xtick text').all_text_contents())
    # plotly draws the escaped label as text: the characters of the payload, not markup
    assert "<" not in payload or "<" in ticks, ticks
