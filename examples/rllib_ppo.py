"""RLlib's PPO on Basilica with no adapter: the "rllib" observation layout is what RLlib's own
action-masking module reads, and the environment is found by its Gymnasium id.

The learner plays against the ``random`` bot (any name ``make_bot`` knows, ``policy:PATH``
included).  ``ActionMaskingTorchRLModule`` ships with RLlib (its examples package): PPO's
default network, with the logits of illegal actions set to -inf, so only legal actions are
ever sampled.

    pip install -e '.[rllib]'
    python examples/rllib_ppo.py [--iterations 10] [--batch 2000] [--runners 1]

Ray's token authentication (Ray 2.5x) writes ``~/.ray/auth_token`` on a first ``ray.init()``
unless told otherwise; this script gives its throwaway local Ray a token of its own instead.
"""

from __future__ import annotations

import argparse
import os
import secrets


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iterations", type=int, default=10, help="PPO training iterations")
    ap.add_argument("--batch", type=int, default=2000, help="environment steps per iteration")
    ap.add_argument("--runners", type=int, default=0, help="env runner processes (0: sample in this process)")
    ap.add_argument("--opponent", default="random")
    ns = ap.parse_args(argv)
    os.environ.setdefault("RAY_AUTH_MODE", "token")
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    config = (
        PPOConfig()
        # "module:id": Gymnasium imports basilica_p2p.env (which registers basilica-v0) in every process.
        .environment("basilica_p2p.env:basilica-v0", env_config={"opponent": ns.opponent, "obs_layout": "rllib"})
        .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                               model_config={"head_fcnet_hiddens": [64, 64]}))
        .env_runners(num_env_runners=ns.runners)
        .training(train_batch_size_per_learner=ns.batch, minibatch_size=min(ns.batch, 500), num_epochs=2)
    )
    ray.init(num_cpus=max(1, ns.runners + 1), include_dashboard=False, log_to_driver=False)
    try:
        algo = config.build_algo()
        for i in range(1, ns.iterations + 1):
            result = algo.train()
            runners = result["env_runners"]
            print(f"iteration {i}: {runners['num_env_steps_sampled_lifetime']} steps, "
                  f"{runners.get('num_episodes_lifetime', 0)} games, "
                  f"mean return {runners.get('episode_return_mean', float('nan')):+.2f}")
        algo.stop()
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
