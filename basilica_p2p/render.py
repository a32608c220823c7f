"""Plain-text pictures of a game, for replays and logs (rendering stays at the edges).

Only public facts are drawn (the cathedral, the market faces, counts), so a
picture never reveals hidden information.
"""

from __future__ import annotations

from .engine import Game, ScoringResult
from .engine.cells import COLUMNS, WIDTH
from .engine.components import RANK_LETTER, format_colors

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


def render_scoring(result: ScoringResult, number: int, names: tuple[str, str] = ("player 1", "player 2")) -> str:
    """One scoring, area by area (the same text the terminal client shows)."""
    from .describe import describe_scoring

    return "\n".join("  " + line for line in describe_scoring(result, number, names))
