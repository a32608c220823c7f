"""A one-ply bot: try every legal action on a sampled copy of the game, keep the best.

The bot is handed only its observation.  It samples the hidden part (the
stack) with :func:`~basilica_p2p.engine.determinize`, applies each legal
action to a clone, and scores the result as a person would at a glance:
points already won, plus what a scoring right now would give each player,
plus a little for coins and builders still in hand.  Ties are broken by the
bot's own seeded generator, so a greedy bot is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..engine import Action, Game, Manifest, Observation
from .base import sample_game

COIN_VALUE = 0.6
SUPPLY_VALUE = 0.15


def evaluate(g: Game, me: int) -> float:
    """Score difference from ``me``'s side, counting a scoring as if it happened now."""
    if g.over:
        return 1000.0 * ((g.scores[me] > g.scores[1 - me]) - (g.scores[me] < g.scores[1 - me])) + (
            g.scores[me] - g.scores[1 - me]
        )
    jester = {c: col for ch in g.jester_choices.values() for c, col in ch}
    now = g.current_areas(jester).points
    you = 1 - me
    return (
        g.scores[me] - g.scores[you]
        + now[me] - now[you]
        + COIN_VALUE * (g.coins[me] - g.coins[you])
        + SUPPLY_VALUE * (g.supply[me] - g.supply[you])
    )


class GreedyBot:
    name = "greedy"

    def __init__(self, manifest: Manifest, seed: int) -> None:
        self._manifest = manifest
        self._rng = random.Random(seed)

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        sample = sample_game(obs, self._manifest, self._rng)
        me = obs.player
        best: list[Action] = []
        best_value = float("-inf")
        for action in legal:
            g = sample.clone()
            g.apply(action)
            value = evaluate(g, me)
            if value > best_value + 1e-9:
                best_value = value
                best = [action]
            elif value > best_value - 1e-9:
                best.append(action)
        return best[self._rng.randrange(len(best))]
