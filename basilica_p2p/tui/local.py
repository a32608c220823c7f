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

from ..bots import Bot, BotFailed, checked_choose
from ..clock import TimeClaim, TimeControl
from ..engine import Action, Game, Manifest, Observation, Options
from ..identity import Identity
from ..match import resign_in_replay
from ..replay.local import play_recorded
from ..safefile import publish
from .player import Resign, TerminalPlayer


class _Thinking:
    """A bot whose thinking shows as a spinner, so a second's wait does not look like a hang."""

    def __init__(self, bot: Bot, console: Console, label: str) -> None:
        self.bot = bot
        self.name = getattr(bot, "name", "bot")
        self.console = console
        self.label = label

    def choose(self, obs: Observation, legal: list[Action]) -> Action:
        if len(legal) == 1:
            return checked_choose(self.bot, obs, legal)
        with self.console.status(f"{self.label} is thinking...", spinner="dots"):
            return checked_choose(self.bot, obs, legal)


@dataclass(frozen=True)
class LocalResult:
    game: Game
    replay: Path
    forfeit: BotFailed | None  # set when a side left the game
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
    """
    replay_dir.mkdir(parents=True, exist_ok=True)
    name = f"play-{os.urandom(4).hex()}.replay"
    # Written under a hidden name and given its own once the game is over: the folder never
    # holds an unfinished game (a page of 'play --web' closed, the program killed), which
    # 'verify DIR/*' would call incomplete; nothing local can be resumed from it anyway.
    path = replay_dir / f".{name}.part"
    players = identities if seat == 0 else (identities[1], identities[0])
    names = (players[0].name, players[1].name)
    person.begin_game(seat, names, manifest)
    agents: list[object] = [None, None]
    agents[seat] = person
    agents[1 - seat] = _Thinking(bot, person.console, names[1 - seat])
    person.takebacks = True  # a local game: undo is honest here (docs/playing.md)
    flags: list[TimeClaim] = []
    forfeit: BotFailed | None = None
    try:
        g = play_recorded(path, manifest, options, players, (agents[0], agents[1]),  # type: ignore[arg-type]
                          on_action=person.notify, clock=clock, now=now, on_flag=flags.append)
    except BotFailed as e:
        if e.player is None:
            e.player = seat
        forfeit = e
        g = resign_in_replay(path, manifest, players, e)
    except KeyboardInterrupt:
        # Ctrl-C while the bot thinks: the person left; the replay still ends as a finished game.
        forfeit = Resign(names[seat], seat, "interrupted (Ctrl-C)")
        g = resign_in_replay(path, manifest, players, forfeit)
    publish(path, replay_dir / name)
    return LocalResult(g, replay_dir / name, forfeit, flags[0] if flags else None)
