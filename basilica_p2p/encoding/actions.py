"""The fixed action index space: every decision the engine can ask for is one int.

The engine's legal lists vary in length and its actions are tuples; learning
code wants one ``Discrete(n)`` space that never changes.  :class:`ActionTable`
numbers every action the notation can write (docs/notation.md, "Action
indices") on a board of ``rows`` rows, in blocks::

    0 V*   1 pass   2 $   3 none
    V1:cell V2:cell V3:cell, B:cell, cell (second placement),
    cell-cell (CONFUSE move, by direction), O1..O3:cell, O1..O3:cell-cell,
    O1..O3:cell=rank, $cell, $cell=rank,
    J: with 1, 2, ... Jesters (one colour digit per Jester)

A Jester index names only the colours, Jester by Jester in cell order: the
cells are those of the decider's own Jesters, a public fact of the position,
so :meth:`ActionTable.action` takes them as an argument.  Every other index
maps to one action and back without the position.

Pure Python on purpose (no numpy): the table is usable without the ``[rl]``
extra's heavy parts and is what the tests round-trip against the notation.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import cast

from ..engine import ALL_COLORS, ARCHITECT, JESTER, MASON, STRONGMAN, WIDTH, Action
from ..engine import actions as A

ROWS = 20  # rows the fixed spaces cover; games seen here stay under 13 (docs/notation.md)
RANKS = (ARCHITECT, MASON, STRONGMAN, JESTER)
# A MOVE or CONFUSE destination is a neighbour, named by its direction from the source.
DIRECTIONS = (WIDTH, -WIDTH, -1, 1)  # away from the board, towards it, left, right
DIRECTION_NAMES = ("up", "down", "left", "right")
_FIXED = (A.REDEAL_ACTION, A.DECLINE_ACTION, A.PAY_ACTION, A.NONE_ACTION)


class OutOfTable(ValueError):
    """An action the table cannot number: a cell beyond its rows, or too many Jesters."""


@dataclass(frozen=True)
class ActionTable:
    """The index space for boards of ``rows`` rows and up to ``jesters`` Jesters per player."""

    rows: int = ROWS
    jesters: int = 4
    _index: dict[Action, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _actions: list[Action | None] = field(default_factory=list, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Both directions are tabulated once: the environments look an index up per legal action.
        for a in self._enumerate():
            if a is not None:
                self._index[a] = len(self._actions)
            self._actions.append(a)

    # Cached: the environments ask for the size at every step (a fresh mask), and a frozen
    # table's size never changes.
    @cached_property
    def _jester_base(self) -> int:
        return len(_FIXED) + 41 * self.cells

    @property
    def cells(self) -> int:
        return self.rows * WIDTH

    @cached_property
    def size(self) -> int:
        """Number of indices: ``Discrete(size)``."""
        return self._jester_base + sum(4**k for k in range(1, self.jesters + 1))

    def _enumerate(self) -> Iterable[Action | None]:
        n = self.cells
        yield from _FIXED
        for space in (1, 2, 3):
            yield from (Action(A.VAULT, space, c) for c in range(n))
        yield from (Action(A.BUILDER, cell=c) for c in range(n))
        yield from (Action(A.PLACE, cell=c) for c in range(n))
        yield from (_shift(A.SHIFT, 0, c, d) for c in range(n) for d in DIRECTIONS)
        for space in (1, 2, 3):
            yield from (Action(A.ORDER, space, c) for c in range(n))
        for space in (1, 2, 3):
            yield from (_shift(A.ORDER, space, c, d) for c in range(n) for d in DIRECTIONS)
        for space in (1, 2, 3):
            yield from (Action(A.ORDER, space, c, -1, r) for c in range(n) for r in RANKS)
        yield from (Action(A.PAY, 0, c) for c in range(n))
        yield from (Action(A.PAY, 0, c, -1, r) for c in range(n) for r in RANKS)

    def index(self, action: Action) -> int:
        """The index of ``action``; :class:`OutOfTable` if the table has none for it."""
        i = self._index.get(action)
        if i is not None:
            return i
        if action.kind != A.JESTER:
            raise OutOfTable(f"{A.format_action(action)} lies beyond the {self.rows} rows of the action table")
        k = len(action.colors)
        if not 1 <= k <= self.jesters:
            raise OutOfTable(f"the action table numbers Jester choices for 1 to {self.jesters} Jesters, not {k}")
        digits = 0
        for _, color in action.colors:
            digits = digits * 4 + ALL_COLORS.index(color)
        return self._jester_base + sum(4**j for j in range(1, k)) + digits

    def action(self, index: int, jester_cells: Sequence[int] = ()) -> Action:
        """The action of ``index``; a Jester index takes the decider's Jester cells, sorted."""
        if not 0 <= index < self.size:
            raise OutOfTable(f"action index {index} is outside 0..{self.size - 1}")
        if index < self._jester_base:
            a = self._actions[index]
            if a is None:
                raise OutOfTable(f"action index {index} moves off the board: no action has it")
            return a
        rest = index - self._jester_base
        k = 1
        while rest >= 4**k:
            rest -= 4**k
            k += 1
        if len(jester_cells) != k:
            raise OutOfTable(f"index {index} chooses colours for {k} Jesters; the decider has {len(jester_cells)}")
        colors = []
        for _ in range(k):
            colors.append(ALL_COLORS[rest % 4])
            rest //= 4
        return A.jester_colors(list(zip(sorted(jester_cells), reversed(colors))))

    def indices(self, legal: Iterable[Action]) -> tuple[list[int], list[Action]]:
        """The indices of the legal actions the table numbers, and those actions (same order).

        A list given (``Game.legal_actions()`` makes a new one each call) may be returned as the
        actions, not copied: the caller hands it over."""
        legal = legal if isinstance(legal, list) else list(legal)
        found = list(map(self._index.get, legal))  # one C-level pass: the environments call this every step
        if None not in found:
            return cast("list[int]", found), legal  # no None among them: every action has its index
        # Jester choices (numbered by their colours) and actions beyond the table's rows:
        idx: list[int] = []
        acts: list[Action] = []
        for a, i in zip(legal, found):
            if i is None:
                try:
                    i = self.index(a)
                except OutOfTable:
                    continue  # beyond the table: not offered (docs/rl.md, "Limits")
            idx.append(i)
            acts.append(a)
        return idx, acts

    def describe(self) -> list[tuple[str, int, int]]:
        """The blocks of the space as (name, first index, count), for the documentation."""
        n = self.cells
        blocks = [("V*", 1), ("pass", 1), ("$", 1), ("none", 1)]
        blocks += [(f"V{s}:cell", n) for s in (1, 2, 3)]
        blocks += [("B:cell", n), ("cell", n), ("cell-cell (CONFUSE move)", 4 * n)]
        blocks += [(f"O{s}:cell", n) for s in (1, 2, 3)]
        blocks += [(f"O{s}:cell-cell", 4 * n) for s in (1, 2, 3)]
        blocks += [(f"O{s}:cell=rank", 4 * n) for s in (1, 2, 3)]
        blocks += [("$cell", n), ("$cell=rank", 4 * n)]
        blocks += [(f"J: with {k} Jester{'s' if k > 1 else ''}", 4**k) for k in range(1, self.jesters + 1)]
        out = []
        start = 0
        for name, count in blocks:
            out.append((name, start, count))
            start += count
        return out


def _shift(kind: str, space: int, c: int, d: int) -> Action | None:
    """A move from ``c`` in direction ``d``, or None where that leaves the five columns or row 1:
    the index stays reserved so that every block keeps its fixed size."""
    dest = c + d
    if dest < 0 or (d in (-1, 1) and dest // WIDTH != c // WIDTH):
        return None
    return Action(kind, space, c, dest)


def jester_cells(builders: Iterable[tuple[int, int, int]], player: int) -> list[int]:
    """The cells of ``player``'s Jesters, from an observation's ``(cell, player, rank)`` builders."""
    return sorted(c for c, p, r in builders if p == player and r == JESTER)


__all__ = ["DIRECTIONS", "DIRECTION_NAMES", "ROWS", "RANKS", "ActionTable", "OutOfTable", "jester_cells"]
