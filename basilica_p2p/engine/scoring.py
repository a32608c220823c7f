"""Areas and majorities (RULES.md §6): a pure function of the cathedral.

Used by the engine at every scoring, by ``basilica rules score`` on a
written position, and by bots to evaluate a position.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .cells import cell_sort_key, neighbours
from .components import ALL_COLORS, ARCHITECT, COLOR_LETTER, MASON, STRONGMAN

# Why a player holds the majority of an area (or why nobody does).
BY_STRENGTH = "strength"
BY_STRONGMAN = "strongman"  # equal strength, exactly one player has a Strongman (D13)
TIE = "tie"


@dataclass(frozen=True, slots=True)
class Area:
    color: int
    cells: tuple[int, ...]  # natural order (column, then row)
    strength: tuple[int, int]  # builders, a Master Mason counting 2
    majority: int | None  # 0 or 1 (player 1 or 2), None on a tie
    reason: str  # BY_STRENGTH, BY_STRONGMAN or TIE
    architect: bool  # the majority's points are doubled (once)
    glass: int  # points added by stained glass (2 each, 4 on an altar)
    points: tuple[int, int]

    @property
    def tiles(self) -> int:
        return len(self.cells)


@dataclass(frozen=True, slots=True)
class ScoringResult:
    """One scoring: every area that has a builder, and what each player got."""

    areas: tuple[Area, ...]
    points: tuple[int, int]
    jester_colors: tuple[tuple[int, int], ...] = ()  # (cell, colour) chosen before this scoring


def find_areas(colors: Mapping[int, int], printed: Mapping[int, int]) -> list[tuple[int, tuple[int, ...]]]:
    """Every area as ``(colour, cells)``, whether or not builders stand in it.

    ``colors`` maps each vault cell to the colours it has for this scoring
    (printed ones plus a Jester's); ``printed`` to its printed colours.  A
    connected group of two or more tiles sharing a colour is an area; a lone
    tile only in its own printed single colour (D12).
    """
    out: list[tuple[int, tuple[int, ...]]] = []
    for color in ALL_COLORS:
        cells = {c for c, m in colors.items() if m & color}
        seen: set[int] = set()
        for start in sorted(cells):
            if start in seen:
                continue
            seen.add(start)
            group = [start]
            i = 0
            while i < len(group):
                for n in neighbours(group[i]):
                    if n in cells and n not in seen:
                        seen.add(n)
                        group.append(n)
                i += 1
            if len(group) >= 2 or printed[start] == color:
                out.append((color, tuple(sorted(group, key=cell_sort_key))))
    return out


def score_area(
    color: int,
    cells: tuple[int, ...],
    builders: Mapping[int, tuple[int, int]],
    glass: Iterable[int] | set[int],
    altars: set[int] | frozenset[int],
) -> Area | None:
    """Majority and points of one area; None if no builder stands in it."""
    strength = [0, 0]
    count = [0, 0]
    strongmen = [0, 0]
    architect = False
    glass_pts = 0
    for c in cells:
        b = builders.get(c)
        if b is not None:
            p, rank = b
            count[p] += 1
            strength[p] += 2 if rank == MASON else 1
            if rank == STRONGMAN:
                strongmen[p] += 1
            elif rank == ARCHITECT:
                architect = True
        if c in glass:
            glass_pts += 4 if c in altars else 2
    if count[0] == 0 and count[1] == 0:
        return None
    if strength[0] != strength[1]:
        majority: int | None = 0 if strength[0] > strength[1] else 1
        reason = BY_STRENGTH
    elif (strongmen[0] > 0) != (strongmen[1] > 0):
        # D13: opposing Strongmen cancel; two of one player's still break the tie.
        majority = 0 if strongmen[0] else 1
        reason = BY_STRONGMAN
    else:
        majority, reason = None, TIE
    points = [0, 0]
    if majority is not None:
        points[majority] = len(cells) * (2 if architect else 1) + glass_pts
        points[1 - majority] = count[1 - majority]
    return Area(color, cells, (strength[0], strength[1]), majority, reason, architect, glass_pts,
                (points[0], points[1]))


def score_cathedral(
    colors: Mapping[int, int],
    printed: Mapping[int, int],
    builders: Mapping[int, tuple[int, int]],
    glass: set[int] | frozenset[int],
    altars: set[int] | frozenset[int],
) -> tuple[Area, ...]:
    """Every area with at least one builder, sorted by colour letter then first cell."""
    areas = []
    for color, cells in find_areas(colors, printed):
        if not any(c in builders for c in cells):
            continue
        area = score_area(color, cells, builders, glass, altars)
        if area is not None:
            areas.append(area)
    areas.sort(key=lambda a: (COLOR_LETTER[a.color], cell_sort_key(a.cells[0])))
    return tuple(areas)


def totals(areas: Iterable[Area]) -> tuple[int, int]:
    p1 = p2 = 0
    for a in areas:
        p1 += a.points[0]
        p2 += a.points[1]
    return (p1, p2)
