"""A bot that takes a little time per decision, so a test can kill a process mid-game."""

from __future__ import annotations

import time

from basilica_p2p.bots import RandomBot


class SlowRandom:
    name = "slow"

    def __init__(self, manifest: object = None, seed: int = 0) -> None:
        self._bot = RandomBot(seed)

    def choose(self, obs, legal):  # type: ignore[no-untyped-def]
        time.sleep(0.015)
        return self._bot.choose(obs, legal)
