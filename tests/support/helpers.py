"""Test helpers: build exact game situations, and an independent reference
implementation of the seed stream (written from the protocol description in
basilica_p2p/engine/rng.py, not by calling it) to derive expected shuffles.

Cells in the helpers are written as text (``"a1"``); tiles are chosen by
their spec through :class:`Tiles`, so a test reads like a diagram.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Iterator

from basilica_p2p.engine import Game, Options, Order, Ruleset, reconstruct_default
from basilica_p2p.engine.components import (
    ARCHITECT,
    BLUE,
    GREEN,
    JESTER,
    MASON,
    NO_RANK,
    RED,
    STRONGMAN,
    YELLOW,
)
from basilica_p2p.engine.game import MAIN, Pending
from basilica_p2p.engine.manifest import Manifest, TileSpec

SEED = bytes(range(32))
OTHER_SEED = bytes(range(100, 132))

# Scenarios are built on a fixed manifest with few crowns, so that they do
# not depend on the calibrated crown count of the default one (D4) and
# enough uncrowned tiles exist to place without setting off a scoring.
SCENARIO_MANIFEST = reconstruct_default(36, name="test scenarios")

LETTER = {"Y": YELLOW, "B": BLUE, "R": RED, "G": GREEN}
RANK = {"-": NO_RANK, "A": ARCHITECT, "M": MASON, "S": STRONGMAN, "J": JESTER}

PORTAL = Options(Ruleset.PORTAL2022)
CLASSIC = Options(Ruleset.CLASSIC)
FESTUM = Options(Ruleset.PORTAL2022, festum=True)
FESTUM_REMOVAL = Options(Ruleset.PORTAL2022, festum=True, festum_removal=True)


def C(name: str) -> int:
    """Cell index of a cell name: column a-e, row 1..; (row-1)*5 + col."""
    col = "abcde".index(name[0])
    row = int(name[1:])
    return (row - 1) * 5 + col


def colors_mask(text: str) -> int:
    mask = 0
    for p in text.split("/"):
        mask |= LETTER[p]
    return mask


class Tiles:
    """Hands out distinct tile ids of a manifest, chosen by their spec."""

    def __init__(self, manifest: Manifest | None = None, festum: bool = False) -> None:
        self.manifest = manifest or SCENARIO_MANIFEST
        tiles = list(self.manifest.tiles) + (list(self.manifest.festum_tiles) if festum else [])
        self.specs: dict[int, TileSpec] = {t.id: t for t in tiles}
        self.used: set[int] = set()

    def take(self, colors: str | None = None, order: Order | None = None, crown: bool | None = None,
             wild: bool | None = None, paid: bool | None = None) -> int:
        """The lowest unused id with the given colours ("Y", "Y/B"), order, crown..."""
        # With no crown wish, crowned tiles go first: uncrowned ones are scarce
        # and needed for the market (placing a crowned tile moves the pawn).
        order_ids = sorted(self.specs, key=lambda t: (crown is None and not self.specs[t].crown, t))
        for tid in order_ids:
            if tid in self.used:
                continue
            s = self.specs[tid]
            if colors is not None and s.colors != colors_mask(colors):
                continue
            if order is not None and s.order is not order:
                continue
            if crown is not None and s.crown != crown:
                continue
            if wild is not None and s.wild != wild:
                continue
            if paid is not None and s.paid != paid:
                continue
            self.used.add(tid)
            return tid
        raise LookupError(f"no unused tile with colors={colors} order={order} crown={crown} wild={wild}")

    def plain(self) -> int:
        """A single-colour tile without a crown: placing it sets nothing off."""
        return self.take(crown=False, wild=False)


def build(
    tiles: Tiles | None = None,
    *,
    options: Options = PORTAL,
    seed: bytes = SEED,
    vaults: dict[str, int] | None = None,
    builders: dict[str, tuple[int, str]] | None = None,
    glass: Iterable[str] = (),
    altars: Iterable[str] = (),
    scaffold: Iterable[str] = (),
    orders: list[int] | None = None,
    market: list[int] | None = None,
    stack: list[int] | None = None,  # top first
    discard: list[int] | None = None,
    discard_up: Iterable[int] = (),
    rest: str = "stack",  # where unused tiles go: "stack" (below `stack`), "discard" or "out"
    coins: tuple[int, int] = (1, 1),
    supply: tuple[int, int] | None = None,
    tokens: tuple[int, int] | None = None,
    altar_supply: int | None = None,
    pawn: int = 0,
    scorings: int = 0,
    scores: tuple[int, int] = (0, 0),
    active: int = 0,
    actions: int = 0,
    last_placed: str | None = None,
    reshuffles: int = 0,
) -> Game:
    """A game in exactly the situation described (every tile in exactly one place)."""
    if tiles is None:
        tiles = Tiles(festum=options.festum)
    m = tiles.manifest
    g = Game.new(m, options, seed)
    all_ids = set(g.specs)
    vaults = dict(vaults or {})
    builders = dict(builders or {})
    if orders is None:
        orders = [tiles.take(order=Order.SCAFFOLDING) for _ in range(3)]
    if market is None:
        market = [tiles.plain() for _ in range(3)]
    stack = list(stack or [])
    discard = list(discard or [])
    placed = list(vaults.values()) + list(orders) + list(market) + stack + discard
    assert len(placed) == len(set(placed)), "a tile is used twice in the scenario"
    assert set(placed) <= all_ids, "a tile is not part of this game"
    leftover = sorted(all_ids - set(placed))
    out: list[int] = []
    if rest == "stack":
        stack = stack + leftover
    elif rest == "discard":
        discard = discard + leftover
    elif rest == "out":
        out = leftover
    else:  # pragma: no cover
        raise ValueError(rest)

    g.vaults = {C(k): v for k, v in vaults.items()}
    g.builders = {C(k): (p, RANK[r]) for k, (p, r) in builders.items()}
    g.glass = {C(k) for k in glass}
    g.altars = {C(k) for k in altars}
    g.scaffold = {C(k) for k in scaffold}
    g.orders = list(orders)
    g.market = list(market)
    g.stack = stack[::-1]  # internally the top is the end of the list
    g.discard = discard
    g.discard_up = set(discard_up)
    g.out = sorted(out)
    g.in_hand = None
    g.reshuffles = reshuffles
    g.pawn = pawn
    g.scorings = scorings
    g.scores = list(scores)
    g.coins = list(coins)
    on_board = [sum(1 for p, _ in builders.values() if p == q) for q in (0, 1)]
    ranked = [sum(1 for p, r in builders.values() if p == q and r != "-") for q in (0, 1)]
    g.supply = list(supply) if supply is not None else [m.builders - on_board[q] for q in (0, 1)]
    g.tokens = list(tokens) if tokens is not None else [m.promotion_tokens - ranked[q] for q in (0, 1)]
    if altar_supply is None:
        altar_supply = (m.altar_tokens - len(g.altars)) if options.festum else 0
    g.altar_supply = altar_supply
    g.active = active
    g.actions = actions
    g.last_placed = C(last_placed) if last_placed else -1
    g.pending = Pending(MAIN, active)
    g._legal = None  # the rest (history, events, no pending scoring) is as Game.new left it
    g.tile_locations()  # every tile in exactly one place
    return g


def legal_strs(g: Game) -> list[str]:
    return [str(a) for a in g.legal_actions()]


def play(g: Game, *moves: str) -> list:
    """Apply moves written in notation; returns all events."""
    from basilica_p2p.engine import parse_action

    events = []
    for mv in moves:
        events.extend(g.apply(parse_action(mv)))
    return events


def stack_top_first(g: Game) -> list[int]:
    return g.stack[::-1]


def with_tiles(m: Manifest, tiles: Iterable[TileSpec], **changes) -> Manifest:
    return dataclasses.replace(m, tiles=tuple(tiles), **changes)


# --- independent reference of the seed stream (protocol description) --------

_DOMAIN = b"basilica-p2p/stream/v1"


def ref_u64(seed: bytes, label: bytes) -> Iterator[int]:
    """SHA-256(DOMAIN || 0x00 || label || 0x00 || seed || counter as 8 bytes big-endian),
    each digest read as four big-endian 64-bit numbers."""
    counter = 0
    while True:
        digest = hashlib.sha256(_DOMAIN + b"\x00" + label + b"\x00" + seed + counter.to_bytes(8, "big")).digest()
        for i in range(0, 32, 8):
            yield int.from_bytes(digest[i:i + 8], "big")
        counter += 1


def ref_below(stream: Iterator[int], n: int) -> int:
    """Rejection sampling: values >= 2**64 - (2**64 mod n) are thrown away."""
    limit = 2**64 - (2**64 % n)
    for x in stream:
        if x < limit:
            return x % n
    raise AssertionError("unreachable")


def ref_shuffle(items: list[int], seed: bytes, label: bytes) -> list[int]:
    """Fisher-Yates from the end: for i = len-1 .. 1 swap i with below(i+1)."""
    out = list(items)
    s = ref_u64(seed, label)
    for i in range(len(out) - 1, 0, -1):
        j = ref_below(s, i + 1)
        out[i], out[j] = out[j], out[i]
    return out
