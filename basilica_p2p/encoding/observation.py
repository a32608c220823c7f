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

from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import compress
from operator import is_not, ne

import numpy as np

from ..engine import (AFTER_REDEAL, ALL_COLORS, CONFUSE_MOVE, CONFUSE_PAY, JESTER_COLORS, MAIN, PAID, SECOND_ALTAR,
                      SECOND_SCAFFOLD, WIDTH, Manifest, Observation, Order, OrderFace, VaultFace)
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
    # By (start of a face's block, face id): the indices that face sets there, with the face.
    _slots: dict[tuple[int, int], tuple[OrderFace | VaultFace, tuple[int, ...]]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    # By colours + 16 * crown, then by cell: the indices a vault tile sets in the board planes.
    _vault_cells: list[list[tuple[int, ...]]] = field(default_factory=list, init=False, repr=False, compare=False)
    _seen: dict[int, int] = field(default_factory=dict, init=False, repr=False, compare=False)  # tile: index
    # Each player's last observation and its vector: what the next encoding compares with.
    _seats: dict[int, _Seat] = field(default_factory=dict, init=False, repr=False, compare=False)

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
        cells = self.rows * WIDTH
        for code in range(32):
            planes = (*_BITS[code % 16], *((4,) if code >= 16 else ()))
            self._vault_cells.append([tuple(k * cells + c for k in planes) for c in range(cells)])
        seen = self._blocks["tiles_seen_vault_up"][0]
        self._seen.update((t, seen + i) for t, i in self._tile_index.items())

    @property
    def size(self) -> int:
        return self._blocks["_end"][0]

    def layout(self) -> list[tuple[str, int, tuple[int, ...]]]:
        """The blocks of the vector as (name, offset, shape), in order."""
        return [(n, s, shape) for n, (s, shape) in self._blocks.items() if n != "_end"]

    def encode(self, obs: Observation) -> np.ndarray:
        """The observation as a new float32 vector of :attr:`size` values."""
        return self._update(obs).view.copy()

    def current(self, player: int) -> np.ndarray:
        """The vector of the last observation of ``player`` encoded (read-only: it is rewritten by the
        next encoding of that player); KeyError if there was none."""
        return self._seats[player].view

    def encode_into(self, obs: Observation, out: np.ndarray) -> None:
        """Write the encoding of ``obs`` into ``out`` (all of it: ``out`` need not be zeroed)."""
        out[:] = self._update(obs).view

    def _update(self, obs: Observation) -> _Seat:
        """Bring the vector kept for ``obs.player`` up to ``obs``.

        An RL loop encodes a player's view after every step, and a step changes
        a few facts: so each player's last observation and vector are kept, and
        only what differs is rewritten: a part whose facts compare unequal, a
        cell whose vault face is another object, the tiles newly seen or no
        longer seen, the orders discarded since.  Each part is a function of
        the facts compared for it and nothing else; tests/test_observation_fast.py
        checks the result against a plain encoding over whole games.  The vector
        is an ``array('f')`` written value by value, which costs less than
        numpy's per-call overhead on a few dozen values.  Not for several
        threads at once.
        """
        me = obs.player
        seat = self._seats.get(me)
        if seat is None:
            seat = self._seats[me] = _Seat(self.size, 2 * len(ORDERS))
        try:
            self._rewrite(obs, seat)
        except BaseException:
            del self._seats[me]  # half rewritten: start afresh next time
            raise
        seat.obs = obs
        return seat

    def _rewrite(self, obs: Observation, seat: _Seat) -> None:
        me = obs.player
        old = seat.obs
        a = seat.values
        clear = seat.clear
        ones: list[int] = []  # indices set to 1, written at the end (after every clearing)
        cells = self.rows * WIDTH
        seen = self._seen
        # Tiles seen vault face up: each place that shows one (a cell, a market space, the discard
        # pile) counts it; a tile's value is 1 while its count is above 0.  ``came`` and ``gone``
        # are this step's counts up and down, applied at the end.
        came: list[int] = []
        gone: list[int] = []
        if old is None or obs.vaults != old.vaults:
            # Cell by cell: a face object stands for its value, so the same object is the same bits.
            now = dict(obs.vaults)
            before = seat.vault_faces
            table = self._vault_cells
            had = before.get
            new = [(c, f) for c, f in obs.vaults if had(c) is not f]
            # Tiles are only ever added to the cathedral in most games: when every cell it had
            # keeps its face, the cells unchanged are all of ``before``, and nothing went.
            if len(before) != len(now) - len(new):
                for c, f in before.items():
                    if now.get(c) is not f:
                        gone.append(seen[f.tile])
                        if c < cells:
                            for i in table[f.colors + 16 * f.crown][c]:
                                a[i] = 0.0
            for c, f in new:
                came.append(seen[f.tile])
                if c < cells:  # cells beyond the table's rows are left out (docs/rl.md, "Limits")
                    ones.extend(table[f.colors + 16 * f.crown][c])
            seat.vault_faces = now
        if old is None or obs.scaffold != old.scaffold or obs.glass != old.glass or obs.altars != old.altars:
            clear(5 * cells, 8 * cells)
            for plane, group in ((5, obs.scaffold), (6, obs.glass), (7, obs.altars)):
                base = plane * cells
                ones.extend([base + c for c in group if c < cells])
        if old is None or obs.builders != old.builders:
            clear(8 * cells, 18 * cells)
            for c, p, r in obs.builders:
                if c < cells:
                    plane = 8 if p == me else 13
                    ones.append(plane * cells + c)
                    if r:
                        ones.append((plane + r) * cells + c)
        if old is None or obs.last_placed != old.last_placed or obs.my_jester_choice != old.my_jester_choice:
            clear(18 * cells, 23 * cells)
            if 0 <= obs.last_placed < cells:
                ones.append(18 * cells + obs.last_placed)
            for c, col in obs.my_jester_choice or ():
                if c < cells:
                    ones.append((19 + ALL_COLORS.index(col)) * cells + c)

        # Faces slot by slot, by identity (comparing unequal faces would call the dataclass's __eq__).
        blocks = self._blocks
        none3 = (None, None, None)
        # Most steps change no face of a block: that is found in C before any Python loop runs.
        before_market = old.market if old else none3
        if any(map(is_not, obs.market, before_market)):
            self._faces(a, blocks["market"][0], VAULT, obs.market, before_market)
            for shown, was in zip(obs.market, before_market):  # a space's tile counts while it shows there
                if shown is not was:
                    if was is not None:
                        gone.append(seen[was.tile])
                    if shown is not None:
                        came.append(seen[shown.tile])
        before_orders = old.orders if old else none3
        if any(map(is_not, obs.orders, before_orders)):
            self._faces(a, blocks["orders"][0], FACE, obs.orders, before_orders)
        if old is None or obs.stack_top is not old.stack_top:
            self._faces(a, blocks["stack_top"][0], FACE, (obs.stack_top,), (old.stack_top if old else None,))
        if old is None or obs.in_hand != old.in_hand:
            start = blocks["in_hand"][0]
            clear(start, start + 4 + FACE)
            if obs.in_hand is None:
                ones.append(start)
            else:
                ones.append(start + obs.in_hand[0])
                ones.extend(self._slot(start + 4, obs.in_hand[1]))

        discard = obs.discard
        if old is None or discard != old.discard:
            earlier = old.discard if old is not None else ()
            done = len(earlier)
            if not (done <= len(discard) and discard[:done] == earlier):
                done = 0  # not the last pile with tiles added (a reshuffle emptied it): count afresh
                gone.extend(seat.discard_seen)
                seat.discard_seen = []
                seat.counts = [0] * len(seat.counts)
            counts = seat.counts
            pos = _ORDER_POS
            for face in discard[done:]:
                if isinstance(face, VaultFace):
                    seat.discard_seen.append(seen[face.tile])
                    came.append(seen[face.tile])
                else:
                    counts[pos[face.order] + face.paid] += 1
            start = blocks["discard_order_faces"][0]
            for k, n in enumerate(counts):
                a[start + k] = _TENTHS[n]
        if came or gone:
            count = seat.seen
            for i in came:
                count[i] = count.get(i, 0) + 1
            for i in gone:
                count[i] -= 1
            for i in {*came, *gone}:  # a value is written once, from the count it ends with
                if count[i] > 0:
                    ones.append(i)
                else:
                    del count[i]
                    a[i] = 0.0

        # The pending decision and the scalars change at almost every step: always rewritten.
        start = blocks["pending"][0]
        clear(start, blocks["scalars"][0])
        pend = obs.pending
        if pend is not None:
            ones.append(start + PENDING_KINDS.index(pend.kind))
            if pend.order is not None:
                ones.append(start + len(PENDING_KINDS) + ORDERS.index(pend.order))
            ones.append(start + len(PENDING_KINDS) + len(ORDERS) + pend.rank)
            if pend.paid:
                ones.append(start + len(PENDING_KINDS) + len(ORDERS) + 5)
        ones.append(start + len(PENDING_KINDS) + len(ORDERS) + 6 + obs.scoring_space)
        if len(ones) > 24:
            seat.view.put(ones, 1.0)  # numpy's fixed cost pays off for a whole part of the board
        else:
            for i in ones:
                a[i] = 1.0

        them = 1 - me
        spaces = obs.crown_spaces  # strictly increasing (the manifest's rule): the next is found by bisection
        k = bisect_right(spaces, obs.pawn)
        values = (
            obs.ruleset == "portal2022", obs.festum, obs.festum_removal, obs.to_move == me, obs.active == me,
            obs.over, obs.actions_taken == 0, obs.actions_taken == 1, obs.actions_taken == 2,
            obs.scores[me], obs.scores[them], obs.scores[me] - obs.scores[them], obs.coins[me], obs.coins[them],
            obs.supply[me], obs.supply[them], obs.tokens[me], obs.tokens[them], obs.altar_supply,
            obs.stack_size, obs.stack_size == 0, obs.reshuffles > 0, obs.out_count,
            obs.pawn, spaces[k] - obs.pawn if k < len(spaces) else 0, obs.scorings, obs.turn, len(obs.discard),
            obs.my_jester_choice is not None, obs.other_jester_committed,
        )
        # Only the scalars that changed, divided in double and rounded to float32 as the array
        # stores them: the same value as numpy's float32 division of the two float32 operands
        # (exact small integers), since a double carries more than twice float32's precision.
        at = blocks["scalars"][0]
        last = seat.scalars
        if last is None:
            for i, v in enumerate(values):
                a[at + i] = v / _SCALE_LIST[i]
        elif values != last:
            # The changed positions found in C (map and compress); a handful change in a step.
            for i in compress(_SCALAR_POSITIONS, map(ne, values, last)):
                a[at + i] = values[i] / _SCALE_LIST[i]
        seat.scalars = values

    def _faces(self, a: array, start: int, width: int, faces: tuple[OrderFace | VaultFace | None, ...],
               before: tuple[OrderFace | VaultFace | None, ...]) -> None:
        """Rewrite the slots of a block of faces (``width`` values each) whose face is another
        object than ``before``'s."""
        slots = self._slots
        for k, f in enumerate(faces):
            g = before[k]
            if f is not g:
                at = start + k * width
                if g is not None:
                    hit = slots.get((at, id(g)))  # _slot() inlined: this runs several times a step
                    for i in hit[1] if hit is not None and hit[0] is g else self._slot(at, g):
                        a[i] = 0.0
                if f is not None:
                    hit = slots.get((at, id(f)))
                    for i in hit[1] if hit is not None and hit[0] is f else self._slot(at, f):
                        a[i] = 1.0

    def _slot(self, at: int, f: OrderFace | VaultFace) -> tuple[int, ...]:
        """The indices ``f`` sets when its block of values begins at ``at``."""
        # By identity: hashing a face calls the dataclass's Python __hash__, and a seeded game
        # shows the same face objects again and again.  The entry keeps the face alive, so its
        # id cannot be reused by another object while it is there.
        hit = self._slots.get((at, id(f)))
        if hit is not None and hit[0] is f:
            return hit[1]
        if len(self._slots) >= 8192:  # a hidden game makes new face objects at every observe()
            self._slots.clear()
        bits = tuple([at + i for i in self._face(f)])
        self._slots[at, id(f)] = (f, bits)
        return bits

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
_SCALE_LIST = [_SCALE.get(n, 1) for n in SCALARS]
_SCALAR_POSITIONS = range(len(SCALARS))
_ORDER_POS = {o: 2 * i for i, o in enumerate(ORDERS)}  # an order's first value in discard_order_faces


def _tenths(n: int) -> np.ndarray:
    """``_tenths(n)[k]``: 0.1 added k times to a float32 zero, rounding as numpy does at each step,
    so that a count turns into exactly the value adding 0.1 per discarded order gives."""
    acc = np.zeros(1, np.float32)
    out = [acc[0]]
    for _ in range(n):
        acc[0] += 0.1
        out.append(acc[0])
    return np.array(out, np.float32)


_TENTHS = _tenths(200).tolist()  # more than any manifest's tiles; exact float32 values as Python floats


class _Seat:
    """One player's last encoded observation, its vector (zeros before the first), and what
    the vector was built from: the vault face of each cell, how many places show each tile
    seen (and the tiles of the discard pile), and the count of discarded
    orders by order and paid mark."""

    __slots__ = ("obs", "values", "view", "_mv", "_zeros", "vault_faces", "seen", "discard_seen",
                 "counts", "scalars")

    def __init__(self, size: int, order_kinds: int) -> None:
        self.obs: Observation | None = None
        self.values = array("f", bytes(4 * size))
        self.view = np.frombuffer(self.values, np.float32)  # numpy's view of the same memory
        self._mv = memoryview(self.values)
        self._zeros = memoryview(array("f", bytes(4 * size)))
        self.vault_faces: dict[int, VaultFace] = {}
        self.seen: dict[int, int] = {}  # tile-seen index: how many places show that tile now
        self.discard_seen: list[int] = []
        self.counts = [0] * order_kinds
        self.scalars: tuple[float | int | bool, ...] | None = None  # the scalars' values before scaling

    def __reduce__(self) -> tuple[type[_Seat], tuple[int, int]]:
        # Memoryviews cannot be pickled, and a cache need not be: a copied environment
        # (deepcopy, pickle, Ray) gets an empty seat, whose next encoding starts from zeros.
        return _Seat, (len(self.values), len(self.counts))

    def clear(self, start: int, stop: int) -> None:
        """Zero values ``start:stop`` (a part about to be rewritten); memoryviews copy without a temporary."""
        self._mv[start:stop] = self._zeros[:stop - start]


__all__ = ["FACE", "ORDERS", "PENDING_KINDS", "PLANES", "SCALARS", "VAULT", "ObservationEncoder"]
