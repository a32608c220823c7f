"""What every environment here shares: options, seeds, and a game with its mask cached.

A :class:`Table` is one engine game plus, for the state it is in, the legal
actions' indices (computed once per state, not once per query) and each
player's encoded observation (computed only when asked for: a loop that
reads masks alone never pays for the encoding).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import numpy as np

from ..engine import Action, Game, Manifest, Options, Ruleset, default_manifest, observe
from ..render import render_board
from ..encoding import ActionTable, ObservationEncoder

AGENTS = ("player_1", "player_2")
_SEED_TAG = b"basilica-p2p/env/v1\x00"


@dataclass(frozen=True)
class Setting:
    """The game every episode plays: ruleset, festum, and the component list."""

    ruleset: str = "portal2022"
    festum: bool = False
    festum_removal: bool = False
    manifest: Manifest | None = None

    @property
    def options(self) -> Options:
        return Options(Ruleset(self.ruleset), self.festum, self.festum_removal)

    def the_manifest(self) -> Manifest:
        return self.manifest if self.manifest is not None else default_manifest()


def episode_seed(seed: int, episode: int) -> bytes:
    """The engine's 32-byte seed for an episode: ``reset(seed=s)`` gives the same game for
    the same ``s``; ``reset()`` without a seed gives the next game of the last seed's series."""
    return hashlib.sha256(_SEED_TAG + f"{int(seed)}/{episode}".encode()).digest()


def entropy_seed() -> int:
    """A series seed from the operating system, for a first ``reset()`` given none (Gymnasium's
    convention): copies of an environment made without seeds must not all play one series."""
    return int.from_bytes(os.urandom(16), "big")


class Table:
    """An engine game with the current state's mask and observations cached."""

    def __init__(self, setting: Setting) -> None:
        self.setting = setting
        self.manifest = setting.the_manifest()
        self.options = setting.options
        self.actions = ActionTable(jesters=max(1, self.manifest.promotion_tokens))
        self.encoder = ObservationEncoder(self.manifest)
        self.game: Game | None = None
        self._legal: tuple[list[int], list[Action]] | None = None
        self._mask: np.ndarray | None = None
        self._encoded: set[int] = set()  # players whose kept vector (encoder.current) is of this state

    def new_game(self, seed: bytes) -> Game:
        self.game = Game.new(self.manifest, self.options, seed)
        self._forget()
        return self.game

    def _forget(self) -> None:
        self._legal = None
        self._mask = None
        self._encoded = set()

    def _indexed(self) -> tuple[list[int], list[Action]]:
        """The legal actions' indices and the actions, in the engine's order (once per state)."""
        if self._legal is None:
            assert self.game is not None
            self._legal = self.actions.indices(self.game.legal_actions())
        return self._legal

    def legal_indices(self) -> list[int]:
        return list(self._indexed()[0])

    def mask(self) -> np.ndarray:
        """The legal actions of the player to move as 0/1 int8 (shared: do not write to it)."""
        if self._mask is None:
            self._mask = self.fresh_mask()
        return self._mask

    def fresh_mask(self) -> np.ndarray:
        """The legal actions of the player to move as a new 0/1 int8 array, the caller's to keep."""
        # A few dozen ones set in Python cost less than numpy's conversion of the index list.
        buf = bytearray(self.actions.size)
        for i in self._indexed()[0]:
            buf[i] = 1
        return np.frombuffer(buf, np.int8)

    def action(self, index: int) -> Action | None:
        """The legal action of ``index`` now, or None if it is not legal."""
        idx, acts = self._indexed()
        i = int(index)
        # A few dozen indices: a scan in C costs less than building a dict every step.
        return acts[idx.index(i)] if i in idx else None

    def apply(self, action: Action) -> None:
        assert self.game is not None
        self.game.apply(action)
        self._forget()

    def observation(self, player: int) -> np.ndarray:
        """``player``'s encoded observation of the current state (a fresh copy each time)."""
        if player not in self._encoded:
            assert self.game is not None
            self._encoded.add(player)
            return self.encoder.encode(observe(self.game, player))
        return self.encoder.current(player).copy()


def outcome(game: Game, player: int) -> float:
    """+1 for a win, -1 for a loss, 0 for a shared victory (or a game still going)."""
    w = game.winner()
    if not game.over or w is None:
        return 0.0
    return 1.0 if w == player else -1.0


RENDER_MODES = ("ansi", "human")


def check_render_mode(mode: str | None) -> str | None:
    if mode not in (None, *RENDER_MODES):
        raise ValueError(f"render_mode {mode!r} is not supported (only 'ansi' and 'human')")
    return mode


def render(game: Game | None, mode: str | None) -> str | None:
    """The board as text for ``ansi``; printed for ``human`` (which returns None), as Gymnasium and
    PettingZoo have it."""
    if mode is None or game is None:
        return None
    text = render_board(game)
    if mode == "human":
        print(text)
        return None
    return text
