"""Plain-text pictures of a game, for replays and logs (rendering stays at the edges).

Only public facts are drawn (the cathedral, the market faces, counts), so a
picture never reveals hidden information.
"""

from __future__ import annotations

from .engine import Game, Observation, ScoringResult, observe


# One line that makes the notation of moves and boards readable without docs/notation.md.
LEGEND = ("legend: V2:d1 vault V2 onto d1, B:d1 builder on it, O3:c1=A order O3 on c1 (=A: rank Architect), "
          "$d2 paid option, pass declines it; board: ^ crown, 1A player 1's builder of rank A, * glass, "
          "### scaffolding")


def render_board(g: Game, names: tuple[str, str] = ("player 1", "player 2")) -> str:
    """The board as the terminal client draws it, in plain text, from the public view only."""
    return render_view(observe(g, 0), names)


def render_view(view: Observation, names: tuple[str, str] = ("player 1", "player 2")) -> str:
    """A view of the board, as the terminal client draws it, in plain text."""
    from .drawing import board_lines

    return "\n".join(line.plain.rstrip() for line in board_lines(view, names, max_rows=40, you=False))


def render_scoring(result: ScoringResult, number: int, names: tuple[str, str] = ("player 1", "player 2")) -> str:
    """One scoring, area by area (the same text the terminal client shows)."""
    from .describe import describe_scoring

    return "\n".join("  " + line for line in describe_scoring(result, number, names))
