"""The vocabulary of the game: colours, orders, ranks, rulesets.

Colours are bits so that a tile's colours (one, two, or three with a Jester)
are a small int and "does this tile have colour c" is one ``&``.
"""

from __future__ import annotations

from enum import StrEnum

YELLOW, BLUE, RED, GREEN = 1, 2, 4, 8
ALL_COLORS = (YELLOW, BLUE, RED, GREEN)
COLOR_LETTER = {YELLOW: "Y", BLUE: "B", RED: "R", GREEN: "G"}
LETTER_COLOR = {v: k for k, v in COLOR_LETTER.items()}
COLOR_NAME = {YELLOW: "yellow", BLUE: "blue", RED: "red", GREEN: "green"}


def color_count(mask: int) -> int:
    return bin(mask).count("1")


def colors_of(mask: int) -> tuple[int, ...]:
    return tuple(c for c in ALL_COLORS if mask & c)


def format_colors(mask: int) -> str:
    """``Y``, ``B``... for one colour, ``Y/B`` for a wild face (in Y, B, R, G order)."""
    return "/".join(COLOR_LETTER[c] for c in colors_of(mask))


def parse_colors(text: str) -> int:
    """Inverse of :func:`format_colors`; accepts one or two distinct letters."""
    parts = text.split("/")
    if not 1 <= len(parts) <= 2 or any(p not in LETTER_COLOR for p in parts) or len(set(parts)) != len(parts):
        raise ValueError(f"unknown colour {text!r} (expected Y, B, R, G or two joined by '/')")
    mask = 0
    for p in parts:
        mask |= LETTER_COLOR[p]
    return mask


class Order(StrEnum):
    PROMOTE = "PROMOTE"
    MOVE = "MOVE"
    RECRUIT = "RECRUIT"
    CONFUSE = "CONFUSE"
    STAINED_GLASS = "STAINED_GLASS"
    SCAFFOLDING = "SCAFFOLDING"
    DISASTER = "DISASTER"
    ALTAR = "ALTAR"


# D3: these orders (and only these) carry a paid option for the opponent.
PAID_ORDERS = frozenset({Order.PROMOTE, Order.RECRUIT, Order.CONFUSE})

# Ranks are small ints so a builder is a cheap (player, rank) tuple.
NO_RANK, ARCHITECT, MASON, STRONGMAN, JESTER = 0, 1, 2, 3, 4
RANK_LETTER = {ARCHITECT: "A", MASON: "M", STRONGMAN: "S", JESTER: "J"}
LETTER_RANK = {v: k for k, v in RANK_LETTER.items()}
RANK_NAME = {NO_RANK: "builder", ARCHITECT: "architect", MASON: "mason", STRONGMAN: "strongman", JESTER: "jester"}
NAME_RANK = {v: k for k, v in RANK_NAME.items() if k != NO_RANK}


class Ruleset(StrEnum):
    CLASSIC = "classic"
    PORTAL2022 = "portal2022"

    @property
    def ranks(self) -> tuple[int, ...]:
        """Ranks a promotion token can show under this ruleset (Jester is 2022 only)."""
        if self is Ruleset.CLASSIC:
            return (ARCHITECT, MASON, STRONGMAN)
        return (ARCHITECT, MASON, STRONGMAN, JESTER)

    @property
    def pawn(self) -> str:
        return "king" if self is Ruleset.CLASSIC else "queen"
