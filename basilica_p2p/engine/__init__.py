"""The pure rules engine of Basilica.

No I/O, no clock, no global state; chance only from the seed.  Everything
a caller needs is re-exported here::

    from basilica_p2p.engine import Game, Options, default_manifest
    g = Game.new(default_manifest(), Options(), seed)
    while not g.over:
        g.apply(g.legal_actions()[0])
"""

from .actions import Action, format_action, parse_action
from .cells import format_cell, parse_cell
from .components import Order, Ruleset
from .errors import EngineError, IllegalAction, ManifestError, NotationError, PositionError
from .game import (END_STACK, END_LAST_SCORING, REVEAL, Event, EventKind, Game, Options, Pending, PendingKind, ScoredBoard,
                   describe_pending)
from .hidden import Level, Position, Reveal, RevealError
from .manifest import FaceClass, Manifest, TileSpec, default_manifest, parse_manifest, reconstruct_default
from .observation import Observation, OrderFace, VaultFace, determinize, observe
from .scoring import Area, ScoringResult, find_areas, score_cathedral

__all__ = [
    "Action", "Area", "END_STACK", "END_LAST_SCORING", "EngineError", "Event", "EventKind", "FaceClass", "Game",
    "IllegalAction",
    "Level", "Manifest", "ManifestError", "NotationError", "Observation", "Options", "Order",
    "OrderFace", "Pending", "PendingKind", "Position", "PositionError", "REVEAL", "Reveal", "RevealError", "Ruleset", "ScoredBoard", "ScoringResult", "TileSpec", "VaultFace", "default_manifest", "describe_pending",
    "determinize", "find_areas", "format_action", "format_cell", "observe", "parse_action", "parse_cell",
    "parse_manifest", "reconstruct_default", "score_cathedral",
]
