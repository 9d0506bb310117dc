"""Wake the pages that follow a room: when the lecturer changes something, each follower's page on
this server reruns at once, instead of at its next look at the room.

    register(code)   # a follower's poll, on every run of it: this session follows room ``code``
    unregister(code) # the follower left the room, or the room ended
    wake(code)       # the lecturer's page, when the room's version moved: rerun every follower now
    wake_all()       # the shared store's announcements were cut for a while: every follower looks

How: Streamlit's own ``AppSession.request_rerun`` (a private part of Streamlit 1.67, pinned), called
on the server's event loop; if it is missing or refuses, waking does nothing and the poll
(``ui.classroom.panels._watch``) still brings the change. ``GLASSBOX_WAKE=0`` turns waking off.
A room remembers at most ``MAX_MEMBERS`` sessions, each for ``FORGET_SECONDS`` after its page last ran.

Decisions (why wake and not only poll; Streamlit's private parts): docs/decisions.md, ui/classroom/wake.py.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import OrderedDict

from ui.classroom.rooms import MAX_MEMBERS, MAX_ROOMS

log = logging.getLogger("glassbox.wake")

FORGET_SECONDS = 60.0  # a follower's poll registers it again at least every 20 s while its page is open

_LOCK = threading.Lock()
_ROOMS: OrderedDict[str, OrderedDict[str, float]] = OrderedDict()  # code -> {session id: last run}


def _session_id() -> str | None:
    from streamlit.runtime.scriptrunner import get_script_run_ctx  # noqa: PLC0415

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def register(code: str, now: float | None = None) -> None:
    """This session's page follows room ``code`` (called on every run of a follower's page)."""
    session = _session_id()
    if session is None:
        return
    now = time.monotonic() if now is None else now
    with _LOCK:
        sessions = _ROOMS.pop(code, None) or OrderedDict()
        sessions.pop(session, None)
        sessions[session] = now
        while len(sessions) > MAX_MEMBERS:
            sessions.popitem(last=False)
        _ROOMS[code] = sessions
        while len(_ROOMS) > MAX_ROOMS:
            _ROOMS.popitem(last=False)


def unregister(code: str) -> None:
    """This session's page no longer follows room ``code``: it is not woken for it again (a wake
    would only redraw the page, and wipe what it said once, such as "the room has ended")."""
    session = _session_id()
    with _LOCK:
        sessions = _ROOMS.get(code)
        if session is not None and sessions is not None:
            sessions.pop(session, None)


def followers(code: str, now: float | None = None) -> list[str]:
    """The sessions whose pages followed ``code`` within ``FORGET_SECONDS`` (older ones forgotten)."""
    now = time.monotonic() if now is None else now
    with _LOCK:
        sessions = _ROOMS.get(code)
        if sessions is None:
            return []
        for session, seen in list(sessions.items()):
            if now - seen > FORGET_SECONDS:
                del sessions[session]
        if not sessions:
            del _ROOMS[code]
        return list(sessions)


def wake_all() -> int:
    """Rerun every follower's page on this server (changes may have been missed: the shared store's
    announcements stopped for a while); how many were asked."""
    with _LOCK:
        codes = list(_ROOMS)
    return sum(wake(code) for code in codes)


def enabled() -> bool:
    """Whether this server wakes followers (``GLASSBOX_WAKE`` is not ``0``)."""
    return os.environ.get("GLASSBOX_WAKE", "1") != "0"


def wake(code: str) -> int:
    """Rerun the page of every session on this server that follows ``code``; how many were asked.
    Never raises: a page that cannot be woken sees the change at its next poll."""
    sessions = followers(code)
    if not sessions or not enabled():
        return 0
    try:
        from streamlit.runtime import Runtime  # noqa: PLC0415

        runtime = Runtime.instance()
        loop = runtime._get_async_objs().eventloop
    except Exception:  # no server (a test, a notebook) or another Streamlit: the poll brings it
        return 0
    asked = 0
    for session_id in sessions:
        session = runtime.get_app_session(session_id)
        if session is not None:
            loop.call_soon_threadsafe(_rerun, session)
            asked += 1
    return asked


# A click (a button, a chat message) is a one-run value: sent again, it would click again.
_ONE_RUN = frozenset({"trigger_value", "string_trigger_value", "json_trigger_value", "chat_input_value"})


def _rerun(session) -> None:
    """On the event loop: a whole-page rerun of ``session`` with its last run's URL and widget values
    (not its clicks)."""
    try:
        from streamlit.proto.ClientState_pb2 import ClientState  # noqa: PLC0415

        state = ClientState()
        state.CopyFrom(session._client_state)
        state.fragment_id = ""  # the whole page, even if its last run was the poll's fragment
        kept = [w for w in state.widget_states.widgets if w.WhichOneof("value") not in _ONE_RUN]
        del state.widget_states.widgets[:]
        state.widget_states.widgets.extend(kept)
        session.request_rerun(state)
    except Exception:
        log.exception("could not wake a follower's page; its next poll brings the change")
