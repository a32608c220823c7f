"""What one player may see (RULES.md §9, D18), and games sampled from it.

An :class:`Observation` holds every public fact and nothing hidden: the
stack below its top tile is only a count, and a tile whose order face is up
is shown as an :class:`OrderFace` with no tile id and no crown (unless the
manifest says the box prints crowns on order faces).  A tile whose vault
face is up is shown with its id: its crown is visible.  The other player's
not yet revealed Jester colours are not in it either: not in
``my_jester_choice``/``other_jester_committed``, and not in ``history``, the
actions applied since the game began, which leaves out the other player's
``J:`` action in a secret Jester round until both choices are made (D24, P5).

:func:`determinize` builds a full :class:`Game` consistent with an
observation, filling what is hidden from a caller-supplied shuffle, which
is how bots look ahead without ever being handed the real hidden state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import actions as A
from .actions import Action
from .cells import format_cell
from .components import RANK_LETTER, Order, Ruleset, format_colors
from .game import JESTER_COLORS, MAIN, REVEAL, Game, Options, Pending, _Setup, opened
from .errors import EngineError
from .manifest import Manifest


@dataclass(frozen=True, slots=True)
class OrderFace:
    order: Order
    colors: int
    paid: bool
    crown: bool | None  # None: the box does not show crowns on order faces (D18)


@dataclass(frozen=True, slots=True)
class VaultFace:
    tile: int
    colors: int
    crown: bool


@dataclass(frozen=True)
class Observation:
    player: int  # whose view this is (0 or 1)
    ruleset: str
    festum: bool
    festum_removal: bool
    manifest_hash: str
    to_move: int | None
    pending: Pending | None
    active: int
    actions_taken: int
    turn: int
    last_placed: int  # -1 unless a builder may follow the vault just placed
    vaults: tuple[tuple[int, VaultFace], ...]  # (cell, face), sorted by cell
    scaffold: tuple[int, ...]
    builders: tuple[tuple[int, int, int], ...]  # (cell, player, rank)
    glass: tuple[int, ...]
    altars: tuple[int, ...]
    orders: tuple[OrderFace | None, ...]  # O1-O3
    market: tuple[VaultFace | None, ...]  # V1-V3
    in_hand: tuple[int, OrderFace] | None  # (space, face) of an order being carried out
    stack_size: int
    stack_top: OrderFace | None
    reshuffles: int
    discard: tuple[VaultFace | OrderFace, ...]  # in the order discarded
    out_count: int  # festum tiles removed unseen
    pawn: int
    crown_spaces: tuple[int, ...]
    scorings: int
    scores: tuple[int, int]
    coins: tuple[int, int]
    supply: tuple[int, int]
    tokens: tuple[int, int]
    altar_supply: int
    scoring_space: int  # the V space to refill once a pending scoring is done
    my_jester_choice: tuple[tuple[int, int], ...] | None
    other_jester_committed: bool
    over: bool
    end_reason: str
    # Every public action applied since the game began, in order (the other
    # player's unrevealed Jester colours left out, see above).
    history: tuple[Action, ...] = ()

    def describe(self) -> dict[str, Any]:
        """A JSON-friendly dict of every public fact (protocol/BOTS.md, ``state``).

        Players are numbered 1 and 2, cells and actions are in notation
        (docs/notation.md), colours are letters (``Y/B`` for a wild face),
        ranks are ``A``, ``M``, ``S``, ``J`` or null for a plain builder.
        The action history is not repeated here.
        """
        def face(f: VaultFace | OrderFace | None) -> Any:
            if f is None:
                return None
            if isinstance(f, VaultFace):
                return {"tile": f.tile, "colors": format_colors(f.colors), "crown": f.crown}
            return {"order": f.order.value, "colors": format_colors(f.colors), "paid": f.paid, "crown": f.crown}

        def jester(choice: tuple[tuple[int, int], ...] | None) -> Any:
            return None if choice is None else A.format_action(A.jester_colors(list(choice)))

        pend = self.pending
        return {
            "player": self.player + 1,
            "ruleset": self.ruleset,
            "festum": self.festum,
            "festum_removal": self.festum_removal,
            "manifest": self.manifest_hash,
            "to_move": None if self.to_move is None else self.to_move + 1,
            "pending": None if pend is None else {
                "kind": pend.kind, "player": pend.player + 1,
                "order": pend.order.value if pend.order is not None else None,
                "rank": RANK_LETTER.get(pend.rank), "paid": pend.paid,
            },
            "active": self.active + 1,
            "actions_taken": self.actions_taken,
            "turn": self.turn,
            "last_placed": format_cell(self.last_placed) if self.last_placed >= 0 else None,
            "vaults": {format_cell(c): face(f) for c, f in self.vaults},
            "scaffold": [format_cell(c) for c in self.scaffold],
            "builders": {format_cell(c): [p + 1, RANK_LETTER.get(r)] for c, p, r in self.builders},
            "glass": [format_cell(c) for c in self.glass],
            "altars": [format_cell(c) for c in self.altars],
            "orders": [face(f) for f in self.orders],
            "market": [face(f) for f in self.market],
            "in_hand": None if self.in_hand is None else {"space": self.in_hand[0], "face": face(self.in_hand[1])},
            "stack_size": self.stack_size,
            "stack_top": face(self.stack_top),
            "reshuffles": self.reshuffles,
            "discard": [face(f) for f in self.discard],
            "out_count": self.out_count,
            "pawn": self.pawn,
            "crown_spaces": list(self.crown_spaces),
            "scorings": self.scorings,
            "scores": list(self.scores),
            "coins": list(self.coins),
            "supply": list(self.supply),
            "tokens": list(self.tokens),
            "altar_supply": self.altar_supply,
            "my_jester_choice": jester(self.my_jester_choice),
            "other_jester_committed": self.other_jester_committed,
            "over": self.over,
            "end_reason": self.end_reason,
        }


def _order_face(g: Game, tile: Any) -> OrderFace:
    s = g.specs[tile]  # a TileSpec, or a FaceClass in a hidden game: both carry the face
    return OrderFace(s.order, s.colors, s.paid, s.crown if g.manifest.order_faces_show_crown else None)


def _vault_face(g: Game, tile: Any) -> VaultFace:
    s = opened(g.specs[tile])
    return VaultFace(s.id, s.colors, s.crown)


def _face_lookups(g: Game) -> tuple[Callable[[Any], VaultFace], Callable[[Any], OrderFace]]:
    """The vault face and the order face of a tile (or position), as two functions."""
    if g.setup.hidden:
        # A position's knowledge is per game (each copy learns on its own): nothing is shared.
        return (lambda t: _vault_face(g, t)), (lambda t: _order_face(g, t))
    lookups = g.setup.face_lookups
    if lookups is None:
        # A seeded game's tiles are known from the start, and a face depends on its box alone:
        # both faces of each tile are built once per manifest and shared by every game of it
        # (observe() is then a few dict lookups per tile, and the environments' encoder, which
        # knows faces by identity, stays warm from one game to the next).
        m = g.manifest
        faces = _FACE_TABLES.get(m.hash)
        if faces is None:
            shown = m.order_faces_show_crown
            specs = m.spec_table()
            faces = ({t: VaultFace(s.id, s.colors, s.crown) for t, s in specs.items()},
                     {t: OrderFace(s.order, s.colors, s.paid, s.crown if shown else None) for t, s in specs.items()})
            if len(_FACE_TABLES) >= 16:  # a bound for programs that make many manifests
                _FACE_TABLES.clear()
            _FACE_TABLES[m.hash] = faces
        lookups = g.setup.face_lookups = (faces[0].__getitem__, faces[1].__getitem__)
    return lookups


# Both faces of every tile, by manifest hash (which covers the tiles and whether order faces show crowns).
_FACE_TABLES: dict[str, tuple[dict[int, VaultFace], dict[int, OrderFace]]] = {}


def observe(g: Game, player: int) -> Observation:
    """The view of ``player`` (0 or 1): every public fact, nothing hidden (§9)."""
    if player not in (0, 1):
        raise ValueError("player is 0 or 1")
    if g.pending.kind == REVEAL:
        # A hidden game waiting for reveals: the faces its public places show are not known yet.
        raise EngineError("the game waits for tiles to be revealed: nothing can be observed until then")
    other = 1 - player
    history = g.history
    if other in g.jester_choices and not g.over and g.pending.kind == JESTER_COLORS and history \
            and history[-1].kind == A.JESTER:
        # A secret Jester round (D24, P5): the other player chose first, and its
        # J: action, the last one applied, stays hidden until both have chosen.
        history = history[:-1]
    vault, order = _face_lookups(g)
    options = g.options
    vaults = g.vaults
    builders = g.builders
    up = g.discard_up
    in_hand = g.in_hand
    # Cells are dict keys, so sorting the cells sorts the (cell, ...) items as the docstring's
    # fields promise, without comparing the faces; zip and map pair them up in C.
    cells = sorted(vaults)
    return _observation({
        "player": player,
        "ruleset": options.ruleset.value,
        "festum": options.festum,
        "festum_removal": options.festum_removal,
        "manifest_hash": g.manifest.hash,
        "to_move": g.to_move,
        "pending": None if g.over else g.pending,
        "active": g.active,
        "actions_taken": g.actions,
        "turn": g.turn,
        "last_placed": g.last_placed,
        "vaults": tuple(zip(cells, map(vault, map(vaults.__getitem__, cells)))),
        "scaffold": tuple(sorted(g.scaffold)),
        "builders": tuple([(c, p, r) for c, (p, r) in sorted(builders.items())]),
        "glass": tuple(sorted(g.glass)),
        "altars": tuple(sorted(g.altars)),
        "orders": tuple([None if t is None else order(t) for t in g.orders]),
        "market": tuple([None if t is None else vault(t) for t in g.market]),
        "in_hand": None if in_hand is None else (in_hand[1], order(in_hand[0])),
        "stack_size": len(g.stack),
        "stack_top": order(g.stack[-1]) if g.stack else None,
        "reshuffles": g.reshuffles,
        "discard": tuple([vault(t) if t in up else order(t) for t in g.discard] if up else map(order, g.discard)),
        "out_count": len(g.out),
        "pawn": g.pawn,
        "crown_spaces": g.manifest.crown_spaces,
        "scorings": g.scorings,
        "scores": (g.scores[0], g.scores[1]),
        "coins": (g.coins[0], g.coins[1]),
        "supply": (g.supply[0], g.supply[1]),
        "tokens": (g.tokens[0], g.tokens[1]),
        "altar_supply": g.altar_supply,
        "scoring_space": g.scoring_space,
        "my_jester_choice": g.jester_choices.get(player),
        "other_jester_committed": other in g.jester_choices,
        "over": g.over,
        "end_reason": g.end_reason,
        "history": tuple(history),
    })


def _observation(values: dict[str, Any]) -> Observation:
    """An :class:`Observation` of ``values`` (every field, by name).

    The frozen dataclass's ``__init__`` sets its 38 fields one ``object.__setattr__``
    at a time, which was most of observe()'s time (5-10 µs of an RL step);
    filling the instance dict is the same object for ``==``, ``hash``, ``repr`` and pickle.
    """
    obs: Observation = object.__new__(Observation)
    obs.__dict__.update(values)
    return obs


Shuffler = Callable[[list[int]], list[int]]


def determinize(obs: Observation, manifest: Manifest, shuffle: Shuffler, seed: bytes) -> Game:
    """A complete game consistent with ``obs``; hidden facts come from ``shuffle``.

    ``shuffle`` returns a permutation of the list it is given (a bot passes
    its own seeded generator); ``seed`` drives the determinized game's own
    future reshuffle.  The result is a sample, not the real game.
    """
    if manifest.hash != obs.manifest_hash:
        raise ValueError("the observation was made with another manifest")
    options = Options(Ruleset(obs.ruleset), obs.festum, obs.festum_removal)
    specs = {t.id: t for t in manifest.tiles + (manifest.festum_tiles if obs.festum else ())}
    setup = _Setup(manifest, options, seed, specs, frozenset(manifest.crown_spaces), options.ruleset.ranks)
    known = {f.tile for _, f in obs.vaults} | {f.tile for f in obs.market if f is not None}
    known |= {f.tile for f in obs.discard if isinstance(f, VaultFace)}
    unseen = shuffle(sorted(t for t in specs if t not in known))

    def take(face: OrderFace) -> int:
        for i, t in enumerate(unseen):
            s = specs[t]
            if s.order is face.order and s.colors == face.colors and s.paid == face.paid and (
                face.crown is None or s.crown == face.crown
            ):
                return unseen.pop(i)
        raise ValueError("the observation shows an order face that no unseen tile has")

    orders = [None if f is None else take(f) for f in obs.orders]
    in_hand = None if obs.in_hand is None else (take(obs.in_hand[1]), obs.in_hand[0])
    top = None if obs.stack_top is None else take(obs.stack_top)
    discard = [f.tile if isinstance(f, VaultFace) else take(f) for f in obs.discard]
    out = sorted(unseen[: obs.out_count])
    rest = unseen[obs.out_count :]
    if len(rest) + (top is not None) != obs.stack_size:
        raise ValueError("the observation's tile counts do not add up")
    stack = rest + ([top] if top is not None else [])  # the top is the end of the list

    g = Game._blank(setup)
    g.vaults = {c: f.tile for c, f in obs.vaults}
    g.scaffold = set(obs.scaffold)
    g.builders = {c: (p, r) for c, p, r in obs.builders}
    g.glass = set(obs.glass)
    g.altars = set(obs.altars)
    g.stack = stack
    g.discard = discard
    g.discard_up = {f.tile for f in obs.discard if isinstance(f, VaultFace)}
    g.out = out
    g.orders = orders
    g.market = [None if f is None else f.tile for f in obs.market]
    g.in_hand = in_hand
    g.reshuffles = obs.reshuffles
    g.pawn = obs.pawn
    g.scorings = obs.scorings
    g.scores = list(obs.scores)
    g.coins = list(obs.coins)
    g.supply = list(obs.supply)
    g.tokens = list(obs.tokens)
    g.altar_supply = obs.altar_supply
    g.active = obs.active
    g.actions = obs.actions_taken
    g.last_placed = obs.last_placed
    g.turn = obs.turn
    g.pending = obs.pending if obs.pending is not None else Pending(MAIN, obs.active)
    g.scoring_space = obs.scoring_space
    g.over = obs.over
    g.end_reason = obs.end_reason
    g.history = list(obs.history)
    if obs.my_jester_choice is not None:
        g.jester_choices[obs.player] = obs.my_jester_choice
    if obs.other_jester_committed:
        # The real choice is secret: assume the first colour option (in the
        # history too, where observe() hides it again).
        stand_in = next(iter(g._jester_options(1 - obs.player)))
        g.jester_choices[1 - obs.player] = stand_in.colors
        g.history.append(stand_in)
    return g
