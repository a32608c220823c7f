"""The game of Basilica as a pure state machine (RULES.md §4-§8).

:class:`Game` holds the whole state.  Whoever must decide now is
``game.to_move``; ``game.legal_actions()`` lists every legal decision, of
the player on turn or of the opponent (paid orders, the CONFUSE paid choice,
Jester colours); ``game.apply(action)`` carries one out.  An illegal action
raises :class:`IllegalAction` and leaves the state as it was, because every
action is checked against the legal list before anything is touched.

Nothing here reads a clock, a file or the environment, and the only chance
comes from the seed through :mod:`.rng`.

Why one long module: the rules act on one mutable state, and each order's
effect, the redeal, the scorings and the clean-up call into each other in
the middle of an action; the pieces that stand alone (cells, components,
the manifest, scoring areas, observation, notation, the hidden deal's
vocabulary, the seed stream) live in their own modules beside it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import product
from typing import Any, TypeAlias, cast

import msgpack

from . import actions as A
from .actions import Action
from .cells import WIDTH, all_neighbours, format_cell, neighbours
from .components import ALL_COLORS, JESTER, NO_RANK, RANK_NAME, Order, Ruleset
from .errors import EngineError, IllegalAction
from .hidden import Deck, Level, Position, Reveal, RevealError, count_faces
from .manifest import FaceClass, Manifest, TileSpec
from .rng import FESTUM_REMOVAL, SHUFFLE, SeedStream, first_player, reshuffle_label, shuffled
from .scoring import ScoringResult, score_cathedral, totals

_new = tuple.__new__  # builds an Action without the Python-level NamedTuple __new__



def _cell_actions(kind: str) -> tuple[tuple[Action, ...], ...]:
    """The actions ``kind`` ``space`` ``cell`` (no destination, no rank), by space and cell, for 64 rows."""
    return tuple(tuple(_new(Action, (kind, space, c, -1, 0, ())) for c in range(WIDTH * 64)) for space in range(4))


# Built once: legal_actions lists dozens of these at every step.  Actions are
# immutable tuples, so one object may stand in every list and history.
_VAULT_ACTIONS = _cell_actions(A.VAULT)
_ORDER_ACTIONS = _cell_actions(A.ORDER)


def _vault_action(space: int, c: int) -> Action:
    table = _VAULT_ACTIONS[space]
    return table[c] if c < len(table) else _new(Action, (A.VAULT, space, c, -1, 0, ()))


def _order_action(space: int, c: int) -> Action:
    table = _ORDER_ACTIONS[space]
    return table[c] if c < len(table) else _new(Action, (A.ORDER, space, c, -1, 0, ()))


class PendingKind(StrEnum):
    """What kind of decision is pending (its value is the one the canonical state holds)."""

    MAIN = "main"  # the player on turn chooses one of their three actions
    AFTER_REDEAL = "after-redeal"  # D8: the same PLACE VAULT action goes on with new tiles
    SECOND_SCAFFOLD = "second-scaffold"
    SECOND_ALTAR = "second-altar"
    PAID = "paid"  # D27: the opponent may pay for the paid option of PROMOTE/RECRUIT
    CONFUSE_PAY = "confuse-pay"  # D20: the opponent may pay to choose the CONFUSE move
    CONFUSE_MOVE = "confuse-move"
    JESTER_COLORS = "jester"  # D24
    # A hidden deal (Game.new_hidden): the game waits for facts nobody has opened yet, which the
    # last action (or the setup) turned over; nobody decides until Game.reveal has given them all.
    REVEAL = "reveal"


# The kinds by their own names, as the rules code and its callers spell them.
MAIN = PendingKind.MAIN
AFTER_REDEAL = PendingKind.AFTER_REDEAL
SECOND_SCAFFOLD = PendingKind.SECOND_SCAFFOLD
SECOND_ALTAR = PendingKind.SECOND_ALTAR
PAID = PendingKind.PAID
CONFUSE_PAY = PendingKind.CONFUSE_PAY
CONFUSE_MOVE = PendingKind.CONFUSE_MOVE
JESTER_COLORS = PendingKind.JESTER_COLORS
REVEAL = PendingKind.REVEAL


class EventKind(StrEnum):
    """What the rules did by themselves (an :class:`Event`)."""

    REDEAL = "redeal"  # D8: no vault tile fitted, V1-V3 dealt again
    RESHUFFLE = "reshuffle"  # D11: the discard pile became the stack
    SCORING = "scoring"
    NO_ACTION = "no-action"  # D7
    STACK_OUT = "stack-out"  # D25: the stack ran out a second time
    GAME_OVER = "game-over"

END_LAST_SCORING = "last-scoring"  # the scoring on the last crown space (the third by default, P10)
END_STACK = "stack"


@dataclass(frozen=True)
class Options:
    """What both players agree on before the shuffle."""

    ruleset: Ruleset = Ruleset.PORTAL2022
    festum: bool = False
    festum_removal: bool = False  # the optional removal of 6 random tiles

    def __post_init__(self) -> None:
        if not isinstance(self.ruleset, Ruleset):
            object.__setattr__(self, "ruleset", Ruleset(self.ruleset))
        if self.festum and self.ruleset is Ruleset.CLASSIC:
            raise EngineError("the festum expansion needs the portal2022 ruleset")
        if self.festum_removal and not self.festum:
            raise EngineError("removing 6 tiles is a rule of the festum expansion")


@dataclass(frozen=True, slots=True)
class Pending:
    kind: PendingKind
    player: int
    order: Order | None = None  # PAID: whose paid option
    rank: int = NO_RANK  # PAID after PROMOTE: the rank the active player gave
    paid: bool = False  # CONFUSE_MOVE: the opponent paid to choose


@dataclass(frozen=True, slots=True)
class Event:
    """Something the rules did by themselves, for logs and replays."""

    kind: EventKind
    detail: str = ""
    board: ScoredBoard | None = None  # a scoring's: the cathedral as it was scored, before the clean-up


@dataclass(frozen=True, slots=True)
class ScoredBoard:
    """The cathedral a scoring counted (D21 clears rows 1-2 right after, inside the same decision):
    every vault with its tile, the builders (cell, player, rank), and the glass, altars and
    scaffolding.  Public facts only: every one of those tiles lies vault side up."""

    vaults: tuple[tuple[int, int], ...]
    builders: tuple[tuple[int, int, int], ...]
    glass: tuple[int, ...]
    altars: tuple[int, ...]
    scaffold: tuple[int, ...]


class _StackOut(Exception):
    """A draw was needed from the second, empty stack: the game ends now (D25)."""


@dataclass
class _Setup:
    manifest: Manifest
    options: Options
    seed: bytes
    specs: dict[int, TileSpec] = field(default_factory=dict)
    crown_spaces: frozenset[int] = frozenset()
    ranks: tuple[int, ...] = ()
    # observe()'s faces of every tile, (vault face, order face) by tile id, set at its first call
    # in a seeded game: one shared object per face (per manifest), and no per-call construction.
    face_lookups: tuple[Callable[[Any], Any], Callable[[Any], Any]] | None = None
    hidden: bool = False  # Game.new_hidden: the slots hold positions, not tile ids
    # A hidden game's canonical slot of each (position, what is known of it): hashed at every
    # acknowledgement, and a fact once learnt never changes, so each slot is built once.  The
    # lists are shared between calls and never changed.
    slots: dict[tuple[Any, Any], list[Any]] = field(default_factory=dict)


def _make_setup(manifest: Manifest, options: Options, seed: bytes, hidden: bool) -> _Setup:
    if options.festum and not manifest.festum_tiles:
        raise EngineError("the festum expansion needs festum tiles, and this manifest has none")
    setup = _Setup(manifest, options, seed, hidden=hidden)
    tiles = list(manifest.tiles) + (list(manifest.festum_tiles) if options.festum else [])
    setup.specs = {t.id: t for t in tiles}
    setup.crown_spaces = frozenset(manifest.crown_spaces)
    setup.ranks = options.ruleset.ranks
    return setup


# What a place on the table holds: a tile id in a game dealt from a seed, a Position of a deal
# in a hidden game (Game.new_hidden).  The rules move both alike, so the type says "either".
Card: TypeAlias = Any
# What a game knows of a card: its tile; in a hidden game, until the tile is opened, its order face.
Known: TypeAlias = TileSpec | FaceClass


class Game:
    """The whole state of one game.  Mutable; ``clone()`` is cheap."""

    __slots__ = (
        "setup", "specs", "vaults", "scaffold", "builders", "glass", "altars",
        "stack", "discard", "discard_up", "out", "orders", "market", "in_hand",
        "reshuffles", "pawn", "scorings", "scores", "coins", "supply", "tokens",
        "altar_supply", "active", "actions", "last_placed", "turn", "pending",
        "jester_choices", "scoring_space", "over", "end_reason", "history",
        "scoring_log", "events", "_legal", "_undo", "_cleanup_refill", "decks",
        # A hidden game waiting for reveals (pending REVEAL): what it waits for, the decision
        # that comes once they are in, the action they complete (it joins the history then),
        # and whether a redeal (D8) goes on with the tiles they open.
        "_awaiting", "_after", "_revealing", "_redealing",
    )
    setup: _Setup
    specs: dict[Card, Known]
    vaults: dict[int, Card]  # cell -> card
    scaffold: set[int]
    builders: dict[int, tuple[int, int]]  # cell -> (player, rank)
    glass: set[int]
    altars: set[int]
    stack: list[Card]  # the top is the end of the list
    discard: list[Card]
    discard_up: set[Card]
    out: list[Card]
    orders: list[Card | None]  # O1-O3
    market: list[Card | None]  # V1-V3
    in_hand: tuple[Card, int] | None  # the order being carried out, and its space
    reshuffles: int
    pawn: int
    scorings: int
    scores: list[int]
    coins: list[int]
    supply: list[int]
    tokens: list[int]
    altar_supply: int
    active: int
    actions: int
    last_placed: int
    turn: int
    pending: Pending
    jester_choices: dict[int, tuple[tuple[int, int], ...]]
    scoring_space: int
    over: bool
    end_reason: str
    history: list[Action]
    scoring_log: list[ScoringResult]
    events: list[Event]
    _legal: tuple[Action, ...] | None
    _undo: list[Game]
    _cleanup_refill: bool
    decks: tuple[Deck, ...]
    _awaiting: tuple[Reveal, ...]
    _after: Pending | None
    _revealing: Action | None
    _redealing: bool

    # --- construction ------------------------------------------------------

    @classmethod
    def new(cls, manifest: Manifest, options: Options, seed: bytes) -> Game:
        """Set up a game (RULES.md §4) from a 32-byte seed."""
        if not isinstance(seed, bytes) or len(seed) != 32:
            raise EngineError("a game seed is exactly 32 bytes")
        setup = _make_setup(manifest, options, seed, hidden=False)
        ids = sorted(setup.specs)
        order = shuffled(ids, seed, SHUFFLE)  # order[0] is the top of the stack
        out: list[int] = []
        if options.festum_removal:
            stream = SeedStream(seed, FESTUM_REMOVAL)
            for _ in range(6):
                out.append(order.pop(stream.below(len(order))))
        if len(order) < 6:
            raise EngineError("the manifest has too few tiles to deal the market")
        g = cls._blank(setup)
        g.stack = order[::-1]  # internally the top is the end of the list
        g.out = sorted(out)
        g._deal_market(first_player(seed))  # D6
        return g

    @classmethod
    def new_hidden(cls, manifest: Manifest, options: Options, first: int) -> Game:
        """Set up a game whose stack neither engine knows (a hidden deal, docs/rules.md).

        Every place holds :class:`Position` values of deal 0; ``first`` is the
        first player (0 or 1), which the commit-reveal seed may still draw.
        Nothing is known yet: the game waits (pending ``REVEAL``) and
        :meth:`needed_reveals` lists the order faces of O1-O3 and the stack top
        and the tiles of V1-V3, to be opened with :meth:`reveal` before the
        first action.
        """
        if first not in (0, 1) or type(first) is not int:
            raise EngineError("the first player is 0 or 1")
        setup = _make_setup(manifest, options, b"", hidden=True)
        size = len(setup.specs)
        shown = manifest.order_faces_show_crown
        deck = Deck(size, count_faces([t.face_class(shown) for t in setup.specs.values()]))
        # The festum removal sets aside the bottom six slots: which tiles they
        # hold is decided by the deal, unseen by either engine.
        kept = size - 6 if options.festum_removal else size
        if kept < 6:
            raise EngineError("the manifest has too few tiles to deal the market")
        g = cls._blank(setup)
        g.specs = {}  # what this engine knows, position by position
        g.decks = (deck,)
        g.stack = [Position(0, i) for i in range(kept)][::-1]
        g.out = [Position(0, i) for i in range(kept, size)]
        g._deal_market(first)
        g._settle(g._due(), first)
        return g

    def _deal_market(self, first: int) -> None:
        """§4: the first player, then O1-O3 and V1-V3 from the stack."""
        self.active = first
        self.pending = Pending(MAIN, first)
        try:
            for k in range(3):
                self.orders[k] = self._draw()
            for k in range(3):
                self.market[k] = self._draw()
        except _StackOut:  # pragma: no cover - guarded by the size checks of the callers
            raise EngineError("the manifest has too few tiles to deal the market") from None

    @classmethod
    def _blank(cls, setup: _Setup) -> Game:
        """An empty table: nothing dealt, full supplies, player 1 to act."""
        m = setup.manifest
        g = cls.__new__(cls)
        g.setup = setup
        # A seeded game's tiles are all known: it shares the setup's table, which nothing writes.
        g.specs = cast("dict[Card, Known]", setup.specs)
        g.vaults = {}
        g.scaffold = set()
        g.builders = {}
        g.glass = set()
        g.altars = set()
        g.stack = []
        g.discard = []
        g.discard_up = set()
        g.out = []
        g.orders = [None, None, None]
        g.market = [None, None, None]
        g.in_hand = None
        g.reshuffles = 0
        g.pawn = 0
        g.scorings = 0
        g.scores = [0, 0]
        g.coins = [m.coins, m.coins]
        g.supply = [m.builders, m.builders]
        g.tokens = [m.promotion_tokens, m.promotion_tokens]
        g.altar_supply = m.altar_tokens if setup.options.festum else 0
        g.active = 0
        g.actions = 0
        g.last_placed = -1
        g.turn = 1
        g.pending = Pending(MAIN, 0)
        g.jester_choices = {}
        g.scoring_space = 0
        g.over = False
        g.end_reason = ""
        g.history = []
        g.scoring_log = []
        g.events = []
        g._legal = None
        g._undo = []
        g._cleanup_refill = False
        g.decks = ()
        g._awaiting = ()
        g._after = None
        g._revealing = None
        g._redealing = False
        return g

    def clone(self) -> Game:
        """An independent copy (without the push/pop history)."""
        g = Game.__new__(Game)
        g.setup = self.setup
        # A hidden game learns facts one by one: each copy keeps its own knowledge.
        g.specs = self.specs.copy() if self.setup.hidden else self.specs
        g.vaults = self.vaults.copy()
        g.scaffold = self.scaffold.copy()
        g.builders = self.builders.copy()
        g.glass = self.glass.copy()
        g.altars = self.altars.copy()
        g.stack = self.stack.copy()
        g.discard = self.discard.copy()
        g.discard_up = self.discard_up.copy()
        g.out = self.out
        g.orders = self.orders.copy()
        g.market = self.market.copy()
        g.in_hand = self.in_hand
        g.reshuffles = self.reshuffles
        g.pawn = self.pawn
        g.scorings = self.scorings
        g.scores = self.scores.copy()
        g.coins = self.coins.copy()
        g.supply = self.supply.copy()
        g.tokens = self.tokens.copy()
        g.altar_supply = self.altar_supply
        g.active = self.active
        g.actions = self.actions
        g.last_placed = self.last_placed
        g.turn = self.turn
        g.pending = self.pending
        g.jester_choices = self.jester_choices.copy()
        g.scoring_space = self.scoring_space
        g.over = self.over
        g.end_reason = self.end_reason
        g.history = self.history.copy()
        g.scoring_log = self.scoring_log.copy()
        g.events = self.events.copy()
        g._legal = self._legal
        g._undo = []
        g._cleanup_refill = False
        g.decks = self.decks
        g._awaiting = self._awaiting
        g._after = self._after
        g._revealing = self._revealing
        g._redealing = self._redealing
        return g

    # --- read-only views ---------------------------------------------------

    @property
    def manifest(self) -> Manifest:
        return self.setup.manifest

    @property
    def options(self) -> Options:
        return self.setup.options

    @property
    def seed(self) -> bytes:
        """The commit-reveal seed; empty in a hidden game, where no seed orders the stack."""
        return self.setup.seed

    @property
    def hidden(self) -> bool:
        return self.setup.hidden

    @property
    def to_move(self) -> int | None:
        """The player (0 or 1) who must decide now; None once the game is over."""
        return None if self.over else self.pending.player

    def result(self) -> tuple[int, int] | None:
        """Final scores once the game is over."""
        return (self.scores[0], self.scores[1]) if self.over else None

    def winner(self) -> int | None:
        """0 or 1, or None on a shared victory (or while the game goes on)."""
        if not self.over or self.scores[0] == self.scores[1]:
            return None
        return 0 if self.scores[0] > self.scores[1] else 1

    def spec(self, tile: Card) -> Known:
        return self.specs[tile]

    # --- legal actions -----------------------------------------------------

    def legal_actions(self) -> list[Action]:
        """Every legal decision of ``to_move`` now, in a fixed order (empty when over)."""
        if self._legal is None:
            self._legal = self._generate()
        return list(self._legal)

    def is_legal(self, action: Action) -> bool:
        if self._legal is None:
            self._legal = self._generate()
        return action in self._legal

    def _generate(self) -> tuple[Action, ...]:
        if self.over or self.pending.kind == REVEAL:
            return ()
        pend = self.pending
        kind = pend.kind
        if kind == MAIN:
            acts = self._vault_actions()
            if not acts:
                acts.append(A.REDEAL_ACTION)  # D8
            lp = self.last_placed
            if lp >= 0 and self.supply[pend.player] > 0 and lp not in self.builders:
                acts.append(_new(Action, (A.BUILDER, 0, lp, -1, 0, ())))
            for k in range(3):
                self._order_actions(k + 1, acts)
            if not acts:  # pragma: no cover - D7: cannot happen under these rules
                acts.append(A.NONE_ACTION)
            return tuple(acts)
        if kind == AFTER_REDEAL:
            return tuple(self._vault_actions())
        if kind == SECOND_SCAFFOLD:
            return tuple(_new(Action, (A.PLACE, 0, c, -1, 0, ())) for c in self._frontier())
        if kind == SECOND_ALTAR:
            return tuple(
                _new(Action, (A.PLACE, 0, c, -1, 0, ())) for c in sorted(self.vaults) if c not in self.altars
            )
        if kind == PAID:
            return (A.DECLINE_ACTION, *self._paid_options(pend.player, pend.order, pend.rank))
        if kind == CONFUSE_PAY:
            return (A.DECLINE_ACTION, A.PAY_ACTION)
        if kind == CONFUSE_MOVE:
            victim = 1 - self.active
            return tuple(_new(Action, (A.SHIFT, 0, s, d, 0, ())) for s, d in self._confuse_moves(victim))
        if kind == JESTER_COLORS:
            return tuple(self._jester_options(pend.player))
        raise AssertionError(kind)  # pragma: no cover

    def _frontier(self) -> list[int]:
        """Empty cells a vault or scaffolding may go on: row 1, or next to a tile."""
        vaults = self.vaults
        scaffold = self.scaffold
        cand = {0, 1, 2, 3, 4}
        cand.update(all_neighbours(vaults))
        cand.update(all_neighbours(scaffold))
        return sorted(cand.difference(vaults, scaffold))

    def _vault_actions(self) -> list[Action]:
        frontier = self._frontier()
        wild_ok: list[int] | None = None
        acts: list[Action] = []
        specs = self.specs
        for k in range(3):
            tile = self.market[k]
            if tile is None:  # pragma: no cover - the market is always full between actions
                continue
            if specs[tile].wild:
                if wild_ok is None:
                    # A printed wild tile may not touch another: the cells next to one are out
                    # (being neighbours is symmetric, so they are the wild tiles' neighbours).
                    near = {n for c, t in self.vaults.items() if specs[t].wild for n in neighbours(c)}
                    wild_ok = [c for c in frontier if c not in near]
                cells = wild_ok
            else:
                cells = frontier
            table = _VAULT_ACTIONS[k + 1]
            if cells and cells[-1] < len(table):  # the cells are sorted: all in the table
                acts.extend(map(table.__getitem__, cells))
            else:
                acts.extend(_vault_action(k + 1, c) for c in cells)
        return acts

    def _own_builders(self, p: int) -> list[tuple[int, int]]:
        return sorted((c, r) for c, (q, r) in self.builders.items() if q == p)

    def _order_actions(self, space: int, acts: list[Action]) -> None:
        """Append every way to execute the order in ``space`` (D9: only if it can act)."""
        tile = self.orders[space - 1]
        if tile is None:  # pragma: no cover
            return
        order = self.specs[tile].order
        p = self.active
        vaults = self.vaults
        builders = self.builders
        kind = A.ORDER
        if order is Order.PROMOTE:
            if self.tokens[p] > 0:
                for c, r in self._own_builders(p):
                    for rank in self.setup.ranks:
                        if rank != r:  # D16: re-promoting must change the rank
                            acts.append(_new(Action, (kind, space, c, -1, rank, ())))
        elif order is Order.MOVE:
            for c, _ in self._own_builders(p):
                for n in sorted(neighbours(c)):
                    if n in vaults and n not in builders:
                        acts.append(_new(Action, (kind, space, c, n, 0, ())))
        elif order is Order.RECRUIT:
            if self.supply[p] > 0:
                acts.extend(_order_action(space, c) for c in sorted(vaults) if c not in builders)
        elif order is Order.CONFUSE:
            for c, _ in self._own_builders(p):
                if self._confuse_moves(1 - p, freed=c):
                    acts.append(_order_action(space, c))
        elif order is Order.STAINED_GLASS:
            glass = self.glass
            acts.extend(_order_action(space, c) for c, _ in self._own_builders(p) if c not in glass)
        elif order is Order.SCAFFOLDING:
            acts.extend(_order_action(space, c) for c in self._frontier())
        elif order is Order.DISASTER:
            altars = self.altars
            acts.extend(_order_action(space, c) for c in sorted(vaults) if c not in builders and c not in altars)
        elif order is Order.ALTAR:
            if self.altar_supply > 0:
                altars = self.altars
                acts.extend(_order_action(space, c) for c in sorted(vaults) if c not in altars)

    def _confuse_moves(self, victim: int, freed: int = -1) -> list[tuple[int, int]]:
        """Moves of ``victim``'s builders not on an altar to an adjacent free vault (D20).

        ``freed`` is a cell whose builder is about to be removed, so it counts as free.
        """
        vaults = self.vaults
        builders = self.builders
        out = []
        for c, _ in self._own_builders(victim):
            if c in self.altars:
                continue
            for n in sorted(neighbours(c)):
                if n in vaults and (n not in builders or n == freed):
                    out.append((c, n))
        return out

    def _paid_options(self, opp: int, order: Order | None, given_rank: int) -> list[Action]:
        """The paid effects open to ``opp`` after the main effect (D27, D22)."""
        out: list[Action] = []
        if self.coins[opp] <= 0:
            return out
        if order is Order.RECRUIT:
            if self.supply[opp] > 0:
                cells = set()
                for c, _ in self._own_builders(opp):
                    for n in neighbours(c):
                        if n in self.vaults and n not in self.builders:
                            cells.add(n)
                out.extend(_new(Action, (A.PAY, 0, c, -1, 0, ())) for c in sorted(cells))
        elif order is Order.PROMOTE:
            if self.tokens[opp] > 0:
                for c, r in self._own_builders(opp):
                    for rank in self.setup.ranks:
                        if rank != given_rank and rank != r:
                            out.append(_new(Action, (A.PAY, 0, c, -1, rank, ())))
        return out

    def _jester_options(self, p: int) -> Iterator[Action]:
        """Every assignment of one extra colour to each of ``p``'s Jesters (D24)."""
        cells = [c for c, r in self._own_builders(p) if r == JESTER]
        choices = [[col for col in ALL_COLORS if not self.specs[self.vaults[c]].colors & col] for c in cells]
        for combo in product(*choices):
            yield _new(Action, (A.JESTER, 0, -1, -1, 0, tuple(zip(cells, combo))))

    # --- applying actions --------------------------------------------------

    def apply(self, action: Action) -> list[Event]:
        """Carry out one legal action; return the events it set off.

        Raises :class:`IllegalAction` (state unchanged) if it is not legal now.
        """
        if self.over:
            raise IllegalAction("§8", "the game is over")
        if not _well_typed(action):
            # An equal-comparing tuple with floats or other types would pass the
            # membership test below and fail half-way through the dispatch.
            raise IllegalAction("§5", f"not an action value: {action!r}"[:200])
        if self._legal is None:
            self._legal = self._generate()
        if action not in self._legal:
            raise self._explain(action)
        if self.setup.hidden:
            return self._apply_hidden(action)
        self._legal = None
        self.history.append(action)
        mark = len(self.events)
        try:
            self._dispatch(action)
        except _StackOut:
            self._stack_out()
        return self.events[mark:]

    def _apply_hidden(self, action: Action) -> list[Event]:
        """:meth:`apply` in a hidden game.

        The action runs once, on the facts known: the positions it moves are
        symbols, and what it turns over that nobody has opened yet (a new stack
        top, a tile turned vault up, a redeal's new market) makes the game
        wait, pending ``REVEAL``, for :meth:`reveal`.  The action joins the
        history when every fact is in; a redeal, whose going on depends on its
        new tiles (D8), goes on from there.
        """
        self._legal = None
        mark = len(self.events)
        self._revealing = action
        actor = self.pending.player
        self._run(self._dispatch, action)
        self._settle(self._due(), actor)
        return self.events[mark:]

    def _run(self, step: Any, *args: Any) -> None:
        """``step(*args)``; a draw from the second, empty stack ends the game there (D25)."""
        try:
            step(*args)
        except _StackOut:
            self._stack_out()

    def _settle(self, due: tuple[Reveal, ...], player: int) -> None:
        """Wait for ``due`` (what the state makes public and nobody has opened), or go on: the
        redeal waiting for its tiles, then the action waiting for its reveals joins the history.
        While it waits the game is pending ``REVEAL`` of ``player``, who took the action (or
        moves first, at the setup): nobody decides, but the turn is still that player's."""
        while True:
            if due:
                if self.pending.kind != REVEAL:
                    self._after = self.pending
                    self.pending = Pending(REVEAL, player)
                self._awaiting = due
                self._legal = None
                return
            if self.pending.kind == REVEAL:
                assert self._after is not None
                self.pending, self._after = self._after, None
            self._awaiting = ()
            self._legal = None
            if not self._redealing:
                break
            self._redealing = False
            self._run(self._redeal_goes_on)
            due = self._due()
        if self._revealing is not None:
            self.history.append(self._revealing)
            self._revealing = None

    def _restore(self, snapshot: Game) -> None:
        undo = self._undo
        for name in Game.__slots__:
            if name != "_undo":
                setattr(self, name, getattr(snapshot, name))
        self._undo = undo

    def push(self, action: Action) -> list[Event]:
        """Like :meth:`apply`, remembering the state so that :meth:`pop` can undo it."""
        snapshot = self.clone()
        events = self.apply(action)
        self._undo.append(snapshot)
        return events

    def pop(self) -> Action:
        """Undo the last :meth:`push`; returns the action undone."""
        if not self._undo:
            raise IndexError("pop from a game with no pushed action")
        snapshot = self._undo.pop()
        action = self.history[-1]
        self._restore(snapshot)
        return action

    def _dispatch(self, a: Action) -> None:
        kind = self.pending.kind
        if kind in (MAIN, AFTER_REDEAL):
            self.last_placed, placed = -1, self.last_placed
            if a.kind == A.VAULT:
                self._place_vault(a.space, a.cell)
            elif a.kind == A.REDEAL:
                self._redeal()
            elif a.kind == A.BUILDER:
                self.builders[placed] = (self.active, NO_RANK)
                self.supply[self.active] -= 1
                self._action_done()
            elif a.kind == A.ORDER:
                self._take_order(a)
            else:  # NONE, D7
                self.events.append(Event(EventKind.NO_ACTION, f"player {self.active + 1} had no legal action"))
                self._end_turn()
        elif kind == SECOND_SCAFFOLD:
            self.scaffold.add(a.cell)
            self._finish_order()
        elif kind == SECOND_ALTAR:
            self.altars.add(a.cell)
            self.altar_supply -= 1
            self._finish_order()
        elif kind == PAID:
            if a.kind == A.PAY:
                opp = self.pending.player
                self._pay(opp)
                if self.pending.order is Order.RECRUIT:
                    self.builders[a.cell] = (opp, NO_RANK)
                    self.supply[opp] -= 1
                else:
                    self._promote(opp, a.cell, a.rank)
            self._finish_order()
        elif kind == CONFUSE_PAY:
            paid = a.kind == A.PAY
            if paid:
                self._pay(self.pending.player)
            chooser = self.pending.player if paid else self.active
            self.pending = Pending(CONFUSE_MOVE, chooser, paid=paid)
        elif kind == CONFUSE_MOVE:
            self.builders[a.dest] = self.builders.pop(a.cell)
            self._finish_order()
        elif kind == JESTER_COLORS:
            self.jester_choices[self.pending.player] = a.colors
            nxt = self._next_jester_owner()
            if nxt is None:
                self._score()
            else:
                self.pending = Pending(JESTER_COLORS, nxt)
        else:  # pragma: no cover
            raise AssertionError(kind)

    def _pay(self, payer: int) -> None:
        # D27: the coin goes to the active player, who cannot refuse it.
        self.coins[payer] -= 1
        self.coins[1 - payer] += 1

    def _promote(self, p: int, c: int, rank: int) -> None:
        old = self.builders[c][1]
        if old != NO_RANK:
            self.tokens[p] += 1  # D16: the old token goes home
        self.tokens[p] -= 1
        self.builders[c] = (p, rank)

    def _place_vault(self, space: int, c: int) -> None:
        tile = self.market[space - 1]
        assert tile is not None
        self.market[space - 1] = None
        self.vaults[c] = tile
        self.actions += 1
        self.last_placed = c
        self.pending = Pending(MAIN, self.active)
        if self.specs[tile].crown:
            self.pawn += 1
            if self.pawn in self.setup.crown_spaces:
                self.last_placed = -1  # a scoring ended the turn: no builder can follow (D19)
                self.scoring_space = space
                self._begin_scoring()
                return
        self._refill_vault_space(space)
        self._next_action()

    def _refill_vault_space(self, space: int) -> None:
        # The order tile above is flipped down, then a new order is drawn.
        self.market[space - 1] = self.orders[space - 1]
        self.orders[space - 1] = None
        self.orders[space - 1] = self._draw()

    def _redeal(self) -> None:
        """D8: no vault tile fits; discard V1-V3 and deal new ones while nothing fits."""
        while True:
            for k in range(3):
                tile = self.market[k]
                if tile is not None:
                    self._discard(tile, vault_up=True)
                    self.market[k] = None
            for k in range(3):
                self.market[k] = self._draw()
            self.events.append(Event(EventKind.REDEAL, "no vault tile fitted: V1-V3 were redealt (D8)"))
            if self.setup.hidden and self._due():
                # Whether the redeal goes on depends on the new tiles: it goes on once they
                # are open (_settle).
                self._redealing = True
                return
            if self._vault_actions():
                break
        self.pending = Pending(AFTER_REDEAL, self.active)

    def _redeal_goes_on(self) -> None:
        """A hidden game's redeal, its new tiles open: done if one fits, else another round."""
        if self._vault_actions():
            self.pending = Pending(AFTER_REDEAL, self.active)
        else:
            self._redeal()

    def _take_order(self, a: Action) -> None:
        space = a.space
        tile = self.orders[space - 1]
        assert tile is not None
        self.orders[space - 1] = None
        self.in_hand = (tile, space)
        order = self.specs[tile].order
        p = self.active
        opp = 1 - p
        c = a.cell
        if order is Order.PROMOTE:
            self._promote(p, c, a.rank)
            if self.specs[tile].paid and self._paid_options(opp, order, a.rank):  # D27
                self.pending = Pending(PAID, opp, order, a.rank)
                return
        elif order is Order.MOVE:
            self.builders[a.dest] = self.builders.pop(c)
        elif order is Order.RECRUIT:
            self.builders[c] = (p, NO_RANK)
            self.supply[p] -= 1
            if self.specs[tile].paid and self._paid_options(opp, order, NO_RANK):
                self.pending = Pending(PAID, opp, order)
                return
        elif order is Order.CONFUSE:
            self._send_home(c)
            if self.specs[tile].paid and self.coins[opp] > 0:
                self.pending = Pending(CONFUSE_PAY, opp)
            else:
                self.pending = Pending(CONFUSE_MOVE, p)
            return
        elif order is Order.STAINED_GLASS:
            self.glass.add(c)
        elif order is Order.SCAFFOLDING:
            self.scaffold.add(c)
            if self._frontier():
                self.pending = Pending(SECOND_SCAFFOLD, p)
                return
        elif order is Order.DISASTER:
            tile_gone = self.vaults.pop(c)
            self.glass.discard(c)
            self._discard(tile_gone, vault_up=True)
        elif order is Order.ALTAR:
            self.altars.add(c)
            self.altar_supply -= 1
            if self.altar_supply > 0 and any(v not in self.altars for v in self.vaults):
                self.pending = Pending(SECOND_ALTAR, p)
                return
        self._finish_order()

    def _send_home(self, c: int) -> None:
        p, rank = self.builders.pop(c)
        self.supply[p] += 1
        if rank != NO_RANK:
            self.tokens[p] += 1

    def _finish_order(self) -> None:
        """D10: after the effect (and any paid order) discard the order, then refill."""
        assert self.in_hand is not None
        tile, space = self.in_hand
        self.in_hand = None
        self._discard(tile, vault_up=False)
        self.actions += 1
        self.pending = Pending(MAIN, self.active)
        self.orders[space - 1] = self._draw()
        self._next_action()

    def _action_done(self) -> None:
        self.actions += 1
        self.pending = Pending(MAIN, self.active)
        self._next_action()

    def _next_action(self) -> None:
        if self.actions >= 3:
            self._end_turn()

    def _end_turn(self) -> None:
        self.active ^= 1
        self.actions = 0
        self.last_placed = -1
        self.turn += 1
        self.pending = Pending(MAIN, self.active)

    # --- the stack ---------------------------------------------------------

    def _discard(self, tile: int, vault_up: bool) -> None:
        self.discard.append(tile)
        if vault_up:
            self.discard_up.add(tile)

    def _draw(self) -> Card:
        if not self.stack:
            raise _StackOut()
        tile = self.stack.pop()
        if not self.stack and self.reshuffles == 0:
            # D11: the moment the last tile is drawn for the first time.
            self.reshuffles = 1
            if self.setup.hidden:
                count = self._reshuffle_hidden()
            else:
                pile = sorted(self.discard)
                self.stack = shuffled(pile, self.setup.seed, reshuffle_label(1))[::-1]
                count = len(pile)
            self.discard = []
            self.discard_up = set()
            self.events.append(Event(EventKind.RESHUFFLE, f"the stack ran out: {count} discarded tiles reshuffled (D11)"))
        return tile

    def _reshuffle_hidden(self) -> int:
        """D11 in a hidden game: the discard pile becomes a new deal of positions.

        The pile's faces are public, so the new deck's contents are known as
        a multiset of face classes (and the vault-up tiles by id); where each
        one lies is the new deal's secret.
        """
        pile = self.discard
        knowledge = [self.specs.get(p) for p in pile]
        if any(k is None for k in knowledge):  # pragma: no cover - every discard is face up or vault up
            raise RevealError("a discarded tile whose face nobody has seen")
        shown = self.manifest.order_faces_show_crown
        faces = [k if isinstance(k, FaceClass) else k.face_class(shown) for k in knowledge if k is not None]
        known = frozenset(k.id for k in knowledge if isinstance(k, TileSpec))
        deal = len(self.decks)
        self.decks = (*self.decks, Deck(len(pile), count_faces(faces), known, tuple(pile)))
        for p in pile:
            # Those positions are gone; what was known of them lives on in the deck.
            del self.specs[p]
        self.stack = [Position(deal, i) for i in range(len(pile))][::-1]
        return len(pile)

    # --- reveals (hidden games) --------------------------------------------

    def _due(self) -> tuple[Reveal, ...]:
        """The facts the places in play make public but this engine lacks.

        A tile with its order face up (O1-O3, the order in hand, the stack
        top, an executed order in the discard) is public by its face class;
        a tile vault side up (V1-V3, the cathedral, a vault-up discard) by
        its id.  The stack below its top and the festum removal are never due.
        """
        specs = self.specs
        due: list[Reveal] = []

        def need(p: Any, level: Level) -> None:
            k = specs.get(p)
            if k is None or (level is Level.TILE and not isinstance(k, TileSpec)):
                due.append(Reveal(p, level))

        for p in self.orders:
            if p is not None:
                need(p, Level.FACE)
        if self.in_hand is not None:
            need(self.in_hand[0], Level.FACE)
        for p in self.market:
            if p is not None:
                need(p, Level.TILE)
        if self.stack:
            need(self.stack[-1], Level.FACE)
        for p in self.discard:
            need(p, Level.TILE if p in self.discard_up else Level.FACE)
        for c in sorted(self.vaults):
            need(self.vaults[c], Level.TILE)
        return tuple(due)

    def needed_reveals(self) -> tuple[Reveal, ...]:
        """What a hidden game waits for (pending ``REVEAL``): the public slots not yet opened, in
        a fixed order; empty when nothing is awaited (always in a game dealt from a seed)."""
        return self._awaiting

    @property
    def revealing(self) -> Action | None:
        """The action whose reveals the game waits for (None at the setup, or when not waiting)."""
        return self._revealing

    def deal(self, number: int) -> Deck:
        """What is public about deal ``number`` (the D11 reshuffle's is deal 1, made by the action
        that drew the last tile, possibly while it waits for its reveals)."""
        if 0 <= number < len(self.decks):
            return self.decks[number]
        raise RevealError(f"there is no deal {number} (yet)")

    def known(self, position: Position) -> FaceClass | TileSpec | None:
        """What this hidden game knows of ``position``: nothing, its face class, or its tile."""
        return self.specs.get(position) if self.setup.hidden else None

    def reveal(self, position: Position, fact: FaceClass | int) -> list[Event]:
        """Learn the order-face class (a :class:`FaceClass`) or the tile id of ``position``.

        Only a fact that is due (:meth:`needed_reveals`) is taken, and only if
        it fits what is known: the face class already seen, the number of
        tiles of that class in the deal, and no tile in two places.  Anything
        else raises :class:`RevealError` and changes nothing.  Revealing a
        fact already known again does nothing.  The last fact awaited lets the
        game go on: the events of what then happens are returned (a redeal
        going on, and the action that waited, now in the history).
        """
        if not self.setup.hidden:
            raise RevealError("a game dealt from a seed has no hidden tiles to reveal")
        if not (isinstance(position, tuple) and len(position) == 2
                and all(type(x) is int for x in position)):
            raise RevealError(f"not a position: {position!r}"[:200])
        position = Position(*position)
        shown = self.manifest.order_faces_show_crown
        if isinstance(fact, FaceClass):
            level, face, tile = Level.FACE, fact, None
        elif type(fact) is int:
            tile = self.setup.specs.get(fact)
            if tile is None:
                raise RevealError(f"tile {fact} is not in this game")
            level, face = Level.TILE, tile.face_class(shown)
        else:
            raise RevealError(f"a reveal is a face class or a tile id, not {fact!r}"[:200])
        known = self.specs.get(position)
        if known is not None:
            if _face_of(known, self) != face:
                raise RevealError(f"position {tuple(position)} shows another order face")
            if tile is None or known == tile:
                return []
            if isinstance(known, TileSpec):
                raise RevealError(f"position {tuple(position)} is already known as tile {known.id}")
        wanted = [r.level for r in self._awaiting if r.position == position]
        if not wanted:
            raise RevealError(f"position {tuple(position)} is not due to be revealed")
        if level is Level.TILE and Level.TILE not in wanted:
            raise RevealError(f"only the order face of position {tuple(position)} is public now")
        if known is None:
            self._check_face_count(position.deal, face)
        if tile is not None:
            self._check_tile_free(position, tile.id)
        self.specs[position] = tile if tile is not None else face
        self._legal = None
        specs = self.specs
        # What is still awaited: a face, until anything of its position is known; a tile, until it is.
        awaiting = tuple(r for r in self._awaiting if r.position not in specs
                         or (r.level is Level.TILE and not isinstance(specs[r.position], TileSpec)))
        if awaiting:
            self._awaiting = awaiting
            return []
        mark = len(self.events)
        self._settle((), self.pending.player)  # nothing moved since the wait began: nothing more is due
        return self.events[mark:]

    def _check_face_count(self, deal: int, face: FaceClass) -> None:
        if not 0 <= deal < len(self.decks):
            raise RevealError(f"there is no deal {deal}")
        # Tiles of an earlier deal that went into a later one are counted there.
        copies = self.decks[deal].copies(face) - sum(d.copies(face) for d in self.decks[deal + 1 :])
        seen = sum(1 for p, k in self.specs.items() if p.deal == deal and _face_of(k, self) == face)
        if seen >= copies:
            raise RevealError(f"deal {deal} holds no further tile with that order face")

    def _check_tile_free(self, position: Position, tile: int) -> None:
        for d in self.decks[position.deal + 1 :]:
            if tile in d.known:
                raise RevealError(f"tile {tile} went into a later deal")
        for p in self._live_positions():
            k = self.specs.get(p)
            if p != position and isinstance(k, TileSpec) and k.id == tile:
                raise RevealError(f"tile {tile} is already at position {tuple(p)}")

    def _live_positions(self) -> Iterator[Any]:
        yield from self.stack
        yield from self.discard
        yield from self.out
        yield from (p for p in self.orders if p is not None)
        yield from (p for p in self.market if p is not None)
        yield from self.vaults.values()
        if self.in_hand is not None:
            yield self.in_hand[0]

    def _stack_out(self) -> None:
        """D25/D26: the second stack is empty and a draw was needed."""
        self.events.append(Event(EventKind.STACK_OUT, "the stack ran out a second time: the game ends (D25)"))
        self.end_reason = END_STACK
        if self._cleanup_refill:
            # D26: after a clean-up every builder is home, so no scoring follows.
            self._cleanup_refill = False
            self._game_over()
            return
        self.scoring_space = 0
        self._begin_scoring()

    # --- scoring -----------------------------------------------------------

    def _jester_owners(self) -> list[int]:
        owners = {p for p, r in self.builders.values() if r == JESTER}
        # The player on turn chooses first; with both, the choices are secret (D24).
        return [p for p in (self.active, 1 - self.active) if p in owners]

    def secret_jester_round(self) -> bool:
        """True when a scoring waits for Jester colours and both players own Jesters.

        Then both choices are secret until both are made (D24): over the
        network they travel by commit-reveal.
        """
        return (
            not self.over and self.pending.kind == JESTER_COLORS and not self.jester_choices
            and len(self._jester_owners()) == 2
        )

    def _next_jester_owner(self) -> int | None:
        for p in self._jester_owners():
            if p not in self.jester_choices:
                return p
        return None

    def _begin_scoring(self) -> None:
        self.jester_choices = {}
        nxt = self._next_jester_owner()
        if nxt is not None:
            self.pending = Pending(JESTER_COLORS, nxt)
            return
        self._score()

    def current_areas(self, jester: dict[int, int] | None = None) -> ScoringResult:
        """Score the cathedral as it stands (with the given Jester colours)."""
        printed = {c: self.specs[t].colors for c, t in self.vaults.items()}
        colors = printed
        if jester:
            colors = dict(printed)
            for c, col in jester.items():
                colors[c] |= col
        areas = score_cathedral(colors, printed, self.builders, self.glass, self.altars)
        return ScoringResult(areas, totals(areas), tuple(sorted((jester or {}).items())))

    def _score(self) -> None:
        jester = {c: col for choice in self.jester_choices.values() for c, col in choice}
        self.jester_choices = {}
        result = self.current_areas(jester)
        self.scores[0] += result.points[0]
        self.scores[1] += result.points[1]
        self.scorings += 1
        self.scoring_log.append(result)
        self.events.append(Event(EventKind.SCORING, f"scoring {self.scorings}: +{result.points[0]} / +{result.points[1]}",
                                 self._scored_board()))
        if self.end_reason == END_STACK or self.scorings >= len(self.setup.crown_spaces):
            if not self.end_reason:
                self.end_reason = END_LAST_SCORING
            self._game_over()  # D26: no clean-up, no refill
            return
        scorer = self.active
        self._clean_up()
        self._cleanup_refill = True  # read by _stack_out if this refill empties the stack (D26)
        self._refill_vault_space(self.scoring_space)
        self._cleanup_refill = False
        self.scoring_space = 0
        # D21.4: the opponent of the player whose turn set off the scoring plays next.
        self.active = scorer
        self._end_turn()

    def _scored_board(self) -> ScoredBoard:
        hidden = self.setup.hidden
        return ScoredBoard(
            tuple(sorted((c, opened(self.specs[t]).id if hidden else t) for c, t in self.vaults.items())),
            tuple(sorted((c, p, r) for c, (p, r) in self.builders.items())),
            tuple(sorted(self.glass)), tuple(sorted(self.altars)), tuple(sorted(self.scaffold)))

    def _clean_up(self) -> None:
        """D21 steps 1-3."""
        for p, rank in self.builders.values():
            self.supply[p] += 1
            if rank != NO_RANK:
                self.tokens[p] += 1
        self.builders = {}
        self.scaffold = set()
        for c in sorted(self.vaults):
            if c < 2 * WIDTH:  # rows 1 and 2
                self._discard(self.vaults.pop(c), vault_up=True)
                self.glass.discard(c)
                if c in self.altars:
                    self.altars.discard(c)
                    self.altar_supply += 1  # D23
        if self.vaults:
            shift = min(self.vaults) // WIDTH * WIDTH  # D15: nearest row becomes row 1
            if shift:
                self.vaults = {c - shift: t for c, t in self.vaults.items()}
                self.glass = {c - shift for c in self.glass}
                self.altars = {c - shift for c in self.altars}

    def _game_over(self) -> None:
        self.over = True
        self._legal = ()
        how = "the stack ran out" if self.end_reason == END_STACK else "the last scoring"
        self.events.append(Event(EventKind.GAME_OVER, f"game over after {how}: {self.scores[0]} - {self.scores[1]}"))

    # --- errors ------------------------------------------------------------

    def _explain(self, a: Action) -> IllegalAction:
        """Name the rule an illegal action breaks (only called on the slow path)."""
        pend = self.pending
        if not isinstance(a, Action):
            return IllegalAction("§5", f"not an action: {a!r}")
        if pend.kind == REVEAL:
            return IllegalAction("§5b", "the game waits for tiles to be turned over before anyone decides")
        expected = {
            MAIN: (A.VAULT, A.BUILDER, A.ORDER, A.REDEAL, A.NONE),
            AFTER_REDEAL: (A.VAULT,),
            SECOND_SCAFFOLD: (A.PLACE,),
            SECOND_ALTAR: (A.PLACE,),
            PAID: (A.PAY, A.DECLINE),
            CONFUSE_PAY: (A.PAY, A.DECLINE),
            CONFUSE_MOVE: (A.SHIFT,),
            JESTER_COLORS: (A.JESTER,),
        }[pend.kind]
        who = f"player {pend.player + 1}"
        if a.kind not in expected:
            return IllegalAction("§5", f"{who} must now decide {describe_pending(pend)}, not {a.kind}")
        cells = [c for c in (a.cell, a.dest) if c >= 0]
        if a.kind == A.VAULT:
            if a.space not in (1, 2, 3):
                return IllegalAction("§4", "vault spaces are V1-V3")
            if a.cell in self.vaults or a.cell in self.scaffold:
                return IllegalAction("§5 PLACE VAULT", f"{format_cell(a.cell)} is taken")
            if a.cell not in self._frontier():
                return IllegalAction("§5 PLACE VAULT", f"{format_cell(a.cell)} is neither in row 1 nor next to a tile")
            return IllegalAction("§5 PLACE VAULT", f"a printed wild tile may not touch another ({format_cell(a.cell)})")
        if a.kind == A.NONE:
            return IllegalAction("D7", "'none' is only legal when there is no other action")
        if a.kind == A.REDEAL:
            return IllegalAction("D8", "a redeal is only allowed when no vault tile fits anywhere")
        if a.kind == A.BUILDER:
            if self.last_placed < 0:
                return IllegalAction("D19", "a builder may only follow a PLACE VAULT in the same turn")
            if a.cell != self.last_placed:
                return IllegalAction("D19", f"the builder goes on the tile just placed ({format_cell(self.last_placed)})")
            return IllegalAction("§5 PLACE BUILDER", "no builder left in supply")
        if a.kind == A.ORDER:
            if a.space not in (1, 2, 3):
                return IllegalAction("§4", "order spaces are O1-O3")
            tile = self.orders[a.space - 1]
            order = self.specs[tile].order if tile is not None else None
            if order is not None and not any(x.kind == A.ORDER and x.space == a.space for x in self._legal or ()):
                return IllegalAction("D9", f"{order.value} at O{a.space} has nothing it could act on")
            where = ",".join(format_cell(c) for c in cells)
            return IllegalAction("§7", f"{order.value if order else 'order'} at O{a.space} cannot target {where}")
        if a.kind == A.JESTER:
            return IllegalAction("D24", "each of your Jesters needs one colour its tile does not have")
        if a.kind == A.PAY:
            if pend.kind == PAID and self.pending.rank and a.rank == self.pending.rank:
                return IllegalAction("D22", f"the paid promotion must differ from {RANK_NAME[self.pending.rank]}")
            return IllegalAction("D27", "that paid effect is not possible")
        if a.kind == A.SHIFT:
            return IllegalAction("D20", "the CONFUSE move goes from an opponent builder not on an altar "
                                 "to an adjacent free vault tile")
        return IllegalAction("§7", f"{format_action_safe(a)} is not possible here")

    # --- hashing and serialisation -----------------------------------------

    def canonical(self) -> list[Any]:
        """The whole state as plain msgpack-able values in a fixed order (PROTOCOL.md)."""
        if self.setup.hidden:
            return self._canonical_hidden()
        return [
            "basilica-state/1",
            bytes.fromhex(self.manifest.hash),
            self.options.ruleset.value,
            self.options.festum,
            self.options.festum_removal,
            self.setup.seed,
            sorted(self.vaults.items()),
            *self._canonical_board(),
            self.stack[::-1],
            self.discard,
            sorted(self.discard_up),
            self.out,
            self.orders,
            self.market,
            list(self.in_hand) if self.in_hand else None,
            *self._canonical_tail(),
        ]

    def _canonical_board(self) -> list[Any]:
        return [
            sorted(self.scaffold),
            sorted([c, p, r] for c, (p, r) in self.builders.items()),
            sorted(self.glass),
            sorted(self.altars),
        ]

    def _canonical_tail(self) -> list[Any]:
        """The fields after the tiles, alike in both formats."""
        pend = self.pending
        return [
            self.reshuffles,
            self.pawn,
            self.scorings,
            self.scores,
            self.coins,
            self.supply,
            self.tokens,
            self.altar_supply,
            self.active,
            self.actions,
            self.last_placed,
            self.turn,
            [pend.kind, pend.player, pend.order.value if pend.order else None, pend.rank, pend.paid],
            sorted([p, [list(x) for x in ch]] for p, ch in self.jester_choices.items()),
            self.scoring_space,
            self.over,
            self.end_reason,
        ]

    def _canonical_hidden(self) -> list[Any]:
        """The common knowledge of a hidden game (PROTOCOL.md §8, "Hidden deals").

        Both engines hold the same positions and the same opened facts, so
        both compute this at every acknowledgement; there is no seed and no
        hidden tile in it to differ.  A slot is ``[deal, index, face, tile]``
        with ``face`` and ``tile`` null until opened.
        """
        specs = self.specs
        shown = self.manifest.order_faces_show_crown
        made = self.setup.slots

        def slot(p: Any) -> list[Any] | None:
            if p is None:
                return None
            k = specs.get(p)
            found = made.get((p, k))
            if found is not None:
                return found
            if k is None:
                found = [p.deal, p.index, None, None]
            elif isinstance(k, TileSpec):
                found = [p.deal, p.index, k.face_class(shown).to_list(), k.id]
            else:
                found = [p.deal, p.index, k.to_list(), None]
            made[(p, k)] = found
            return found

        return [
            "basilica-state-hidden/1",
            bytes.fromhex(self.manifest.hash),
            self.options.ruleset.value,
            self.options.festum,
            self.options.festum_removal,
            [d.to_list() for d in self.decks],
            sorted([c, slot(p)] for c, p in self.vaults.items()),
            *self._canonical_board(),
            [slot(p) for p in self.stack[::-1]],
            [[slot(p), p in self.discard_up] for p in self.discard],
            [slot(p) for p in self.out],
            [slot(p) for p in self.orders],
            [slot(p) for p in self.market],
            [slot(self.in_hand[0]), self.in_hand[1]] if self.in_hand else None,
            *self._canonical_tail(),
        ]

    def state_hash(self) -> str:
        """SHA-256 (hex) of the canonical msgpack encoding of the whole state."""
        return hashlib.sha256(msgpack.packb(self.canonical(), use_bin_type=True)).hexdigest()

    def tile_locations(self) -> dict[int, str]:
        """Where each tile of the game is; used to check that none is lost or doubled."""
        where: dict[int, str] = {}

        def put(t: int | None, place: str) -> None:
            if t is None:
                return
            if t in where:
                raise AssertionError(f"tile {t} is both in {where[t]} and {place}")
            where[t] = place

        for t in self.stack:
            put(t, "stack")
        for t in self.discard:
            put(t, "discard")
        for t in self.out:
            put(t, "out")
        for k in range(3):
            put(self.orders[k], f"O{k + 1}")
            put(self.market[k], f"V{k + 1}")
        for c, t in self.vaults.items():
            put(t, format_cell(c))
        if self.in_hand:
            put(self.in_hand[0], "in hand")
        return where

    def __repr__(self) -> str:
        state = f"over ({self.end_reason})" if self.over else f"turn {self.turn}, player {self.active + 1}"
        return f"<Game {state}, scores {self.scores[0]}-{self.scores[1]}>"


def opened(k: Known) -> TileSpec:
    """What is known of a card vault side up: its tile (in a hidden game too, where it was opened)."""
    assert isinstance(k, TileSpec), k
    return k


def _face_of(k: FaceClass | TileSpec, g: Game) -> FaceClass:
    return k if isinstance(k, FaceClass) else k.face_class(g.manifest.order_faces_show_crown)


def _well_typed(a: object) -> bool:
    if type(a) is not Action:
        return False
    kind, space, cell, dest, rank, colors = a
    if type(kind) is not str or type(space) is not int or type(cell) is not int or type(dest) is not int \
            or type(rank) is not int or type(colors) is not tuple:
        return False
    # Only a Jester choice has colours: skip the generator for every other action.
    return not colors or all(type(p) is tuple and len(p) == 2 and type(p[0]) is int and type(p[1]) is int
                             for p in colors)


def describe_pending(p: Pending) -> str:
    return {
        MAIN: "an action (PLACE VAULT, PLACE BUILDER or EXECUTE ORDER)",
        AFTER_REDEAL: "where to place one of the redealt vault tiles (D8)",
        SECOND_SCAFFOLD: "where the second scaffolding tile goes",
        SECOND_ALTAR: "where the second altar goes (D17)",
        PAID: f"whether to pay for the paid {p.order.value if p.order else ''} option (D27)",
        CONFUSE_PAY: "whether to pay to choose the CONFUSE move (D20)",
        CONFUSE_MOVE: "which opponent builder the CONFUSE order moves, and where (D20)",
        JESTER_COLORS: "the extra colour of each of their Jesters (D24)",
        REVEAL: "nothing until the tiles just turned over are revealed",
    }[p.kind]


def format_action_safe(a: Action) -> str:
    try:
        return A.format_action(a)
    except EngineError:
        return repr(a)


__all__ = ["END_LAST_SCORING", "END_STACK", "Event", "EventKind", "Game", "Options", "Pending", "PendingKind", "describe_pending"]
