"""ui.classroom.rooms without Streamlit: who may change a room, versions, PIN recovery, answers, presence,
expiry,
and every bound (rooms, answers, members, input) with an injected clock instead of sleeps."""

from __future__ import annotations

import ast
import dataclasses
import doctest
import inspect
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ui.classroom.rooms
from ui.classroom.rooms import (
    CLIENT_ANSWERS,
    CLIENT_ROOMS,
    CLIENT_ROOMS_SECONDS,
    ENDED,
    EXPIRED,
    IDLE_SECONDS,
    IN_USE_SECONDS,
    MAX_ANSWERS,
    MAX_MEMBERS,
    MAX_OPTIONS,
    MAX_PIN_FAILURES,
    MAX_ROOMS,
    MAX_SETTINGS_CHARS,
    PIN_LOCK_SECONDS,
    PRESENCE_WINDOW,
    BadInput,
    MemoryStore,
    NotFollowing,
    NotPresenter,
    Question,
    QuestionClosed,
    RoomEnded,
    RoomError,
    RoomStore,
    StaleUpdate,
    Superseded,
    Tally,
    TooMany,
    UnknownRoom,
    parse_code,
)
from ui.classroom.rooms_redis import RedisStore

ROOT = Path(__file__).resolve().parents[3]


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, seconds: float) -> None:
        self.t += seconds


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture(params=["memory", "redis"])
def store(request, clock):
    """Every test of a store runs on both: the process's own and Redis (a real server, emptied first)."""
    if request.param == "memory":
        return MemoryStore(now=clock)
    server = request.getfixturevalue("redis_server")
    server.client.flushdb()
    return RedisStore(server.url, now=clock)


def members(store, code):
    """The member ids a room remembers, least recently seen first."""
    if isinstance(store, MemoryStore):
        return list(store._rooms[code].members)
    return store._client.zrange(store.keys(code)[2], 0, -1)


@pytest.fixture
def room(store):
    return store.create(settings={"sentence": "the cat sat", "d_model": "64"})


NEXT_TOKEN = Question("next_token", ("cat", "dog", "mat"), answer=2, params={"position": "3"})


def frozen(store, code):
    """Everything a follower can see of a room, to check that a refused call changed nothing."""
    return store.state(code), store.tally(code)


# --- the presenter drives, with versions ----------------------------------------------------------


def test_a_new_room_is_read_with_its_settings_at_version_1(store, room):
    state = store.state(room.code)
    assert (state.code, state.version, state.step) == (room.code, 1, 0)
    assert state.settings == {"sentence": "the cat sat", "d_model": "64"}
    assert (state.question, state.ended, state.end_reason) == (None, False, None)
    assert store.version(room.code) == 1


def test_every_change_a_follower_must_see_raises_the_version(store, room):
    code, secret = room.code, room.secret
    assert store.update(code, secret, step=3) == 2
    assert store.update(code, secret, settings={"sentence": "a dog"}) == 3
    assert store.update(code, secret, step=3, settings={"sentence": "a dog"}) == 3  # nothing changed
    assert store.update(code, secret) == 3  # a keep-alive
    assert store.ask(code, secret, NEXT_TOKEN) == 4
    assert store.reveal(code, secret) == 5
    assert store.reveal(code, secret) == 5  # already revealed
    assert store.ask(code, secret, None) == 6
    assert store.ask(code, secret, None) == 6  # nothing to withdraw
    assert store.end(code, secret) == 7
    state = store.state(code)
    assert (state.version, state.step, state.ended, state.end_reason) == (7, 3, True, ENDED)


def test_answers_and_presence_do_not_move_the_version(store, room):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    before = store.version(room.code)
    store.seen(room.code, "member-1")
    store.answer(room.code, 1, "member-1", 0)
    assert store.version(room.code) == before


def test_the_model_answer_is_hidden_until_revealed(store, room):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    question = store.state(room.code).question
    assert (question.number, question.kind, question.options) == (1, "next_token", ("cat", "dog", "mat"))
    assert question.params == {"position": "3"}
    assert (question.revealed, question.answer) == (False, None)
    store.reveal(room.code, room.secret)
    question = store.state(room.code).question
    assert (question.revealed, question.answer) == (True, 2)


def test_a_read_state_is_a_copy(store, room):
    store.state(room.code).settings["sentence"] = "changed by a page"
    assert store.state(room.code).settings["sentence"] == "the cat sat"


@pytest.mark.parametrize("kind", [MemoryStore, RedisStore])
def test_each_store_has_every_method_of_the_protocol_with_its_signature(kind):
    methods = [name for name, _ in inspect.getmembers(RoomStore, inspect.isfunction) if name[0] != "_"]
    assert len(methods) == 17
    for name in methods:
        wanted = inspect.signature(getattr(RoomStore, name))
        assert inspect.signature(getattr(kind, name)) == wanted, name


# --- a student cannot drive --------------------------------------------------------------------------

NOT_SECRETS = [None, "", "x", 12345, b"bytes", "ü" * 50, "s" * 100_000]


@pytest.mark.parametrize("secret", NOT_SECRETS, ids=repr)
def test_without_the_secret_nothing_changes(store, room, secret):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    before = frozen(store, room.code)
    calls = [
        lambda: store.update(room.code, secret, step=5),
        lambda: store.update(room.code, secret, settings={"sentence": "tampered"}),
        lambda: store.ask(room.code, secret, Question("x", ("a", "b"))),
        lambda: store.ask(room.code, secret, None),
        lambda: store.reveal(room.code, secret),
        lambda: store.end(room.code, secret),
        lambda: store.pin(room.code, secret),
    ]
    for call in calls:
        with pytest.raises(NotPresenter, match=r"^Only the lecturer of this room can change it\.$"):
            call()
    assert frozen(store, room.code) == before


def test_the_secret_of_another_room_drives_nothing_here(store, room):
    other = store.create()
    with pytest.raises(NotPresenter):
        store.update(room.code, other.secret, step=1)
    assert store.state(room.code).step == 0


def test_a_replayed_old_update_changes_nothing(store, room):
    version = store.version(room.code)
    store.update(room.code, room.secret, step=1, if_version=version)  # the lecturer's request
    store.update(room.code, room.secret, step=2, if_version=version + 1)  # and the next one
    before = frozen(store, room.code)
    with pytest.raises(
        StaleUpdate, match=r"^The room changed since this page was drawn; nothing was changed\.$"
    ):
        store.update(room.code, room.secret, step=1, if_version=version)  # the first, replayed
    with pytest.raises(NotPresenter):
        store.update(room.code, None, step=1, if_version=store.version(room.code))  # by a student
    assert frozen(store, room.code) == before


def test_only_the_newest_claim_moves_the_room(store, room):
    """Two pages of one lecturer (two tabs, or a second device after "Take over a room"): each claims
    the room; the older one's sends are refused from then on, changing nothing, until it claims again."""
    old = store.claim(room.code, room.secret)
    store.update_claimed(room.code, room.secret, old, step=3)
    new = store.claim(room.code, store.recover(room.code, store.pin(room.code, room.secret)))
    assert new > old
    store.update_claimed(room.code, room.secret, new, step=8)
    before = frozen(store, room.code)
    for _ in range(3):  # the older page's keep-alive, again and again
        with pytest.raises(Superseded, match=r"^This room is presented from another tab or device now\.$"):
            store.update_claimed(room.code, room.secret, old, step=3, settings={"sentence": "old tab"})
    assert frozen(store, room.code) == before and store.state(room.code).step == 8
    again = store.claim(room.code, room.secret)  # "Present from here" on the older page
    assert store.update_claimed(room.code, room.secret, again, step=3) == before[0].version + 1
    with pytest.raises(Superseded):
        store.update_claimed(room.code, room.secret, new, step=8)
    assert store.state(room.code).step == 3
    store.update(room.code, room.secret, step=4)  # a plain update still answers to the secret alone


def test_a_claim_takes_the_secret_and_an_open_room(store, room):
    before = frozen(store, room.code)
    for secret in (None, "", "x" * 100_000):
        with pytest.raises(NotPresenter):
            store.claim(room.code, secret)
    claim = store.claim(room.code, room.secret)
    with pytest.raises(NotPresenter):
        store.update_claimed(room.code, "wrong", claim, step=5)
    for bad in (0, -1, "1", 2.5, None, 2**63):
        with pytest.raises(BadInput):
            store.update_claimed(room.code, room.secret, bad, step=5)
    assert frozen(store, room.code) == before
    store.end(room.code, room.secret)
    with pytest.raises(RoomEnded):
        store.claim(room.code, room.secret)
    with pytest.raises(UnknownRoom):
        store.claim("ZZZZZZ" if room.code != "ZZZZZZ" else "YYYYYY", room.secret)


def test_the_secret_and_pin_are_nowhere_a_student_reads(store, room):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    vote(store, room.code, 1, "voter-1", 0)
    seen = [repr(room), repr(store.state(room.code)), repr(store.tally(room.code))]
    for error in (NotPresenter(), UnknownRoom(), RoomEnded(ENDED), RoomEnded(EXPIRED)):
        seen.append(str(error))
    for text in seen:
        assert room.secret not in text and room.pin not in text
    assert repr(room) == f"Created(code='{room.code}')"


def test_a_secret_is_long_and_random_and_a_pin_six_digits(store, room):
    other = store.create()
    assert len(room.secret) >= 40 and room.secret != other.secret
    assert len(room.pin) == 6 and room.pin.isdigit()
    assert store.pin(room.code, room.secret) == room.pin


# --- PIN recovery ------------------------------------------------------------------------------------


def wrong(pin: str) -> str:
    return f"{(int(pin) + 1) % 10**6:06d}"


def test_the_pin_gives_the_secret_on_another_device(store, room):
    assert store.recover(room.code, room.pin) == room.secret
    assert store.recover(room.code, f" {room.pin[:3]}-{room.pin[3:]} ") == room.secret
    store.update(room.code, store.recover(room.code, room.pin), step=4)
    assert store.state(room.code).step == 4


def test_wrong_pins_lock_the_room_out_and_the_lock_out_ends(store, room, clock):
    for _ in range(MAX_PIN_FAILURES):
        with pytest.raises(NotPresenter):
            store.recover(room.code, wrong(room.pin))
    with pytest.raises(TooMany, match=r"^Too many wrong PINs: try again later\.$") as locked:
        store.recover(room.code, room.pin)  # even the right one
    assert locked.value.retry_after == PIN_LOCK_SECONDS
    clock.advance(PIN_LOCK_SECONDS - 1)
    with pytest.raises(TooMany) as locked:
        store.recover(room.code, room.pin)
    assert locked.value.retry_after == 1
    clock.advance(1)
    assert store.recover(room.code, room.pin) == room.secret


def test_guesses_are_bounded_per_lock_out_period(store, room, clock):
    """In one day a guesser gets MAX_PIN_FAILURES tries per PIN_LOCK_SECONDS, no more."""
    tries = 0
    for _ in range(2000):
        try:
            store.recover(room.code, wrong(room.pin))
        except NotPresenter:
            tries += 1
        except TooMany:
            pass
        clock.advance(1)
        store.update(room.code, room.secret)  # the lecturer keeps the room alive
    assert tries <= MAX_PIN_FAILURES * (2000 // PIN_LOCK_SECONDS + 1)


def test_a_right_pin_resets_the_count_of_wrong_ones(store, room):
    for _ in range(MAX_PIN_FAILURES - 1):
        with pytest.raises(NotPresenter):
            store.recover(room.code, wrong(room.pin))
    store.recover(room.code, room.pin)
    for _ in range(MAX_PIN_FAILURES - 1):
        with pytest.raises(NotPresenter):
            store.recover(room.code, wrong(room.pin))
    assert store.recover(room.code, room.pin) == room.secret


@pytest.mark.parametrize(
    "pin", ["", "12345", "1234567", "abcdef", "１２３４５６", None, 123456, "9" * 10_000]
)
def test_a_malformed_pin_is_bad_input_and_no_try(store, room, pin):
    for _ in range(MAX_PIN_FAILURES + 2):
        with pytest.raises(BadInput, match=r"^The presenter PIN is 6 digits\.$"):
            store.recover(room.code, pin)
    assert store.recover(room.code, room.pin) == room.secret


def test_a_pin_guesser_locks_out_itself_not_the_lecturer(store, room, clock):
    """13 tries a second from one client: 5 are checked, then that client alone is locked out; the
    lecturer's right PIN from another device goes through, however long the guesser keeps trying."""
    checked, locked = 0, 0
    for second in range(120):
        for _ in range(13):
            try:
                store.recover(room.code, wrong(room.pin), client="203.0.113.66")
            except NotPresenter:
                checked += 1
            except TooMany as error:
                assert error.reason == "pin"
                locked += 1
        if second % 10 == 0:
            assert store.recover(room.code, room.pin, client="198.51.100.1") == room.secret
        clock.advance(1)
    assert checked == MAX_PIN_FAILURES and locked == 120 * 13 - MAX_PIN_FAILURES
    with pytest.raises(TooMany):  # the guesser's own right PIN waits for its lock-out to end
        store.recover(room.code, room.pin, client="203.0.113.66")
    clock.advance(PIN_LOCK_SECONDS)
    assert store.recover(room.code, room.pin, client="203.0.113.66") == room.secret


def test_a_lock_out_is_per_room(store, room):
    other = store.create()
    for _ in range(MAX_PIN_FAILURES):
        with pytest.raises(NotPresenter):
            store.recover(room.code, wrong(room.pin))
    assert store.recover(other.code, other.pin) == other.secret


# --- answers and the tally ---------------------------------------------------------------------------


def vote(store, code, question, voter, option, client=None):
    """A student's page: seen following the room, then its answer (what ui/classroom/quiz.py does)."""
    store.seen(code, voter)
    return store.answer(code, question, voter, option, client=client)


def test_one_answer_per_voter_per_question(store, room):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    for voter in ("voter-1", "voter-2"):
        store.seen(room.code, voter)
    assert store.answer(room.code, 1, "voter-1", 2) is True
    assert store.answer(room.code, 1, "voter-1", 2) is False
    assert store.answer(room.code, 1, "voter-1", 0) is False  # the first answer stands
    assert store.answer(room.code, 1, "voter-2", 0) is True
    assert store.tally(room.code) == Tally(number=1, counts=(1, 0, 1), answered=2)
    store.ask(room.code, room.secret, NEXT_TOKEN)  # a new question: everyone answers again
    assert store.tally(room.code) == Tally(number=2, counts=(0, 0, 0), answered=0)
    assert store.answer(room.code, 2, "voter-1", 1) is True


def test_the_tally_names_nobody(store, room):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    for voter in ("alice-secret-id", "bob-secret-id"):
        vote(store, room.code, 1, voter, 1)
    tally = store.tally(room.code)
    assert [f.name for f in dataclasses.fields(tally)] == ["number", "counts", "answered"]
    for text in (repr(tally), repr(store.state(room.code))):
        assert "secret-id" not in text


def test_answers_only_to_the_open_question(store, room):
    with pytest.raises(QuestionClosed):
        store.answer(room.code, 1, "voter-1", 0)  # nothing asked yet
    assert store.tally(room.code) is None
    store.ask(room.code, room.secret, NEXT_TOKEN)
    store.ask(room.code, room.secret, NEXT_TOKEN)
    with pytest.raises(QuestionClosed):
        store.answer(room.code, 1, "voter-1", 0)  # a late answer to the first question
    store.reveal(room.code, room.secret)
    with pytest.raises(
        QuestionClosed, match=r"^This question is closed: the lecturer has moved on or revealed the answer\.$"
    ):
        store.answer(room.code, 2, "voter-1", 0)  # after the reveal
    assert store.tally(room.code).answered == 0


@pytest.mark.parametrize("voter", ["", "v" * 65, "<script>", "a b", "ü", None, 7, "x\x00"], ids=repr)
def test_a_bad_voter_id_is_bad_input(store, room, voter):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    with pytest.raises(BadInput, match=r"^The voter id must be 1 to 64 letters, digits, - or _\.$"):
        store.answer(room.code, 1, voter, 0)


@pytest.mark.parametrize("option", [-1, 3, MAX_OPTIONS, True, "1", 1.0, None], ids=repr)
def test_a_bad_option_is_bad_input(store, room, option):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    with pytest.raises(BadInput):
        store.answer(room.code, 1, "voter-1", option)
    assert store.tally(room.code).answered == 0


def test_answers_flooded_from_one_voter_count_once(store, room):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    store.seen(room.code, "one-session")
    results = [store.answer(room.code, 1, "one-session", i % 3) for i in range(10_000)]
    assert results.count(True) == 1
    assert store.tally(room.code).answered == 1


def test_answers_flooded_from_many_voter_ids_stay_bounded(store, room, clock):
    """Members who come and go, from many clients: the question's memory stays bounded."""
    store.ask(room.code, room.secret, NEXT_TOKEN)
    refused = 0
    for i in range(MAX_ANSWERS + 300):
        try:
            vote(store, room.code, 1, f"made-up-{i}", i % 3, client=f"10.0.{i % 50}.1")
            clock.advance(0.001)
        except TooMany as error:
            assert str(error) == f"This question has taken its {MAX_ANSWERS} answers."
            assert error.reason == "answers"
            refused += 1
    tally = store.tally(room.code)
    assert tally.answered == sum(tally.counts) == MAX_ANSWERS
    assert refused == 300


def test_an_answer_flood_from_one_client_leaves_the_class_its_answers(store, room, clock):
    """505 scripted voters with fresh ids from one client: CLIENT_ANSWERS are counted, then that
    client is refused; every real student, on their own address, still answers."""
    store.ask(room.code, room.secret, NEXT_TOKEN)
    counted, refused = 0, []
    for i in range(505):
        try:
            counted += vote(store, room.code, 1, f"script-{i}", 0, client="203.0.113.66")
        except TooMany as error:
            refused.append(error)
        clock.advance(72 / 505)
    assert counted == CLIENT_ANSWERS and len(refused) == 505 - CLIENT_ANSWERS
    assert {error.reason for error in refused} == {"client_answers"}
    for i in range(120):
        assert vote(store, room.code, 1, f"student-{i}", 2, client=f"198.51.100.{i}") is True
    assert store.tally(room.code) == Tally(1, (CLIENT_ANSWERS, 0, 120), CLIENT_ANSWERS + 120)
    store.ask(room.code, room.secret, NEXT_TOKEN)  # a new question: the client's count starts again
    store.seen(room.code, "script-0")
    assert store.answer(room.code, 2, "script-0", 1, client="203.0.113.66") is True


def test_only_a_member_seen_following_answers(store, room, clock):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    with pytest.raises(
        NotFollowing, match=r"^Only a student following the room can answer: this answer was not counted\.$"
    ):
        store.answer(room.code, 1, "never-seen", 0)
    store.seen(room.code, "went-away")
    clock.advance(PRESENCE_WINDOW + 1)
    with pytest.raises(NotFollowing):
        store.answer(room.code, 1, "went-away", 0)
    store.seen(room.code, "went-away")  # back on the page
    assert store.answer(room.code, 1, "went-away", 0) is True
    assert store.tally(room.code).answered == 1


# --- questions ---------------------------------------------------------------------------------------

BAD_QUESTIONS = {
    "one option": Question("k", ("a",)),
    "too many options": Question("k", tuple(str(i) for i in range(MAX_OPTIONS + 1))),
    "equal options": Question("k", ("a", "a")),
    "empty option": Question("k", ("a", "")),
    "long option": Question("k", ("a", "b" * 201)),
    "control character": Question("k", ("a", "b\n")),
    "answer out of range": Question("k", ("a", "b"), answer=2),
    "answer a bool": Question("k", ("a", "b"), answer=True),
    "kind with capitals": Question("Kind", ("a", "b")),
    "options a string": Question("k", "ab"),
    "params not a dict": Question("k", ("a", "b"), params=["layer"]),
    "too many params": Question("k", ("a", "b"), params={f"p{i}": "1" for i in range(9)}),
    "not a question": {"kind": "k", "options": ("a", "b")},
}


@pytest.mark.parametrize("question", BAD_QUESTIONS.values(), ids=BAD_QUESTIONS.keys())
def test_a_malformed_question_is_bad_input_and_changes_nothing(store, room, question):
    before = frozen(store, room.code)
    with pytest.raises(BadInput):
        store.ask(room.code, room.secret, question)
    assert frozen(store, room.code) == before


def test_a_question_with_options_in_a_list_is_kept_as_a_tuple(store, room):
    store.ask(room.code, room.secret, Question("bpe_count", ["3", "4", "5"], answer=0, params={"k": "2"}))
    assert store.state(room.code).question.options == ("3", "4", "5")


def test_there_is_nothing_to_reveal_without_a_question(store, room):
    with pytest.raises(BadInput, match=r"^There is no question to reveal\.$"):
        store.reveal(room.code, room.secret)


# --- presence ----------------------------------------------------------------------------------------


def test_presence_counts_members_seen_in_the_last_seconds(store, room, clock):
    store.seen(room.code, "a")
    clock.advance(10)
    store.seen(room.code, "b")
    store.seen(room.code, "b")  # twice is one member
    assert store.present(room.code, within=15) == 2
    assert store.present(room.code, within=5) == 1
    clock.advance(10)
    assert store.present(room.code, within=15) == 1
    store.seen(room.code, "a")  # back
    assert store.present(room.code, within=15) == 2
    clock.advance(PRESENCE_WINDOW + 1)
    assert store.present(room.code, within=PRESENCE_WINDOW) == 0


def test_presence_stays_bounded_and_forgets_the_least_recently_seen(store, room, clock):
    for i in range(3 * MAX_MEMBERS):
        store.seen(room.code, f"member-{i}")
        clock.advance(0.001)
    assert store.present(room.code, within=PRESENCE_WINDOW) == MAX_MEMBERS
    assert len(members(store, room.code)) == MAX_MEMBERS
    assert "member-0" not in members(store, room.code)
    assert f"member-{3 * MAX_MEMBERS - 1}" in members(store, room.code)


def test_old_presence_entries_are_forgotten(store, room, clock):
    for i in range(100):
        store.seen(room.code, f"member-{i}")
    clock.advance(PRESENCE_WINDOW + 1)
    store.seen(room.code, "late")
    assert members(store, room.code) == ["late"]


@pytest.mark.parametrize(
    "within", [0, -1, PRESENCE_WINDOW + 1, float("nan"), float("inf"), True, "10"], ids=repr
)
def test_a_bad_presence_window_is_bad_input(store, room, within):
    with pytest.raises(BadInput):
        store.present(room.code, within=within)


# --- expiry and ending -------------------------------------------------------------------------------


def test_a_room_expires_after_its_idle_time_and_says_so(store, room, clock):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    clock.advance(IDLE_SECONDS - 1)
    store.update(room.code, room.secret)  # a presenter call keeps it alive
    clock.advance(IDLE_SECONDS - 1)
    vote(store, room.code, 1, "member-1", 0)  # a student's does not
    assert not store.state(room.code).ended
    version = store.version(room.code)
    clock.advance(1)
    assert store.version(room.code) == version + 1  # followers see that it ended
    state = store.state(room.code)
    assert (state.ended, state.end_reason, state.question) == (True, EXPIRED, None)
    with pytest.raises(
        RoomEnded, match=r"^This room has expired: the lecturer did nothing in it for 120 minutes\.$"
    ):
        store.update(room.code, room.secret, step=1)
    for call in (
        lambda: store.answer(room.code, 1, "voter-2", 0),
        lambda: store.tally(room.code),
        lambda: store.seen(room.code, "member-2"),
        lambda: store.present(room.code),
        lambda: store.recover(room.code, room.pin),
    ):
        with pytest.raises(RoomEnded) as ended:
            call()
        assert ended.value.reason == EXPIRED
    assert store.version(room.code) == version + 1


def test_a_room_ended_by_the_lecturer_says_so(store, room):
    store.end(room.code, room.secret)
    assert store.state(room.code).end_reason == ENDED
    with pytest.raises(RoomEnded, match=r"^This room has ended: the lecturer ended it\.$") as ended:
        store.answer(room.code, 1, "voter-1", 0)
    assert ended.value.reason == ENDED
    with pytest.raises(RoomEnded):
        store.end(room.code, room.secret)


# --- bounded rooms -----------------------------------------------------------------------------------


def test_a_thousand_rooms_created_in_a_loop_stay_bounded(store, clock):
    made = []
    for _ in range(1000):
        made.append(store.create())
        clock.advance(IN_USE_SECONDS / 100)  # the idlest rooms are no longer in use
    assert len(store) == MAX_ROOMS
    for gone in made[: 1000 - MAX_ROOMS]:
        with pytest.raises(
            UnknownRoom, match=r"^There is no room with this code\. Check the code on the projector\.$"
        ):
            store.state(gone.code)
    for kept in made[1000 - MAX_ROOMS :]:
        assert store.update(kept.code, kept.secret, step=1) == 2
    assert len({r.code for r in made}) == 1000


def test_a_room_whose_lecturer_acts_outlives_a_flood_of_new_rooms(store, clock):
    lecture = store.create()
    for i in range(1000):
        store.create()
        clock.advance(IN_USE_SECONDS / 100)
        if i % (MAX_ROOMS // 2) == 0:
            store.update(lecture.code, lecture.secret)
    assert store.update(lecture.code, lecture.secret, step=2) == 2
    assert len(store) == MAX_ROOMS


def test_a_flood_of_rooms_from_one_client_is_refused_and_drops_no_room(store, clock):
    """205 rooms from one client in 30 s: CLIENT_ROOMS are made, the rest refused with the time to
    wait; the lecturer's room and its follower are untouched, and other clients still start rooms."""
    lecture = store.create(client="198.51.100.1")
    store.seen(lecture.code, "student-1")
    made, refused = [], []
    for _ in range(205):
        try:
            made.append(store.create(client="203.0.113.66"))
        except TooMany as error:
            refused.append(error)
        clock.advance(30 / 205)
    assert len(made) == CLIENT_ROOMS and len(refused) == 205 - CLIENT_ROOMS
    assert {error.reason for error in refused} == {"rooms"}
    assert str(refused[-1]) == "Too many rooms were started from here: try again in 10 min."
    assert 0 < refused[-1].retry_after <= CLIENT_ROOMS_SECONDS
    assert store.state(lecture.code).version == 1
    assert store.update(lecture.code, lecture.secret, step=2) == 2
    store.create(client="198.51.100.2")  # another client
    clock.advance(CLIENT_ROOMS_SECONDS)
    store.create(client="203.0.113.66")  # the flood's client, once its window has passed


def test_rooms_in_use_are_never_dropped_to_make_space(store, clock):
    """A lecturer idle on another page while the class follows, and a lecturer who acted lately, keep
    their rooms through a flood from many clients; a full store says so instead of dropping them."""
    followed = store.create()
    store.update(followed.code, followed.secret, step=3)
    clock.advance(IN_USE_SECONDS)  # the lecturer has been on another page since: only followers show
    recent = store.create()
    refused = []
    for i in range(2 * MAX_ROOMS):
        if i % 20 == 0:
            store.seen(followed.code, "student-1")  # a follower's poll
        try:
            store.create()
        except TooMany as error:
            refused.append(error)
        clock.advance(1)
    assert len(refused) == MAX_ROOMS + 2
    assert {error.reason for error in refused} == {"full"}
    assert str(refused[0]) == "Every room this server can hold is in use: try again later."
    assert store.state(followed.code).step == 3
    assert store.update(recent.code, recent.secret, step=1) == 2
    assert len(store) == MAX_ROOMS
    clock.advance(IN_USE_SECONDS)  # nobody follows or drives them any more: they make space again
    store.create()


def test_ended_rooms_go_before_live_ones(store, clock):
    made = []
    for _ in range(MAX_ROOMS):
        made.append(store.create())
        clock.advance(1)
    newest = made[-1]
    store.end(newest.code, newest.secret)
    store.create()
    with pytest.raises(UnknownRoom):
        store.state(newest.code)
    assert store.state(made[0].code).version == 1  # the oldest live room is still there


# --- input -------------------------------------------------------------------------------------------

CODES = {
    "K7MQ2P": "K7MQ2P",
    "k7mq2p": "K7MQ2P",
    " k7m-q2p ": "K7MQ2P",
    "K7M Q2P": "K7MQ2P",
    "--K7M--Q2P--": "K7MQ2P",
    "": None,
    "K7MQ2": None,
    "K7MQ2PX": None,
    "K7MO2P": None,  # O
    "K7M02P": None,  # 0
    "K7MI2P": None,  # I
    "K7M12P": None,  # 1
    "K7ML2P": None,  # L
    "K7M\x00Q2P": None,
    "K7MQ2P\n": None,
    "K7M\tQ2P": None,
    "<script>": None,
    "<scri>": None,
    "A" * 10_000: None,
    " " * 10_000 + "K7MQ2P": None,
    "ＫＫＫＫＫＫ": None,  # full width
    "K7MQ2\u212a": None,  # the Kelvin sign, upper-cased to K by str.upper
    "K7MQ2\ud800": None,
}


@pytest.mark.parametrize(("raw", "code"), CODES.items(), ids=[repr(r[:20]) for r in CODES])
def test_parse_code(raw, code):
    assert parse_code(raw) == code


@pytest.mark.parametrize("raw", [None, 123456, b"K7MQ2P", ["K7MQ2P"]], ids=repr)
def test_parse_code_takes_only_text(raw):
    assert parse_code(raw) is None


def test_new_codes_use_the_alphabet_and_do_not_repeat(store):
    codes = {store.create().code for _ in range(MAX_ROOMS)}
    assert len(codes) == MAX_ROOMS
    assert all(parse_code(code) == code for code in codes)


@pytest.mark.parametrize(
    "raw", [raw for raw, code in CODES.items() if code is None], ids=lambda r: repr(r[:20])
)
def test_a_malformed_code_is_bad_input_that_does_not_echo_it(store, room, raw):
    for call in (store.state, store.version, store.tally, store.present):
        with pytest.raises(BadInput, match=r"^A room code is 6 letters and digits, like K7M-Q2P\.$"):
            call(raw)
    with pytest.raises(BadInput):
        store.update(raw, room.secret, step=1)


def test_a_well_formed_code_of_no_room_is_unknown(store, room):
    code = next(c for c in ("K7MQ2P", "K7MQ2R") if c != room.code)
    with pytest.raises(UnknownRoom):
        store.state(code)
    assert store.state(room.code.lower()).code == room.code  # what a student types works


@pytest.mark.parametrize("step", [-1, 1000, True, "3", 2.0, None], ids=repr)
def test_a_bad_step_is_bad_input_and_changes_nothing(store, room, step):
    if step is None:  # None means "unchanged" for update; creating takes a number
        with pytest.raises(BadInput):
            store.create(step=step)
        return
    with pytest.raises(BadInput, match=r"^The step must be a whole number from 0 to 999\.$"):
        store.update(room.code, room.secret, step=step)
    assert store.state(room.code).version == 1


BAD_SETTINGS = {
    "not a dict": [("sentence", "x")],
    "a number value": {"d_model": 64},
    "capital key": {"Sentence": "x"},
    "long key": {"k" * 33: "x"},
    "key with a dash": {"d-model": "64"},
    "control character": {"sentence": "a\x00b"},
    "lone surrogate": {"sentence": "a\ud800b"},
    "too long in all": {"sentence": "x" * MAX_SETTINGS_CHARS},
    "too many": {f"k{i}": "1" for i in range(33)},
}


@pytest.mark.parametrize("settings", BAD_SETTINGS.values(), ids=BAD_SETTINGS.keys())
def test_bad_settings_are_bad_input_and_change_nothing(store, room, settings):
    with pytest.raises(BadInput):
        store.update(room.code, room.secret, settings=settings)
    with pytest.raises(BadInput):
        store.create(settings=settings)
    assert store.state(room.code).settings == {"sentence": "the cat sat", "d_model": "64"}


def test_settings_keep_text_a_sentence_may_hold(store, room):
    sentence = "第一行\n\tthe <cat> & 🐈 " + "x" * 2000
    store.update(room.code, room.secret, settings={"sentence": sentence, "target": "y" * 2000})
    assert store.state(room.code).settings["sentence"] == sentence


def test_every_error_is_a_room_error():
    for error in (UnknownRoom, RoomEnded, NotPresenter, BadInput, TooMany, QuestionClosed, StaleUpdate,
                  Superseded):
        assert issubclass(error, RoomError)


# --- threads -----------------------------------------------------------------------------------------


def test_many_threads_answering_at_once_count_each_voter_once(store, room):
    store.ask(room.code, room.secret, NEXT_TOKEN)
    voters = [f"voter-{i}" for i in range(300)]
    barrier = threading.Barrier(12)

    def student(k: int) -> None:
        barrier.wait()
        for i, voter in enumerate(voters[k::3] * 3):  # each voter sent by 4 threads, 3 times each
            vote(store, room.code, 1, voter, i % 3)

    threads = [threading.Thread(target=student, args=(k % 3,)) for k in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    tally = store.tally(room.code)
    assert tally.answered == sum(tally.counts) == len(voters)
    assert store.present(room.code) == len(voters)


def test_concurrent_updates_each_get_their_own_version(store, room):
    got: list[int] = []
    barrier = threading.Barrier(8)

    def lecturer(k: int) -> None:
        barrier.wait()
        for i in range(100):
            got.append(store.update(room.code, room.secret, settings={"seed": f"{k}-{i}"}))

    threads = [threading.Thread(target=lecturer, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(got) == list(range(2, 802))
    assert store.version(room.code) == 801


def test_concurrent_creations_stay_bounded(clock):
    store = MemoryStore(now=clock)
    barrier = threading.Barrier(8)

    refused = []

    def creator() -> None:
        barrier.wait()
        for _ in range(100):
            try:
                store.create()
            except TooMany as error:  # every room is new, so in use: none is dropped
                refused.append(error.reason)

    threads = [threading.Thread(target=creator) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store) == MAX_ROOMS
    assert refused == ["full"] * (800 - MAX_ROOMS)


# --- the module --------------------------------------------------------------------------------------


def test_docstring_examples():
    assert doctest.testmod(ui.classroom.rooms).failed == 0


def test_rooms_imports_only_the_standard_library():
    tree = ast.parse((ROOT / "ui" / "classroom" / "rooms.py").read_text(encoding="utf-8"))
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert {name.split(".")[0] for name in names} <= set(sys.stdlib_module_names) | {"__future__"}


PROBE = """
import importlib.util, sys
sys.modules["streamlit"] = None  # any import of streamlit now fails
spec = importlib.util.spec_from_file_location("rooms", "ui/classroom/rooms.py")
rooms = importlib.util.module_from_spec(spec)
sys.modules["rooms"] = rooms
spec.loader.exec_module(rooms)
store = rooms.MemoryStore()
room = store.create()
store.update(room.code, room.secret, step=1)
loaded = [m for m, module in sys.modules.items() if module is not None and m.startswith(("streamlit", "ui"))]
print(store.version(room.code), sorted(loaded))
"""


def test_rooms_works_in_an_interpreter_without_streamlit():
    """``import ui.classroom.rooms`` runs ui/__init__.py (Streamlit helpers); the module itself needs none."""
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2 []", out.stdout + out.stderr
