"""Property tests over random legal play (hypothesis draws the seed, the
ruleset and options, the manifest and the choices).

Checked after every action: nothing raises; every tile is in exactly one
place; builders, promotion tokens, coins and altars are conserved; at most one
builder and one glass per vault tile; scores never go down; no two printed
wild tiles touch; MAIN always offers an action and never ``none`` (D7).
Besides: observations never reveal hidden facts (D18, D24), illegal actions
leave the state unchanged, replays are deterministic, notation round-trips,
push/pop and clone behave.
"""

from __future__ import annotations

import dataclasses
import random
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basilica_p2p.engine import (
    Game,
    IllegalAction,
    NotationError,
    OrderFace,
    default_manifest,
    format_action,
    observe,
    parse_action,
    reconstruct_default,
)
from basilica_p2p.engine.actions import KINDS, Action
from basilica_p2p.engine.cells import neighbours
from basilica_p2p.engine.components import BLUE, GREEN, RED, YELLOW
from basilica_p2p.engine.game import JESTER_COLORS, MAIN

from support.helpers import CLASSIC, FESTUM, FESTUM_REMOVAL, PORTAL

_DEFAULT = default_manifest()
_PAIRS = [YELLOW | BLUE, YELLOW | RED, YELLOW | GREEN, BLUE | RED, BLUE | GREEN, RED | GREEN]


def _wild_heavy() -> object:
    """Most tiles wild: redeals (D8) happen often."""
    tiles = tuple(dataclasses.replace(t, colors=t.colors if i < 6 else _PAIRS[i % 6])
                  for i, t in enumerate(_DEFAULT.tiles))
    return dataclasses.replace(_DEFAULT, tiles=tiles, name="wild heavy")


MANIFESTS = {
    "default": _DEFAULT,
    "no-crowns": reconstruct_default(0),  # every game ends on the stack (D25)
    "few-crowns": reconstruct_default(10),
    "wild-heavy": _wild_heavy(),
    # ten tiles and close crown spaces: quick reshuffles, empty stacks, D26
    "small": dataclasses.replace(_DEFAULT, tiles=_DEFAULT.tiles[:10], crown_spaces=(2, 4, 6)),
    "crowns-shown": dataclasses.replace(_DEFAULT, order_faces_show_crown=True),
}
OPTIONS = {"classic": CLASSIC, "portal": PORTAL, "festum": FESTUM, "festum-removal": FESTUM_REMOVAL}

seeds = st.binary(min_size=32, max_size=32)
manifests = st.sampled_from(sorted(MANIFESTS))
options = st.sampled_from(sorted(OPTIONS))
choices = st.integers(min_value=0, max_value=2**32 - 1)

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOAK = settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MAX_ACTIONS = 2000  # a game is far shorter; guards against an endless loop


def pick(g: Game, rnd: random.Random) -> Action:
    """A legal action: first a kind/market space uniformly, then one of its actions,
    so that rare kinds (builders, orders, Jester) are played as often as vaults."""
    groups: dict[tuple[str, int], list[Action]] = defaultdict(list)
    for a in g.legal_actions():
        groups[(a.kind, a.space)].append(a)
    key = rnd.choice(sorted(groups))
    return rnd.choice(groups[key])


# --- invariants ------------------------------------------------------------------------


def check_invariants(g: Game, prev_scores: list[int]) -> None:
    m = g.manifest
    # every tile in exactly one place (tile_locations raises on a doubled tile)
    where = g.tile_locations()
    assert set(where) == set(g.specs), "a tile is missing"
    assert len(g.specs) == len(m.tiles) + (len(m.festum_tiles) if g.options.festum else 0)
    # builders: board + supply = manifest, per player; tokens likewise
    for p in (0, 1):
        on_board = [r for (q, r) in g.builders.values() if q == p]
        assert len(on_board) + g.supply[p] == m.builders
        assert 0 <= g.supply[p] <= m.builders
        ranked = sum(1 for r in on_board if r != 0)
        assert ranked + g.tokens[p] == m.promotion_tokens
        assert g.tokens[p] >= 0
        assert all(r in (0, *g.options.ruleset.ranks) for r in on_board)
    # coins
    assert sum(g.coins) == 2 * m.coins and all(0 <= c <= 2 for c in g.coins)
    # altars
    if g.options.festum:
        assert len(g.altars) + g.altar_supply == m.altar_tokens
        assert g.altar_supply >= 0
    else:
        assert not g.altars and g.altar_supply == 0
    # builders, glass, altars only on vault tiles (dict/set: at most one each)
    assert set(g.builders) <= set(g.vaults)
    assert g.glass <= set(g.vaults)
    assert g.altars <= set(g.vaults)
    assert not (g.scaffold & set(g.vaults))
    for c in list(g.vaults) + list(g.scaffold):
        assert c >= 0
    # no two printed wild tiles adjacent (§5)
    for c, t in g.vaults.items():
        if g.specs[t].wild:
            for n in neighbours(c):
                if n in g.vaults:
                    assert not g.specs[g.vaults[n]].wild, "two wild tiles touch"
    # scores never go down
    assert g.scores[0] >= prev_scores[0] and g.scores[1] >= prev_scores[1]
    assert g.scorings <= len(m.crown_spaces)
    if g.over:
        assert g.to_move is None and g.legal_actions() == []
        assert g.end_reason in ("stack", "last-scoring")
        return
    acts = g.legal_actions()
    assert acts, "the player to move must have a legal action (D7)"
    assert g.to_move == g.pending.player
    if g.pending.kind == MAIN:
        assert all(a.kind != "none" for a in acts), "D7: MAIN always has a real action"
        # between actions the market is full and nothing is in hand
        assert None not in g.orders and None not in g.market and g.in_hand is None
        assert g.to_move == g.active and 0 <= g.actions < 3


def play_game(seed: bytes, mname: str, oname: str, choice_seed: int, each=None) -> Game:
    g = Game.new(MANIFESTS[mname], OPTIONS[oname], seed)
    rnd = random.Random(choice_seed)
    prev = [0, 0]
    check_invariants(g, prev)
    n = 0
    while not g.over:
        n += 1
        assert n < MAX_ACTIONS
        a = pick(g, rnd)
        if each is not None:
            each(g, a, rnd)
        g.apply(a)
        check_invariants(g, prev)
        prev = list(g.scores)
    return g


# --- 1. invariants, notation, replay ------------------------------------------------------


def _roundtrip_all(g: Game, a: Action, rnd: random.Random) -> None:
    for x in g.legal_actions():
        text = format_action(x)
        assert parse_action(text) == x, text
        assert str(x) == text


@FAST
@given(seed=seeds, mname=manifests, oname=options, choice_seed=choices)
def test_random_play_keeps_invariants_and_replays(seed, mname, oname, choice_seed) -> None:
    hashes = []
    g = play_game(seed, mname, oname, choice_seed,
                  each=lambda g, a, r: (_roundtrip_all(g, a, r), hashes.append(g.state_hash())))
    assert g.over
    # same seed, same actions: same states, same end
    h = Game.new(MANIFESTS[mname], OPTIONS[oname], seed)
    for i, a in enumerate(g.history):
        assert h.state_hash() == hashes[i]
        h.apply(a)
    assert h.state_hash() == g.state_hash()
    assert h.scores == g.scores and h.over


# --- 2. observation never reveals hidden facts ---------------------------------------------------


def _face(g: Game, t: int) -> tuple:
    s = g.specs[t]
    key = (s.order, s.colors, s.paid)
    return key + ((s.crown,) if g.manifest.order_faces_show_crown else ())


def _hidden_variant(g: Game, rnd: random.Random) -> Game:
    """A game that differs from ``g`` only in what no player may know: the
    order of the stack below its top, which tile (and so which crown) hides
    behind each order face, which tiles went out unseen, the other player's
    committed Jester colours."""
    h = g.clone()
    # the stack below its top (internally the top is the end of the list)
    below = h.stack[:-1]
    rnd.shuffle(below)
    h.stack[:-1] = below
    # tiles removed face down: exchange with tiles below the top of the stack
    if h.out and len(h.stack) > 1:
        out = list(h.out)
        for _ in range(3):
            i, j = rnd.randrange(len(out)), rnd.randrange(len(h.stack) - 1)
            out[i], h.stack[j] = h.stack[j], out[i]
        h.out = sorted(out)
    # tiles showing only their order face: swap tiles with the same face
    slots: list[tuple[str, int]] = [("orders", k) for k in range(3) if h.orders[k] is not None]
    slots += [("stack", k) for k in range(len(h.stack))]
    slots += [("discard", k) for k, t in enumerate(h.discard) if t not in h.discard_up]
    if h.in_hand is not None:
        slots.append(("in_hand", 0))

    def get(slot):
        name, k = slot
        return h.in_hand[0] if name == "in_hand" else getattr(h, name)[k]

    def put(slot, t):
        name, k = slot
        if name == "in_hand":
            h.in_hand = (t, h.in_hand[1])
        else:
            getattr(h, name)[k] = t

    by_face: dict[tuple, list] = defaultdict(list)
    for s in slots:
        by_face[_face(h, get(s))].append(s)
    for group in by_face.values():
        if len(group) > 1:
            tiles = [get(s) for s in group]
            rnd.shuffle(tiles)
            for s, t in zip(group, tiles):
                put(s, t)
    h._legal = None
    return h


def _check_hidden(g: Game, a: Action, rnd: random.Random) -> None:
    for p in (0, 1):
        obs = observe(g, p)
        if not g.manifest.order_faces_show_crown:
            faces = [f for f in obs.orders if f is not None] + [f for f in obs.discard if isinstance(f, OrderFace)]
            if obs.stack_top is not None:
                faces.append(obs.stack_top)
            if obs.in_hand is not None:
                faces.append(obs.in_hand[1])
            assert all(f.crown is None for f in faces), "an order face shows its crown"
        assert obs.stack_size == len(g.stack)
    h = _hidden_variant(g, rnd)
    h.tile_locations()
    for p in (0, 1):
        assert observe(g, p) == observe(h, p)
    # D24: a committed Jester choice is hidden from the other player
    if g.pending.kind == JESTER_COLORS and g.jester_choices:
        (owner, choice), = g.jester_choices.items()
        owner_cells = [c for c, _ in choice]
        alternatives = [
            tuple(zip(owner_cells, combo))
            for combo in _colour_combos(g, owner_cells)
        ]
        k = g.clone()
        k.jester_choices[owner] = rnd.choice(alternatives)
        assert observe(g, 1 - owner) == observe(k, 1 - owner)


def _colour_combos(g: Game, cells: list[int]):
    from itertools import product

    opts = [[c for c in (YELLOW, BLUE, RED, GREEN) if not g.specs[g.vaults[x]].colors & c] for x in cells]
    return product(*opts)


@FAST
@given(seed=seeds, mname=manifests, oname=options, choice_seed=choices)
def test_observation_never_contains_hidden_facts(seed, mname, oname, choice_seed) -> None:
    play_game(seed, mname, oname, choice_seed, each=_check_hidden)


def test_hidden_variant_really_differs() -> None:
    # guard for the property above: the variant changes the hidden state
    g = Game.new(_DEFAULT, FESTUM_REMOVAL, bytes(32))
    h = _hidden_variant(g, random.Random(1))
    assert h.state_hash() != g.state_hash()
    assert observe(h, 0) == observe(g, 0)


# --- 3. illegal actions leave the state unchanged ---------------------------------------------


_CELLS = [f"{c}{r}" for c in "abcde" for r in range(1, 8)] + ["f1", "a0", "z9", "a", ""]
_TEMPLATES = ["V{s}:{c}", "V*", "B:{c}", "O{s}:{c}", "O{s}:{c}-{d}", "O{s}:{c}={r}", "{c}", "{c}-{d}",
              "$", "${c}", "${c}={r}", "pass", "J:{c}={k}", "J:{c}={k},{d}={k}", "none", "{c}={r}", "xyz"]


def _random_text(rnd: random.Random) -> str:
    return rnd.choice(_TEMPLATES).format(
        s=rnd.choice("01234"), c=rnd.choice(_CELLS), d=rnd.choice(_CELLS),
        r=rnd.choice("AMSJQ"), k=rnd.choice("YBRGX"))


def _random_action(rnd: random.Random) -> Action:
    colors = tuple((rnd.randrange(-1, 30), rnd.choice((1, 2, 4, 8, 3, 0))) for _ in range(rnd.randrange(3)))
    return Action(rnd.choice(KINDS + ("bogus",)), rnd.randrange(-1, 5), rnd.randrange(-1, 40),
                  rnd.randrange(-1, 40), rnd.randrange(0, 6), colors)


def _check_illegal(g: Game, a: Action, rnd: random.Random) -> None:
    legal = g.legal_actions()
    before = g.state_hash()
    tries = [_random_action(rnd) for _ in range(4)]
    for _ in range(6):
        try:
            tries.append(parse_action(_random_text(rnd)))
        except NotationError:
            pass
    # also near misses of legal actions
    x = rnd.choice(legal)
    tries.append(x._replace(cell=x.cell + 1))
    tries.append(x._replace(rank=(x.rank + 1) % 5))
    tries.append(x._replace(space=x.space % 3 + 1))
    for t in tries:
        if t in legal:
            continue
        with pytest.raises(IllegalAction) as e:
            g.apply(t)
        assert isinstance(e.value.rule, str) and e.value.rule
        assert g.state_hash() == before
        assert g.legal_actions() == legal


@FAST
@given(seed=seeds, mname=manifests, oname=options, choice_seed=choices)
def test_illegal_actions_leave_the_state_unchanged(seed, mname, oname, choice_seed) -> None:
    g = play_game(seed, mname, oname, choice_seed, each=_check_illegal)
    before = g.state_hash()
    with pytest.raises(IllegalAction):
        g.apply(Action("vault", 1, 0))
    assert g.state_hash() == before


# --- 4. push/pop and clone --------------------------------------------------------------------


def _check_push_pop_clone(g: Game, a: Action, rnd: random.Random) -> None:
    before = g.state_hash()
    legal = g.legal_actions()
    # push/pop of a few actions in a row restores everything
    depth = 0
    for _ in range(rnd.randrange(1, 4)):
        if g.over:
            break
        g.push(pick(g, rnd))
        depth += 1
    for _ in range(depth):
        g.pop()
    assert g.state_hash() == before
    assert g.legal_actions() == legal
    # a clone is independent both ways
    c = g.clone()
    assert c.state_hash() == before
    c.apply(a)
    assert g.state_hash() == before
    after_clone_move = c.state_hash()
    other = rnd.choice(legal)
    d = g.clone()
    d.apply(other)
    assert c.state_hash() == after_clone_move
    assert g.state_hash() == before


@FAST
@given(seed=seeds, mname=manifests, oname=options, choice_seed=choices)
def test_push_pop_and_clone(seed, mname, oname, choice_seed) -> None:
    g = play_game(seed, mname, oname, choice_seed, each=_check_push_pop_clone)
    with pytest.raises(IndexError):
        g.pop()


# --- soak ---------------------------------------------------------------------------------------


def _all_checks(g: Game, a: Action, rnd: random.Random) -> None:
    _roundtrip_all(g, a, rnd)
    _check_hidden(g, a, rnd)
    _check_illegal(g, a, rnd)
    _check_push_pop_clone(g, a, rnd)


@pytest.mark.slow
@SOAK
@given(seed=seeds, mname=manifests, oname=options, choice_seed=choices)
def test_soak_all_properties(seed, mname, oname, choice_seed) -> None:
    g = play_game(seed, mname, oname, choice_seed, each=_all_checks)
    h = Game.new(MANIFESTS[mname], OPTIONS[oname], seed)
    for a in g.history:
        h.apply(a)
    assert h.state_hash() == g.state_hash()
