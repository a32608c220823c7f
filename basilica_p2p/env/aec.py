"""Basilica as a PettingZoo AEC environment (both rulesets, festum).

``env()`` is the environment to use: illegal actions end the game with the
offender losing (PettingZoo's ``TerminateIllegalWrapper``).  ``raw_env``
is the bare environment, which raises on an illegal action.  The agent to
act is whoever the engine asks, so an agent may act twice in a row and
answers the other's paid orders, CONFUSE and Jester choices.  Rewards are
given at the end: +1 win, -1 loss, 0 shared victory (docs/rl.md).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ..engine import Manifest
from ._core import AGENTS, RENDER_MODES, Setting, Table, check_render_mode, entropy_seed, episode_seed, outcome, render
from .layout import OBS_BOUND, Layout, arrange, observation_space

class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    metadata = {"name": "basilica_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": False}

    def __init__(self, ruleset: str = "portal2022", festum: bool = False, festum_removal: bool = False,
                 manifest: Manifest | None = None, render_mode: str | None = None,
                 obs_layout: Layout | str = Layout.DICT) -> None:
        super().__init__()
        self.render_mode = check_render_mode(render_mode)
        self.layout = Layout.of(obs_layout)
        self.table = Table(Setting(ruleset, festum, festum_removal, manifest))
        self.possible_agents = list(AGENTS)
        self._obs_space = observation_space(self.table, self.layout)
        size = self.table.encoder.size
        self.state_space = spaces.Box(-OBS_BOUND, OBS_BOUND, (2 * size,), np.float32)
        self._act_space: spaces.Discrete = spaces.Discrete(self.table.actions.size)
        self._seed: int | None = None
        self._episode = 0

    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Discrete:
        return self._act_space

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None or self._seed is None:
            self._seed, self._episode = entropy_seed() if seed is None else seed, 0
        game = self.table.new_game(episode_seed(self._seed, self._episode))
        self._episode += 1
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        assert game.to_move is not None
        self.agent_selection = AGENTS[game.to_move]
        self._mask_in_info()
        if self.render_mode == "human":
            self.render()

    def _mask_in_info(self) -> None:
        if self.layout is Layout.FLAT:  # the observation has no room for it
            for a in self.agents:
                self.infos[a]["action_mask"] = self.action_mask(a).copy()

    def state(self) -> np.ndarray:
        """The global state for centralised training: both players' observations side by side.

        Together they hold everything anyone knows, each one's secret Jester colours
        included (D24); what nobody knows (the order of the stack, crowns face down) is
        not in it.  Never give it to a player's policy: half of it is the other's view.
        """
        return np.concatenate([self.table.observation(0), self.table.observation(1)])

    def _acting(self, agent: str) -> bool:
        return agent == self.agent_selection and not self.terminations.get(agent, True)

    def action_mask(self, agent: str) -> np.ndarray:
        """The agent's legal actions as 0/1 (all 0 when it is not to act); read-only."""
        return self.table.mask() if self._acting(agent) else np.zeros(self.table.actions.size, np.int8)

    def observe(self, agent: str) -> np.ndarray | dict[str, np.ndarray]:
        mask = self.table.fresh_mask() if self._acting(agent) else np.zeros(self.table.actions.size, np.int8)
        return arrange(self.layout, self.table.observation(AGENTS.index(agent)), mask)

    def step(self, action: int) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        act = self.table.action(action)
        if act is None:
            raise ValueError(f"action {action} is not legal for {agent} now (see the action_mask)")
        self._cumulative_rewards[agent] = 0.0
        self.table.apply(act)
        game = self.table.game
        assert game is not None
        if game.over:
            for i, a in enumerate(AGENTS):
                self.rewards[a] = outcome(game, i)
                self.terminations[a] = True
            # Both agents see the end: each then steps once with None, as PettingZoo expects.
            self.agent_selection = AGENTS[1 - AGENTS.index(agent)]
            self._accumulate_rewards()  # rewards are 0 until the end: nothing to add before it
        else:
            assert game.to_move is not None
            self.agent_selection = AGENTS[game.to_move]
        self._mask_in_info()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        return render(self.table.game, self.render_mode)

    def close(self) -> None:
        pass


def env(**kwargs: Any) -> AECEnv:
    """The environment with PettingZoo's usual wrappers: an illegal action loses the game."""
    e: AECEnv = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)
