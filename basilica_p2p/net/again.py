"""Another game on the same connection, when both players want one (a rematch).

A side that may play again says so when the connection opens (``pong`` with
``AGAIN_OFFER``, which an older peer ignores).  When both did, each side's
player is asked after the game, and each answer goes to the other side as
``again {yes}``: the first "yes" is an offer, the second its acceptance, a "no"
ends the asking on both sides at once.  If both said yes, the host starts the
next game as it starts any game (seats alternate, a new game id, a new seed or
deal, its own replay); otherwise the host says goodbye, as after its last
game.  See docs/network.md, "Playing again".
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from ..agent import Agent
from ..printable import printable
from ..seat import AgainOffered, SeatEvent, Series
from .chat import Chat
from .connection import Connection, SessionError
from .session import GameReport
from .framing import PeerClosed, PeerTimeout

# Seconds each side's player has to answer, and to wait for the other's answer.
AGAIN_LIMIT = 300.0


def counted(series: Series | None, me: str, report: GameReport) -> Series:
    """The series (``me`` against the report's peer) with the game of ``report`` counted in."""
    winner = report.outcome.winner
    return (series or Series((me, report.peer))).after(None if winner is None else int(winner != report.seat))


async def play_again(conn: Connection, agent: Agent, series: Series, tell: Callable[[tuple[SeatEvent, ...]], None],
                     log: Callable[[str], None], chat: Chat | None = None, limit: float = AGAIN_LIMIT) -> bool:
    """Ask our player whether to play again while the other side's answer is awaited; True when
    both said yes.  A "no" from either side, silence past ``limit`` or a broken connection is no.
    The game's ``chat`` goes on meanwhile (lines said after the last move), and is closed after."""
    try:
        return await _both_answers(conn, agent, series, tell, log, chat, limit)
    finally:
        if chat is not None:
            chat.close()


async def _both_answers(conn: Connection, agent: Agent, series: Series, tell: Callable[[tuple[SeatEvent, ...]], None],
                        log: Callable[[str], None], chat: Chat | None, limit: float) -> bool:
    ours: list[bool] = []
    theirs: list[bool] = []
    peer = printable(series.names[1], 64)

    async with trio.open_nursery() as nursery:

        async def ask() -> None:
            yes = False
            with trio.move_on_after(limit):
                if agent.traits.blocking:  # a person at a prompt: in a worker thread
                    yes = bool(await trio.to_thread.run_sync(agent.again, series, abandon_on_cancel=True))
                else:
                    yes = bool(agent.again(series))
            ours.append(yes)
            if chat is not None:
                await chat.said()  # lines said before answering go first, into this game's replay
            try:
                await conn.framed.send_control("again", yes=yes)
            except (PeerClosed, PeerTimeout):
                theirs.append(False)
                nursery.cancel_scope.cancel()
                return
            if not yes:
                nursery.cancel_scope.cancel()

        async def listen() -> None:
            try:
                yes = await conn.receive_again(trio.current_time() + limit,
                                               chat.hear_any if chat is not None else lambda raw: None)
            except (SessionError, PeerClosed, PeerTimeout) as e:
                log(f"no other game: {e}")
                yes = False
            theirs.append(yes)
            tell((AgainOffered(peer, yes),))
            if not yes:
                nursery.cancel_scope.cancel()  # our player's question is moot

        nursery.start_soon(ask)
        nursery.start_soon(listen)
    return ours == [True] and theirs == [True]


__all__ = ["AGAIN_LIMIT", "counted", "play_again"]
