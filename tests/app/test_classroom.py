"""Rooms on the Lecture page (ui/classroom/panels.py) through AppTest: the lecturer starts a room and shows
its code, address (``/r/CODE``) and QR code, and drives it; a student who left the hall page for this one
(``?rejoin=CODE``) explores alone with Rejoin one click away and never drives the room; bad codes; the
presenter's cookie. Following itself is the hall's (tests/ui/hall, tests/browser/test_classroom.py).

AppTest runs every page in this process, so a lecturer's AppTest and a student's share the one store
(``ui.classroom.panels.room_store``), as two browsers on one server do."""

from __future__ import annotations

import pytest
from apphelpers import assert_clean, open_page

import ui.classroom.panels as classroom
from i18n import t
from ui.classroom.rooms import IDLE_SECONDS, MemoryStore, parse_code
from ui.page.settings import validate

PAGE = "pages/lecture.py"


def heading(step: int, name: str, lang: str = "en", total: int = 13) -> str:
    return t("lecture.heading", lang, step=step, total=total, title=t(f"lecture.{name}.title", lang))


def shown(at) -> str:
    return at.header[0].value


def keyed(at, key: str):
    """The container (or widget) drawn with ``key``: Streamlit ends its element id with ``-key``."""
    found = []

    def walk(node):
        for child in getattr(node, "children", {}).values():
            proto = getattr(child, "proto", None)
            if str(getattr(proto, "id", "") or "").endswith(f"-{key}"):
                found.append(child)
            walk(child)

    walk(at.main)
    assert len(found) == 1, f"{len(found)} elements keyed {key!r}"
    return found[0]


def texts(node) -> list[str]:
    """The text of every element under ``node`` (Markdown, code, captions …)."""
    out = []
    for child in getattr(node, "children", {}).values():
        value = getattr(child, "value", None) if type(child).__name__ != "Block" else None
        if isinstance(value, str):
            out.append(value)
        out.extend(texts(child))
    return out


def of_type(node, name: str) -> list:
    found = []
    for child in getattr(node, "children", {}).values():
        if type(child).__name__ == name:
            found.append(child)
        found.extend(of_type(child, name))
    return found


def click(at, key: str):
    return at.button(key=key).click().run()


def start_room(query: dict[str, str] | None = None):
    """A lecturer's Lecture page with a room started: (AppTest, room code)."""
    at = open_page(PAGE, query)
    click(at, "room_start")
    assert_clean(at)
    (code,) = texts(keyed(at, "room_code_big"))
    assert parse_code(code) == code
    return at, code


def left(code: str, lang: str | None = None, param: str = "rejoin", **query: str):
    """A student's full page: the hall page's Leave (``?rejoin=CODE`` and the room's settings), or
    ``?room=CODE`` where the server's forward did not run (AppTest runs the page alone)."""
    query = {param: code, **({"lang": lang} if lang else {}), **query}
    at = open_page(PAGE, query, weights=None)
    assert_clean(at)
    return at


def links(at) -> list[tuple[str, str]]:
    return [(b.proto.label, b.proto.url) for b in at.get("link_button")]


def said(at) -> list[str]:
    """The page's warnings: what happened to a room (the sidebar's own notes are st.info)."""
    return [m.value for m in at.warning]


def sentence(at) -> str:
    return at.text_area(key="sentence").value


class Spy(MemoryStore):
    """A MemoryStore that writes down the name of every method called on it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def __getattribute__(self, name):
        if not name.startswith("_") and name != "calls":
            object.__getattribute__(self, "calls").append(name)
        return object.__getattribute__(self, name)


@pytest.fixture
def store(monkeypatch):
    """A fresh store of this test's own (the app's is one per process)."""
    fresh = Spy()
    monkeypatch.setattr(classroom, "_STORE", fresh)
    return fresh


# -- the lecturer ------------------------------------------------------------------------------------


def test_the_lecturer_starts_a_room_with_its_code_url_and_qr_code(store):
    at, code = start_room({"step": "3", "sentence": "the cat sat"})
    panel = keyed(at, "room_code")
    assert code in texts(panel)
    assert f"/r/{code}" in texts(panel)  # AppTest has no browser URL: the path
    assert len(of_type(panel, "Image")) == 1  # the QR code
    assert shown(at) == heading(3, "embeddings")
    room = store.state(code)
    assert room.step == 3
    assert validate(room.settings).settings.sentence == "the cat sat"
    assert texts(keyed(at, "room_pin")) == [store.pin(code, at.session_state[classroom.PRESENTER].secret)]
    assert not at.query_params.get("room")  # the lecturer's URL names no room, nor any secret
    assert not [m for m in said(at) if "room" in m.lower()]


def test_the_student_url_uses_the_lecturers_host_and_the_qr_code_is_a_png(monkeypatch):
    import streamlit as st

    for page, address in [("https://uni.example:8501/lecture?step=3", "https://uni.example:8501/r/K7MQ2P"),
                          ("http://10.0.0.5:8501/", "http://10.0.0.5:8501/r/K7MQ2P"),
                          ("https://uni.example/glassbox/lecture", "https://uni.example/glassbox/r/K7MQ2P")]:
        monkeypatch.setattr(type(st.context), "url", property(lambda self, page=page: page))
        assert classroom.student_url("K7MQ2P") == address
    assert classroom.qr_png("http://10.0.0.5:8501/r/K7MQ2P").startswith(b"\x89PNG")


def test_every_step_and_setting_the_lecturer_shows_goes_to_the_room(store):
    at, code = start_room()
    version = store.version(code)
    click(at, "lecture_next")
    assert store.state(code).step == 2 and store.version(code) == version + 1
    at.text_area(key="sentence").input("hello world").run()
    assert validate(store.state(code).settings).settings.sentence == "hello world"
    at.run()  # a redraw that changes nothing does not move the room's version
    assert store.version(code) == version + 2
    click(at, "room_end")
    assert_clean(at)
    assert said(at) == [t("classroom.you_ended", "en", code=code)]
    assert store.state(code).ended


# -- a student on the full page ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_student_who_left_the_hall_explores_alone_and_rejoin_links_back(store, lang):
    """The hall page's Leave opens this page with the room's settings, its step and ``rejoin``: the
    slide the student left, a note that they explore alone, and Rejoin to the hall page in their
    language. The room is not asked anything: a full page costs the room store nothing."""
    lecturer, code = start_room({"step": "3", "sentence": "the cat sat"})
    store.calls.clear()
    student = left(code, lang, step="3", sentence="the cat sat")
    assert shown(student) == heading(3, "embeddings", lang) and sentence(student) == "the cat sat"
    assert t("classroom.alone", lang, code=code) in [m.value for m in student.info]
    assert links(student) == [(t("classroom.rejoin", lang), f"/r/{code}?lang={lang}")]
    click(student, "lecture_next")  # the student's own steps and settings: the room does not move
    student.text_area(key="sentence").input("my own").run()
    assert_clean(student)
    assert shown(student) == heading(4, "positional", lang) and sentence(student) == "my own"
    assert links(student) == [(t("classroom.rejoin", lang), f"/r/{code}?lang={lang}")]  # kept on every run
    assert store.calls == []
    assert classroom.PRESENTER not in student.session_state
    assert "room_end" not in [b.key for b in student.button]  # nothing on the page can end the room
    assert store.state(code).step == 3


def test_a_room_address_that_reaches_the_page_links_to_the_hall(store):
    """``/lecture?room=CODE`` is forwarded by the server before the page runs (tests/ui/hall); a page
    that is run with it anyway (a link followed inside the app) links to the room's hall page."""
    lecturer, code = start_room({"step": "2"})
    student = left(code, "zh", param="room")
    assert links(student) == [(t("classroom.rejoin", "zh"), f"/r/{code}?lang=zh")]
    assert classroom.PRESENTER not in student.session_state


@pytest.mark.parametrize("param", ["rejoin", "room"])
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("raw", ["", "abc", "K7MO2P", "<script>", "K7MQ2P" * 20, "ＫＭ２３４５"])
def test_a_malformed_code_is_said_and_the_lecture_is_shown(store, lang, raw, param):
    at = left(raw, lang, param=param)
    assert said(at) == [t("classroom.malformed", lang)]
    assert shown(at) == heading(1, "overview", lang)
    assert not at.query_params.get(param)
    assert links(at) == [] and "room_start" in [b.key for b in at.button]
    assert store.calls == []  # nothing to look up


def test_an_expired_room_is_said_to_its_lecturer(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(classroom, "_STORE", MemoryStore(now=lambda: now[0]))
    lecturer, code = start_room()
    now[0] += IDLE_SECONDS + 1
    lecturer.run()  # the lecturer is told, and can start a new room
    assert said(lecturer) == [t("classroom.expired", "en", code=code)]
    assert "room_start" in [b.key for b in lecturer.button]
    assert_clean(lecturer)


# -- the lecturer on another device ---------------------------------------------------------------------


def submit(at):
    (button,) = [b for b in at.button if b.proto.is_form_submitter]
    return button.click().run()


def test_the_lecturer_takes_the_room_over_on_another_device_with_the_pin(store):
    lecturer, code = start_room({"step": "4", "sentence": "the cat sat"})
    (pin,) = texts(keyed(lecturer, "room_pin"))
    laptop = open_page(PAGE)
    laptop.text_input(key="room_recover_code").input(code.lower())
    laptop.text_input(key="room_recover_pin").input("000000" if pin != "000000" else "111111")
    submit(laptop)
    assert said(laptop) == [t("classroom.wrong_pin", "en", code=code)]
    laptop.text_input(key="room_recover_pin").input(pin)
    submit(laptop)
    assert_clean(laptop)
    assert t("classroom.recovered", "en", code=code) in said(laptop)
    assert shown(laptop) == heading(4, "positional") and sentence(laptop) == "the cat sat"
    assert code in texts(keyed(laptop, "room_code"))
    click(laptop, "lecture_next")
    assert store.state(code).step == 5


# -- the presenter's cookie: a reload keeps the lecturer the presenter ---------------------------------


def cookie_scripts(at) -> list[str]:
    return [text for text in texts(at.main) if "document.cookie" in text]


def reloaded(monkeypatch, cookies: dict[str, str], query: dict[str, str] | None = None):
    """A new session (a reload) of a browser that holds ``cookies``."""
    monkeypatch.setattr(classroom, "_cookie", lambda name: cookies.get(name))
    return open_page(PAGE, query)


def test_starting_a_room_writes_the_presenter_cookie_and_a_reload_restores_the_presenter(store, monkeypatch):
    lecturer, code = start_room({"step": "3"})
    secret = lecturer.session_state[classroom.PRESENTER].secret
    (script,) = cookie_scripts(lecturer)
    assert f"glassbox_presenter={code}.{secret};" in script and "SameSite=Strict" in script
    assert secret not in student_url_of(lecturer)  # the secret is in the cookie, never in the URL
    again = reloaded(monkeypatch, {"glassbox_presenter": f"{code}.{secret}"}, {"step": "3"})
    assert_clean(again)
    assert again.session_state[classroom.PRESENTER].code == code
    assert texts(keyed(again, "room_code_big")) == [code]
    click(again, "lecture_next")
    assert store.state(code).step == 4  # the reloaded page drives the room


def test_the_newest_presenter_page_drives_and_the_older_one_says_so_and_stops(store, monkeypatch):
    """Two tabs of the lecturer's browser (one cookie): the newest, at step 8, takes the room over; the
    older one, at step 3, no longer sends its step (its keep-alive, its redraws, its keys), says why,
    and takes the room back with one click. A second device taking over with the PIN does the same."""
    first, code = start_room({"step": "3"})
    secret = first.session_state[classroom.PRESENTER].secret
    second = reloaded(monkeypatch, {"glassbox_presenter": f"{code}.{secret}"}, {"step": "8"})
    assert_clean(second)
    assert store.state(code).step == 8
    version = store.version(code)
    for _ in range(3):  # the older tab's runs: a redraw, its head count's keep-alive
        first.run()
        assert_clean(first)
        assert store.state(code).step == 8 and store.version(code) == version
    assert t("lecture.superseded", code=code) in said(first)
    assert "room_end" not in [b.key for b in first.button]  # nothing of the room's is driven from here
    click(first, "lecture_next")  # the older tab's keys move that page alone
    assert shown(first) == heading(4, "positional")
    assert store.state(code).step == 8
    second.run()
    assert store.state(code).step == 8 and t("lecture.superseded", code=code) not in said(second)

    click(first, "room_present_here")  # "Present from here": the older tab is the newest again
    assert_clean(first)
    assert store.state(code).step == 4 and t("lecture.superseded", code=code) not in said(first)
    second.run()
    assert t("lecture.superseded", code=code) in said(second)
    assert store.state(code).step == 4

    laptop = reloaded(monkeypatch, {})  # another device (no cookie), with the PIN: it takes over too
    laptop.text_input(key="room_recover_code").input(code)
    laptop.text_input(key="room_recover_pin").input(store.pin(code, secret))
    submit(laptop)
    click(laptop, "lecture_next")
    assert store.state(code).step == 5
    first.run()
    assert t("lecture.superseded", code=code) in said(first)
    assert store.state(code).step == 5


def student_url_of(at) -> str:
    return " ".join(texts(keyed(at, "room_code")))


@pytest.mark.parametrize(
    "cookie", ["{code}.wrong-secret", "{code}", "ZZZZZZ.{secret}", "{code}.{secret}x", "."]
)
def test_a_cookie_that_is_not_the_presenters_gives_nothing(store, monkeypatch, cookie):
    lecturer, code = start_room()
    secret = lecturer.session_state[classroom.PRESENTER].secret
    other = reloaded(monkeypatch, {"glassbox_presenter": cookie.format(code=code, secret=secret)})
    assert_clean(other)
    assert classroom.PRESENTER not in other.session_state
    assert "room_start" in [b.key for b in other.button]


def test_a_student_address_on_the_lecturers_browser_is_no_presenter_page(store, monkeypatch):
    lecturer, code = start_room()
    secret = lecturer.session_state[classroom.PRESENTER].secret
    view = reloaded(monkeypatch, {"glassbox_presenter": f"{code}.{secret}"}, {"rejoin": code})
    assert classroom.PRESENTER not in view.session_state
    assert links(view) == [(t("classroom.rejoin", "en"), f"/r/{code}?lang=en")]


def test_ending_the_room_deletes_the_cookie_and_a_reload_is_no_presenter(store, monkeypatch):
    lecturer, code = start_room()
    secret = lecturer.session_state[classroom.PRESENTER].secret
    click(lecturer, "room_end")
    assert any("glassbox_presenter=;" in s and "max-age=0" in s for s in cookie_scripts(lecturer))
    again = reloaded(monkeypatch, {"glassbox_presenter": f"{code}.{secret}"})
    assert classroom.PRESENTER not in again.session_state
    assert any("glassbox_presenter=;" in s for s in cookie_scripts(again))  # a stale cookie is deleted


def test_the_cookie_script_writes_only_our_own_characters():
    """``write_cookies`` puts names and values into a script: anything but [A-Za-z0-9_.-] is dropped."""
    from streamlit.testing.v1 import AppTest

    def page():
        import streamlit as st

        import ui.classroom.panels as c

        for value in ('ok.VALUE-1_2', 'x";alert(1);"', "</script><b>", "a b", "重庆", ""):
            c._set_cookie("glassbox_member", value)
        c._set_cookie('bad"name', "ok")
        c.write_cookies()
        st.session_state["_written"] = True

    at = AppTest.from_function(page).run()
    (script,) = cookie_scripts(at)
    assert "glassbox_member=ok.VALUE-1_2;" in script and "glassbox_member=;" in script
    # a block of its own: the next write on the page declares `secure` again (a SyntaxError at the top
    # level, and that cookie unwritten; tests/browser/test_classroom.py sees the page's script errors)
    assert script.startswith("<script>{ const secure") and script.endswith(" }</script>")
    for bad in ("alert", "</script>", "<b>", "a b", "重庆", 'bad"name'):
        assert bad not in script.replace("<script>", "").removesuffix("</script>"), bad
