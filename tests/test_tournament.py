"""basilica tournament: the round robin, Elo, determinism, files."""

from __future__ import annotations

import csv
import json
import math
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
