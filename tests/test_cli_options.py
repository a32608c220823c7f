"""Issue 13's first-game frictions in the command line: global options after the command, -h,
flags without a placeholder, the joiner's result line, names instead of "player 1/2", plurals."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from basilica_p2p.cli import app

runner = CliRunner()


def run(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"BASILICA_HOME": None, "COLUMNS": "200"})


def all_commands():  # type: ignore[no-untyped-def]
    """Every command path, groups included: [], ["join"], ["id"], ["id", "new"], ..."""
    root = typer.main.get_command(app)
    out = []

    def walk(cmd, path):  # type: ignore[no-untyped-def]
        out.append(path)
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])

    walk(root, [])
    return out


# Item 4: --home (and --version) after the subcommand, -h, no <bool>.

def test_home_after_the_subcommand(tmp_path: Path) -> None:
    home = tmp_path / "h"
    r = run("id", "new", "--name", "alice", "--home", str(home))
    assert r.exit_code == 0, r.output
    assert (home / "identity.key").exists() or any(home.iterdir())
    r = run("id", "show", "--home", str(home))
    assert r.exit_code == 0, r.output
    assert "alice" in r.output


def test_home_after_the_group(tmp_path: Path) -> None:
    home = tmp_path / "h"
    assert run("--home", str(home), "id", "new", "--name", "bob").exit_code == 0
    r = run("id", "--home", str(home), "show")
    assert r.exit_code == 0, r.output
    assert "bob" in r.output


def test_home_after_wins_over_before(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert run("--home", str(a), "id", "new", "--name", "alice").exit_code == 0
    assert run("--home", str(b), "id", "new", "--name", "bob").exit_code == 0
    r = run("--home", str(a), "id", "show", "--home", str(b))
    assert r.exit_code == 0, r.output
    assert "bob" in r.output and "alice" not in r.output
    r = run("--home", str(a), "id", "show")
    assert "alice" in r.output


@pytest.mark.parametrize("command", [["join"], ["host"], ["play"], ["verify"], ["replay", "show"], ["match"],
                                     ["resume"], ["peers", "list"], ["rules", "score"], ["demo"]])
def test_home_accepted_after_every_command(command: list[str], tmp_path: Path) -> None:
    assert command[-1] in [p[-1] for p in all_commands() if p], f"no command {command}"
    r = run(*command, "--home", str(tmp_path), "--help")
    assert r.exit_code == 0, r.output
    assert "No such option" not in r.output


def test_every_command_has_home_and_short_help() -> None:
    for path in all_commands():
        r = run(*path, "-h")
        assert r.exit_code == 0, (path, r.output)
        assert "Usage:" in r.output, path
        assert "--home" in r.output, path


def test_version_after_the_command() -> None:
    r = run("verify", "--version")
    assert r.exit_code == 0, r.output
    assert r.output.startswith("basilica ")


def test_no_bool_placeholder_in_any_help() -> None:
    for path in all_commands():
        r = run(*path, "--help")
        assert r.exit_code == 0, (path, r.output)
        assert "<bool>" not in r.output, (path, [l for l in r.output.splitlines() if "<bool>" in l])


# Item 7: the result line has names in seat order, each beside its score, and says which is us.

def report_line(seat: int, me: str, peer: str, scores: tuple[int, int], winner: int | None,
                capsys: pytest.CaptureFixture[str], end: str = "score", moves: int = 40, reason: str = "") -> str:
    from types import SimpleNamespace

    from basilica_p2p.cli import _report_games

    outcome = SimpleNamespace(end=end, winner=winner, scores=scores, moves=moves, reason=reason)
    _report_games([SimpleNamespace(outcome=outcome, seat=seat, peer=peer, replay="g.replay")], me)
    return capsys.readouterr().out.strip()


def test_the_joiner_sees_names_and_scores_in_seat_order(capsys: pytest.CaptureFixture[str]) -> None:
    line = report_line(1, "bob", "alice", (31, 12), 0, capsys)
    assert line == "game 1: alice (player 1) 31 - 12 bob (player 2, you): alice won, 40 moves (score); replay g.replay"


def test_the_host_sees_the_same_order(capsys: pytest.CaptureFixture[str]) -> None:
    line = report_line(0, "alice", "bob", (31, 12), 0, capsys)
    assert line == "game 1: alice (player 1, you) 31 - 12 bob (player 2): you won, 40 moves (score); replay g.replay"


def test_a_lost_game_seated_second_and_one_move(capsys: pytest.CaptureFixture[str]) -> None:
    line = report_line(1, "bob", "alice", (0, 0), 0, capsys, end="forfeit", moves=1, reason="quit")
    assert line.startswith("game 1: alice (player 1) 0 - 0 bob (player 2, you): you forfeited (bob: quit), 1 move ")


def test_a_game_lost_on_time_says_so_on_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    """Clocks (issue 13): a claim on time reads as a win on time, not a bare '(time)'."""
    lost = report_line(1, "bob", "alice", (20, 25), 0, capsys, end="time", moves=31)
    assert ": alice won on time (your clock ran out), 31 moves (time);" in lost, lost
    won = report_line(0, "alice", "bob", (20, 25), 0, capsys, end="time", moves=31)
    assert ": you won on time, 31 moves (time);" in won, won


# Item 10: names instead of "player 1/2" in the demo and in replay show; "1 move".

def test_replay_show_names_the_players(tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = run("--home", str(tmp_path / "home"), "match", "--p1", "greedy", "--p2", "random", "--replay-dir", str(out))
    assert r.exit_code == 0, r.output
    (path,) = out.glob("*")
    r = run("replay", "show", str(path), "--boards")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    moves = [line for line in lines if ". turn " in line]
    assert moves and all(line.split()[3] in ("local-p1", "local-p2") for line in moves), moves[:3]
    assert "  Scoring 1: local-p1 +" in r.output
    assert "P1 local-p1 " in r.output and "player 1" not in "\n".join(lines[1:])
    assert lines[-1].startswith("game over (") and "local-p1 " in lines[-1] and lines[-1].endswith(" local-p2")


def test_demo_names_the_players(tmp_path: Path) -> None:
    r = run("demo", "--replay-dir", str(tmp_path / "demo"), "--no-boards")
    assert r.exit_code == 0, r.output
    moves = [line for line in r.output.splitlines() if line.startswith("turn ")]
    assert moves and all(line.split()[2] in ("greedy-host", "random-join") for line in moves), moves[:3]
    assert "  Scoring 1: greedy-host +" in r.output
    assert "P1 greedy-host " in r.output and "P1 player 1" not in r.output
    assert any(line.startswith("game over (") and line.endswith(" random-join") for line in r.output.splitlines())


def test_verify_says_one_move_not_one_moves() -> None:
    """Item 10: `verify` printed "1 moves"."""
    from basilica_p2p.referee import Outcome
    from basilica_p2p.replay.verify import Verdict

    for moves, said in ((1, "1 move (forfeit)"), (2, "2 moves (forfeit)")):
        v = Verdict("g.replay", True, names=("alice", "bob"), ruleset="portal2022",
                    outcome=Outcome((0, 0), 1, "forfeit", moves, "quit", claimed_by=0))
        assert said in v.line(), v.line()
