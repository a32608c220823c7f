"""Calibrate the default manifest's crown count by simulation (RULES.md D4).

Target: with two greedy bots, at least 75% of games end at the third
scoring rather than on the second exhaustion of the stack, and the median
game lasts 25-45 turns.  For each crown count this plays greedy-vs-greedy
games (with the D4 reconstruction of that many crowns) and prints the
share of games reaching the third scoring (with the lower end of its 95%
Wilson interval) and the turn statistics.  The chosen count is the smallest
that, together with the next larger one, meets both targets even at the
lower end of the interval, so that sampling noise cannot pick a borderline
count.

    python -m basilica_p2p.calibrate --games 200 --crowns 30-46 --jobs 2
    python -m basilica_p2p.calibrate --games 200 --crowns 30-46 --ray auto   # on a Ray cluster

Each crown count is one job, on local processes or a Ray cluster (docs/cluster.md);
Ctrl-C stops the counts still running and prints the finished ones.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import dataclass

from .engine import END_LAST_SCORING, Ruleset, reconstruct_default
from .match import MatchConfig, run_match
from .cluster import ClusterError, executor_for
from .executor import gather

TARGET_THIRD_SCORING = 0.75
TARGET_MEDIAN_TURNS = (25, 45)


@dataclass(frozen=True)
class Row:
    crowns: int
    games: int
    third_share: float
    median_turns: float
    q1_turns: float
    q3_turns: float
    mean_turns: float

    @property
    def third_low(self) -> float:
        """Lower end of the 95% Wilson interval of the third-scoring share."""
        z, n, p = 1.96, self.games, self.third_share
        centre = p + z * z / (2 * n)
        margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (centre - margin) / (1 + z * z / n)

    @property
    def meets_target(self) -> bool:
        lo, hi = TARGET_MEDIAN_TURNS
        return self.third_low >= TARGET_THIRD_SCORING and lo <= self.median_turns <= hi


def measure(crowns: int, games: int, festum: bool = False, seed: str = "calibrate") -> Row:
    manifest = reconstruct_default(crowns)
    config = MatchConfig("greedy", "greedy", games, f"{seed}/{crowns}", Ruleset.PORTAL2022, festum, False)
    config.options()  # validate early
    summary = run_match(config, manifest, progress=False)
    turns = [r.turns for r in summary.games]
    q = statistics.quantiles(turns, n=4) if len(turns) > 1 else [turns[0]] * 3
    third = sum(1 for r in summary.games if r.end == END_LAST_SCORING)
    return Row(crowns, games, third / games, statistics.median(turns), q[0], q[2], statistics.fmean(turns))


def _measure_args(args: tuple[int, int, bool]) -> Row:
    return measure(*args)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=200, help="greedy-vs-greedy games per crown count")
    ap.add_argument("--crowns", default="30-46", help="range of crown counts, e.g. 30-46")
    ap.add_argument("--jobs", type=int, default=2, help="worker processes")
    ap.add_argument("--festum", action="store_true", help="play with the festum expansion")
    ap.add_argument("--ray", metavar="auto|ADDRESS", help="run the crown counts as tasks on this Ray cluster")
    ns = ap.parse_args(argv)
    lo, _, hi = ns.crowns.partition("-")
    counts = list(range(int(lo), int(hi or lo) + 1))
    print(f"greedy vs greedy, {ns.games} games per crown count, portal2022{' + festum' if ns.festum else ''}")
    rows: list[Row] = []
    try:
        with executor_for(ns.jobs, ns.ray) as executor:
            interrupted = gather(executor, _measure_args, [(c, ns.games, ns.festum) for c in counts], rows.append)
    except ClusterError as e:
        sys.exit(f"error: {e}")
    rows.sort(key=lambda r: r.crowns)  # completion order depends on the workers
    print("crowns  games  third-scoring (95% low)  median turns  IQR        mean   target")
    for r in rows:
        print(f"{r.crowns:>6}  {r.games:>5}  {r.third_share:>12.0%} ({r.third_low:>4.0%})    {r.median_turns:>12}  "
              f"{r.q1_turns:>4.0f}-{r.q3_turns:<4.0f}  {r.mean_turns:>5.1f}   {'yes' if r.meets_target else 'no'}")
    if interrupted:
        print(f"interrupted: {len(rows)} of {len(counts)} crown counts finished, none chosen")
        sys.exit(130)
    chosen = next((r for i, r in enumerate(rows) if all(x.meets_target for x in rows[i : i + 2])), None)
    print(f"chosen: {chosen.crowns} crowns" if chosen else "no crown count in the range meets the target")


if __name__ == "__main__":
    main()
