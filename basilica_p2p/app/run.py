"""Running a game under the app: the app in this (the main) thread, the game in another.

Textual runs on asyncio and a network game on trio, so they never share a
thread: the game runs in a thread of its own (bridge.py :class:`GameBridge`,
which says why it is not a Textual worker) and talks to the app through
:class:`AppPlayer`.  ``work`` is whatever plays the game (``play_local`` or
``trio.run`` of a session); its result, or what it raised, comes back here
once the app has closed, so the caller reports it on a normal terminal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .app import BasilicaApp
from .web import page_driver, served
from .bridge import AppPlayer, GameBridge

T = TypeVar("T")
GRACE = 30.0  # seconds the game's thread gets to record a forfeit after the app has closed


def run_in_app(player: AppPlayer, work: Callable[[], T],
               show: Callable[[BasilicaApp], object] = BasilicaApp.run) -> T | None:
    """Play ``work()`` with ``player`` shown in the app (by ``show``, which runs it); its result,
    or its exception re-raised; None when the app closed before a local game began (no game
    was played, and no replay written).

    A network game starts first and the app takes the terminal once the game has
    begun: until then it prints where it listens, its invite, and reads a pasted
    reply code, on the terminal as it always did.  A local game starts once the app
    is there, so that no clock runs while the app starts (a 1-minute game showed
    0:56 on its first screen)."""
    game = GameBridge(work)
    if player.network:
        game.start()
    try:
        while player.network and not (player.begun.wait(0.05) or game.done.is_set()):
            pass
    except KeyboardInterrupt:  # Ctrl-C before the game began (a host waiting for its joiner)
        if player.stopper is None:
            raise
        player.stopper()
        game.join(GRACE)
    if not game.done.is_set() or player.begun.is_set():
        # The app starts a game not yet started once it is mounted; served as a web page, it
        # also ends when its server goes away without a word (web.page_driver).
        app = BasilicaApp(player, game, driver_class=page_driver())
        try:
            show(app)
        finally:
            if game.started and not game.done.is_set():
                # The app closed while the game went on (left during a network game, the window or
                # the page went away, or the app failed): a decision still waited for is a forfeit,
                # a network game is stopped; either way the replay is left a finished game.
                player.abandon()
                if player.stopper is not None:
                    player.stopper()
                game.join(GRACE)
    if game.error is not None:
        raise game.error
    return game.result if game.started else None


def stoppable(player: AppPlayer, coro_fn: Callable[[], Awaitable[Any]]) -> Callable[[], Awaitable[Any]]:
    """A network game the person can stop from the app without a forfeit, as Ctrl-C stops the
    line client's: it ends as if interrupted, so the caller says how to resume it."""
    import trio

    async def run() -> Any:
        token = trio.lowlevel.current_trio_token()
        with trio.CancelScope() as scope:
            def stop() -> None:
                try:
                    trio.from_thread.run_sync(scope.cancel, trio_token=token)
                except trio.RunFinishedError:
                    pass  # the game had ended anyway

            player.stopper = stop
            return await coro_fn()
        # Stopped by the person, as Ctrl-C stops the line client: the caller's trio runner
        # (cli _run_trio) says how to resume; the terminal it restores is the one from before
        # the app, which takes the terminal only once the game has begun.
        raise KeyboardInterrupt

    return run


def wants_app(plain: bool) -> bool:
    """The app unless asked for the line client, or unless this is no terminal (a script's pipe),
    or the app is being served as a web page (textual-serve sets the driver)."""
    if plain:
        return False
    if served():
        return True
    try:
        return sys.stdin.isatty() and sys.stdout.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False
