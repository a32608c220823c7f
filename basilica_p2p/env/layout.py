"""How an observation is handed to learning code: three layouts of the same two arrays.

* ``dict`` (the default): ``{"observation": float32[2540], "action_mask": int8[4444]}``,
  PettingZoo's convention, which sb3-contrib's ``MaskablePPO`` and OpenSpiel-style
  code read as it is.
* ``rllib``: ``{"observations": float32[2540], "action_mask": float32[4444]}``, the keys
  and types RLlib's action-masking module (``ActionMaskingTorchRLModule``) expects.
* ``flat``: the observation vector alone, a ``Box``, for wrappers that take no
  ``Dict`` (SuperSuit's ``flatten``, ``dtype``, ``normalize_obs``; Gymnasium's own);
  the mask is then in ``info["action_mask"]`` (both environments) and in the
  Gymnasium environment's ``action_masks()``.
"""

from __future__ import annotations

from enum import Enum

import numpy as np
from gymnasium import spaces

from ._core import Table

OBS_BOUND = 10.0  # every encoded value lies in [-10, 10] (scores are scaled by 50)


class Layout(Enum):
    DICT = "dict"
    RLLIB = "rllib"
    FLAT = "flat"

    @classmethod
    def of(cls, value: Layout | str) -> Layout:
        """The layout named ``value``; ValueError, naming the three, for any other."""
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"obs_layout {value!r} is not one of {', '.join(repr(x.value) for x in cls)}") from None


def observation_space(table: Table, layout: Layout = Layout.DICT) -> spaces.Space:
    vector = spaces.Box(-OBS_BOUND, OBS_BOUND, (table.encoder.size,), np.float32)
    if layout is Layout.FLAT:
        return vector
    if layout is Layout.RLLIB:
        return spaces.Dict({"observations": vector,
                            "action_mask": spaces.Box(0.0, 1.0, (table.actions.size,), np.float32)})
    return spaces.Dict({"observation": vector, "action_mask": spaces.Box(0, 1, (table.actions.size,), np.int8)})


def arrange(layout: Layout, vector: np.ndarray, mask: np.ndarray) -> np.ndarray | dict[str, np.ndarray]:
    """One observation in ``layout``; ``mask`` is a copy the caller may hand over."""
    if layout is Layout.FLAT:
        return vector
    if layout is Layout.RLLIB:
        return {"observations": vector, "action_mask": mask.astype(np.float32)}
    return {"observation": vector, "action_mask": mask}


__all__ = ["OBS_BOUND", "Layout", "arrange", "observation_space"]
