"""Cells of the cathedral grid and their notation.

The grid is five columns wide (``a``-``e``) and unbounded away from the
board.  A cell is stored as one int, ``(row - 1) * 5 + column``, because the
engine looks neighbours up on every move and ints are the cheapest hashable
key Python has.  Text notation (``a1``, ``e12``) exists only at the edges.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain

COLUMNS = "abcde"
WIDTH = 5


def cell(col: int, row: int) -> int:
    """The cell in column ``col`` (0-4) and row ``row`` (1, 2, ...)."""
    return (row - 1) * WIDTH + col


def col_of(c: int) -> int:
    return c % WIDTH


def row_of(c: int) -> int:
    """Row number, 1 being the row next to the board."""
    return c // WIDTH + 1


def _neighbours(c: int) -> tuple[int, ...]:
    col = c % WIDTH
    out = []
    if col > 0:
        out.append(c - 1)
    if col < WIDTH - 1:
        out.append(c + 1)
    if c >= WIDTH:
        out.append(c - WIDTH)
    out.append(c + WIDTH)
    return tuple(out)


def format_cell(c: int) -> str:
    return f"{COLUMNS[c % WIDTH]}{c // WIDTH + 1}"


def parse_cell(text: str) -> int:
    """Parse ``a1``...``e99``; raises ValueError with a one-line reason."""
    digits = text[1:]
    if len(text) < 2 or text[0] not in COLUMNS or not (digits.isascii() and digits.isdigit()) or text[1] == "0":
        raise ValueError(f"not a cell: {text!r} (expected a column a-e and a row 1, 2, ...)")
    row = int(text[1:])
    if row > 10_000:
        raise ValueError(f"row out of range: {text!r}")
    return cell(COLUMNS.index(text[0]), row)


def cell_sort_key(c: int) -> tuple[int, int]:
    """Natural order of cell names: by column letter, then row number."""
    return (c % WIDTH, c // WIDTH)


# Cathedrals rarely grow past a dozen rows; cells beyond the table are computed.
_TABLE = tuple(_neighbours(c) for c in range(WIDTH * 64))


def all_neighbours(cells: Iterable[int]) -> Iterator[int]:
    """The neighbours of each of ``cells`` in turn (repeats included), looked up at C speed
    where the table covers them: the engine collects them at every step."""
    cells = tuple(cells)
    if cells and max(cells) >= len(_TABLE):
        return chain.from_iterable(map(neighbours, cells))
    return chain.from_iterable(map(_TABLE.__getitem__, cells))


def neighbours(c: int) -> tuple[int, ...]:
    """Orthogonal neighbours inside the five columns (never diagonal)."""
    if c < len(_TABLE):
        return _TABLE[c]
    return _neighbours(c)
