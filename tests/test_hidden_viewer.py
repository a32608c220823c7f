"""The viewer and ``replay show`` on games dealt face down (sra-p256-v1): the engine of a hidden
game holds positions, opened one reveal at a time, and the viewer replays the moves with them."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from support import replay_builders as rb
from basilica_p2p.bots import GreedyBot, RandomBot
from basilica_p2p.cli import app
from basilica_p2p.engine import Options, TileSpec
from basilica_p2p.replay.html import build_viewer_data, public_state
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.show import walk

runner = CliRunner()


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("viewer") / "hidden.replay"
    play_recorded(path, rb.manifest(), Options(festum=True), rb.PLAYERS, (GreedyBot(rb.manifest(), 5), RandomBot(6)),
                  nonces=(bytes([1]) * 32, bytes([2]) * 32), game_id=rb.GAME_ID, salts=rb.salts(),
                  shuffle="sra-p256-v1", deal_secrets=(bytes([3]) * 32, bytes([4]) * 32))
    return path


def test_the_walk_starts_once_the_market_is_open_and_each_move_once_its_tiles_are(hidden: Path) -> None:
    w = walk(hidden, rb.manifests())
    assert not w.error and w.start is not None
    assert w.start.needed_reveals() == ()
    assert all(isinstance(w.start.known(p), TileSpec) for p in w.start.market)
    # A move is kept once everything it turned over is open: every vault up is known by its id.
    for m in w.moves:
        assert m.game.needed_reveals() == ()
        assert all(isinstance(m.game.known(p), TileSpec) for p in m.game.vaults.values())


def test_the_viewer_draws_a_hidden_game_step_by_step_as_the_referee_saw_it(hidden: Path) -> None:
    data = build_viewer_data(hidden, rb.manifests())
    w = walk(hidden, rb.manifests())
    assert data["shuffle"] == "sra-p256-v1" and "face down" in data["shuffle_text"]
    assert len(data["steps"]) == len(w.moves) + 1
    assert w.start is not None
    expected = [public_state(w.start)] + [public_state(m.game) for m in w.moves]
    for step, state in zip(data["steps"], expected):
        assert {k: step[k] for k in state} == state, f"step {step['step']}"
    assert sum(len(s["scoring"]) for s in data["steps"]) == w.moves[-1].game.scorings


def test_replay_show_prints_a_hidden_game_and_its_boards(hidden: Path) -> None:
    r = runner.invoke(app, ["replay", "show", "--at", "0", "--boards", str(hidden)], env={"BASILICA_HOME": None})
    assert r.exit_code == 0, r.output
    assert "dealt face down by sra-p256-v1" in r.output
    assert "game over" in r.output
