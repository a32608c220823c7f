"""``basilica demo``'s narration: a legend before the first board, and a paid option's answer told as
an answer to the other player's order rather than as a move inside their turn."""

from __future__ import annotations

from pathlib import Path

from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import Options, default_manifest
from basilica_p2p.engine import actions as A
from basilica_p2p.identity import Identity
from basilica_p2p.net.demo import Narration
from basilica_p2p.render import LEGEND
from basilica_p2p.replay.local import play_both_seats
from basilica_p2p.seat import MoveApplied, SeatEvent
from support.replay_builders import key

NAMES = ("greedy-host", "random-join")


def narrated_game(seed: int, tmp: Path, boards: bool = True) -> tuple[list[str], list[tuple[str, int, int]]]:
    """A whole local game told by the demo's narration (player 1's seat's events): its lines, and
    for each move (kind, mover, the player on turn) in order."""
    lines: list[str] = []
    narrate = Narration(NAMES, boards, lines.append)
    moves: list[tuple[str, int, int]] = []

    def watch(event: SeatEvent) -> None:
        if isinstance(event, MoveApplied):
            assert event.before is not None
            moves.append((event.action.kind, event.mover, event.before.active))
        narrate(event)

    players = (Identity(NAMES[0], key(1)), Identity(NAMES[1], key(2)))
    play_both_seats(tmp / f"{seed}.replay", default_manifest(), Options(), players,
                    (RandomBot(seed), RandomBot(seed + 1)), shuffle="commit-reveal-v1", watch=watch)
    return lines, moves


def test_the_legend_comes_once_before_the_first_move_and_board(tmp_path: Path) -> None:
    lines, _ = narrated_game(1, tmp_path)
    assert lines[0] == LEGEND and lines.count(LEGEND) == 1
    first_board = next(i for i, line in enumerate(lines) if line.startswith("Basilica "))
    assert first_board > 0
    for mark in ("V2:d1", "B:d1", "O3:c1=A", "$d2", "pass", "^ crown", "1A", "* glass", "### scaffolding"):
        assert mark in LEGEND, mark


def test_a_paid_option_is_told_as_an_answer_to_the_other_players_order(tmp_path: Path) -> None:
    answered = {A.PAY: 0, A.DECLINE: 0}
    for seed in range(1, 40):
        lines, moves = narrated_game(seed, tmp_path, boards=False)
        told = [line for line in lines if line.startswith("turn ")]
        assert len(told) == len(moves)
        for line, (kind, mover, active) in zip(told, moves):
            words = line.split(None, 3)[3]
            if kind in answered and mover != active:
                answered[kind] += 1
                assert words.startswith(f"answers {NAMES[active]}'s "), line
                assert ("(declines, pays nothing" if kind == A.DECLINE else "(pays a coin") in words, line
            elif kind not in (A.SHIFT,):
                assert "answers" not in words, line
        if all(answered.values()):
            break
    assert all(answered.values()), answered


def test_the_demo_command_prints_the_legend_before_the_first_board_and_answers_as_answers(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from basilica_p2p.cli import app

    r = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "demo", "-o", str(tmp_path / "demo")],
                           env={"BASILICA_HOME": None})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    first_board = next(i for i, line in enumerate(lines) if line.startswith("Basilica "))
    assert LEGEND in lines[:first_board]
    moves = [line.split(None, 3)[3] for line in lines if line.startswith("turn ")]
    # Whether this game has paid options depends on its seed; those it has read as answers.
    assert all(m.startswith("answers ") for m in moves if m == "pass" or m.startswith("$") or " pass " in m), moves


def test_the_demo_command_names_the_players(tmp_path: Path) -> None:
    """Moves, scorings, the board and the end name the players, never "player 1/2"."""
    from typer.testing import CliRunner

    from basilica_p2p.cli import app

    r = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "demo", "--replay-dir", str(tmp_path / "demo"),
                                 "--no-boards"],
                           env={"BASILICA_HOME": None, "COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    moves = [line for line in r.output.splitlines() if line.startswith("turn ")]
    assert moves and all(line.split()[2] in ("greedy-host", "random-join") for line in moves), moves[:3]
    assert "  Scoring 1: greedy-host +" in r.output
    assert "P1 greedy-host " in r.output and "P1 player 1" not in r.output
    assert any(line.startswith("game over (") and line.endswith(" random-join") for line in r.output.splitlines())
