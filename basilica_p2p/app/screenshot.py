"""``python -m basilica_p2p.app.screenshot [PATH]``: docs/screenshot.svg, a game in progress.

The game is fixed (seed, bots, number of moves) so the picture and the
snapshot tests that use :func:`scripted_game` come out the same every time.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from ..bots import GreedyBot
from ..agent import Decision
from ..engine import Game, Manifest, Options, default_manifest, observe
from ..seat import Told
from .app import BasilicaApp
from .bridge import AppPlayer
from .widgets import NotationInput

SIZE = (100, 32)
NAMES = ("ada", "greedy")


def scripted_game(player: AppPlayer, plies: int, manifest: Manifest | None = None,
                  seed: bytes = bytes(32)) -> Decision:
    """Greedy bots play ``plies`` moves of a fixed game, told to ``player`` as player 1; then player 1
    is asked for its next decision, which is returned."""
    manifest = manifest or default_manifest()
    g = Game.new(manifest, Options(), seed)
    bots = (GreedyBot(manifest, 1), GreedyBot(manifest, 2))
    told = Told(player, g, 0, NAMES)
    while not g.over and (plies > 0 or g.to_move != 0):
        p = g.to_move or 0
        told.apply(bots[p].choose(observe(g, p), g.legal_actions()))
        plies -= 1
    return player.choose(told.ask())


async def _until_deciding(app: BasilicaApp, pilot: object) -> None:
    for _ in range(600):
        if app.snap is not None and app.snap.deciding:
            return
        await asyncio.sleep(0.01)
    raise RuntimeError("the scripted game never came to a decision")


async def _shoot(path: Path) -> None:
    player = AppPlayer(NAMES[0], default_manifest(), undo=True)
    app = BasilicaApp(player, lambda: scripted_game(player, 40))
    async with app.run_test(size=SIZE) as pilot:
        await _until_deciding(app, pilot)
        app.query_one("#notation", NotationInput).cursor_blink = False  # the picture does not depend on when it is taken
        # The scoring closed, then a vault space picked: its targets lit, its order marked as going with it.
        await pilot.press("escape", "v", "2")
        await pilot.pause(0.5)  # the log scrolled to its end once its lines are wrapped
        path.write_text(app.export_screenshot(title="basilica play"), encoding="utf-8")
        player.abandon()


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    path = Path(args[0] if args else "docs/screenshot.svg")
    asyncio.run(_shoot(path))
    print(f"saved {path}")


if __name__ == "__main__":
    main()
