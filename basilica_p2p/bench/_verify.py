"""Full verification against signature checking alone, for both deal schemes."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ._common import recorded_replays

if TYPE_CHECKING:
    from ..referee import Outcome


def bench_verify(replays: int, rounds: int = 5) -> None:
    """Full verification against signature checking alone, on the same files, side by side,
    for commit-reveal replays and for replays dealt face down (with the deal's audit); each
    time is the best of ``rounds``."""
    import tempfile

    from ..schemes import COMMIT_REVEAL, HIDDEN_DEAL
    from ..replay import find_forks, known_manifests, read_replay, verify_file
    from ..wire import open_envelope

    with tempfile.TemporaryDirectory() as tmp:
        paths = recorded_replays(Path(tmp), replays, COMMIT_REVEAL)
        hidden = recorded_replays(Path(tmp), replays, HIDDEN_DEAL)
        records = sum(1 + len(read_replay(p).records) for p in paths)
        hidden_records = sum(1 + len(read_replay(p).records) for p in hidden)
        manifests = known_manifests()

        def signatures_only(files: list[Path]) -> None:
            for p in files:
                for raw in read_replay(p).records:
                    open_envelope(raw)  # decode + Ed25519 check, nothing else

        def full(files: list[Path]) -> None:
            for p in files:
                if not verify_file(p, manifests).ok:
                    raise SystemExit(f"{p} did not verify")

        # Each game as both sides hold it: two files, as `basilica verify a/* b/*` sees them.
        pairs = []
        for p in paths:
            twin = p.with_name(p.stem + "-p2.replay")
            twin.write_bytes(p.read_bytes())
            pairs.append((p, twin))

        def one_by_one() -> None:
            for a, b in pairs:
                verify_file(a, manifests)
                verify_file(b, manifests)

        def cross_checked() -> None:
            for a, b in pairs:
                if find_forks([verify_file(a, manifests), verify_file(b, manifests)]):
                    raise SystemExit(f"{a} and {b} reported as parting")

        times: dict[str, list[float]] = {"sig": [], "full": [], "single": [], "cross": [], "hsig": [], "hfull": []}
        for _ in range(rounds):  # interleaved, so all see the same machine load
            for key, fn in (("sig", lambda: signatures_only(paths)), ("full", lambda: full(paths)),
                            ("single", one_by_one), ("cross", cross_checked),
                            ("hsig", lambda: signatures_only(hidden)), ("hfull", lambda: full(hidden))):
                start = time.perf_counter()
                fn()
                times[key].append(time.perf_counter() - start)
        sizes = [(a.stat().st_size, b.stat().st_size) for a, b in zip(paths, hidden)]
        moves = [(_moves(verify_file(a, manifests).outcome), _moves(verify_file(b, manifests).outcome))
                 for a, b in zip(paths, hidden)]
    sig, whole = min(times["sig"]), min(times["full"])
    print(f"verify: {replays} replays, {records} records")
    print(f"  signatures only: {records / sig:,.0f} records/s")
    print(f"  full verification: {records / whole:,.0f} records/s "
          f"(chain, protocol, every action re-played, every state hash)")
    print(f"  full / signatures-only time: {whole / sig:.2f}x (best of {rounds} each)")
    single, cross = min(times["single"]), min(times["cross"])
    print(f"  both sides' files of each game, cross-checked / verified one by one: {cross / single:.3f}x "
          f"({2 * records / cross:,.0f} records/s cross-checked)")
    hsig, hwhole = min(times["hsig"]), min(times["hfull"])
    print(f"verify, dealt face down ({HIDDEN_DEAL}): the same bots and seeds, {replays} replays, "
          f"{hidden_records} records")
    print(f"  signatures only: {hidden_records / hsig:,.0f} records/s; full verification with the deal's audit: "
          f"{hidden_records / hwhole:,.0f} records/s, {hwhole / replays * 1000:.0f} ms per replay "
          f"(commit-reveal: {whole / replays * 1000:.0f} ms)")
    print(f"  full / signatures-only time: {hwhole / hsig:.2f}x (commit-reveal-v1: {whole / sig:.2f}x)")
    growth = statistics.median(b / a - 1 for a, b in sizes)
    per_move = statistics.median((b / mb) / (a / ma) - 1 for (a, b), (ma, mb) in zip(sizes, moves))
    print(f"  replay size: median {statistics.median(b for _, b in sizes) / 1024:.1f} KiB dealt face down, "
          f"{statistics.median(a for a, _ in sizes) / 1024:.1f} KiB by commit-reveal; median growth per game "
          f"{growth * 100:+.0f}% ({per_move * 100:+.0f}% per decision, as the two deals give games of other lengths)")


def _moves(outcome: Outcome | None) -> int:
    assert outcome is not None  # the replays were just recorded, each a whole game
    return outcome.moves
