"""basilica replay analyse: the search bot's view of each decision of a finished game, saved and drawn.

Searches here use a playout budget, so their figures are the same on any machine and load.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from basilica_p2p.cli import app
from basilica_p2p.engine import Game, format_action, observe
from basilica_p2p.replay import analysis
from basilica_p2p.replay.analysis import BLUNDER, INACCURACY, Budget, decisions_of, judge
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.html import build_viewer_data, write_viewer
from basilica_p2p.replay.show import walk
from basilica_p2p.replay.verify import known_manifests

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "replays"
runner = CliRunner()


@pytest.fixture
def replay(tmp_path: Path) -> Path:
    path = tmp_path / "game.replay"
    shutil.copy(SAMPLES / "classic-greedy-vs-greedy.replay", path)
    return path


def analyse(*args: str) -> tuple[int, str, str]:
    r = runner.invoke(app, ["replay", "analyse", *args])
    return r.exit_code, r.stdout, r.stderr


def test_every_decision_of_the_player_gets_the_searchs_values_and_is_saved_beside_the_replay(replay: Path) -> None:
    code, out, err = analyse(str(replay), "--seat", "1", "--playouts", "20", "--jobs", "1")
    assert code == 0, out + err
    saved = json.loads((replay.parent / "game.replay.analysis.json").read_text())
    assert saved["format"] == "basilica-analysis/1" and saved["search"] == {"bot": "mcts", "time": None,
                                                                            "playouts": 20}
    decisions = saved["decisions"]
    moves = walk(replay, known_manifests()).moves  # numbered as `replay show` numbers them
    mine = [m for m in moves if m.player == 0]
    assert {d["player"] for d in decisions} == {1} and 0 < len(decisions) <= len(mine)
    for d in decisions:
        assert moves[d["move"] - 1].action == d["played"] and moves[d["move"] - 1].player == 0
        assert d["loss"] == pytest.approx(max(0.0, d["best_value"] - d["played_value"]), abs=0.011)
        assert d["mark"] == ("blunder" if d["loss"] >= BLUNDER else "inaccuracy" if d["loss"] >= INACCURACY else None)
        line = next(x for x in out.splitlines() if x.split()[:1] == [str(d["move"])])
        assert d["played"] in line and d["best"] in line and (d["mark"] or "") in line
    assert "alice (player 1):" in out and "mean loss" in out and f"saved {replay}.analysis.json" in out


def test_a_second_run_reuses_what_is_saved_and_another_seat_adds_its_decisions(replay: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    first = analyse(str(replay), "--seat", "1", "--playouts", "10", "--jobs", "1")
    assert first[0] == 0, first

    def no_search(d: object) -> object:
        raise AssertionError("a saved decision was searched again")

    monkeypatch.setattr(analysis, "judge", no_search)
    again = analyse(str(replay), "--seat", "1", "--playouts", "10", "--jobs", "1")
    assert again[0] == 0 and again[1].replace(" reused from it", "") != again[1]
    assert [x for x in again[1].splitlines() if "reused" not in x and "saved" not in x] == \
        [x for x in first[1].splitlines() if "saved" not in x]
    monkeypatch.undo()
    both = analyse(str(replay), "--playouts", "10", "--jobs", "1")
    assert both[0] == 0 and "bob (player 2):" in both[1]
    players = [d["player"] for d in json.loads((replay.parent / "game.replay.analysis.json").read_text())["decisions"]]
    assert set(players) == {1, 2}
    other = analyse(str(replay), "--seat", "1", "--playouts", "11", "--jobs", "1")  # another budget: searched anew
    assert other[0] == 0 and "reused" not in other[1]


def test_the_search_is_given_the_players_observation_and_nothing_else() -> None:
    # A Decision carries no Game: the worker that searches cannot see the stack, a crown face down or
    # the other's secret Jester colours; its view is exactly what the mover observed then.
    assert not any(f.type in (Game, "Game") for f in dataclasses.fields(analysis.Decision))
    path = SAMPLES / "secret-jesters-random-vs-random.replay"
    found = decisions_of(path, known_manifests(), (0, 1), Budget(playouts=5))
    moves = walk(path, known_manifests()).moves
    line: dict[int, Game] = {}
    start = walk(path, known_manifests()).start
    assert start is not None
    line[0] = start
    for m in moves:
        line[m.ply + 1] = m.game
    assert len(found.decisions) > 20
    for d in found.decisions:
        assert d.view == observe(line[d.ply], d.player) and d.view.player == d.player
        assert d.played == d.legal[d.legal.index(d.played)]


def test_with_two_workers_the_figures_are_those_of_one_process(replay: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.replay"
    shutil.copy(replay, other)
    one = analyse(str(replay), "--seat", "2", "--playouts", "15", "--jobs", "1")
    two = analyse(str(other), "--seat", "2", "--playouts", "15", "--jobs", "2")
    assert one[0] == two[0] == 0
    strip = [x for x in one[1].splitlines()[1:] if not x.startswith("saved")]
    assert strip == [x for x in two[1].splitlines()[1:] if not x.startswith("saved")]


def test_a_hidden_deal_is_analysed_from_what_was_revealed(tmp_path: Path) -> None:
    path = tmp_path / "hidden.replay"
    shutil.copy(SAMPLES / "hidden-reshuffle-greedy-vs-greedy.replay", path)
    found = decisions_of(path, known_manifests(), (1,), Budget(playouts=5))
    assert len(found.decisions) > 20 and all(d.player == 1 for d in found.decisions)
    d = found.decisions[0]
    judged = judge(d)
    assert judged.played == format_action(d.played) and judged.loss >= 0 and judged.playouts >= 5


def test_an_unfinished_or_altered_replay_is_refused_in_one_line(replay: Path, tmp_path: Path) -> None:
    data = replay.read_bytes()
    records = read_replay(replay)
    cut = tmp_path / "cut.replay"
    cut.write_bytes(data[:records.offsets[len(records.records) // 2]])
    code, out, err = analyse(str(cut), "--playouts", "5", "--jobs", "1")
    assert code == 1 and "not finished" in err and "Traceback" not in out + err, out + err
    bad = tmp_path / "bad.replay"
    bad.write_bytes(data[:-40] + bytes(40))
    code, out, err = analyse(str(bad), "--playouts", "5", "--jobs", "1")
    assert code == 1 and err.startswith("error: ") and len(err.strip().splitlines()) == 1, out + err
    assert not list(tmp_path.glob("*.analysis.json"))


def test_the_viewer_draws_the_scores_and_the_saved_evaluation_each_point_going_to_its_move(
        replay: Path, tmp_path: Path, browser) -> None:  # type: ignore[no-untyped-def]
    assert build_viewer_data(replay)["analysis"] is None
    assert analyse(str(replay), "--playouts", "10", "--jobs", "1")[0] == 0
    data = build_viewer_data(replay)
    assert data["analysis"]["search"]["playouts"] == 10 and len(data["analysis"]["decisions"]) > 40
    page = tmp_path / "game.html"
    write_viewer(replay, page)
    browser.get(page.as_uri())
    score_points = browser.find_elements("css selector", "#score-graph circle")
    assert len(score_points) == 2 * len(data["steps"])
    eval_points = browser.find_elements("css selector", "#eval-graph circle")
    assert len(eval_points) == len(data["analysis"]["decisions"])
    assert browser.find_element("id", "evaluation").is_displayed()
    target = data["analysis"]["decisions"][10]
    point = next(p for p in eval_points if f"move {target['move']} " in p.get_attribute("textContent"))
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", point)
    step = int(browser.find_element("tag name", "body").get_attribute("data-step"))
    assert browser.find_element("id", "move-notation").text == target["played"]
    assert step == int(point.get_attribute("data-step"))
    assert target["played"] in browser.find_element("id", "move-analysis").text
    marked = [d for d in data["analysis"]["decisions"] if d["mark"]]
    assert len(browser.find_elements("css selector", "#moves .inaccuracy, #moves .blunder")) == len(marked)
    logs = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert logs == []


def test_play_offers_the_analysis_of_the_game_it_just_saved(tmp_path: Path) -> None:
    r = subprocess.run([str(Path(sys.executable).parent / "basilica"), "play", "--plain", "--vs", "random",
                        "--home", str(tmp_path / "home")], input="quit\nyes\n", capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    (saved,) = (tmp_path / "home" / "replays").glob("*.replay")
    assert f"analyse it: basilica replay analyse {saved} " in r.stdout, r.stdout[-1000:]
