"""Written cathedral positions for ``basilica rules score`` (format in docs/notation.md).

A position is untrusted text: every way it can be wrong becomes one
:class:`PositionError` whose one-line message names the problem and, where
there is one, the cell.  Scoring itself is the engine's
:func:`~basilica_p2p.engine.scoring.score_cathedral`, so a written position
scores exactly as the same cathedral would in a game.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Console
from rich.table import Table

from .engine import (BY_STRONGMAN, COLOR_LETTER, COLOR_NAME, JESTER, LETTER_COLOR, NAME_RANK, NO_RANK, WIDTH, Area,
                     PositionError, Ruleset, ScoringResult, cell, cell_sort_key, color_count, format_cell,
                     format_colors, neighbours, parse_cell, parse_colors, score_cathedral, totals)

MAX_BYTES = 1 << 20  # 1 MiB: far above any real cathedral, small enough to parse at once
MAX_ROWS = 10_000  # parse_cell's bound, so every cell of a position has a name that parses back

FIELDS = ("ruleset", "rows", "builders", "glass", "altars")
BUILDER_FIELDS = ("player", "rank", "color")
EMPTY, SCAFFOLD = ".", "#"


@dataclass(frozen=True)
class Position:
    """A validated cathedral: cells are engine ints, players 0 and 1."""

    ruleset: Ruleset
    printed: dict[int, int]  # vault cell -> printed colour bits
    scaffold: frozenset[int]
    builders: dict[int, tuple[int, int]]  # cell -> (player 0|1, rank)
    jester: dict[int, int]  # Jester cell -> its extra colour (D24)
    glass: frozenset[int]
    altars: frozenset[int]


def _show(value: Any) -> str:
    """A user value for an error message, as JSON: ASCII only, one line, short."""
    try:
        text = json.dumps(value, ensure_ascii=True)
    except (ValueError, RecursionError):
        text = _json_type(value)
    # Short, so that "error: " plus any message fits one 80-column line.
    return text if len(text) <= 16 else text[:13] + "..."


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads would silently keep the last of two equal keys, e.g. two builders on a1.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            if _is_cell_name(key):
                raise PositionError(f"{key}: two builders on one cell (the key appears twice)")
            raise PositionError(f"{_show(key)}: named twice in one JSON object")
        out[key] = value
    return out


def _reject_constant(name: str) -> Any:
    raise PositionError(f"malformed JSON: {name} is not a JSON number")


def _parse_json(text: str) -> Any:
    if not isinstance(text, str):
        raise PositionError("a position is JSON text")
    # Characters never outnumber UTF-8 bytes, so the cheap check goes first.
    if len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise PositionError("position too large (over 1 MiB)")
    # Editors on Windows like to start UTF-8 files with a byte order mark.
    text = text.removeprefix("\ufeff")
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant)
    except PositionError:
        raise
    except json.JSONDecodeError as e:
        msg = e.msg.replace(" enclosed in double quotes", " in double quotes")
        raise PositionError(f"malformed JSON at {e.lineno}:{e.colno}: {msg}") from None
    except ValueError:
        raise PositionError("malformed JSON: a number with too many digits") from None
    except RecursionError:
        raise PositionError("malformed JSON: nested too deeply") from None


def _is_cell_name(name: str) -> bool:
    try:
        return format_cell(parse_cell(name)) == name
    except ValueError:
        return False


def _cell_name(name: Any, what: str) -> int:
    """A cell named in ``glass``, ``altars`` or ``builders``; only the canonical spelling."""
    if not isinstance(name, str):
        raise PositionError(f"{what}: a cell is written like \"c2\", got {_show(name)}")
    # parse_cell accepts any Unicode digit; a name must read back exactly as written.
    if not _is_cell_name(name):
        raise PositionError(f"{_show(name)}: not a cell name (like a1 or e12)")
    return parse_cell(name)


def _parse_rows(rows: Any) -> tuple[dict[int, int], set[int]]:
    if not isinstance(rows, list):
        raise PositionError("rows: expected a list of strings (row 1 first)")
    if len(rows) > MAX_ROWS:
        raise PositionError(f"rows: {len(rows)} rows, at most {MAX_ROWS}")
    printed: dict[int, int] = {}
    scaffold: set[int] = set()
    for r, row in enumerate(rows, start=1):
        if not isinstance(row, str):
            raise PositionError(f"row {r}: expected a string, got {_show(row)}")
        parts = row.split()
        if len(parts) != WIDTH:
            raise PositionError(f"row {r}: {len(parts)} cells, expected 5 (columns a-e)")
        for col, token in enumerate(parts):
            c = cell(col, r)
            if token == EMPTY:
                continue
            if token == SCAFFOLD:
                scaffold.add(c)
                continue
            try:
                printed[c] = parse_colors(token)
            except ValueError:
                raise PositionError(f"{format_cell(c)}: unknown colour {_show(token)} (use Y B R G, X/Y, . or #)"
                                    ) from None
    for c in sorted(printed):
        if color_count(printed[c]) < 2:
            continue
        for n in neighbours(c):
            if n > c and color_count(printed.get(n, 0)) >= 2:
                raise PositionError(f"{format_cell(n)}: printed wild tile next to another on {format_cell(c)} "
                                    "(not allowed)")
    return printed, scaffold


def _on_vault(c: int, printed: dict[int, int], scaffold: set[int], what: str) -> None:
    if c in scaffold:
        raise PositionError(f"{format_cell(c)}: {what} on scaffolding")
    if c not in printed:
        raise PositionError(f"{format_cell(c)}: {what} on an empty cell")


def _parse_builder(c: int, spec: Any, ruleset: Ruleset, printed: dict[int, int]) -> tuple[int, int, int]:
    """One builder as ``(player 0|1, rank, Jester colour or 0)``."""
    name = format_cell(c)
    if not isinstance(spec, dict):
        raise PositionError(f"{name}: a builder is an object like {{\"player\": 1}}")
    for key in spec:
        if key not in BUILDER_FIELDS:
            raise PositionError(f"{name}: unknown builder field {_show(key)} (player, rank, color)")
    player = spec.get("player")
    # bool is an int in Python, but `true` is no player number.
    if type(player) is not int or player not in (1, 2):
        raise PositionError(f"{name}: player must be 1 or 2, got {_show(player)}")
    rank = NO_RANK
    if "rank" in spec:
        text = spec["rank"]
        if not isinstance(text, str) or text not in NAME_RANK:
            raise PositionError(f"{name}: unknown rank {_show(text)} (architect/mason/strongman/jester)")
        rank = NAME_RANK[text]
        if rank not in ruleset.ranks:
            raise PositionError(f"{name}: the Jester is a portal2022 rank, not in {ruleset.value}")
    extra = 0
    if rank == JESTER:
        if "color" not in spec:
            raise PositionError(f"{name}: a Jester needs a \"color\" its tile does not have (D24)")
        letter = spec["color"]
        if not isinstance(letter, str) or letter not in LETTER_COLOR:
            raise PositionError(f"{name}: unknown colour {_show(letter)} for the Jester (Y, B, R or G)")
        extra = LETTER_COLOR[letter]
        if printed[c] & extra:
            raise PositionError(f"{name}: the Jester's colour {letter} is already on its tile "
                                f"{format_colors(printed[c])} (D24)")
    elif "color" in spec:
        raise PositionError(f"{name}: only a Jester takes a \"color\"")
    return player - 1, rank, extra


def _parse_tokens(value: Any, field: str, what: str, printed: dict[int, int], scaffold: set[int]) -> frozenset[int]:
    if not isinstance(value, list):
        raise PositionError(f"{field}: expected a list of cells like [\"a1\"], got {_show(value)}")
    out: set[int] = set()
    for name in value:
        c = _cell_name(name, field)
        _on_vault(c, printed, scaffold, what)
        if c in out:
            raise PositionError(f"{name}: two {what} tokens on one cell (one per tile)")
        out.add(c)
    return frozenset(out)


def load_position(text: str) -> Position:
    """Parse and validate a position; raises :class:`PositionError` (one line) on any bad input."""
    data = _parse_json(text)
    if not isinstance(data, dict):
        raise PositionError(f"a position is a JSON object, got {_json_type(data)}")
    for key in data:
        if key not in FIELDS:
            raise PositionError(f"unknown field {_show(key)} ({', '.join(FIELDS)})")
    name = data.get("ruleset", Ruleset.PORTAL2022.value)
    if name not in (Ruleset.CLASSIC.value, Ruleset.PORTAL2022.value):
        raise PositionError(f"ruleset: expected \"portal2022\" or \"classic\", got {_show(name)}")
    ruleset = Ruleset(name)
    if "rows" not in data:
        raise PositionError("rows: missing (a list of strings, row 1 first)")
    printed, scaffold = _parse_rows(data["rows"])

    raw = data.get("builders", {})
    if not isinstance(raw, dict):
        raise PositionError(f"builders: expected an object, got {_show(raw)}")
    builders: dict[int, tuple[int, int]] = {}
    jester: dict[int, int] = {}
    for key, spec in raw.items():
        c = _cell_name(key, "builders")
        _on_vault(c, printed, scaffold, "builder")
        player, rank, extra = _parse_builder(c, spec, ruleset, printed)
        builders[c] = (player, rank)
        if extra:
            jester[c] = extra

    glass = _parse_tokens(data.get("glass", []), "glass", "stained glass", printed, scaffold)
    altars = _parse_tokens(data.get("altars", []), "altars", "altar", printed, scaffold)
    if altars and ruleset is Ruleset.CLASSIC:
        first = format_cell(min(altars, key=cell_sort_key))
        raise PositionError(f"{first}: altars need the festum expansion (portal2022, not classic)")
    return Position(ruleset, printed, frozenset(scaffold), builders, jester, glass, altars)


def score_position(pos: Position) -> ScoringResult:
    """Score the position as a scoring in a game would, Jester colours included (RULES.md §6)."""
    colors = dict(pos.printed)
    for c, extra in pos.jester.items():
        colors[c] |= extra
    areas = score_cathedral(colors, pos.printed, pos.builders, pos.glass, pos.altars)
    return ScoringResult(areas, totals(areas), tuple(sorted(pos.jester.items())))


def report_json(result: ScoringResult) -> dict[str, Any]:
    """The ``--json`` report; players are 1 and 2 here."""
    return {
        "areas": [
            {
                "color": COLOR_LETTER[a.color],
                "cells": [format_cell(c) for c in a.cells],
                "tiles": a.tiles,
                "strength": list(a.strength),
                "majority": None if a.majority is None else a.majority + 1,
                "points": list(a.points),
            }
            for a in result.areas
        ],
        "total": list(result.points),
    }


def _why(area: Area) -> str:
    """Who has the majority and why, in words that need no colour to read."""
    if area.majority is None:
        return "nobody (tie)"
    why = f"P{area.majority + 1} by {'Strongman (D13)' if area.reason == BY_STRONGMAN else 'strength'}"
    if area.architect:
        why += ", Architect x2"
    if area.glass:
        why += f", glass +{area.glass}"
    return why


def render_table(result: ScoringResult, console: Console) -> None:
    """Print the breakdown as a table that fits 80 columns and reads without colour."""
    if not result.areas:
        console.print("No area has a builder: nothing scores.", markup=False)
    else:
        table = Table(box=box.SIMPLE, show_edge=False, pad_edge=False, show_footer=True)
        table.add_column("Colour", "total", no_wrap=True)
        table.add_column("Cells", overflow="fold")
        table.add_column("Tiles", justify="right", no_wrap=True)
        table.add_column("Str\nP1", justify="right", no_wrap=True)
        table.add_column("Str\nP2", justify="right", no_wrap=True)
        table.add_column("Majority", overflow="fold")
        table.add_column("Pts\nP1", str(result.points[0]), justify="right", no_wrap=True)
        table.add_column("Pts\nP2", str(result.points[1]), justify="right", no_wrap=True)
        for a in result.areas:
            table.add_row(
                COLOR_NAME[a.color],
                " ".join(format_cell(c) for c in a.cells),
                str(a.tiles),
                str(a.strength[0]),
                str(a.strength[1]),
                _why(a),
                str(a.points[0]),
                str(a.points[1]),
            )
        console.print(table)
    if result.jester_colors:
        chosen = ", ".join(f"{format_cell(c)}={COLOR_LETTER[col]}" for c, col in result.jester_colors)
        console.print(f"Jester colours (D24): {chosen}", markup=False)
    if not result.areas:
        console.print(f"total: player 1 {result.points[0]}, player 2 {result.points[1]}", markup=False)
