"""Issue 14's figure: one tournament with ``--jobs 2`` on this machine and as Ray tasks on a cluster.

The same round robin (by default 40 games of ``mcts:playouts=100`` against
``greedy``: a playout budget, so both runs play exactly the same games) is played
by local worker processes and then on a Ray cluster: the one at ``--ray ADDRESS``,
or else a throwaway one started here (two nodes of one CPU each, as many CPUs as
``--jobs 2``).  Printed: the wall time of each, the cluster's split into connecting
(ray.init, shipping the code, checking the bots on every node) and playing, and
the overhead per game, (Ray wall time - local wall time) / games, for each of
``--rounds`` rounds (local and Ray alternated, as the load of a shared machine
drifts) and their median.  It checks that both runs give the same standings.

    python benchmarks/ray_tournament.py
    python benchmarks/ray_tournament.py --games 40 --bots mcts:playouts=100,greedy --ray auto
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from contextlib import nullcontext

from basilica_p2p.bench import machine
from basilica_p2p.cluster import RayPool, local_cluster
from basilica_p2p.engine import Options
from basilica_p2p.executor import LocalPool
from basilica_p2p.tournament import Played, play_tournament, schedule


def timed(bots: list[str], games: int, seed: str, pool: LocalPool | RayPool) -> tuple[Played, float]:
    started = time.perf_counter()
    played = play_tournament(bots, games, seed, Options(), pool, on_forfeit=None)
    return played, time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bots", default="mcts:playouts=100,greedy", help="comma-separated bots")
    ap.add_argument("--games", type=int, default=40, help="games per pair of bots")
    ap.add_argument("--jobs", type=int, default=2, help="local worker processes")
    ap.add_argument("--seed", default="bench-ray")
    ap.add_argument("--rounds", type=int, default=3, help="local and Ray runs, alternated")
    ap.add_argument("--ray", metavar="auto|ADDRESS", help="an existing cluster (default: start two nodes here)")
    ns = ap.parse_args(argv)
    bots = [b.strip() for b in ns.bots.split(",") if b.strip()]
    total = len(schedule(bots, ns.games, ns.seed, Options()))
    print(f"machine: {machine()}; load average at the start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"tournament: {', '.join(bots)}, {ns.games} games per pair ({total} games), seed {ns.seed!r}")

    cluster = nullcontext(ns.ray) if ns.ray else local_cluster(nodes=2, cpus=1)
    where = ns.ray or "a local cluster of 2 nodes"
    overheads = []
    same = True
    with cluster as address:
        for n in range(1, ns.rounds + 1):  # alternated, so both see much the same machine load
            local, local_s = timed(bots, ns.games, ns.seed, LocalPool(ns.jobs))
            print(f"round {n}: local, --jobs {ns.jobs}: {local_s:.1f} s wall ({local_s / total:.2f} s per game)")
            started = time.perf_counter()
            with RayPool(address, bots) as pool:
                connected = time.perf_counter() - started
                remote, play_s = timed(bots, ns.games, ns.seed, pool)
                cpus = pool.cpus
            ray_s = time.perf_counter() - started
            print(f"round {n}: ray, {where} ({cpus} CPUs): {ray_s:.1f} s wall = {connected:.1f} s connecting + "
                  f"{play_s:.1f} s playing + {ray_s - connected - play_s:.1f} s disconnecting")
            overheads.append((ray_s - local_s) / total)
            print(f"round {n}: overhead per game {(ray_s - local_s) / total:+.3f} s in all, "
                  f"{(play_s - local_s) / total:+.3f} s once connected")
            same = same and remote.results == local.results
    print(f"overhead per game, median of {len(overheads)}: {statistics.median(overheads):+.3f} s "
          f"(range {min(overheads):+.3f} to {max(overheads):+.3f})")
    print(f"same standings and games: {'yes' if same else 'NO'}; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not same:
        sys.exit(1)

if __name__ == "__main__":
    main()
