"""A student on the lecture hall's routes (ui/hall/routes.py), in-process through Starlette's TestClient:
one client is one browser (its own member cookie), reading the room as the stream sends it.

    student = Student(code, "zh")        # opens /r/CODE: the member cookie is set, the room counts it
    student.question()                   # the open question as the stream's message words it
    student.answer(option=1)             # POST /r/CODE/answer: (status, JSON)

The stream itself (GET /r/CODE/events) never ends, and a TestClient waits for a response's end: the
stream is tested on a real server (tests/browser/test_hall.py, tests/ui/hall/test_broadcast.py). Here
``follow`` does what an open stream does for the store: the room sees the member (``RoomStore.seen``),
and ``message`` is what it would send (``ui.hall.slides.room_message``).
"""

from __future__ import annotations

import json

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.testclient import TestClient

from ui.classroom.rooms import Unavailable
from ui.hall import routes
from ui.hall.slides import question_data, room_message

APP = Starlette(routes=routes.ROUTES, middleware=[Middleware(routes.Forward)])


def client(host: str = "testclient") -> TestClient:
    """A browser at address ``host``, redirects not followed (a test reads them)."""
    return TestClient(APP, follow_redirects=False, client=(host, 50000))


class Student:
    def __init__(self, code: str, lang: str = "en", host: str = "testclient") -> None:
        self.code, self.lang = code, lang
        self.http = client(host)
        page = self.http.get(f"/r/{code}?lang={lang}")
        assert page.status_code == 200, page.text
        self.member = self.http.cookies.get(routes.MEMBER_COOKIE)
        self.follow()

    def follow(self) -> None:
        """What the open stream does every ``SEEN_SECONDS``: the room sees this member."""
        routes._store().seen(self.code, self.member)

    def _room(self):
        store = routes._store()
        state = store.state(self.code)
        return state, store.tally(self.code) if state.question else None

    def message(self) -> dict:
        """The stream's message of the room now (the slide too)."""
        return json.loads(room_message(*self._room(), self.lang))

    def question(self) -> dict | None:
        """The message's question part (without building the slide)."""
        return question_data(*self._room(), self.lang)

    def answer(self, question: int | None = None, **body) -> tuple[int, dict]:
        if question is None:
            question = self.question()["number"]
        url = f"/r/{self.code}/answer?lang={self.lang}"
        response = self.http.post(url, json={"question": question, **body})
        return response.status_code, response.json()


class Away:
    """A room store that does not answer while ``away`` is set (Redis restarting), else ``store`` itself."""

    def __init__(self, store) -> None:
        self.store, self.away = store, False

    def __getattr__(self, name: str):
        if self.away:
            def refused(*args, **kwargs):
                raise Unavailable()

            return refused
        return getattr(self.store, name)

