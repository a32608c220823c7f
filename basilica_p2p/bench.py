"""Benchmarks: print figures, assert nothing.

    python -m basilica_p2p.bench [engine|verify|all] [--games 300] [--states 3000] [--replays 20]

Targets on the 2-core reference machine: at least 100 complete
random-vs-random games per second on one core, a state clone under 20 µs
(issue 2); full replay verification at most 1.5x the time of checking the
signatures alone on the same files (issue 3).
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


def bench_verify(replays: int) -> None:
    """Full verification against signature checking alone, on the same files, side by side."""
    import tempfile
    from pathlib import Path

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from .bots import GreedyBot
    from .identity import Identity
    from .replay.file import read_replay
    from .replay.local import play_recorded
    from .replay.verify import known_manifests, verify_file
    from .wire import open_envelope

    manifest = default_manifest()
    ids = (Identity("bench-1", Ed25519PrivateKey.generate()), Identity("bench-2", Ed25519PrivateKey.generate()))
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i in range(replays):
            path = Path(tmp) / f"{i}.replay"
            options = Options(festum=i % 3 == 2)
            play_recorded(path, manifest, options, ids, (GreedyBot(manifest, i), RandomBot(i)))
            paths.append(path)
        records = sum(1 + len(read_replay(p).records) for p in paths)
        manifests = known_manifests()

        def signatures_only() -> None:
            for p in paths:
                for raw in read_replay(p).records:
                    open_envelope(raw)  # decode + Ed25519 check, nothing else

        def full() -> None:
            for p in paths:
                if not verify_file(p, manifests).ok:
                    raise SystemExit(f"{p} did not verify")

        sig_times, full_times = [], []
        for _ in range(5):  # interleaved, so both see the same machine load
            start = time.perf_counter()
            signatures_only()
            sig_times.append(time.perf_counter() - start)
            start = time.perf_counter()
            full()
            full_times.append(time.perf_counter() - start)
    sig, whole = min(sig_times), min(full_times)
    print(f"verify: {replays} replays, {records} records")
    print(f"  signatures only: {records / sig:,.0f} records/s")
    print(f"  full verification: {records / whole:,.0f} records/s "
          f"(chain, protocol, every action re-played, every state hash)")
    print(f"  full / signatures-only time: {whole / sig:.2f}x (best of 5 each)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="Benchmarks (print figures, assert nothing).")
    ap.add_argument("part", nargs="?", choices=("engine", "verify", "all"), default="all")
    ap.add_argument("--games", type=int, default=300, help="random-vs-random games to time")
    ap.add_argument("--states", type=int, default=3000, help="sampled states for the per-call timings")
    ap.add_argument("--replays", type=int, default=20, help="replays written for the verify benchmark")
    ap.add_argument("--festum", action="store_true")
    ns = ap.parse_args(argv)
    print(f"machine: {machine()}")
    if ns.part in ("engine", "all"):
        bench_engine(ns.games, ns.states, Options(festum=ns.festum))
    if ns.part in ("verify", "all"):
        bench_verify(ns.replays)


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


if __name__ == "__main__":
    main()
