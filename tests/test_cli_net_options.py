"""What host and join share (cli/_peer.py ``NetOptions``), checked once and turned into the
side's configuration: a bot's side and a person's side differ in what they are told and keep."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from basilica_p2p.cli import app
from basilica_p2p.cli._peer import NetOptions, _net_options
from basilica_p2p.engine import Ruleset
from basilica_p2p.lineclient import TerminalPlayer
from basilica_p2p.net import Timeouts
from basilica_p2p.schemes import COMMIT_REVEAL

runner = CliRunner()


def options(bot: str | None, timeouts: Timeouts = Timeouts(move=42.0), chat: bool = True) -> NetOptions:
    return NetOptions(bot, Ruleset.PORTAL2022, False, False, None, None, timeouts, keep_session=True,
                      shuffle=COMMIT_REVEAL, plain=True, chat=chat)


def context(home: Path) -> typer.Context:
    return typer.Context(typer.main.get_command(app), obj=str(home))


@pytest.mark.parametrize("command", [["host", "--port", "0"], ["join", "127.0.0.1:9"]])
def test_an_idle_timeout_not_longer_than_the_ping_is_one_line_before_anything_else(
        tmp_path: Path, command: list[str]) -> None:
    r = runner.invoke(app, [*command, "--bot", "random", "--idle-timeout", "5", "--ping-interval", "5",
                            "--home", str(tmp_path)], env={"BASILICA_HOME": None})
    assert r.exit_code == 2, r.output
    assert r.output.strip() == "error: --idle-timeout must be longer than --ping-interval"
    assert not any(tmp_path.iterdir())  # no identity made, no replay folder


def test_a_bots_side_says_each_game_as_it_ends_keeps_no_reports_and_takes_no_chat(tmp_path: Path) -> None:
    config = _net_options(options("random"), context(tmp_path), "host", games=3, watchers=4)
    assert config.person is None and config.agent_for(0) is not None
    assert config.on_game is not None and not config.keep_reports
    assert (config.chat, config.again, config.watching) == (False, False, False)
    assert config.hub is not None and config.hub.limit == 4 and config.hub.me == config.me
    assert config.games == 3 and config.timeouts.move == 42.0
    assert config.resume_info is not None
    assert (config.resume_info["role"], config.resume_info["identity"], config.resume_info["bot"]) == \
        ("host", "bot-host", "random")
    assert config.resume_info["move_time"] == 42.0 and config.resume_info["keep_session"] is True
    assert config.keep_session and config.ledger is not None and config.replay_dir == tmp_path / "replays"


def test_a_persons_side_is_the_same_player_every_game_and_may_chat_play_again_and_close_watching(
        tmp_path: Path) -> None:
    config = _net_options(options(None), context(tmp_path), "join")
    assert isinstance(config.person, TerminalPlayer)  # plain: the line client
    assert config.agent_for(0) is config.person and config.agent_for(1) is config.person
    assert config.on_game is None and config.keep_reports
    assert (config.chat, config.again, config.watching) == (True, True, True)
    assert config.hub is None
    assert config.resume_info is not None and config.resume_info["identity"] == "user"
    assert not _net_options(options(None, chat=False), context(tmp_path), "join").chat  # --no-chat


def test_a_shuffle_scheme_not_known_is_refused(tmp_path: Path) -> None:
    bad = NetOptions("random", Ruleset.PORTAL2022, False, False, None, None, Timeouts(), False, "rot13", True, True)
    with pytest.raises(typer.Exit) as e:
        _net_options(bad, context(tmp_path), "host")
    assert e.value.exit_code == 2
