"""A hidden deal at engine level (issue 10): ``Game.new_hidden`` plays the same
game as ``Game.new`` when every reveal it asks for is answered from the normal
game's own shuffle, and it never holds a fact the rules keep hidden."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from basilica_p2p.bots.greedy import GreedyBot
from basilica_p2p.engine import REVEAL, EngineError, Event, Game, IllegalAction, Options, Ruleset, default_manifest, observe
from basilica_p2p.engine import actions as A
from basilica_p2p.engine.game import END_STACK
from basilica_p2p.engine.hidden import Level, Position, RevealError
from basilica_p2p.engine.manifest import FaceClass, Manifest, TileSpec, manifest_from_json
from basilica_p2p.engine.observation import VaultFace
from basilica_p2p.vectors.playthroughs import CLEANUP, CONFUSE, LAST, TINY, WILD


class Recorded(Game):
    """A normal game that writes down every tile drawn, deal by deal: the oracle.

    ``Position(d, i)`` of a hidden game is the i-th tile drawn from deal d,
    which for tiles not drawn yet is read off the rest of the current stack.
    """

    def _draw(self) -> int:
        deal = self.reshuffles
        tile = super()._draw()
        draws: dict[int, list[int]] = self.__dict__.setdefault("draws", {})
        draws.setdefault(deal, []).append(tile)
        return tile

    def tile_at(self, position: Position) -> int:
        drawn = self.__dict__.get("draws", {}).get(position.deal, [])
        if position.index < len(drawn):
            return drawn[position.index]
        assert position.deal == self.reshuffles, "a reveal of a deal that is not the stack's"
        return self.stack[::-1][position.index - len(drawn)]


def new_pair(manifest: Manifest, options: Options, seed: bytes) -> tuple[Recorded, Game]:
    g = Recorded.new(manifest, options, seed)
    assert isinstance(g, Recorded)
    # Only public information: the manifest, the options, the first player.
    h = Game.new_hidden(manifest, options, g.active)
    return g, h


def answering(h: Game, oracle: Recorded, call: Callable[[], Any], rng: random.Random,
              log: Counter[str]) -> list[Event]:
    """Run ``call`` on ``h``, then open from the oracle every fact the game waits for; the
    events of the whole step (an action's, from its first part to the last reveal's)."""
    shown = h.manifest.order_faces_show_crown
    mark = len(h.events)
    call()
    rounds = 0
    while h.needed_reveals():
        rounds += 1
        assert rounds < 20, "the reveals never satisfied the hidden game"
        assert h.pending.kind == REVEAL and h.legal_actions() == [] and (h.to_move is not None or h.over)
        log["need-reveal"] += 1
        for r in h.needed_reveals():
            tile = oracle.tile_at(r.position)
            spec = h.setup.specs[tile]
            if r.level is Level.FACE or rng.random() < 0.3:
                # A tile turned vault up may be opened in two steps, as a deal opens it.
                h.reveal(r.position, spec.face_class(shown))
            if r.level is Level.TILE:
                h.reveal(r.position, tile)
                log["tile-reveal"] += 1
    if rounds >= 2:
        log["more-reveals-after-reveals"] += 1  # a D8 redeal that went on with new tiles
    assert h.pending.kind != REVEAL
    return h.events[mark:]


def assert_nothing_hidden(h: Game, g: Game) -> None:
    """The leak test: ``h`` knows exactly what the places in play make public."""
    face_up = {p for p in h.orders if p is not None} | {p for p in h.discard if p not in h.discard_up}
    if h.in_hand is not None:
        face_up.add(h.in_hand[0])
    if h.stack:
        face_up.add(h.stack[-1])
    vault_up = {p for p in h.market if p is not None} | set(h.vaults.values()) | set(h.discard_up)
    for p in face_up:
        # Only the face: no id and (unless the box prints it there) no crown.
        assert type(h.known(p)) is FaceClass, (p, h.known(p))
    for p in vault_up:
        assert isinstance(h.known(p), TileSpec), p
    for p in h.stack[:-1] + h.out:
        assert h.known(p) is None, f"{p} below the stack top or set aside is known"
    assert set(h.specs) == face_up | vault_up, "knowledge of a position no longer in play"
    public = {f.tile for _, f in observe(g, 0).vaults} | {f.tile for f in observe(g, 0).market if f}
    public |= {f.tile for f in observe(g, 0).discard if isinstance(f, VaultFace)}
    assert {h.known(p).id for p in vault_up} == public  # type: ignore[union-attr]
    # The state hash covers no tile id beyond the public ones (and those that
    # were public when they went into the reshuffle).
    past = set().union(*(d.known for d in h.decks))
    assert _ids_in_slots(h.canonical()) <= public | past


def _ids_in_slots(value: Any) -> set[int]:
    """Tile ids in a hidden canonical state: the fourth field of every slot."""
    found: set[int] = set()
    if isinstance(value, list):
        if len(value) == 4 and all(type(x) is int for x in value[:2]) and isinstance(value[2], (list, type(None))):
            if type(value[3]) is int:
                found.add(value[3])
        for v in value:
            found |= _ids_in_slots(v)
    return found


def assert_same_game(g: Game, h: Game) -> None:
    assert h.legal_actions() == g.legal_actions()
    assert h.scores == g.scores and h.coins == g.coins
    assert (h.over, h.end_reason, h.to_move) == (g.over, g.end_reason, g.to_move)
    assert h.events == g.events
    assert h.history == g.history
    for p in (0, 1):
        assert observe(h, p) == observe(g, p)
    assert h.reshuffles == g.reshuffles and len(h.stack) == len(g.stack) and len(h.out) == len(g.out)
    assert_nothing_hidden(h, g)


def play_pair(manifest: Manifest, options: Options, seed: bytes, log: Counter[str], max_steps: int = 400) -> None:
    rng = random.Random(seed)
    g, h = new_pair(manifest, options, seed)
    answering(h, g, lambda: None, rng, log)
    assert_same_game(g, h)
    events: list[Event] = []
    for _ in range(max_steps):
        if g.over:
            break
        action = rng.choice(g.legal_actions())
        events = g.apply(action)
        assert answering(h, g, lambda: h.apply(action), rng, log) == events
        assert_same_game(g, h)
        for e in events:
            log[e.kind] += 1
    if g.over:
        log["over:" + g.end_reason] += 1
        kinds = [e.kind for e in events]
        if "stack-out" in kinds and "scoring" not in kinds[kinds.index("stack-out"):]:
            log["stack-end-without-scoring"] += 1  # D26: the refill after a clean-up found no tile
    hidden_hash = h.state_hash()
    assert hidden_hash != g.state_hash()


def seed_of(n: int) -> bytes:
    return n.to_bytes(4, "big") * 8


DEFAULT_OPTIONS = [
    Options(Ruleset.CLASSIC),
    Options(Ruleset.PORTAL2022),
    Options(Ruleset.PORTAL2022, festum=True),
    Options(Ruleset.PORTAL2022, festum=True, festum_removal=True),
]


@pytest.mark.parametrize("options", DEFAULT_OPTIONS, ids=lambda o: f"{o.ruleset.value}-{o.festum}-{o.festum_removal}")
def test_hidden_game_equals_normal_game_default_manifest(options: Options) -> None:
    log: Counter[str] = Counter()
    for n in range(8):
        play_pair(default_manifest(), options, seed_of(n), log)
    assert log["need-reveal"] > 0 and log["tile-reveal"] > 0
    assert log["scoring"] > 0


SMALL = {"tiny": TINY, "wild": WILD, "confuse": CONFUSE, "last": LAST, "cleanup": CLEANUP}


def test_hidden_game_equals_normal_game_small_manifests() -> None:
    """The small boxes reach D8 redeals, the D11 reshuffle and both stack ends (D25, D26)."""
    log: Counter[str] = Counter()
    for name, data in SMALL.items():
        manifest = manifest_from_json(data)
        for ruleset in Ruleset:
            for n in range(12):
                play_pair(manifest, Options(ruleset), seed_of(n * 7 + len(name)), log)
    assert log["redeal"] > 0, log
    assert log["reshuffle"] > 0, log
    assert log["over:" + END_STACK] > 0, log
    assert log["stack-end-without-scoring"] > 0, log
    assert log["more-reveals-after-reveals"] > 0, log


def test_order_faces_showing_crowns() -> None:
    """A box whose order faces print the crown: the crown is then part of the face class."""
    data = dict(LAST, order_faces_show_crown=True)
    manifest = manifest_from_json(data)
    log: Counter[str] = Counter()
    for n in range(6):
        play_pair(manifest, Options(), seed_of(n), log)
    g, h = new_pair(manifest, Options(), seed_of(0))
    answering(h, g, lambda: None, random.Random(0), log)
    assert all(type(h.known(p)) is FaceClass and h.known(p).crown is not None  # type: ignore[union-attr]
               for p in h.orders)


def set_up(manifest: Manifest | None = None, options: Options | None = None) -> tuple[Recorded, Game]:
    g, h = new_pair(manifest or default_manifest(), options or Options(), seed_of(5))
    answering(h, g, lambda: None, random.Random(1), Counter())
    return g, h


def other_face(h: Game, face: FaceClass) -> FaceClass:
    shown = h.manifest.order_faces_show_crown
    return next(f for f in (s.face_class(shown) for s in h.setup.specs.values()) if f != face)


def test_setup_needs_the_public_faces_first() -> None:
    g, h = new_pair(default_manifest(), Options(), seed_of(3))
    assert h.pending.kind == REVEAL and h.to_move == g.to_move and h.legal_actions() == []
    wanted = [(tuple(r.position), r.level) for r in h.needed_reveals()]
    face, tile = Level.FACE, Level.TILE
    assert wanted == [((0, 0), face), ((0, 1), face), ((0, 2), face),
                      ((0, 3), tile), ((0, 4), tile), ((0, 5), tile), ((0, 6), face)]
    with pytest.raises(EngineError, match="waits for tiles"):
        observe(h, 0)
    with pytest.raises(IllegalAction, match="waits for tiles"):
        h.apply(g.legal_actions()[0])
    assert h.seed == b"" and h.hidden and not g.hidden


def test_a_reveal_contradicting_the_known_face_is_refused() -> None:
    g, h = set_up()
    o1 = h.orders[0]
    known = h.known(o1)
    assert isinstance(known, FaceClass)
    before = h.state_hash()
    with pytest.raises(RevealError, match="another order face"):
        h.reveal(o1, other_face(h, known))
    assert h.state_hash() == before
    # O1 is flipped down to V1 by placing V1's tile: now its id is due, and an
    # id of another face class is refused as well.
    action = next(a for a in h.legal_actions() if a.kind == A.VAULT and a.space == 1)
    g.apply(action)
    h.apply(action)
    assert any(r.position == o1 and r.level is Level.TILE for r in h.needed_reveals())
    true_tile = g.tile_at(o1)
    wrong = next(t for t, s in h.setup.specs.items() if s.face_class(False) != known)
    with pytest.raises(RevealError, match="another order face"):
        h.reveal(o1, wrong)
    h.reveal(o1, true_tile)
    assert h.known(o1) == h.setup.specs[true_tile]


def test_a_tile_already_placed_elsewhere_is_refused() -> None:
    # Eight tiles with one order face, half of them crowned: only the ids tell them apart.
    tiles = [{"id": i + 1, "colors": "Y", "crown": i % 2 == 0, "order": "MOVE", "paid": False} for i in range(8)]
    manifest = manifest_from_json({"schema": "basilica-manifest/1", "crown_spaces": [3], "tiles": tiles})
    g, h = new_pair(manifest, Options(), seed_of(9))
    v1, v2 = h.market[0], h.market[1]
    t1 = g.tile_at(v1)
    h.reveal(v1, t1)
    before = h.state_hash()
    with pytest.raises(RevealError, match="already at position"):
        h.reveal(v2, t1)
    assert h.state_hash() == before
    with pytest.raises(RevealError, match="already known as tile"):
        h.reveal(v1, g.tile_at(v2))


def test_only_due_facts_are_taken() -> None:
    g, h = set_up(options=Options(Ruleset.PORTAL2022, festum=True, festum_removal=True))
    shown = h.manifest.order_faces_show_crown
    below_top = h.stack[-2]
    with pytest.raises(RevealError, match="not due"):
        h.reveal(below_top, h.setup.specs[g.tile_at(below_top)].face_class(shown))
    with pytest.raises(RevealError, match="not due"):
        h.reveal(h.out[0], 1)
    _, fresh = new_pair(g.manifest, g.options, seed_of(5))
    with pytest.raises(RevealError, match="only the order face"):
        fresh.reveal(fresh.orders[0], g.tile_at(fresh.orders[0]))  # the crown under an order face stays hidden
    with pytest.raises(RevealError, match="not due"):
        h.reveal(h.orders[0], g.tile_at(h.orders[0]))  # once the face is known as well
    with pytest.raises(RevealError, match="not in this game"):
        h.reveal(h.market[0], 10_000)
    with pytest.raises(RevealError, match="not a position"):
        h.reveal("top", 1)  # type: ignore[arg-type]
    h.reveal(h.orders[0], h.known(h.orders[0]))  # a known fact again changes nothing
    with pytest.raises(RevealError, match="no hidden tiles"):
        g.reveal(Position(0, 0), 1)
    assert g.needed_reveals() == ()


def test_revealing_a_known_fact_again_sets_off_no_events() -> None:
    # reveal() answers with the events it set off: none here, as a list like every other answer.
    g, h = set_up()
    state = h.state_hash()
    face, tile = h.known(h.orders[0]), g.tile_at(h.market[0])
    assert isinstance(face, FaceClass)
    assert h.reveal(h.orders[0], face) == []
    assert h.reveal(h.market[0], tile) == []
    assert h.state_hash() == state


def test_a_face_class_has_only_as_many_tiles_as_the_box() -> None:
    # Every tile of its own face class: a second tile with O1's face cannot exist.
    tiles = [{"id": i + 1, "colors": c, "crown": False, "order": o, "paid": False}
             for i, (c, o) in enumerate([(c, o) for o in ("MOVE", "STAINED_GLASS") for c in "YBRG"])]
    manifest = manifest_from_json({"schema": "basilica-manifest/1", "crown_spaces": [1], "tiles": tiles})
    g, h = new_pair(manifest, Options(), seed_of(2))
    face = manifest.face_class(g.orders[0])
    h.reveal(h.orders[0], face)
    with pytest.raises(RevealError, match="no further tile"):
        h.reveal(h.orders[1], face)


def test_an_action_waits_for_its_reveals_before_it_joins_the_history() -> None:
    g, h = set_up()
    action = next(a for a in h.legal_actions() if a.kind == A.VAULT)
    top, mover = h.stack[-1], h.to_move
    g.apply(action)
    h.apply(action)
    # Applied once, waiting: nobody decides, the turn is still the mover's, the history is not
    # yet changed, and nothing more can be applied.
    assert h.pending.kind == REVEAL and h.to_move == mover and h.revealing == action
    assert h.legal_actions() == [] and h.history == []
    with pytest.raises(IllegalAction, match="waits for tiles"):
        h.apply(action)
    # The old stack top went to O-space face up: its face was known; the new top is below it.
    levels = {(r.position, r.level) for r in h.needed_reveals()}
    assert (h.stack[-1], Level.FACE) in levels and (top, Level.FACE) not in levels
    answering(h, g, lambda: None, random.Random(3), Counter())
    assert h.history == [action] and h.revealing is None and h.legal_actions() == g.legal_actions()


def test_hidden_canonical_state() -> None:
    g, h = set_up()
    c = h.canonical()
    assert c[0] == "basilica-state-hidden/1" and g.canonical()[0] == "basilica-state/1"
    # PROTOCOL.md §8 "Hidden deals": 34 elements, the tail shared with the normal state.
    assert len(c) == 34 and c[17:] == g.canonical()[18:] and c[1:5] == g.canonical()[1:5]
    o1 = h.known(h.orders[0])
    assert c[14][0] == [0, 0, o1.to_list(), None]  # type: ignore[union-attr]
    v1 = h.known(h.market[0])
    assert c[15][0] == [0, 3, v1.face_class(False).to_list(), v1.id]  # type: ignore[union-attr]
    assert c[11][0][2] is not None and all(slot[2:] == [None, None] for slot in c[11][1:])
    assert c[5] == [[len(h.setup.specs), c[5][0][1], []]] and sum(f[-1] for f in c[5][0][1]) == len(h.setup.specs)
    assert g.seed not in repr(c).encode()
    # Two engines that learnt the same facts agree on the hash: it holds no private fact.
    _, h2 = new_pair(h.manifest, h.options, seed_of(5))
    for p in [*h.orders, *h.market, h.stack[-1]]:
        k = h.known(p)
        h2.reveal(p, k.id if isinstance(k, TileSpec) else k)  # type: ignore[union-attr,arg-type]
    assert h2.state_hash() == h.state_hash()


def test_a_bot_plays_a_hidden_game_unchanged() -> None:
    g, h = set_up()
    log: Counter[str] = Counter()
    rng = random.Random(4)
    m = g.manifest
    bots = [GreedyBot(m, 1), GreedyBot(m, 2)], [GreedyBot(m, 1), GreedyBot(m, 2)]
    for _ in range(60):
        if g.over:
            break
        p = g.to_move
        assert p is not None
        a = bots[0][p].choose(observe(g, p), g.legal_actions())
        b = bots[1][p].choose(observe(h, p), h.legal_actions())
        assert a == b
        g.apply(a)
        answering(h, g, lambda: h.apply(b), rng, log)
    assert log["need-reveal"] > 0
