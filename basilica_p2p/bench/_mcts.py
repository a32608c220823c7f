"""The mcts bot against an opponent: wins, a Wilson interval and seconds per decision."""

from __future__ import annotations

import statistics
import time

from ..engine import Options, default_manifest
from ..match import play_game
from ._common import load_average


def _mcts_game(spec: str, opponent: str, seed_text: str, number: int, options: Options) -> tuple[int, int, list[float]]:
    """One game in a worker process: the measured bot is player 1 in even games.

    Returns (points of the measured bot: 2 win, 1 draw, 0 loss; its score minus
    the opponent's; the seconds it took for each of its decisions with more
    than one legal action).
    """
    from ..bots import bot_rng_seed, make_bot
    from ..match import match_game_seed

    manifest = default_manifest()
    seed = match_game_seed(seed_text, number)
    seat = number % 2
    specs = (spec, opponent) if seat == 0 else (opponent, spec)
    bots = [make_bot(specs[k], manifest, bot_rng_seed(seed, k)) for k in (0, 1)]
    inner = bots[seat]
    times: list[float] = []

    class Timed:
        name = inner.name

        def choose(self, obs, legal):
            start = time.perf_counter()
            action = inner.choose(obs, legal)
            if len(legal) > 1:
                times.append(time.perf_counter() - start)
            return action

    bots[seat] = Timed()
    g = play_game(manifest, options, seed, (bots[0], bots[1]))
    w = g.winner()
    points = 1 if w is None else 2 if w == seat else 0
    return points, g.scores[seat] - g.scores[1 - seat], times


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    margin = z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5 / (1 + z * z / n)
    return max(0.0, centre - margin), min(1.0, centre + margin)


def bench_mcts(spec: str, opponent: str, games: int, jobs: int, seed_text: str, options: Options) -> None:
    """``spec`` against ``opponent``, seats alternating, in worker processes; wins and time per decision."""
    from concurrent.futures import ProcessPoolExecutor

    from ..bots import BotSpecError, MctsBot, make_bot

    manifest = default_manifest()
    try:
        measured = make_bot(spec, manifest, 0)  # a bad name fails here, not in a worker
        make_bot(opponent, manifest, 0)
    except BotSpecError as e:
        raise SystemExit(f"bench mcts: {e}") from None
    budget = ""
    if isinstance(measured, MctsBot) and measured.playouts is not None:
        budget = f" ({measured.playouts} playouts per decision)"
    elif isinstance(measured, MctsBot) and measured.time is not None:
        budget = f" ({measured.time:g} s per decision)"
    print(f"mcts: {games} games of {spec}{budget} against {opponent}, seats alternating, {jobs} worker process(es), "
          f"seed {seed_text!r}; load average at the start {load_average()}")
    start = time.perf_counter()
    args = [(spec, opponent, seed_text, k, options) for k in range(games)]
    if jobs <= 1:
        results = [_mcts_game(*a) for a in args]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            results = list(pool.map(_mcts_game, *zip(*args)))
    elapsed = time.perf_counter() - start
    wins = sum(1 for p, _, _ in results if p == 2)
    draws = sum(1 for p, _, _ in results if p == 1)
    losses = games - wins - draws
    low, high = wilson(wins + draws / 2, games)
    margins = [m for _, m, _ in results]
    times = sorted(t for _, _, ts in results for t in ts)
    p99 = times[min(len(times) - 1, int(0.99 * len(times)))] if times else 0.0
    first = [m for k, (_, m, _) in enumerate(results) if k % 2 == 0]
    second = [m for k, (_, m, _) in enumerate(results) if k % 2 == 1]
    print(f"  {spec}: {wins} wins, {draws} draws, {losses} losses against {opponent}")
    print(f"  score rate (a draw counts half) {(wins + draws / 2) / games:.1%}, "
          f"95% Wilson interval {low:.1%}-{high:.1%}; wins alone {wins / games:.1%}")
    print(f"  mean score margin {statistics.fmean(margins):+.1f} points "
          f"(as player 1: {statistics.fmean(first) if first else 0:+.1f}, "
          f"as player 2: {statistics.fmean(second) if second else 0:+.1f})")
    if times:
        print(f"  seconds per {spec} decision (decisions with 2+ legal actions, {len(times)} timed): "
              f"median {statistics.median(times):.3f}, p99 {p99:.3f}, max {times[-1]:.3f}")
    print(f"  wall time {elapsed:.0f} s; load average at the end {load_average()}")
