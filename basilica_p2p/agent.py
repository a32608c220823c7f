"""Whoever decides for a seat: the one contract every player implements.

A driver (the network session, a local game, a match) asks its agent for
each decision of its seat and tells it what happens::

    agent.begin(seat, names, manifest)       # once, before the first decision
    decision = agent.choose(ask)             # an Action, a TakeBack or a Resign
    agent.observe(event)                     # every seat event: moves, scorings, clocks, the end
    agent.close()                            # the game is over, or the agent is dropped

Every optional capability is declared: :class:`Traits` says whether the
agent must be asked in a worker thread (a person, a program) and whether it
may ask for takebacks; :meth:`Agent.limit_time` is there for every agent
(most ignore it).  :class:`AgentBase` gives the defaults.

Bots keep their simpler interface (``choose(observation, legal)``,
docs/bots.md); :class:`BotAgent` makes any of them an agent.  A bot that
raises or answers an illegal action resigns: its failure is the value
:class:`Resign`, not an exception that climbs through the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, cast, runtime_checkable

from .engine import Action, Manifest, Observation, format_action
from .printable import cut, printable

if TYPE_CHECKING:
    from .seat import Ask, SeatEvent, Series

REASON_LIMIT = 200  # characters of a recorded forfeit reason (PROTOCOL.md)


@dataclass(frozen=True)
class TakeBack:
    """A person asks to take back ``moves`` of their own decisions (1: back to the previous one).
    Only a local game honours it (docs/playing.md); both sides sign it in the replay."""

    moves: int = 1


@dataclass(frozen=True)
class Resign:
    """The seat gives the game up: a person left, a bot failed.

    ``reason`` is recorded in the signed forfeit; ``public_reason`` replaces
    it where the other player is a stranger (a ``cmd:`` bot named without its
    local path); ``summary`` is one line for our own terminal."""

    reason: str
    public_reason: str = ""
    summary: str = ""

    @property
    def told(self) -> str:
        return self.summary or self.reason


Decision = Action | TakeBack | Resign


@dataclass(frozen=True)
class Traits:
    """What a driver must know of an agent before it asks.

    ``blocking``: it waits on a person or another program, so a network
    session asks it in a worker thread, when the time comes and never ahead.
    ``takes_back``: it may answer :class:`TakeBack` (a person against a bot
    on this machine)."""

    blocking: bool = False
    takes_back: bool = False
    chats: bool = False  # a person who may read and write chat in a network game (bots ignore it)


class Agent(Protocol):
    name: str
    traits: Traits

    def begin(self, seat: int, names: tuple[str, str], manifest: Manifest) -> None: ...

    def choose(self, ask: Ask) -> Decision: ...

    def observe(self, event: SeatEvent) -> None: ...

    def limit_time(self, seconds: float) -> None: ...

    def open_chat(self, say: Callable[[str], str | None]) -> None: ...

    def again(self, series: Series) -> bool: ...

    def open_watching(self, close: Callable[[], str | None]) -> None: ...

    def close(self) -> None: ...


class AgentBase:
    """Defaults for :class:`Agent`: nothing to begin, observe, limit or close."""

    name = "agent"
    traits = Traits()

    def begin(self, seat: int, names: tuple[str, str], manifest: Manifest) -> None:
        pass

    def choose(self, ask: Ask) -> Decision:
        raise NotImplementedError  # the one thing every agent does its own way

    def observe(self, event: SeatEvent) -> None:
        pass

    def limit_time(self, seconds: float) -> None:
        pass

    def open_chat(self, say: Callable[[str], str | None]) -> None:
        """A network game where the agent ``traits.chats``: ``say`` (callable from any thread)
        sends a line, returning None, or why it cannot in one line (PROTOCOL.md §4d)."""

    def open_watching(self, close: Callable[[], str | None]) -> None:
        """A network game people may watch (net/watch.py): ``close`` (callable from any thread)
        sends every watcher away; it returns None, or why it could not, in one line."""

    def again(self, series: Series) -> bool:
        """After a network game whose both sides may play again: whether this side wants another
        game on the same connection (the series so far in ``series``).  A bot wants none."""
        return False

    def close(self) -> None:
        pass


# --- bots ------------------------------------------------------------------------------------


class BotFailed(Exception):
    """A bot did not make a legal decision in time; its side loses the game.

    ``str(e)`` is one line naming the bot and what it did, e.g.
    ``bot cmd:./mybot (player 2) did not answer within 10 s``.
    """

    def __init__(self, bot: str, what: str, player: int | None = None) -> None:
        super().__init__(bot, what, player)
        self.bot = bot
        self.what = what
        self.player = player  # 0 or 1, the side that loses
        self.game: Any = None  # the game as it stood, set by whoever ran it (not pickled)

    def __str__(self) -> str:
        seat = f" (player {self.player + 1})" if self.player is not None else ""
        return f"bot {self.bot}{seat} {self.what}"

    @property
    def reason(self) -> str:
        """The reason of the forfeit, as recorded: at most 200 characters (PROTOCOL.md).

        What the bot did is the part worth keeping, so a long label (a ``cmd:`` bot's full
        path) is shortened in its middle, keeping its end (the program's name), before
        anything is cut from the end.
        """
        text = str(self)
        excess = len(text) - REASON_LIMIT
        keep = len(self.bot) - excess - 3
        if excess > 0 and keep >= 8:
            bot = self.bot[: keep // 2] + "..." + self.bot[len(self.bot) - (keep - keep // 2):]
            seat = f" (player {self.player + 1})" if self.player is not None else ""
            text = f"bot {bot}{seat} {self.what}"
        return cut(text, REASON_LIMIT)


def shown_quoted(text: object, limit: int = 60) -> str:
    """A bot's words, quoted, printable and short."""
    return "'" + printable(text if isinstance(text, str) else repr(text), limit, dots=True) + "'"


class Bot(Protocol):
    """A player program: it sees only its observation and the legal actions (docs/bots.md)."""

    name: str

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        """Return one of ``legal``."""
        ...


@runtime_checkable
class HearsResults(Protocol):
    """A bot that wants the result of its game (``cmd:`` bots pass it to their program)."""

    def game_over(self, scores: tuple[int, int], winner: int | None, end: str) -> None: ...


@runtime_checkable
class TimeLimited(Protocol):
    """A bot whose time per decision can be lowered (``cmd:`` bots, under a peer's --move-time)."""

    def limit_time(self, seconds: float) -> None: ...


@runtime_checkable
class Closable(Protocol):
    """A bot that holds something to let go of (a ``cmd:`` bot's program)."""

    def close(self) -> None: ...


@runtime_checkable
class Labelled(Protocol):
    """A bot built from a spec the user wrote (``cmd:./mybot``): failures name it by that."""

    spec: str


@runtime_checkable
class PubliclyLabelled(Protocol):
    """A bot with a name for strangers other than its spec (a ``cmd:`` bot: no local path)."""

    public_spec: str


@runtime_checkable
class Blocking(Protocol):
    """A bot that waits on another process (``cmd:`` bots): asked in a worker thread."""

    blocking: bool


@runtime_checkable
class Named(Protocol):
    name: str


def bot_label(bot: object) -> str:
    """How a failure names the bot: its spec (``cmd:./bots/mine --fast``), or its name."""
    if isinstance(bot, Labelled) and bot.spec:
        return str(bot.spec)
    if isinstance(bot, Named) and bot.name:
        return str(bot.name)
    return type(bot).__name__


def checked_choose(bot: Any, obs: Observation, legal: Sequence[Action], label: str | None = None) -> Action:
    """``bot.choose(obs, legal)``, or :class:`BotFailed` if it raises or answers an illegal action."""
    try:
        action = bot.choose(obs, legal)
    except BotFailed as e:
        if e.player is None:
            e.player = obs.player
        raise
    except Exception as e:  # a bot may fail in any way; its side loses the game
        # (the label only now: the protocol checks behind it cost microseconds every decision)
        raise BotFailed(label or bot_label(bot), f"raised {type(e).__name__}: {cut(str(e), 120)}", obs.player) from e
    try:
        ok = type(action) is Action and action in legal
    except Exception:
        ok = False
    if not ok:
        try:
            text = format_action(action)
        except Exception:
            text = repr(action)
        raise BotFailed(label or bot_label(bot), f"answered illegal action {shown_quoted(text)}", obs.player)
    return action


class BotAgent(AgentBase):
    """Any bot as an agent: a failure is a :class:`Resign` naming the bot and what it did.

    ``public_label`` names the bot to a stranger (a ``cmd:`` bot by its program's
    file name only: the local path stays private)."""

    def __init__(self, bot: Bot, public_label: str | None = None) -> None:
        self.bot = bot
        self.name = bot.name
        self.label = bot_label(bot)
        self.public_label = public_label or (bot.public_spec if isinstance(bot, PubliclyLabelled) else self.label)
        self.traits = Traits(blocking=isinstance(bot, Blocking) and bool(bot.blocking))
        self._seat: int | None = None

    def begin(self, seat: int, names: tuple[str, str], manifest: Manifest) -> None:
        self._seat = seat

    def choose(self, ask: Ask) -> Decision:
        try:
            return checked_choose(self.bot, ask.view, list(ask.legal), self.label)
        except BotFailed as e:
            return self.resignation(e)

    def resignation(self, e: BotFailed) -> Resign:
        public = e.reason if self.public_label == self.label else BotFailed(self.public_label, e.what, e.player).reason
        return Resign(e.reason, public, str(e))

    def observe(self, event: SeatEvent) -> None:
        from .seat import GameOver

        if isinstance(event, GameOver) and isinstance(self.bot, HearsResults):
            o = event.outcome
            end = o.end if o.end != "forfeit" else f"forfeit: {o.reason}"
            try:
                self.bot.game_over(o.scores, o.winner, end)
            except Exception:
                pass  # only news for the bot

    def limit_time(self, seconds: float) -> None:
        if isinstance(self.bot, TimeLimited):
            self.bot.limit_time(seconds)

    def close(self) -> None:
        close_bot(self.bot)


def as_agent(player: object) -> Agent:
    """An agent as it is; any bot as a :class:`BotAgent`."""
    if isinstance(player, AgentBase):
        return player
    return BotAgent(cast(Bot, player))  # anything else is a bot, by the contract of docs/bots.md


def close_bot(bot: object) -> None:
    """Stop a bot's program if it has one (best effort)."""
    if isinstance(bot, Closable):
        try:
            bot.close()
        except Exception:
            pass
