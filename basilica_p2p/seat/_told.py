"""An agent told a game played on the bare engine, as a seat would tell it.

A seat tells its agent typed events as the protocol's messages come; a fixed
position built on a bare :class:`~basilica_p2p.engine.Game` (the app's
screenshot, a test) gives the agent the very same events through
:class:`Told` (the views before and after each move, the scorings, the end)
and puts a decision to it with :func:`ask_for`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..engine import Action, Game, observe
from ..referee import Outcome
from ._events import GameOver, GameStarted, MoveApplied, Scored, TakenBack
from ._steps import Ask, StepKind

if TYPE_CHECKING:  # the agent contract imports the seat; Told only names its type
    from ..agent import Agent


def ask_for(g: Game, seat: int) -> Ask:
    """The decision ``g`` puts to ``seat`` now."""
    return Ask(StepKind.ACTION, observe(g, seat), tuple(g.legal_actions()), len(g.history))


class Told:
    """Begins ``agent``'s game at ``seat`` and tells it every move applied through :meth:`apply`."""

    def __init__(self, agent: Agent, g: Game, seat: int, names: Sequence[str], *, started: bool = True) -> None:
        self.agent, self.g, self.seat = agent, g, seat
        self.names = (str(names[0]), str(names[1]))
        agent.begin(seat, self.names, g.manifest)
        self.view = observe(g, seat)
        if started:
            agent.observe(GameStarted(self.names, g.to_move if g.to_move is not None else 0, self.view))

    def ask(self) -> Ask:
        return ask_for(self.g, self.seat)

    def apply(self, action: Action) -> None:
        """Apply ``action`` to the game and tell the agent what it did."""
        g = self.g
        turn, mover, ply = g.turn, g.to_move, len(g.history)
        assert mover is not None
        events, scorings = len(g.events), len(g.scoring_log)
        g.apply(action)
        before, self.view = self.view, observe(g, self.seat)
        self.agent.observe(MoveApplied(ply, turn, mover, action, tuple(g.events[events:]), before, self.view))
        for k in range(scorings, len(g.scoring_log)):
            self.agent.observe(Scored(k + 1, turn, ply, g.scoring_log[k], g.over and k == len(g.scoring_log) - 1))
        if g.over:
            self.agent.observe(GameOver(outcome_of(g)))

    def took_back(self, back: Game, asker: int) -> None:
        """The game went back to ``back`` (a takeback both sides signed)."""
        self.g = back
        self.view = observe(back, self.seat)
        self.agent.observe(TakenBack(asker, len(back.history), self.view))

    def play(self, choose: Callable[[Game], Action]) -> None:
        """Play to the end, each decision by ``choose(game)``."""
        while not self.g.over:
            self.apply(choose(self.g))


def outcome_of(g: Game) -> Outcome:
    return Outcome((g.scores[0], g.scores[1]), g.winner(), g.end_reason, len(g.history))
