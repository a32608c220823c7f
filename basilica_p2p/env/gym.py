"""A Gymnasium single-agent environment: one seat of Basilica against one of our bots.

``GymEnv(opponent="greedy")`` plays the learner's seat; the opponent (any
name ``make_bot`` knows, or a bot object) answers every decision of its own,
including those it makes on the learner's turn (paid orders, CONFUSE, Jester
colours), before control returns.  Observations are the AEC environment's
``{"observation", "action_mask"}``; the mask is also in ``info``.  An
illegal action ends the episode as a loss (reward -1, ``info["illegal"]``).
Everything, the opponent's choices included, follows from the reset seed.

The learner's seat is drawn at each reset (from its seed) unless ``seat``
fixes it: the seats are not alike (player 1 moves first; the other answers
in the middle of its turns), so a learner kept to one seat learns half the game.
Registered with Gymnasium as ``basilica-v0`` (``gymnasium.make("basilica_p2p.env:basilica-v0")``
imports this package first).
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from ..bots import Bot, bot_rng_seed, make_bot
from ..engine import Manifest, observe
from ._core import RENDER_MODES, Setting, Table, check_render_mode, outcome, render
from .layout import Layout, arrange, observation_space


class GymEnv(gymnasium.Env):
    metadata = {"render_modes": list(RENDER_MODES)}

    def __init__(self, opponent: str | Bot = "greedy", seat: int | None = None, ruleset: str = "portal2022",
                 festum: bool = False, festum_removal: bool = False, manifest: Manifest | None = None,
                 render_mode: str | None = None, obs_layout: Layout | str = Layout.DICT) -> None:
        if seat not in (0, 1, None):
            raise ValueError("seat is 0 (player 1), 1 (player 2) or None (drawn at each reset)")
        self.render_mode = check_render_mode(render_mode)
        self.layout = Layout.of(obs_layout)
        self.table = Table(Setting(ruleset, festum, festum_removal, manifest))
        self.observation_space = observation_space(self.table, self.layout)
        self.action_space = spaces.Discrete(self.table.actions.size)
        self._opponent_spec = opponent
        self._seat_choice = seat
        self.seat = 0 if seat is None else seat
        self._opponent: Bot | None = None

    def reset(self, *, seed: int | None = None,
              options: dict[str, Any] | None = None) -> tuple[np.ndarray | dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)  # a first reset without a seed draws one from the operating system
        engine_seed = self.np_random.bytes(32)
        if self._seat_choice is None:
            self.seat = int(self.np_random.integers(2))
        spec = self._opponent_spec
        manifest = self.table.manifest
        # A bot object is kept as given; a name is built afresh, seeded from this game.
        self._opponent = make_bot(spec, manifest, bot_rng_seed(engine_seed, 1 - self.seat)) \
            if isinstance(spec, str) else spec
        self.table.new_game(engine_seed)
        self._opponent_moves()
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info()

    def step(self, action: int) -> tuple[np.ndarray | dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        game = self.table.game
        if game is None or game.over:
            raise RuntimeError("step() after the episode ended: call reset()")
        act = self.table.action(int(action))
        if act is None:
            return self._observe(), -1.0, True, False, {**self._info(), "illegal": True}
        self.table.apply(act)
        self._opponent_moves()
        if self.render_mode == "human":
            self.render()
        return self._observe(), outcome(game, self.seat), game.over, False, self._info()

    def _opponent_moves(self) -> None:
        game = self.table.game
        assert game is not None and self._opponent is not None
        while not game.over and game.to_move != self.seat:
            me = game.to_move
            assert me is not None
            self.table.apply(self._opponent.choose(observe(game, me), game.legal_actions()))

    def _mask(self) -> np.ndarray:
        game = self.table.game
        if game is None or game.over:
            return np.zeros(self.table.actions.size, np.int8)
        return self.table.fresh_mask()

    def _observe(self) -> np.ndarray | dict[str, np.ndarray]:
        return arrange(self.layout, self.table.observation(self.seat), self._mask())

    def _info(self) -> dict[str, Any]:
        game = self.table.game
        assert game is not None
        return {"action_mask": self._mask(), "seat": self.seat, "scores": tuple(game.scores)}

    def action_masks(self) -> np.ndarray:
        """The legal actions now (the name sb3-contrib's MaskablePPO looks for)."""
        return self._mask()

    def render(self) -> str | None:  # type: ignore[override]  # gymnasium types it by a TypeVar found only in its return
        return render(self.table.game, self.render_mode)
