"""A whole short game of `basilica play` in the full-screen app, in a real 80x24 terminal (tmux).

The keys are the ones a person would press: Down picks the first legal action
(its preview shows), Enter plays it, Esc closes a scoring, q leaves once the
game is over.  The line client keeps its own tmux test (test_tui_tmux.py, --plain).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_tui_tmux import Pane, pane, short_manifest  # noqa: F401  (fixtures)

pytestmark = pytest.mark.xdist_group("terminal")


def keys(p: Pane, *names: str) -> None:
    subprocess.run([p.tmux, "send-keys", "-t", p.name, *names], check=True)


def settled(p: Pane, timeout: float = 30.0) -> str:
    return p.wait(lambda s: bool(s.strip()), "a screen", timeout)


def test_a_whole_short_game_in_the_app_in_a_real_terminal(tmp_path: Path, short_manifest: Path,  # noqa: F811
                                                          pane) -> None:  # type: ignore[no-untyped-def]
    env = {"TERM": "xterm-256color", "BASILICA_HOME": str(tmp_path / "home"), "PATH": os.environ.get("PATH", "")}
    replays = tmp_path / "replays"
    p = pane([sys.executable, "-m", "basilica_p2p.cli", "play", "--vs", "random", "--manifest", str(short_manifest),
              "--replay-dir", str(replays)], env)
    screen = p.wait(lambda s: "You to decide" in s, "the first decision")
    for needle in ("Basilica", "O1", "V1", "queen", "board", "stack ", "Confirm", "q  leave"):
        assert needle in screen, (needle, screen)
    assert all(len(line) <= 80 for line in screen.splitlines())
    scorings = 0
    start = time.monotonic()
    while time.monotonic() - start < 60:
        screen = settled(p)
        if "EXIT=" in screen:
            break
        if "Enter or Esc closes" in screen:  # a scoring: it waits for us
            scorings += 1
            keys(p, "Escape")
            p.wait(lambda s: "Enter or Esc closes" not in s, "the scoring to close")
        elif "Game over" in screen and "You to decide" not in screen:  # the result stays until we leave
            keys(p, "q")
            p.wait(lambda s: "EXIT=" in s, "the app to close")
        elif "You to decide" in screen:
            keys(p, "Down")
            p.wait(lambda s: "plays it" in s, "the preview")
            keys(p, "Enter")
            time.sleep(0.2)
    else:
        raise AssertionError(f"the game did not end; the screen was:\n{p.text()}")
    final = p.text()
    assert "EXIT=0" in final, final
    assert "final score" in final and ": ok:" in final, final
    assert scorings >= 1
    files = list(replays.glob("*.replay"))
    assert len(files) == 1
