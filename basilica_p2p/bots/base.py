"""The interface every bot implements, and how bots are named on the command line."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

from ..engine import Action, Manifest, Observation


class Bot(Protocol):
    """A player program: it sees only its observation and the legal actions."""

    name: str

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        """Return one of ``legal``."""
        ...


class BotSpecError(ValueError):
    """A bot name that is not known."""


def bot_rng_seed(game_seed: bytes, seat: int) -> int:
    """A per-game, per-seat seed for a bot's own generator (not the game's stream)."""
    return int.from_bytes(hashlib.sha256(b"basilica-p2p/bot/v1\x00" + game_seed + bytes([seat])).digest()[:8], "big")


def make_bot(spec: str, manifest: Manifest, seed: int) -> Bot:
    """Build a bot from its command-line name (``random`` or ``greedy``)."""
    from .greedy import GreedyBot
    from .random_bot import RandomBot

    name = spec.strip().lower()
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot(manifest, seed)
    raise BotSpecError(f"unknown bot {spec!r} (known: random, greedy)")


BOT_NAMES = ("random", "greedy")
