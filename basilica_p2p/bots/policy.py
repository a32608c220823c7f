"""A trained policy at the table: any function from (observation, mask) to an action index is a bot.

Learning code sees the game as :mod:`basilica_p2p.env` encodes it: a float32
observation vector (``ObservationEncoder``) and a 0/1 mask over the fixed
action indices (``ActionTable``).  :class:`PolicyBot` turns such a policy
into a bot, the kind every table takes (``match``, ``tournament`` locally and
on Ray, ``GymEnv(opponent=...)``, ``play --vs``): it encodes the bot's own
observation, builds the mask of the legal actions, asks the policy, and plays
the action of the index it answers.  An index that is not legal now is the
bot's failure (a forfeit, as for any bot that answers an illegal action).

Two names reach it from the command line (docs/bots.md):

* ``policy:PATH``: a model saved by sb3-contrib's ``MaskablePPO``
  (``model.save(PATH)``), played deterministically (its most likely legal
  action), if sb3-contrib is installed;
* ``module:function``: a function ``policy(observation, mask) -> int``
  (``make_bot`` tells it from a bot class: a class is a bot, any other
  callable a policy).

It needs the ``[rl]`` extra (numpy and the encoding); the engine never imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..engine import Action, Manifest, Observation
from .base import BotSpecError

if TYPE_CHECKING:
    import numpy as np

# (observation: float32[n], mask: int8[m]) -> an index where the mask is 1
Policy = Callable[["np.ndarray", "np.ndarray"], Any]
POLICY_PREFIX = "policy:"
SB3_HINT = "pip install 'basilica-p2p[sb3]'"


def _rl_modules():
    try:
        import numpy as np

        from ..encoding import ActionTable, ObservationEncoder
    except ImportError as e:
        raise BotSpecError(f"a policy bot needs the [rl] extra ({e.name} is missing): "
                           "pip install 'basilica-p2p[rl]'") from None
    return np, ActionTable, ObservationEncoder


class PolicyBot:
    """``policy`` playing one seat: it sees only the bot's observation and the legal actions."""

    def __init__(self, policy: Policy, manifest: Manifest, name: str = "policy") -> None:
        np, action_table, encoder = _rl_modules()
        self._np = np
        self._policy = policy
        self._table = action_table(jesters=max(1, manifest.promotion_tokens))
        self._encoder = encoder(manifest)
        self.name = name

    @property
    def observation_size(self) -> int:
        return int(self._encoder.size)

    @property
    def action_count(self) -> int:
        return int(self._table.size)

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        indices, actions = self._table.indices(legal)
        if not indices:  # every legal action beyond the table's rows: docs/rl.md, "Limits"
            raise ValueError("no legal action has an index in the action table")
        mask = self._np.zeros(self._table.size, self._np.int8)
        mask[indices] = 1
        answer = self._policy(self._encoder.encode(obs), mask)
        chosen = dict(zip(indices, actions)).get(int(answer))
        if chosen is None:
            raise ValueError(f"the policy answered index {int(answer)}, which is not a legal action now")
        return chosen


def sb3_policy(path: Path) -> tuple[Policy, tuple[int, int]]:
    """The policy of a ``MaskablePPO`` model saved at ``path`` (its most likely legal action), with
    the observation and action sizes it was trained on; BotSpecError if it cannot be loaded."""
    try:
        from gymnasium import spaces
        from sb3_contrib import MaskablePPO
    except ImportError as e:
        raise BotSpecError(f"policy:PATH needs sb3-contrib ({e.name} is missing): {SB3_HINT}") from None
    if not path.is_file():
        raise BotSpecError(f"policy:{path}: no such file (a model saved by MaskablePPO.save)")
    try:
        model = MaskablePPO.load(path, device="cpu")
    except Exception as e:  # a zip of anything, or of another algorithm: any of many errors
        raise BotSpecError(f"policy:{path}: not a MaskablePPO model ({type(e).__name__}: {e})") from None
    space = model.observation_space
    keys: tuple[str, ...] = ()
    vector = space
    if isinstance(space, spaces.Dict):
        keys = tuple(space.spaces)
        vector_key = next((k for k in ("observation", "observations") if k in keys), None)
        if vector_key is None:
            raise BotSpecError(f"policy:{path}: its observations have keys {', '.join(keys)}, not this "
                               "package's (observation, action_mask)")
        vector = space[vector_key]
    assert vector.shape is not None  # a Box, as MaskablePPO's observations are
    size = int(vector.shape[0])
    dtype = space["action_mask"].dtype if isinstance(space, spaces.Dict) and "action_mask" in keys else None
    actions = model.action_space
    assert isinstance(actions, spaces.Discrete)  # this package's actions are, as a model trained on them has

    def policy(observation: np.ndarray, mask: np.ndarray) -> int:
        given: Any = {vector_key: observation, "action_mask": mask.astype(dtype)} if keys else observation
        action, _ = model.predict(given, action_masks=mask.astype(bool), deterministic=True)
        return int(action)

    return policy, (size, int(actions.n))


def policy_from_spec(spec: str, manifest: Manifest) -> PolicyBot:
    """``policy:PATH`` as a bot; BotSpecError, in one line, if the model cannot play this game."""
    path = Path(spec[len(POLICY_PREFIX):].strip()).expanduser()
    policy, sizes = sb3_policy(path)
    bot = PolicyBot(policy, manifest, name=f"policy-{path.stem}")
    if sizes != (bot.observation_size, bot.action_count):
        raise BotSpecError(f"policy:{path} was trained on {sizes[0]} observation values and {sizes[1]} actions; "
                           f"games with this manifest have {bot.observation_size} and {bot.action_count}")
    return bot


__all__ = ["POLICY_PREFIX", "Policy", "PolicyBot", "policy_from_spec", "sb3_policy"]
