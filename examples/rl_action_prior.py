"""Train a tiny policy with the Gymnasium environment, in well under a minute on one core.

The policy is a softmax over the legal action indices (the action mask) with one
learned number per index, a prior on actions such as "put a builder on the tile
just placed" or "execute the order in O2 on this cell".  It is trained by
REINFORCE against the ``random`` bot, then evaluated against it on games it never
saw, next to the untrained (uniform) policy.  It shows the interfaces, not a
strong player: the prior sees nothing of the position but which actions are legal.

    pip install -e '.[rl]'
    python examples/rl_action_prior.py [--games 2500] [--eval 300]

Deterministic: the same arguments give the same numbers (the training stops after a
number of games, not at a clock time, so a slower machine only takes longer).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from basilica_p2p.engine import format_action
from basilica_p2p.env import GymEnv, OutOfTable


def play(env: GymEnv, prior: np.ndarray, seed: int, rng: np.random.Generator,
         trace: list[tuple[np.ndarray, int]] | None = None) -> float:
    """One game of the prior's softmax policy; returns +1, 0 or -1 and records (legal, choice)."""
    obs, _ = env.reset(seed=seed)
    done, reward = False, 0.0
    while not done:
        legal = np.flatnonzero(obs["action_mask"])
        logits = prior[legal]
        p = np.exp(logits - logits.max())
        p /= p.sum()
        k = int(rng.choice(len(legal), p=p))
        if trace is not None:
            trace.append((legal, k))
        obs, reward, done, _, _ = env.step(int(legal[k]))
    return float(reward)


def evaluate(env: GymEnv, prior: np.ndarray, games: int) -> float:
    rng = np.random.default_rng(12345)
    return sum(play(env, prior, 1_000_000 + g, rng) > 0 for g in range(games)) / games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=2500, help="training games (about 1,000 per 10 s on one core)")
    ap.add_argument("--eval", type=int, default=300, help="evaluation games for each policy")
    ap.add_argument("--lr", type=float, default=0.05)
    ns = ap.parse_args()

    env = GymEnv(opponent="random", seat=None)  # the seat is drawn at each reset, from the seed
    prior = np.zeros(env.action_space.n)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    baseline = 0.0
    for g in range(ns.games):
        trace: list[tuple[np.ndarray, int]] = []
        reward = play(env, prior, g, rng, trace)
        advantage = reward - baseline
        baseline += 0.01 * (reward - baseline)
        for legal, k in trace:  # gradient of log softmax: one-hot(choice) - probabilities
            logits = prior[legal]
            p = np.exp(logits - logits.max())
            p /= p.sum()
            grad = -p
            grad[k] += 1.0
            prior[legal] += ns.lr * advantage * grad
        if (g + 1) % 500 == 0:
            print(f"  {g + 1} games trained, running mean reward {baseline:+.2f}, {time.perf_counter() - start:.1f} s")
    trained = time.perf_counter() - start

    uniform = evaluate(env, np.zeros_like(prior), ns.eval)
    learned = evaluate(env, prior, ns.eval)
    print(f"trained on {ns.games} games in {trained:.1f} s")
    print(f"win rate against random over {ns.eval} unseen games: uniform policy {uniform:.1%}, learned prior {learned:.1%}")
    table = env.table.actions
    for i in np.argsort(prior)[::-1][:5]:
        try:
            text = format_action(table.action(int(i)))
        except OutOfTable:  # a Jester index: its cells come from the position
            text = "a Jester choice"
        print(f"  most preferred: index {i} = {text}, weight {prior[i]:+.2f}")


if __name__ == "__main__":
    main()
