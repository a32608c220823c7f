"""``basilica host`` and ``basilica join``: open the connection, play the games, say goodbye.

The host decides how many games are played on one connection; seats
alternate (the host is player 1 in the first game, the joiner in the
second, ...), and player 1 always speaks first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import trio

from ..agent import as_agent
from ..identity import Identity
from ..seat import Series
from .again import counted, play_again
from .watch import WatchHub
from .framing import FramedStream, PeerBye, PeerClosed, PeerTimeout
from .ledger import GameLedger
from ..known_peers import KnownPeers
from .session import (
    BadHello,
    Connection,
    GameReport,
    NoGameStarted,
    PeerGone,
    Presence,
    Settings,
    Side,
    Teller,
    Timeouts,
    Watch,
    forget_session,
    play_one_game,
)


@dataclass
class PeerConfig:
    me: Identity
    settings: Settings
    agent_for: Callable[[int], object]  # game number -> who decides (an agent, a bot, a person)
    replay_dir: Path
    peers: KnownPeers | None = None
    timeouts: Timeouts = Timeouts()
    games: int = 1  # the host's choice
    log: Callable[[str], None] = lambda s: None
    watch: Watch | None = None  # told every event of our seat (the demo prints the game)
    on_game: Callable[[GameReport], None] | None = None
    resume_info: dict[str, object] | None = None  # how to reconnect; None: no sidecar, no resume
    round_trips: list[float] | None = None  # if given, action round trips are added here
    current: Path | None = None  # the replay of the game under way (None between games): for Ctrl-C
    keep_session: bool = False  # keep each finished game's session file (normally deleted)
    ledger: GameLedger | None = None  # the game ids our keys signed: never one twice
    pinned: bytes | None = None  # the peer's key, when an invite fixed it: any other is refused
    games_begun: int = 0  # games whose hellos were exchanged (a replay exists) on this connection
    # How a side waits for a peer that went away (net/session.py Presence); None: as its session
    # file says (listen or dial again within the window), or not at all without one.
    presence: Callable[[Side], Presence | None] | None = None
    # Whether the reports are returned at the end: each holds its game's final state (tens of
    # KB).  Without, each goes to ``on_game`` only, and a host of thousands of games holds no
    # more memory at the last than at the first.
    keep_reports: bool = True
    series: Series | None = None  # the score of the games played on the connection so far
    hub: WatchHub | None = None  # the host's watchers (net/watch.py), if it lets people watch
    watching: bool = False  # a joiner that is told who watches and may close watching (a person's)
    chat: bool = False  # we take lines of chat (a person's side, without --no-chat): net/chat.py
    # We may play again after the host's games (a person's side; a host of one game): net/again.py.
    again: bool = False
    # The person who plays (the command line's agent, the same in every game); None for a bot.
    person: object | None = None


async def play_games(stream: trio.abc.Stream | FramedStream, hosting: bool, config: PeerConfig) -> list[GameReport]:
    conn = Connection(stream, config.timeouts, config.round_trips)
    conn.chat = config.chat
    conn.again = config.again and (not hosting or config.games == 1)
    conn.watch = config.watching and not hosting
    reports: list[GameReport] = []
    # A finished game's session file whose last message was ours: deleted once anything the
    # peer sends afterwards shows it read that message (the stream is in order).
    unconfirmed: list[Path] = []

    def confirmed() -> None:
        while unconfirmed:
            forget_session(unconfirmed.pop())

    async def games() -> None:
        k = 0
        series: Series | None = None
        while True:
            if hosting and k == config.games:
                if config.hub is not None:
                    await config.hub.finish()
                await conn.framed.send_control("bye")
                # Wait for the joiner's goodbye even when we need no confirmation: closing at
                # once, with its next hello unread, would reset the connection, and the reset
                # could reach the joiner before our goodbye, leaving it unsure we hold its
                # last message (its session file then stays).
                if await conn.await_goodbye() and unconfirmed:
                    confirmed()
                return
            seat = k % 2 if hosting else 1 - k % 2

            def started(path: Path) -> None:
                config.current = path
                config.games_begun += 1
                confirmed()  # the peer's hello came after our last message of the game before

            try:
                report = await play_one_game(conn, config.me, seat, config.settings, config.agent_for(k),
                                             config.replay_dir, config.peers, config.log, config.watch,
                                             config.resume_info, on_start=started, ledger=config.ledger,
                                             pinned=config.pinned, presence=config.presence, hub=config.hub)
            except (PeerBye, NoGameStarted, BadHello) as e:
                # After the host's last game its goodbye can cross our next hello and the
                # connection may even be reset: if no game was begun, the session is simply over.
                if not hosting and k:  # k games were played
                    if isinstance(e, PeerBye):
                        confirmed()  # the host's goodbye came after our last message
                        with trio.move_on_after(1):
                            try:  # tells a host that waits for it that our session file is gone too
                                await conn.framed.send_control("bye")
                            except (PeerClosed, PeerTimeout, ValueError):
                                pass
                    return
                if isinstance(e, (BadHello, NoGameStarted)):
                    raise  # bytes that are not a hello: say so; an ended connection: a joiner may dial again
                raise PeerGone("the peer left before the game began") from None
            config.current = None
            if config.keep_reports:
                reports.append(report)
            if conn.left and report.chat is not None:
                report.chat.close()
            if conn.left:
                # The peer went away and did not come back: the game was claimed, and no other
                # game can be played on this connection.
                if config.on_game is not None:
                    config.on_game(report)
                return
            if config.settings.clock is None and report.clock is not None:
                # A joiner took the host's clock: its next hello (as player 1) names it too.
                config.settings = replace(config.settings, clock=report.clock)
            if config.settings.limits is None and report.limits is not None:
                config.settings = replace(config.settings, limits=report.limits)  # and its limits
            if report.sidecar is not None and not config.keep_session:
                if report.delivered:
                    forget_session(report.sidecar)
                else:
                    unconfirmed.append(report.sidecar)
            if config.on_game is not None:
                config.on_game(report)
            k += 1
            config.series = series = counted(series, config.me.name, report)
            if report.chat is not None and (k == config.games or not hosting):
                # The host's games are over: another one if both players want it.  (A joiner
                # goes on either way: to the host's next hello, or to its goodbye.)
                agent = as_agent(config.agent_for(k))
                if await play_again(conn, agent, series, Teller(agent, config.watch), config.log,
                                    report.chat) and hosting:
                    config.games += 1
            elif report.chat is not None:
                report.chat.close()

    try:
        await conn.run(games)
    except PeerClosed as e:
        raise PeerGone(f"the connection ended: {e}") from None
    finally:
        await conn.framed.aclose()
    return reports


async def host(bind: str, port: int, config: PeerConfig, ready: Callable[[str, int], None]) -> list[GameReport]:
    """Listen, take the first peer that connects, play, return the reports."""
    listeners = await trio.open_tcp_listeners(port, host=bind)
    try:
        address = listeners[0].socket.getsockname()
        if config.resume_info is not None:
            config.resume_info["port"] = address[1]  # with --port 0, resume listens on the same port
        ready(address[0], address[1])
        stream = await listeners[0].accept()  # one connection per host: the first peer to come
    finally:
        for listener in listeners:
            await listener.aclose()
    return await play_games(stream, True, config)


async def join(address: str, port: int, config: PeerConfig) -> list[GameReport]:
    stream = await trio.open_tcp_stream(address, port)
    return await play_games(stream, False, config)
