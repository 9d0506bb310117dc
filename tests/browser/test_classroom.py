"""The classroom in a real Chromium: a lecturer on the Lecture page and students on the room's hall page
(``/r/CODE``, ui/hall/: each slide by Server-Sent Events, drawn in the browser), each person a browser
context of their own (no shared cookies, as separate devices), one server.

- three students follow: the printed address on a laptop, the old address (``/lecture?room=code``, in
  lower case) on a 390 px phone, 中文 on a tablet; each shows the lecturer's step and the figure's data,
  follows PageDown within 5 s, and the lecturer's head count sees all three;
- Leave opens the full page at the room's step and settings; the student's own Next moves only them;
  Rejoin opens the room's hall page at the lecturer's current step;
- the lecturer asks the slide's question: answers are counted once per browser (a second tab is told it
  answered already), the tally counts them, the reveal shows every student core's answer and the counts;
- an exercise: the exact number is right, a wrong one gets the worked solution drawn by KaTeX;
- the lecturer ends the room: every student is told, in their language;
- the student's network drops: the page says it is reconnecting, and without a reload catches up with
  the step the lecturer moved to meanwhile;
- a malformed code and an unknown one, in the browser: a sentence, never a traceback;
- the README's picture: the projector beside a 中文 phone after a reveal.

No page shows an exception or raises a script error, and no page asks anyone but the app for anything
(``Watched.check`` at the end of each test).
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from browserhelpers import SHOTS, record_screenshot, settled
from classroomhelpers import (
    FOLLOW,
    LECTURER,
    SENTENCE,
    TIMEOUT,
    Watched,
    click,
    follow,
    follows,
    hall_status,
    hall_text,
    head_count,
    heading,
    moves,
    open_lecture,
    options,
    question,
    result,
    said,
    same_figure,
    shows,
    start_room,
    status,
)
from cutproxy import CutProxy
from playwright.sync_api import Browser, BrowserContext, Page, expect

from core.teaching.exercises import check, exercises_for
from core.teaching.questions import bpe_token_count
from core.tracing.pipeline import load_pipeline
from core.tracing.run import SentenceRun
from figures.classroom.exercises import exercise_title, verdict_view
from i18n import t
from ui.classroom.panels import COUNT_SECONDS
from ui.classroom.quiz import TALLY_SECONDS
from ui.hall.broadcast import POLL_SECONDS
from ui.page.settings import validate

pytestmark = pytest.mark.browser

LAPTOP = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
TABLET = {"width": 820, "height": 1180}  # under the hall page's two-column width (900 px)
HEAD_COUNT = (2 * COUNT_SECONDS) * 1000 + FOLLOW  # a follower's stream is seen at once; the count redraws
QUIET = (POLL_SECONDS + 0.5) * 1000  # a room that moved would have reached its followers by now


# -- one browser per person, one server ----------------------------------------------------------------


@dataclass
class Room:
    """The lecturer's browser and three students' (contexts share no cookies), watched (``Watched``)."""

    lecturer: BrowserContext
    laptop: BrowserContext
    phone: BrowserContext
    zh: BrowserContext
    watched: Watched


@pytest.fixture(scope="module")
def browsers(browser: Browser, browser_context_args, app_url: str) -> Iterator[Room]:
    """One set for the module (scripts stay in each browser's HTTP cache); each test starts with no
    cookies and closes its pages."""
    made = [
        browser.new_context(**{**browser_context_args, "viewport": LAPTOP}),
        browser.new_context(**{**browser_context_args, "viewport": LAPTOP}),
        browser.new_context(
            **{**browser_context_args, "viewport": PHONE, "is_mobile": True, "has_touch": True}
        ),
        browser.new_context(**{**browser_context_args, "viewport": TABLET}),
    ]
    yield Room(*made, Watched(made, {urlsplit(app_url).netloc}))
    for context in made:
        context.close()


@pytest.fixture
def room(browsers: Room) -> Iterator[Room]:
    browsers.watched.reset()
    yield browsers
    browsers.watched.close_pages()


def lecture(room: Room, app_url: str, query: str = LECTURER, step: int = 3) -> tuple[Page, str, str]:
    """The lecturer's page at ``step`` of ``query`` in a new room: (page, code, the address it shows)."""
    teacher = open_lecture(room.lecturer, app_url + query, step)
    code, url = start_room(teacher)
    return teacher, code, url


def lecture_run(query: dict[str, str]):
    """The run the Lecture page shows for ``query``, built here without the app's caches (as
    tests/app/test_exercises_ui.py's ``reference_run``)."""
    s = validate(query).settings
    return SentenceRun(load_pipeline(s.pipeline_settings()), s.sentence, s.target, s.max_tokens)


# -- following -----------------------------------------------------------------------------------------


def test_three_students_follow_the_lecturer_by_the_printed_the_old_and_a_chinese_address(
    room: Room, app_url: str
):
    """A laptop opens the printed address, a phone the old one in lower case with a dash (forwarded to
    ``/r/CODE``), a tablet reads 中文: all show the lecturer's step and the figure's data, PageDown
    moves all three within FOLLOW, and the lecturer's head count reaches 3."""
    teacher, code, url = lecture(room, app_url)
    assert url == f"{app_url}/r/{code}"  # the address printed on the projector

    laptop = follow(room.laptop, url, 3)
    phone = room.phone.new_page()
    phone.goto(f"{app_url}/lecture?room={code[:3].lower()}-{code[3:].lower()}")
    expect(phone).to_have_url(f"{app_url}/r/{code}", timeout=TIMEOUT)
    follows(phone, 3, timeout=TIMEOUT)
    zh = follow(room.zh, url, 3, "zh")
    assert heading(3, "zh") != heading(3)  # the titles differ: the language check can fail
    expect(zh.locator("html")).to_have_attribute("lang", "zh-CN")
    for pupil in (laptop, phone, zh):
        same_figure(pupil, teacher)

    moves(teacher, "PageDown", 4)
    shown = time.monotonic()
    for pupil, lang in ((laptop, "en"), (phone, "en"), (zh, "zh")):
        follows(pupil, 4, lang)
    assert time.monotonic() - shown <= FOLLOW / 1000  # all three, from the lecturer's page showing it
    for pupil in (laptop, phone, zh):
        same_figure(pupil, teacher)
    # the slide's text is the lecturer's, in the student's language
    assert (
        laptop.locator("#text p").first.inner_text()
        == teacher.locator(".st-key-lecture_text p").first.inner_text()
    )
    assert zh.locator("#text p").first.inner_text() != laptop.locator("#text p").first.inner_text()
    # on a phone the figure keeps its width and scrolls sideways, the page itself does not
    assert phone.evaluate("() => document.getElementById('plot').offsetWidth") >= 640
    assert phone.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"] + 1

    expect(head_count(teacher)).to_have_text("3", timeout=HEAD_COUNT)
    room.watched.check()


def test_a_student_leaves_explores_alone_and_rejoins_at_the_lecturers_step(room: Room, app_url: str):
    """Leave opens the full Lecture page at the room's step and sentence, saying the student explores
    alone; their Next moves them only (the lecturer's page and the room, as another follower sees it,
    stay); meanwhile the lecturer moves; Rejoin opens the hall page at the lecturer's step."""
    teacher, code, url = lecture(room, app_url)
    pupil = follow(room.laptop, url, 3)
    other = follow(room.phone, url, 3)
    moves(teacher, "PageDown", 4)
    follows(pupil, 4)

    leave = pupil.locator("#leave")
    expect(leave).to_have_text(t("hall.leave", "en"))
    href = leave.get_attribute("href")
    assert f"sentence={quote(SENTENCE)}" in href and f"rejoin={code}" in href  # the room's settings
    leave.click()
    expect(pupil).to_have_url(re.compile(r"/lecture\?"), timeout=TIMEOUT)
    shows(pupil, 4, timeout=TIMEOUT)
    settled(pupil)
    assert pupil.locator(".st-key-sentence textarea").input_value() == SENTENCE
    expect(status(pupil)).to_contain_text(said("classroom.alone", code=code))

    click(pupil, "lecture_next")  # the student's own step: theirs only
    shows(pupil, 5)
    pupil.wait_for_timeout(QUIET)
    shows(teacher, 4)
    follows(other, 4)
    assert other.locator("h2#heading").inner_text() == heading(4)

    moves(teacher, "PageUp", 3)  # the lecture goes on without them
    follows(other, 3)
    shows(pupil, 5)
    rejoin = status(pupil).locator(".st-key-room_rejoin a")
    expect(rejoin).to_contain_text(t("classroom.rejoin", "en"))
    assert rejoin.get_attribute("href") == f"/r/{code}?lang=en"
    # Streamlit opens a link button's address in a new tab (target=_blank): the full page stays behind
    with room.laptop.expect_page() as opened:
        rejoin.click()
    back = opened.value
    expect(back).to_have_url(f"{app_url}/r/{code}?lang=en", timeout=TIMEOUT)
    follows(back, 3, timeout=TIMEOUT)
    same_figure(back, teacher)
    moves(teacher, "PageDown", 4)
    follows(back, 4)
    room.watched.check()


# -- predict, then reveal ------------------------------------------------------------------------------


def test_answers_count_once_per_browser_and_the_reveal_shows_cores_count(room: Room, app_url: str):
    """On the tokens slide the lecturer asks the offer listed first (BPE: tokens after merge k). A
    student answers: the reply says it is in, the button is marked, the tally says 1. A second tab of
    the same browser is told it answered already and is not counted; a 中文 student's answer is. The
    reveal: every student's page shows the count ``core.teaching.questions.bpe_token_count`` gives, in
    their language, the model's option marked and each option's count."""
    teacher, code, url = lecture(room, app_url)
    pupil, zh, phone = follow(room.laptop, url, 3), follow(room.zh, url, 3, "zh"), follow(room.phone, url, 3)
    moves(teacher, "PageUp", 2)
    for page, lang in ((pupil, "en"), (zh, "zh"), (phone, "en")):
        follows(page, 2, lang)
    expect(teacher.locator(".st-key-room_question_pick")).to_have_count(1, timeout=TIMEOUT)
    click(teacher, "room_ask")

    expect(question(pupil)).to_contain_text(re.compile(r"after merge \d+"), timeout=FOLLOW)
    merges = int(re.search(r"after merge (\d+)", question(pupil).inner_text()).group(1))
    expect(question(pupil).locator("p").first).to_have_text(said("classroom.q.bpe_count", k=merges))
    expect(question(zh).locator("p").first).to_have_text(
        said("classroom.q.bpe_count", "zh", k=merges), timeout=FOLLOW
    )
    count = bpe_token_count(SENTENCE, merges)
    expect(options(pupil).first).to_be_visible()
    labels = [text.strip() for text in options(pupil).all_inner_texts()]
    assert str(count) in labels, (count, labels)
    right = labels.index(str(count))
    mine = next(i for i in range(len(labels)) if i != right)  # a wrong answer: the counts tell them apart

    options(pupil).nth(mine).click()
    expect(result(pupil)).to_have_text(t("hall.sent", "en"), timeout=FOLLOW)
    expect(options(pupil).nth(mine)).to_have_class(re.compile(r"\bmine\b"))
    for button in options(pupil).all():
        expect(button).to_be_disabled()
    tally = teacher.locator(".st-key-room_tally")
    expect(tally).to_contain_text(said("classroom.q.answered", n=1), timeout=FOLLOW)

    again = follow(room.laptop, url, 2)  # the same browser (its cookie), a second tab
    options(again).nth(right).click()
    expect(result(again)).to_have_text(t("hall.answered", "en"), timeout=FOLLOW)
    expect(options(again).nth(right)).not_to_have_class(re.compile(r"\bmine\b"))
    teacher.wait_for_timeout(TALLY_SECONDS * 1000 + 500)  # the tally has read the room again
    expect(tally).to_contain_text(said("classroom.q.answered", n=1))

    options(zh).nth(right).click()
    expect(result(zh)).to_have_text(t("hall.sent", "zh"), timeout=FOLLOW)
    expect(tally).to_contain_text(said("classroom.q.answered", n=2), timeout=FOLLOW)

    click(teacher, "room_reveal")
    counts = [str((i == mine) + (i == right)) for i in range(len(labels))]
    for page, lang in ((pupil, "en"), (zh, "zh"), (phone, "en"), (again, "en")):
        expect(result(page)).to_have_text(
            said("classroom.q.answer_count", lang, option=str(count)), timeout=FOLLOW
        )
        expect(options(page).nth(right)).to_have_class(re.compile(r"\banswer\b"))
        assert [b.get_attribute("data-count") for b in options(page).all()] == counts, lang
    expect(options(pupil).nth(mine)).to_have_class(re.compile(r"\bmine\b"))  # still theirs
    shown = teacher.locator(".st-key-room_result")
    expect(shown).to_contain_text(said("classroom.q.answer_count", option=str(count)), timeout=FOLLOW)
    expect(shown).to_contain_text(said("classroom.q.answered", n=2))
    room.watched.check()


# Text outside KaTeX's output that still looks like LaTeX source: a formula that was not drawn.
RAW_TEX = r"""(box) => {
  const out = [], walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode;
    if (node.parentElement.closest('.katex')) continue;
    if (/\\[a-zA-Z]+|\$|\^\{|_\{/.test(node.textContent)) out.push(node.textContent);
  }
  return out;
}"""


def _blocks(blocks: list[dict], kind: str) -> int:
    """How many blocks of ``kind`` (rows' parts included) a card or a solution has."""
    return sum(
        (b["kind"] == kind) + sum(_blocks(part, kind) for part in b.get("parts") or []) for b in blocks
    )


def _plain(markdown: str) -> str:
    return markdown.replace("**", "").replace("`", "")


def test_an_exercise_checks_the_typed_number_and_draws_the_worked_solution(room: Room, app_url: str):
    """On the encoder's slide the lecturer asks "Compute: …" (the score of a query and a key: the
    exercise ``core.teaching.exercises`` gives the lecturer's run). The exact answer gets the right verdict;
    a wrong number gets the wrong one, worded as ``figures.classroom.exercises.verdict_view`` words it,
    with every formula and table of its worked solution drawn (KaTeX, no LaTeX source left as text). The tally
    counts both checks; the reveal gives the answer."""
    run = lecture_run({"sentence": SENTENCE})
    (exercise,) = [e for e in exercises_for(run, 0) if e.kind == "attention_score"]
    teacher, code, url = lecture(room, app_url, f"/lecture?sentence={quote(SENTENCE)}&step=5", 5)
    right_page, wrong_page = follow(room.laptop, url, 5), follow(room.phone, url, 5)

    label = t("classroom.q.compute", "en", title=exercise_title(exercise, "en"))
    pick = teacher.locator(".st-key-room_question_pick")
    # Streamlit 1.67's selectbox is a React Aria combo box that filters as one types: typing the label
    # leaves one option to click (an opened list may not yet hold an option far down it: CI missed one)
    combo = pick.get_by_role("combobox")
    combo.click()
    combo.fill(label)
    teacher.get_by_role("option", name=label, exact=True).click()
    expect(pick.get_by_role("combobox")).to_have_value(label)
    settled(teacher)
    click(teacher, "room_ask")

    exact = f"{exercise.answer:.6f}"
    wrong = f"{exercise.answer + 1 + 10 * exercise.tolerance:.2f}"
    assert check(exercise, exact).correct and not check(exercise, wrong).correct  # the references agree
    for page, typed in ((right_page, exact), (wrong_page, wrong)):
        expect(page.locator("input#exercise_answer")).to_be_visible(timeout=FOLLOW)
        expect(question(page).locator(".card")).not_to_be_empty()
        page.locator("input#exercise_answer").fill(typed)
        page.locator("button#exercise_check").click()

    said_right = verdict_view(exercise, check(exercise, exact), exact, "en")
    expect(right_page.locator("p.verdict.right")).to_have_text(_plain(said_right["text"]), timeout=FOLLOW)
    expect(right_page.locator("#question_result .katex")).to_have_count(0)  # no solution for a hit

    said_wrong = verdict_view(exercise, check(exercise, wrong), wrong, "en")
    verdict = wrong_page.locator("p.verdict.wrong")
    expect(verdict).to_have_text(_plain(said_wrong["text"]), timeout=FOLLOW)
    solution = result(wrong_page)
    expect(solution).to_contain_text(said_wrong["solution_title"])
    latex, tables = _blocks(said_wrong["solution"], "latex"), _blocks(said_wrong["solution"], "table")
    assert latex >= 1, said_wrong["solution"]
    expect(solution.locator(".latex .katex")).to_have_count(latex)
    expect(solution.locator("table")).to_have_count(tables)
    expect(question(wrong_page).locator(".katex-error")).to_have_count(0)
    assert question(wrong_page).evaluate(RAW_TEX) == []

    tally = teacher.locator(".st-key-room_tally")
    expect(tally).to_contain_text(said("classroom.q.answered", n=2), timeout=FOLLOW)
    click(teacher, "room_reveal")
    answer = said("classroom.q.exercise_answer", value=f"{float(exercise.answer):.4g}")
    for page in (right_page, wrong_page):
        expect(result(page)).to_contain_text(answer, timeout=FOLLOW)
    room.watched.check()


# -- the end of a room; a dropped network; bad codes ----------------------------------------------------


def test_ending_the_room_tells_every_student_in_their_language(room: Room, app_url: str):
    teacher, code, url = lecture(room, app_url)
    pupils = {"en": follow(room.laptop, url, 3), "zh": follow(room.zh, url, 3, "zh")}
    click(teacher, "room_end")
    expect(teacher.locator(".st-key-room_code")).to_have_count(0, timeout=FOLLOW)
    for lang, page in pupils.items():
        expect(hall_text(page)).to_have_text(t("classroom.ended", lang, code=code), timeout=FOLLOW)
        expect(page.locator("h2#heading")).to_have_text("")
        expect(page.locator("#leave")).to_be_hidden()
        expect(question(page)).to_be_hidden()
    room.watched.check()


def test_a_student_whose_network_drops_catches_up_without_a_reload(room: Room, app_url: str):
    """The student's page reaches the app through a proxy; every connection is cut and new ones wait:
    after ~2 s the page says it is reconnecting. The lecturer moves on meanwhile; once the network is
    back the same page (no reload: a mark left on ``window`` survives) shows the lecturer's step, and
    follows the next one within FOLLOW."""
    teacher, code, _ = lecture(room, app_url)
    with CutProxy(urlsplit(app_url).port) as proxy:
        room.watched.allow(proxy.url)
        pupil = follow(room.laptop, f"{proxy.url}/r/{code}", 3)
        expect(hall_status(pupil)).to_have_text("")
        pupil.evaluate("() => { window.__beforeTheCut = true; }")

        proxy.hold()
        cut = time.monotonic()
        assert proxy.cut() >= 1  # the event stream at least
        expect(hall_status(pupil)).to_have_text(t("hall.reconnecting", "en"), timeout=FOLLOW)
        assert time.monotonic() - cut >= 1.8  # said after 2 s without the stream, not at the first error
        moves(teacher, "PageDown", 4)
        pupil.wait_for_timeout(QUIET)
        expect(pupil.locator("h2#heading")).to_have_text(heading(3))  # nothing reaches it

        proxy.release()
        follows(pupil, 4, timeout=FOLLOW)
        expect(hall_status(pupil)).to_have_text("")
        assert pupil.evaluate("() => window.__beforeTheCut") is True
        same_figure(pupil, teacher)
        moves(teacher, "PageDown", 5)
        follows(pupil, 5)
        assert pupil.evaluate("() => window.__beforeTheCut") is True
        room.watched.check()


def test_bad_and_unknown_room_codes_get_a_sentence_in_the_browser(room: Room, app_url: str):
    """The old address with a malformed code: the full Lecture page, saying so. A well-formed code of no
    room: forwarded to its hall page, which says there is no such room (in 中文 too). A malformed code on
    the hall's own address: a sentence, and no script of the code's runs."""
    page = open_lecture(room.laptop, f"{app_url}/lecture?room={quote('<script>')}", 1)
    expect(page.get_by_test_id("stAlertContentWarning")).to_contain_text(said("classroom.malformed"))
    expect(status(page)).to_have_count(0)
    assert "/r/" not in page.url and "room=" not in page.url

    page = room.laptop.new_page()
    page.goto(f"{app_url}/lecture?room=zzzzzz")
    expect(page).to_have_url(f"{app_url}/r/ZZZZZZ")
    expect(page.locator(".said")).to_have_text(t("hall.unknown", "en", code="ZZZZZZ"))
    page = room.zh.new_page()
    page.goto(f"{app_url}/lecture?room=ZZZZZZ&lang=zh")
    expect(page).to_have_url(f"{app_url}/r/ZZZZZZ?lang=zh")
    expect(page.locator(".said")).to_have_text(t("hall.unknown", "zh", code="ZZZZZZ"))

    page = room.phone.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(f"{app_url}/r/{quote('<img src=x onerror=alert(1)>')}")
    expect(page.locator(".said")).to_have_text(t("hall.bad_code", "en"))
    assert dialogs == [] and page.locator("img").count() == 0
    room.watched.check()


# -- the README's picture ------------------------------------------------------------------------------


def test_projector_and_a_chinese_phone_side_by_side(room: Room, app_url: str):
    """assets/screenshots/classroom.png: the projector (the lecturer, English, trained weights, the
    cross-attention step of 我们去北京) and a student's phone on the hall page in 中文, after the reveal
    of the slide's question; the README shows it."""
    query = f"/lecture?weights=trained&sentence={quote(SENTENCE)}&step=7"
    teacher, code, url = lecture(room, app_url, query, 7)
    phone = follow(room.phone, url, 7, "zh")
    # the label over the model's answer is our Markdown, drawn as on the projector (it showed its ** once)
    label = phone.locator("#code .label")
    expect(label).to_have_text(said("answer.greedy", "zh"))
    bold = re.search(r"\*\*(.+?)\*\*", t("answer.greedy", "zh")).group(1)
    expect(label.locator("strong")).to_have_text(bold)
    teacher.locator(".st-key-room_code").locator("xpath=ancestor::details//summary").first.click()  # fold it
    click(teacher, "room_ask")
    expect(options(phone).first).to_be_visible(timeout=FOLLOW)
    options(phone).first.click()
    expect(teacher.locator(".st-key-room_tally")).to_contain_text(
        said("classroom.q.answered", n=1), timeout=FOLLOW
    )
    click(teacher, "room_reveal")
    tally_chart = teacher.locator(".st-key-room_result [data-testid='stPlotlyChart']")
    expect(tally_chart).to_have_count(1, timeout=FOLLOW)
    expect(phone.locator("#question .options button.answer")).to_have_count(1, timeout=FOLLOW)
    expect(result(phone)).not_to_be_empty()
    settled(teacher)
    teacher.wait_for_timeout(800)  # the tally chart's bars finish their transition
    phone.locator("#question").scroll_into_view_if_needed()
    room.watched.check()
    path = SHOTS / "classroom.png"
    side_by_side(teacher.screenshot(), phone.screenshot(), path)
    absent = [t("hall.reconnecting", "zh"), t("hall.connecting", "zh", code=code), "Traceback"]
    record_screenshot(path, [teacher, phone], absent=absent)


def side_by_side(left: bytes, right: bytes, path: Path, gap: int = 24) -> None:
    """Two screenshots next to each other on a grey band, as a README picture."""
    from PIL import Image

    a, b = Image.open(io.BytesIO(left)), Image.open(io.BytesIO(right))
    out = Image.new("RGB", (a.width + gap + b.width, max(a.height, b.height)), (120, 120, 120))
    out.paste(a, (0, 0))
    out.paste(b, (a.width + gap, 0))
    out.save(path, optimize=True)
