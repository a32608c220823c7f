"""Random games per second and the engine's per-call costs."""

from __future__ import annotations

import hashlib
import random
import statistics
import time

from ..bots import RandomBot
from ..engine import Options, default_manifest
from ..match import play_game
from ._common import per_call_us, sample_states


def bench_engine(games: int, n_states: int, options: Options) -> None:
    manifest = default_manifest()
    decisions = 0
    start = time.perf_counter()
    for i in range(games):
        seed = hashlib.sha256(b"bench %d" % i).digest()
        g = play_game(manifest, options, seed, (RandomBot(2 * i), RandomBot(2 * i + 1)))
        decisions += len(g.history)
    elapsed = time.perf_counter() - start
    print(f"random vs random: {games / elapsed:.0f} complete games/s on one core "
          f"({decisions / games:.0f} decisions per game, bots see observations)")

    states = sample_states(n_states, options)
    fresh = [s.clone() for s in states]
    for s in fresh:
        s._legal = None  # time the generation itself, not the cache
    legal_us = per_call_us(lambda s: s.legal_actions(), fresh)
    counts = [len(s.legal_actions()) for s in fresh]
    clone_us = per_call_us(lambda s: s.clone(), states)
    rng = random.Random(2)
    pairs = []
    for s in states:
        c = s.clone()
        legal = c.legal_actions()
        pairs.append((c, legal[rng.randrange(len(legal))]))
    apply_us = per_call_us(lambda p: p[0].apply(p[1]), pairs)
    hash_us = per_call_us(lambda s: s.state_hash(), states[:500])
    print(f"legal_actions(): {legal_us:.1f} µs mean over {len(states)} states "
          f"(median {statistics.median(counts):.0f} actions, max {max(counts)})")
    print(f"apply(): {apply_us:.1f} µs mean (legality check included)")
    print(f"clone(): {clone_us:.1f} µs mean")
    print(f"state_hash(): {hash_us:.1f} µs mean")
