"""Rooms on the Lecture page: the class follows the lecturer (the Streamlit side of
``ui/classroom/rooms.py``).

    room = follow_room()          # before ui.page_setup: a followed room's settings become the session's
    settings = ui.page_setup(...)
    room_panel(room)              # the lecturer: code, URL, QR, PIN, who is here; a student: following
    publish(step, settings)       # the lecturer: the room now shows this step and these settings
    question_panel(room, run)     # the open question (ui/classroom/quiz.py): tally and Reveal, or the answer
    ask_panel(run, step_name)     # the lecturer: ask the room about the model on screen
    wake_followers()              # the lecturer: the followers' pages rerun now (ui/classroom/wake.py)

The lecturer's secret lives in ``st.session_state`` and a cookie, never in a URL; a student holds a room
code and a member id. A follower is woken when the room changes and also polls every ``FOLLOW_SECONDS``.
Decisions (who holds what, following, several servers, outages): docs/decisions.md, ui/classroom/panels.py.
"""

from __future__ import annotations

import functools
import io
import math
import os
import re
import secrets
from dataclasses import dataclass, field, replace
from urllib.parse import urlsplit

import streamlit as st

from core.names import Weights
from ui.classroom import quiz, wake
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
    is_id,
    parse_code,
)
from ui.hall.broadcast import HALL
from ui.page.lang import STORE, current_lang, t
from ui.page.settings import Settings, to_query, validate
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
    store.listen(_woken, _woken_all)
    return store


def _woken(code: str) -> None:
    """Another server announced a change of room ``code``: its followers here look now."""
    wake.wake(code)
    HALL.notify(code)


def _woken_all() -> None:
    wake.wake_all()
    HALL.notify_all()


# One store per process: every session of this server sees the same rooms.
_STORE: RoomStore = _make_store()

PRESENTER = "_glassbox_room_presenter"  # Presenter: this session drives that room
ROOM = "_glassbox_room"  # the code of the room this session follows (or left, and may rejoin)
FOLLOWING = "_glassbox_room_following"  # True while the page follows ROOM
APPLIED = "_glassbox_room_applied"  # Applied: what of the room this page shows
MEMBER = "_glassbox_room_member"  # this session's member id, for the lecturer's head count
JUMP = "_glassbox_room_jump"  # the step a lecturer who took a room over goes to, once
NOTICE = "_glassbox_room_notice"  # (i18n key, values): said once, on the next draw of the panel
NOTICE_SHOWN = "_glassbox_room_notice_shown"  # the key of the notice the last draw showed (or None)
PARAM = "room"  # the URL parameter of the student URL: /lecture?room=CODE
COOKIES = "_glassbox_room_cookies"  # [(name, value, max-age)]: written by this run's page
FIRST_RUN = "_glassbox_room_first_run"  # set once a session's first run read its cookies
PRESENTER_COOKIE = "glassbox_presenter"  # "CODE.SECRET": the lecturer's right survives a reload
MEMBER_COOKIE = "glassbox_member"  # a student's member (and voter) id: one browser, one vote
COOKIE_SECONDS = IDLE_SECONDS  # a cookie outlives no room
_COOKIE_VALUE = re.compile(r"[A-Za-z0-9_.-]{1,300}")  # codes, ids and token_urlsafe secrets only

# A change reaches the followers on this server at once (ui/classroom/wake.py); each page also looks at
# the room every FOLLOW_SECONDS, the safety net (a lost wake, a lecturer on another server) and its
# presence. Rarely, because a poll tick that the browser sends just as a woken run starts loses that run
# now and then (benchmarks/classroom.py; its figures: docs/performance.md). With waking off
# (GLASSBOX_WAKE=0) the poll is all there is: every 3 s.
FOLLOW_SECONDS = 20.0 if wake.enabled() else 3.0
PRESENT_WITHIN = 2 * FOLLOW_SECONDS + 5  # a quiet follower is seen at every poll: two polls and a margin
COUNT_SECONDS = 3.0  # the lecturer's head count (and the room's keep-alive)
AWAY_SECONDS = 3.0  # a follower's poll while the store is away: back in step within seconds of its return
PUBLISHED = "_glassbox_room_published"  # the room's version after this lecturer's last publish
ON_SCREEN = "_glassbox_room_on_screen"  # (step, settings' URL values) the lecturer's page drew last
WAKE = "_glassbox_room_wake"  # a room whose followers this run wakes when the page is drawn
READ = "_glassbox_room_read"  # the room as this follower last read it: kept while the store is away
AWAY_SAID = "_glassbox_room_away_said"  # the lecturer's page says the store is away (until it answers)
AWAY_LEFT = "_glassbox_room_away_left"  # the room a student could not join while the store was away
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


@dataclass(frozen=True)
class Applied:
    """The room's version, step and settings last put on this student's page."""

    code: str
    version: int
    step: int
    settings: Settings
    weights: str = ""  # the lecturer's weights as the room says them (``session`` cannot come along)


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
    if PARAM in st.query_params:
        del st.query_params[PARAM]


def _same_view(a: Settings, b: Settings) -> bool:
    """The same model and sentence on screen; the interface language is each student's own."""
    return replace(a, lang="") == replace(b, lang="")


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
    if lines:
        script = 'const secure = location.protocol === "https:" ? "; Secure" : "";' + "".join(lines)
        st.html(f"<script>{script}</script>", unsafe_allow_javascript=True)


def _cookie(name: str) -> str | None:
    value = st.context.cookies.get(name)
    return value if isinstance(value, str) and _COOKIE_VALUE.fullmatch(value) else None


def _restore_presenter() -> None:
    """A session's first run, with no room in its URL: the presenter cookie of a room still open makes
    this session its presenter again (the lecturer reloaded the page). Only the room's secret reads its
    PIN, so that call proves the cookie; a cookie of an ended room is deleted."""
    raw = _cookie(PRESENTER_COOKIE)
    if raw is None or PARAM in st.query_params:
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


def _member() -> str:
    """This browser's member id: the cookie's (a reload keeps it), else a new one, written to the cookie."""
    state = st.session_state
    if MEMBER not in state:
        member = _cookie(MEMBER_COOKIE)
        if not is_id(member):  # a cookie edited by hand: the store would refuse it on every poll
            member = secrets.token_urlsafe(12)
            _set_cookie(MEMBER_COOKIE, member)
        state[MEMBER] = member
    return state[MEMBER]


# -- a student -----------------------------------------------------------------------------------------


def follow_room() -> RoomState | None:
    """The room this page follows now (``None``: none), its settings put into the session's. Call
    before ``ui.page_setup``: the sidebar then draws the room's sentence, weights and sizes."""
    state = st.session_state
    if not state.get(FIRST_RUN):
        state[FIRST_RUN] = True
        _restore_presenter()
    if PRESENTER in state:
        return None
    raw = st.query_params.get(PARAM)
    if raw is not None:
        code = parse_code(raw)
        if code is None:
            _tell("classroom.malformed")
            _drop_param()
        else:
            state[ROOM], state[FOLLOWING] = code, True
    if not state.get(FOLLOWING):
        return None
    code = state[ROOM]
    try:
        room = room_store().state(code)
    except Unavailable:
        return _unreadable(code)
    except UnknownRoom:
        applied = state.get(APPLIED)
        shown = applied is not None and applied.code == code  # this page showed it: the store lost it
        return _stop_following("classroom.lost" if shown else "classroom.unknown", code)
    except RoomError as error:
        return _stop_following(_error_key(error), code)
    state[READ] = room
    if room.ended:
        return _stop_following("classroom.expired" if room.end_reason == EXPIRED else "classroom.ended", code)
    applied = state.get(APPLIED)
    if applied is not None and applied.code == code and STORE in state:
        if not _same_view(state[STORE], applied.settings):  # the student changed a setting
            leave_room("classroom.left_settings")
            return None
    if applied is None or applied.code != code or applied.version != room.version:
        _apply(room)
    return room


def _unreadable(code: str) -> RoomState | None:
    """The store does not answer: the page keeps the room as last read (its poll tries again) and says
    rooms are unavailable; a room never read yet is left, to rejoin with one click."""
    last = st.session_state.get(READ)
    if last is None or last.code != code:
        leave_room("classroom.unavailable")
        st.session_state[AWAY_LEFT] = code  # rejoined by itself once the store answers (_watch_return)
        return None
    _tell("classroom.unavailable")
    return replace(last, question=None)


def _stop_following(key: str, code: str) -> None:
    state = st.session_state
    wake.unregister(code)
    state[FOLLOWING] = False
    state.pop(ROOM, None)
    state.pop(APPLIED, None)
    _drop_param()
    _tell(key, code=code)


def _apply(room: RoomState) -> None:
    """The room's settings, validated like a URL's, in this student's language. Weights trained in
    another session cannot come along: ``session`` falls back, with the usual notice."""
    state = st.session_state
    values = {key: value for key, value in room.settings.items() if key != "lang"}
    values["lang"] = current_lang()
    checked = validate(values, session_model=False)
    state[STORE] = checked.settings
    state[SENTENCE_OWN] = "sentence" in values
    state[NOTICES] = checked.notices
    weights = room.settings.get("weights", "")
    before = state.get(APPLIED)
    told = before is not None and before.code == room.code and before.weights == weights
    if weights == Weights.SESSION and not told:  # once, in the room panel, where the student looks
        _tell("classroom.session_weights", code=room.code, shown=checked.settings.weights)
    state[APPLIED] = Applied(room.code, room.version, room.step, checked.settings, weights)


def following() -> bool:
    return bool(st.session_state.get(FOLLOWING))


def leave_room(key: str = "classroom.left") -> None:
    """Stop following (the student explores alone); the room is remembered for Rejoin."""
    state = st.session_state
    if state.get(FOLLOWING):
        wake.unregister(state.get(ROOM, ""))
        state[FOLLOWING] = False
        state.pop(APPLIED, None)
        _drop_param()
        _tell(key, code=state.get(ROOM, ""))


def _forget_room() -> None:
    """This session becomes a lecturer: it follows no room (and will not rejoin one)."""
    state = st.session_state
    state[FOLLOWING] = False
    state.pop(ROOM, None)
    state.pop(APPLIED, None)
    _drop_param()


def _rejoin() -> None:
    state = st.session_state
    state.pop(AWAY_LEFT, None)
    if ROOM in state:
        state[FOLLOWING] = True
        state.pop(APPLIED, None)  # the room's settings replace the student's own
        st.query_params[PARAM] = state[ROOM]


@st.fragment(run_every=FOLLOW_SECONDS)
def _watch(code: str, member: str, version: int) -> None:
    """Say this student is here; rerun the page when the room changed (or ended): ``_look``."""
    _look(code, member, version)


@st.fragment(run_every=AWAY_SECONDS)
def _watch_away(code: str, member: str, version: int) -> None:
    """``_watch`` while the page says the store is away: nobody can wake this page then (the lecturer's
    server cannot announce), so it looks often, and reruns once the store answers."""
    _look(code, member, version)


def _look(code: str, member: str, version: int) -> None:
    """Say this student is here; rerun the page when the room changed, ended, or the store is back.

    Every ``run_every`` fragment is called inside a keyed container of its own. Under load a timed
    fragment run can start before the full run's messages are sent, and Streamlit 1.67 then drops the
    full run's message that adds the fragment's container (``ForwardMsgQueue.clear`` drops every queued
    delta of that fragment): at the top level that shifted every later element by one, and the slide
    vanished from a follower's page (benchmarks/classroom.py, 40 followers). Inside a container of its
    own, a lost fragment container moves nothing else."""
    wake.register(code)  # on every run and every poll: a page quiet for minutes is still woken
    store = room_store()
    said_away = st.session_state.get(NOTICE_SHOWN) == "classroom.unavailable"
    try:
        store.seen(code, member)
        changed = store.version(code) != version or said_away  # back: the page stops saying it is away
    except Unavailable:  # the page says so once; then it waits for the store to answer again
        changed = not said_away
    except (UnknownRoom, RoomEnded):  # the page's own run reads the room, says so and stops following
        changed = True
    except RoomError:
        # Anything else the page's run would meet again: rerunning the page for it would loop.
        changed = False
    if changed:
        st.rerun(scope="app")


def _student_panel(room: RoomState | None) -> None:
    state = st.session_state
    if room is not None:
        member = _member()
        with st.container(key="room_follow", horizontal=True, vertical_alignment="center"):
            st.info(t("classroom.following", code=room.code), icon=":material/groups:")
            st.button(t("classroom.leave"), key="room_leave", on_click=leave_room)
        with st.container(key="room_watch"):  # see _look
            away = state.get(NOTICE_SHOWN) == "classroom.unavailable"
            (_watch_away if away else _watch)(room.code, member, room.version)
    elif ROOM in state:
        with st.container(key="room_follow", horizontal=True, vertical_alignment="center"):
            st.info(t("classroom.alone", code=state[ROOM]), icon=":material/explore:")
            st.button(t("classroom.rejoin"), key="room_rejoin", on_click=_rejoin, type="primary")
        if state.get(AWAY_LEFT) == state[ROOM]:
            with st.container(key="room_watch"):  # see _look
                _watch_return(state[ROOM])


@st.fragment(run_every=AWAY_SECONDS)
def _watch_return(code: str) -> None:
    """A student who opened the room's URL while the store was away did not leave: once the store
    answers, the page joins the room by itself (the room says the rest: its step, or that it ended)."""
    try:
        room_store().version(code)
    except Unavailable:
        return
    except RoomError:
        pass
    _rejoin()
    st.rerun(scope="app")


def room_step(room: RoomState | None, total: int) -> int | None:
    """The room's step (1 … total) for a follower, and once for a lecturer who just took a room over;
    ``None``: the page's own step."""
    step = st.session_state.pop(JUMP, None) if room is None else room.step
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
    _forget_room()
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
    _forget_room()
    _apply(room)
    state.pop(APPLIED, None)
    state[JUMP] = room.step
    _tell("classroom.recovered", code=code)


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
    """The Lecture page with ``?room=CODE``, on the host the lecturer's browser uses (a path alone
    when the browser has not said, as in tests)."""
    url = st.context.url
    if not url:
        return f"/lecture?{PARAM}={code}"
    parts = urlsplit(url)  # the lecturer's own page, the Lecture page: its path ends in /lecture
    path = parts.path.rstrip("/")
    if not path.endswith("/lecture"):
        path += "/lecture"
    return f"{parts.scheme}://{parts.netloc}{path}?{PARAM}={code}"


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
                with st.container(key="room_count"):  # see _look
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


def room_panel(room: RoomState | None) -> None:
    """At the top of the page: the lecturer's room, or whether this student follows one; and what
    happened to a room since the last draw (ended, unknown, left …)."""
    state = st.session_state
    notice = state.pop(NOTICE, None)
    state[NOTICE_SHOWN] = None if notice is None else notice[0]
    if notice is not None:
        key, values = notice
        st.warning(t(key, **values), icon=":material/info:")
    presenter = state.get(PRESENTER)
    if presenter is not None and state.get(SUPERSEDED):
        _superseded_panel(presenter)
    elif presenter is not None:
        _presenter_panel(presenter)
    elif room is None and ROOM not in state:
        _room_bar()
    else:
        _student_panel(room)
    write_cookies()


def question_panel(room: RoomState | None, run) -> None:
    """The room's open question, above the slide: the lecturer's tally and Reveal, or a student's answer
    (and, revealed, the model's answer beside the tally on both screens)."""
    presenter = _presenting()
    if presenter is not None:
        quiz.lecturer_panel(room_store(), presenter.code, presenter.secret, run)
    elif room is not None:
        quiz.student_panel(room_store(), room, _member(), run)


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


def wake_followers() -> None:
    """The last call of the lecturer's page: wake the followers of a room whose version this run moved.
    After the page is drawn, so the projector's page is not slowed by forty others, and they find
    the slide built (``ui.shared_view``)."""
    code = st.session_state.pop(WAKE, None)
    if code is not None:
        _wake(code)


def _wake(code: str) -> None:
    """The followers of ``code`` rerun now: this server's at once, every other server's when it hears."""
    wake.wake(code)
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
