"""Rooms in Redis: one room store shared by every server of a class (``GLASSBOX_REDIS_URL``).

    store = RedisStore(url)      # a RoomStore, as ui.classroom.rooms.MemoryStore is

Same rooms, same rules, same errors as :class:`ui.classroom.rooms.MemoryStore` (``ui/classroom/rooms.py``
says who may do what and every bound); ``tests/ui/classroom/test_rooms.py`` runs each test on both.
Keys start with ``PREFIX`` (``glassbox:room:CODE`` and its ``:answers``, ``:members``, ``:pins``,
``:clients``; ``glassbox:client:CLIENT:rooms``; ``glassbox:rooms``), a code checked before it is part of
a key, and every key expires (``KEEP_SECONDS``). Each call is one Lua script: atomic, one round trip.
Servers learn of a change by pub/sub on ``glassbox:changed`` (:meth:`RedisStore.announce`,
:meth:`RedisStore.listen`); when Redis does not answer, every call raises ``ui.classroom.rooms.Unavailable``.

Decisions (keys, expiry, scripts, clock, pub/sub, outages): docs/decisions.md, ui/classroom/rooms_redis.py.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis

from ui.classroom import rooms
from ui.classroom.rooms import (
    CLIENT_ANSWERS,
    CLIENT_ROOMS,
    CLIENT_ROOMS_SECONDS,
    ENDED,
    EXPIRED,
    IDLE_SECONDS,
    IN_USE_SECONDS,
    MAX_CLIENTS,
    MAX_MEMBERS,
    MAX_OPTIONS,
    MAX_PIN_FAILURES,
    MAX_ROOMS,
    MAX_SECRET_CHARS,
    MAX_STEP,
    PIN_DIGITS,
    PIN_LOCK_SECONDS,
    PRESENCE_SECONDS,
    PRESENCE_WINDOW,
    BadInput,
    Created,
    NotFollowing,
    NotPresenter,
    Question,
    QuestionClosed,
    QuestionState,
    RoomEnded,
    RoomState,
    StaleUpdate,
    Superseded,
    Tally,
    Unavailable,
    UnknownRoom,
    _code,
    _id,
    _pin_digits,
    _question,
    _settings,
    _whole,
    _within,
    client_key,
    new_code,
    parse_code,
    store_full,
    too_many_answers,
    too_many_client_answers,
    too_many_pins,
    too_many_rooms,
)

log = logging.getLogger("glassbox.rooms")

PREFIX = "glassbox:"
# A room's keys outlive its idle limit by a day: its students are told it expired (or ended) for
# that long, then Redis forgets it on its own.
KEEP_SECONDS = IDLE_SECONDS + 24 * 60 * 60
TIMEOUT_SECONDS = 1.0  # a loopback or LAN round trip takes a millisecond; a second is a dead server
RETRY_SECONDS = 2.0

# --- the scripts -------------------------------------------------------------------------------------
# KEYS: the room, its answers, its members, the index of rooms, its PIN failures, its answers' clients.
# ARGV[1..4]: now, IDLE_SECONDS, KEEP_SECONDS, the code; each script's own arguments follow.
# A reply is a list whose first element says what happened ('ok', or why not: see _check).

_PRELUDE = """
local room, answers, members, index, pins, clients = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local now, idle_seconds, keep, code = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

-- End the room: followers see it at the next version; what it held is freed; first to go when full.
local function close(reason)
  local version = redis.call('HINCRBY', room, 'version', 1)
  redis.call('HSET', room, 'end', reason, 'q', '', 'qo', 0, 'settings', '{}')
  redis.call('DEL', answers, members, pins, clients)
  redis.call('EXPIRE', room, keep)
  redis.call('ZADD', index, -now, code)
  return version
end

-- The room's end reason ('' while open), expired now if its time is up; nil: no such room.
local function find()
  if redis.call('EXISTS', room) == 0 then return nil end
  local fields = redis.call('HMGET', room, 'end', 'last')
  if fields[1] == '' and now - tonumber(fields[2]) >= idle_seconds then close('expired') end
  return redis.call('HGET', room, 'end')
end

-- nil if the room is open, else the refusal to return.
local function refuse_closed()
  local ended = find()
  if ended == nil then return {'unknown'} end
  if ended ~= '' then return {'ended', ended} end
  return nil
end

-- nil if the room is open and the secret is its presenter's (the room is active again), else the refusal.
local function refuse_presenter(secret)
  local refused = refuse_closed()
  if refused then return refused end
  if redis.sha1hex(secret) ~= redis.sha1hex(redis.call('HGET', room, 'secret')) then
    return {'notpresenter'}
  end
  redis.call('HSET', room, 'last', ARGV[1])
  redis.call('ZADD', index, now, code)
  for _, key in ipairs(KEYS) do redis.call('EXPIRE', key, keep) end
  return nil
end

-- Forget members seen before `before`, then the least recently seen beyond `most`.
local function forget(before, most)
  redis.call('ZREMRANGEBYSCORE', members, '-inf', '(' .. before)
  local extra = redis.call('ZCARD', members) - most
  if extra > 0 then redis.call('ZPOPMIN', members, extra) end
end
"""

_SCRIPTS = {
    # ARGV 5 secret, 6 pin, 7 step, 8 settings, 9 MAX_ROOMS, 10 PREFIX, 11 a lecturer who called
    # since is in use, 12 a follower seen since is, 13 the client's key of rooms ('': none),
    # 14 CLIENT_ROOMS, 15 CLIENT_ROOMS_SECONDS
    "create": """
if redis.call('EXISTS', room) == 1 then return {'taken'} end
local started, window = ARGV[13], tonumber(ARGV[15])
if started ~= '' then
  redis.call('ZREMRANGEBYSCORE', started, '-inf', now - window)
  if redis.call('ZCARD', started) >= tonumber(ARGV[14]) then
    local first = redis.call('ZRANGE', started, 0, 0, 'WITHSCORES')
    return {'toomanyrooms', tostring(tonumber(first[2]) + window - now)}
  end
end
while redis.call('ZCARD', index) >= tonumber(ARGV[9]) do
  local idle = nil
  for _, old in ipairs(redis.call('ZRANGE', index, 0, -1)) do
    local key = ARGV[10] .. 'room:' .. old
    local f = redis.call('HMGET', key, 'end', 'last')
    local in_use = false
    if f[2] and f[1] == '' and now - tonumber(f[2]) < idle_seconds then
      in_use = tonumber(f[2]) >= tonumber(ARGV[11])
      if not in_use then
        local last = redis.call('ZRANGE', key .. ':members', -1, -1, 'WITHSCORES')
        in_use = last[2] ~= nil and tonumber(last[2]) >= tonumber(ARGV[12])
      end
    end
    if not in_use then idle = old; break end
  end
  if idle == nil then return {'full'} end
  redis.call('ZREM', index, idle)
  local old = ARGV[10] .. 'room:' .. idle
  redis.call('DEL', old, old .. ':answers', old .. ':members', old .. ':pins', old .. ':clients')
end
if started ~= '' then
  redis.call('ZADD', started, now, code)
  redis.call('EXPIRE', started, math.ceil(window))
end
redis.call('HSET', room, 'secret', ARGV[5], 'pin', ARGV[6], 'last', ARGV[1], 'step', ARGV[7],
  'settings', ARGV[8], 'version', 1, 'q', '', 'qn', 0, 'qr', 0, 'qo', 0, 'questions', 0, 'end', '')
redis.call('EXPIRE', room, keep)
redis.call('ZADD', index, now, code)
redis.call('EXPIRE', index, keep)
return {'ok'}
""",
    # ARGV 5 'version' or 'state'
    "read": """
if find() == nil then return {'unknown'} end
if ARGV[5] == 'version' then return {'ok', redis.call('HGET', room, 'version')} end
local r = redis.call('HMGET', room, 'version', 'step', 'settings', 'q', 'qn', 'qr', 'end')
return {'ok', r[1], r[2], r[3], r[4], r[5], r[6], r[7]}
""",
    # ARGV 5 secret, 6 step ('': unchanged), 7 settings ('': unchanged), 8 if_version ('': any),
    # 9 the presenter's claim (absent: any; update_claimed)
    "update": """
local refused = refuse_presenter(ARGV[5])
if refused then return refused end
if ARGV[9] and ARGV[9] ~= (redis.call('HGET', room, 'claims') or '0') then return {'superseded'} end
local version = tonumber(redis.call('HGET', room, 'version'))
if ARGV[8] ~= '' and tonumber(ARGV[8]) ~= version then return {'stale'} end
local changed = false
if ARGV[6] ~= '' and ARGV[6] ~= redis.call('HGET', room, 'step') then
  redis.call('HSET', room, 'step', ARGV[6]); changed = true
end
if ARGV[7] ~= '' and ARGV[7] ~= redis.call('HGET', room, 'settings') then
  redis.call('HSET', room, 'settings', ARGV[7]); changed = true
end
if changed then version = redis.call('HINCRBY', room, 'version', 1) end
return {'ok', version}
""",
    # ARGV 5 secret, 6 the question as JSON ('': withdraw), 7 its number of options
    "ask": """
local refused = refuse_presenter(ARGV[5])
if refused then return refused end
if ARGV[6] == '' then
  if redis.call('HGET', room, 'q') == '' then return {'ok', redis.call('HGET', room, 'version')} end
  redis.call('HSET', room, 'q', '', 'qr', 0, 'qo', 0)
else
  local number = redis.call('HINCRBY', room, 'questions', 1)
  redis.call('HSET', room, 'q', ARGV[6], 'qn', number, 'qr', 0, 'qo', ARGV[7])
end
redis.call('DEL', answers, clients)
return {'ok', redis.call('HINCRBY', room, 'version', 1)}
""",
    # ARGV 5 secret
    "reveal": """
local refused = refuse_presenter(ARGV[5])
if refused then return refused end
if redis.call('HGET', room, 'q') == '' then return {'noquestion'} end
if redis.call('HGET', room, 'qr') == '0' then
  redis.call('HSET', room, 'qr', 1)
  return {'ok', redis.call('HINCRBY', room, 'version', 1)}
end
return {'ok', redis.call('HGET', room, 'version')}
""",
    # ARGV 5 secret
    "claim": """
local refused = refuse_presenter(ARGV[5])
if refused then return refused end
return {'ok', redis.call('HINCRBY', room, 'claims', 1)}
""",
    # ARGV 5 secret
    "end": """
local refused = refuse_presenter(ARGV[5])
if refused then return refused end
return {'ok', close('ended')}
""",
    # ARGV 5 secret
    "pin": """
local refused = refuse_presenter(ARGV[5])
if refused then return refused end
return {'ok', redis.call('HGET', room, 'pin')}
""",
    # ARGV 5 the PIN's digits, 6 MAX_PIN_FAILURES, 7 the lock-out's end if this try locks, 8 the
    # client, 9 MAX_CLIENTS
    "recover": """
local refused = refuse_closed()
if refused then return refused end
local client = ARGV[8]
local entry = redis.call('HGET', pins, client)
local failures, locked = 0, '-1e300'
if entry then failures, locked = string.match(entry, '^(%d+)|(.+)$') end
if now < tonumber(locked) then return {'locked', tostring(tonumber(locked) - now)} end
if redis.sha1hex(ARGV[5]) == redis.sha1hex(redis.call('HGET', room, 'pin')) then
  redis.call('HDEL', pins, client)
  return {'ok', redis.call('HGET', room, 'secret')}
end
failures = tonumber(failures) + 1
if failures >= tonumber(ARGV[6]) then failures, locked = 0, ARGV[7] end
if not entry and redis.call('HLEN', pins) >= tonumber(ARGV[9]) then redis.call('DEL', pins) end
redis.call('HSET', pins, client, failures .. '|' .. locked)
redis.call('EXPIRE', pins, keep)
return {'notpresenter'}
""",
    # ARGV 5 question number, 6 voter, 7 option, 8 MAX_ANSWERS, 9 a member seen since follows,
    # 10 the client ('': none), 11 CLIENT_ANSWERS
    "answer": """
local refused = refuse_closed()
if refused then return refused end
local q = redis.call('HMGET', room, 'q', 'qn', 'qr', 'qo')
if q[1] == '' or q[2] ~= ARGV[5] or q[3] ~= '0' then return {'closed'} end
if tonumber(ARGV[7]) >= tonumber(q[4]) then return {'nooption'} end
if redis.call('HEXISTS', answers, ARGV[6]) == 1 then return {'ok', 0} end
local seen = redis.call('ZSCORE', members, ARGV[6])
if not seen or tonumber(seen) < tonumber(ARGV[9]) then return {'notfollowing'} end
local client = ARGV[10]
if client ~= '' and tonumber(redis.call('HGET', clients, client) or '0') >= tonumber(ARGV[11]) then
  return {'clientanswers'}
end
if redis.call('HLEN', answers) >= tonumber(ARGV[8]) then return {'toomany'} end
redis.call('HSET', answers, ARGV[6], ARGV[7])
redis.call('EXPIRE', answers, keep)
if client ~= '' then
  redis.call('HINCRBY', clients, client, 1)
  redis.call('EXPIRE', clients, keep)
end
return {'ok', 1}
""",
    "tally": """
local refused = refuse_closed()
if refused then return refused end
local q = redis.call('HMGET', room, 'q', 'qn', 'qo')
if q[1] == '' then return {'ok'} end
return {'ok', q[2], q[3], unpack(redis.call('HVALS', answers))}
""",
    # ARGV 5 member, 6 forget before, 7 MAX_MEMBERS
    "seen": """
local refused = refuse_closed()
if refused then return refused end
redis.call('ZADD', members, now, ARGV[5])
forget(ARGV[6], tonumber(ARGV[7]))
redis.call('EXPIRE', members, keep)
return {'ok'}
""",
    # ARGV 5 forget before, 6 MAX_MEMBERS, 7 count since
    "present": """
local refused = refuse_closed()
if refused then return refused end
forget(ARGV[5], tonumber(ARGV[6]))
return {'ok', redis.call('ZCOUNT', members, ARGV[7], '+inf')}
""",
}


class _Taken(Exception):
    """The code drawn for a new room is in use."""


_REFUSALS: dict[str, Callable[[list[str]], Exception]] = {
    "taken": lambda reply: _Taken(),
    "unknown": lambda reply: UnknownRoom(),
    "ended": lambda reply: RoomEnded(EXPIRED if reply[1] == EXPIRED else ENDED),
    "notpresenter": lambda reply: NotPresenter(),
    "stale": lambda reply: StaleUpdate(),
    "superseded": lambda reply: Superseded(),
    "closed": lambda reply: QuestionClosed(),
    "nooption": lambda reply: BadInput("There is no such option."),
    "noquestion": lambda reply: BadInput("There is no question to reveal."),
    "toomany": lambda reply: too_many_answers(),
    "clientanswers": lambda reply: too_many_client_answers(),
    "notfollowing": lambda reply: NotFollowing(),
    "locked": lambda reply: too_many_pins(float(reply[1])),
    "toomanyrooms": lambda reply: too_many_rooms(float(reply[1])),
    "full": lambda reply: store_full(),
}


def _json(value: object) -> str:
    """One spelling per value (sorted keys): equal settings are equal strings, in Lua too."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _number(value: float) -> str:
    return repr(float(value))  # every digit: Lua reads it back as the same double


class RedisStore:
    """Every room of every server, in Redis at ``url``. See the module docstring.

    ``now`` is the clock (seconds since the epoch, or the tests' own); ``prefix`` starts every key and
    the channel. A malformed ``url`` is logged and makes every call :class:`Unavailable`.
    """

    def __init__(self, url: str, *, now: Callable[[], float] = time.time, prefix: str = PREFIX) -> None:
        self._now = now
        self._prefix = prefix
        self._channel = f"{prefix}changed"
        self._origin = uuid.uuid4().hex  # this server, so that it does not wake its followers twice
        self._down_until = -1.0
        self._listening = False
        self._listener: threading.Thread | None = None
        self._listeners: tuple[Callable[[str], None], Callable[[], None] | None] | None = None
        self._lock = threading.Lock()
        self._client = self._subscriber = None
        #: what is wrong with ``url`` (``None``: nothing), for the operator; rooms are unavailable then
        self.problem = url_problem(url)
        if self.problem is not None:
            log.error("GLASSBOX_REDIS_URL: %s. Rooms are unavailable until it is corrected.", self.problem)
        else:
            options = {"decode_responses": True, "socket_connect_timeout": TIMEOUT_SECONDS}
            self._client = redis.Redis.from_url(url, socket_timeout=TIMEOUT_SECONDS, **options)
            # The subscription waits for messages as long as none come: no read timeout there.
            self._subscriber = redis.Redis.from_url(url, health_check_interval=30, **options)
        self._scripts = {} if self._client is None else self._register()

    def _register(self) -> dict[str, redis.commands.core.Script]:
        return {name: self._client.register_script(_PRELUDE + body) for name, body in _SCRIPTS.items()}

    def __len__(self) -> int:
        """Rooms in the index (ended ones too, as MemoryStore counts them)."""
        return int(self._redis(lambda: self._client.zcard(self._index)))

    @property
    def _index(self) -> str:
        return f"{self._prefix}rooms"

    def keys(self, code: str) -> list[str]:
        """The room's hash, answers and members, the index, its PIN failures and its answers' clients:
    every key a room call touches."""
        room = f"{self._prefix}room:{code}"
        return [room, f"{room}:answers", f"{room}:members", self._index, f"{room}:pins", f"{room}:clients"]

    # --- calling Redis ---

    def _redis(self, call: Callable[[], object]) -> object:
        """``call()``, with every failure of the client an :class:`Unavailable` (and no retry for a
        moment): whatever the client raises (a lost connection, an option it chokes on) is a room
        store that does not answer, never a traceback on a page."""
        if self._client is None or time.monotonic() < self._down_until:
            raise Unavailable()
        self._keep_listening()
        try:
            return call()
        except Exception as error:  # noqa: BLE001 (see above)
            self._down_until = time.monotonic() + RETRY_SECONDS
            log.warning("the room store does not answer: %s: %s", type(error).__name__, error)
            raise Unavailable() from None

    def _run(self, script: str, code: str, *args: object) -> list[str]:
        """Run ``script`` on room ``code`` (checked already); its reply after 'ok', or its refusal raised."""
        now = self._now()
        argv = [_number(now), IDLE_SECONDS, KEEP_SECONDS, code, *args]
        reply = self._redis(lambda: self._scripts[script](keys=self.keys(code), args=argv))
        status = reply[0]
        if status != "ok":
            raise _REFUSALS[status](reply)
        return reply[1:]

    # --- the presenter ---

    def create(
        self, *, step: int = 0, settings: Mapping[str, str] | None = None, client: str | None = None
    ) -> Created:
        step = _whole(step, 0, MAX_STEP, "step")
        values = _json(_settings({} if settings is None else settings))
        who = client_key(client)
        started = "" if who is None else f"{self._prefix}client:{who}:rooms"
        secret = secrets.token_urlsafe(32)
        pin = f"{secrets.randbelow(10**PIN_DIGITS):0{PIN_DIGITS}d}"
        now = self._now()
        in_use = (_number(now - IN_USE_SECONDS), _number(now - PRESENCE_WINDOW))
        bound = (started, CLIENT_ROOMS, CLIENT_ROOMS_SECONDS)
        while True:
            code = new_code()
            try:
                self._run("create", code, secret, pin, step, values, MAX_ROOMS, self._prefix, *in_use, *bound)
            except _Taken:  # one chance in millions: draw again
                continue
            return Created(code, secret, pin)

    def update(
        self,
        code: str,
        secret: str | None,
        *,
        step: int | None = None,
        settings: Mapping[str, str] | None = None,
        if_version: int | None = None,
    ) -> int:
        if step is not None:
            step = _whole(step, 0, MAX_STEP, "step")
        values = None if settings is None else _json(_settings(settings))
        if if_version is not None:
            _whole(if_version, 1, 2**62, "version")
        code = _code(code)
        new = self._run(
            "update",
            code,
            _text(secret),
            "" if step is None else step,
            "" if values is None else values,
            "" if if_version is None else if_version,
        )
        return int(new[0])

    def claim(self, code: str, secret: str | None) -> int:
        return int(self._run("claim", _code(code), _text(secret))[0])

    def update_claimed(
        self,
        code: str,
        secret: str | None,
        claim: int,
        *,
        step: int | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> int:
        claim = _whole(claim, 1, 2**62, "claim")
        if step is not None:
            step = _whole(step, 0, MAX_STEP, "step")
        values = None if settings is None else _json(_settings(settings))
        code = _code(code)
        shown = ("" if step is None else step, "" if values is None else values)
        return int(self._run("update", code, _text(secret), *shown, "", claim)[0])

    def ask(self, code: str, secret: str | None, question: Question | None) -> int:
        checked = None if question is None else _question(question)
        code = _code(code)
        if checked is None:
            return int(self._run("ask", code, _text(secret), "", 0)[0])
        asked = {"kind": checked.kind, "options": list(checked.options), "answer": checked.answer}
        asked["params"] = dict(checked.params)
        return int(self._run("ask", code, _text(secret), _json(asked), len(checked.options))[0])

    def reveal(self, code: str, secret: str | None) -> int:
        return int(self._run("reveal", _code(code), _text(secret))[0])

    def end(self, code: str, secret: str | None) -> int:
        return int(self._run("end", _code(code), _text(secret))[0])

    def pin(self, code: str, secret: str | None) -> str:
        return self._run("pin", _code(code), _text(secret))[0]

    def recover(self, code: str, pin: str, *, client: str | None = None) -> str:
        code = _code(code)
        digits = _pin_digits(pin)
        who = client_key(client) or "-"
        lock_until = _number(self._now() + PIN_LOCK_SECONDS)
        return self._run("recover", code, digits, MAX_PIN_FAILURES, lock_until, who, MAX_CLIENTS)[0]

    # --- everyone ---

    def state(self, code: str) -> RoomState:
        code = _code(code)
        version, step, settings, asked, number, revealed, end = self._run("read", code, "state")
        question = None
        if asked:
            q = json.loads(asked)
            shown = revealed == "1"
            answer = q["answer"] if shown else None
            question = QuestionState(int(number), q["kind"], tuple(q["options"]), q["params"], shown, answer)
        return RoomState(
            code, int(version), int(step), json.loads(settings), question, bool(end), end or None
        )

    def version(self, code: str) -> int:
        return int(self._run("read", _code(code), "version")[0])

    def answer(
        self, code: str, question: int, voter: str, option: int, *, client: str | None = None
    ) -> bool:
        code = _code(code)
        question = _whole(question, 1, 2**62, "question number")
        voter = _id(voter, "voter")
        option = _whole(option, 0, MAX_OPTIONS - 1, "option")
        who = client_key(client) or ""
        since = _number(self._now() - PRESENCE_WINDOW)
        bounds = (rooms.MAX_ANSWERS, since, who, CLIENT_ANSWERS)
        return self._run("answer", code, question, voter, option, *bounds)[0] == 1

    def tally(self, code: str) -> Tally | None:
        reply = self._run("tally", _code(code))
        if not reply:
            return None
        number, options, *answers = reply
        counts = [0] * int(options)
        for option in answers:
            counts[int(option)] += 1
        return Tally(int(number), tuple(counts), len(answers))

    def seen(self, code: str, member: str) -> None:
        code = _code(code)
        member = _id(member, "member")
        self._run("seen", code, member, _number(self._now() - PRESENCE_WINDOW), MAX_MEMBERS)

    def present(self, code: str, within: float = PRESENCE_SECONDS) -> int:
        code = _code(code)
        within = _within(within)
        now = self._now()
        forget, since = _number(now - PRESENCE_WINDOW), _number(now - within)
        return int(self._run("present", code, forget, MAX_MEMBERS, since)[0])

    # --- other servers ---

    def announce(self, code: str) -> None:
        """Tell every other server that room ``code`` changed (they wake their followers). Never
        raises: a follower not woken sees the change at its next look at the room."""
        try:
            message = f"{self._origin} {_code(code)}"
            self._redis(lambda: self._client.publish(self._channel, message))
        except (Unavailable, BadInput):
            pass

    def listen(self, wake: Callable[[str], None], resync: Callable[[], None] | None = None) -> None:
        """Call ``wake(code)`` for every change another server announces, from a thread of its own
        (started once). It reconnects after Redis comes back, then calls ``resync()``: what was
        announced meanwhile is lost (pub/sub keeps nothing), so every follower should look again."""
        with self._lock:
            if self._listening or self._subscriber is None:
                return
            self._listening = True
            self._listeners = (wake, resync)
            self._start_listener()

    def _start_listener(self) -> None:
        """Under the lock: the listening thread, started (again)."""
        self._listener = threading.Thread(
            target=self._listen, args=self._listeners, name="glassbox-rooms-listen", daemon=True
        )
        self._listener.start()

    def _keep_listening(self) -> None:
        """A listener that died (it should not: it catches everything) is started again, on the next
        call to the store, so a server never goes deaf to the others for good."""
        listener = self._listener
        if listener is not None and not listener.is_alive():
            with self._lock:
                if not self._listener.is_alive():
                    log.error("room announcements had stopped; listening again")
                    self._start_listener()

    def _listen(self, wake: Callable[[str], None], resync: Callable[[], None] | None) -> None:
        missed = False
        while True:
            pubsub = None
            try:
                pubsub = self._subscriber.pubsub(ignore_subscribe_messages=True)
                pubsub.subscribe(self._channel)
                if missed:
                    log.warning("room announcements heard again")
                    if resync is not None:
                        resync()
                missed = False
                while True:
                    message = pubsub.get_message(timeout=10.0)
                    if message is not None:
                        self._heard(message.get("data"), wake)
            except Exception as error:  # noqa: BLE001 (Redis gone, or anything else: listen again)
                if not missed:  # once per outage, not once per try: a long outage must not flood the log
                    log.warning("room announcements stopped (%s: %s); trying again every %s s",
                                type(error).__name__, error, RETRY_SECONDS)
                missed = True
            finally:
                if pubsub is not None:
                    _quietly(pubsub.close)
            time.sleep(RETRY_SECONDS)

    def _heard(self, data: object, wake: Callable[[str], None]) -> None:
        origin, _, code = data.partition(" ") if isinstance(data, str) else ("", "", "")
        if origin != self._origin and parse_code(code) == code:
            try:
                wake(code)
            except Exception:  # a follower's page; the listener must go on for the others
                log.exception("could not wake the followers of a room")


def _quietly(close: Callable[[], None]) -> None:
    try:
        close()
    except Exception:  # noqa: BLE001 (a connection already broken: nothing left to close)
        pass


def url_problem(url: str) -> str | None:
    """What is wrong with the Redis URL ``url``, in a sentence naming the part (``None``: nothing).

    The client reads a URL's query options only when it first connects, and raises then on one it
    does not take (``?timeout=1``, ``?foo=bar``); this makes each connection it would make, without
    connecting, so a wrong option is named when the server starts, not as a page's traceback.
    """
    try:
        parts = urlsplit(url)
        if parts.scheme not in ("redis", "rediss", "unix"):
            # the URL itself is never echoed: it may hold a password
            return "it is not a Redis URL (redis://HOST:PORT/DB, rediss://… or unix://…)"
        redis.ConnectionPool.from_url(url).make_connection()
    except (ValueError, TypeError) as error:
        bad = []
        for name, value in parse_qsl(parts.query, keep_blank_values=True):
            alone = urlunsplit(parts._replace(query=urlencode({name: value})))
            try:
                redis.ConnectionPool.from_url(alone).make_connection()
            except (ValueError, TypeError):
                bad.append(name)
        if bad:
            names = ", ".join(repr(name) for name in bad)
            return f"the Redis client does not take the option {names} as given ({error})"
        return f"it is not a Redis URL ({error})"
    return None


def _text(secret: object) -> str:
    """A secret as the scripts compare it: anything that cannot be one is a wrong secret."""
    if not isinstance(secret, str) or len(secret) > MAX_SECRET_CHARS:
        return ""
    try:
        secret.encode("utf-8")
    except UnicodeEncodeError:
        return ""
    return secret
