"""The parts a URL can switch off, by name (no torch here: the settings check them before any model).

    <stack>.<layer>.<head>   one head                       e.g. dec.2.1
    <stack>.<layer>.attn     that whole attention layer     e.g. cross.1.attn
    <stack>.<layer>.ffn      that layer's feed-forward      e.g. enc.2.ffn

stack: enc (encoder self-attention), dec (decoder or decoder-only self-attention), cross
(cross-attention, which has no feed-forward of its own: that is dec's); layers and heads from 1, as on
screen. ``read_ids`` checks the form alone; ``check_part`` against a model's configuration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MODES = ("zero", "mean")
STACK_NAMES = ("enc", "dec", "cross")
WHOLE = ("attn", "ffn")
MAX_PARTS = 64  # a URL names at most this many parts (a model folder may have 12 × 12 heads and more)
MAX_TEXT = 2000  # characters of ``ablate=`` read at all
_ID = re.compile(r"(enc|dec|cross)\.([0-9]{1,4})\.([0-9]{1,4}|attn|ffn)", re.ASCII)


class AblationError(ValueError):
    """An ``ablate=`` value that names no part of this model; the message says which and why."""


@dataclass(frozen=True, order=True)
class Part:
    """One part to switch off: ``stack`` "enc" | "dec" | "cross", ``layer`` from 1, ``what`` a head
    number from 1 (as a string of digits), "attn" or "ffn"."""

    stack: str
    layer: int
    what: str

    @property
    def head(self) -> int | None:
        """The head's number from 1, or None for a whole sublayer."""
        return int(self.what) if self.what.isdigit() else None

    @property
    def id(self) -> str:
        return f"{self.stack}.{self.layer}.{self.what}"


@dataclass(frozen=True)
class Problem:
    """Why one piece of an ``ablate=`` value was not read: ``reason`` names the rule (an i18n key's
    last part), ``limit`` the number it broke (layers, heads, parts, characters)."""

    piece: str
    reason: str  # "format" | "stack" | "layer" | "head" | "cross_ffn" | "too_many" | "too_long"
    limit: int | str = ""

    def __str__(self) -> str:
        return {
            "format": f"{self.piece!r} is not <stack>.<layer>.<head|attn|ffn> (e.g. dec.2.1)",
            "stack": f"{self.piece!r}: this model has no such stack; it has {self.limit}",
            "layer": f"{self.piece!r}: the layer must be a number from 1 to {self.limit}",
            "head": f"{self.piece!r}: the head must be a number from 1 to {self.limit}, attn or ffn",
            "cross_ffn": f"{self.piece!r}: cross-attention has no feed-forward layer of its own "
            f"({self.limit})",
            "too_many": f"ablate= names too many parts: at most {self.limit} can be switched off",
            "too_long": f"ablate= is too long: at most {self.limit} characters are read",
        }[self.reason]


def stacks_of(config) -> tuple[str, ...]:
    """The stacks a model (its ``ModelConfig``) has: ("enc", "dec", "cross") for the paper's model,
    ("enc",) for BERT, ("dec",) for a decoder-only one."""
    names = {"encoder_decoder": ("enc", "dec", "cross"), "encoder": ("enc",), "decoder": ("dec",)}
    return names[config.stack]


def _shown(piece: str) -> str:
    return piece if len(piece) <= 40 else piece[:40] + "…"


def read_ids(text: str) -> tuple[list[Part], list[Problem]]:
    """The parts an ``ablate=`` value names by their form (sorted, each once), and the pieces that are
    no part's name. No model is needed: :func:`check_part` checks a part against one."""
    text = (text or "").strip()
    if len(text) > MAX_TEXT:
        return [], [Problem(_shown(text), "too_long", MAX_TEXT)]
    parts, problems = set(), []
    for piece in filter(None, (p.strip() for p in text.split(","))):
        match = _ID.fullmatch(piece.lower())
        if match is None or int(match[2]) < 1 or (match[3].isdigit() and int(match[3]) < 1):
            problems.append(Problem(_shown(piece), "format"))
            continue
        what = match[3] if not match[3].isdigit() else str(int(match[3]))
        parts.add(Part(match[1], int(match[2]), what))
    if len(parts) > MAX_PARTS:
        return sorted(parts)[:MAX_PARTS], [*problems, Problem("", "too_many", MAX_PARTS)]
    return sorted(parts), problems


def check_part(part: Part, config) -> Problem | None:
    """Why ``part`` is no part of the model ``config`` describes, or None."""
    have = stacks_of(config)
    if part.stack not in have:
        return Problem(part.id, "stack", ", ".join(have))
    if not 1 <= part.layer <= config.num_layers:
        return Problem(part.id, "layer", config.num_layers)
    if part.what == "ffn" and part.stack == "cross":
        return Problem(part.id, "cross_ffn", f"dec.{part.layer}.ffn")
    if part.head is not None and not 1 <= part.head <= config.num_heads:
        return Problem(part.id, "head", config.num_heads)
    return None


def parse_ablation(text: str, config) -> tuple[Part, ...]:
    """``ablate=``'s comma-separated ids -> the parts of this model, sorted, each once. "" -> ().
    AblationError (a ValueError) for anything that names no part of it, saying which id and why."""
    parts, problems = read_ids(text)
    problems += [p for p in (check_part(part, config) for part in parts) if p is not None]
    if problems:
        raise AblationError(str(problems[0]))
    return tuple(parts)


def format_ablation(parts) -> str:
    """The canonical ``ablate=`` value: sorted ids, comma-separated."""
    return ",".join(p.id for p in sorted(set(parts)))


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise AblationError(f"ablate_mode={str(mode)[:20]!r} must be one of {', '.join(MODES)}")
    return mode
