"""The fixed observation encoding: one player's :class:`Observation` as a float32 vector.

Built from the engine's per-player observation and nothing else, so it can
hold no hidden fact: not the stack order, not a crown the order face hides,
not the other player's secret Jester colours (RULES.md §9, D18, D24).
Everything is from the point of view of ``obs.player``: "mine" and "theirs",
never "player 1" and "player 2", so one policy can play either seat.

The layout (docs/notation.md, "Observation encoding") is a list of named
blocks; :meth:`ObservationEncoder.layout` gives their offsets and shapes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..engine import Manifest, Observation, OrderFace, VaultFace
from ..engine.cells import WIDTH
from ..engine.components import ALL_COLORS, Order
from ..engine.game import (AFTER_REDEAL, CONFUSE_MOVE, CONFUSE_PAY, JESTER_COLORS, MAIN, PAID, SECOND_ALTAR,
                           SECOND_SCAFFOLD)
from .actions import ROWS

PENDING_KINDS = (MAIN, AFTER_REDEAL, SECOND_SCAFFOLD, SECOND_ALTAR, PAID, CONFUSE_PAY, CONFUSE_MOVE, JESTER_COLORS)
ORDERS = tuple(Order)
# Board planes, each ``rows`` x 5 cells, row 1 first.
PLANES = (
    "yellow", "blue", "red", "green", "crown", "scaffold", "glass", "altar",
    "mine", "mine_architect", "mine_mason", "mine_strongman", "mine_jester",
    "theirs", "theirs_architect", "theirs_mason", "theirs_strongman", "theirs_jester",
    "last_placed", "my_jester_yellow", "my_jester_blue", "my_jester_red", "my_jester_green",
)
# An order face: order one-hot, colours, paid, crown shown and crown, present.
FACE = len(ORDERS) + 4 + 4
# A vault face: colours, crown, present.
VAULT = 4 + 2
SCALARS = (
    "portal2022", "festum", "festum_removal", "i_decide", "i_am_active", "game_over",
    "actions_taken_0", "actions_taken_1", "actions_taken_2",
    "my_score", "their_score", "score_difference", "my_coins", "their_coins", "my_supply", "their_supply",
    "my_tokens", "their_tokens", "altar_supply", "stack_size", "stack_empty", "reshuffled", "out_count",
    "pawn", "to_next_crown_space", "scorings", "turn", "discard_size",
    "my_jester_chosen", "their_jester_committed",
)
# Scales that bring counts near 0..1; values may exceed 1 (scores do).
_SCALE = {"my_score": 50, "their_score": 50, "score_difference": 50, "my_coins": 5, "their_coins": 5,
          "my_supply": 5, "their_supply": 5, "my_tokens": 4, "their_tokens": 4, "altar_supply": 4,
          "stack_size": 66, "out_count": 6, "pawn": 30, "to_next_crown_space": 10, "scorings": 3, "turn": 100,
          "discard_size": 66}


@dataclass(frozen=True)
class ObservationEncoder:
    """Encodes observations of games played with ``manifest`` (festum tiles included)."""

    manifest: Manifest
    rows: int = ROWS
    _tile_index: dict[int, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    _blocks: dict[str, tuple[int, tuple[int, ...]]] = field(default_factory=dict, init=False, repr=False,
                                                            compare=False)
    # The offsets a face sets, by face: a game shows a few dozen distinct faces many times over.
    _face_bits: dict[OrderFace | VaultFace, tuple[int, ...]] = field(default_factory=dict, init=False, repr=False,
                                                                     compare=False)

    def __post_init__(self) -> None:
        ids = sorted(t.id for t in (*self.manifest.tiles, *self.manifest.festum_tiles))
        self._tile_index.update((t, i) for i, t in enumerate(ids))
        start = 0
        for name, shape in (
            ("board", (len(PLANES), self.rows, WIDTH)),
            ("market", (3, VAULT)),
            ("orders", (3, FACE)),
            ("in_hand", (4 + FACE,)),  # space one-hot (none, 1, 2, 3), then the face
            ("stack_top", (FACE,)),
            ("tiles_seen_vault_up", (len(ids),)),  # by tile id: in the cathedral, the market or the discard
            ("discard_order_faces", (len(ORDERS), 2)),  # executed orders discarded, by order and paid mark
            ("pending", (len(PENDING_KINDS) + len(ORDERS) + 5 + 1 + 4,)),  # kind, order, rank, paid, scoring space
            ("scalars", (len(SCALARS),)),
        ):
            self._blocks[name] = (start, shape)
            start += int(np.prod(shape))
        self._blocks["_end"] = (start, ())

    @property
    def size(self) -> int:
        return self._blocks["_end"][0]

    def layout(self) -> list[tuple[str, int, tuple[int, ...]]]:
        """The blocks of the vector as (name, offset, shape), in order."""
        return [(n, s, shape) for n, (s, shape) in self._blocks.items() if n != "_end"]

    def encode(self, obs: Observation) -> np.ndarray:
        """The observation as a new float32 vector of :attr:`size` values."""
        out = np.zeros(self.size, np.float32)
        self.encode_into(obs, out)
        return out

    def encode_into(self, obs: Observation, out: np.ndarray) -> None:
        """Write the encoding of ``obs`` into ``out`` (zeroed by the caller)."""
        ones: list[int] = []  # indices set to 1, written in one numpy call at the end
        on = ones.append
        me = obs.player
        cells = self.rows * WIDTH
        last = cells  # cells beyond the table's rows are left out (docs/rl.md, "Limits")
        for c, f in obs.vaults:
            if c < last:
                for k in _BITS[f.colors]:
                    on(k * cells + c)
                if f.crown:
                    on(4 * cells + c)
        for plane, group in ((5, obs.scaffold), (6, obs.glass), (7, obs.altars)):
            base = plane * cells
            ones.extend(base + c for c in group if c < last)
        for c, p, r in obs.builders:
            if c < last:
                plane = 8 if p == me else 13
                on(plane * cells + c)
                if r:
                    on((plane + r) * cells + c)
        if 0 <= obs.last_placed < last:
            on(18 * cells + obs.last_placed)
        for c, col in obs.my_jester_choice or ():
            if c < last:
                on((19 + ALL_COLORS.index(col)) * cells + c)

        face = self._face
        start = self._blocks["market"][0]
        for k, vf in enumerate(obs.market):
            if vf is not None:
                ones.extend(start + k * VAULT + i for i in face(vf))
        start = self._blocks["orders"][0]
        for k, of in enumerate(obs.orders):
            if of is not None:
                ones.extend(start + k * FACE + i for i in face(of))
        start = self._blocks["in_hand"][0]
        if obs.in_hand is None:
            on(start)
        else:
            on(start + obs.in_hand[0])
            ones.extend(start + 4 + i for i in face(obs.in_hand[1]))
        if obs.stack_top is not None:
            start = self._blocks["stack_top"][0]
            ones.extend(start + i for i in face(obs.stack_top))
        start = self._blocks["tiles_seen_vault_up"][0]
        index = self._tile_index
        ones.extend(start + index[vf.tile] for _, vf in obs.vaults)
        ones.extend(start + index[vf.tile] for vf in obs.market if vf is not None)
        start_faces = self._blocks["discard_order_faces"][0]
        for f in obs.discard:
            if type(f) is VaultFace:
                on(start + index[f.tile])
            else:
                out[start_faces + 2 * face(f)[0] + f.paid] += 0.1

        start = self._blocks["pending"][0]
        pend = obs.pending
        if pend is not None:
            on(start + PENDING_KINDS.index(pend.kind))
            if pend.order is not None:
                on(start + len(PENDING_KINDS) + ORDERS.index(pend.order))
            on(start + len(PENDING_KINDS) + len(ORDERS) + pend.rank)
            if pend.paid:
                on(start + len(PENDING_KINDS) + len(ORDERS) + 5)
        on(start + len(PENDING_KINDS) + len(ORDERS) + 6 + obs.scoring_space)

        them = 1 - me
        nxt = [s for s in obs.crown_spaces if s > obs.pawn]
        values = (
            obs.ruleset == "portal2022", obs.festum, obs.festum_removal, obs.to_move == me, obs.active == me,
            obs.over, obs.actions_taken == 0, obs.actions_taken == 1, obs.actions_taken == 2,
            obs.scores[me], obs.scores[them], obs.scores[me] - obs.scores[them], obs.coins[me], obs.coins[them],
            obs.supply[me], obs.supply[them], obs.tokens[me], obs.tokens[them], obs.altar_supply,
            obs.stack_size, obs.stack_size == 0, obs.reshuffles > 0, obs.out_count,
            obs.pawn, (nxt[0] - obs.pawn) if nxt else 0, obs.scorings, obs.turn, len(obs.discard),
            obs.my_jester_choice is not None, obs.other_jester_committed,
        )
        start = self._blocks["scalars"][0]
        out[start:start + len(SCALARS)] = values
        out[start:start + len(SCALARS)] /= _SCALES
        out.put(ones, 1.0)

    def _face(self, f: OrderFace | VaultFace) -> tuple[int, ...]:
        """The offsets ``f`` sets within its block (for an order face, the first is the order's)."""
        bits = self._face_bits.get(f)
        if bits is None:
            if isinstance(f, VaultFace):
                bits = (*_BITS[f.colors], *((4,) if f.crown else ()), 5)
            else:
                n = len(ORDERS)
                # A crown shows on an order face only in a box that prints it there (D18).
                crown = () if f.crown is None else (n + 5, n + 6) if f.crown else (n + 5,)
                bits = (ORDERS.index(f.order), *(n + k for k in _BITS[f.colors]),
                        *((n + 4,) if f.paid else ()), *crown, n + 7)
            self._face_bits[f] = bits
        return bits


_BITS = tuple(tuple(k for k in range(4) if mask & ALL_COLORS[k]) for mask in range(16))
_SCALES = np.array([_SCALE.get(n, 1) for n in SCALARS], np.float32)

__all__ = ["FACE", "ORDERS", "PENDING_KINDS", "PLANES", "SCALARS", "VAULT", "ObservationEncoder"]
