"""``python -m basilica_p2p.bench env``: environment steps per second with random masked actions.

One process, one core.  A step is one decision of either agent (``env.step``).
Printed for the bare AEC environment reading only the action mask, the same
reading the encoded observation every step (``env.last()``), PettingZoo's
wrapped ``env()``, the Gymnasium environment against ``random`` (the
opponent's decisions are not counted as steps), and the OpenSpiel game
(chance outcomes counted apart).
"""

from __future__ import annotations

import time

import numpy as np

from .aec import env as wrapped_env
from .aec import raw_env
from .gym import GymEnv


def _aec(make, games: int, observe: bool, festum: bool) -> tuple[int, float]:  # type: ignore[no-untyped-def]
    e = make(festum=festum)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
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
            legal = np.flatnonzero(mask)
            e.step(int(legal[rng.integers(len(legal))]))
            steps += 1
    return steps, time.perf_counter() - start


def _gym(games: int, festum: bool) -> tuple[int, float]:
    env = GymEnv(opponent="random", festum=festum)
    rng = np.random.default_rng(0)
    steps = 0
    start = time.perf_counter()
    for game in range(games):
        obs, _ = env.reset(seed=game)
        done = False
        while not done:
            legal = np.flatnonzero(obs["action_mask"])
            obs, _, done, _, _ = env.step(int(legal[rng.integers(len(legal))]))
            steps += 1
    return steps, time.perf_counter() - start


def _spiel(games: int, festum: bool) -> tuple[int, int, float]:
    import pyspiel

    from . import spiel  # noqa: F401 - registers the game

    game = pyspiel.load_game(spiel.SHORT_NAME, {"festum": festum})
    rng = np.random.default_rng(0)
    decisions = chance = 0
    start = time.perf_counter()
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
    return decisions, chance, time.perf_counter() - start


def bench_env(games: int, festum: bool) -> None:
    label = "with festum" if festum else "base game"
    print(f"env: random masked actions, {games} games each, one core, {label}")
    for name, make, observe in (
        ("PettingZoo raw_env, action mask only", raw_env, False),
        ("PettingZoo raw_env, observation + mask (last())", raw_env, True),
        ("PettingZoo env() (wrapped), last()", wrapped_env, True),
    ):
        steps, secs = _aec(make, games, observe, festum)
        print(f"  {name}: {steps / secs:,.0f} steps/s ({steps} steps in {secs:.2f} s)")
    steps, secs = _gym(max(1, games // 2), festum)
    print(f"  Gymnasium GymEnv against random, step() incl. the opponent's moves: {steps / secs:,.0f} steps/s")
    try:
        decisions, chance, secs = _spiel(max(1, games // 10), festum)
    except ImportError as e:
        print(f"  OpenSpiel: not measured ({e})")
        return
    print(f"  OpenSpiel python_basilica: {decisions / secs:,.0f} decisions/s "
          f"({decisions + chance} actions with {chance} chance outcomes: {(decisions + chance) / secs:,.0f}/s)")
