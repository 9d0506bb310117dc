"""The lecture hall in a real Chromium: students follow a room at ``/r/CODE`` (a light page fed by the
room's event stream, no Streamlit session), in English and 中文, on a 390 px phone and a laptop; the
follower's slide is the lecturer's (heading, text, figure data); Leave opens the full page at the same
step and settings; the routes refuse bad input with a status and a message, never a traceback."""

from __future__ import annotations

import html
import json
import urllib.error
import urllib.request
from urllib.parse import quote

import pytest
from browserhelpers import outside_requests
from classroomhelpers import LECTURER, SENTENCE, TIMEOUT, heading, moves, open_lecture, start_room
from playwright.sync_api import Browser, Page, expect

from i18n import t

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 720}


def follower(browser: Browser, url: str, viewport: dict) -> Page:
    page = browser.new_context(viewport=viewport).new_page()
    page.goto(url)
    return page


def follows(page: Page, step: int, lang: str = "en") -> None:
    expect(page.locator("h2#heading")).to_have_text(heading(step, lang), timeout=TIMEOUT)
    page.wait_for_function("() => document.querySelector('#plot .main-svg') !== null", timeout=TIMEOUT)


def request(url: str, data: bytes | None = None) -> tuple[int, str]:
    req = urllib.request.Request(url, data=data, headers={"content-type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_students_follow_by_stream_in_both_languages_and_leave_to_the_full_page(
        browser: Browser, page: Page, app_url: str):
    teacher = open_lecture(page.context, app_url + LECTURER, 3)
    code, _ = start_room(teacher)
    en = follower(browser, f"{app_url}/r/{code}", LAPTOP)
    outside = outside_requests(en, app_url)
    zh = follower(browser, f"{app_url}/r/{code}?lang=zh", PHONE)
    follows(en, 3)
    follows(zh, 3, "zh")
    moves(teacher, "PageDown", 4)
    follows(en, 4)
    follows(zh, 4, "zh")
    # the follower draws the lecturer's slide: the same text and the same figure data
    teacher_text = teacher.locator(".st-key-lecture_text p").first.inner_text()
    assert en.locator("#text p").first.inner_text() == teacher_text
    data = "(el) => JSON.stringify(el.data.map((t) => [t.type, t.z ?? t.y ?? null]))"
    teacher_data = teacher.locator(".st-key-lecture_slide .js-plotly-plot").first.evaluate(data)
    assert en.locator("#plot").evaluate(data) == teacher_data
    # on a phone the figure keeps its width and scrolls sideways: no label crushed onto another
    assert zh.evaluate("() => document.getElementById('plot').offsetWidth") >= 640
    assert zh.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1
    assert outside == []
    # Leave: the full interactive page at the same step and settings
    leave = en.locator("#leave")
    expect(leave).to_have_text(t("hall.leave", "en"))
    href = leave.get_attribute("href")
    assert href.startswith("/lecture?") and "step=4" in href and f"rejoin={code}" in href
    assert f"sentence={quote(SENTENCE)}" in href  # the room's settings, whoever built the slide first
    en.goto(app_url + href)
    expect(en.locator(".st-key-lecture_slide h2")).to_have_text(heading(4), timeout=TIMEOUT)


def test_the_routes_refuse_bad_input_with_a_status_and_a_message(app_url: str):
    status, body = request(f"{app_url}/r/not-a-room")
    assert status == 400 and html.escape(t("hall.bad_code", "en")) in body and "<script" not in body
    status, body = request(f"{app_url}/r/ABCDEF?lang=zh")
    assert status == 404 and html.escape(t("hall.unknown", "zh", code="ABCDEF")) in body
    status, body = request(f"{app_url}/r/ABCDEF/answer", b"{not json")
    assert status == 400 and json.loads(body)["error"] == t("hall.bad_request", "en")
    status, body = request(f"{app_url}/r/ABCDEF/answer", b'{"question": 1, "option": 0}')
    assert status == 404 and "ABCDEF" in json.loads(body)["error"]
    status, body = request(f"{app_url}/r/ABCDEF/answer", b"x" * 100_000)
    assert status == 400
    for path in ("/hall/../../app.py", "/hall/fonts/..%2F..%2Fapp.py", "/hall/app.py"):
        status, body = request(app_url + path)
        assert status in (400, 404) and "import" not in body, path  # refused, never a file of ours
    statuses = [request(f"{app_url}/r/ABCDEF/answer", b"{}")[0] for _ in range(40)]
    assert 429 in statuses  # a flood from one client is cut
    assert "Traceback" not in body
