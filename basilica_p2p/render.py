"""Plain-text pictures of a game, for replays and logs (rendering stays at the edges).

Only public facts are drawn (the cathedral, the market faces, counts), so a
picture never reveals hidden information.
"""

from __future__ import annotations

from .engine import Game, ScoringResult
from .engine.cells import COLUMNS, WIDTH, format_cell
from .engine.components import COLOR_LETTER, COLOR_NAME, RANK_LETTER, format_colors

CELL = 9


def _cell_text(g: Game, c: int) -> str:
    if c in g.scaffold:
        return "#####"
    tile = g.vaults.get(c)
    if tile is None:
        return "."
    spec = g.specs[tile]
    text = format_colors(spec.colors) + ("^" if spec.crown else "")
    b = g.builders.get(c)
    if b is not None:
        text += f" {b[0] + 1}{RANK_LETTER.get(b[1], '')}"
    if c in g.glass:
        text += "*"
    if c in g.altars:
        text += "+"
    return text


def render_board(g: Game) -> str:
    """The cathedral (row 1, next to the board, at the bottom), the market and the counts."""
    occupied = list(g.vaults) + list(g.scaffold)
    top = max(occupied) // WIDTH + 1 if occupied else 1
    lines = []
    for row in range(top, 0, -1):
        cells = [_cell_text(g, (row - 1) * WIDTH + col).ljust(CELL) for col in range(WIDTH)]
        lines.append(f"{row:>3} " + "".join(cells).rstrip())
    lines.append("    " + "".join(c.ljust(CELL) for c in COLUMNS).rstrip())
    lines.append("    " + "=" * (CELL * WIDTH - 2) + "  (board)")
    orders = []
    for k, t in enumerate(g.orders):
        if t is None:
            orders.append(f"O{k + 1} -")
        else:
            s = g.specs[t]
            orders.append(f"O{k + 1} {s.order.value.lower()}{'($)' if s.paid else ''} [{format_colors(s.colors)}]")
    vaults = []
    for k, t in enumerate(g.market):
        vaults.append(f"V{k + 1} -" if t is None else
                      f"V{k + 1} {format_colors(g.specs[t].colors)}{'^' if g.specs[t].crown else ''}")
    lines.append("    " + "   ".join(orders))
    lines.append("    " + "   ".join(vaults))
    pawn = g.options.ruleset.pawn
    lines.append(
        f"    scores {g.scores[0]}-{g.scores[1]}   coins {g.coins[0]}/{g.coins[1]}   builders in supply "
        f"{g.supply[0]}/{g.supply[1]}   tokens {g.tokens[0]}/{g.tokens[1]}   {pawn} at {g.pawn} "
        f"(crowns at {', '.join(map(str, g.manifest.crown_spaces))})   stack {len(g.stack)}, "
        f"discard {len(g.discard)}"
    )
    lines.append("    legend: ^ crown  1A builder of player 1 ranked Architect  * stained glass  + altar  # scaffolding")
    return "\n".join(lines)


def render_scoring(result: ScoringResult, number: int) -> str:
    lines = [f"  scoring {number}: player 1 +{result.points[0]}, player 2 +{result.points[1]}"]
    for a in result.areas:
        cells = " ".join(format_cell(c) for c in a.cells)
        if a.majority is None:
            who = "tie, nobody"
        else:
            who = f"P{a.majority + 1} by {'Strongman' if a.reason == 'strongman' else 'strength'}"
            if a.architect:
                who += ", Architect x2"
            if a.glass:
                who += f", glass +{a.glass}"
        lines.append(f"    {COLOR_NAME[a.color]:<6} {cells:<24} strength {a.strength[0]}-{a.strength[1]}  "
                     f"{who}: {a.points[0]}-{a.points[1]}")
    if result.jester_colors:
        lines.append("    Jester colours: " + ", ".join(
            f"{format_cell(c)}={COLOR_LETTER[col]}" for c, col in result.jester_colors))
    return "\n".join(lines)
