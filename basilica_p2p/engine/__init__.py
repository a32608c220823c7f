"""The pure rules engine of Basilica.

No I/O, no clock, no global state; chance only from the seed.  Everything
a caller needs is re-exported here (and the action kinds are read as a
namespace: ``from basilica_p2p.engine import actions as A``, ``A.VAULT``)::

    from basilica_p2p.engine import Game, Options, default_manifest
    g = Game.new(default_manifest(), Options(), seed)
    while not g.over:
        g.apply(g.legal_actions()[0])
"""

from .actions import Action, format_action, parse_action
from .cells import COLUMNS, WIDTH, cell, cell_sort_key, format_cell, neighbours, parse_cell
from .components import (ALL_COLORS, ARCHITECT, COLOR_LETTER, COLOR_NAME, JESTER, LETTER_COLOR, MASON, NAME_RANK,
                         NO_RANK, RANK_LETTER, RANK_NAME, STRONGMAN, Order, Ruleset, color_count, colors_of,
                         format_colors, parse_colors)
from .errors import EngineError, IllegalAction, ManifestError, NotationError, PositionError
from .game import (AFTER_REDEAL, CONFUSE_MOVE, CONFUSE_PAY, END_LAST_SCORING, END_STACK, JESTER_COLORS, MAIN, PAID,
                   REVEAL, SECOND_ALTAR, SECOND_SCAFFOLD, Event, EventKind, Game, Options, Pending, PendingKind, ScoredBoard, describe_pending)
from .hidden import Level, Position, Reveal, RevealError
from .manifest import FaceClass, Manifest, TileSpec, default_manifest, parse_manifest, reconstruct_default
from .observation import Observation, OrderFace, VaultFace, determinize, observe
from .rng import first_player
from .scoring import BY_STRONGMAN, Area, ScoringResult, find_areas, score_cathedral, totals

__all__ = [
    "AFTER_REDEAL", "ALL_COLORS", "ARCHITECT", "BY_STRONGMAN", "COLOR_LETTER", "COLOR_NAME", "COLUMNS", "CONFUSE_MOVE",
    "CONFUSE_PAY", "END_LAST_SCORING", "END_STACK", "JESTER", "JESTER_COLORS", "LETTER_COLOR", "MAIN", "MASON",
    "NAME_RANK", "NO_RANK", "PAID", "RANK_LETTER", "RANK_NAME", "REVEAL", "SECOND_ALTAR", "SECOND_SCAFFOLD",
    "STRONGMAN", "WIDTH", "Action", "Area", "EngineError", "Event", "EventKind", "FaceClass", "Game", "IllegalAction", "Level",
    "Manifest", "ManifestError", "NotationError", "Observation", "Options", "Order", "OrderFace", "Pending", "PendingKind",
    "Position", "PositionError", "Reveal", "RevealError", "Ruleset", "ScoredBoard", "ScoringResult", "TileSpec",
    "VaultFace", "cell", "cell_sort_key", "color_count", "colors_of", "default_manifest", "describe_pending",
    "determinize", "find_areas", "first_player", "format_action", "format_cell", "format_colors", "neighbours",
    "observe", "parse_action", "parse_cell", "parse_colors", "parse_manifest", "reconstruct_default",
    "score_cathedral", "totals",
]
