"""basilica tournament --ray and calibrate --ray on a real Ray cluster of two nodes on this machine.

The module starts one cluster (``ray start --head`` and a second node joined to
it, one CPU each, in a temporary folder of their own: cluster.local_cluster) for
all its tests, and stops exactly the processes it started afterwards, by their
ids: never ``ray stop``, which would stop every Ray cluster of this user on the machine.
The drivers are ``basilica`` and ``python -m basilica_p2p.calibrate`` subprocesses,
so each connects, ships its bots and disconnects as a user's would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from basilica_p2p.cluster import ClusterError, executor_for, local_cluster
from basilica_p2p.engine import Options
from basilica_p2p.executor import LocalPool
from basilica_p2p.tournament import play_tournament

pytestmark = pytest.mark.xdist_group("ray")  # one cluster for the whole module: all its tests in one worker

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LINE_BOT = "cmd:python3 examples/line_bot.py"  # a relative path: shipped in the job's working folder


STALE_TOKEN = "0" * 64  # what ~/.ray/auth_token holds after any ray.init() of Ray 2.5x, for some other cluster


@pytest.fixture(scope="module")
def ray_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A home folder whose ~/.ray/auth_token belongs to another cluster: the cluster must start and be
    used all the same (Ray 2.5x turned token authentication on for the head node alone, and refused the rest)."""
    home = tmp_path_factory.mktemp("ray-home")
    (home / ".ray").mkdir()
    (home / ".ray" / "auth_token").write_text(STALE_TOKEN)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        yield home


@pytest.fixture(scope="module")
def ray_address(ray_home: Path) -> Iterator[str]:
    # Stopped by process id afterwards; local_cluster raises if any of its processes is left.
    with local_cluster(nodes=2, cpus=1) as address:
        yield address


def test_the_local_cluster_starts_and_plays_whatever_token_the_home_folder_holds(ray_address: str, ray_home: Path,
                                                                                 tmp_path: Path) -> None:
    r = basilica("tournament", "--bots", "random,greedy", "--games", "2", "--ray", ray_address,
                 "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(json.loads((tmp_path / "out" / "tournament.json").read_text())["games"]) == 2
    assert (ray_home / ".ray" / "auth_token").read_text() == STALE_TOKEN  # neither used nor replaced


def basilica(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "basilica"), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def write_module(folder: Path, name: str, source: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(textwrap.dedent(source))


def with_pythonpath(folder: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


FIRST_LEGAL = """
    class FirstLegal:
        name = "first"

        def choose(self, obs, legal):
            return legal[0]
"""


def test_same_seed_gives_the_same_standings_on_the_cluster(ray_address: str, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    # The module exists only in tmp_path, which is on the driver's import path, not the
    # workers': its games can be played there only if its source was shipped.
    mods = tmp_path / "mods"
    write_module(mods, "ray_first_bot", FIRST_LEGAL)
    monkeypatch.syspath_prepend(str(mods))
    monkeypatch.chdir(ROOT)
    bots = ["random", "greedy", "ray_first_bot:FirstLegal", LINE_BOT]
    local = play_tournament(bots, 2, "ray-same", Options(), LocalPool(1), on_forfeit=None)
    r = basilica("tournament", "--bots", ",".join(bots), "--games", "2", "--seed", "ray-same",
                 "--ray", ray_address, "--out", str(tmp_path / "out"), env=with_pythonpath(mods))
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert len(local.results) == 12 and not any(g.end.startswith("forfeit") for g in local.results)
    assert data["games"] == json.loads(json.dumps([asdict(g) for g in local.results]))
    assert "Elo" in r.stdout and "interrupted" not in r.stdout


STALL = """
    import os
    import time
    from pathlib import Path

    MARKS = Path({marks!r})


    class Stall:
        name = "stall"

        def choose(self, obs, legal):
            (MARKS / f"started-{{os.getpid()}}-{{time.monotonic_ns()}}").touch()
            try:
                while True:
                    time.sleep(0.02)
            except BaseException:  # KeyboardInterrupt from ray.cancel, SystemExit in a local worker
                (MARKS / f"stopped-{{os.getpid()}}-{{time.monotonic_ns()}}").touch()
                raise
"""


def wait_for(what: str, count: int, folder: Path, seconds: float) -> list[Path]:
    deadline = time.monotonic() + seconds
    while len(found := list(folder.glob(f"{what}-*"))) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


@pytest.mark.parametrize("where", ["ray", "local"])
def test_ctrl_c_cancels_the_running_games_and_keeps_the_finished_ones(ray_address: str, tmp_path: Path,
                                                                      where: str) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    mods = tmp_path / "mods"
    write_module(mods, "ray_stall_bot", STALL.format(marks=str(marks)))
    # random-greedy games come first in the schedule; every game of the stall bot hangs
    # until cancelled, so once both nodes are stalled the two quick games have finished.
    args = ["tournament", "--bots", "random,greedy,ray_stall_bot:Stall", "--games", "2", "--seed", "ray-stop",
            *(["--ray", ray_address] if where == "ray" else ["--jobs", "2"]), "--out", str(tmp_path / "out")]
    proc = subprocess.Popen([str(BIN / "basilica"), *args], cwd=ROOT, env=with_pythonpath(mods),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert len(wait_for("started", 2, marks, 40)) == 2, "the stall bot's games did not start on both nodes"
        time.sleep(0.5)  # the driver has the two finished games by now
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, err[-3000:]
    assert "interrupted: 2 games finished" in " ".join(out.split()) and "Elo" in out, out
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    local = play_tournament(["random", "greedy"], 2, "ray-stop", Options(), LocalPool(1), on_forfeit=None)
    assert data["games"] == json.loads(json.dumps([asdict(g) for g in local.results]))
    assert len(wait_for("stopped", 2, marks, 10)) == 2, "the running games were not cancelled"
    assert "Traceback" not in err


def test_a_program_missing_on_the_workers_is_refused_in_one_line(ray_address: str, tmp_path: Path) -> None:
    # On the driver's PATH only: the nodes were started without it, as on another machine.
    mine = tmp_path / "bin" / "ray-test-bot"
    mine.parent.mkdir()
    mine.write_text("#!/bin/sh\nexit 3\n")
    mine.chmod(0o755)
    env = {**os.environ, "PATH": f"{mine.parent}{os.pathsep}{os.environ['PATH']}"}
    r = basilica("tournament", "--bots", "random,cmd:ray-test-bot", "--games", "1", "--ray", ray_address,
                 "--out", str(tmp_path / "out"), env=env)
    assert r.returncode == 2, r.stdout + r.stderr
    lines = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "ray-test-bot" in lines[0] and "Ray node" in lines[0], r.stderr[-2000:]
    assert "Traceback" not in r.stderr and not (tmp_path / "out").exists()


def test_calibrate_gives_the_same_rows_on_the_cluster(ray_address: str) -> None:
    def calibrate(*where: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "basilica_p2p.calibrate", "--games", "2", "--crowns", "36-37",
                               *where], cwd=ROOT, capture_output=True, text=True, timeout=60)

    local, cluster = calibrate("--jobs", "1"), calibrate("--ray", ray_address)
    assert local.returncode == 0 == cluster.returncode, cluster.stderr[-2000:]
    assert cluster.stdout == local.stdout
    assert "\n    36      2 " in local.stdout and "\n    37      2 " in local.stdout, local.stdout


def test_a_compiled_module_is_refused_before_connecting() -> None:
    with pytest.raises(ClusterError, match=r"cannot ship bot '_socket:socket'.*not a \.py file"):
        with executor_for(1, "127.0.0.1:1", ["random", "_socket:socket"]):
            pass


def test_without_ray_installed_the_message_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # how Python spells "not installed" to an import
    with pytest.raises(ClusterError, match=r"pip install 'basilica-p2p\[ray\]'"):
        with executor_for(1, "auto", ["random", "greedy"]):
            pass


def test_a_trained_policy_is_shipped_to_the_cluster_with_its_model_file(ray_address: str, tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "train_maskable_ppo.py"), "--steps", "128", "--eval",
                        "0", "--out", "model.zip"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    # The model lies only in tmp_path, named by a relative path: the workers get it in their folder.
    r = subprocess.run([str(BIN / "basilica"), "tournament", "--bots", "policy:model.zip,random", "--games", "2",
                        "--ray", ray_address, "--out", str(tmp_path / "out")], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert len(data["games"]) == 2 and data["forfeits"] == 0


def test_an_analysis_on_the_cluster_gives_the_figures_of_one_process(ray_address: str, tmp_path: Path) -> None:
    copies = []
    for name in ("here", "there"):
        copies.append(tmp_path / f"{name}.replay")
        copies[-1].write_bytes((ROOT / "replays" / "classic-greedy-vs-greedy.replay").read_bytes())
    here = basilica("replay", "analyse", str(copies[0]), "--seat", "2", "--playouts", "10", "--jobs", "1")
    there = basilica("replay", "analyse", str(copies[1]), "--seat", "2", "--playouts", "10", "--ray", ray_address)
    assert here.returncode == 0 == there.returncode, there.stderr[-3000:]
    table = [line for line in here.stdout.splitlines()[1:] if not line.startswith("saved")]
    assert len(table) > 20 and table == [line for line in there.stdout.splitlines()[1:] if not line.startswith("saved")]
