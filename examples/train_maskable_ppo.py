"""Train sb3-contrib's MaskablePPO against the random bot, save it, and put it at the table.

The environment is used as shipped: ``GymEnv`` gives the observation and the action
mask in a ``Dict`` and ``action_masks()``, which ``MaskablePPO`` reads by itself; the
learner's seat is drawn at every reset.  The saved model is a bot named
``policy:PATH`` (basilica_p2p/bots/policy.py), for every table:

    pip install -e '.[sb3]'
    python examples/train_maskable_ppo.py --steps 50000 --out basilica-ppo.zip
    basilica tournament --bots policy:basilica-ppo.zip,random,greedy --games 20 --jobs 2
    basilica play --vs policy:basilica-ppo.zip

The same seed gives the same model on the same machine (torch's CPU kernels may
differ in their last bits from one machine to another).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from sb3_contrib import MaskablePPO

from basilica_p2p.env import GymEnv


def win_rate(model: MaskablePPO, games: int, opponent: str) -> float:
    """Wins (a shared victory counts half) of the model's most likely legal actions, on unseen games."""
    env = GymEnv(opponent=opponent)
    points = 0.0
    for g in range(games):
        obs, _ = env.reset(seed=1_000_000 + g)
        done, reward = False, 0.0
        while not done:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, reward, done, _, _ = env.step(int(action))
        points += 1.0 if reward > 0 else 0.5 if reward == 0 else 0.0
    return points / games


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=50_000, help="learner steps to train (about 6 min on one core)")
    ap.add_argument("--eval", type=int, default=200, help="games to measure the win rate on, before and after")
    ap.add_argument("--opponent", default="random", help="the bot it trains against (any name make_bot knows)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=Path("basilica-ppo.zip"), help="where the model is saved")
    ns = ap.parse_args(argv)
    torch.set_num_threads(1)  # a small network: threads cost more than they give
    env = GymEnv(opponent=ns.opponent)
    env.reset(seed=ns.seed)
    n_steps = max(64, min(2048, ns.steps))
    model = MaskablePPO("MultiInputPolicy", env, n_steps=n_steps, batch_size=min(256, n_steps), seed=ns.seed,
                        policy_kwargs={"net_arch": [128, 128]}, verbose=0, device="cpu")
    if ns.eval:
        print(f"untrained: {win_rate(model, ns.eval, ns.opponent):.1%} against {ns.opponent} ({ns.eval} games)")
    start = time.perf_counter()
    model.learn(total_timesteps=ns.steps)
    print(f"trained {ns.steps} steps in {time.perf_counter() - start:.0f} s")
    if ns.eval:
        print(f"trained: {win_rate(model, ns.eval, ns.opponent):.1%} against {ns.opponent} ({ns.eval} games)")
    model.save(ns.out)
    print(f"saved {ns.out}: play it with --bots policy:{ns.out} or --vs policy:{ns.out}")


if __name__ == "__main__":
    main()
