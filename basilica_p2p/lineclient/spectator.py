"""Someone watching a network game in the terminal (``basilica watch --plain``): every move
told in words, as the players' own line clients tell it, to an onlooker."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.text import Text

from ..narration import LineKind, Narrator
from ..replay import Header
from ..seat import SeatEvent

STYLE = {LineKind.THEM: "", LineKind.NOTE: "bold", LineKind.SCORING: "bold", LineKind.DETAIL: "dim",
         LineKind.RESULT: "bold", LineKind.CHAT: "italic"}


class Spectator:
    """Prints each game a watcher is told, one narration line at a time."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(highlight=False)
        self.games = 0

    def begin(self, header: Header) -> Callable[[SeatEvent], None]:
        """A game begins: say who plays, and tell its events from here on."""
        self.games += 1
        names = (header.players[0][1], header.players[1][1])
        narrator = Narrator(None, names)
        if self.games > 1:
            self.console.print()
        self.console.print(Text(f"Game {self.games}, {header.ruleset}: {header.game.hex()[:16]}", style="dim"))
        for line in narrator.begin():
            self.console.print(Text(line.text, style=STYLE.get(line.kind, "")))

        def tell(event: SeatEvent) -> None:
            for line in narrator.tell(event):
                self.console.print(Text(("  " if line.kind is LineKind.DETAIL else "") + line.text,
                                        style=STYLE.get(line.kind, "")), overflow="fold")

        return tell
