"""Engine benchmark: prints figures, asserts nothing.

    python -m basilica_p2p.bench [--games 300] [--states 3000]

Targets (issue 2, on a 2-core machine): at least 100 complete
random-vs-random games per second on one core, a state clone under 20 µs.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import random
import statistics
import time

from .bots import RandomBot
from .engine import Game, Options, default_manifest
from .match import play_game


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()} on {platform.system()}"


def sample_states(n: int, options: Options) -> list[Game]:
    """States met in random play, spread over whole games."""
    manifest = default_manifest()
    rng = random.Random(1)
    out: list[Game] = []
    i = 0
    while len(out) < n:
        g = Game.new(manifest, options, hashlib.sha256(b"bench-states %d" % i).digest())
        i += 1
        while not g.over and len(out) < n:
            legal = g.legal_actions()
            out.append(g.clone())
            g.apply(legal[rng.randrange(len(legal))])
    return out


def per_call_us(fn, items) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter_ns()
    for x in items:
        fn(x)
    return (time.perf_counter_ns() - start) / len(items) / 1000


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Rules engine benchmark (prints figures).")
    ap.add_argument("--games", type=int, default=300, help="random-vs-random games to time")
    ap.add_argument("--states", type=int, default=3000, help="sampled states for the per-call timings")
    ap.add_argument("--festum", action="store_true")
    ns = ap.parse_args(argv)
    options = Options(festum=ns.festum)
    manifest = default_manifest()
    print(f"machine: {machine()}")

    decisions = 0
    start = time.perf_counter()
    for i in range(ns.games):
        seed = hashlib.sha256(b"bench %d" % i).digest()
        g = play_game(manifest, options, seed, (RandomBot(2 * i), RandomBot(2 * i + 1)))
        decisions += len(g.history)
    elapsed = time.perf_counter() - start
    print(f"random vs random: {ns.games / elapsed:.0f} complete games/s on one core "
          f"({decisions / ns.games:.0f} decisions per game, bots see observations)")

    states = sample_states(ns.states, options)
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


if __name__ == "__main__":
    main()
