"""One bad model folder never takes the app down (a real server, a real Chromium): GLASSBOX_MODELS names
a folder whose model.safetensors header says ``"shape": [1e999]`` (with an unsupported model_type, so
the scan counts its parameters from that header) and one whose files are unreadable links and sparse
giants. Every page and the Lecture page draw without a traceback; a room started there is followed on
its hall page (``/r/CODE``, also reached by the old student address ``/lecture?room=CODE``), whose
slides the server builds without the lecturer's session, and an unknown room's address says so; the
sidebar still names the bad folder among those found but not usable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browserhelpers import settled
from classroomhelpers import LECTURER, follow, follows, hall_text, moves, open_lecture, start_room
from playwright.sync_api import Browser, Page, expect
from serverprocess import Server, free_port, models_env, streamlit_command

from i18n import t
from ui.page.nav import PAGES

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
HEADER = b'{"w": {"dtype": "F32", "shape": [1e999], "data_offsets": [0, 4]}}'


@pytest.fixture(scope="module")
def bad_url(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-models")
    overflow = root / "overflow"
    overflow.mkdir()
    (overflow / "config.json").write_text('{"model_type": "t5", "architectures": ["T5Model"]}')
    (overflow / "model.safetensors").write_bytes(len(HEADER).to_bytes(8, "little") + HEADER + b"\0" * 4)
    giant = root / "giant"
    giant.mkdir()
    (giant / "config.json").write_text('{"model_type": "gpt2", "n_embd": 1e999}')
    with open(giant / "model.safetensors", "wb") as f:
        f.write((2**63).to_bytes(8, "little"))
        f.truncate(2**30)  # sparse
    (giant / "vocab.json").symlink_to("/etc/passwd")
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "streamlit.log"
    server = Server(streamlit_command(port), port, log, env=models_env(root))
    try:
        yield server.url
    finally:
        server.stop()


def assert_page_drawn(page: Page) -> None:
    settled(page, TIMEOUT)
    expect(page.locator("h1").first).to_be_attached(timeout=TIMEOUT)  # the Lecture page hides its own
    expect(page.get_by_test_id("stException")).to_have_count(0)
    body = page.locator("body").inner_text()
    assert "Traceback" not in body and "OverflowError" not in body


@pytest.mark.parametrize("script", [p[0] for p in PAGES])
def test_every_page_draws(page: Page, bad_url: str, script: str):
    stem = "" if script == PAGES[0][0] else Path(script).stem
    page.goto(f"{bad_url}/{stem}?weights=random")
    assert_page_drawn(page)


@pytest.fixture
def people(browser: Browser, browser_context_args):
    """Browsers of their own (a lecturer's presenter cookie stays out of the run's shared context)."""
    made = []

    def make():
        made.append(browser.new_context(**browser_context_args))
        return made[-1]

    yield make
    for context in made:
        context.close()


def test_a_students_room_url_draws_and_the_folder_is_named_unusable(page: Page, people, bad_url: str):
    teacher = open_lecture(people(), bad_url + LECTURER, 3)
    code, url = start_room(teacher)
    student = people()
    pupil = follow(student, f"{bad_url}/lecture?room={code}", 3)  # the old address: forwarded to the hall
    assert pupil.url == url
    moves(teacher, "PageDown", 4)
    follows(pupil, 4)
    expect(hall_text(pupil)).not_to_be_empty()
    assert "Traceback" not in pupil.locator("body").inner_text()
    unknown = student.new_page()
    assert unknown.goto(f"{bad_url}/lecture?room=ABCDEF").status == 404
    expect(unknown.locator("body")).to_contain_text(t("hall.unknown", "en", code="ABCDEF"))
    page.goto(f"{bad_url}/attention?weights=random")
    assert_page_drawn(page)
    expect(page.get_by_test_id("stSidebar").get_by_text("hf:overflow")).to_be_visible(timeout=TIMEOUT)
