"""``basilica tournament``: a round robin between bots, in parallel worker processes.

Every pair of bots plays ``games`` games, seats alternating.  Each game is
seeded from the tournament seed, the pair and the game number, so the same
arguments give the same results however many workers run them.  Ratings
are Elo, fitted by maximum likelihood over all games (a draw counts half a
win to each side), with 95% Wilson score intervals (see elo_intervals).

A bot that fails in a game (raises, answers an illegal action, or, for a
``cmd:`` bot, crashes, hangs past its time or breaks protocol/BOTS.md) loses
that game by forfeit; the result's ``end`` says why, and the tournament goes on.

With ``shuffle="sra-p256-v1"`` every game is dealt face down through the whole
protocol (:func:`basilica_p2p.match.play_face_down`), still from its seed alone.

Where the games run is an :class:`~basilica_p2p.executor.Executor` (executor.py):
``LocalPool`` (worker processes on this machine) or ``basilica_p2p.cluster.RayPool``
(tasks on a Ray cluster).  Either way every game is played by :func:`play_pairing`
from its own seed, and the results come back here, so the standings and files do
not depend on it.  Ctrl-C or SIGTERM stops the games still running; the finished
ones are kept.
"""

from __future__ import annotations

import csv
import io
import json
import math
import statistics
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from .bots import bot_rng_seed, make_bot
from .engine import Game, Options, default_manifest
from .executor import Executor, LocalPool, gather
from .match import FORFEIT, finish_bots, match_game_seed, outcome, play_engine_game, play_face_down
from .replay import Forfeit
from .safefile import write_atomically
from .schemes import COMMIT_REVEAL

ELO_SCALE = 400.0
BASE_RATING = 1500.0


@dataclass(frozen=True)
class Pairing:
    p1: str
    p2: str
    seed_text: str
    number: int
    options: Options
    shuffle: str = COMMIT_REVEAL


@dataclass(frozen=True)
class Result:
    p1: str
    p2: str
    number: int
    scores: tuple[int, int]
    winner: str | None  # a bot name, None for a shared victory
    end: str  # last-scoring, stack, or "forfeit: <why>" when a bot failed


def schedule(bots: list[str], games: int, seed: str, options: Options, shuffle: str = COMMIT_REVEAL) -> list[Pairing]:
    """Every pair plays ``games`` games; the first bot of a pair is player 1 in even games."""
    out = []
    for a, b in combinations(bots, 2):
        for k in range(games):
            p1, p2 = (a, b) if k % 2 == 0 else (b, a)
            out.append(Pairing(p1, p2, f"{seed}/{a}/{b}", k, options, shuffle))
    return out


def play_pairing(p: Pairing) -> Result:
    """One game (runs in a worker process)."""
    manifest = default_manifest()
    seed = match_game_seed(p.seed_text, p.number)
    bots = (make_bot(p.p1, manifest, bot_rng_seed(seed, 0)), make_bot(p.p2, manifest, bot_rng_seed(seed, 1)))
    g: Game | None = None
    failure: Forfeit | None = None
    try:
        play = play_engine_game if p.shuffle == COMMIT_REVEAL else play_face_down
        g, failure = play(manifest, p.options, seed, bots)
    finally:
        # A bot program never outlives its game; a face-down game's seats told the bots its end.
        finish_bots(bots, g, failure, told=p.shuffle != COMMIT_REVEAL and g is not None)
    assert g is not None
    w, end = outcome(g, failure)
    return Result(p.p1, p.p2, p.number, (g.scores[0], g.scores[1]), None if w is None else (p.p1, p.p2)[w], end)


def report_forfeit(r: Result) -> None:
    """One line on stderr for a game a bot lost by failing."""
    print(f"{r.p1} vs {r.p2}, game {r.number + 1}: {r.winner} won by {r.end}", file=sys.stderr)


def fit_elo(bots: list[str], results: list[Result], iterations: int = 2000) -> dict[str, float]:
    """Maximum-likelihood Elo ratings (mean BASE_RATING), draws counting half."""
    index = {b: i for i, b in enumerate(bots)}
    n = len(bots)
    wins = [[0.0] * n for _ in range(n)]  # wins[i][j]: points of i against j
    for r in results:
        i, j = index[r.p1], index[r.p2]
        if r.winner is None:
            wins[i][j] += 0.5
            wins[j][i] += 0.5
        elif r.winner == r.p1:
            wins[i][j] += 1
        else:
            wins[j][i] += 1
    # Bradley-Terry strengths by the minorisation-maximisation iteration (Hunter 2004),
    # with a tiny prior against the infinite ratings of unbeaten or winless bots.
    prior = 0.1
    strength = [1.0] * n
    for _ in range(iterations):
        new = []
        for i in range(n):
            won = sum(wins[i]) + prior
            denom = sum((wins[i][j] + wins[j][i] + 2 * prior) / (strength[i] + strength[j])
                        for j in range(n) if j != i)
            new.append(won / denom if denom else strength[i])
        mean_log = statistics.fmean(math.log(s) for s in new)
        strength = [s / math.exp(mean_log) for s in new]
    return {b: BASE_RATING + ELO_SCALE * math.log10(strength[index[b]]) for b in bots}


def elo_intervals(bots: list[str], results: list[Result], ratings: dict[str, float]) -> dict[str, tuple[float, float]]:
    """95% intervals: a Wilson score interval on each bot's score fraction, turned into
    Elo against the mean rating of the opponents it met.  Unlike a bootstrap over games,
    it stays honest for a bot that won (or lost) every game."""
    z = 1.96
    out = {}
    for b in bots:
        mine = [r for r in results if b in (r.p1, r.p2)]
        n = len(mine)
        if n == 0:  # a tournament stopped before this bot finished a game
            out[b] = (-math.inf, math.inf)
            continue
        points = sum(1.0 if r.winner == b else 0.5 if r.winner is None else 0.0 for r in mine)
        p = points / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        opponents = statistics.fmean(ratings[r.p2 if r.p1 == b else r.p1] for r in mine)

        def elo(q: float) -> float:
            q = min(max(q, 1e-6), 1 - 1e-6)
            return opponents + ELO_SCALE * math.log10(q / (1 - q))

        out[b] = (elo(centre - margin), elo(centre + margin))
    return out


@dataclass(frozen=True)
class Standing:
    bot: str
    games: int
    wins: int
    draws: int
    losses: int
    elo: float
    elo_low: float
    elo_high: float
    forfeits: int = 0  # games lost because the bot failed (crashed, too slow, illegal answer)


def standings(bots: list[str], results: list[Result]) -> list[Standing]:
    ratings = fit_elo(bots, results)
    intervals = elo_intervals(bots, results, ratings)
    rows = []
    for b in bots:
        mine = [r for r in results if b in (r.p1, r.p2)]
        wins = sum(1 for r in mine if r.winner == b)
        draws = sum(1 for r in mine if r.winner is None)
        forfeits = sum(1 for r in mine if r.end.startswith(FORFEIT) and r.winner != b)
        rows.append(Standing(b, len(mine), wins, draws, len(mine) - wins - draws, ratings[b], *intervals[b], forfeits))
    rows.sort(key=lambda s: -s.elo)
    return rows


@dataclass(frozen=True)
class Played:
    """What a tournament played: every finished game, in schedule order, and whether Ctrl-C cut it short."""

    results: list[Result]
    interrupted: bool = False


def play_tournament(
    bots: list[str], games: int, seed: str, options: Options, executor: Executor,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
    on_forfeit: Callable[[Result], None] | None = report_forfeit,
    shuffle: str = COMMIT_REVEAL,
) -> Played:
    """The round robin on ``executor``; Ctrl-C keeps the games finished so far."""
    plan = schedule(bots, games, seed, options, shuffle)
    results: list[Result] = []

    def done(r: Result) -> None:
        results.append(r)
        if on_forfeit is not None and r.end.startswith(FORFEIT):
            on_forfeit(r)
        on_progress(len(results), len(plan))

    interrupted = gather(executor, play_pairing, plan, done)
    # Completion order depends on the workers; the report must not.
    results.sort(key=lambda r: (r.p1, r.p2, r.number))
    return Played(results, interrupted)


def run_tournament(
    bots: list[str], games: int, seed: str, options: Options, jobs: int,
    on_progress: Callable[[int, int], None] = lambda done, total: None,
    on_forfeit: Callable[[Result], None] | None = report_forfeit,
    shuffle: str = COMMIT_REVEAL,
) -> list[Result]:
    """The round robin in ``jobs`` local processes (Ctrl-C raises KeyboardInterrupt, as before)."""
    played = play_tournament(bots, games, seed, options, LocalPool(jobs), on_progress, on_forfeit, shuffle)
    if played.interrupted:
        raise KeyboardInterrupt
    return played.results


def save(out: Path, bots: list[str], games: int, seed: str, options: Options, results: list[Result],
         table: list[Standing], shuffle: str = COMMIT_REVEAL) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {
        "bots": bots, "games_per_pair": games, "seed": seed, "ruleset": options.ruleset.value,
        "festum": options.festum, "shuffle": shuffle, "standings": [asdict(s) for s in table],
        "forfeits": sum(1 for r in results if r.end.startswith(FORFEIT)),
        "games": [asdict(r) for r in results],
    }
    json_path = out / "tournament.json"
    write_atomically(json_path, json.dumps(data, indent=1) + "\n")
    csv_path = out / "standings.csv"
    buf = io.StringIO(newline="")
    w = csv.writer(buf)
    w.writerow(["bot", "games", "wins", "draws", "losses", "forfeits", "elo", "elo_low", "elo_high"])
    for s in table:
        w.writerow([s.bot, s.games, s.wins, s.draws, s.losses, s.forfeits, f"{s.elo:.1f}", f"{s.elo_low:.1f}",
                    f"{s.elo_high:.1f}"])
    write_atomically(csv_path, buf.getvalue())
    return json_path, csv_path


OUTPUT_FILES = ("tournament.json", "standings.csv")


def fresh_folder(base: Path) -> Path:
    """``base`` if it holds no tournament yet, else the first free ``base-2``, ``base-3``, ...:
    a rerun with the default folder never overwrites earlier results."""
    def taken(p: Path) -> bool:
        return any((p / name).exists() for name in OUTPUT_FILES)

    if not taken(base):
        return base
    n = 2
    while taken(base.with_name(f"{base.name}-{n}")):
        n += 1
    return base.with_name(f"{base.name}-{n}")
