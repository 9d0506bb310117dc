"""The key queue's server side (ui/page/keys.py ``new_moves``): each press the browser lists is applied
once, in order, stopped at the first and last step as a click is; what the browser sends is checked."""

from __future__ import annotations

from ui.page.keys import MAX_PRESSES, new_moves


def presses(*moves: int, first: int = 1) -> list[dict]:
    return [{"seq": first + i, "move": m} for i, m in enumerate(moves)]


def test_every_new_press_is_applied_once_in_order():
    listed = presses(1, 1, -1, 1)
    assert new_moves(listed, 0, 3, 12) == ([1, 1, -1, 1], 4)
    # the next value still lists the first presses (merged updates): only the newer ones move
    assert new_moves(listed + presses(-1, first=5), 4, 5, 12) == ([-1], 5)
    assert new_moves(listed, 4, 5, 12) == ([], 4)  # the same value again moves nothing


def test_presses_past_an_end_are_dropped_as_a_disabled_button_ignores_them():
    # at step 1: two PageUp do nothing, then three PageDown move three steps (not one)
    assert new_moves(presses(-1, -1, 1, 1, 1), 0, 1, 12) == ([1, 1, 1], 5)
    # near the last step: PageDown ×3 then PageUp ends one step before the last
    assert new_moves(presses(1, 1, 1, -1), 0, 10, 12) == ([1, 1, -1], 4)


def test_what_the_browser_sends_is_checked():
    assert new_moves(None, 2, 3, 12) == ([], 2)
    assert new_moves("PageDown", 2, 3, 12) == ([], 2)
    junk = [1, {"seq": "3", "move": 1}, {"seq": 4, "move": 5}, {"seq": 5, "move": True},
            {"seq": 6}, {"move": 1}, {"seq": 7, "move": -1}]
    assert new_moves(junk, 2, 3, 12) == ([-1], 7)
    # out of order or listed twice: applied once each, by seq
    assert new_moves([*presses(1, first=9), *presses(-1, 1, first=7), *presses(1, first=9)], 6, 3, 12) \
        == ([-1, 1, 1], 9)
    # a flood: only the last MAX_PRESSES are read
    flood = presses(*[1] * (MAX_PRESSES + 50))
    moves, seen = new_moves(flood, 0, 1, 10_000)
    assert len(moves) == MAX_PRESSES and seen == MAX_PRESSES + 50
