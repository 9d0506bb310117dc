"""The lecture hall's routes, served by ``app.py``'s ``st.App`` beside the Streamlit app:

    GET  /r/CODE            the follower's light page (``?lang=zh``; else the browser's language)
    GET  /r/CODE/events     the room as Server-Sent Events (``ui.hall.broadcast``)
    POST /r/CODE/answer     {"question": n, "option": i} or, an exercise, {"question": n, "value": "0.53"}:
                            one browser (its member cookie), one vote; an exercise's verdict comes back
    GET  /hall/FILE         the page's script and style, plotly.js (the installed ``plotly``), KaTeX
    GET  /lecture?room=CODE the student address of earlier sessions: forwarded to /r/CODE (``Forward``)

Every refusal is a status and a short message in the follower's language (JSON for the answer route),
never a traceback. Nothing here is fetched from outside the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import logging
import os
import secrets
import signal
import threading
import time
from collections import OrderedDict
from pathlib import Path

import plotly
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from core.teaching.exercises import check
from figures.classroom.exercises import verdict_view
from i18n import LANGS, t
from ui.classroom import panels  # the one room store of this server, connected to HALL
from ui.classroom.clients import client_of
from ui.classroom.quiz import EXERCISE
from ui.classroom.rooms import (
    BadInput,
    NotFollowing,
    QuestionClosed,
    RoomEnded,
    RoomError,
    TooMany,
    Unavailable,
    UnknownRoom,
    is_id,
    parse_code,
)
from ui.hall.broadcast import HALL, SEEN_SECONDS, HallFull
from ui.hall.slides import room_exercise

log = logging.getLogger("glassbox.hall")

ROOT = Path(__file__).resolve().parents[2]
STATIC = Path(__file__).resolve().parent / "static"
KATEX = ROOT / "assets" / "katex"
PLOTLY_JS = Path(plotly.__file__).resolve().parent / "package_data" / "plotly.min.js"
MEMBER_COOKIE = "glassbox_member"  # the same cookie as the Streamlit pages': one browser, one vote
COOKIE_SECONDS = 4 * 3600
MAX_BODY = 1024  # bytes of an answer
ANSWERS_PER_MINUTE = 30  # per client (a hall behind one NAT address is one client: see RATE_CLIENTS)
RATE_CLIENTS = 4096  # clients whose recent answers are remembered
FILES = {  # /hall/<name> -> (file, media type); nothing else is served
    "follower.js": (STATIC / "follower.js", "text/javascript; charset=utf-8"),
    "follower.css": (STATIC / "follower.css", "text/css; charset=utf-8"),
    "plotly.min.js": (PLOTLY_JS, "text/javascript; charset=utf-8"),
    "katex.min.js": (KATEX / "katex.min.js", "text/javascript; charset=utf-8"),
    "katex.min.css": (KATEX / "katex.min.css", "text/css; charset=utf-8"),
}


def _store():
    return HALL.store()


def _lang(request: Request) -> str:
    asked = request.query_params.get("lang", "")
    if asked in LANGS:
        return asked
    accept = request.headers.get("accept-language", "").lower()
    return "zh" if accept.startswith("zh") else LANGS[0]


def _client(request: Request) -> str:
    peer = request.client.host if request.client else None
    return client_of(peer, request.headers.getlist("x-forwarded-for"))


def _member(request: Request) -> tuple[str, bool]:
    """This browser's member id (its cookie's) and whether it is new (to be written)."""
    member = request.cookies.get(MEMBER_COOKIE)
    if is_id(member):
        return member, False
    return secrets.token_urlsafe(12), True


def _with_member(response: Response, member: str, new: bool) -> Response:
    if new:
        response.set_cookie(MEMBER_COOKIE, member, max_age=COOKIE_SECONDS, httponly=True, samesite="lax")
    return response


# -- the page -------------------------------------------------------------------------------------


def _refused_page(lang: str, said: str) -> str:
    """A page that only says why there is nothing to follow (no script: there is no room to stream)."""
    return f"""<!doctype html>
<html lang="{'zh-CN' if lang == 'zh' else 'en'}">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Glassbox</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/hall/follower.css"></head>
<body><main><p class="said" role="alert">{html.escape(said)}</p></main></body>
</html>
"""


def _page(code: str, lang: str) -> str:
    """The follower's page: fixed markup, the room code (checked: letters and digits only) and our own
    texts as data for the script; the slides arrive by the stream and are drawn as text, never HTML."""
    keys = ["hall.connecting", "hall.reconnecting", "hall.waiting", "hall.leave", "hall.rejoin", "hall.left",
            "hall.question", "hall.send", "hall.sent", "hall.answered", "hall.closed", "hall.refused",
            "hall.result", "hall.room", "hall.check", "hall.your_number"]
    texts = {key: t(key, lang, code=code, reason="{reason}") for key in keys}
    data = html.escape(json.dumps({"code": code, "lang": lang, "texts": texts}, ensure_ascii=False))
    title = html.escape(t("hall.title", lang, code=code))
    return f"""<!doctype html>
<html lang="{'zh-CN' if lang == 'zh' else 'en'}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/hall/katex.min.css">
<link rel="stylesheet" href="/hall/follower.css">
</head>
<body data-hall="{data}">
<header><span id="room"></span><span id="status" role="status" aria-live="polite"></span></header>
<main>
<h2 id="heading"></h2>
<div id="figure"><div id="plot"></div></div>
<div id="text"></div>
<div id="equation"></div>
<div id="code"></div>
<section id="question" hidden></section>
<p id="note"></p>
</main>
<footer><a id="leave" href="#"></a></footer>
<script src="/hall/katex.min.js" defer></script>
<script src="/hall/plotly.min.js" defer></script>
<script src="/hall/follower.js" defer></script>
</body>
</html>
"""


async def page(request: Request) -> Response:
    lang = _lang(request)
    raw = request.path_params["code"]
    code = parse_code(raw)
    if code is None:
        return HTMLResponse(_refused_page(lang, t("hall.bad_code", lang)), status_code=400)
    if code != raw:  # one address per room: /r/k7m-q2p -> /r/K7MQ2P
        return Response(status_code=308, headers={"location": f"/r/{code}" + (f"?{request.url.query}" if
                                                                                 request.url.query else "")})
    try:
        await asyncio.to_thread(_store().state, code)
    except UnknownRoom:
        return HTMLResponse(_refused_page(lang, t("hall.unknown", lang, code=code)), status_code=404)
    except RoomError:
        pass  # ended, or the store is away: the page says so from the stream
    member, new = _member(request)
    response = HTMLResponse(_page(code, lang), headers={"cache-control": "no-store"})
    return _with_member(response, member, new)


# -- the stream -----------------------------------------------------------------------------------


def _last_version(request: Request) -> int | None:
    """The version the follower has: the stream's own reconnect sends it as Last-Event-ID, the page's
    own reconnect (after a refusal) as ``?last=``."""
    raw = request.headers.get("last-event-id") or request.query_params.get("last", "")
    return int(raw) if raw.isdigit() and len(raw) < 19 else None


async def events(request: Request) -> Response:
    lang = _lang(request)
    code = parse_code(request.path_params["code"])
    if code is None:
        return JSONResponse({"error": t("hall.bad_code", lang)}, status_code=400)
    member, _ = _member(request)
    try:
        stream = HALL.follow(code, lang, _last_version(request))
        first = await anext(stream)
    except HallFull:
        return JSONResponse({"error": t("hall.full", lang)}, status_code=503, headers={"retry-after": "5"})

    async def body():
        seen = asyncio.create_task(_seen(code, member))
        try:
            yield first
            async for event in stream:
                yield event
        finally:
            seen.cancel()
            await stream.aclose()

    headers = {"cache-control": "no-store", "x-accel-buffering": "no"}
    return StreamingResponse(body(), media_type="text/event-stream", headers=headers)


async def _seen(code: str, member: str) -> None:
    """While the stream is open: the room counts this follower (the lecturer's head count) and lets it
    vote (a vote needs its voter seen following)."""
    while True:
        with contextlib.suppress(RoomError):
            await asyncio.to_thread(_store().seen, code, member)
        await asyncio.sleep(SEEN_SECONDS)


# -- answers --------------------------------------------------------------------------------------

_ANSWERS: OrderedDict[str, list[float]] = OrderedDict()  # client -> times of its recent answers


def _too_fast(client: str) -> bool:
    now = time.monotonic()
    times = [t0 for t0 in _ANSWERS.pop(client, []) if now - t0 < 60.0]
    limited = len(times) >= ANSWERS_PER_MINUTE
    if not limited:
        times.append(now)
    _ANSWERS[client] = times
    while len(_ANSWERS) > RATE_CLIENTS:
        _ANSWERS.popitem(last=False)
    return limited


def _refusal(error: RoomError, code: str, lang: str) -> tuple[int, str]:
    """The status and the follower's words for a refused answer (the store's own messages are English)."""
    if isinstance(error, UnknownRoom):
        return 404, t("hall.unknown", lang, code=code)
    if isinstance(error, QuestionClosed | RoomEnded):
        return 409, t("hall.closed", lang)
    if isinstance(error, TooMany):
        if error.reason == "answers":
            return 409, t("classroom.q.full", lang)
        if error.reason == "client_answers":
            return 429, t("classroom.q.full_here", lang)
        return 429, t("hall.too_many", lang)
    if isinstance(error, NotFollowing):
        return 409, t("classroom.q.not_following", lang)
    if isinstance(error, Unavailable):
        return 503, t("classroom.unavailable", lang)
    if isinstance(error, BadInput) and "exercise" in str(error):
        return 400, t("hall.exercise", lang)
    return 400, t("hall.bad_request", lang)


async def answer(request: Request) -> Response:
    """An answer: ``{"question": n, "option": i}`` to a question, ``{"question": n, "value": "0.53"}`` to an
    exercise (checked here by ``core.teaching.exercises``; the verdict and, for a miss, the worked
    solution come back). The first answer of a browser counts in the tally, a later one does not."""
    lang = _lang(request)
    code = parse_code(request.path_params["code"])
    if code is None:
        return JSONResponse({"error": t("hall.bad_code", lang)}, status_code=400)
    client = _client(request)
    if _too_fast(client):
        said = t("hall.too_many", lang)
        return JSONResponse({"error": said}, status_code=429, headers={"retry-after": "10"})
    body = await request.body()
    try:
        values = json.loads(body) if len(body) <= MAX_BODY else None
        question = int(values["question"])
        typed = values.get("value")
        if typed is not None and (isinstance(typed, bool) or not isinstance(typed, str | int | float)):
            raise TypeError("a number or the text typed")
        option = int(values["option"]) if typed is None else None
    except (ValueError, TypeError, KeyError, AttributeError):
        return JSONResponse({"error": t("hall.bad_request", lang)}, status_code=400)
    member, new = _member(request)
    try:
        if typed is None:
            reply = await asyncio.to_thread(_vote, code, question, member, option, client, lang)
        else:
            reply = await asyncio.to_thread(_check, code, question, member, str(typed), client, lang)
    except RoomError as error:
        status, said = _refusal(error, code, lang)
        return JSONResponse({"error": said}, status_code=status)
    if reply.get("counted"):
        HALL.notify(code)  # the followers' tally, once revealed
    return _with_member(JSONResponse(reply), member, new)


def _vote(code: str, question: int, member: str, option: int, client: str, lang: str) -> dict:
    store = _store()
    asked = store.state(code).question
    if asked is not None and asked.number == question and asked.kind == EXERCISE:
        raise BadInput("an exercise is answered with a number")
    counted = store.answer(code, question, member, option, client=client)
    return {"counted": counted, "said": t("hall.sent" if counted else "hall.answered", lang)}


def _check(code: str, question: int, member: str, typed: str, client: str, lang: str) -> dict:
    """Check a typed number against the room's exercise: its first readable check counts (right or
    wrong) until the reveal; every check gets the verdict, a miss the worked solution."""
    store = _store()
    state = store.state(code)
    asked = state.question
    if asked is None or asked.number != question:
        raise QuestionClosed()
    if asked.kind != EXERCISE:
        raise BadInput("a question is answered with an option")
    exercise = room_exercise(state)
    if exercise is None:
        return {"counted": False, "said": t("classroom.q.no_exercise", lang)}
    verdict = check(exercise, typed)
    view = verdict_view(exercise, verdict, typed, lang)
    if verdict.parsed is None or asked.revealed:
        return {"counted": False, "verdict": view}
    counted = store.answer(code, question, member, 0 if verdict.correct else 1, client=client)
    said = t("hall.sent" if counted else "hall.checked_again", lang)
    return {"counted": counted, "said": said, "verdict": view}


# -- files ----------------------------------------------------------------------------------------


async def static(request: Request) -> Response:
    found = FILES.get(request.path_params["name"])
    if found is None or not found[0].is_file():
        return Response("not found", status_code=404, media_type="text/plain")
    path, media = found
    return FileResponse(path, media_type=media, headers={"cache-control": "public, max-age=86400"})


async def font(request: Request) -> Response:
    """KaTeX's fonts, as its style sheet names them (``fonts/KaTeX_<Name>.woff2``, beside it)."""
    name = request.path_params["name"]
    path = KATEX / "fonts" / name
    if not (name.startswith("KaTeX_") and name.endswith(".woff2") and "/" not in name and path.is_file()):
        return Response("not found", status_code=404, media_type="text/plain")
    return FileResponse(path, media_type="font/woff2", headers={"cache-control": "public, max-age=86400"})


# -- the old student address ------------------------------------------------------------------------


class Forward:
    """ASGI middleware: a browser opening the Lecture page with ``?room=CODE`` (a printed address, a
    bookmark, a QR code from before ``/r/CODE``) is sent to the room's follower page, with its
    ``lang``. Every other request passes untouched; a malformed code reaches the page, which says so."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        page = scope["type"] == "http" and scope["method"] in ("GET", "HEAD")
        if page and scope["path"].endswith("/lecture"):
            query = Request(scope).query_params
            code = parse_code(query.get(panels.PARAM, ""))
            if code is not None:
                lang = query.get("lang", "")
                location = f"/r/{code}" + (f"?lang={lang}" if lang in LANGS else "")
                await Response(status_code=307, headers={"location": location})(scope, receive, send)
                return
        await self.app(scope, receive, send)


ROUTES = [
    Route("/r/{code}", page, methods=["GET"]),
    Route("/r/{code}/events", events, methods=["GET"]),
    Route("/r/{code}/answer", answer, methods=["POST"]),
    Route("/hall/{name}", static, methods=["GET"]),
    Route("/hall/fonts/{name}", font, methods=["GET"]),
]


def _end_streams_on_stop() -> None:
    """Ctrl-C or SIGTERM ends every stream at once, then does what it did (uvicorn's stop): uvicorn waits
    for open responses before it stops, and a stream never ends by itself, so without this a lecturer's
    Ctrl-C would not stop the server. Wraps whatever handler is there unless it is ours already (the
    server may install its own after the hall starts: ``lifespan`` looks again every second). Signal
    handlers belong to the main thread; elsewhere (a test's server in a thread) nothing is changed."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        before = signal.getsignal(sig)
        if getattr(before, "ends_streams", False):
            continue

        def stop(signum, frame, before=before):
            HALL.end_streams()
            if callable(before):
                before(signum, frame)
            elif before == signal.SIG_DFL:  # what the signal would have done: done now
                signal.signal(signum, signal.SIG_DFL)
                os.kill(os.getpid(), signum)

        stop.ends_streams = True
        signal.signal(sig, stop)


async def _keep_ending_streams_on_stop() -> None:
    while True:
        _end_streams_on_stop()
        await asyncio.sleep(1.0)


@contextlib.asynccontextmanager
async def lifespan(app):
    """The hall starts on the server's event loop; a stop signal ends its streams, and the end of the
    server closes its channels."""
    HALL.attach(asyncio.get_running_loop())
    watch = asyncio.create_task(_keep_ending_streams_on_stop())
    try:
        yield None
    finally:
        watch.cancel()
        await HALL.close()
