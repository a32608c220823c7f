"""A networked game against the same game in one process."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from ..engine import Options, default_manifest
from ..match import play_game


def _net_seed(k: int, role: str) -> int:
    return 7919 * k + (1 if role == "host" else 2)


def _join_worker(port: int, home: str, games: int, shuffle: str) -> None:
    """The joiner, in its own process (as on another machine)."""

    import trio

    from ..bots import make_bot
    from ..identity import local_identity
    from ..net import PeerConfig, Settings, Timeouts, join

    manifest = default_manifest()
    me = local_identity(Path(home), "bench-join", "greedy-join")
    config = PeerConfig(me, Settings(Options(), manifest, shuffle),
                        lambda k: make_bot("greedy", manifest, _net_seed(k, "join")), Path(home) / "join", None,
                        Timeouts())
    trio.run(join, "127.0.0.1", port, config)


def bench_network(games: int) -> None:
    """:func:`bench_network_scheme` for both shuffle schemes, one after the other."""
    from ..schemes import COMMIT_REVEAL, HIDDEN_DEAL

    seeded = bench_network_scheme(games, COMMIT_REVEAL)
    hidden = bench_network_scheme(games, HIDDEN_DEAL)
    print(f"network, side by side: {hidden * 1000:.0f} ms/game dealt face down, {seeded * 1000:.0f} ms/game by "
          f"commit-reveal ({hidden / seeded:.2f}x; the games differ, as the two deals do)")


def bench_network_scheme(games: int, shuffle: str) -> float:
    """Networked bot-vs-bot games over loopback against the same games played in one process.

    The joiner runs in a child process, as it would on another machine; the
    host times each game from the end of the previous one, so process start
    and connection set-up (all in the first game) are left out: games + 1 are
    played and the first is not counted.  A game dealt face down is played
    again in one process from the secrets both sides published at its end;
    it has no seed, so there is no engine-only figure for it.  Returns the
    networked seconds per game.
    """
    import multiprocessing
    import tempfile

    import trio

    from ..bots import GreedyBot, make_bot
    from ..identity import local_identity
    from ..net import GameReport, PeerConfig, Settings, Timeouts, host
    from ..replay import play_recorded, read_replay
    from ..schemes import HIDDEN_DEAL
    from ..wire import open_envelope

    manifest = default_manifest()
    hidden = shuffle == HIDDEN_DEAL
    round_trips: list[float] = []
    ends: list[float] = []
    reports: list[GameReport] = []
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        me = local_identity(home, "bench-host", "greedy-host")
        ctx = multiprocessing.get_context("spawn")
        child: list[multiprocessing.process.BaseProcess] = []

        def ready(address: str, port: int) -> None:
            proc = ctx.Process(target=_join_worker, args=(port, tmp, games + 1, shuffle))
            proc.start()
            child.append(proc)

        def on_game(report: GameReport) -> None:
            ends.append(time.perf_counter())
            reports.append(report)

        config = PeerConfig(me, Settings(Options(), manifest, shuffle),
                            lambda k: make_bot("greedy", manifest, _net_seed(k, "host")),
                            home / "host", None, Timeouts(), games + 1, on_game=on_game, round_trips=round_trips)
        trio.run(host, "127.0.0.1", 0, config, ready)
        child[0].join(30)
        net_time = ends[-1] - ends[0]
        local_time = recorded_time = 0.0
        same = 0
        ids = (local_identity(home, "bench-host", "greedy-host"), local_identity(home, "bench-join", "greedy-join"))
        for k in range(1, games + 1):
            r = reports[k]
            host_seat = k % 2
            seeds = [0, 0]
            seeds[host_seat] = _net_seed(k, "host")
            seeds[1 - host_seat] = _net_seed(k, "join")
            bots = (GreedyBot(manifest, seeds[0]), GreedyBot(manifest, seeds[1]))
            again = None
            if not hidden:
                start = time.perf_counter()
                again = play_game(manifest, Options(), r.game.seed, bots)
                local_time += time.perf_counter() - start
            # The same game once more in one process, but with the whole protocol: every
            # message signed, one fsynced replay (what `match --replay-dir` does).
            envs = [open_envelope(raw) for raw in read_replay(r.replay).records]
            nonces = tuple(e.body["nonce"] for e in envs if e.type == "reveal")
            # Player 1 publishes its secret first (the referee asks for them in seat order).
            secrets = tuple(e.body["secret"] for e in envs if e.type == "secret") if hidden else None
            players = (ids[0], ids[1]) if host_seat == 0 else (ids[1], ids[0])
            start = time.perf_counter()
            recorded = play_recorded(home / f"local-{k}.replay", manifest, Options(), players,
                                     (GreedyBot(manifest, seeds[0]), GreedyBot(manifest, seeds[1])),
                                     nonces=nonces, game_id=envs[0].game, shuffle=shuffle,
                                     deal_secrets=secrets)
            recorded_time += time.perf_counter() - start
            same += (again is None or again.state_hash() == r.game.state_hash()) \
                and r.game.state_hash() == recorded.state_hash()
    rt = sorted(round_trips)
    p99 = rt[min(len(rt) - 1, int(0.99 * len(rt)))] if rt else 0.0
    print(f"network ({shuffle}): {games} greedy-vs-greedy games over loopback TCP, host and joiner in two processes "
          f"(signed, checked by both referees, two fsynced replays)")
    print(f"  the same games replayed in one process: {same}/{games} identical final state hashes")
    engine_only = "no seed to replay from" if hidden else \
        f"{local_time / games * 1000:.0f} ms/game (ratio {net_time / local_time:.2f}x)"
    print(f"  networked {net_time / games * 1000:.0f} ms/game; in one process: engine and bots only "
          f"{engine_only}, with signatures and a "
          f"fsynced replay {recorded_time / games * 1000:.0f} ms/game (ratio {net_time / recorded_time:.2f}x)")
    print(f"  action round trip (send action -> its ack read; actions with no decision of ours "
          f"in between): median {statistics.median(rt) * 1000:.2f} ms, "
          f"p99 {p99 * 1000:.2f} ms over {len(rt)} actions")
    return net_time / games
