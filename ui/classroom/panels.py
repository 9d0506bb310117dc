"""Rooms on the Lecture page: the lecturer's side of ``ui/classroom/rooms.py`` in Streamlit.

    settings = ui.page_setup(...)
    room_panel()                  # the lecturer: code, address, QR, PIN, who is here; else Start / Rejoin
    publish(step, settings)       # the lecturer: the room now shows this step and these settings
    question_panel(run)           # the lecturer's open question (ui/classroom/quiz.py): tally and Reveal
    ask_panel(run, step_name)     # the lecturer: ask the room about the model on screen
    notify_followers()            # last: the room's followers get the new slide (ui/hall/broadcast.py)

Students follow on ``/r/CODE`` (``ui/hall/``: each slide by broadcast), not on this page. Its Leave
opens this page with ``?rejoin=CODE``: Rejoin links back. ``?room=CODE``, the address of earlier
sessions, is forwarded to ``/r/CODE`` (``ui.hall.routes.Forward``). The lecturer's secret lives in
``st.session_state`` and a cookie, never in a URL.
Decisions (who holds what, several servers, outages): docs/decisions.md, ui/classroom/panels.py.
"""

from __future__ import annotations

import functools
import io
import math
import os
import re
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

import streamlit as st

from ui.classroom import quiz
from ui.classroom.clients import client
from ui.classroom.rooms import (
    EXPIRED,
    IDLE_SECONDS,
    BadInput,
    MemoryStore,
    NotPresenter,
    RoomEnded,
    RoomError,
    RoomState,
    RoomStore,
    Superseded,
    TooMany,
    Unavailable,
    UnknownRoom,
    parse_code,
)
from ui.hall.broadcast import HALL, SEEN_SECONDS
from ui.page.lang import STORE, current_lang, t
from ui.page.settings import Settings, to_query, validate_in
from ui.page.sidebar import NOTICES, SENTENCE_OWN

REDIS_URL = "GLASSBOX_REDIS_URL"  # e.g. redis://127.0.0.1:6379/0: rooms shared by several servers


def _make_store() -> RoomStore:
    """This server's own rooms (``MemoryStore``), or Redis's when ``GLASSBOX_REDIS_URL`` names one; then
    this server also hears the changes other servers announce and wakes its followers."""
    url = os.environ.get(REDIS_URL, "").strip()
    if not url:
        return MemoryStore()
    from ui.classroom.rooms_redis import RedisStore  # noqa: PLC0415 (the redis client only when it is used)

    store = RedisStore(url)
    store.listen(HALL.notify, HALL.notify_all)  # another server's change: its followers here look now
    return store


# One store per process: every session of this server sees the same rooms.
_STORE: RoomStore = _make_store()

PRESENTER = "_glassbox_room_presenter"  # Presenter: this session drives that room
ROOM = "_glassbox_room"  # the code of the room this student left for this page (Rejoin returns to it)
JUMP = "_glassbox_room_jump"  # the step a lecturer who took a room over goes to, once
NOTICE = "_glassbox_room_notice"  # (i18n key, values): said once, on the next draw of the panel
PARAM = "room"  # the student address of earlier sessions, /lecture?room=CODE: forwarded to /r/CODE
REJOIN = "rejoin"  # /lecture?...&rejoin=CODE: a student who left room CODE's hall page for this one
COOKIES = "_glassbox_room_cookies"  # [(name, value, max-age)]: written by this run's page
FIRST_RUN = "_glassbox_room_first_run"  # set once a session's first run read its cookies
PRESENTER_COOKIE = "glassbox_presenter"  # "CODE.SECRET": the lecturer's right survives a reload
COOKIE_SECONDS = IDLE_SECONDS  # a cookie outlives no room
_COOKIE_VALUE = re.compile(r"[A-Za-z0-9_.-]{1,300}")  # codes, ids and token_urlsafe secrets only

PRESENT_WITHIN = 2 * SEEN_SECONDS + 5  # a follower's stream says it is there every SEEN_SECONDS
COUNT_SECONDS = 3.0  # the lecturer's head count (and the room's keep-alive)
PUBLISHED = "_glassbox_room_published"  # the room's version after this lecturer's last publish
ON_SCREEN = "_glassbox_room_on_screen"  # (step, settings' URL values) the lecturer's page drew last
WAKE = "_glassbox_room_wake"  # a room whose followers hear of this run's change once the page is drawn
AWAY_SAID = "_glassbox_room_away_said"  # the lecturer's page says the store is away (until it answers)
RECOVER_SAID = "_glassbox_room_recover_said"  # (i18n key, values): what the last take-over try got
TOO_MANY = {"rooms": "classroom.too_many_rooms", "full": "classroom.full"}  # TooMany.reason -> i18n key
SUPERSEDED = "_glassbox_room_superseded"  # True: a newer tab or device of the lecturer presents the room


def room_store() -> RoomStore:
    """The store of every room: this process's, or the one shared through Redis (``_make_store``)."""
    return _STORE


HALL.connect(room_store)  # the lecture hall's followers read the same rooms


@dataclass(frozen=True)
class Presenter:
    code: str
    secret: str = field(repr=False)
    claim: int | None = None  # this page's claim of the room (RoomStore.claim); None: not made yet


def _tell(key: str, **values: object) -> None:
    st.session_state[NOTICE] = (key, values)


def _error_key(error: RoomError) -> str:
    """The i18n key of a room's refusal (the store's own messages are English only)."""
    if isinstance(error, Unavailable):
        return "classroom.unavailable"
    if isinstance(error, RoomEnded):
        return "classroom.expired" if error.reason == EXPIRED else "classroom.ended"
    if isinstance(error, UnknownRoom):
        return "classroom.unknown"
    if isinstance(error, TooMany):
        return TOO_MANY.get(error.reason, "classroom.pin_locked")
    if isinstance(error, NotPresenter):
        return "classroom.wrong_pin"
    return "classroom.malformed" if isinstance(error, BadInput) else "classroom.error"


def _drop_param() -> None:
    for param in (PARAM, REJOIN):
        if param in st.query_params:
            del st.query_params[param]


def _set_cookie(name: str, value: str, max_age: int = COOKIE_SECONDS) -> None:
    """Write a cookie with this run's page (``write_cookies``); an empty value with max-age 0 deletes it."""
    st.session_state.setdefault(COOKIES, []).append((name, value, max_age))


def write_cookies() -> None:
    """The cookies this run set, written by a script of ours: names and values are our own codes, ids and
    secrets (checked against ``_COOKIE_VALUE``), never user text."""
    pending = st.session_state.pop(COOKIES, [])
    lines = [
        f'document.cookie = "{name}={value}; path=/; max-age={int(age)}; SameSite=Strict" + secure;'
        for name, value, age in pending
        if _COOKIE_VALUE.fullmatch(name) and (value == "" or _COOKIE_VALUE.fullmatch(value))
    ]
    if lines:  # a block of its own: a second write on the same page declares `secure` again
        script = '{ const secure = location.protocol === "https:" ? "; Secure" : "";' + "".join(lines) + " }"
        st.html(f"<script>{script}</script>", unsafe_allow_javascript=True)


def _cookie(name: str) -> str | None:
    value = st.context.cookies.get(name)
    return value if isinstance(value, str) and _COOKIE_VALUE.fullmatch(value) else None


def _restore_presenter() -> None:
    """A session's first run, with no room in its URL: the presenter cookie of a room still open makes
    this session its presenter again (the lecturer reloaded the page). Only the room's secret reads its
    PIN, so that call proves the cookie; a cookie of an ended room is deleted."""
    raw = _cookie(PRESENTER_COOKIE)
    if raw is None or PARAM in st.query_params or REJOIN in st.query_params:
        return
    code, _, secret = raw.partition(".")
    code = parse_code(code)
    if code is None:
        return
    try:
        claim = room_store().claim(code, secret)  # the newest page presents: this one (a reload, a new tab)
    except Unavailable:
        claim = None  # not provable now; publish claims once the store answers (and refuses a wrong secret)
    except RoomError:
        _set_cookie(PRESENTER_COOKIE, "", 0)
        return
    st.session_state[PRESENTER] = Presenter(code, secret, claim)


# -- a student -----------------------------------------------------------------------------------------


def _student_room() -> str | None:
    """The room this page links back to: ``?rejoin=CODE`` (the hall page's Leave), or ``?room=CODE``
    where the forward did not run (a link followed inside the app); remembered for the session. A
    malformed code is said once and dropped."""
    state = st.session_state
    for param in (REJOIN, PARAM):
        raw = st.query_params.get(param)
        if raw is None:
            continue
        code = parse_code(raw)
        if code is None:
            _tell("classroom.malformed")
            _drop_param()
            return state.get(ROOM)
        state[ROOM] = code
    return state.get(ROOM)


def hall_url(code: str, lang: str) -> str:
    """The room's hall page (its follower view), in ``lang``: a path on this server."""
    return f"/r/{code}?lang={lang}"


def _student_panel(code: str) -> None:
    """A student on the full page: exploring on their own; Rejoin opens the room's hall page again."""
    with st.container(key="room_follow", horizontal=True, vertical_alignment="center"):
        st.info(t("classroom.alone", code=code), icon=":material/explore:")
        with st.container(key="room_rejoin", width="content"):
            st.link_button(t("classroom.rejoin"), hall_url(code, current_lang()), type="primary",
                           icon=":material/groups:")


def room_step(total: int) -> int | None:
    """The room's step (1 … total) once, for a lecturer who just took a room over; ``None``: the page's
    own step."""
    step = st.session_state.pop(JUMP, None)
    return None if step is None else min(max(step, 1), total)


# -- the lecturer --------------------------------------------------------------------------------------


def _start() -> None:
    """A new room; this run's ``publish`` sends it the step and settings on screen."""
    try:
        created = room_store().create(step=1, client=client())
    except RoomError as error:  # the store does not answer, or refuses one more room: say so, and stay
        minutes = math.ceil((getattr(error, "retry_after", None) or 60) / 60)
        _tell(_error_key(error), minutes=minutes)
        return
    st.session_state.pop(ROOM, None)  # a lecturer rejoins no room
    _drop_param()
    _present(created.code, created.secret)


def _present(code: str, secret: str) -> bool:
    """This session (and, through the cookie, this browser) drives room ``code``, taking it over from
    any other page that did (a newer claim: ``publish``); False, with a notice, if the room refused."""
    try:
        claim = room_store().claim(code, secret)
    except Unavailable:
        claim = None  # publish claims once the store answers
    except RoomError as error:
        _tell(_error_key(error), code=code)
        return False
    state = st.session_state
    state[PRESENTER] = Presenter(code, secret, claim)
    state.pop(SUPERSEDED, None)
    _set_cookie(PRESENTER_COOKIE, f"{code}.{secret}")
    return True


def _present_here() -> None:
    """A page a newer one had taken the room from takes it back: the class sees this page's step."""
    presenter = st.session_state.get(PRESENTER)
    if presenter is not None and not _present(presenter.code, presenter.secret):
        st.session_state.pop(PRESENTER, None)
        st.session_state.pop(SUPERSEDED, None)
        _set_cookie(PRESENTER_COOKIE, "", 0)


def _end() -> None:
    presenter = st.session_state.pop(PRESENTER, None)
    st.session_state.pop(SUPERSEDED, None)
    _set_cookie(PRESENTER_COOKIE, "", 0)
    if presenter is not None:
        try:
            room_store().end(presenter.code, presenter.secret)
        except RoomError:
            pass  # ended or expired already: it is over either way
        _wake(presenter.code)  # every follower is told now
        _tell("classroom.you_ended", code=presenter.code)


def _recover() -> None:
    """Take a room over with its code and PIN (the lecturer on another device); the page then shows
    the room's step and settings."""
    state = st.session_state
    code = parse_code(state.get("room_recover_code", ""))
    if code is None:
        state[RECOVER_SAID] = ("classroom.malformed", {})
        return
    store = room_store()
    try:
        secret = store.recover(code, state.get("room_recover_pin", ""), client=client())
        room = store.state(code)
    except RoomError as error:
        state[RECOVER_SAID] = (_error_key(error), {"code": code})
        return
    if not _present(code, secret):
        return
    state.pop(ROOM, None)
    _drop_param()
    _take_settings(room)
    state[JUMP] = room.step
    _tell("classroom.recovered", code=code)


def _take_settings(room: RoomState) -> None:
    """The room's settings become this page's (validated like a URL's, in this page's language): the
    lecturer who took the room over sees what the class sees. Weights trained in another session
    cannot come along: ``session`` falls back, with the usual notice."""
    state = st.session_state
    checked = validate_in(room.settings, current_lang())
    state[STORE] = checked.settings
    state[SENTENCE_OWN] = "sentence" in room.settings
    state[NOTICES] = checked.notices


def _room_bar() -> None:
    """Anyone not in a room: start one (the lecturer), or take one over on this device with its PIN.
    A small row at the top right: on the projector it is one click, then the room's panel."""
    with st.container(key="room_bar", horizontal=True, horizontal_alignment="right"):
        st.button(t("classroom.start"), key="room_start", on_click=_start, icon=":material/co_present:")
        _recover_form()


@st.fragment
def _recover_form() -> None:
    """Take over a room with its code and PIN. A try reruns this form alone, not the page: a refused
    one (a wrong PIN, a locked-out guesser) costs the server this form, and says why inside it; the
    try that succeeds reruns the whole page, now the lecturer's."""
    state = st.session_state
    if PRESENTER in state:
        st.rerun(scope="app")
    said = state.pop(RECOVER_SAID, None)
    with st.popover(t("classroom.recover"), icon=":material/key:"), st.form("room_recover", border=False):
        if said is not None:
            with st.container(key="room_recover_said"):
                st.warning(t(said[0], **said[1]), icon=":material/info:")
        st.text_input(t("classroom.recover_code"), key="room_recover_code", max_chars=16)
        st.text_input(t("classroom.recover_pin"), key="room_recover_pin", max_chars=16, type="password")
        st.form_submit_button(t("classroom.recover_button"), on_click=_recover)


def student_url(code: str) -> str:
    """The room's follower page, ``/r/CODE``, on the host the lecturer's browser uses (a path alone
    when the browser has not said, as in tests): short enough to type from the projector."""
    url = st.context.url
    if not url:
        return f"/r/{code}"
    parts = urlsplit(url)  # the lecturer's own page, the Lecture page: its path ends in /lecture
    base = parts.path.rstrip("/").removesuffix("/lecture")
    return f"{parts.scheme}://{parts.netloc}{base}/r/{code}"


@functools.lru_cache(maxsize=32)
def qr_png(url: str) -> bytes:
    """A QR code of ``url`` (made here, offline: nothing is fetched), dark on white for a projector."""
    import segno  # noqa: PLC0415

    out = io.BytesIO()
    segno.make(url, error="m", micro=False).save(out, kind="png", scale=10, border=2)
    return out.getvalue()


@st.fragment(run_every=COUNT_SECONDS)
def _head_count(presenter: Presenter) -> None:
    """How many follow the room now. The call also keeps the room alive while this page is open, and
    sends it the step and settings on screen again: a publish the store missed (it was away for a
    moment) reaches the class within ``COUNT_SECONDS`` of its return, without the lecturer doing
    anything."""
    store = room_store()
    step, shown = st.session_state.get(ON_SCREEN, (None, None))
    try:
        version = _send(step, shown)
        present = store.present(presenter.code, within=PRESENT_WITHIN)
    except Unavailable:  # publish says so on the page; the room is still this lecturer's
        present = t("classroom.count_unknown")
    except Superseded:
        _superseded()
    except RoomError as error:
        _lost(presenter, error)
    else:
        if _moved(presenter, version):
            _wake(presenter.code)
        if st.session_state.pop(AWAY_SAID, False):  # the page still says the store is away: it is back
            st.rerun(scope="app")
    st.metric(t("classroom.present"), present)


def _presenter_panel(presenter: Presenter) -> None:
    url = student_url(presenter.code)  # the page's stylesheet draws room_code_big large, for the hall
    # Folded once the class has joined, the slide has the screen back and the code stays in the label.
    label = t("classroom.panel", code=presenter.code)
    with st.expander(label, expanded=True, icon=":material/groups:"), st.container(key="room_code"):
        text, qr = st.columns([3, 1], vertical_alignment="center")
        with text:
            st.caption(t("classroom.code_label"))
            with st.container(key="room_code_big"):
                st.markdown(presenter.code)  # ALPHABET characters only: nothing to escape
            st.caption(t("classroom.url_label"))
            st.code(url, language=None, wrap_lines=True)
            with st.container(horizontal=True, vertical_alignment="bottom"):
                # A run_every fragment in a keyed container of its own: Streamlit 1.67 may drop the
                # message that adds a timed fragment's container when its run overtakes the page's;
                # at the top level that shifted every later element by one (docs/decisions.md).
                with st.container(key="room_count"):
                    _head_count(presenter)
                _pin_popover(presenter)
                st.button(t("classroom.end"), key="room_end", on_click=_end, icon=":material/stop_circle:")
        with qr:
            st.image(qr_png(url), caption=t("classroom.qr"), width=260)


def _pin_popover(presenter: Presenter) -> None:
    """The PIN behind a click: the lecturer's screen is often the projector."""
    try:
        pin = room_store().pin(presenter.code, presenter.secret)
    except RoomError:
        return
    with st.popover(t("classroom.pin_button"), icon=":material/key:"):
        st.caption(t("classroom.pin_help"))
        with st.container(key="room_pin"):
            st.code(pin, language=None)


def _superseded_panel(presenter: Presenter) -> None:
    """A page of the lecturer's whose room a newer page (another tab, another device) took over: it says
    so and sends the class nothing; one click takes the room back."""
    with st.container(key="room_superseded", horizontal=True, vertical_alignment="center"):
        st.warning(t("lecture.superseded", code=presenter.code), icon=":material/tab_move:")
        st.button(t("lecture.present_here"), key="room_present_here", on_click=_present_here,
                  type="primary", icon=":material/co_present:")


def room_panel() -> None:
    """At the top of the page: the lecturer's room; a student's Rejoin (back to the room's hall page);
    else Start a room. And what happened to a room since the last draw (ended, lost, refused …)."""
    state = st.session_state
    if not state.get(FIRST_RUN):
        state[FIRST_RUN] = True
        _restore_presenter()
    code = None if PRESENTER in state else _student_room()
    notice = state.pop(NOTICE, None)
    if notice is not None:
        key, values = notice
        st.warning(t(key, **values), icon=":material/info:")
    presenter = state.get(PRESENTER)
    if presenter is not None and state.get(SUPERSEDED):
        _superseded_panel(presenter)
    elif presenter is not None:
        _presenter_panel(presenter)
    elif code is None:
        _room_bar()
    else:
        _student_panel(code)
    write_cookies()


def question_panel(run) -> None:
    """The lecturer's open question, above the slide: the tally and Reveal, then the model's answer
    beside the tally (what the hall page shows the students)."""
    presenter = _presenting()
    if presenter is not None:
        quiz.lecturer_panel(room_store(), presenter.code, presenter.secret, run)


def ask_panel(run, step_name: str) -> None:
    """The lecturer's "Ask the room", under the slide (nothing for anyone else)."""
    presenter = _presenting()
    if presenter is not None:
        quiz.ask_panel(room_store(), presenter.code, presenter.secret, run, step_name)


def publish(step: int, settings: Settings) -> None:
    """The lecturer's page: the room shows ``step`` and ``settings`` (a no-op call keeps it alive)."""
    presenter = _presenting()
    if presenter is None:
        return
    shown = to_query(settings)
    st.session_state[ON_SCREEN] = (step, shown)
    try:
        version = _send(step, shown)
    except Superseded:
        _superseded()
        return
    except Unavailable:  # the class sees this step once the store answers again (see _head_count)
        st.warning(t("classroom.unavailable"), icon=":material/cloud_off:")
        st.session_state[AWAY_SAID] = True
        st.session_state[WAKE] = presenter.code  # the followers here say why the lecture stands still
        return
    except RoomError as error:
        _lost(presenter, error)
        return
    if _moved(presenter, version):  # here, or by Ask / Reveal
        st.session_state[WAKE] = presenter.code


def _presenting() -> Presenter | None:
    """This page's presenter's right, unless a newer page of the lecturer's took the room over."""
    state = st.session_state
    return None if state.get(SUPERSEDED) else state.get(PRESENTER)


def _send(step: int | None, shown: dict[str, str] | None) -> int:
    """The room shows ``step`` and ``shown`` if this page's claim is still the newest (else
    ``Superseded``): two pages of one lecturer never send the class back and forth between them."""
    state = st.session_state
    presenter = state[PRESENTER]
    store = room_store()
    if presenter.claim is None:  # the store was away when this page became the presenter
        presenter = replace(presenter, claim=store.claim(presenter.code, presenter.secret))
        state[PRESENTER] = presenter
    return store.update_claimed(presenter.code, presenter.secret, presenter.claim, step=step, settings=shown)


def _superseded() -> None:
    """A newer page took the room over: this one stops sending and says so. The page is drawn again
    once, as a page that sends nothing, so this cannot repeat."""
    st.session_state[SUPERSEDED] = True
    st.rerun(scope="app")


def _moved(presenter: Presenter, version: int) -> bool:
    """Whether the room's version moved since this lecturer's last look (and remember it)."""
    if st.session_state.get(PUBLISHED) == (presenter.code, version):
        return False
    st.session_state[PUBLISHED] = (presenter.code, version)
    return True


def notify_followers() -> None:
    """The last call of the lecturer's page: the followers of a room whose version this run moved get
    the new slide. After the page is drawn, so they find the slide built (``ui.shared_view``): the
    hall serialises what the projector shows, once per language."""
    code = st.session_state.pop(WAKE, None)
    if code is not None:
        _wake(code)


def _wake(code: str) -> None:
    """The followers of ``code`` look now: this server's at once, every other server's when it hears."""
    HALL.notify(code)
    room_store().announce(code)


def _lost(presenter: Presenter, error: RoomError) -> None:
    """The room refused its lecturer (it expired, ended elsewhere, or the store lost it): say so, and
    draw the page without it."""
    st.session_state.pop(PRESENTER, None)
    key = "classroom.lost" if isinstance(error, UnknownRoom) else _error_key(error)
    _tell(key, code=presenter.code)
    _wake(presenter.code)  # its followers read the room now, and are told the same
    st.rerun(scope="app")
