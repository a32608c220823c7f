"""Friends at the table (issue 23): people watching, and a peer that floods the chat.

Both run the host in a process of its own (so its memory is its own), the joiner in another,
and the watchers in a third, niced, as if on other machines: the figures are the host's.
"""

from __future__ import annotations

import multiprocessing
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..engine import Options, default_manifest
from ._network import _net_seed
from ..schemes import COMMIT_REVEAL


@dataclass(frozen=True)
class HostFigures:
    """What the host measured over the games it counted."""

    round_trips: list[float]  # seconds from sending an action to reading its acknowledgement
    seconds_per_game: float
    rss_kb: int  # the host process's resident memory at the end
    watchers_at_end: int = 0
    chat_lines: int = 0  # lines of chat the host recorded
    chat_refused: int = 0  # lines its gate let in that its seat then refused (the rest were dropped unread)


def _rss_kb() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
    except OSError:
        return 0
    import os

    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


# --- the processes -------------------------------------------------------------------------------


def _joiner(port: int, home: str, flood: float) -> None:
    """A greedy joiner; with ``flood`` it also sends that many lines of chat a second.

    The flood is a hostile peer's: lines signed once before the games and sent again and again,
    straight onto the connection, none of them recorded or numbered as an honest client would
    (which signs, records and hands over each line from a person's thread).  So what the figures
    show is what the flood costs the host, which reads every line, not what making it costs the
    flooder, which on other machines would not share the host's cores."""
    import trio

    from ..identity import local_identity
    from ..bots import make_bot
    from ..net import PeerConfig, Settings, Timeouts, play_games
    from ..net.framing import ENVELOPE, FramedStream, PeerClosed, PeerTimeout  # below the session: the flood's bytes
    from ..wire import seal

    manifest = default_manifest()
    me = local_identity(Path(home), "bench-join", "greedy-join")
    config = PeerConfig(me, Settings(Options(), manifest, COMMIT_REVEAL),
                        lambda k: make_bot("greedy", manifest, _net_seed(k, "join")), Path(home) / "join", None,
                        Timeouts())
    config.chat = bool(flood)
    lines = [seal(me.key, bytes(32), 2, bytes(32), "chat", {"n": n, "text": f"line {n} of the flood"}).raw
             for n in range(64)]

    async def spam(framed: FramedStream) -> None:
        n = 0
        next_at = trio.current_time()
        while True:
            next_at += 1 / flood
            await trio.sleep_until(next_at)
            try:
                await framed.send(ENVELOPE, lines[n % len(lines)])
            except (PeerClosed, PeerTimeout):
                return
            n += 1

    async def run() -> None:
        framed = FramedStream(await trio.open_tcp_stream("127.0.0.1", port))
        async with trio.open_nursery() as nursery:
            if flood:
                nursery.start_soon(spam, framed)
            await play_games(framed, False, config)
            nursery.cancel_scope.cancel()

    trio.run(run)


def _watchers(code: str, n: int, check: bool, out: Any) -> None:
    """``n`` people watching; with ``check`` each checks every record (``basilica watch``),
    otherwise each only reads the bytes (as watchers on other machines cost this one).  How many
    records (checking) or bytes (reading) each took."""
    import os

    import trio

    from ..identity import Identity
    from ..net import parse_watch, watch_games, watch_mac
    from ..net.framing import FramedStream  # below the watch protocol: see tests

    # On other machines, in life: readers run here only on a core nobody else wants (Linux's idle
    # class, which a player's process that wakes preempts at once; elsewhere the lowest nice).
    # Checkers, who do here what 'basilica watch' does, take the lowest nice.
    if not check and hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    else:
        os.nice(19)
    watched = parse_watch(code, int(time.time()))
    counts = [0] * n

    async def one(k: int) -> None:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        me = Identity(f"watcher{k}", Ed25519PrivateKey.generate())
        c = watched.candidates[0]
        stream = await trio.open_tcp_stream(c.host, c.port)
        if check:
            games = await watch_games(stream, watched, me, lambda header: (lambda event: None))
            counts[k] = sum(len(g.seat.records) for g in games)
            return
        framed = FramedStream(stream)
        look = (await framed.receive()).control()
        await framed.send_control("watch", key=me.public, name=me.name,
                                  mac=watch_mac(watched.secret, look["nonce"], watched.key, me.public))
        # Then only the bytes, to the end: parsing the frames would be this process's work, not
        # the host's.
        while data := await stream.receive_some(1 << 16):
            counts[k] += len(data)

    async def all_of_them() -> None:
        async with trio.open_nursery() as nursery:
            for k in range(n):
                nursery.start_soon(one, k)

    trio.run(all_of_them)
    out.put(counts)


def _host(games: int, watchers: int, flood: float, check: bool, out: Any) -> None:
    """The host: ``games`` + 1 greedy games (the first, with the connection's set-up, not
    counted), with ``watchers`` people watching and the joiner flooding ``flood`` lines a second."""
    import trio

    from ..bots import make_bot
    from ..identity import local_identity
    from ..net import Candidate, GameReport, PeerConfig, Settings, Timeouts, WatchHub, host, is_chat
    from ..replay import read_replay

    manifest = default_manifest()
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        me = local_identity(home, "bench-host", "greedy-host")
        round_trips: list[float] = []
        ends: list[float] = []
        chat = [0]
        refused = [0]

        def log(line: str) -> None:
            refused[0] += line.startswith("a line of chat was refused")

        def on_game(report: GameReport) -> None:
            ends.append(time.perf_counter())
            chat[0] += sum(1 for raw in read_replay(report.replay).records if is_chat(raw))

        config = PeerConfig(me, Settings(Options(), manifest, COMMIT_REVEAL),
                            lambda k: make_bot("greedy", manifest, _net_seed(k, "host")), home / "host", None, Timeouts(),
                            games + 1, log, on_game=on_game, round_trips=round_trips)
        config.chat = bool(flood)
        hub = WatchHub(me, max(1, watchers)) if watchers else None
        config.hub = hub
        children: list[Any] = []
        counts: Any = ctx.Queue()

        async def run() -> None:
            async with trio.open_nursery() as nursery:
                if hub is not None:
                    (lst,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
                    code = hub.code([Candidate("lan", "127.0.0.1", lst.socket.getsockname()[1])], int(time.time()))
                    nursery.start_soon(hub.serve, lst)
                    proc = ctx.Process(target=_watchers, args=(code, watchers, check, counts))
                    proc.start()
                    children.append(proc)
                    while len(hub.watchers) < watchers:
                        await trio.sleep(0.05)

                def ready(address: str, port: int) -> None:
                    proc = ctx.Process(target=_joiner, args=(port, tmp, flood))
                    proc.start()
                    children.append(proc)

                await host("127.0.0.1", 0, config, ready)
                nursery.cancel_scope.cancel()

        trio.run(run)
        seen = counts.get(timeout=60) if hub is not None else []
        for proc in children:
            proc.join(30)
        took = (ends[-1] - ends[0]) / games if len(ends) > 1 else 0.0
        out.put(HostFigures(round_trips, took, _rss_kb(), len(seen), chat[0], refused[0]))


def _measure(games: int, watchers: int = 0, flood: float = 0.0, check: bool = True) -> HostFigures:
    ctx = multiprocessing.get_context("spawn")
    out: Any = ctx.Queue()
    proc = ctx.Process(target=_host, args=(games, watchers, flood, check, out))
    proc.start()
    figures: HostFigures = out.get(timeout=600)
    proc.join(30)
    return figures


# --- the benchmarks ----------------------------------------------------------------------------------


def bench_watchers(games: int, watchers: int = 8, rounds: int = 2) -> None:
    """The players' action round trip and the game's pace with ``watchers`` people watching and
    with none, alternated ``rounds`` times; and the host's memory per watcher.  Watching is run
    twice: watchers that only read what the host sends (the host's own cost, as when they are on
    other machines) and watchers that check every record on this machine as well (its 2 cores
    then do the watchers' checking too)."""
    runs: dict[str, list[HostFigures]] = {"none": [], "reading": [], "checking": []}
    for _ in range(rounds):
        runs["none"].append(_measure(games))
        runs["reading"].append(_measure(games, watchers, check=False))
        runs["checking"].append(_measure(games, watchers, check=True))
    print(f"watchers: {games} greedy-vs-greedy games per run over loopback, {rounds} runs each way, alternated; "
          f"host, joiner and the {watchers} watchers apart (one process: reading, in the idle class; "
          f"checking, at nice 19)")
    base = runs["none"]
    rt0 = [t for f in base for t in f.round_trips]
    pace0 = statistics.median(f.seconds_per_game for f in base)
    rss0 = statistics.median(f.rss_kb for f in base)
    labels = {"none": "no watchers", "reading": f"{watchers} reading", "checking": f"{watchers} checking"}
    for key, figures in runs.items():
        rt = [t for f in figures for t in f.round_trips]
        pace = statistics.median(f.seconds_per_game for f in figures)
        rss = statistics.median(f.rss_kb for f in figures)
        ratio = "" if key == "none" else (
            f" ({statistics.median(rt) / statistics.median(rt0):.2f}x p50, "
            f"{_percentile(rt, 0.99) / _percentile(rt0, 0.99):.2f}x p99, {pace / pace0:.2f}x pace; "
            f"host memory +{(rss - rss0) / watchers:.0f} KB per watcher)")
        print(f"  {labels[key]:>12}: action round trip p50 {statistics.median(rt) * 1000:.2f} ms, "
              f"p99 {_percentile(rt, 0.99) * 1000:.2f} ms over {len(rt)} actions; {pace * 1000:.0f} ms/game; "
              f"host {rss / 1024:.1f} MB{ratio}")
    print("  (target: the players' round trips within 10% of no watchers)")


def bench_chat_flood(games: int, rate: float = 200.0, rounds: int = 2) -> None:
    """The game's pace and the host's memory while the joiner says ``rate`` lines of chat a
    second, against the same games without; alternated ``rounds`` times."""
    quiet: list[HostFigures] = []
    flood: list[HostFigures] = []
    for _ in range(rounds):
        quiet.append(_measure(games))
        flood.append(_measure(games, flood=rate))
    pace0 = statistics.median(f.seconds_per_game for f in quiet)
    pace1 = statistics.median(f.seconds_per_game for f in flood)
    rss0 = statistics.median(f.rss_kb for f in quiet)
    rss1 = statistics.median(f.rss_kb for f in flood)
    refused = sum(f.chat_refused for f in flood)
    print(f"chat flood: {games} greedy-vs-greedy games per run, {rounds} runs each way, alternated; the joiner "
          f"sends {rate:g} lines a second, signed once for no game and sent again and again (a hostile peer's)")
    print(f"  pace: {pace0 * 1000:.0f} ms/game quiet, {pace1 * 1000:.0f} ms/game flooded ({pace1 / pace0:.2f}x); "
          f"round trip p50 {statistics.median([t for f in quiet for t in f.round_trips]) * 1000:.2f} ms quiet, "
          f"{statistics.median([t for f in flood for t in f.round_trips]) * 1000:.2f} ms flooded")
    print(f"  host memory: {rss0 / 1024:.1f} MB quiet, {rss1 / 1024:.1f} MB flooded; lines its gate let in (each then "
          f"refused by its seat): {refused} over the flooded runs, the rest dropped unread")
