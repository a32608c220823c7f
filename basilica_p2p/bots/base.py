"""What every bot may use: how a bot looks ahead (sample_game), its own seed, and the error of a
bad bot name.  How bots are named on the command line (make_bot) is bots/registry.py, which
imports every bot; the bots import only this.

The interface a bot implements, :class:`~basilica_p2p.agent.Bot`, lives with the agent contract."""

from __future__ import annotations

import hashlib
import random

from ..engine import Game, Manifest, Observation, determinize


class BotSpecError(ValueError):
    """A bot name that is not known."""


def sample_game(obs: Observation, manifest: Manifest, rng: random.Random) -> Game:
    """A whole game consistent with ``obs``, its hidden part drawn from ``rng``: how a bot (or
    the terminal client, to explain a refusal) looks ahead without the real hidden state."""
    seed = rng.randbytes(32)

    def shuffle(items: list[int]) -> list[int]:
        out = list(items)
        rng.shuffle(out)
        return out

    return determinize(obs, manifest, shuffle, seed)


def bot_rng_seed(game_seed: bytes, seat: int) -> int:
    """A per-game, per-seat seed for a bot's own generator (not the game's stream)."""
    return int.from_bytes(hashlib.sha256(b"basilica-p2p/bot/v1\x00" + game_seed + bytes([seat])).digest()[:8], "big")
