"""The head view in a real Chromium: hovering a token isolates its lines, heads toggle, tokens stay text.

Uses conftest.py's server (``app_url``) and Chromium. The view is a small offline HTML/JS component
in an iframe (ui/components/head_view.html); its data is the JSON in ``#hv-data``, so every check
compares what is drawn with the data the page sent.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from browserhelpers import screenshot
from playwright.sync_api import FrameLocator, Page, expect

from i18n import t

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60_000  # the first session imports torch; the machine may be shared
FRAME = f'iframe[title="{t("attention.hv.title", "en")}"]'


def settled(page: Page) -> None:
    expect(page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]')).to_have_count(
        1, timeout=TIMEOUT
    )
    expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=TIMEOUT)
    expect(page.get_by_test_id("stException")).to_have_count(0)


def head_view(page: Page) -> FrameLocator:
    expect(page.locator(FRAME)).to_have_count(1, timeout=TIMEOUT)
    frame = page.frame_locator(FRAME)
    expect(frame.locator("#lines line").first).to_be_attached(timeout=TIMEOUT)
    return frame


def js(frame: FrameLocator, script: str, arg=None):
    """Run ``script`` (a function of (body, arg)) inside the component's document."""
    return frame.locator("body").evaluate(script, arg)


DATA = "b => JSON.parse(document.getElementById('hv-data').textContent)"
# what is on screen: every rendered line with its head, query, key, weight and opacity
SHOWN = """b => {
  const shown = e => { for (let n = e; n && n.nodeType === 1; n = n.parentNode)
                         if (getComputedStyle(n).display === 'none') return false;
                       return true; };
  return Array.from(document.querySelectorAll('line')).filter(shown).map(l =>
    [+l.dataset.head, +l.dataset.q, +l.dataset.k, +l.dataset.w, +l.getAttribute('stroke-opacity')]);
}"""


def lines_of(data: dict, *, head: int | None = None, q: int | None = None, k: int | None = None) -> set:
    out = set()
    for j, h in enumerate(data["heads"]):
        for qq, kk, w in zip(h["q"], h["k"], h["w"], strict=True):
            if (head is None or j == head) and (q is None or qq == q) and (k is None or kk == k):
                out.add((j, qq, kk, w))
    return out


def test_hovering_a_token_isolates_its_lines_and_tokens_stay_text(page: Page, app_url: str):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    sentence = "<script>alert(1)</script> 你好 🙂"  # byte-level BPE: "<", "s", … are tokens
    page.goto(f"{app_url}/attention?weights=random&sentence={quote(sentence)}")
    settled(page)
    frame = head_view(page)
    data = js(frame, DATA)
    everything = lines_of(data)

    # no hover: every line is drawn, its opacity its weight (a short sentence: all lines, no stretch)
    shown = js(frame, SHOWN)
    assert {(j, q, k, w) for j, q, k, w, _ in shown} == everything
    assert all(abs(opacity - w) < 1e-9 for *_, w, opacity in shown)

    # hover query 2: only its lines remain, in every head
    frame.locator("#left .tok").nth(2).hover()
    expect(frame.locator("#status")).to_contain_text(data["left_full"][2])
    # positions count from 0 on every page: the third token is position 2
    expect(frame.locator("#status")).to_contain_text("(position 2)")
    shown = js(frame, SHOWN)
    assert {(j, q, k, w) for j, q, k, w, _ in shown} == lines_of(data, q=2)
    assert 0 < len(shown) < len(everything)
    expect(frame.locator("#left .tok.hl")).to_have_count(1)

    # leave the column: all lines are back; hover key 5: only the lines into it
    frame.locator("#title").hover()
    expect(frame.locator("#focus line")).to_have_count(0)
    assert len(js(frame, SHOWN)) == len(everything)
    frame.locator("#right .tok").nth(5).hover()
    shown = js(frame, SHOWN)
    assert {(j, q, k, w) for j, q, k, w, _ in shown} == lines_of(data, k=5)

    # untick head 1: its lines are gone, also from an isolated token's lines
    frame.locator('input[data-head="0"]').uncheck()
    frame.locator("#left .tok").nth(3).hover()
    shown = js(frame, SHOWN)
    assert {(j, q, k, w) for j, q, k, w, _ in shown} == lines_of(data, q=3) - lines_of(data, head=0)
    frame.locator("#title").hover()
    assert not any(j == 0 for j, *_ in js(frame, SHOWN))

    # the <script> sentence is text: tokens set with textContent, nothing ran, no element injected
    left = frame.locator("#left text").all_text_contents()
    assert left[:3] == ["<", "s", "c"] and "你" in left
    assert js(frame, "b => document.querySelectorAll('script').length") == 2  # data + the component
    assert js(frame, "b => window.__injected === undefined && document.querySelectorAll('img').length === 0")
    assert dialogs == []

    # readable and inside 1280 × 720: ≥ 14 px text, CJK drawn, no sideways scrolling
    sizes = js(frame, "b => ['#left text', '#status', '.head-toggle'].map(s => "
               "parseFloat(getComputedStyle(document.querySelector(s)).fontSize))")  # fmt: skip
    assert min(sizes) >= 14, sizes
    assert js(frame, "b => Array.from(document.querySelectorAll('#left text'))"
              ".find(e => e.textContent === '你').getComputedTextLength() > 10")  # fmt: skip
    assert js(
        frame,
        "b => { const s = document.getElementById('scroll'); return s.scrollWidth <= s.clientWidth + 1; }",
    )
    box = page.locator(FRAME).bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 1280 and box["height"] <= 640


def test_layer_and_kind_widgets_redraw_the_view(page: Page, app_url: str):
    page.goto(f"{app_url}/attention?weights=random&hv_kind=Decoder+cross-attention&hv_layer=2")
    settled(page)
    frame = head_view(page)
    expect(frame.locator("#title")).to_have_text("Decoder cross-attention, layer 2")
    expect(page).to_have_url(re.compile(r"hv_kind=cross&|hv_kind=cross$"))  # the old label's link: its id now
    data = js(frame, DATA)
    assert data["left"][0] == "[BOS]"  # queries: the decoder's input
    page.locator(".st-key-hv_kind").get_by_text("Encoder self-attention").click()
    expect(page.frame_locator(FRAME).locator("#title")).to_have_text(
        "Encoder self-attention, layer 2", timeout=TIMEOUT
    )
    expect(page).not_to_have_url(re.compile(r"hv_kind="), timeout=TIMEOUT)  # the default leaves the URL
    settled(page)


def test_512_tokens_overview_and_hover(page: Page, app_url: str):
    sentence = ("注意力就是一切我们研究模型如何看待每个词元" * 40)[:700]
    page.goto(f"{app_url}/attention?weights=random&max_tokens=512&sentence={quote(sentence)}")
    settled(page)
    frame = head_view(page)
    data = js(frame, DATA)
    assert len(data["left"]) > 500 and not data["all_lines"]
    assert frame.locator("#lines line").count() == len(lines_of(data)) <= 24_000
    frame.locator("#zoom").fill("1")  # row height 1 px: the whole sentence in one view
    fits = "b => document.querySelector('svg').getBoundingClientRect().height <= window.innerHeight"
    assert js(frame, fits)
    frame.locator("#left .tok").nth(300).hover(force=True)
    shown = js(frame, SHOWN)
    assert shown and {q for _, q, *_ in shown} == {300}
    expect(frame.locator("#left .tok.hl text")).to_be_visible()  # the hovered token's text is shown


def test_head_view_screenshot(page: Page, app_url: str):
    """The README's head view: the trained 汉字→拼音 cross-attention, each syllable on its character."""
    sentence = quote("中华人民共和国")
    page.goto(f"{app_url}/attention?sentence={sentence}&hv_kind=Decoder+cross-attention&hv_layer=2")
    settled(page)
    frame = head_view(page)
    heading = page.get_by_role("heading", name=t("attention.hv.title", "en"))
    heading.evaluate("h => h.scrollIntoView({block: 'start'})")
    frame.locator("#left .tok").nth(3).hover()
    expect(frame.locator("#focus line").first).to_be_attached()  # hovering isolates ...
    frame.locator("#title").hover()
    expect(frame.locator("#focus line")).to_have_count(0)  # ... and leaving shows every line again
    page.wait_for_timeout(800)
    screenshot(page, "head_view.png")
