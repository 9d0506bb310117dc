"""ui.hall.broadcast while the shared store is away: a follower who joins the room's channel then (a
student opening the room's address, a stream reconnecting) is told so at once, as the followers
already there were, whether the channel has the slide in that follower's language or not; when the
store answers, every follower gets the slide again (which clears the note), also when a language new
to the channel had to be built meanwhile. Found in a real cluster (tests/browser/test_cluster.py): a
latecomer on a replica whose channel had said ``away`` got the slide and no word of the store; and
here, the English followers kept the note after the store came back when a 中文 one had joined."""

from __future__ import annotations

import asyncio
import json

from hallclient import Away

from i18n import t
from ui.classroom.rooms import MemoryStore
from ui.hall.broadcast import Hall


def event(raw: bytes) -> tuple[str, dict | None]:
    """(name, JSON data) of one Server-Sent Event; a comment is ("", None)."""
    name, data = "", None
    for line in raw.decode().splitlines():
        if line.startswith("event: "):
            name = line[7:]
        elif line.startswith("data: "):
            data = json.loads(line[6:])
    return name, data


async def until(stream, name: str, timeout: float = 2.0) -> dict:
    """The data of the stream's next ``name`` event (others on the way are skipped)."""
    async with asyncio.timeout(timeout):
        while True:
            got, data = event(await anext(stream))
            if got == name:
                return data


def test_a_follower_who_joins_while_the_store_is_away_is_told_at_once():
    store = MemoryStore()
    room = store.create(step=2, settings={"weights": "random"})
    flaky = Away(store)

    def build(state, tally, lang):
        return json.dumps({"room": {"code": state.code, "version": state.version, "step": state.step}})

    async def main():
        hall = Hall(build, poll=0.2)
        hall.connect(lambda: flaky)
        first = hall.follow(room.code, "en")
        await until(first, "room")
        flaky.away = True
        assert (await until(first, "away"))["said"] == t("classroom.unavailable", "en")
        late = hall.follow(room.code, "en")  # the slide is there in English: it comes, then why it stands
        assert (await until(late, "room"))["room"]["step"] == 2
        assert (await until(late, "away"))["said"] == t("classroom.unavailable", "en")
        later = hall.follow(room.code, "zh")  # no slide in 中文 yet: only why there is none
        assert (await until(later, "away"))["said"] == t("classroom.unavailable", "zh")
        flaky.away = False
        for stream in (first, late, later):  # the store back: the slide, and the note goes
            assert (await until(stream, "room"))["room"]["step"] == 2
        for stream in (first, late, later):
            await stream.aclose()
        await hall.close()

    asyncio.run(main())
