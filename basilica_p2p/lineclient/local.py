"""``basilica play --vs BOT``: a person against a bot on this machine, with a verifiable replay.

The game runs the whole protocol between the person's identity and the
bot's own (as ``match --replay-dir`` does), so the replay it leaves is
checked by ``basilica verify`` like any network game.  Quitting is a signed
forfeit recorded in that replay.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from ..agent import AgentBase, BotAgent, Decision
from ..bots import Bot
from ..clock import TimeClaim, TimeControl
from ..engine import Game, Manifest, Options
from ..seat import Ask, SeatEvent
from ..identity import Identity
from ..replay import Forfeit, play_both_seats
from ..safefile import publish
from .player import TerminalPlayer


class _Thinking(AgentBase):
    """A bot whose thinking shows as a spinner, so a second's wait does not look like a hang."""

    def __init__(self, bot: Bot, console: Console, label: str) -> None:
        self.bot = BotAgent(bot)
        self.name = self.bot.name
        self.console = console
        self.label = label

    def choose(self, ask: Ask) -> Decision:
        if len(ask.legal) == 1:
            return self.bot.choose(ask)
        with self.console.status(f"{self.label} is thinking...", spinner="dots"):
            return self.bot.choose(ask)

    def observe(self, event: SeatEvent) -> None:
        self.bot.observe(event)

    def close(self) -> None:
        self.bot.close()


@dataclass(frozen=True)
class LocalResult:
    game: Game
    replay: Path
    forfeit: Forfeit | None  # set when a side left the game (the person, or a bot that failed)
    on_time: TimeClaim | None = None  # set when a side's clock ran out


def play_local(
    person: TerminalPlayer,
    bot: Bot,
    identities: tuple[Identity, Identity],
    seat: int,
    manifest: Manifest,
    options: Options,
    replay_dir: Path,
    clock: TimeControl | None = None,
    now: Callable[[], float] = time.monotonic,
) -> LocalResult:
    """Play one game, the person as player ``seat + 1``; returns the game and its replay.

    With a ``clock`` both sides' thinking is timed (the person's at the prompt,
    the bot's while it thinks); a side out of time loses on time.  The person
    may type 'undo': the takeback is signed by both sides in the replay.
    Ctrl-C (while the bot thinks) is the person's resignation, recorded.
    """
    replay_dir.mkdir(parents=True, exist_ok=True)
    name = f"play-{os.urandom(4).hex()}.replay"
    # Written under a hidden name and given its own once the game is over: the folder never
    # holds an unfinished game (a page of 'play --web' closed, the program killed), which
    # 'verify DIR/*' would call incomplete; nothing local can be resumed from it anyway.
    path = replay_dir / f".{name}.part"
    players = identities if seat == 0 else (identities[1], identities[0])
    names = (players[0].name, players[1].name)
    agents: list[object] = [None, None]
    agents[seat] = person
    agents[1 - seat] = _Thinking(bot, person.console, names[1 - seat])
    person.takebacks = True  # a local game: undo is honest here (docs/playing.md)
    played = play_both_seats(path, manifest, options, players, (agents[0], agents[1]), clock=clock, now=now,
                             interrupted=(seat, "interrupted (Ctrl-C)"))
    publish(path, replay_dir / name)
    return LocalResult(played.game, replay_dir / name, played.forfeit, played.on_time)
