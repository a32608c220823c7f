"""A bot that picks uniformly among the legal actions: a baseline and a fuzzer."""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..engine import Action, Observation


class RandomBot:
    name = "random"

    def __init__(self, seed: int) -> None:
        # A bot's own seeded generator; the game's chance never comes from here.
        self._rng = random.Random(seed)

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        return legal[self._rng.randrange(len(legal))]
