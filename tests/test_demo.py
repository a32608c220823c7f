"""``basilica demo``'s narration: a legend before the first board, and a paid option's answer told as
an answer to the other player's order rather than as a move inside their turn."""

from __future__ import annotations

import hashlib

from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import Game, Options, default_manifest, format_action, observe
from basilica_p2p.engine import actions as A
from basilica_p2p.net.demo import Narration
from basilica_p2p.render import LEGEND

NAMES = ("greedy-host", "random-join")


def narrated_game(seed: int, boards: bool = True) -> tuple[list[str], list[tuple[int, int, int]]]:
    """A whole local game told by the demo's narration: its lines, and for each move (kind, mover,
    the player on turn) in order."""
    g = Game.new(default_manifest(), Options(), hashlib.sha256(str(seed).encode()).digest())
    bots = (RandomBot(seed), RandomBot(seed + 1))
    lines: list[str] = []
    narrate = Narration(NAMES, boards, lines.append)
    moves = []
    while not g.over:
        player, turn, active = g.to_move, g.turn, g.active
        assert player is not None
        action = bots[player].choose(observe(g, player), g.legal_actions())
        g.apply(action)
        moves.append((action.kind, player, active))
        narrate(g, turn, player, format_action(action))
    return lines, moves


def test_the_legend_comes_once_before_the_first_move_and_board() -> None:
    lines, _ = narrated_game(1)
    assert lines[0] == LEGEND and lines.count(LEGEND) == 1
    first_board = next(i for i, line in enumerate(lines) if line.startswith("Basilica "))
    assert first_board > 0
    for mark in ("V2:d1", "B:d1", "O3:c1=A", "$d2", "pass", "^ crown", "1A", "* glass", "### scaffolding"):
        assert mark in LEGEND, mark


def test_a_paid_option_is_told_as_an_answer_to_the_other_players_order() -> None:
    answered = {A.PAY: 0, A.DECLINE: 0}
    for seed in range(1, 40):
        lines, moves = narrated_game(seed, boards=False)
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
