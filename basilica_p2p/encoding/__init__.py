"""The game as numbers, for learning code: one fixed action index space and one observation vector.

    from basilica_p2p.encoding import ActionTable, ObservationEncoder
    table = ActionTable()                        # every action the notation can write, as an int
    i = table.index(action); table.action(i)     # and back (a Jester index takes the Jesters' cells)
    vector = ObservationEncoder(manifest).encode(observation)   # float32, numpy

Both are built from the engine's per-player observation only, so they hold no
hidden fact; docs/notation.md ("Action indices and observation encoding") gives
the layout.  The learning environments (basilica_p2p.env, which re-exports these)
and the policy bot (bots/policy.py) both read the game through here, and neither
imports the other for it.  The observation vector needs numpy (the ``[rl]``
extra); the action table is plain Python.
"""

from .actions import ROWS, ActionTable, OutOfTable, jester_cells
from .observation import ObservationEncoder

__all__ = ["ROWS", "ActionTable", "ObservationEncoder", "OutOfTable", "jester_cells"]
