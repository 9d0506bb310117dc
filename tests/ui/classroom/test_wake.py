"""ui/classroom/wake.py: which sessions a room's change wakes, and what their rerun carries (the last run's
URL and
widget values, never a click again, never just a fragment). Streamlit's runtime is replaced by a fake
that records what a real one would be asked: the real one is exercised by tests/browser/test_classroom.py
and measured by benchmarks/classroom.py."""

from __future__ import annotations

import pytest
from streamlit.proto.ClientState_pb2 import ClientState

import ui.classroom.wake as wake


class Loop:
    def call_soon_threadsafe(self, fn, *args):
        fn(*args)  # at once: the test has no event loop


class Session:
    def __init__(self, sid: str) -> None:
        self.id = sid
        self.reruns: list[ClientState] = []
        self._client_state = ClientState(query_string="room=K7MQ2P", page_name="lecture", fragment_id="f1")
        for wid, field, value in (("slider", "int_value", 3), ("next", "trigger_value", True),
                                  ("chat", "string_trigger_value", None), ("name", "string_value", "重庆")):
            widget = self._client_state.widget_states.widgets.add(id=wid)
            if value is not None:
                setattr(widget, field, value)
            else:
                widget.string_trigger_value.data = "hi"

    def request_rerun(self, state: ClientState) -> None:
        self.reruns.append(state)


class Runtime:
    def __init__(self, sessions: dict[str, Session]) -> None:
        self.sessions = sessions

    def _get_async_objs(self):
        return type("Async", (), {"eventloop": Loop()})()

    def get_app_session(self, sid: str):
        return self.sessions.get(sid)


@pytest.fixture
def runtime(monkeypatch):
    monkeypatch.setattr(wake, "_ROOMS", type(wake._ROOMS)())
    sessions = {sid: Session(sid) for sid in ("a", "b", "c")}
    fake = Runtime(sessions)
    import streamlit.runtime

    monkeypatch.setattr(streamlit.runtime.Runtime, "instance", classmethod(lambda cls: fake))
    return fake


def register_as(monkeypatch, sid: str, code: str, now: float | None = None) -> None:
    monkeypatch.setattr(wake, "_session_id", lambda: sid)
    wake.register(code, now)


def test_a_change_wakes_the_followers_of_that_room_only(runtime, monkeypatch):
    register_as(monkeypatch, "a", "ROOM22")
    register_as(monkeypatch, "b", "ROOM22")
    register_as(monkeypatch, "c", "OTHER3")
    assert wake.wake("ROOM22") == 2
    assert [len(runtime.sessions[s].reruns) for s in "abc"] == [1, 1, 0]
    assert wake.wake("NOBODY") == 0


def test_a_page_that_stopped_following_is_not_woken(runtime, monkeypatch):
    register_as(monkeypatch, "a", "ROOM22")
    register_as(monkeypatch, "b", "ROOM22")
    wake.unregister("ROOM22")  # b left
    wake.unregister("OTHER3")  # a room it never followed: nothing to do
    assert wake.followers("ROOM22") == ["a"]


def test_after_missed_announcements_every_follower_of_every_room_is_woken_once(runtime, monkeypatch):
    register_as(monkeypatch, "a", "ROOM22")
    register_as(monkeypatch, "b", "ROOM22")
    register_as(monkeypatch, "c", "OTHER3")
    assert wake.wake_all() == 3
    assert [len(runtime.sessions[s].reruns) for s in "abc"] == [1, 1, 1]


def test_a_woken_page_reruns_whole_with_its_values_and_without_its_clicks(runtime, monkeypatch):
    register_as(monkeypatch, "a", "ROOM22")
    wake.wake("ROOM22")
    (state,) = runtime.sessions["a"].reruns
    assert state.fragment_id == ""  # the whole page, though its last run was the poll's fragment
    assert state.query_string == "room=K7MQ2P" and state.page_name == "lecture"
    kept = {w.id: w.WhichOneof("value") for w in state.widget_states.widgets}
    assert kept == {"slider": "int_value", "name": "string_value"}  # Next and the chat are not sent again
    assert len(runtime.sessions["a"]._client_state.widget_states.widgets) == 4  # the session's own: untouched


def test_a_session_gone_or_silent_for_a_minute_is_not_woken(runtime, monkeypatch):
    register_as(monkeypatch, "a", "ROOM22", now=0.0)
    register_as(monkeypatch, "gone", "ROOM22", now=100.0)
    assert wake.followers("ROOM22", now=100.0 + 1) == ["gone"]  # "a" was last seen 101 s ago
    assert wake.wake("ROOM22") == 0  # "gone" has no session any more
    assert not runtime.sessions["a"].reruns


def test_followers_are_bounded_per_room_and_rooms_are_bounded(monkeypatch):
    monkeypatch.setattr(wake, "_ROOMS", type(wake._ROOMS)())
    monkeypatch.setattr(wake, "MAX_MEMBERS", 3)
    monkeypatch.setattr(wake, "MAX_ROOMS", 2)
    for i in range(5):
        register_as(monkeypatch, f"s{i}", "ROOM22", now=float(i))
    assert wake.followers("ROOM22", now=5.0) == ["s2", "s3", "s4"]  # the most recent three
    register_as(monkeypatch, "x", "ROOM33", now=6.0)
    register_as(monkeypatch, "y", "ROOM44", now=7.0)
    assert wake.followers("ROOM22", now=8.0) == []  # the room followed least recently went


def test_without_a_server_waking_does_nothing_and_never_raises(monkeypatch):
    monkeypatch.setattr(wake, "_ROOMS", type(wake._ROOMS)())
    register_as(monkeypatch, "a", "ROOM22")
    import streamlit.runtime

    def no_runtime(cls):
        raise RuntimeError("Runtime hasn't been created!")

    monkeypatch.setattr(streamlit.runtime.Runtime, "instance", classmethod(no_runtime))
    assert wake.wake("ROOM22") == 0


def test_a_session_that_refuses_is_logged_not_raised(runtime, monkeypatch, caplog):
    register_as(monkeypatch, "a", "ROOM22")

    def refuse(state):
        raise RuntimeError("shut down")

    runtime.sessions["a"].request_rerun = refuse
    assert wake.wake("ROOM22") == 1
    assert "could not wake" in caplog.text


def test_glassbox_wake_0_turns_waking_off(runtime, monkeypatch):
    register_as(monkeypatch, "a", "ROOM22")
    monkeypatch.setenv("GLASSBOX_WAKE", "0")
    assert wake.wake("ROOM22") == 0 and not runtime.sessions["a"].reruns
