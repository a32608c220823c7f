"""A determinized game looks exactly like the observation it was sampled from."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from basilica_p2p.engine import Game, Options, default_manifest, determinize, observe

M = default_manifest()
OPTIONS = [Options("classic"), Options("portal2022"), Options("portal2022", festum=True, festum_removal=True)]


@settings(max_examples=25, deadline=None)
@given(seed=st.binary(min_size=32, max_size=32), steps=st.integers(0, 250), which=st.integers(0, 2),
       pick=st.randoms(use_true_random=False))
def test_determinize_round_trips_the_observation(seed: bytes, steps: int, which: int, pick: random.Random) -> None:
    g = Game.new(M, OPTIONS[which], seed)
    for _ in range(steps):
        if g.over:
            break
        legal = g.legal_actions()
        g.apply(legal[pick.randrange(len(legal))])
    for player in (0, 1):
        obs = observe(g, player)
        rng = random.Random(7)
        sample = determinize(obs, M, lambda xs: rng.sample(xs, len(xs)), bytes(32))
        assert observe(sample, player) == obs
        sample.tile_locations()  # every tile in exactly one place in the sample too
        if not g.over and g.to_move == player:
            assert sample.legal_actions() == g.legal_actions()
