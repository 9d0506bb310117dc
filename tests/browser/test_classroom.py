"""The classroom (issue 27) in a real Chromium: a lecturer and a student in two browser contexts (no
shared cookies, as two laptops), on one server.

- the lecturer starts a room; the student who opens the URL shown sees the lecturer's step, sentence
  and weights, and follows the lecturer's keys within 5 s; the lecturer's head count sees them;
- the student leaves (and moving a step while following leaves too, with a message), explores on
  their own while the lecturer moves on, and rejoins at the lecturer's current step;
- only the lecturer drives: a tampered student URL and the student's keys never move the room;
- the lecturer ends the room: the student is told; bad and unknown codes get a message;
- a student reading Chinese follows an English lecturer at the same step;
- the presenter's right survives a reload and a new tab of the lecturer's browser (a cookie);
- predict, then reveal: the lecturer asks, the student answers once, the tally counts it, the reveal
  shows the model's answer on both screens.

Each page load (a reload too) is a Streamlit session of its own; no page may show an exception, ever.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from browserhelpers import SHOTS, record_screenshot, settled
from classroomhelpers import (
    CHART,
    FOLLOW,
    HEADING,
    LECTURER,
    SENTENCE,
    TIMEOUT,
    clean,
    click,
    head_count,
    heading,
    moves,
    open_lecture,
    press,
    room_with_student,
    said,
    shows,
    start_room,
    status,
)
from playwright.sync_api import Browser, BrowserContext, expect

from core.teaching.questions import bpe_token_count
from ui.classroom.panels import COUNT_SECONDS, FOLLOW_SECONDS
from ui.classroom.quiz import TALLY_SECONDS

pytestmark = pytest.mark.browser


# -- two browsers, one server --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browsers(browser: Browser, browser_context_args) -> Iterator[tuple[BrowserContext, BrowserContext]]:
    """The lecturer's browser and the student's: contexts share no cookies. One pair for the module
    (scripts stay in their HTTP caches); each test starts with no cookies and closes its pages."""
    pair = browser.new_context(**browser_context_args), browser.new_context(**browser_context_args)
    yield pair
    for context in pair:
        context.close()


def _fresh(context: BrowserContext) -> Iterator[BrowserContext]:
    context.clear_cookies()
    yield context
    for page in context.pages:
        page.close()


@pytest.fixture
def lecturer(browsers) -> Iterator[BrowserContext]:
    yield from _fresh(browsers[0])


@pytest.fixture
def student(browsers) -> Iterator[BrowserContext]:
    yield from _fresh(browsers[1])


# -- rooms: following, leaving, rejoining --------------------------------------------------------------


def test_student_sees_the_lecturers_slide_and_follows_the_keys(
    lecturer: BrowserContext, student: BrowserContext, app_url: str
):
    """The student URL shows the lecturer's step, sentence and weights (random, seed 7: not the
    student's defaults, and every number of the chart the same); PageDown twice moves the student
    too; the lecturer's head count sees the student."""
    teacher = open_lecture(lecturer, f"{app_url}{LECTURER}&weights=random&seed=7", 3)
    code, url = start_room(teacher)
    pupil = open_lecture(student, url, 3)
    expect(pupil.locator(HEADING)).to_have_text(teacher.locator(HEADING).inner_text())
    expect(status(pupil)).to_contain_text(said("classroom.following", code=code))
    assert pupil.locator(".st-key-sentence textarea").input_value() == SENTENCE
    ticks = f"{CHART} .ytick text"
    expect(pupil.locator(ticks)).to_have_text(teacher.locator(ticks).all_text_contents())
    z = f"() => document.querySelector('{CHART}').data[0].z"
    assert pupil.evaluate(z) == teacher.evaluate(z)  # the embedding rows: the same weights

    moves(teacher, "PageDown", 4)
    moves(teacher, "PageDown", 5)
    shows(pupil, 5)
    expect(pupil.locator(HEADING)).to_have_text(teacher.locator(HEADING).inner_text())
    expect(head_count(teacher)).to_have_text(
        "1", timeout=(COUNT_SECONDS + 2 * FOLLOW_SECONDS) * 1000 + FOLLOW
    )
    clean(teacher, pupil)


def test_student_leaves_explores_and_rejoins(lecturer: BrowserContext, student: BrowserContext, app_url: str):
    """Leave: the student's own Next, the lecturer moves on, the student stays; Rejoin: back at the
    lecturer's step. Moving a step while following leaves the room, and the page says so."""
    teacher, pupil, code = room_with_student(lecturer, student, app_url)
    click(pupil, "room_leave")
    expect(status(pupil)).to_contain_text(said("classroom.alone", code=code), timeout=FOLLOW)
    click(pupil, "lecture_next")
    shows(pupil, 4)
    moves(teacher, "PageDown", 4)
    moves(teacher, "PageDown", 5)
    pupil.wait_for_timeout(FOLLOW)  # a follower, woken at once, would have moved by now
    shows(pupil, 4)
    expect(status(pupil)).to_contain_text(said("classroom.alone", code=code))

    click(pupil, "room_rejoin")
    shows(pupil, 5)
    expect(status(pupil)).to_contain_text(said("classroom.following", code=code))
    moves(teacher, "PageDown", 6)
    shows(pupil, 6)

    settled(pupil)
    click(pupil, "lecture_next")  # a student who moves while following leaves, and is told
    shows(pupil, 7)
    expect(pupil.get_by_text(said("classroom.left_step", code=code))).to_be_visible()
    expect(status(pupil)).to_contain_text(said("classroom.alone", code=code))
    shows(teacher, 6)
    clean(teacher, pupil)


def test_only_the_lecturer_drives(lecturer: BrowserContext, student: BrowserContext, app_url: str):
    """A student who knows the code and tampers with the URL (``&step=1``) sees the room's step, and
    their keys move their own page only: the lecturer's page and the room stay at step 4."""
    teacher = open_lecture(lecturer, app_url + LECTURER, 3)
    code, url = start_room(teacher)
    moves(teacher, "PageDown", 4)
    pupil = open_lecture(student, f"{url}&step=1", 4)
    press(pupil, "PageDown")
    shows(pupil, 5)
    expect(status(pupil)).to_contain_text(said("classroom.alone", code=code))
    teacher.wait_for_timeout(COUNT_SECONDS * 1000 + 500)  # the lecturer's room fragment has run
    shows(teacher, 4)
    expect(teacher).to_have_url(re.compile(r"[?&]step=4(&|$)"))
    click(pupil, "room_rejoin")  # the room itself is still at 4
    shows(pupil, 4)
    clean(teacher, pupil)


def test_ending_the_room_tells_the_student(lecturer: BrowserContext, student: BrowserContext, app_url: str):
    teacher, pupil, code = room_with_student(lecturer, student, app_url)
    click(teacher, "room_end")
    expect(teacher.locator(".st-key-room_code")).to_have_count(0, timeout=FOLLOW)
    warning = pupil.get_by_test_id("stAlertContentWarning")
    expect(warning).to_contain_text(said("classroom.ended", code=code), timeout=FOLLOW)
    expect(warning).to_contain_text(code)
    expect(status(pupil)).to_have_count(0)  # nothing left to rejoin
    shows(pupil, 3)  # the slide stays
    clean(teacher, pupil)


def test_bad_and_unknown_room_codes_get_a_message(student: BrowserContext, app_url: str):
    """A malformed code and a well-formed code of no room: a message, the lecture on its own."""
    page = open_lecture(student, f"{app_url}/lecture?room={quote('<script>')}", 1)
    warning = page.get_by_test_id("stAlertContentWarning")
    expect(warning).to_contain_text(said("classroom.malformed"))
    expect(status(page)).to_have_count(0)
    assert "room=" not in page.url
    page = open_lecture(student, f"{app_url}/lecture?room=ZZZZZZ", 1)
    expect(page.get_by_test_id("stAlertContentWarning")).to_contain_text(
        said("classroom.unknown", code="ZZZZZZ")
    )
    expect(status(page)).to_have_count(0)
    expect(page.locator(CHART)).to_have_count(1)
    clean(*student.pages)


def test_a_chinese_student_follows_an_english_lecturer(
    lecturer: BrowserContext, student: BrowserContext, app_url: str
):
    teacher, pupil, code = room_with_student(lecturer, student, app_url, lang="zh")
    assert heading(3, "zh") != heading(3)  # the titles differ: the check below can fail
    moves(teacher, "PageDown", 4)
    shows(pupil, 4, "zh")
    expect(status(pupil)).to_contain_text(said("classroom.following", "zh", code=code))
    clean(teacher, pupil)


def test_the_presenters_right_survives_a_reload(
    lecturer: BrowserContext, student: BrowserContext, app_url: str
):
    """After a reload, and in a new tab of the same browser (each a new Streamlit session: only the
    browser's cookie knows the secret; without it a reload loses the room), the lecturer still drives
    the room."""
    teacher, pupil, code = room_with_student(lecturer, student, app_url)
    teacher.reload()
    expect(teacher.locator(".st-key-room_code_big")).to_have_text(code, timeout=TIMEOUT)
    moves(teacher, "PageDown", 4)
    shows(pupil, 4)

    url = teacher.url
    teacher.close()
    teacher = open_lecture(lecturer, url, 4)
    expect(teacher.locator(".st-key-room_code_big")).to_have_text(code, timeout=FOLLOW)
    moves(teacher, "PageDown", 5)
    shows(pupil, 5)
    clean(teacher, pupil)


# -- predict, then reveal ------------------------------------------------------------------------------


def test_the_class_answers_once_and_the_reveal_shows_the_models_answer(
    lecturer: BrowserContext, student: BrowserContext, app_url: str
):
    """On the tokens slide the lecturer asks the question offered first (BPE: how many tokens after
    merge k); the student answers; the tally says 1 answered; neither a second click nor a second tab
    of the student's browser counts again; the reveal shows, on both screens, the count that core's BPE
    gives for that k."""
    teacher, pupil, code = room_with_student(lecturer, student, app_url)
    moves(teacher, "PageUp", 2)
    shows(pupil, 2)
    expect(teacher.locator(".st-key-room_question_pick")).to_have_count(1, timeout=TIMEOUT)
    click(teacher, "room_ask")
    question = pupil.locator(".st-key-room_question")
    expect(question).to_contain_text(re.compile(r"after merge \d+"), timeout=FOLLOW)
    merges = int(re.search(r"after merge (\d+)", question.inner_text()).group(1))
    count = bpe_token_count(SENTENCE, merges)
    options = question.locator(".st-key-room_answer_choice label:has(input[type=radio])")
    expect(options.first).to_be_visible()
    labels = [text.strip() for text in options.all_inner_texts()]
    assert str(count) in labels, (count, labels)
    options.first.click()
    click(pupil, "room_answer_submit")
    expect(question).to_contain_text(said("classroom.q.in", option=labels[0]), timeout=FOLLOW)
    answered = said("classroom.q.answered", n=1)
    tally = teacher.locator(".st-key-room_tally")
    expect(tally).to_contain_text(answered, timeout=FOLLOW)
    expect(pupil.locator(".st-key-room_answer_submit button:enabled")).to_have_count(0)  # gone or disabled

    again = open_lecture(student, pupil.url, 2)  # the same browser, a new session: the same voter
    again.locator(".st-key-room_answer_choice label:has(input[type=radio])").nth(1).click()
    click(again, "room_answer_submit")
    expect(again.get_by_test_id("stAlertContentWarning")).to_contain_text(
        said("classroom.q.already"), timeout=FOLLOW
    )
    # the refused answer is not shown as this student's ("Your answer is in: …" names a counted one only)
    refused = said("classroom.q.in", option=labels[1])
    expect(again.locator(".st-key-room_question")).not_to_contain_text(refused)
    teacher.wait_for_timeout(TALLY_SECONDS * 1000 + 500)  # the tally has read the room again
    expect(tally).to_contain_text(answered)

    click(teacher, "room_reveal")
    model = said("classroom.q.answer_count", option=str(count))
    for page in (teacher, pupil):
        result = page.locator(".st-key-room_result")
        expect(result).to_contain_text(model, timeout=FOLLOW)
        expect(result).to_contain_text(answered)
    clean(teacher, pupil, again)


# -- the README's picture ------------------------------------------------------------------------------

def test_projector_and_student_screens_side_by_side(
    lecturer: BrowserContext, student: BrowserContext, app_url: str
):
    """assets/screenshots/classroom.png: the projector (the lecturer, English) and a student's laptop
    (中文) after the reveal of the cross-attention question of the trained model; the README shows it."""
    teacher = open_lecture(
        lecturer, app_url + f"/lecture?weights=trained&sentence={quote('我们去北京')}&step=7", 7
    )
    code, url = start_room(teacher)
    pupil = open_lecture(student, url + "&lang=zh", 7, "zh")
    teacher.locator(".st-key-room_code").locator("xpath=ancestor::details//summary").first.click()  # fold it
    click(teacher, "room_ask")
    question = pupil.locator(".st-key-room_question")
    expect(question.locator(".st-key-room_answer_choice label:has(input[type=radio])").first).to_be_visible(
        timeout=FOLLOW
    )
    question.locator(".st-key-room_answer_choice label:has(input[type=radio])").first.click()
    click(pupil, "room_answer_submit")
    expect(teacher.locator(".st-key-room_tally")).to_contain_text(
        said("classroom.q.answered", n=1), timeout=FOLLOW
    )
    click(teacher, "room_reveal")
    for page in (teacher, pupil):
        expect(page.locator(".st-key-room_result [data-testid='stPlotlyChart']")).to_have_count(
            1, timeout=FOLLOW
        )
        settled(page)
        page.wait_for_timeout(800)  # the charts finish drawing
    clean(teacher, pupil)
    left, right = teacher.screenshot(), pupil.screenshot()
    side_by_side(left, right, SHOTS / "classroom.png")
    record_screenshot(SHOTS / "classroom.png", [teacher, pupil])


def side_by_side(left: bytes, right: bytes, path: Path, gap: int = 24) -> None:
    """Two screenshots next to each other on a grey band, as a README picture."""
    import io

    from PIL import Image

    a, b = Image.open(io.BytesIO(left)), Image.open(io.BytesIO(right))
    out = Image.new("RGB", (a.width + gap + b.width, max(a.height, b.height)), (120, 120, 120))
    out.paste(a, (0, 0))
    out.paste(b, (a.width + gap, 0))
    out.save(path, optimize=True)
