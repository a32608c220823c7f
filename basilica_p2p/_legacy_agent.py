"""A bridge for the two person clients while they move to the agent contract (issue 19).

``TerminalPlayer`` and ``AppPlayer`` still answer ``choose(observation, legal)``
(raising a takeback or a resignation) and are told moves with the whole game
(``notify``); this adapter lets the seat drivers use them as agents.  It goes
once both clients implement :class:`~basilica_p2p.agent.Agent` themselves.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .agent import Agent, AgentBase, BotAgent, BotFailed, Decision, Resign, TakeBack, Traits
from .engine import Action, Manifest, Observation, format_action

if TYPE_CHECKING:
    from .seat import Ask, Seat, SeatEvent


@runtime_checkable
class LegacyPerson(Protocol):
    name: str

    def begin_game(self, seat: int, names: Sequence[str], manifest: Manifest | None = None,
                   view: Observation | None = None) -> None: ...

    def notify(self, g: Any, turn: int, who: int, text: str, *rest: Any) -> None: ...

    def show_clocks(self, view: Any) -> None: ...

    def took_back(self, g: Any) -> None: ...

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action: ...


class _Person(AgentBase):
    def __init__(self, player: LegacyPerson, seat: Seat) -> None:
        self.player, self.seat = player, seat
        self.name = player.name
        self.traits = Traits(blocking=True, takes_back=True)

    def begin(self, seat: int, names: tuple[str, str], manifest: Manifest) -> None:
        self._begun = (seat, names, manifest)

    def _begin_game(self, view: Observation | None) -> None:
        # Told once the game is set up (or, resumed, as it stands): the screen shows the board
        # and whose turn it is from then on.
        seat, names, manifest = self._begun
        self.player.begin_game(seat, names, manifest, view)

    def choose(self, ask: Ask) -> Decision:
        from .bots import TakeBack as AskedTakeBack

        try:
            return self.player.choose(ask.view, list(ask.legal))
        except AskedTakeBack as e:
            return TakeBack(e.moves)
        except BotFailed as e:  # the person quit (tui.Resign)
            return Resign(e.reason, e.reason, str(e))

    def observe(self, event: SeatEvent) -> None:
        from .seat import ClocksChanged, GameStarted, MoveApplied, NothingToTakeBack, TakenBack

        if isinstance(event, GameStarted):
            self._begin_game(event.view)
        elif isinstance(event, MoveApplied):
            self.player.notify(self.seat.game, event.turn, event.mover, format_action(event.action))
        elif isinstance(event, ClocksChanged):
            self.player.show_clocks(event.view)
        elif isinstance(event, TakenBack):
            self.player.took_back(self.seat.game)
        elif isinstance(event, NothingToTakeBack):
            self.player.took_back(None)


def as_agent(player: object, seat: Seat) -> Agent:
    """An agent as it is; a person client of the old interface through the bridge; a bot as
    a :class:`~basilica_p2p.agent.BotAgent`."""
    if isinstance(player, AgentBase):
        return player  # type: ignore[return-value]
    if isinstance(player, LegacyPerson):
        return _Person(player, seat)
    from .bots.external import public_label

    return BotAgent(player, public_label(player))  # type: ignore[arg-type]
