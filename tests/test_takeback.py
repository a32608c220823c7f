"""Takebacks (issue 13): local games only, signed by both sides, re-played by verify."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from basilica_p2p.agent import AgentBase, Decision, TakeBack
from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import Options, Ruleset, default_manifest, format_action
from basilica_p2p.referee import Referee, rewind
from basilica_p2p.schemes import HIDDEN_DEAL
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.verify import referee_for, known_manifests, verify_file
from basilica_p2p.seat import Ask, NothingToTakeBack, SeatEvent, TakenBack
from support.seat_events import ask_for
from basilica_p2p.lineclient import TerminalPlayer, play_local
from basilica_p2p.wire import ProtocolError, open_envelope, seal

from support.net_harness import ALICE, BOB

MANIFEST = default_manifest()
OPTIONS = Options(Ruleset.PORTAL2022)


class Undoer(AgentBase):
    """An agent that asks for a takeback at the decisions numbered in ``at`` (counting every ask)."""

    name = "undoer"

    def __init__(self, at: tuple[int, ...], seed: int = 1, moves: int = 1) -> None:
        self.bot = RandomBot(seed)
        self.at, self.moves, self.asked = at, moves, 0
        self.told: list[int | None] = []  # the ply each takeback went back to (None: nothing to undo)

    def choose(self, ask: Ask) -> Decision:
        self.asked += 1
        if self.asked in self.at:
            return TakeBack(self.moves)
        return self.bot.choose(ask.view, list(ask.legal))

    def observe(self, event: SeatEvent) -> None:
        if isinstance(event, TakenBack):
            self.told.append(event.to)
        elif isinstance(event, NothingToTakeBack):
            self.told.append(None)


def _types(path: Path) -> list[str]:
    return [open_envelope(r).type for r in read_replay(path).records]


def test_a_takeback_is_signed_by_both_and_counted_by_verify(tmp_path: Path) -> None:
    asker = Undoer(at=(1, 6, 9))
    g = play_recorded(tmp_path / "t.replay", MANIFEST, OPTIONS, (ALICE, BOB), (asker, RandomBot(2)))
    assert g.over
    # The first ask came at the asker's first decision or later: nothing before it, or a real ply.
    assert len(asker.told) == 3 and all(t is None or t >= 0 for t in asker.told)
    done = [t for t in asker.told if t is not None]
    records = [open_envelope(r) for r in read_replay(tmp_path / "t.replay").records]
    takebacks = [e for e in records if e.type == "takeback"]
    assert len(takebacks) == 2 * len(done)
    for ask, consent in zip(takebacks[::2], takebacks[1::2]):
        assert ask.sender == ALICE.public and consent.sender == BOB.public and ask.body == consent.body
    v = verify_file(tmp_path / "t.replay")
    assert v.ok, v.error
    assert v.outcome is not None and v.outcome.takebacks == (len(done), 0)
    n = len(done)
    assert f"{n} takeback{'' if n == 1 else 's'} by alice" in v.line()


def test_after_a_takeback_the_same_tiles_come_again(tmp_path: Path) -> None:
    """Seeded: the position the asker returns to is the one it left, market and all."""
    positions: list[str] = []

    class Watcher(Undoer):
        def choose(self, ask: Ask) -> Decision:
            obs = ask.view
            positions.append(repr((obs.turn, obs.orders, obs.vaults, obs.scores, sorted(map(format_action, ask.legal)))))
            return super().choose(ask)

    asker = Watcher(at=(3,))
    play_recorded(tmp_path / "t.replay", MANIFEST, OPTIONS, (ALICE, BOB), (asker, RandomBot(2)))
    assert asker.told and asker.told[0] is not None
    # The fourth ask is the decision taken back to: exactly the position of an earlier ask.
    assert positions[3] in positions[:2]


def test_takeback_with_nothing_before_asks_again(tmp_path: Path) -> None:
    asker = Undoer(at=(1,))
    g = play_recorded(tmp_path / "t.replay", MANIFEST, OPTIONS, (ALICE, BOB), (asker, RandomBot(2)))
    # The asker's first decision has nothing of its own before it: no message, asked again.
    assert asker.told == [None] and "takeback" not in _types(tmp_path / "t.replay")
    assert g.over and verify_file(tmp_path / "t.replay").ok


def test_rewind_is_the_game_replayed_from_its_seed(tmp_path: Path) -> None:
    g = play_recorded(tmp_path / "t.replay", MANIFEST, OPTIONS, (ALICE, BOB), (RandomBot(1), RandomBot(2)))
    back = rewind(g, 10)
    assert back.history == g.history[:10] and not back.over
    again = rewind(g, 10)
    assert again.state_hash() == back.state_hash()


def _referee_at_decision(tmp_path: Path) -> tuple[Referee, list[bytes]]:
    """A referee fed a finished local game up to its 12th action, and the records."""
    play_recorded(tmp_path / "t.replay", MANIFEST, OPTIONS, (ALICE, BOB), (RandomBot(1), RandomBot(2)))
    replay = read_replay(tmp_path / "t.replay")
    ref = referee_for(replay, known_manifests())
    actions = 0
    for raw in replay.records:
        env = open_envelope(raw)
        if env.type == "action":
            actions += 1
            if actions == 12:
                break
        ref.feed(env)
    return ref, replay.records


def _sealed(ref: Referee, who: Any, type_: str, body: dict[str, Any]) -> Any:
    return seal(who.key, ref.spec.game, ref.seq, ref.prev, type_, body)


def test_hostile_takebacks_are_refused_with_one_line(tmp_path: Path) -> None:
    ref, _ = _referee_at_decision(tmp_path)
    step, who = ref.waiting_for()
    assert step == "action"
    g = ref.game
    assert g is not None
    asker = (ALICE, BOB)[who]
    # A ply that was not the asker's decision, and one in the future.
    others = [ply for ply, deciders in ref._points if who not in deciders]  # noqa: SLF001 - the record of decisions
    for bad in (others[0], len(g.history), 10**6):
        with pytest.raises(ProtocolError, match="not an earlier decision of its own") as e:
            ref.feed(_sealed(ref, asker, "takeback", {"to": bad}))
        assert "\n" not in str(e.value)
    mine = max(ply for ply, deciders in ref._points if who in deciders and ply < len(g.history))  # noqa: SLF001
    ref.feed(_sealed(ref, asker, "takeback", {"to": mine}))
    assert ref.waiting_for() == ("takeback", 1 - who)
    consenter = (ALICE, BOB)[1 - who]
    with pytest.raises(ProtocolError, match="the consent names ply"):
        ref.feed(_sealed(ref, consenter, "takeback", {"to": mine - 1}))
    with pytest.raises(ProtocolError, match="expected the takeback consent"):
        ref.feed(_sealed(ref, consenter, "action", {"ply": mine, "action": "pass"}))
    ref.feed(_sealed(ref, consenter, "takeback", {"to": mine}))
    assert ref.game is not None and len(ref.game.history) == mine
    assert ref.waiting_for() == ("action", who)


def test_a_takeback_is_refused_in_a_hidden_deal() -> None:
    from basilica_p2p.referee import GameSpec

    spec = GameSpec(bytes(32), (ALICE.public, BOB.public), ("alice", "bob"), OPTIONS, MANIFEST, HIDDEN_DEAL)
    ref = Referee(spec)
    ref._step = "action"  # noqa: SLF001 - a decision due, without playing a whole deal
    with pytest.raises(ProtocolError, match="takeback in a game dealt by sra-p256-v1"):
        ref.feed(seal(ALICE.key, bytes(32), 0, bytes(32), "takeback", {"to": 0}))


def test_undo_at_the_prompt_in_a_local_game(tmp_path: Path) -> None:
    out = io.StringIO()
    # 'undo' first (maybe nothing to undo yet), then moves, an undo, and moves to the end.
    lines = ["undo", "1", "1", "1", "undo"] + ["1"] * 600
    person = TerminalPlayer("ada", console=Console(width=80, file=out, no_color=True, highlight=False),
                            inp=io.StringIO("".join(x + "\n" for x in lines)))
    result = play_local(person, RandomBot(3), (ALICE, BOB), 0, MANIFEST, OPTIONS, tmp_path)
    text = out.getvalue()
    assert result.game.over and result.forfeit is None
    assert "Taken back to your decision" in text
    v = verify_file(result.replay)
    assert v.ok, v.error
    assert v.outcome is not None and v.outcome.takebacks[0] >= 1
    assert re.search(r"\d+ takebacks? by alice", v.line())


def test_undo_is_refused_outside_a_local_game() -> None:
    from basilica_p2p.engine import Game

    g = Game.new(MANIFEST, OPTIONS, bytes(32))
    out = io.StringIO()
    person = TerminalPlayer("ada", console=Console(width=80, file=out, no_color=True, highlight=False),
                            inp=io.StringIO("undo\n1\n"))
    person.seat = g.to_move
    person.choose(ask_for(g, g.to_move))  # type: ignore[arg-type]
    assert "undo works only in a game against a bot on this machine" in out.getvalue()


def test_the_viewer_and_the_export_show_takebacks_as_steps(tmp_path: Path) -> None:
    from basilica_p2p.replay.html import build_viewer_data, render_html
    from basilica_p2p.replay.show import export_json, walk

    asker = Undoer(at=(6, 9))
    g = play_recorded(tmp_path / "t.replay", MANIFEST, OPTIONS, (ALICE, BOB), (asker, RandomBot(2)))
    done = [t for t in asker.told if t is not None]
    assert done
    data = build_viewer_data(tmp_path / "t.replay")
    backs = [s for s in data["steps"] if s["decision"] == "takeback"]
    assert len(backs) == len(done) and data["takebacks"] == [len(done), 0]
    assert all("alice took back to their decision" in s["words"] for s in backs)
    # After the last step the board is the game's end: the takebacks were re-played faithfully.
    assert data["steps"][-1]["scores"] == list(g.scores)
    assert "takeback" in render_html(data)
    exported = export_json(walk(tmp_path / "t.replay", known_manifests()))
    assert [t["to"] for t in exported["takebacks"]] == done
