"""The command line's options as a new user types them: the global options (--home, --version)
also after a command or group, -h beside --help on every command, and flags without a <bool>
placeholder."""

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
        assert "<bool>" not in r.output, (path, [line for line in r.output.splitlines() if "<bool>" in line])

