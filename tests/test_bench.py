"""The benchmarks (basilica_p2p/bench), each on a tiny input: they run, print every figure they
promise, and keep the checks they make on the way (replays verify, a deal passes its audit,
networked games replay to the same final state).  Their speed is what they print, never asserted
here.  ``bench mcts`` is tested with the mcts bot (tests/test_mcts.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from basilica_p2p import bench
from basilica_p2p.bench._network import bench_network_scheme
from basilica_p2p.engine import Options
from basilica_p2p.schemes import COMMIT_REVEAL, HIDDEN_DEAL

NUMBER = r"[0-9][0-9,.]*"


def printed(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_the_engine_benchmark_times_games_and_each_call(capsys: pytest.CaptureFixture[str]) -> None:
    bench.bench_engine(2, 7, Options(festum=True))
    lines = printed(capsys)
    assert re.fullmatch(rf"random vs random: {NUMBER} complete games/s on one core \({NUMBER} decisions per game, "
                        r"bots see observations\)", lines[0]), lines[0]
    assert re.fullmatch(rf"legal_actions\(\): {NUMBER} µs mean over 7 states \(median {NUMBER} actions, "
                        rf"max {NUMBER}\)", lines[1]), lines[1]
    for line, call in zip(lines[2:], ("apply()", "clone()", "state_hash()")):
        assert line.startswith(f"{call}: ") and line.split()[2] == "µs", line
    assert len(lines) == 5


def test_the_verify_benchmark_verifies_every_replay_it_times(capsys: pytest.CaptureFixture[str]) -> None:
    bench.bench_verify(1, rounds=1)  # a replay that did not verify, or two files that parted, would exit
    out = "\n".join(printed(capsys))
    assert re.search(rf"^verify: 1 replays, {NUMBER} records$", out, re.M), out
    assert "full / signatures-only time: " in out and "(best of 1 each)" in out
    assert "both sides' files of each game, cross-checked / verified one by one" in out
    assert re.search(rf"^verify, dealt face down \({HIDDEN_DEAL}\): the same bots and seeds, 1 replays, "
                     rf"{NUMBER} records$", out, re.M), out
    assert re.search(rf"replay size: median {NUMBER} KiB dealt face down, {NUMBER} KiB by commit-reveal", out), out


@pytest.mark.parametrize("shuffle", [COMMIT_REVEAL, HIDDEN_DEAL])
def test_the_network_benchmark_replays_each_networked_game_to_the_same_state(
    shuffle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """One timed game (after the one that pays for the joiner's process and the connection)."""
    seconds = bench_network_scheme(1, shuffle)
    out = "\n".join(printed(capsys))
    assert seconds > 0
    assert out.startswith(f"network ({shuffle}): 1 greedy-vs-greedy games over loopback TCP"), out
    assert "the same games replayed in one process: 1/1 identical final state hashes" in out, out
    assert re.search(rf"action round trip .*: median {NUMBER} ms, p99 {NUMBER} ms over [1-9][0-9]* actions", out), out
    assert ("no seed to replay from" in out) == (shuffle == HIDDEN_DEAL)


def test_the_network_benchmark_sets_both_deals_side_by_side(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    timed: list[tuple[int, str]] = []

    def scheme(games: int, shuffle: str) -> float:
        timed.append((games, shuffle))
        return {COMMIT_REVEAL: 0.25, HIDDEN_DEAL: 1.0}[shuffle]

    monkeypatch.setattr("basilica_p2p.bench._network.bench_network_scheme", scheme)
    bench.bench_network(3)
    assert timed == [(3, COMMIT_REVEAL), (3, HIDDEN_DEAL)]
    assert printed(capsys) == ["network, side by side: 1000 ms/game dealt face down, 250 ms/game by commit-reveal "
                               "(4.00x; the games differ, as the two deals do)"]


def test_the_deal_benchmark_deals_reveals_and_audits_a_whole_game(capsys: pytest.CaptureFixture[str]) -> None:
    bench.bench_deal(1)  # a deal that failed its audit would exit
    lines = printed(capsys)
    assert lines[0].startswith(f"deal ({HIDDEN_DEAL}): default manifest with festum, ") and \
        lines[0].endswith("CPU time, best of 1 games"), lines[0]
    for player, line in zip((1, 2), lines[1:3]):
        assert re.fullmatch(rf"  player {player}: {NUMBER} ms per game \(hash {NUMBER}, deal {NUMBER}, "
                            rf"reveal {NUMBER}, reshuffle {NUMBER}, audit {NUMBER} ms\)", line), line
    sizes = lines[3]
    for step in ("deal 1", "deal 2", "deal 3", "reshuffle 1", "reshuffle 2", "reshuffle 3"):
        assert re.search(rf"{step} {NUMBER} KiB", sizes), sizes


def test_the_deal_benchmark_inside_recorded_games_times_each_side(capsys: pytest.CaptureFixture[str]) -> None:
    bench.bench_deal_played(1)
    out = "\n".join(printed(capsys))
    head = re.search(rf"^deal in recorded games: 1 greedy-vs-greedy games with festum, dealt face down by "
                     rf"{HIDDEN_DEAL} \(([01]) with a D11 reshuffle\); CPU time$", out, re.M)
    assert head is not None, out
    assert re.search(rf"per peer per game: median {NUMBER} ms, max {NUMBER} ms", out), out
    assert re.search(rf"median {NUMBER} ms dealt face down \(two live referees\), {NUMBER} ms by commit-reveal", out)


def test_the_default_run_calls_every_benchmark_with_its_documented_sizes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[str, tuple[Any, ...]]] = []
    for name in ("bench_engine", "bench_verify", "bench_network", "bench_deal", "bench_deal_played"):
        monkeypatch.setattr(bench, name, lambda *args, name=name: calls.append((name, args)))
    bench.main([])
    assert calls == [("bench_engine", (300, 3000, Options())), ("bench_verify", (20,)), ("bench_network", (10,)),
                     ("bench_deal", (5,)), ("bench_deal_played", (10,))]
    machine = printed(capsys)[0]
    assert machine.startswith("machine: ") and " cores, Python " in machine, machine
    calls.clear()
    bench.main(["deal", "--games", "2"])
    assert calls == [("bench_deal", (2,)), ("bench_deal_played", (2,))]


def test_the_watchers_benchmark_times_round_trips_with_none_reading_and_checking(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bench.bench_watchers(1, watchers=2, rounds=1)
    out = "\n".join(printed(capsys))
    assert out.startswith("watchers: 1 greedy-vs-greedy games per run over loopback, 1 runs each way"), out
    for label in ("no watchers", "2 reading", "2 checking"):
        assert re.search(rf"{label}: action round trip p50 {NUMBER} ms, p99 {NUMBER} ms over [1-9][0-9]* actions; "
                         rf"{NUMBER} ms/game; host {NUMBER} MB", out), (label, out)
    assert re.search(rf"2 checking: .*\({NUMBER}x p50, {NUMBER}x p99, {NUMBER}x pace; host memory \+?-?{NUMBER} KB "
                     r"per watcher\)", out), out


def test_the_chat_flood_benchmark_counts_the_lines_the_hosts_gate_let_in(capsys: pytest.CaptureFixture[str]) -> None:
    bench.bench_chat_flood(1, rate=200.0, rounds=1)
    out = "\n".join(printed(capsys))
    assert re.search(rf"pace: {NUMBER} ms/game quiet, {NUMBER} ms/game flooded", out), out
    let_in = re.search(r"lines its gate let in \(each then refused by its seat\): ([0-9]+) over the flooded runs", out)
    # The flood came, and the gate let some of it in (the seat refused those: signed for no game).
    assert let_in is not None and int(let_in.group(1)) >= 1, out
