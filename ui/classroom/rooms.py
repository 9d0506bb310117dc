"""Rooms: a class follows the lecturer. The state of every room, behind one small interface.

    store = MemoryStore()                          # or ui.classroom.rooms_redis.RedisStore(url)
    created = store.create(client=address)         # created.code is public; .secret and .pin the presenter's
    store.update(created.code, created.secret, step=3)   # only the presenter moves the room
    store.state(code), store.version(code)         # anyone with the code reads it

A room is what one lecture shares: the lecturer's step, the model's settings (the URL values of
``ui.page.settings.to_query``), the question asked and whether its answer is revealed, and whether the
room has ended. Knowing the code lets anyone read the room, answer and be counted present, never change
it. Every bound a caller could exhaust is a constant below (``MAX_ROOMS``, ``CLIENT_ANSWERS`` ...);
every error is a :class:`RoomError`, whose message is safe to show. :class:`MemoryStore` keeps rooms in
the process, ``ui/classroom/rooms_redis.py`` in Redis; no Streamlit here, the standard library only.
Decisions (who may do what, clients, versions, every bound): docs/decisions.md, ui/classroom/rooms.py.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

# Room codes: 6 characters without look-alikes (no 0/O, 1/I/L), 31**6 ≈ 8.9e8 codes, drawn with
# `secrets` so one code says nothing of the next.
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
PIN_DIGITS = 6

# A single server teaches a few classes at once; 200 leaves room for a department and bounds the
# worst case: a room at every bound below (longest settings, options and ids, MAX_ANSWERS answers from
# as many clients, MAX_MEMBERS members, MAX_CLIENTS PIN guessers) holds under 1.5 MB, so all of
# them hold under 300 MB; reaching it takes floods from many addresses.
MAX_ROOMS = 200
# Long enough for a lecture held on one slide with the presenter's page closed; the lecturer's page
# keeps a room alive while it is open (any presenter call counts).
IDLE_SECONDS = 2 * 60 * 60
# A class is 30 to 500 students, a lecture hall followed from one laptop up to about 1,000 (the hall's
# streams): 2,500 members leave margin for students on two devices. An answer needs a member seen
# following, so the class's own size bounds the answers; one client (a hall behind one address is one
# client) gives at most CLIENT_ANSWERS, and MAX_ANSWERS only bounds the memory of a question whose
# members come and go.
MAX_ANSWERS = 2500
MAX_MEMBERS = 2500
CLIENT_ANSWERS = 250
# A lecturer starts a room or two in a lecture, a department behind one address a few more.
CLIENT_ROOMS = 10
CLIENT_ROOMS_SECONDS = 10 * 60
# A room in use is never dropped to make space: its lecturer called in the last IN_USE_SECONDS (a
# lecturer showing another page for a while), or a follower was seen in the last PRESENCE_WINDOW.
IN_USE_SECONDS = 15 * 60
# Clients remembered per store (rooms started) and per room (PIN failures): the oldest are forgotten.
MAX_CLIENTS = 1000
MAX_CLIENT_CHARS = 128
MAX_OPTIONS = 8  # a bar per option must stay readable on the projector
MAX_OPTION_CHARS = 200  # an option is a token, a number or a short phrase
# Presence: a follower says it is here every poll (about once a second); the lecturer counts those
# seen in the last PRESENCE_SECONDS, and an entry older than PRESENCE_WINDOW is forgotten.
PRESENCE_SECONDS = 15.0
PRESENCE_WINDOW = 60.0
# Five wrong PINs from one client, then five minutes without for that client: ~1,440 guesses a day
# per client against a million PINs.
MAX_PIN_FAILURES = 5
PIN_LOCK_SECONDS = 5 * 60
MAX_STEP = 999  # a lecture has tens of steps
# Settings are URL values: a sentence and a target of at most 2,000 characters each
# (ui.page.settings.MAX_CHARS) and a dozen short values fit with margin.
MAX_SETTINGS = 32
MAX_SETTINGS_CHARS = 8000
MAX_PARAMS = 8  # the parameters of a question (layer, head, query position, merge k, ...)
MAX_ID_CHARS = 64  # voter and member ids: made by the app (a uuid or token_urlsafe), never typed
MAX_SECRET_CHARS = 256
MAX_RAW_CODE_CHARS = 64  # longer input is not a code, however many spaces and dashes it holds

EXPIRED = "expired"  # no presenter call for IDLE_SECONDS
ENDED = "ended"  # ended by the lecturer

_KEY = re.compile(r"[a-z][a-z0-9_]{0,31}")
_ID = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_ID_CHARS}}}")
_PIN = re.compile(rf"[0-9]{{{PIN_DIGITS}}}")


class RoomError(Exception):
    """Anything a room refuses. The message is safe to show: no secret, no echoed input."""


class UnknownRoom(RoomError):
    def __init__(self) -> None:
        super().__init__("There is no room with this code. Check the code on the projector.")


class RoomEnded(RoomError):
    """The room has ended; ``reason`` is ``EXPIRED`` or ``ENDED``."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(_ended_message(reason))


class NotPresenter(RoomError):
    def __init__(self) -> None:
        super().__init__("Only the lecturer of this room can change it.")


class BadInput(RoomError):
    pass


class TooMany(RoomError):
    """A bound was reached; ``retry_after`` is the seconds to wait, when waiting helps. ``reason`` says
    which bound, so a page can word it: ``pin``, ``rooms`` (this client's), ``full`` (every room in
    use), ``answers`` (the question's), ``client_answers`` (this client's)."""

    def __init__(self, message: str, retry_after: float | None = None, reason: str = "") -> None:
        self.retry_after = retry_after
        self.reason = reason
        super().__init__(message)


def too_many_pins(retry_after: float) -> TooMany:
    return TooMany("Too many wrong PINs: try again later.", retry_after, "pin")


def too_many_rooms(retry_after: float) -> TooMany:
    minutes = max(1, math.ceil(retry_after / 60))
    message = f"Too many rooms were started from here: try again in {minutes} min."
    return TooMany(message, retry_after, "rooms")


def store_full() -> TooMany:
    return TooMany("Every room this server can hold is in use: try again later.", None, "full")


def too_many_answers() -> TooMany:
    return TooMany(f"This question has taken its {MAX_ANSWERS} answers.", None, "answers")


def too_many_client_answers() -> TooMany:
    return TooMany("Too many answers to this question came from here: this one was not counted.", None,
                   "client_answers")


class NotFollowing(RoomError):
    """An answer from a voter the room has not seen following in the last ``PRESENCE_WINDOW``."""

    def __init__(self) -> None:
        super().__init__("Only a student following the room can answer: this answer was not counted.")


class QuestionClosed(RoomError):
    """An answer to a question that is no longer open (replaced, withdrawn or revealed)."""

    def __init__(self) -> None:
        super().__init__("This question is closed: the lecturer has moved on or revealed the answer.")


class Unavailable(RoomError):
    """The shared room store does not answer (Redis stopped, unreachable or misconfigured). Nothing
    was changed; every page still works without rooms."""

    def __init__(self) -> None:
        super().__init__("Rooms are unavailable right now: the room server does not answer.")


class Superseded(RoomError):
    """The presenter's right is used by a newer claim (another tab or device of the lecturer)."""

    def __init__(self) -> None:
        super().__init__("This room is presented from another tab or device now.")


class StaleUpdate(RoomError):
    """An update made for an older version of the room (a replayed or late request)."""

    def __init__(self) -> None:
        super().__init__("The room changed since this page was drawn; nothing was changed.")


def _ended_message(reason: str) -> str:
    if reason == EXPIRED:
        return f"This room has expired: the lecturer did nothing in it for {IDLE_SECONDS // 60} minutes."
    return "This room has ended: the lecturer ended it."


@dataclass(frozen=True)
class Created:
    """A new room. ``secret`` and ``pin`` are the presenter's alone (and kept out of ``repr``)."""

    code: str
    secret: str = field(repr=False)
    pin: str = field(repr=False)


@dataclass(frozen=True)
class Question:
    """A question to ask a room: ``options`` are the bars of the tally; ``answer`` is the index of
    the model's real answer (``None``: nothing to reveal, e.g. "right" / "wrong" of an exercise).
    ``kind`` and ``params`` say which question it is, so each page can word it in its language."""

    kind: str
    options: tuple[str, ...]
    answer: int | None = None
    params: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class QuestionState:
    """The question of a room as every student may read it: ``answer`` is ``None`` until revealed.
    ``number`` counts the questions asked in the room; an answer names the one it answers."""

    number: int
    kind: str
    options: tuple[str, ...]
    params: dict[str, str]
    revealed: bool
    answer: int | None


@dataclass(frozen=True)
class RoomState:
    """What a follower sees. ``end_reason`` is ``None`` while the room is open."""

    code: str
    version: int
    step: int
    settings: dict[str, str]
    question: QuestionState | None
    ended: bool
    end_reason: str | None


@dataclass(frozen=True)
class Tally:
    """The answers to question ``number``: ``counts[i]`` chose option ``i``; nobody is named."""

    number: int
    counts: tuple[int, ...]
    answered: int


class RoomStore(Protocol):
    """Room state, wherever it is kept. Every ``code`` argument is raw input (``parse_code``)."""

    def create(
        self, *, step: int = 0, settings: Mapping[str, str] | None = None, client: str | None = None
    ) -> Created: ...

    def state(self, code: str) -> RoomState: ...

    def version(self, code: str) -> int: ...

    def update(
        self,
        code: str,
        secret: str | None,
        *,
        step: int | None = None,
        settings: Mapping[str, str] | None = None,
        if_version: int | None = None,
    ) -> int: ...

    def ask(self, code: str, secret: str | None, question: Question | None) -> int: ...

    def reveal(self, code: str, secret: str | None) -> int: ...

    def end(self, code: str, secret: str | None) -> int: ...

    def pin(self, code: str, secret: str | None) -> str: ...

    def recover(self, code: str, pin: str, *, client: str | None = None) -> str: ...

    def claim(self, code: str, secret: str | None) -> int: ...

    def update_claimed(
        self,
        code: str,
        secret: str | None,
        claim: int,
        *,
        step: int | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> int: ...

    def answer(
        self, code: str, question: int, voter: str, option: int, *, client: str | None = None
    ) -> bool: ...

    def tally(self, code: str) -> Tally | None: ...

    def seen(self, code: str, member: str) -> None: ...

    def present(self, code: str, within: float = PRESENCE_SECONDS) -> int: ...

    def announce(self, code: str) -> None: ...

    def listen(self, wake: Callable[[str], None], resync: Callable[[], None] | None = None) -> None: ...


# --- input -------------------------------------------------------------------------------------------


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def parse_code(raw: object) -> str | None:
    """The room code in ``raw`` (any case, spaces and dashes ignored), or ``None`` if it is none.

    >>> parse_code(" k7m-q2p ")
    'K7MQ2P'
    >>> parse_code("K7MO2P") is None  # O is not in a code (nor 0, 1, I, L)
    True
    """
    if not isinstance(raw, str) or len(raw) > MAX_RAW_CODE_CHARS or not raw.isascii():
        return None
    code = raw.replace(" ", "").replace("-", "").upper()
    if len(code) != CODE_LENGTH or any(c not in ALPHABET for c in code):
        return None
    return code


def _code(raw: object) -> str:
    code = parse_code(raw)
    if code is None:
        raise BadInput(f"A room code is {CODE_LENGTH} letters and digits, like K7M-Q2P.")
    return code


def _whole(value: object, low: int, high: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise BadInput(f"The {what} must be a whole number from {low} to {high}.")
    return value


def _id(value: object, what: str) -> str:
    if not isinstance(value, str) or not _ID.fullmatch(value):
        raise BadInput(f"The {what} id must be 1 to {MAX_ID_CHARS} letters, digits, - or _.")
    return value


def is_id(value: object) -> bool:
    """Whether ``value`` is a voter or member id the store takes (a browser's cookie may hold anything)."""
    return isinstance(value, str) and _ID.fullmatch(value) is not None


def _has_bad_characters(text: str, *, lines: bool) -> bool:
    """Control characters (newline, tab and return allowed in ``lines``) or a lone surrogate (not
    UTF-8: a shared store could not keep it)."""
    allowed = "\n\t\r" if lines else ""
    if any((ord(c) < 32 or 127 <= ord(c) < 160) and c not in allowed for c in text):
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _values(values: object, *, most: int, chars: int, what: str) -> dict[str, str]:
    """A checked copy of URL-like values: short lower-case keys, text values, bounded in total."""
    if not isinstance(values, Mapping) or len(values) > most:
        raise BadInput(f"The {what} must be at most {most} named values.")
    out: dict[str, str] = {}
    total = 0
    for key, value in values.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise BadInput(f"A name in the {what} must be a short lower-case word.")
        if not isinstance(value, str) or _has_bad_characters(value, lines=True):
            raise BadInput(f"A value in the {what} must be text without control characters.")
        total += len(key) + len(value)
        if total > chars:
            raise BadInput(f"The {what} must be at most {chars:,} characters in all.")
        out[key] = value
    return out


def _pin_digits(pin: object) -> str:
    """The digits of a typed PIN (spaces and dashes ignored), or :class:`BadInput`."""
    digits = pin.replace(" ", "").replace("-", "") if isinstance(pin, str) and len(pin) <= 32 else ""
    if not _PIN.fullmatch(digits):
        raise BadInput(f"The presenter PIN is {PIN_DIGITS} digits.")
    return digits


def _within(within: object) -> float:
    """A presence window in seconds: more than 0, at most PRESENCE_WINDOW."""
    number = isinstance(within, int | float) and not isinstance(within, bool)
    if not number or not 0 < within <= PRESENCE_WINDOW:
        raise BadInput(f"Presence is counted over 0 to {PRESENCE_WINDOW:g} seconds.")
    return within


def _settings(values: object) -> dict[str, str]:
    return _values(values, most=MAX_SETTINGS, chars=MAX_SETTINGS_CHARS, what="settings")


def _question(question: object) -> Question:
    """A checked copy of ``question`` (options a tuple of distinct short texts, answer in range)."""
    if not isinstance(question, Question) or not isinstance(question.kind, str):
        raise BadInput("Not a question.")
    if not _KEY.fullmatch(question.kind):
        raise BadInput("A question's kind must be a short lower-case word.")
    options = question.options
    if not isinstance(options, tuple | list) or not 2 <= len(options) <= MAX_OPTIONS:
        raise BadInput(f"A question has 2 to {MAX_OPTIONS} options.")
    for option in options:
        if not isinstance(option, str) or not 1 <= len(option) <= MAX_OPTION_CHARS:
            raise BadInput(f"An option must be text of 1 to {MAX_OPTION_CHARS} characters.")
        if _has_bad_characters(option, lines=False):
            raise BadInput("An option must be text without control characters.")
    if len(set(options)) != len(options):
        raise BadInput("A question's options must differ from each other.")
    if question.answer is not None:
        _whole(question.answer, 0, len(options) - 1, "answer")
    params = _values(question.params, most=MAX_PARAMS, chars=MAX_OPTION_CHARS * MAX_PARAMS, what="params")
    return Question(question.kind, tuple(options), question.answer, params)


def client_key(client: object) -> str | None:
    """A client as the stores keep it: a fixed-length digest (``None`` stays ``None``), so whatever
    text names a client, it is a short field of ours and never a key made of input."""
    if client is None:
        return None
    if not isinstance(client, str) or not 1 <= len(client) <= MAX_CLIENT_CHARS:
        raise BadInput("A client is named by 1 to 128 characters.")
    return hashlib.sha256(client.encode("utf-8", "replace")).hexdigest()[:32]


def _same(given: object, kept: str) -> bool:
    """``given == kept`` in a time that does not depend on where they differ."""
    if not isinstance(given, str) or len(given) > MAX_SECRET_CHARS:
        return False
    return hmac.compare_digest(given.encode("utf-8", "replace"), kept.encode("utf-8"))


# --- the store in the process ------------------------------------------------------------------------


@dataclass
class _Asked:
    number: int
    question: Question
    revealed: bool = False


@dataclass
class _Room:
    code: str
    secret: str
    pin: str
    last_action: float  # the presenter's last call: the room expires IDLE_SECONDS after it
    step: int = 0
    settings: dict[str, str] = field(default_factory=dict)
    version: int = 1
    asked: _Asked | None = None
    questions: int = 0  # asked so far: the next question's number is this plus one
    answers: dict[str, int] = field(default_factory=dict)  # voter -> option, current question only
    members: OrderedDict[str, float] = field(default_factory=OrderedDict)  # least recently seen first
    end_reason: str | None = None
    # client -> (wrong PINs since the last lock-out, locked until): the oldest client first
    pin_tries: OrderedDict[str, tuple[int, float]] = field(default_factory=OrderedDict)
    answer_clients: dict[str, int] = field(default_factory=dict)  # client -> answers, current question
    claims: int = 0  # the presenter's claims so far: only the newest may publish (update_claimed)


class MemoryStore:
    """Every room in this process, in one dict under one lock. See the module docstring.

    ``now`` is the clock (seconds, only differences matter): the tests pass their own, so expiry,
    presence and lock-outs need no sleeps.
    """

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self._now = now
        self._lock = threading.Lock()
        self._rooms: OrderedDict[str, _Room] = OrderedDict()  # the room idle the longest first
        self._started: OrderedDict[str, list[float]] = OrderedDict()  # client -> when it started rooms

    def __len__(self) -> int:
        with self._lock:
            return len(self._rooms)

    # --- the presenter ---

    def create(
        self, *, step: int = 0, settings: Mapping[str, str] | None = None, client: str | None = None
    ) -> Created:
        """A new room. Refused (:class:`TooMany`) when ``client`` started ``CLIENT_ROOMS`` rooms in the
        last ``CLIENT_ROOMS_SECONDS``, or when the store is full of rooms in use."""
        step = _whole(step, 0, MAX_STEP, "step")
        values = _settings({} if settings is None else settings)
        who = client_key(client)
        secret = secrets.token_urlsafe(32)
        pin = f"{secrets.randbelow(10**PIN_DIGITS):0{PIN_DIGITS}d}"
        with self._lock:
            now = self._now()
            started = None if who is None else self._started.pop(who, [])
            if started is not None:
                started[:] = [t for t in started if t > now - CLIENT_ROOMS_SECONDS]
                self._started[who] = started  # the most recent client last
                while len(self._started) > MAX_CLIENTS:
                    self._started.popitem(last=False)
                if len(started) >= CLIENT_ROOMS:
                    raise too_many_rooms(started[0] + CLIENT_ROOMS_SECONDS - now)
            while len(self._rooms) >= MAX_ROOMS:
                idle = next((r for r in self._rooms.values() if not self._in_use(r, now)), None)
                if idle is None:
                    raise store_full()
                del self._rooms[idle.code]
            if started is not None:
                started.append(now)
            code = new_code()
            while code in self._rooms:
                code = new_code()
            self._rooms[code] = _Room(code, secret, pin, now, step=step, settings=values)
        return Created(code, secret, pin)

    def _in_use(self, room: _Room, now: float) -> bool:
        """Open, and its lecturer acted in the last IN_USE_SECONDS or a follower was seen lately."""
        if room.end_reason is not None or now - room.last_action >= IDLE_SECONDS:
            return False
        if now - room.last_action < IN_USE_SECONDS:
            return True
        last_seen = next(reversed(room.members.values()), -math.inf)
        return last_seen >= now - PRESENCE_WINDOW

    def update(
        self,
        code: str,
        secret: str | None,
        *,
        step: int | None = None,
        settings: Mapping[str, str] | None = None,
        if_version: int | None = None,
    ) -> int:
        """Move to ``step`` and/or show ``settings`` (each ``None``: unchanged); the new version.

        With ``if_version``, only if the room is still at that version (else :class:`StaleUpdate`):
        a request replayed or delayed past a newer one changes nothing. An update that changes
        nothing keeps the room alive without moving its version.
        """
        return self._update(code, secret, step, settings, if_version=if_version)

    def claim(self, code: str, secret: str | None) -> int:
        """This presenter (a new tab, a reload, another device) takes the room over: the number of its
        claim, for :meth:`update_claimed`. Every older claim is refused from now on."""
        with self._lock:
            room = self._presenter(code, secret)
            room.claims += 1
            return room.claims

    def update_claimed(
        self,
        code: str,
        secret: str | None,
        claim: int,
        *,
        step: int | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> int:
        """:meth:`update`, only while ``claim`` is the room's newest (else :class:`Superseded`): two tabs
        of one lecturer never send the class back and forth between their steps."""
        return self._update(code, secret, step, settings, claim=_whole(claim, 1, 2**62, "claim"))

    def _update(
        self,
        code: str,
        secret: str | None,
        step: int | None,
        settings: Mapping[str, str] | None,
        *,
        if_version: int | None = None,
        claim: int | None = None,
    ) -> int:
        if step is not None:
            step = _whole(step, 0, MAX_STEP, "step")
        values = None if settings is None else _settings(settings)
        if if_version is not None:
            _whole(if_version, 1, 2**62, "version")
        with self._lock:
            room = self._presenter(code, secret)
            if claim is not None and claim != room.claims:
                raise Superseded()
            if if_version is not None and if_version != room.version:
                raise StaleUpdate()
            changed = (step is not None and step != room.step) or (
                values is not None and values != room.settings
            )
            if step is not None:
                room.step = step
            if values is not None:
                room.settings = values
            if changed:
                room.version += 1
            return room.version

    def ask(self, code: str, secret: str | None, question: Question | None) -> int:
        """Ask ``question`` (``None``: withdraw the current one); its answers start from none."""
        checked = None if question is None else _question(question)
        with self._lock:
            room = self._presenter(code, secret)
            if checked is None and room.asked is None:
                return room.version
            if checked is not None:
                room.questions += 1
                room.asked = _Asked(room.questions, checked)
            else:
                room.asked = None
            room.answers = {}
            room.answer_clients = {}
            room.version += 1
            return room.version

    def reveal(self, code: str, secret: str | None) -> int:
        """Show every screen the model's real answer; the question takes no more answers."""
        with self._lock:
            room = self._presenter(code, secret)
            if room.asked is None:
                raise BadInput("There is no question to reveal.")
            if not room.asked.revealed:
                room.asked.revealed = True
                room.version += 1
            return room.version

    def end(self, code: str, secret: str | None) -> int:
        with self._lock:
            room = self._presenter(code, secret)
            self._close(room, ENDED)
            return room.version

    def pin(self, code: str, secret: str | None) -> str:
        """The presenter PIN, for the lecturer's screen only."""
        with self._lock:
            return self._presenter(code, secret).pin

    def recover(self, code: str, pin: str, *, client: str | None = None) -> str:
        """The presenter secret, given the room's PIN (on another device). After MAX_PIN_FAILURES
        wrong PINs from ``client`` every PIN from it is refused for PIN_LOCK_SECONDS (:class:`TooMany`,
        with ``retry_after``); other clients, the lecturer among them, are not."""
        code = _code(code)
        digits = _pin_digits(pin)
        who = client_key(client) or ""
        with self._lock:
            room = self._open(code)
            now = self._now()
            failures, locked_until = room.pin_tries.get(who, (0, -math.inf))
            if now < locked_until:
                raise too_many_pins(locked_until - now)
            if hmac.compare_digest(digits.encode(), room.pin.encode()):
                room.pin_tries.pop(who, None)
                return room.secret
            failures += 1
            if failures >= MAX_PIN_FAILURES:
                failures, locked_until = 0, now + PIN_LOCK_SECONDS
            room.pin_tries.pop(who, None)
            room.pin_tries[who] = (failures, locked_until)
            while len(room.pin_tries) > MAX_CLIENTS:
                room.pin_tries.popitem(last=False)
            raise NotPresenter()

    # --- everyone ---

    def state(self, code: str) -> RoomState:
        code = _code(code)
        with self._lock:
            room = self._room(code)
            asked = room.asked
            question = None
            if asked is not None:
                q = asked.question
                answer = q.answer if asked.revealed else None
                question = QuestionState(
                    asked.number, q.kind, q.options, dict(q.params), asked.revealed, answer
                )
            ended = room.end_reason is not None
            return RoomState(
                room.code, room.version, room.step, dict(room.settings), question, ended, room.end_reason
            )

    def version(self, code: str) -> int:
        code = _code(code)
        with self._lock:
            return self._room(code).version

    def answer(
        self, code: str, question: int, voter: str, option: int, *, client: str | None = None
    ) -> bool:
        """Count ``voter``'s answer ``option`` to question number ``question``: True if counted,
        False if this voter had already answered it (the first answer stands). The voter must have
        been seen following (:meth:`seen`) in the last PRESENCE_WINDOW (else :class:`NotFollowing`)."""
        code = _code(code)
        question = _whole(question, 1, 2**62, "question number")
        voter = _id(voter, "voter")
        option = _whole(option, 0, MAX_OPTIONS - 1, "option")
        who = client_key(client)
        with self._lock:
            room = self._open(code)
            asked = room.asked
            if asked is None or asked.number != question or asked.revealed:
                raise QuestionClosed()
            if option >= len(asked.question.options):
                raise BadInput("There is no such option.")
            if voter in room.answers:
                return False
            if room.members.get(voter, -math.inf) < self._now() - PRESENCE_WINDOW:
                raise NotFollowing()
            if who is not None and room.answer_clients.get(who, 0) >= CLIENT_ANSWERS:
                raise too_many_client_answers()
            if len(room.answers) >= MAX_ANSWERS:
                raise too_many_answers()
            room.answers[voter] = option
            if who is not None:
                room.answer_clients[who] = room.answer_clients.get(who, 0) + 1
            return True

    def tally(self, code: str) -> Tally | None:
        """The answers to the current question (``None``: no question)."""
        code = _code(code)
        with self._lock:
            room = self._open(code)
            if room.asked is None:
                return None
            counts = [0] * len(room.asked.question.options)
            for option in room.answers.values():
                counts[option] += 1
            return Tally(room.asked.number, tuple(counts), len(room.answers))

    def seen(self, code: str, member: str) -> None:
        """``member`` is in the room now."""
        code = _code(code)
        member = _id(member, "member")
        with self._lock:
            room = self._open(code)
            now = self._now()
            room.members[member] = now
            room.members.move_to_end(member)
            _forget(room.members, now - PRESENCE_WINDOW, MAX_MEMBERS)

    def present(self, code: str, within: float = PRESENCE_SECONDS) -> int:
        """How many members were seen in the last ``within`` seconds (at most PRESENCE_WINDOW)."""
        code = _code(code)
        within = _within(within)
        with self._lock:
            room = self._open(code)
            now = self._now()
            _forget(room.members, now - PRESENCE_WINDOW, MAX_MEMBERS)
            return sum(1 for t in reversed(room.members.values()) if t >= now - within)

    # --- other servers ---

    def announce(self, code: str) -> None:
        """Tell other servers that ``code`` changed: there are none, every follower is in this process."""

    def listen(self, wake: Callable[[str], None], resync: Callable[[], None] | None = None) -> None:
        """Call ``wake(code)`` when another server announces a change (and ``resync()`` when some may
        have been missed): none ever will."""

    # --- under the lock ---

    def _room(self, code: str) -> _Room:
        """The room ``code`` (expired now if its time is up), open or ended."""
        room = self._rooms.get(code)
        if room is None:
            raise UnknownRoom()
        if room.end_reason is None and self._now() - room.last_action >= IDLE_SECONDS:
            self._close(room, EXPIRED)
        return room

    def _open(self, code: str) -> _Room:
        room = self._room(code)
        if room.end_reason is not None:
            raise RoomEnded(room.end_reason)
        return room

    def _presenter(self, raw_code: str, secret: str | None) -> _Room:
        """The open room ``raw_code`` if ``secret`` is its presenter's; the room is active again."""
        room = self._open(_code(raw_code))
        if not _same(secret, room.secret):
            raise NotPresenter()
        room.last_action = self._now()
        self._rooms.move_to_end(room.code)
        return room

    def _close(self, room: _Room, reason: str) -> None:
        """End ``room``: followers see it at the next version, what it held is freed, and it is the
        first room to go when the store is full."""
        self._rooms.move_to_end(room.code, last=False)
        room.end_reason = reason
        room.version += 1
        room.asked = None
        room.answers = {}
        room.answer_clients = {}
        room.pin_tries = OrderedDict()
        room.members = OrderedDict()
        room.settings = {}


def _forget(members: OrderedDict[str, float], before: float, most: int) -> None:
    """Drop the members last seen before ``before``, then the least recently seen beyond ``most``."""
    while members:
        member, seen = next(iter(members.items()))
        if seen >= before and len(members) <= most:
            break
        del members[member]
