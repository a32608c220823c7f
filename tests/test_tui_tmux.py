"""A whole short game of `basilica play` through a real 80x24 terminal (tmux send-keys / capture-pane)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.terminal import Pane, at_prompt, tmux_command

# The terminal tests run one after another on one worker: each is a game in real time.
pytestmark = pytest.mark.xdist_group("terminal")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def short_manifest(tmp_path: Path) -> Path:
    data = json.loads((ROOT / "protocol" / "manifest.json").read_text())
    data["name"] = "short test game"
    data["crown_spaces"] = [5, 10]  # two scorings after ten crowned vaults: a game of a few turns
    path = tmp_path / "short.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Callable[[list[str], dict[str, str]], Pane]]:
    tmux = tmux_command()
    name = f"basilica-test-{uuid.uuid4().hex[:8]}"

    def start(argv: list[str], env: dict[str, str]) -> Pane:
        cmd = " ".join(f"'{a}'" for a in argv) + "; echo EXIT=$?; sleep 600"
        full_env = [f"{k}={v}" for k, v in env.items()]
        subprocess.run([tmux, "-L", name, "new-session", "-d", "-s", name, "-x", "80", "-y", "24",
                        "env", *full_env, "sh", "-c", cmd], check=True)
        return Pane(tmux, name)

    yield start
    subprocess.run([tmux, "-L", name, "kill-server"], capture_output=True)


@pytest.mark.parametrize(("no_color", "bot"), [(True, "greedy"), (False, "mcts:playouts=40")],
                         ids=["NO_COLOR-greedy", "colour-mcts"])
def test_a_whole_short_game_in_a_real_terminal(tmp_path: Path, short_manifest: Path, pane, no_color: bool,  # type: ignore[no-untyped-def]
                                               bot: str) -> None:
    env = {"TERM": "xterm-256color", "BASILICA_HOME": str(tmp_path / "home"), "PATH": os.environ.get("PATH", "")}
    if no_color:
        env["NO_COLOR"] = "1"
    replays = tmp_path / "replays"
    name = bot.split(":")[0]  # the bot's identity is named after it
    p = pane([sys.executable, "-m", "basilica_p2p.cli", "play", "--plain", "--vs", bot, "--manifest", str(short_manifest),
              "--replay-dir", str(replays)], env)
    screen = p.wait(at_prompt, "the first decision")
    # The first screen: the whole board in 24 rows of 80 columns.
    for needle in ("Basilica", "market", "O1 ", "V1 ", "stack ", "discard ", "queen", "P1 ", "P2 ", "to decide"):
        assert needle in screen, (needle, screen)
    assert all(len(line) <= 80 for line in screen.splitlines())
    # A foreground colour (30-37, 90-97 or 256 colours); 39, the default colour, is not one.
    coloured = re.search(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;5;\d+)m", p.text(escapes=True)) is not None
    assert coloured is not no_color
    p.send("help")
    assert "every legal action, numbered" in p.wait(at_prompt, "help")
    p.send("rules move")
    assert "move one of your builders to an adjacent" in p.wait(at_prompt, "rules")
    seen_scoring = seen_their_move = False
    for _ in range(200):
        screen = p.wait(at_prompt, "a decision or the end")
        if "EXIT=" in screen:
            break
        seen_their_move = seen_their_move or re.search(rf"{name} (placed|took|put|paid|declined|moved|chose)", screen) is not None
        if not seen_scoring and "Scoring 1" in p.text():
            seen_scoring = True
            p.send("score")
            assert re.search(r"Scoring 1: \w+ \+\d+, \w+ \+\d+", p.wait(at_prompt, "score"))
            continue
        p.send("1")
    else:
        raise AssertionError("the game did not end")
    final = p.text()
    assert "EXIT=0" in final, final
    assert "Game over" in final and ": ok:" in final
    assert seen_their_move or re.search(rf"{name} (placed|took|put|paid|declined|moved|chose)", final), final
    files = list(replays.glob("*.replay"))
    assert len(files) == 1
    check = subprocess.run([sys.executable, "-m", "basilica_p2p.cli", "verify", "--manifest", str(short_manifest),
                            str(files[0])], capture_output=True, text=True)
    assert check.returncode == 0 and ": ok:" in check.stdout, check.stdout + check.stderr
