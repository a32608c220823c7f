"""Golden playthroughs and setup state hashes (protocol/PROTOCOL.md section 8).

The sample replays never reach some corners of the rules, and a second
engine written from the documents alone could only find out how the state
looks there by guessing.  These vectors are short whole games that do reach
them, each decision in notation with the state hash after it, and the
canonical state bytes at the states where something happened on its own
(a redeal, a reshuffle, a scoring, the end of the stack).

The games are played by a small scripted policy (:func:`choose`): a list of
preferences, the first that some legal action meets wins, and ties are
broken by a seed stream of the game's own seed.  Seeds and manifests were
picked by trying seed indexes until each game reached what it is there for
(:func:`search`); the test checks that it still does.  Nothing else of the
policy matters to a reader of the vectors: the decisions are all written out.

    python -m basilica_p2p.vectors.playthroughs --write protocol/vectors
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import msgpack

from ..engine import CONFUSE_PAY, JESTER, Action, Event, Game, Manifest, Options, Order, default_manifest, format_action
from ..engine import actions as A
from ..engine.manifest import manifest_from_json
from ..engine.rng import SeedStream
from ._files import emit, parser
from ._inputs import seed as commit_reveal_seed

PLAYTHROUGHS = "playthroughs.json"
SETUPS = "state-hash-setups.json"
FILES = (PLAYTHROUGHS, SETUPS)
POLICY_LABEL = b"playthrough-policy"

Prefer = Callable[[Game, Action], bool]


# --- small manifests ------------------------------------------------------------


def _tiles(specs: Iterable[tuple[str, str, bool, bool]], first_id: int = 1) -> list[dict[str, Any]]:
    return [{"id": first_id + i, "colors": c, "crown": crown, "order": o, "paid": paid}
            for i, (c, o, crown, paid) in enumerate(specs)]


def _manifest(name: str, crown_spaces: list[int], tiles: list[dict[str, Any]],
              supply: tuple[int, int, int] = (5, 4, 1)) -> dict[str, Any]:
    return {
        "schema": "basilica-manifest/1",
        "name": name,
        "crown_spaces": crown_spaces,
        "order_faces_show_crown": False,
        "supply": {"builders": supply[0], "promotion_tokens": supply[1], "coins": supply[2]},
        "tiles": tiles,
        "festum": {"tiles": [], "altar_tokens": 0},
    }


_SINGLE = ("Y", "B", "R", "G")
_WILD = ("Y/B", "Y/R", "Y/G", "B/R", "B/G", "R/G")

# Seven tiles: six are dealt and the stack holds one, so the first refill
# draws the last tile while nothing has been discarded yet.
TINY = _manifest("playthrough: seven tiles", [1], _tiles(
    [(c, "PROMOTE", False, True) for c in _SINGLE]
    + [("Y", "RECRUIT", False, False), ("B", "MOVE", False, False), ("R", "STAINED_GLASS", False, False)]))

# Mostly printed wild tiles, which may not touch each other: the market soon
# holds nothing that fits, so V* redeals happen, and a redeal can empty the stack.
WILD = _manifest("playthrough: wild tiles", [1], _tiles(
    [(w, o, False, False) for w in _WILD for o in ("MOVE", "STAINED_GLASS")]
    + [(c, "RECRUIT", False, False) for c in _SINGLE]))

# Paid CONFUSE tiles and enough RECRUITs that both players have builders next
# to each other.
CONFUSE = _manifest("playthrough: paid confuse", [1], _tiles(
    [(_SINGLE[i % 4], "CONFUSE", False, True) for i in range(8)]
    + [(_SINGLE[i % 4], "RECRUIT", False, False) for i in range(8)]
    + [(_SINGLE[i % 4], "MOVE", False, False) for i in range(4)]))

# One crown space: the first crowned vault placed sets off the last scoring.
LAST = _manifest("playthrough: one crown space", [2], _tiles(
    [(_SINGLE[i % 4], "PROMOTE", i % 3 == 0, True) for i in range(12)]
    + [(_SINGLE[i % 4], "RECRUIT", i % 3 == 0, False) for i in range(8)]))

# Two crown spaces and a short stack: a scoring's refill can be the draw that
# finds the second stack empty (D26).
CLEANUP = _manifest("playthrough: scoring then stack end", [1, 2], _tiles(
    [(_SINGLE[i % 4], "RECRUIT", i % 4 == 1, False) for i in range(6)]
    + [(_SINGLE[i % 4], "MOVE", i % 4 == 2, False) for i in range(4)]))


# --- the policy -----------------------------------------------------------------


def _is(kind: str) -> Prefer:
    return lambda g, a: a.kind == kind


def _order_is(order: Order) -> Prefer:
    def pred(g: Game, a: Action) -> bool:
        tile = g.orders[a.space - 1] if a.kind == A.ORDER else None
        return tile is not None and g.spec(tile).order is order
    return pred


def _own_jester(g: Game, p: int) -> bool:
    return any(q == p and r == JESTER for q, r in g.builders.values())


def _promote_to_jester(g: Game, a: Action) -> bool:
    return _order_is(Order.PROMOTE)(g, a) and a.rank == JESTER and not _own_jester(g, g.active)


def _vault_crowned(crowned: bool) -> Prefer:
    def pred(g: Game, a: Action) -> bool:
        tile = g.market[a.space - 1] if a.kind == A.VAULT else None
        return tile is not None and g.spec(tile).crown is crowned
    return pred


def _crown_when_both_jesters(g: Game, a: Action) -> bool:
    return _vault_crowned(True)(g, a) and _own_jester(g, 0) and _own_jester(g, 1)


def _crown_on_empty_stack(g: Game, a: Action) -> bool:
    return _vault_crowned(True)(g, a) and g.reshuffles == 1 and not g.stack


def _confuse_pay(g: Game, a: Action) -> bool:
    return g.pending.kind == CONFUSE_PAY and a.kind == A.PAY


def choose(g: Game, prefs: tuple[Prefer, ...], stream: SeedStream) -> Action:
    legal = g.legal_actions()
    for pred in prefs:
        hits = [a for a in legal if pred(g, a)]
        if hits:
            return hits[stream.below(len(hits))]
    return legal[stream.below(len(legal))]


# --- the games ------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    name: str
    exercises: tuple[str, ...]
    about: str
    manifest: dict[str, Any] | None  # None: the default manifest, given by its hash only
    options: Options
    seed_index: int  # found by search()
    prefs: tuple[Prefer, ...]

    def parsed_manifest(self) -> Manifest:
        return default_manifest() if self.manifest is None else manifest_from_json(self.manifest)

    def seed(self, index: int | None = None) -> bytes:
        n = self.seed_index if index is None else index
        return hashlib.sha256(b"basilica-p2p/playthrough/v1\x00" + self.name.encode() + b"\x00"
                              + n.to_bytes(4, "big")).digest()


GAMES: tuple[Spec, ...] = (
    Spec("empty-reshuffle", ("empty-reshuffle", "stack-end-in-refill", "stack-end-jesters", "actions-3-at-end"),
         "The first refill draws the last tile before anything was discarded: the reshuffle makes an empty "
         "stack. A builder promoted to Jester as the third action; that order's refill ends the game: the "
         "action count reads 3 while the Jester colour is chosen, and pending stays 'jester' at the end.",
         TINY, Options(), 0, (_promote_to_jester, _is(A.BUILDER), _is(A.VAULT))),
    Spec("redeal", ("redeal", "redeal-after-placement", "stack-end-in-redeal"),
         "Wild tiles: V* redeals, one of them after a vault placement of the same turn (it clears the cell "
         "just placed), and the stack runs out in a redeal.",
         WILD, Options(), 3, (_is(A.VAULT), _is(A.REDEAL))),
    Spec("paid-confuse", ("paid-confuse", "stack-end-in-refill"),
         "The opponent pays for a CONFUSE and chooses the move; the game ends when a refill finds the second "
         "stack empty.",
         CONFUSE, Options(), 0,
         (_confuse_pay, _order_is(Order.CONFUSE), _order_is(Order.RECRUIT), _is(A.BUILDER), _is(A.VAULT))),
    Spec("vault-refill-stack-end", ("stack-end-in-vault-refill",),
         "Only vault placements: the game ends in the refill of a placement, after the order tile above moved "
         "down and before a new one is drawn; the cell just placed is kept at the end.",
         CONFUSE, Options(), 0, (_is(A.VAULT),)),
    Spec("last-scoring-jesters", ("last-scoring-jesters",),
         "Both players own Jesters when the last crown space is reached: Jester colours, player on turn "
         "first, then the last scoring; pending stays 'jester' and the vault-space element keeps the space.",
         LAST, Options(), 0,
         (_crown_when_both_jesters, _promote_to_jester, _is(A.BUILDER), _vault_crowned(False),
          _is(A.DECLINE))),
    Spec("cleanup-stack-end", ("cleanup-refill-stack-end",),
         "A scoring that does not end the game, whose refill after the clean-up needs a draw from the empty "
         "second stack: the game ends with no second scoring (D26).",
         CLEANUP, Options(), 0, (_is(A.BUILDER), _crown_on_empty_stack, _vault_crowned(False))),
)


# --- playing and describing a game ------------------------------------------------


@dataclass
class Step:
    before: Game
    action: Action
    events: list[Event]
    after: Game


def play(spec: Spec, index: int | None = None, limit: int = 2000) -> list[Step]:
    seed = spec.seed(index)
    g = Game.new(spec.parsed_manifest(), spec.options, seed)
    stream = SeedStream(seed, POLICY_LABEL)
    steps: list[Step] = []
    while not g.over and len(steps) < limit:
        before = g.clone()
        action = choose(g, spec.prefs, stream)
        events = g.apply(action)
        steps.append(Step(before, action, events, g.clone()))
    return steps


def _kinds(events: list[Event]) -> list[str]:
    return [e.kind for e in events]


def exercised(steps: list[Step]) -> set[str]:
    """Which of the features named in :data:`GAMES` this game reaches (the search's test)."""
    found: set[str] = set()
    if not steps or not steps[-1].after.over:
        return found
    last = steps[-1]
    end = last.after
    for s in steps:
        kinds = _kinds(s.events)
        if s.action.kind == A.REDEAL:
            if "stack-out" in kinds:
                found.add("stack-end-in-redeal")
            elif s.after.pending.kind == "after-redeal":
                found.add("redeal")
                if s.before.last_placed >= 0:
                    found.add("redeal-after-placement")
        if s.action.kind == A.PAY and s.before.pending.kind == CONFUSE_PAY:
            found.add("paid-confuse")
        if "reshuffle" in kinds and not s.after.stack and not s.after.over:
            found.add("empty-reshuffle")
        if "stack-out" in kinds and s.action.kind != A.REDEAL:
            if "scoring" in kinds[: kinds.index("stack-out")]:
                found.add("cleanup-refill-stack-end")
            else:
                found.add("stack-end-in-refill")
                if s.action.kind == A.VAULT:
                    found.add("stack-end-in-vault-refill")
    jesters = [s for s in steps if s.action.kind == A.JESTER and s.after.scorings == s.before.scorings + 1]
    if end.end_reason == "stack" and last.action.kind == A.JESTER and "stack-out" not in _kinds(last.events):
        found.add("stack-end-jesters")
    if end.end_reason == "last-scoring" and last.action.kind == A.JESTER and jesters and jesters[-1] is last:
        chooser = [s.before.pending.player for s in steps[-2:] if s.action.kind == A.JESTER]
        if len(chooser) == 2 and chooser[0] == last.before.active:
            found.add("last-scoring-jesters")
    if end.actions == 3:
        found.add("actions-3-at-end")
    return found


def search(spec: Spec, tries: int = 2000) -> int | None:
    """The first seed index whose game reaches every feature of ``spec``."""
    for n in range(tries):
        if set(spec.exercises) <= exercised(play(spec, n)):
            return n
    return None


def _packed(g: Game) -> bytes:
    packed: bytes = msgpack.packb(g.canonical(), use_bin_type=True)  # msgpack is untyped: its result is Any
    return packed


def _options(o: Options) -> dict[str, Any]:
    return {"ruleset": o.ruleset.value, "festum": o.festum, "removal": o.festum_removal}


def describe(spec: Spec) -> dict[str, Any]:
    steps = play(spec)
    m = spec.parsed_manifest()
    setup = Game.new(m, spec.options, spec.seed())
    decisions = []
    canonical = [{"after": 0, "bytes": _packed(setup).hex()}]
    for i, s in enumerate(steps):
        assert s.before.to_move is not None
        decisions.append({"ply": i, "player": s.before.to_move + 1, "action": format_action(s.action),
                          "events": _kinds(s.events), "state": s.after.state_hash()})
        # The bytes where the rules acted by themselves, or a sub-decision is open.
        if s.events or s.after.pending.kind != "main":
            canonical.append({"after": i + 1, "bytes": _packed(s.after).hex()})
    end = steps[-1].after
    return {
        "name": spec.name,
        "exercises": list(spec.exercises),
        "about": spec.about,
        "manifest": spec.manifest,
        "manifest_hash": m.hash,
        "options": _options(spec.options),
        "seed": spec.seed().hex(),
        "setup_state": setup.state_hash(),
        "decisions": decisions,
        "canonical": canonical,
        "end": {"scores": list(end.scores), "end_reason": end.end_reason, "turn": end.turn,
                "scorings": end.scorings},
    }


def playthroughs() -> dict[str, Any]:
    return {
        "description": "Whole games, every decision in notation (docs/notation.md) with the state hash after "
                       "it (PROTOCOL.md section 8), and the canonical state bytes (msgpack, hex) after the "
                       "decisions listed in 'canonical' ('after': n = once n decisions are applied, 0 = setup). "
                       "'events' names what the rules did by themselves during the decision. 'manifest' is "
                       "inline (schema basilica-manifest/1, MANIFEST.md); its hash is 'manifest_hash'.",
        "games": [describe(s) for s in GAMES],
    }


# --- setup state hashes -------------------------------------------------------------

# Differs from the default in fields that change the state right after setup
# (the supplies) and in one that does not (the crown spaces), with festum
# tiles and altar tokens of its own.
CUSTOM = _manifest("setup vector: other supplies", [4, 8], _tiles(
    [(_SINGLE[i % 4], ("PROMOTE", "RECRUIT", "MOVE")[i % 3], i % 5 == 0, i % 3 != 2) for i in range(12)]
    + [(w, "DISASTER", False, False) for w in _WILD]), supply=(3, 2, 0))
CUSTOM["festum"] = {"tiles": _tiles([(c, "ALTAR", c == "G", False) for c in _SINGLE], 19), "altar_tokens": 6}

# Element names of Game.canonical(), in order (PROTOCOL.md section 8).
FIELDS = (
    "schema", "manifest", "ruleset", "festum", "removal", "seed", "vaults", "scaffolding", "builders",
    "stained_glass", "altars", "stack", "discard", "discard_vault_up", "out", "orders", "market", "in_hand",
    "reshuffles", "pawn", "scorings", "scores", "coins", "supply", "tokens", "altar_supply", "active",
    "actions", "last_placed", "turn", "pending", "jester_colors", "scoring_space", "over", "end_reason",
)

SETUP_CASES: tuple[tuple[str, dict[str, Any] | None, Options], ...] = (
    ("festum", None, Options(festum=True)),
    ("festum-removal", None, Options(festum=True, festum_removal=True)),
    ("custom-manifest", CUSTOM, Options(festum=True)),
)


def _named(g: Game) -> dict[str, Any]:
    return {k: (v.hex() if isinstance(v, bytes) else v) for k, v in zip(FIELDS, g.canonical(), strict=True)}


def setups() -> dict[str, Any]:
    seed = commit_reveal_seed()
    cases = []
    for name, manifest, options in SETUP_CASES:
        m = default_manifest() if manifest is None else manifest_from_json(manifest)
        g = Game.new(m, options, seed)
        cases.append({"name": name, "manifest": manifest, "manifest_hash": m.hash, "options": _options(options),
                      "canonical": _packed(g).hex(), "state": g.state_hash(), "fields": _named(g)})
    return {
        "description": "The state right after setup (PROTOCOL.md sections 7 and 8) from commit-reveal.json's "
                       "seed: with the festum expansion, with the festum removal, and with a manifest other "
                       "than the default ('manifest' inline; null = the default manifest). 'canonical' is the "
                       "hashed msgpack (hex), 'fields' the same elements by name.",
        "seed": seed.hex(),
        "setups": cases,
    }


def _json(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, indent=1) + "\n").encode("utf-8")


def build() -> dict[str, bytes]:
    """File name -> exact contents."""
    return {PLAYTHROUGHS: _json(playthroughs()), SETUPS: _json(setups())}


def main(argv: list[str] | None = None) -> int:
    command = parser("Build the playthrough and setup state-hash vectors.")
    command.add_argument("--search", action="store_true", help="print the first fitting seed index of each game")
    args = command.parse_args(argv)
    if args.search:
        for spec in GAMES:
            print(f"{spec.name}: {search(spec)}")
        return 0
    emit(build(), args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
