"""The classroom's browser helpers (tests/browser/test_classroom.py, one server; test_cluster.py,
several): open the Lecture page, start a room, read a slide's heading and a room's status; a student
following on the room's hall page (``/r/CODE``, ui/hall/): its heading, figure data, status, question;
what a browser context asked of anyone but the app, and the script errors its pages raised."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from browserhelpers import LOCAL, keys_ready, settled
from playwright.sync_api import BrowserContext, Locator, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from i18n import t
from ui.classroom.panels import COUNT_SECONDS
from ui.classroom.rooms import ALPHABET
from ui.hall.broadcast import POLL_SECONDS

TIMEOUT = 60_000  # a page load: the first session imports torch and builds the model
FOLLOW = 5_000  # a student sees the lecturer's change (the benchmark's target is 1 s)
# The store pauses 2 s after a failure, then the lecturer's head count sends the step again (every
# COUNT_SECONDS) and tells the hall, whose channels also look every POLL_SECONDS: a change made while
# Redis was away arrives within this.
CATCH_UP = FOLLOW + (2 + COUNT_SECONDS + POLL_SECONDS) * 1000
UNAVAILABLE = "classroom.unavailable"
HEADING = ".st-key-lecture_slide h2"
CHART = '[data-testid="stPlotlyChart"] .js-plotly-plot'
STEPS = ("overview", "tokens", "embeddings", "positional", "encoder", "decoder", "cross", "masks",
         "residual", "ffn", "output", "greedy")  # fmt: skip
SENTENCE = "我们去北京"  # not a default sentence: a student's page can only have it from the room
LECTURER = f"/lecture?sentence={quote(SENTENCE)}&step=3"


def heading(step: int, lang: str = "en", total: int = 13) -> str:
    return t(
        "lecture.heading", lang, step=step, total=total, title=t(f"lecture.{STEPS[step - 1]}.title", lang)
    )


def said(key: str, lang: str = "en", **values) -> str:
    """A message as the page shows it: Markdown's bold and code marks are gone."""
    return t(key, lang, **values).replace("**", "").replace("`", "")


def clean(*pages: Page) -> None:
    for page in pages:
        expect(page.get_by_test_id("stException")).to_have_count(0)


def shows(page: Page, step: int, lang: str = "en", timeout: float = FOLLOW) -> None:
    """The slide's heading is step ``step``'s (``N / total · title``), and nothing broke. A list: one
    heading, that one; retried while a rerun still shows the previous slide's heading beside the new
    one (a single text would fail at once on the two, Playwright's strict mode)."""
    expect(page.locator(HEADING)).to_have_text([heading(step, lang)], timeout=timeout)
    clean(page)


def open_lecture(context: BrowserContext, url: str, step: int, lang: str = "en") -> Page:
    page = context.new_page()
    page.goto(url)
    shows(page, step, lang, timeout=TIMEOUT)
    settled(page)
    return page


def press(page: Page, key: str) -> None:
    """A clicker's key, sent to the page itself (not to a button or field that has the focus)."""
    settled(page)
    keys_ready(page)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press(key)


def click(page: Page, key: str) -> None:
    button = page.locator(f".st-key-{key} button")
    expect(button).to_be_enabled(timeout=TIMEOUT)
    button.click()


def status(page: Page) -> Locator:
    """A student's room status on the full page: exploring on their own, Rejoin beside it."""
    return page.locator(".st-key-room_follow")


def start_room(page: Page) -> tuple[str, str]:
    """Start a room (the button may be in the folded sidebar: open it first); (code, student URL)."""
    button = page.locator(".st-key-room_start button")
    expect(button).to_have_count(1, timeout=TIMEOUT)
    in_sidebar = button.evaluate("(el) => el.closest('[data-testid=\"stSidebar\"]') !== null")
    unfold = page.get_by_test_id("stExpandSidebarButton")
    if in_sidebar and unfold.is_visible():
        unfold.click()
    button.click()
    big = page.locator(".st-key-room_code_big")
    expect(big).to_have_text(re.compile(rf"^\s*[{ALPHABET}]{{6}}\s*$"), timeout=TIMEOUT)
    code = big.inner_text().strip()
    url = page.locator(".st-key-room_code [data-testid='stCode'] code").inner_text().strip()
    assert url.endswith(f"/r/{code}"), url
    settled(page)
    return code, url


def head_count(page: Page) -> Locator:
    return page.locator(".st-key-room_code [data-testid='stMetricValue']")


# -- a student in the hall: /r/CODE ------------------------------------------------------------------

HALL_HEADING = "h2#heading"


def follows(page: Page, step: int, lang: str = "en", timeout: float = FOLLOW) -> None:
    """The hall page shows step ``step``'s heading and its figure is drawn."""
    expect(page.locator(HALL_HEADING)).to_have_text(heading(step, lang), timeout=timeout)
    page.wait_for_function("() => document.querySelector('#plot .main-svg') !== null", timeout=timeout)


def follow(context: BrowserContext, url: str, step: int | None = None, lang: str = "en") -> Page:
    """A student opens the room's address (``lang``: the page's ``?lang=``); at ``step`` if given."""
    page = context.new_page()
    page.goto(url + ("?lang=zh" if lang == "zh" and "?" not in url else "&lang=zh" if lang == "zh" else ""))
    if step is not None:
        follows(page, step, lang, timeout=TIMEOUT)
    return page


def hall_text(page: Page) -> Locator:
    """What the hall page says in place of a slide (the room ended, is unknown …) or the slide's text."""
    return page.locator("#text")


def room_with_student(lecturer: BrowserContext, student: BrowserContext, app_url: str, lang: str = "en"):
    """The lecturer at step 3 of ``SENTENCE`` in a room; a student following it on the hall page.
    (lecturer, student, code)."""
    teacher = open_lecture(lecturer, app_url + LECTURER, 3)
    code, url = start_room(teacher)
    pupil = follow(student, url, 3, lang)
    return teacher, pupil, code


def moves(page: Page, key: str, step: int) -> None:
    """The lecturer presses ``key``; their page shows ``step``."""
    press(page, key)
    shows(page, step, timeout=TIMEOUT)


def hall_status(page: Page) -> Locator:
    """What the hall page says of its connection: nothing, "Reconnecting…", the store being away."""
    return page.locator("#status")


def question(page: Page) -> Locator:
    return page.locator("#question")


def options(page: Page) -> Locator:
    """A question's option buttons on the hall page (their ``data-count`` after the reveal)."""
    return page.locator("#question .options button")


def result(page: Page) -> Locator:
    """The server's reply to this page's answer, or the reveal's answer text."""
    return page.locator("#question_result")


# Text on a hall page, outside verbatim blocks (user text), still holding a Markdown mark: our own words
# (slide texts, labels, notes) are Markdown, and the follower draws **bold** and `code` as elements.
MARKS_LEFT = """() => {
  const out = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode;
    const verbatim = node.parentElement.closest('pre, code, script');
    if (!verbatim && /\\*\\*|`/.test(node.textContent)) out.push(node.textContent);
  }
  return out;
}"""


def hall_clean(*pages: Page) -> None:
    """No page shows a traceback (the hall's refusals are a sentence); a hall page shows no Markdown
    mark its script should have drawn."""
    for page in pages:
        expect(page.locator("body")).not_to_contain_text("Traceback")
        if urlsplit(page.url).path.startswith("/r/"):
            assert page.evaluate(MARKS_LEFT) == [], page.url


# -- a figure's data: the projector's and a follower's ---------------------------------------------------

SLIDE_CHART = f".st-key-lecture_slide {CHART}"
# Each trace's type and data arrays; typed arrays (plotly decodes binary arrays into them) as lists.
FIGURE_DATA = """(el) => JSON.stringify(el.data.map((t) => [t.type, t.x ?? null, t.y ?? null, t.z ?? null]),
  (key, value) => (ArrayBuffer.isView(value) ? Array.from(value) : value))"""


def slide_figure(page: Page) -> str:
    """The data of the slide's figure on the Lecture page (the first chart of the slide)."""
    return page.locator(SLIDE_CHART).first.evaluate(FIGURE_DATA)


def same_figure(pupil: Page, teacher: Page, timeout: float = FOLLOW) -> None:
    """The hall page draws the data of the lecturer's slide figure (waits for a redraw to land)."""
    want = slide_figure(teacher)
    assert want not in ("[]", ""), "the lecturer's slide has no figure data"
    try:
        pupil.wait_for_function(
            f"(want) => ({FIGURE_DATA})(document.getElementById('plot')) === want", arg=want, timeout=timeout
        )
    except PlaywrightTimeout:
        assert pupil.locator("#plot").evaluate(FIGURE_DATA) == want  # the difference, shown


# -- what a browser did that it must not -------------------------------------------------------------------


@dataclass
class Watched:
    """Browser contexts whose every request to anywhere but ``origins`` (host:port) is noted, as is every
    uncaught script error of their pages: a lecture hall may have no internet, and a follower page that
    throws stops drawing."""

    contexts: list[BrowserContext]
    origins: set[str]
    outside: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for context in self.contexts:
            context.on("request", self._request)
            context.on("weberror", self._error)

    def _request(self, request) -> None:
        if not request.url.startswith(LOCAL) and urlsplit(request.url).netloc not in self.origins:
            self.outside.append(request.url)

    def _error(self, error) -> None:
        self.errors.append(f"{error.page.url if error.page else '?'}: {error.error}")

    def allow(self, url: str) -> None:
        self.origins.add(urlsplit(url).netloc)

    def reset(self) -> None:
        """A test's start: no cookies (each person a new browser), nothing noted."""
        for context in self.contexts:
            context.clear_cookies()
        self.outside.clear()
        self.errors.clear()

    def pages(self) -> Iterable[Page]:
        return [page for context in self.contexts for page in context.pages]

    def check(self) -> None:
        """No page of these browsers shows a Streamlit exception or a traceback, none raised a script
        error, none asked anyone but the app for anything."""
        for page in self.pages():
            clean(page)
            hall_clean(page)
        assert self.errors == [], self.errors
        assert self.outside == [], self.outside

    def close_pages(self) -> None:
        for page in self.pages():
            page.close()
