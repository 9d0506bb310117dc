"""Rooms on the Lecture page (ui/classroom/panels.py) through AppTest: the lecturer starts a room and shows
its code, URL and QR code; a student who opens the URL sees the lecturer's step and settings and
follows them; Leave / Rejoin; bad, unknown, ended and expired codes; a student never drives the room.

AppTest runs every page in this process, so a lecturer's AppTest and a student's share the one store
(``ui.classroom.panels.room_store``), as two browsers on one server do."""

from __future__ import annotations

import pytest
from apphelpers import assert_clean, open_page

import ui.classroom.panels as classroom
from i18n import t
from ui.classroom.rooms import IDLE_SECONDS, MemoryStore, is_id, parse_code
from ui.page.settings import validate

PAGE = "pages/lecture.py"
STUDENT_CALLS = {"state", "version", "seen", "answer", "tally"}  # all a student's page may ask of the store


def heading(step: int, name: str, lang: str = "en", total: int = 12) -> str:
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


def join(code: str, lang: str | None = None):
    """A student opening the student URL: ``/lecture?room=CODE`` and nothing else (no weights)."""
    query = {"room": code, **({"lang": lang} if lang else {})}
    at = open_page(PAGE, query, weights=None)
    assert_clean(at)
    return at


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
    assert f"/lecture?room={code}" in texts(panel)  # AppTest has no browser URL: the page's path
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

    monkeypatch.setattr(type(st.context), "url", property(lambda self: "https://uni.example:8501/lecture"))
    assert classroom.student_url("K7MQ2P") == "https://uni.example:8501/lecture?room=K7MQ2P"
    monkeypatch.setattr(type(st.context), "url", property(lambda self: "http://10.0.0.5:8501/"))
    assert classroom.student_url("K7MQ2P") == "http://10.0.0.5:8501/lecture?room=K7MQ2P"
    assert classroom.qr_png("http://10.0.0.5:8501/lecture?room=K7MQ2P").startswith(b"\x89PNG")


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


# -- a student -----------------------------------------------------------------------------------------


def test_a_student_sees_the_lecturers_step_and_sentence_and_follows_them(store):
    lecturer, code = start_room({"step": "2", "sentence": "the cat sat", "d_model": "32"})
    student = join(code)
    assert shown(student) == heading(2, "tokens")
    assert sentence(student) == "the cat sat"
    assert student.session_state["d_model"] == 32 and student.session_state["weights"] == "random"
    assert t("classroom.following", "en", code=code) in [m.value for m in student.info]
    assert store.present(code) == 1  # the student is counted
    lecturer.run()
    assert lecturer.metric[0].value == "1"

    click(lecturer, "lecture_next")
    lecturer.text_area(key="sentence").input("a dog ran").run()
    student.run()
    assert shown(student) == heading(3, "embeddings")
    assert sentence(student) == "a dog ran"
    assert student.query_params.get("step") in ("3", ["3"])


def test_leave_stops_following_and_rejoin_follows_again(store):
    lecturer, code = start_room()
    student = join(code)
    click(student, "room_leave")
    assert t("classroom.alone", "en", code=code) in [m.value for m in student.info]
    click(lecturer, "lecture_next")
    student.run()
    assert shown(student) == heading(1, "overview")  # alone: the lecturer's step 2 does not come
    click(student, "room_rejoin")
    assert shown(student) == heading(2, "tokens")
    assert t("classroom.following", "en", code=code) in [m.value for m in student.info]
    assert_clean(student)


def test_a_student_who_moves_or_changes_a_setting_explores_alone(store):
    lecturer, code = start_room({"sentence": "the cat sat"})
    student = join(code)
    click(student, "lecture_next")
    assert shown(student) == heading(2, "tokens")
    assert said(student)[0] == t("classroom.left_step", "en", code=code)
    click(student, "room_rejoin")
    assert shown(student) == heading(1, "overview")
    student.text_area(key="sentence").input("my own").run()
    assert said(student)[0] == t("classroom.left_settings", "en", code=code)
    assert sentence(student) == "my own"
    assert validate(store.state(code).settings).settings.sentence == "the cat sat"
    assert_clean(student)


def test_a_students_page_never_drives_the_room(store):
    lecturer, code = start_room()
    click(lecturer, "lecture_next")
    before = store.state(code)
    store.calls.clear()
    student = join(code)
    student.query_params["step"] = "7"  # tampering with the URL
    student.run()
    assert shown(student) == heading(2, "tokens")
    click(student, "room_leave")
    student.query_params["step"] = "9"
    student.run()
    click(student, "room_rejoin")
    assert_clean(student)
    assert set(store.calls) <= STUDENT_CALLS, store.calls
    assert store.state(code) == before
    assert classroom.PRESENTER not in student.session_state
    assert "room_end" not in [b.key for b in student.button]  # nothing on the page can end the room


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lecturers_language_is_not_imposed_on_a_student(store, lang):
    other = "zh" if lang == "en" else "en"
    lecturer, code = start_room({"lang": other, "step": "4"})
    student = join(code, lang)
    assert shown(student) == heading(4, "positional", lang)
    assert t("classroom.following", lang, code=code) in [m.value for m in student.info]
    assert student.session_state["lang"] == lang


# -- bad codes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("raw", ["", "abc", "K7MO2P", "<script>", "K7MQ2P" * 20, "ＫＭ２３４５"])
def test_a_malformed_code_is_said_and_the_lecture_is_shown(store, lang, raw):
    at = join(raw, lang)
    assert said(at) == [t("classroom.malformed", lang)]
    assert shown(at) == heading(1, "overview", lang)
    assert not at.query_params.get("room")
    assert store.calls == []  # nothing to look up


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_unknown_code_is_said_and_the_lecture_is_shown(store, lang):
    at = join("K7M-Q2P", lang)
    assert said(at) == [t("classroom.unknown", lang, code="K7MQ2P")]
    assert shown(at) == heading(1, "overview", lang)
    at.run()  # said once; the page goes on on its own
    assert said(at) == [] and shown(at) == heading(1, "overview", lang)
    assert_clean(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_ended_room_is_said_to_its_students_and_to_newcomers(store, lang):
    lecturer, code = start_room({"step": "3"})
    student = join(code, lang)
    click(lecturer, "room_end")
    student.run()
    assert said(student) == [t("classroom.ended", lang, code=code)]
    assert shown(student) == heading(3, "embeddings", lang)  # where the lecture was: the student goes on
    assert "room_rejoin" not in [b.key for b in student.button]
    late = join(code, lang)
    assert said(late) == [t("classroom.ended", lang, code=code)]
    assert shown(late) == heading(1, "overview", lang)
    assert_clean(student)


def test_an_expired_room_is_said(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(classroom, "_STORE", MemoryStore(now=lambda: now[0]))
    lecturer, code = start_room()
    student = join(code)
    now[0] += IDLE_SECONDS + 1
    student.run()
    assert said(student) == [t("classroom.expired", "en", code=code)]
    lecturer.run()  # the lecturer is told too, and can start a new room
    assert said(lecturer) == [t("classroom.expired", "en", code=code)]
    assert "room_start" in [b.key for b in lecturer.button]
    assert_clean(student)
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


def test_a_student_url_on_the_lecturers_browser_shows_the_students_view(store, monkeypatch):
    lecturer, code = start_room()
    secret = lecturer.session_state[classroom.PRESENTER].secret
    view = reloaded(monkeypatch, {"glassbox_presenter": f"{code}.{secret}"}, {"room": code})
    assert classroom.PRESENTER not in view.session_state
    assert t("classroom.following", code=code) in [m.value for m in view.info]


def test_ending_the_room_deletes_the_cookie_and_a_reload_is_no_presenter(store, monkeypatch):
    lecturer, code = start_room()
    secret = lecturer.session_state[classroom.PRESENTER].secret
    click(lecturer, "room_end")
    assert any("glassbox_presenter=;" in s and "max-age=0" in s for s in cookie_scripts(lecturer))
    again = reloaded(monkeypatch, {"glassbox_presenter": f"{code}.{secret}"})
    assert classroom.PRESENTER not in again.session_state
    assert any("glassbox_presenter=;" in s for s in cookie_scripts(again))  # a stale cookie is deleted


def test_a_students_member_id_is_kept_in_a_cookie_so_a_reload_does_not_vote_twice(store, monkeypatch):
    lecturer, code = start_room()
    student = join(code)
    member = student.session_state[classroom.MEMBER]
    assert any(f"glassbox_member={member};" in s for s in cookie_scripts(student))
    again = reloaded(monkeypatch, {"glassbox_member": member}, {"room": code})
    assert again.session_state[classroom.MEMBER] == member
    assert not cookie_scripts(again)  # nothing new to write


@pytest.mark.parametrize("cookie", ["a.b", ".", "a" * 64 + ".", "..--__"[:3] + "."])
def test_a_member_cookie_the_store_refuses_is_replaced_by_a_new_id(store, monkeypatch, cookie):
    """A member cookie edited by hand passes the cookie check (codes, ids, secrets) but not the store's
    id check: the page must not carry it to the store (which refused it on every poll, and each refusal
    reran the page, without end), but draw the slide and write a new id."""
    lecturer, code = start_room({"step": "3"})
    student = reloaded(monkeypatch, {"glassbox_member": cookie}, {"room": code})
    assert_clean(student)
    member = student.session_state[classroom.MEMBER]
    assert member != cookie and is_id(member)
    assert any(f"glassbox_member={member};" in s for s in cookie_scripts(student))
    assert shown(student) == heading(3, "embeddings")
    assert t("classroom.following", code=code) in [m.value for m in student.info]
    assert store.present(code) == 1  # the new id is counted


def test_a_followers_look_reruns_the_page_only_for_a_change_of_the_room(store, monkeypatch):
    """The poll's look at the room reruns the page when the room moved or is gone, never for a refusal
    the page's own run would meet again (that rerun would come back to the same refusal, forever)."""
    lecturer, code = start_room({"step": "3"})
    reruns = []
    monkeypatch.setattr(classroom.st, "rerun", lambda **kwargs: reruns.append(kwargs))
    version = store.version(code)
    classroom._look(code, "bad.member", version)  # the store refuses the id (BadInput)
    assert reruns == []
    classroom._look(code, "member-1", version)  # nothing changed
    assert reruns == []
    classroom._look(code, "member-1", version - 1)  # the room moved
    assert reruns == [{"scope": "app"}]
    store.end(code, lecturer.session_state[classroom.PRESENTER].secret)
    classroom._look(code, "member-1", version)  # ended: the page's run says so and stops following
    assert reruns == [{"scope": "app"}] * 2


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
    for bad in ("alert", "</script>", "<b>", "a b", "重庆", 'bad"name'):
        assert bad not in script.replace("<script>", "").removesuffix("</script>"), bad
