"""Learning environments for Basilica (the ``[rl]`` extra): PettingZoo, Gymnasium, OpenSpiel.

    from basilica_p2p.env import aec_env, GymEnv, ActionTable
    e = aec_env(festum=True)                  # PettingZoo AEC, both seats
    g = GymEnv(opponent="greedy")             # Gymnasium, one seat against a bot
    g = gymnasium.make("basilica-v0", opponent="greedy")   # the same, registered on import
    import basilica_p2p.env.spiel             # registers "python_basilica" with OpenSpiel

The action index space and the observation encoding (basilica_p2p.encoding,
re-exported here) are documented in docs/notation.md; how to use the
environments in docs/rl.md.  Nothing in
the engine imports this package.
"""

from __future__ import annotations

try:
    import gymnasium
    import numpy  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as _e:  # pragma: no cover - exercised in a venv without the extra
    raise ImportError(
        f"basilica_p2p.env needs the [rl] extra ({_e.name} is missing): pip install 'basilica-p2p[rl]'"
    ) from None

from ..encoding import ActionTable, ObservationEncoder, OutOfTable, jester_cells  # noqa: E402
from .aec import env as aec_env  # noqa: E402
from .aec import raw_env  # noqa: E402
from .gym import GymEnv  # noqa: E402
from .layout import Layout  # noqa: E402

GYM_ID = "basilica-v0"
if GYM_ID not in gymnasium.registry:  # importing twice (or under two names) registers once
    gymnasium.register(id=GYM_ID, entry_point="basilica_p2p.env.gym:GymEnv")

__all__ = ["GYM_ID", "ActionTable", "GymEnv", "Layout", "ObservationEncoder", "OutOfTable", "aec_env", "jester_cells",
           "raw_env"]
