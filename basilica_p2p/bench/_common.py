"""What every benchmark uses: the machine line, sampled states, per-call timing, recorded replays."""

from __future__ import annotations

import hashlib
import os
import platform
import random
import time
from pathlib import Path

from ..bots import RandomBot
from ..engine import Game, Options, default_manifest


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


def per_call_us(fn, items) -> float:
    start = time.perf_counter_ns()
    for x in items:
        fn(x)
    return (time.perf_counter_ns() - start) / len(items) / 1000


def recorded_replays(folder: Path, replays: int, shuffle: str) -> list[Path]:
    """``replays`` greedy-vs-random games recorded with ``shuffle``; the same bots and seeds
    (every third game with festum) whatever the scheme, so the two sets compare."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from ..bots import GreedyBot
    from ..identity import Identity
    from ..replay import play_recorded

    manifest = default_manifest()
    ids = (Identity("bench-1", Ed25519PrivateKey.generate()), Identity("bench-2", Ed25519PrivateKey.generate()))
    paths = []
    for i in range(replays):
        path = Path(folder) / f"{shuffle}-{i}.replay"
        options = Options(festum=i % 3 == 2)
        play_recorded(path, manifest, options, ids, (GreedyBot(manifest, i), RandomBot(i)), shuffle=shuffle)
        paths.append(path)
    return paths


def load_average() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        return "unknown"
