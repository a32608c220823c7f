"""basilica tournament: the round robin, Elo, determinism, files."""

from __future__ import annotations

import csv
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from basilica_p2p.cli import app
from basilica_p2p.engine import Options
from basilica_p2p.tournament import Result, elo_intervals, fit_elo, run_tournament, schedule, standings

runner = CliRunner()


def test_two_player_elo_matches_the_closed_form() -> None:
    # A beats B 3 times in 4. With the 0.1 prior the strength ratio is (3 + 0.1) / (1 + 0.1),
    # so the difference is 400 * log10(3.1 / 1.1) = 180.02, split around 1500.
    results = [Result("A", "B", k, (1, 0), "A", "x") for k in range(3)] + [Result("A", "B", 3, (0, 1), "B", "x")]
    r = fit_elo(["A", "B"], results)
    d = 400 * math.log10(3.1 / 1.1)
    assert r["A"] == pytest.approx(1500 + d / 2, abs=0.01)
    assert r["B"] == pytest.approx(1500 - d / 2, abs=0.01)


def test_draws_count_half_and_even_records_give_equal_ratings() -> None:
    results = [Result("A", "B", 0, (3, 3), None, "x"), Result("A", "B", 1, (5, 1), "A", "x"),
               Result("B", "A", 2, (5, 1), "B", "x")]
    r = fit_elo(["A", "B"], results)
    assert r["A"] == pytest.approx(r["B"], abs=1e-6)


def test_intervals_contain_the_estimate_even_for_a_perfect_record() -> None:
    results = [Result("A", "B", k, (9, 0), "A", "x") for k in range(6)]
    ratings = fit_elo(["A", "B"], results)
    for bot, (lo, hi) in elo_intervals(["A", "B"], results, ratings).items():
        assert lo < ratings[bot] < hi


def test_schedule_alternates_seats_and_covers_every_pair() -> None:
    plan = schedule(["a", "b", "c"], 4, "s", Options())
    assert len(plan) == 3 * 4
    ab = [p for p in plan if {p.p1, p.p2} == {"a", "b"}]
    assert [p.p1 for p in ab] == ["a", "b", "a", "b"]


def test_results_do_not_depend_on_the_number_of_workers() -> None:
    one = run_tournament(["random", "greedy"], 3, "det", Options(), jobs=1)
    two = run_tournament(["random", "greedy"], 3, "det", Options(), jobs=2)
    assert one == two
    table = standings(["random", "greedy"], one)
    assert [s.bot for s in table] == ["greedy", "random"]  # greedy rated above random
    assert all(s.wins + s.draws + s.losses == s.games == 3 for s in table)


def test_tournament_cli_writes_json_and_csv(tmp_path: Path) -> None:
    r = runner.invoke(app, ["tournament", "--bots", "random,greedy", "--games", "2", "--jobs", "1",
                            "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert "Elo" in r.output and "95% interval" in r.output
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert len(data["games"]) == 2 and {s["bot"] for s in data["standings"]} == {"random", "greedy"}
    rows = list(csv.DictReader((tmp_path / "standings.csv").open()))
    assert {row["bot"] for row in rows} == {"random", "greedy"}


@pytest.mark.parametrize("bots", ["random", "random,random", "random,alphago"])
def test_tournament_cli_refuses_bad_bot_lists(bots: str) -> None:
    r = runner.invoke(app, ["tournament", "--bots", bots])
    assert r.exit_code == 2 and "Traceback" not in r.output


CRASHER = "cmd:sh -c 'exit 3'"  # a bot program that dies at once: every game of it is a forfeit


def test_the_table_and_standings_csv_count_forfeits(tmp_path: Path) -> None:
    r = runner.invoke(app, ["tournament", "--bots", f"random,{CRASHER}", "--games", "2", "--jobs", "1",
                            "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.replace("┃", "│").split("│") if c.strip()]

    header = next(line for line in r.stdout.splitlines() if "Elo" in line)
    assert cells(header)[:6] == ["bot", "games", "wins", "draws", "losses", "forfeits"], header
    rows = {row["bot"]: row for row in csv.DictReader((tmp_path / "standings.csv").open())}
    assert list(next(iter(rows.values())))[:6] == ["bot", "games", "wins", "draws", "losses", "forfeits"]
    assert rows[CRASHER]["forfeits"] == "2" and rows["random"]["forfeits"] == "0"
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert data["forfeits"] == 2
    assert {s["bot"]: s["forfeits"] for s in data["standings"]} == {CRASHER: 2, "random": 0}
    crasher_line = next(line for line in r.stdout.splitlines() if line.strip().startswith("cmd:"))
    assert cells(crasher_line)[1:6] == ["2", "0", "0", "2", "2"], crasher_line  # games wins draws losses forfeits


def test_a_rerun_never_overwrites_the_default_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    home = tmp_path / "home"
    runs = home / "tournaments"
    args = ["tournament", "--bots", "random,greedy", "--games", "1", "--jobs", "1", "--seed", "s", "--home", str(home)]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert f"saved {runs / 's' / 'tournament.json'}" in first.stdout and "replacing" not in first.stdout
    marker = (runs / "s" / "tournament.json").read_text()
    second = runner.invoke(app, args)
    assert second.exit_code == 0, second.output
    assert f"saved {runs / 's-2' / 'tournament.json'} and {runs / 's-2' / 'standings.csv'}" in second.stdout, second.stdout
    assert (runs / "s" / "tournament.json").read_text() == marker
    third = runner.invoke(app, args)
    assert f"saved {runs / 's-3'}/" in third.stdout, third.stdout
    assert [p.name for p in tmp_path.iterdir()] == ["home"]  # nothing in the current folder
    # an --out folder is the user's choice: replaced, and the output line says so
    again = runner.invoke(app, [*args, "--out", str(runs / "s")])
    assert again.exit_code == 0, again.output
    assert f"saved {runs / 's' / 'tournament.json'}" in again.stdout and "replacing" in again.stdout, again.stdout


BIN = Path(sys.executable).parent

TORCH_BOT = """
    import torch


    class TorchBot:
        name = "torchbot"

        def __init__(self, manifest=None, seed=0):
            self.w = torch.randn(256, 256)
            (self.w @ self.w).sum()  # torch's thread pool starts in the process that builds the bot

        def choose(self, obs, legal):
            return legal[int((self.w @ self.w).sum().abs().item()) % len(legal)]
"""


def run_bounded(args: list[str], env: dict[str, str], cwd: Path, seconds: float) -> subprocess.CompletedProcess[str]:
    """``basilica ARGS`` in a session of its own; if it has not ended after ``seconds``, it and every
    worker it started are killed and the test fails: a hang must not outlive the test."""
    proc = subprocess.Popen([str(BIN / "basilica"), *args], cwd=cwd, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"basilica {' '.join(args)} was still running after {seconds:.0f} s")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_bot_that_started_torch_threads_in_the_driver_still_plays_in_worker_processes(tmp_path: Path) -> None:
    # The command builds every bot once to check its name, so torch's threads run in the driver
    # before any worker starts; a worker forked from it blocked forever on torch's first call.
    (tmp_path / "torch_bot.py").write_text(textwrap.dedent(TORCH_BOT))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    r = run_bounded(["tournament", "--bots", "torch_bot:TorchBot,random", "--games", "2", "--jobs", "2",
                     "--out", str(tmp_path / "out")], env, tmp_path, 240)
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert len(data["games"]) == 2 and data["forfeits"] == 0


DEAF_BOT = """
    import os
    import signal
    import time
    from pathlib import Path

    MARKS = Path({marks!r})


    class Deaf:
        name = "deaf"

        def choose(self, obs, legal):
            # As a bot blocked in native code: Python's SIGTERM handler never gets to run.
            signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGTERM}})
            (MARKS / str(os.getpid())).touch()
            while True:
                time.sleep(1)
"""


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_sigterm_stops_the_tournament_and_its_workers_and_keeps_the_finished_games(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "deaf_bot.py").write_text(textwrap.dedent(DEAF_BOT.format(marks=str(marks))))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    # random-greedy games come first in the schedule; every game of the deaf bot hangs for good.
    proc = subprocess.Popen([str(BIN / "basilica"), "tournament", "--bots", "random,greedy,deaf_bot:Deaf",
                             "--games", "2", "--jobs", "2", "--seed", "term", "--out", str(tmp_path / "out")],
                            cwd=tmp_path, env=env, start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(list(marks.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        workers = [int(p.name) for p in marks.iterdir()]
        assert len(workers) == 2, "the deaf bot's games did not start in both workers"
        time.sleep(0.5)  # the driver has the two finished games by now
        proc.send_signal(signal.SIGTERM)  # to the driver alone, as `kill PID` sends it
        out, err = proc.communicate(timeout=60)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
    assert proc.returncode == 130, err[-3000:]
    assert "interrupted: 2 games finished" in " ".join(out.split()), out
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert [(g["p1"], g["p2"]) for g in data["games"]] == [("greedy", "random"), ("random", "greedy")]
    assert not [pid for pid in workers if alive(pid)], "workers were left running"
    assert "Traceback" not in err
