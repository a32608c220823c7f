"""``python -m basilica_p2p.bench env``: environment steps per second with random masked actions.

One process, one core.  A step is one decision of either agent (``env.step``).
The first line is issue 14's figure (target: at least 10,000 per core): the
bare AEC environment with the observation read every step (``env.last()``,
what a learner does).  Then the same reading the action mask only,
PettingZoo's wrapped ``env()``, the Gymnasium environment against
``random`` (the opponent's decisions are not counted as steps), and the
OpenSpiel game (chance outcomes counted apart).

Each figure is given per CPU second of this process, which is what "per
core" means on a machine other work shares, and per wall-clock second; the
load average is printed beside them.  The random agent is uniform over the
mask's legal indices and draws its uniforms in batches, as a vectorised
policy would, so that its own cost (a few µs with a numpy call per draw) is
not counted as the environment's.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .aec import env as wrapped_env
from .aec import raw_env
from .gym import GymEnv


class _RandomAgent:
    """A uniformly random legal index of a mask, from a seeded generator."""

    def __init__(self, seed: int) -> None:
        self._rng = np.random.default_rng(seed)
        self._uniforms: list[float] = []

    def __call__(self, mask: np.ndarray) -> int:
        legal = np.flatnonzero(mask)
        return int(legal[self.pick(len(legal))])

    def pick(self, n: int) -> int:
        """A uniform index below ``n``."""
        if not self._uniforms:
            self._uniforms = self._rng.random(4096).tolist()
        return int(self._uniforms.pop() * n)


class _Clock:
    """Wall-clock and CPU seconds since it was made."""

    def __init__(self) -> None:
        self._wall, self._cpu = time.perf_counter(), time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self._wall, time.process_time() - self._cpu


def _aec(make: Callable[..., Any], games: int, observe: bool, festum: bool) -> tuple[int, float, float]:
    e = make(festum=festum)
    agent_of = _RandomAgent(0)
    steps = 0
    clock = _Clock()
    for game in range(games):
        e.reset(seed=game)
        u = e.unwrapped
        while e.agents:
            agent = e.agent_selection
            if observe:
                obs, _, term, trunc, _ = e.last()
                mask = obs["action_mask"]
            else:
                term, trunc = u.terminations[agent], u.truncations[agent]
                mask = None if term or trunc else u.action_mask(agent)
            if term or trunc:
                e.step(None)
                continue
            e.step(agent_of(mask))
            steps += 1
    return (steps, *clock.read())


def _ratio(games: int, festum: bool) -> tuple[int, float, int, float]:
    """Issue 24's figure: an observed step against a pure engine decision, game by game alternately
    (so that both see the same load), the agent's own choice timed in neither.

    An observed step is ``env.last()`` (the observation encoded, the mask) and ``env.step(i)`` of
    ``raw_env``; an engine decision is ``legal_actions()`` and ``apply()`` on a bare ``Game`` of the
    same deal.  The choices are uniform over the legal actions in both; the engine's are drawn in
    its own order of them, so its games differ from the environment's after the first move.
    Returns (steps, seconds, decisions, seconds), wall-clock time of the parts timed only.
    """
    from ..engine import Game
    from ._core import Setting, episode_seed

    setting = Setting(festum=festum)
    manifest, options = setting.the_manifest(), setting.options
    e = raw_env(festum=festum)
    env_agent, engine_agent = _RandomAgent(0), _RandomAgent(0)
    clock = time.perf_counter_ns
    steps = decisions = 0
    env_ns = engine_ns = 0
    for game in range(games):
        g = Game.new(manifest, options, episode_seed(game, 0))
        while not g.over:
            t0 = clock()
            legal = g.legal_actions()
            t1 = clock()
            choice = legal[engine_agent.pick(len(legal))]
            t2 = clock()
            g.apply(choice)
            engine_ns += clock() - t2 + t1 - t0
            decisions += 1
        e.reset(seed=game)
        while True:
            t0 = clock()
            obs, _, term, trunc, _ = e.last()
            t1 = clock()
            if term or trunc:
                break
            choice_index = env_agent(obs["action_mask"])
            t2 = clock()
            e.step(choice_index)
            env_ns += clock() - t2 + t1 - t0
            steps += 1
    return steps, env_ns / 1e9, decisions, engine_ns / 1e9


def _gym(games: int, festum: bool) -> tuple[int, float, float]:
    env = GymEnv(opponent="random", festum=festum)
    agent_of = _RandomAgent(0)
    steps = 0
    clock = _Clock()
    for game in range(games):
        obs, _ = env.reset(seed=game)
        done = False
        while not done:
            obs, _, done, _, _ = env.step(agent_of(obs["action_mask"]))
            steps += 1
    return (steps, *clock.read())


def _spiel(games: int, festum: bool) -> tuple[int, int, float, float]:
    import pyspiel

    from . import spiel  # noqa: F401 - registers the game

    game = pyspiel.load_game(spiel.SHORT_NAME, {"festum": festum})
    rng = np.random.default_rng(0)
    decisions = chance = 0
    clock = _Clock()
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                chance += 1
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
                decisions += 1
    return (decisions, chance, *clock.read())


def _rates(steps: int, wall: float, cpu: float) -> str:
    return f"{steps / cpu:,.0f} steps/s per core (CPU time; {steps / wall:,.0f}/s wall clock, {steps} steps)"


def bench_env(games: int, festum: bool, machine: str) -> None:
    label = "with festum" if festum else "base game"
    steps, wall, cpu = _aec(raw_env, games, True, festum)
    print("issue 14, env steps with random masked actions, observation read every step (target >= 10,000 per core):")
    print(f"  {steps / cpu:,.0f} steps/s per core  [PettingZoo raw_env, env.last() + step, {label}; "
          f"{steps / wall:,.0f}/s wall clock; {steps} steps in {games} games]")
    observed, observed_s, decided, decided_s = _ratio(games, festum)
    print("issue 24, an observed step against a pure engine decision (target: at most 3x):")
    print(f"  {(observed_s / observed) / (decided_s / decided):.2f}x  [{observed_s / observed * 1e6:.1f} us an observed "
          f"step (raw_env last() + step, {observed} steps) against {decided_s / decided * 1e6:.1f} us an engine "
          f"decision (legal_actions + apply, {decided} decisions): {observed / observed_s:,.0f} steps/s against "
          f"{decided / decided_s:,.0f} decisions/s; game by game alternately, the agent's choice in neither]")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {machine}; load average {load:.1f} (other work shares the cores: CPU time is the per-core figure)")
    print("other loops, one core each:")
    for name, make, observe in (
        ("PettingZoo raw_env, action mask only", raw_env, False),
        ("PettingZoo env() (wrapped), last()", wrapped_env, True),
    ):
        print(f"  {name}: {_rates(*_aec(make, games, observe, festum))}")
    print(f"  Gymnasium GymEnv against random, step() incl. the opponent's moves: "
          f"{_rates(*_gym(max(1, games // 2), festum))}")
    try:
        decisions, chance, wall, cpu = _spiel(max(1, games // 10), festum)
    except ImportError as e:
        print(f"  OpenSpiel: not measured ({e})")
        return
    print(f"  OpenSpiel python_basilica: {decisions / cpu:,.0f} decisions/s per core ({decisions / wall:,.0f} wall clock; "
          f"{decisions + chance} actions with {chance} chance outcomes: {(decisions + chance) / cpu:,.0f}/s)")
