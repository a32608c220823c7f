"""Kill a peer (SIGKILL) at a random moment: the other side waits for it (issue 20, presence wins),
`basilica resume` on the killed side meets it again, and both finish the same game."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from basilica_p2p.replay.verify import verify_file

from support.readiness import held, wait_until

TESTS = Path(__file__).resolve().parent


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, BASILICA_HOME=str(home), PYTHONPATH=str(TESTS))
    env.pop("NO_COLOR", None)
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "basilica_p2p.cli", *args]


def _start_game(tmp: Path) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    home = tmp / "home"
    host = subprocess.Popen(_cli("host", "--no-invite", "--port", "0", "--bind", "127.0.0.1", "--bot", "support.slow_bot:SlowRandom",
                                 "--window", str(WINDOW), "--replay-dir", str(tmp / "a")), env=_env(home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert host.stdout is not None
    line = host.stdout.readline()
    assert line.startswith("listening on "), line
    port = line.strip().rsplit(":", 1)[1]
    join = subprocess.Popen(_cli("join", f"127.0.0.1:{port}", "--bot", "support.slow_bot:SlowRandom",
                                 "--replay-dir", str(tmp / "b")), env=_env(home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    return host, join


def _replay(folder: Path) -> Path:
    found = sorted(folder.glob("*.replay"))
    assert len(found) == 1, found
    return found[0]


WINDOW = 20  # seconds the killed side has to come back (agreed in the hellos)

# Both sides have written their session sidecars (which `resume` needs) before either holds
# both commitments, message 4.
UNDER_WAY = 4


def _wait_under_way(tmp: Path) -> None:
    wait_until(lambda: held(tmp / "a") >= UNDER_WAY and held(tmp / "b") >= UNDER_WAY, "the game did not start")


def _kill_and_resume(tmp: Path, rng: random.Random) -> None:
    host, join = _start_game(tmp)
    victim, survivor = (host, join) if rng.random() < 0.5 else (join, host)
    # Once the game is under way, kill the victim when its replay holds a random number of
    # messages: fewer than the shortest games have (about 90), so that it is mid-game.
    at = rng.randrange(UNDER_WAY, 80)
    _wait_under_way(tmp)
    wait_until(lambda: held(tmp / ("a" if victim is host else "b")) >= at, f"the game did not reach message {at}")
    assert victim.poll() is None, f"the game ended before message {at}"
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    a, b = _replay(tmp / "a"), _replay(tmp / "b")
    mine = a if victim is host else b
    # The survivor stays and waits; the killed side comes back with 'basilica resume'.
    back = subprocess.run(_cli("resume", str(mine)), env=_env(tmp / "home"), capture_output=True, text=True,
                          timeout=90)
    out, err = survivor.communicate(timeout=60)
    assert back.returncode == 0, back.stderr
    assert survivor.returncode == 0, err
    if "already finished" not in back.stderr:  # (the game may have ended just before the kill)
        assert "has gone" in err and "is back" in err, err
    va, vb = verify_file(a), verify_file(b)
    assert va.ok and vb.ok, (va.error, vb.error)
    assert va.outcome is not None and va.outcome.end != "forfeit"
    assert a.read_bytes() == b.read_bytes()  # no move lost, none applied twice


@pytest.mark.parametrize("case", range(3))
def test_kill_a_peer_and_resume_both_sides(tmp_path: Path, case: int) -> None:
    _kill_and_resume(tmp_path, random.Random(case))


@pytest.mark.slow
@pytest.mark.parametrize("case", range(3, 28))
def test_kill_and_resume_soak(tmp_path: Path, case: int) -> None:
    _kill_and_resume(tmp_path, random.Random(case))


def test_a_peer_that_does_not_come_back_loses_by_forfeit(tmp_path: Path) -> None:
    """The side that stays, doing nothing but waiting, ends with a finished replay that names what
    the other did: it did not come back within the agreed window."""
    host, join = _start_game(tmp_path)
    _wait_under_way(tmp_path)  # a game of slow bots lasts about a second: this is early in it
    join.send_signal(signal.SIGKILL)
    join.wait(10)
    out, err = host.communicate(timeout=WINDOW + 60)
    assert host.returncode == 0, err
    assert "has gone" in err and f"did not come back within {WINDOW} s" in err, err
    assert "won by forfeit" in out, out
    a = _replay(tmp_path / "a")
    v = verify_file(a)
    assert v.ok and v.outcome is not None and v.outcome.end == "forfeit" and v.outcome.claimed_by == 0
    assert "forfeited as claimed by player 1" in v.line() and f"did not come back within {WINDOW} s" in v.line()
