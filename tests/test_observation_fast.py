"""The fast observation paths equal a plain reference over many random states (issue 14).

``observe`` and the environments' encoder are written for speed (shared face
objects, precomputed index tables, blocks kept from the last encoding when
their inputs did not change).  Here both are checked against a reference
written for clarity instead, straight from RULES.md §9 and docs/notation.md
("Observation encoding"): every field, every value, bit for bit, over whole
random games of every ruleset, seeded and hidden, in the order an RL loop
meets them and out of it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from basilica_p2p.engine import Game, Observation, Options, default_manifest, observe
from basilica_p2p.engine import actions as A
from basilica_p2p.engine.components import ALL_COLORS, JESTER, Order
from basilica_p2p.engine.observation import OrderFace, VaultFace
from basilica_p2p.env import ObservationEncoder, raw_env
from basilica_p2p.encoding.observation import PENDING_KINDS, SCALARS

M = default_manifest()
OPTIONS = [Options("classic"), Options("portal2022"), Options("portal2022", festum=True, festum_removal=True)]
FIELDS = [f.name for f in dataclasses.fields(Observation)]


# --- the references -----------------------------------------------------------

def reference_observe(g: Game, player: int) -> Observation:
    """What ``player`` sees, field by field, with the dataclass's own constructor."""
    specs = g.specs
    shown = g.manifest.order_faces_show_crown

    def vault(t: object) -> VaultFace:
        s = specs[t]
        return VaultFace(s.id, s.colors, s.crown)  # type: ignore[union-attr]

    def order(t: object) -> OrderFace:
        s = specs[t]
        return OrderFace(s.order, s.colors, s.paid, s.crown if shown else None)

    history = list(g.history)
    secret = (1 - player in g.jester_choices and not g.over and g.pending.kind == "jester"
              and bool(history) and history[-1].kind == A.JESTER)
    if secret:  # the other player's unrevealed J: action (D24)
        history.pop()
    return Observation(
        player=player, ruleset=g.options.ruleset.value, festum=g.options.festum,
        festum_removal=g.options.festum_removal, manifest_hash=g.manifest.hash, to_move=g.to_move,
        pending=None if g.over else g.pending, active=g.active, actions_taken=g.actions, turn=g.turn,
        last_placed=g.last_placed,
        vaults=tuple(sorted(((c, vault(t)) for c, t in g.vaults.items()), key=lambda x: x[0])),
        scaffold=tuple(sorted(g.scaffold)),
        builders=tuple(sorted((c, p, r) for c, (p, r) in g.builders.items())),
        glass=tuple(sorted(g.glass)), altars=tuple(sorted(g.altars)),
        orders=tuple(order(t) if t is not None else None for t in g.orders),
        market=tuple(vault(t) if t is not None else None for t in g.market),
        in_hand=(g.in_hand[1], order(g.in_hand[0])) if g.in_hand is not None else None,
        stack_size=len(g.stack), stack_top=order(g.stack[-1]) if g.stack else None, reshuffles=g.reshuffles,
        discard=tuple(vault(t) if t in g.discard_up else order(t) for t in g.discard), out_count=len(g.out),
        pawn=g.pawn, crown_spaces=g.manifest.crown_spaces, scorings=g.scorings, scores=tuple(g.scores),
        coins=tuple(g.coins), supply=tuple(g.supply), tokens=tuple(g.tokens), altar_supply=g.altar_supply,
        scoring_space=g.scoring_space, my_jester_choice=g.jester_choices.get(player),
        other_jester_committed=1 - player in g.jester_choices, over=g.over, end_reason=g.end_reason,
        history=tuple(history),
    )


def reference_encoding(enc: ObservationEncoder, obs: Observation) -> np.ndarray:
    """The vector of docs/notation.md, one named block at a time, as 2-D arrays where it has rows."""
    block = {name: np.zeros(shape, np.float32) for name, _, shape in enc.layout()}
    me, them = obs.player, 1 - obs.player
    board = block["board"]  # planes x rows x columns

    def mark(plane: int, c: int) -> None:
        if c < enc.rows * 5:  # cells beyond the rows are left out
            board[plane, c // 5, c % 5] = 1

    for c, vf in obs.vaults:
        for k, color in enumerate(ALL_COLORS):
            if vf.colors & color:
                mark(k, c)
        if vf.crown:
            mark(4, c)
    for plane, cells in ((5, obs.scaffold), (6, obs.glass), (7, obs.altars)):
        for c in cells:
            mark(plane, c)
    for c, p, rank in obs.builders:
        base = 8 if p == me else 13
        mark(base, c)
        if rank:
            mark(base + rank, c)
    if obs.last_placed >= 0:
        mark(18, obs.last_placed)
    for c, color in obs.my_jester_choice or ():
        mark(19 + ALL_COLORS.index(color), c)

    orders = list(Order)

    def order_face(f: OrderFace) -> np.ndarray:
        v = np.zeros(len(orders) + 8, np.float32)
        v[orders.index(f.order)] = 1
        for k, color in enumerate(ALL_COLORS):
            v[len(orders) + k] = bool(f.colors & color)
        v[len(orders) + 4] = f.paid
        v[len(orders) + 5] = f.crown is not None
        v[len(orders) + 6] = bool(f.crown)
        v[len(orders) + 7] = 1
        return v

    for k, vf in enumerate(obs.market):
        if vf is not None:
            block["market"][k] = [*(bool(vf.colors & color) for color in ALL_COLORS), vf.crown, 1]
    for k, of in enumerate(obs.orders):
        if of is not None:
            block["orders"][k] = order_face(of)
    hand = block["in_hand"]
    if obs.in_hand is None:
        hand[0] = 1
    else:
        hand[obs.in_hand[0]] = 1
        hand[4:] = order_face(obs.in_hand[1])
    if obs.stack_top is not None:
        block["stack_top"][:] = order_face(obs.stack_top)
    tile_ids = sorted(t.id for t in (*M.tiles, *M.festum_tiles))
    seen = [vf.tile for _, vf in obs.vaults] + [vf.tile for vf in obs.market if vf is not None]
    for f in obs.discard:
        if isinstance(f, VaultFace):
            seen.append(f.tile)
        else:
            block["discard_order_faces"][orders.index(f.order), int(f.paid)] += 0.1
    for t in seen:
        block["tiles_seen_vault_up"][tile_ids.index(t)] = 1
    pend = block["pending"]
    n = len(PENDING_KINDS) + len(orders)
    if obs.pending is not None:
        pend[PENDING_KINDS.index(obs.pending.kind)] = 1
        if obs.pending.order is not None:
            pend[len(PENDING_KINDS) + orders.index(obs.pending.order)] = 1
        pend[n + obs.pending.rank] = 1
        pend[n + 5] = obs.pending.paid
    pend[n + 6 + obs.scoring_space] = 1
    ahead = [s - obs.pawn for s in obs.crown_spaces if s > obs.pawn]
    value = {
        "portal2022": obs.ruleset == "portal2022", "festum": obs.festum, "festum_removal": obs.festum_removal,
        "i_decide": obs.to_move == me, "i_am_active": obs.active == me, "game_over": obs.over,
        "actions_taken_0": obs.actions_taken == 0, "actions_taken_1": obs.actions_taken == 1,
        "actions_taken_2": obs.actions_taken == 2,
        "my_score": obs.scores[me] / 50, "their_score": obs.scores[them] / 50,
        "score_difference": (obs.scores[me] - obs.scores[them]) / 50,
        "my_coins": obs.coins[me] / 5, "their_coins": obs.coins[them] / 5,
        "my_supply": obs.supply[me] / 5, "their_supply": obs.supply[them] / 5,
        "my_tokens": obs.tokens[me] / 4, "their_tokens": obs.tokens[them] / 4, "altar_supply": obs.altar_supply / 4,
        "stack_size": obs.stack_size / 66, "stack_empty": obs.stack_size == 0, "reshuffled": obs.reshuffles > 0,
        "out_count": obs.out_count / 6, "pawn": obs.pawn / 30, "to_next_crown_space": (ahead[0] if ahead else 0) / 10,
        "scorings": obs.scorings / 3, "turn": obs.turn / 100, "discard_size": len(obs.discard) / 66,
        "my_jester_chosen": obs.my_jester_choice is not None, "their_jester_committed": obs.other_jester_committed,
    }
    # float32 division, as the encoder does: the scaled values are then equal to the last bit.
    numerators = np.array([float(value[s] * _scale(s)) for s in SCALARS], np.float32)
    block["scalars"][:] = numerators / np.array([_scale(s) for s in SCALARS], np.float32)
    return np.concatenate([b.ravel() for b in block.values()])


def _scale(name: str) -> int:
    return {"my_score": 50, "their_score": 50, "score_difference": 50, "my_coins": 5, "their_coins": 5,
            "my_supply": 5, "their_supply": 5, "my_tokens": 4, "their_tokens": 4, "altar_supply": 4,
            "stack_size": 66, "out_count": 6, "pawn": 30, "to_next_crown_space": 10, "scorings": 3,
            "turn": 100, "discard_size": 66}.get(name, 1)


# --- the checks ---------------------------------------------------------------

def check_observation(g: Game, player: int) -> Observation:
    obs = observe(g, player)
    ref = reference_observe(g, player)
    assert list(vars(obs)) == FIELDS  # every field set, none extra
    assert obs == ref and hash(obs) == hash(ref) and repr(obs) == repr(ref)
    return obs


def same_vector(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == np.float32 and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), np.flatnonzero(got != want)


def pick_action(g: Game, rng: random.Random, jesters: bool) -> A.Action:
    legal = g.legal_actions()
    promote = [a for a in legal if a.rank == JESTER] if jesters else []
    return rng.choice(promote or legal)  # promoting to Jester whenever possible reaches secret rounds


@settings(max_examples=12, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), which=st.integers(0, 2), jesters=st.booleans(),
       pick=st.randoms(use_true_random=False))
def test_observe_and_encode_equal_the_reference_through_whole_games(seed: bytes, which: int, jesters: bool,
                                                                    pick: random.Random) -> None:
    g = Game.new(M, OPTIONS[which], seed)
    enc = ObservationEncoder(M)
    while True:
        # Both seats every state, and now and then a state of another game in between, so
        # that whatever the encoder keeps from one call to the next is put to the test.
        for player in (0, 1):
            obs = check_observation(g, player)
            same_vector(enc.encode(obs), reference_encoding(enc, obs))
        if pick.random() < 0.1:
            other = Game.new(M, OPTIONS[(which + 1) % 3], hashlib.sha256(seed).digest())
            obs = check_observation(other, pick.randrange(2))
            same_vector(enc.encode(obs), reference_encoding(enc, obs))
        if g.over:
            break
        g.apply(pick_action(g, pick, jesters))


def test_the_environment_observes_what_the_reference_encodes() -> None:
    e = raw_env(festum=True)
    enc = e.table.encoder
    rng = random.Random(5)
    for game in range(6):
        e.reset(seed=game)
        while e.agents:
            g = e.table.game
            assert g is not None
            agent = e.agent_selection
            # The agent to act every step (as env.last() does) and, one time in four, the other too.
            seats = [agent] + ([a for a in e.agents if a != agent] if rng.random() < 0.25 else [])
            for a in seats:
                player = e.possible_agents.index(a)
                same_vector(e.observe(a)["observation"], reference_encoding(enc, reference_observe(g, player)))
            if e.terminations[agent]:
                e.step(None)
                continue
            e.step(int(rng.choice(np.flatnonzero(e.action_mask(agent)))))


def test_hidden_games_observe_and_encode_as_the_reference() -> None:
    pytest.importorskip("pyspiel")
    import pyspiel

    from basilica_p2p.env import spiel

    game = pyspiel.load_game(spiel.SHORT_NAME, {"festum": True})
    rng = random.Random(3)
    enc = ObservationEncoder(M)
    for _ in range(2):
        state = game.new_initial_state()
        while not state.is_terminal():
            g = state.engine
            if g is not None and not state.is_chance_node():
                for player in (0, 1):
                    obs = check_observation(g, player)
                    same_vector(enc.encode(obs), reference_encoding(enc, obs))
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))


def test_a_copied_environment_encodes_as_the_reference() -> None:
    import copy
    import pickle

    e = raw_env()
    e.reset(seed=2)
    rng = random.Random(2)
    for _ in range(25):  # into the game (about 60 steps long), observing, so that the encoder keeps something
        e.step(int(rng.choice(np.flatnonzero(e.last()[0]["action_mask"]))))
    for twin in (copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        for _ in range(15):
            g = twin.table.game
            assert g is not None and not g.over
            agent = twin.agent_selection
            obs = reference_observe(g, twin.possible_agents.index(agent))
            same_vector(twin.observe(agent)["observation"], reference_encoding(twin.table.encoder, obs))
            twin.step(int(rng.choice(np.flatnonzero(twin.action_mask(agent)))))
