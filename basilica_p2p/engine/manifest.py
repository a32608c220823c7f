"""The component list as data: tiles, crown spaces, supplies, the expansion.

A manifest is a JSON file (schema ``basilica-manifest/1``, documented in
protocol/MANIFEST.md).  The default one (protocol/manifest.json, shipped in
the package as basilica_p2p/data/manifest.json) is a reconstruction, D4;
a player who owns the physical game can load the list of their own copy.
Its identity is :attr:`Manifest.hash`: SHA-256 of a canonical msgpack
encoding of everything that changes play (the display name does not).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from importlib import resources
from collections.abc import Set as AbstractSet
from typing import Any

import msgpack

from .components import PAID_ORDERS, Order, color_count, format_colors, parse_colors
from .errors import ManifestError

SCHEMA = "basilica-manifest/1"
MAX_TILES = 512


@dataclass(frozen=True, slots=True)
class FaceClass:
    """What the order face of a tile shows: the tiles that look alike face down.

    The order face prints the order, the paid mark and the colours of the
    vault face (RULES.md §9), so those three make the class.  The crown is
    part of it only in a box whose order faces show it
    (``Manifest.order_faces_show_crown``); otherwise it is None, because the
    crown is exactly what the order face keeps hidden (D18).  A hidden game
    knows a tile by this value from the moment its order face is up until
    it is turned vault side up.
    """

    order: Order
    colors: int
    paid: bool
    crown: bool | None

    @property
    def wild(self) -> bool:
        # The colours are on the order face too, so "does it fit" needs no reveal.
        return self.colors & (self.colors - 1) != 0

    def to_list(self) -> list[Any]:
        return [self.order.value, self.colors, self.paid, self.crown]


@dataclass(frozen=True, slots=True)
class TileSpec:
    id: int
    colors: int  # colour bits; two bits set = a printed wild tile
    crown: bool
    order: Order
    paid: bool

    @property
    def wild(self) -> bool:
        return self.colors & (self.colors - 1) != 0

    def face_class(self, crown_shown: bool) -> FaceClass:
        """The class of this tile's order face (``crown_shown``: the manifest's flag)."""
        return FaceClass(self.order, self.colors, self.paid, self.crown if crown_shown else None)


@dataclass(frozen=True)
class Manifest:
    name: str
    crown_spaces: tuple[int, ...]
    order_faces_show_crown: bool
    builders: int
    promotion_tokens: int
    coins: int
    tiles: tuple[TileSpec, ...]
    festum_tiles: tuple[TileSpec, ...]
    altar_tokens: int

    def canonical(self) -> list[Any]:
        """The structure whose msgpack bytes are hashed (see protocol/MANIFEST.md)."""
        def tile(t: TileSpec) -> list[Any]:
            return [t.id, t.colors, t.crown, t.order.value, t.paid]

        return [
            SCHEMA,
            list(self.crown_spaces),
            self.order_faces_show_crown,
            [self.builders, self.promotion_tokens, self.coins],
            [tile(t) for t in self.tiles],
            [tile(t) for t in self.festum_tiles],
            self.altar_tokens,
        ]

    @cached_property
    def hash(self) -> str:
        return hashlib.sha256(msgpack.packb(self.canonical(), use_bin_type=True)).hexdigest()

    def spec_table(self) -> dict[int, TileSpec]:
        return {t.id: t for t in self.tiles + self.festum_tiles}

    def face_class(self, tile: int) -> FaceClass:
        """The order-face class of tile ``tile`` in this box."""
        return self.spec_table()[tile].face_class(self.order_faces_show_crown)

    def to_json(self) -> dict[str, Any]:
        def tile(t: TileSpec) -> dict[str, Any]:
            return {"id": t.id, "colors": format_colors(t.colors), "crown": t.crown,
                    "order": t.order.value, "paid": t.paid}

        return {
            "schema": SCHEMA,
            "name": self.name,
            "crown_spaces": list(self.crown_spaces),
            "order_faces_show_crown": self.order_faces_show_crown,
            "supply": {"builders": self.builders, "promotion_tokens": self.promotion_tokens, "coins": self.coins},
            "tiles": [tile(t) for t in self.tiles],
            "festum": {"tiles": [tile(t) for t in self.festum_tiles], "altar_tokens": self.altar_tokens},
        }


def _expect(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise ManifestError(f"manifest: {where}: {what}")


def _keys(obj: Any, where: str, required: set[str], optional: AbstractSet[str] = frozenset()) -> None:
    _expect(isinstance(obj, dict), where, "must be an object")
    missing = sorted(required - obj.keys())
    if missing:
        raise ManifestError(f"manifest: {where}: missing field {missing[0]!r}")
    unknown = sorted(obj.keys() - required - optional)
    if unknown:
        raise ManifestError(f"manifest: {where}: unknown field {unknown[0]!r}")


def _int(v: Any, where: str, lo: int, hi: int) -> int:
    if not (isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi):
        raise ManifestError(f"manifest: {where}: must be a whole number from {lo} to {hi}")
    return v


def _tile(obj: Any, where: str, festum: bool) -> TileSpec:
    _keys(obj, where, {"id", "colors", "crown", "order", "paid"})
    tid = _int(obj["id"], f"{where}.id", 1, 1_000_000)
    _expect(isinstance(obj["colors"], str), f"{where}.colors", "must be a string like 'Y' or 'Y/B'")
    try:
        colors = parse_colors(obj["colors"])
    except ValueError as e:
        raise ManifestError(f"manifest: {where}.colors: {e}") from None
    _expect(isinstance(obj["crown"], bool), f"{where}.crown", "must be true or false")
    _expect(isinstance(obj["paid"], bool), f"{where}.paid", "must be true or false")
    try:
        order = Order(obj["order"])
    except ValueError:
        raise ManifestError(f"manifest: {where}.order: unknown order {obj['order']!r}") from None
    _expect(festum or order is not Order.ALTAR, f"{where}.order", "ALTAR belongs to the festum tiles only")
    _expect(not obj["paid"] or order in PAID_ORDERS, f"{where}.paid",
            f"{order.value} has no paid option (only PROMOTE, RECRUIT, CONFUSE do, D3)")
    _expect(color_count(colors) in (1, 2), f"{where}.colors", "one or two colours")
    return TileSpec(tid, colors, obj["crown"], order, obj["paid"])


def manifest_from_json(data: Any) -> Manifest:
    """Validate a parsed JSON manifest; raises :class:`ManifestError` naming the field."""
    _keys(data, "top level", {"schema", "crown_spaces", "tiles"},
          {"name", "order_faces_show_crown", "supply", "festum"})
    _expect(data["schema"] == SCHEMA, "schema", f"must be {SCHEMA!r}")
    name = data.get("name", "")
    _expect(isinstance(name, str) and len(name) <= 200, "name", "must be a string of at most 200 characters")
    spaces = data["crown_spaces"]
    _expect(isinstance(spaces, list) and 1 <= len(spaces) <= 10, "crown_spaces", "must be a list of 1 to 10 numbers")
    spaces_t = tuple(_int(s, f"crown_spaces[{i}]", 1, 1000) for i, s in enumerate(spaces))
    _expect(all(a < b for a, b in zip(spaces_t, spaces_t[1:])), "crown_spaces", "must be strictly increasing")
    show = data.get("order_faces_show_crown", False)
    _expect(isinstance(show, bool), "order_faces_show_crown", "must be true or false")
    supply = data.get("supply", {"builders": 5, "promotion_tokens": 4, "coins": 1})
    _keys(supply, "supply", {"builders", "promotion_tokens", "coins"})
    builders = _int(supply["builders"], "supply.builders", 1, 20)
    tokens = _int(supply["promotion_tokens"], "supply.promotion_tokens", 0, 20)
    coins = _int(supply["coins"], "supply.coins", 0, 1)
    tiles = data["tiles"]
    _expect(isinstance(tiles, list) and 6 <= len(tiles) <= MAX_TILES, "tiles",
            f"must be a list of 6 to {MAX_TILES} tiles")
    base = tuple(_tile(t, f"tiles[{i}]", False) for i, t in enumerate(tiles))
    festum = data.get("festum", {"tiles": [], "altar_tokens": 0})
    _keys(festum, "festum", {"tiles", "altar_tokens"})
    ftiles = festum["tiles"]
    _expect(isinstance(ftiles, list) and len(ftiles) <= MAX_TILES, "festum.tiles", "must be a list")
    extra = tuple(_tile(t, f"festum.tiles[{i}]", True) for i, t in enumerate(ftiles))
    altars = _int(festum["altar_tokens"], "festum.altar_tokens", 0, 1000)
    seen: set[int] = set()
    for t in base + extra:
        _expect(t.id not in seen, "tiles", f"tile id {t.id} appears twice")
        seen.add(t.id)
    return Manifest(name, spaces_t, show, builders, tokens, coins, base, extra, altars)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise ManifestError(f"manifest: the field {k!r} appears twice")
        seen[k] = v
    return seen


def parse_manifest(text: str | bytes) -> Manifest:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise ManifestError("manifest: not UTF-8 text") from None
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except ManifestError:
        raise
    except (ValueError, RecursionError) as e:
        raise ManifestError(f"manifest: not valid JSON ({e})") from None
    return manifest_from_json(data)


def default_manifest() -> Manifest:
    """The shipped reconstruction (D4), identical to protocol/manifest.json."""
    text = resources.files("basilica_p2p.data").joinpath("manifest.json").read_text(encoding="utf-8")
    return parse_manifest(text)


# --- the D4 reconstruction ---------------------------------------------------

_BASE_ORDER_COUNTS = (
    (Order.PROMOTE, 8), (Order.MOVE, 9), (Order.RECRUIT, 9), (Order.CONFUSE, 8),
    (Order.STAINED_GLASS, 8), (Order.SCAFFOLDING, 8), (Order.DISASTER, 8),
)
_BASE_COLORS = ["Y"] * 10 + ["B"] * 10 + ["R"] * 10 + ["G"] * 10 + [
    pair for pair in ("Y/B", "Y/R", "Y/G", "B/R", "B/G", "R/G") for _ in range(3)
]  # D2: 40 single-colour tiles, the 6 wild pairs three times each
_FESTUM_COLORS = ["Y", "Y", "B", "B", "R", "R", "G", "G"]  # D5


def _spread(n_items: int, n_marked: int) -> list[bool]:
    """Mark ``n_marked`` of ``n_items`` positions as evenly as possible (Bresenham)."""
    return [(i + 1) * n_marked // n_items > i * n_marked // n_items for i in range(n_items)]


def reconstruct_default(crowns: int, name: str = "default reconstruction (RULES.md D2-D5)") -> Manifest:
    """Build the D4 manifest with ``crowns`` crowned base tiles.

    Orders are dealt round-robin over the tile list (Y, B, R, G, then the
    wild pairs), skipping types that ran out, so every colour gets a mix;
    crowns are spread evenly over the same list.  The festum tiles get
    crowns in the same proportion.
    """
    pool = {o: n for o, n in _BASE_ORDER_COUNTS}
    orders: list[Order] = []
    while len(orders) < len(_BASE_COLORS):
        for o, _ in _BASE_ORDER_COUNTS:
            if pool[o] > 0:
                pool[o] -= 1
                orders.append(o)
    marks = _spread(len(_BASE_COLORS), crowns)
    base = tuple(
        TileSpec(i + 1, parse_colors(c), marks[i], orders[i], orders[i] in PAID_ORDERS)
        for i, c in enumerate(_BASE_COLORS)
    )
    fmarks = _spread(len(_FESTUM_COLORS), round(crowns * len(_FESTUM_COLORS) / len(_BASE_COLORS)))
    festum = tuple(
        TileSpec(len(base) + i + 1, parse_colors(c), fmarks[i], Order.ALTAR, False)
        for i, c in enumerate(_FESTUM_COLORS)
    )
    return Manifest(name, (10, 20, 30), False, 5, 4, 1, base, festum, 14)
