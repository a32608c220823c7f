"""Actions: small immutable values with a text notation that round-trips.

Every decision in the game, by either player, is one :class:`Action`.  It is
a NamedTuple rather than a dataclass because the engine compares and builds
thousands of them per game, and tuple equality runs in C.  The ``kind``
field keeps different actions with the same numbers apart.

Notation (docs/notation.md)::

    V2:b3        place the vault tile of V2 on b3
    V*           no vault tile fits anywhere: redeal V1-V3 (D8)
    B:b3         place a builder on b3, the tile just placed (D19)
    O1:c2        execute the order of O1 with target c2
    O1:c2-c3     ... MOVE from c2 to c3
    O1:c2=M      ... PROMOTE the builder on c2 to Master Mason
    d4           second scaffolding tile or second altar on d4
    c2-c3        move the opponent's builder for a CONFUSE order
    $            pay for the CONFUSE paid option (choose the move)
    $c4          pay: paid RECRUIT on c4
    $c4=S        pay: paid PROMOTE of c4 to Strongman
    pass         decline the paid option
    J:c2=G,d3=R  Jester colours before a scoring (D24)
    none         the player has no legal action (D7)
"""

from __future__ import annotations

from typing import NamedTuple

from .cells import format_cell, parse_cell
from .components import COLOR_LETTER, LETTER_COLOR, LETTER_RANK, RANK_LETTER
from .errors import NotationError

VAULT = "vault"
REDEAL = "redeal"
BUILDER = "builder"
ORDER = "order"
PLACE = "place"
SHIFT = "shift"  # the forced move of a CONFUSE order
PAY = "pay"
DECLINE = "decline"
JESTER = "jester"
NONE = "none"

KINDS = (VAULT, REDEAL, BUILDER, ORDER, PLACE, SHIFT, PAY, DECLINE, JESTER, NONE)


class Action(NamedTuple):
    kind: str
    space: int = 0  # 1-3 for V/O market spaces
    cell: int = -1
    dest: int = -1
    rank: int = 0
    colors: tuple[tuple[int, int], ...] = ()  # Jester: ((cell, colour), ...) sorted by cell

    def __str__(self) -> str:
        return format_action(self)


def place_vault(space: int, cell: int) -> Action:
    return Action(VAULT, space, cell)


def place_builder(cell: int) -> Action:
    return Action(BUILDER, cell=cell)


def take_order(space: int, cell: int, dest: int = -1, rank: int = 0) -> Action:
    return Action(ORDER, space, cell, dest, rank)


def jester_colors(pairs: dict[int, int] | list[tuple[int, int]]) -> Action:
    items = sorted(pairs.items() if isinstance(pairs, dict) else pairs)
    return Action(JESTER, colors=tuple(items))


REDEAL_ACTION = Action(REDEAL)
DECLINE_ACTION = Action(DECLINE)
NONE_ACTION = Action(NONE)
PAY_ACTION = Action(PAY)


def _target(a: Action) -> str:
    s = format_cell(a.cell)
    if a.dest >= 0:
        s += "-" + format_cell(a.dest)
    if a.rank:
        s += "=" + RANK_LETTER[a.rank]
    return s


def format_action(a: Action) -> str:
    k = a.kind
    if k == VAULT:
        return f"V{a.space}:{format_cell(a.cell)}"
    if k == REDEAL:
        return "V*"
    if k == BUILDER:
        return f"B:{format_cell(a.cell)}"
    if k == ORDER:
        return f"O{a.space}:{_target(a)}"
    if k == PLACE:
        return format_cell(a.cell)
    if k == SHIFT:
        return _target(a)
    if k == PAY:
        return "$" + (_target(a) if a.cell >= 0 else "")
    if k == DECLINE:
        return "pass"
    if k == JESTER:
        return "J:" + ",".join(f"{format_cell(c)}={COLOR_LETTER[col]}" for c, col in a.colors)
    if k == NONE:
        return "none"
    raise NotationError(f"unknown action kind {k!r}")


def _parse_target(text: str, whole: str) -> tuple[int, int, int]:
    """``c2``, ``c2-c3`` or ``c2=M`` → (cell, dest, rank)."""
    rank = 0
    dest = -1
    if "=" in text:
        text, r = text.split("=", 1)
        if r not in LETTER_RANK:
            raise NotationError(f"{whole!r}: unknown rank {r!r} (A, M, S or J)")
        rank = LETTER_RANK[r]
    if "-" in text:
        text, d = text.split("-", 1)
        dest = _cell(d, whole)
    return _cell(text, whole), dest, rank


def _cell(text: str, whole: str) -> int:
    try:
        return parse_cell(text)
    except ValueError as e:
        raise NotationError(f"{whole!r}: {e}") from None


def _space(text: str, whole: str) -> int:
    if text not in ("1", "2", "3"):
        raise NotationError(f"{whole!r}: market space must be 1, 2 or 3")
    return int(text)


def parse_action(text: str) -> Action:
    """Parse the notation above; raises :class:`NotationError` with a one-line reason."""
    if not isinstance(text, str) or not text or len(text) > 200:
        raise NotationError("an action is a short non-empty text")
    s = text.strip()
    if s == "V*":
        return REDEAL_ACTION
    if s == "pass":
        return DECLINE_ACTION
    if s == "none":
        return NONE_ACTION
    if s == "$":
        return PAY_ACTION
    if s.startswith("$"):
        c, d, r = _parse_target(s[1:], text)
        return Action(PAY, 0, c, d, r)
    if s.startswith("V") and len(s) > 3 and s[2] == ":":
        return Action(VAULT, _space(s[1], text), _cell(s[3:], text))
    if s.startswith("B:"):
        return Action(BUILDER, cell=_cell(s[2:], text))
    if s.startswith("O") and len(s) > 3 and s[2] == ":":
        c, d, r = _parse_target(s[3:], text)
        return Action(ORDER, _space(s[1], text), c, d, r)
    if s.startswith("J:"):
        pairs = []
        for part in s[2:].split(","):
            if part.count("=") != 1:
                raise NotationError(f"{text!r}: Jester colours are written cell=colour, e.g. J:c2=G")
            cell, col = part.split("=")
            if col not in LETTER_COLOR:
                raise NotationError(f"{text!r}: unknown colour {col!r} (Y, B, R or G)")
            pairs.append((_cell(cell, text), LETTER_COLOR[col]))
        if len({c for c, _ in pairs}) != len(pairs):
            raise NotationError(f"{text!r}: a cell is named twice")
        return Action(JESTER, colors=tuple(sorted(pairs)))
    if s[:1] in "abcde":
        c, d, r = _parse_target(s, text)
        if r:
            raise NotationError(f"{text!r}: a rank belongs after O1:/$ only")
        return Action(SHIFT, cell=c, dest=d) if d >= 0 else Action(PLACE, cell=c)
    raise NotationError(f"{text!r} is not an action (see docs/notation.md)")
