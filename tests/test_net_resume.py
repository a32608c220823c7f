"""Kill a peer (SIGKILL) at a random moment, run `basilica resume` on both sides, finish the same game."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from basilica_p2p.replay.verify import verify_file

from readiness import held, log_until, wait_until

TESTS = Path(__file__).resolve().parent


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, BASILICA_HOME=str(home), PYTHONPATH=str(TESTS))
    env.pop("NO_COLOR", None)
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "basilica_p2p.cli", *args]


def _start_game(tmp: Path) -> tuple[subprocess.Popen[str], subprocess.Popen[str]]:
    home = tmp / "home"
    host = subprocess.Popen(_cli("host", "--no-invite", "--port", "0", "--bind", "127.0.0.1", "--bot", "slow_bot:SlowRandom",
                                 "--replay-dir", str(tmp / "a")), env=_env(home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert host.stdout is not None
    line = host.stdout.readline()
    assert line.startswith("listening on "), line
    port = line.strip().rsplit(":", 1)[1]
    join = subprocess.Popen(_cli("join", f"127.0.0.1:{port}", "--bot", "slow_bot:SlowRandom",
                                 "--replay-dir", str(tmp / "b")), env=_env(home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    return host, join


def _replay(folder: Path) -> Path:
    found = sorted(folder.glob("*.replay"))
    assert len(found) == 1, found
    return found[0]


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
    survivor.communicate(timeout=30)  # it notices the drop (or finished just before the kill)
    a, b = _replay(tmp / "a"), _replay(tmp / "b")
    home = tmp / "home"
    rh = subprocess.Popen(_cli("resume", str(a), "--window", "20"), env=_env(home), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    # The joiner retries until the host listens; it is started once the host says it will.
    said = log_until(rh, "listening on", "already finished")
    rj = subprocess.run(_cli("resume", str(b), "--window", "20"), env=_env(home), capture_output=True, text=True,
                        timeout=60)
    out, err = rh.communicate(timeout=60)
    err = "".join(said) + err
    assert rh.returncode == 0, err
    assert rj.returncode == 0, rj.stderr
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
    host, join = _start_game(tmp_path)
    _wait_under_way(tmp_path)  # a game of slow bots lasts about a second: this is early in it
    join.send_signal(signal.SIGKILL)
    join.wait(10)
    host.communicate(timeout=30)
    a = _replay(tmp_path / "a")
    r = subprocess.run(_cli("resume", str(a), "--window", "1"), env=_env(tmp_path / "home"), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "did not come back" in r.stderr
    v = verify_file(a)
    assert v.ok and v.outcome is not None and v.outcome.end == "forfeit" and v.outcome.claimed_by == 0
    assert "forfeited as claimed by player 1" in v.line()
