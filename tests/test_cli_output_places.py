"""Issue 13: one place for output.  Everything a command writes goes under --home (replays/, demo/,
tournaments/, pages/) unless -o / --replay-dir / --out says otherwise; nothing lands in the current
folder, each command prints one line naming where it wrote, and a game that ended normally leaves
no .session file behind (a dropped one keeps it: tests/test_net_cli.py resumes from it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from basilica_p2p.cli.games import folder_name

TESTS = Path(__file__).resolve().parent
SAMPLE = TESTS.parent / "replays" / "classic-greedy-vs-greedy.replay"


def basilica(*args: str, cwd: Path, stdin: str = "", timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The real command in its own process, run from ``cwd``, with no $BASILICA_HOME to fall back on."""
    env = {k: v for k, v in os.environ.items() if k != "BASILICA_HOME"}
    env.update(LOGNAME="carol", COLUMNS="200", PYTHONPATH=str(TESTS))
    return subprocess.run([sys.executable, "-m", "basilica_p2p.cli", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """A home and an empty current folder, apart."""
    home, cwd = tmp_path / "home", tmp_path / "cwd"
    cwd.mkdir()
    return home, cwd


def only_line(out: str, prefix: str) -> str:
    lines = [line for line in out.splitlines() if line.startswith(prefix)]
    assert len(lines) == 1, out
    return lines[0][len(prefix):]


def sessions(*folders: Path) -> list[Path]:
    return [p for f in folders for p in f.rglob("*.session")]


def test_play_writes_its_replay_under_home_and_says_where(places: tuple[Path, Path]) -> None:
    home, cwd = places
    r = basilica("play", "--vs", "random", "--home", str(home), cwd=cwd, stdin="quit\nyes\n")
    assert r.returncode == 0, r.stderr
    (replay,) = (home / "replays").glob("*.replay")
    assert Path(only_line(r.stdout, "replay: ")) == replay
    assert list(cwd.iterdir()) == [] and sessions(home) == []


def test_play_takes_o_for_the_replay_folder(places: tuple[Path, Path]) -> None:
    home, cwd = places
    r = basilica("--home", str(home), "play", "--vs", "random", "-o", "mine", cwd=cwd, stdin="quit\nyes\n")
    assert r.returncode == 0, r.stderr
    (replay,) = (cwd / "mine").glob("*.replay")
    assert only_line(r.stdout, "replay: ") == str(Path("mine") / replay.name)
    assert not (home / "replays").exists()


def test_the_demo_writes_under_home_not_here(places: tuple[Path, Path]) -> None:
    home, cwd = places
    r = basilica("demo", "--no-boards", "--home", str(home), cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert Path(only_line(r.stdout, "replays: ")) == home / "demo"
    assert len(list((home / "demo").rglob("*.replay"))) == 2
    assert list(cwd.iterdir()) == [] and sessions(home) == []


def test_host_and_join_write_under_their_homes_and_a_finished_game_leaves_no_session(tmp_path: Path) -> None:
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    homes = tmp_path / "host-home", tmp_path / "join-home"
    env = {k: v for k, v in os.environ.items() if k != "BASILICA_HOME"}
    host = subprocess.Popen([sys.executable, "-m", "basilica_p2p.cli", "--home", str(homes[0]), "host", "--no-invite",
                             "--port", "0", "--bind", "127.0.0.1", "--bot", "greedy"],
                            cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        line = host.stdout.readline()
        assert line.startswith("listening on "), line
        port = line.strip().rsplit(":", 1)[1]
        join = basilica("join", f"127.0.0.1:{port}", "--bot", "random", "--home", str(homes[1]), cwd=cwd)
        out, err = host.communicate(timeout=120)
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate()
    assert join.returncode == 0 and host.returncode == 0, (join.stderr, err)
    for home, said in zip(homes, (out, join.stdout)):
        (replay,) = (home / "replays").glob("*.replay")
        assert said.strip().splitlines()[-1].endswith(f"; replay {replay}"), said
    assert sessions(*homes) == [], sessions(*homes)
    assert list(cwd.iterdir()) == []


def test_tournament_results_go_under_home_and_a_rerun_to_the_next_folder(places: tuple[Path, Path]) -> None:
    home, cwd = places
    args = ["tournament", "--bots", "random,greedy", "--games", "1", "--jobs", "1", "--seed", "s", "--home", str(home)]
    first = basilica(*args, cwd=cwd)
    assert first.returncode == 0, first.stderr
    folder = home / "tournaments" / "s"
    assert f"saved {folder / 'tournament.json'} and {folder / 'standings.csv'}" in first.stdout, first.stdout
    second = basilica(*args, cwd=cwd)
    assert f"saved {home / 'tournaments' / 's-2' / 'tournament.json'}" in second.stdout, second.stdout
    assert sorted(p.name for p in (home / "tournaments").iterdir()) == ["s", "s-2"]
    assert list(cwd.iterdir()) == []
    third = basilica(*args, "-o", "here", cwd=cwd)
    assert third.returncode == 0, third.stderr
    assert sorted(p.name for p in (cwd / "here").iterdir()) == ["standings.csv", "tournament.json"]


@pytest.mark.parametrize("seed, name", [("../../x", "-..-x"), ("a/b", "a-b"), ("..", "seed"), ("run 1", "run-1")])
def test_no_seed_names_a_folder_outside_tournaments(seed: str, name: str) -> None:
    assert folder_name(seed) == name


def test_match_replays_go_where_o_says_and_the_line_says_so(places: tuple[Path, Path]) -> None:
    home, cwd = places
    r = basilica("match", "--games", "2", "-o", "out", "--home", str(home), cwd=cwd)
    assert r.returncode == 0, r.stderr
    written = [Path(p) for p in only_line(r.stdout, "replays: ").split(", ")]
    assert sorted(written) == sorted(Path("out") / p.name for p in (cwd / "out").glob("*.replay")) and len(written) == 2
    assert not (home / "replays").exists()


def test_replay_html_writes_its_page_under_home(places: tuple[Path, Path]) -> None:
    home, cwd = places
    r = basilica("replay", "html", str(SAMPLE), "--home", str(home), cwd=cwd)
    assert r.returncode == 0, r.stderr
    page = home / "pages" / "classic-greedy-vs-greedy.html"
    assert page.is_file() and r.stdout.startswith(f"{page}: ")
    assert list(cwd.iterdir()) == []
