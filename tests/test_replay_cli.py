"""The replay commands end to end: ``match --replay-dir``, ``verify``, ``replay show`` and ``replay export``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from support import replay_builders as rb
from basilica_p2p.cli import app
from basilica_p2p.engine import Game, Options, default_manifest, parse_action
from basilica_p2p.render import render_board
from basilica_p2p.replay.file import frame, read_replay
from basilica_p2p.wire import game_seed, open_envelope

runner = CliRunner()


def cli(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"BASILICA_HOME": None})


def real_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BASILICA_HOME"}
    return subprocess.run([sys.executable, "-m", "basilica_p2p.cli", *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.fixture(scope="module")
def match_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("match")
    out = base / "out"
    r = cli("--home", str(base / "home"), "match", "--p1", "greedy", "--p2", "random", "--games", "3",
            "--replay-dir", str(out))
    assert r.exit_code == 0, r.output
    return out


def replays(d: Path) -> list[Path]:
    files = sorted(d.glob("*"))
    assert len(files) == 3, files
    return files


def test_three_recorded_games_verify(match_dir: Path) -> None:
    files = replays(match_dir)
    r = cli("verify", *map(str, files))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert len(lines) == 3 and r.stderr == ""
    for path, line in zip(files, lines):
        assert line.startswith(f"{path}: ok: "), line
        assert "local-p1 vs local-p2" in line and "portal2022" in line


def test_the_local_identities_sign_the_games(match_dir: Path) -> None:
    home = match_dir.parent / "home"
    for path in replays(match_dir):
        replay = read_replay(path)
        keys = [k for k, _ in replay.header.players]
        assert [n for _, n in replay.header.players] == ["local-p1", "local-p2"]
        assert {open_envelope(r).sender for r in replay.records} == set(keys)
    assert (home / "local" / "p1.key").is_file() and (home / "local" / "p2.key").is_file()


def test_each_game_has_its_own_game_id_and_seed(match_dir: Path) -> None:
    ids = {read_replay(p).header.game for p in replays(match_dir)}
    assert len(ids) == 3


def _damaged_copy(src: Path, dst: Path, record: int, reframe: bool) -> Path:
    replay = read_replay(src)
    data = bytearray(src.read_bytes())
    if not reframe:
        data[replay.offsets[record] + 4 + 40] ^= 0x10
        dst.write_bytes(bytes(data))
    else:
        blob = bytearray(replay.records[record - 1])
        blob[40] ^= 0x10
        blobs = [replay.header_bytes, *replay.records]
        blobs[record] = bytes(blob)
        dst.write_bytes(rb.MAGIC + b"".join(frame(b) for b in blobs))
    return dst


@pytest.mark.parametrize("reframe", [False, True], ids=["checksum", "checksum-recomputed"])
def test_one_changed_byte_fails_naming_the_record(match_dir: Path, tmp_path: Path, reframe: bool) -> None:
    files = replays(match_dir)
    bad = _damaged_copy(files[1], tmp_path / "bad.replay", 12, reframe)
    r = cli("verify", str(files[0]), str(bad), str(files[2]))
    assert r.exit_code == 1
    assert r.stdout.count(": ok: ") == 2
    err = r.stderr.splitlines()
    assert len(err) == 1 and err[0].startswith(f"{bad}: FAILED: ")
    assert rb.first_record(err[0]) == 12, err[0]


def test_verify_json(match_dir: Path, tmp_path: Path) -> None:
    files = replays(match_dir)
    r = cli("verify", "--json", *map(str, files))
    assert r.exit_code == 0, r.output
    verdicts = json.loads(r.stdout)
    assert isinstance(verdicts, list) and len(verdicts) == 3
    for path, v in zip(files, verdicts):
        replay = read_replay(path)
        assert v["path"] == str(path) and v["ok"] is True and v["error"] is None
        assert v["players"] == ["local-p1", "local-p2"] and v["ruleset"] == "portal2022"
        assert v["records"] == 1 + len(replay.records)
        assert v["winner"] in (1, 2, None) and len(v["scores"]) == 2
        last = open_envelope(replay.records[-1])
        assert last.type == "result" and v["scores"] == last.body["scores"] and v["end"] == last.body["end"]
    bad = _damaged_copy(files[0], tmp_path / "bad.replay", 7, reframe=True)
    r = cli("verify", "--json", str(bad))
    assert r.exit_code == 1
    (v,) = json.loads(r.stdout)
    assert v["ok"] is False and rb.first_record(v["error"]) == 7 and v["scores"] is None


def test_verify_of_a_directory_a_missing_file_and_garbage(match_dir: Path, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.replay"
    garbage.write_bytes(os.urandom(300))
    empty = tmp_path / "empty.replay"
    empty.write_bytes(b"")
    missing = tmp_path / "missing.replay"
    paths = [str(tmp_path), str(missing), str(garbage), str(empty)]
    p = real_cli("verify", *paths)
    assert p.returncode == 1
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 4, p.stderr
    for path, line in zip(paths, lines):
        assert line.startswith(f"{path}: FAILED: "), line
    assert "Traceback" not in p.stderr
    # One good file among them still gets its ok line, and the status is still 1.
    good = replays(match_dir)[0]
    p = real_cli("verify", str(good), str(garbage))
    assert p.returncode == 1 and p.stdout.startswith(f"{good}: ok: ") and p.stderr.count("\n") == 1
    p = real_cli("verify", "--json", str(tmp_path), str(missing))
    assert p.returncode == 1 and [v["ok"] for v in json.loads(p.stdout)] == [False, False]


def test_what_is_not_a_regular_file_is_refused_at_once_in_one_line_by_every_command(tmp_path: Path) -> None:
    """A named pipe made 'verify' and 'replay html' wait forever, /dev/zero gave a MemoryError
    traceback or the OOM killer: now each is one line, whatever the command."""
    fifo = tmp_path / "game.replay"
    os.mkfifo(fifo)
    commands = [["verify"], ["replay", "show"], ["replay", "export"], ["replay", "html", "-o", str(tmp_path / "p")]]
    for target, kind in ((fifo, "is a named pipe"), (Path("/dev/zero"), "is a device"), (tmp_path, "is a directory")):
        for command in commands:
            env = dict(os.environ, BASILICA_HOME=str(tmp_path / "home"))
            p = subprocess.run([sys.executable, "-m", "basilica_p2p.cli", *command, str(target)], capture_output=True,
                               text=True, env=env, timeout=60)
            assert p.returncode != 0 and "Traceback" not in p.stderr, (command, target, p.stderr)
            (line,) = p.stderr.splitlines()
            assert f"{target}" in line and f"{kind}, not a replay file" in line, (command, line)


# The peak resident memory of this process alone: VmHWM (ru_maxrss would also count what the
# process that started it held before the exec, a pytest worker's hundreds of MB).
MEMORY_PROBE = """
import sys
from pathlib import Path
from basilica_p2p.replay.verify import verify_file
verdict = verify_file(Path(sys.argv[1]))
print(verdict.error)
print(next(line.split()[1] for line in open("/proc/self/status") if line.startswith("VmHWM:")))  # KiB
"""


def test_a_3_gb_sparse_file_is_refused_at_its_first_bytes_with_little_memory(match_dir: Path, tmp_path: Path) -> None:
    """It took 3.1 GB for 12 s before 'bad magic': the magic and each record's length are
    checked as the file is read, one record at a time."""
    zeros = tmp_path / "zeros.replay"
    with open(zeros, "wb") as f:
        f.truncate(3 << 30)
    after_header = tmp_path / "after-header.replay"  # a replay's first record, then 3 GB of zeros
    header = read_replay(replays(match_dir)[0]).header_bytes
    with open(after_header, "wb") as f:
        f.write(b"BASILREP" + frame(header))
        f.truncate(3 << 30)
    for path, error in ((zeros, "record 0 (byte 0): not a basilica replay file (bad magic bytes)"),
                        (after_header, f"record 1 (byte {8 + 8 + len(header)}): record length 0 is out of range")):
        p = subprocess.run([sys.executable, "-c", MEMORY_PROBE, str(path)], capture_output=True, text=True,
                           timeout=120)
        said, peak = p.stdout.splitlines()
        assert said == error, p.stdout + p.stderr
        assert int(peak) < 200 * 1024, f"{path.name}: {int(peak) // 1024} MiB at the peak"  # the file is 3,072 MiB


def test_verify_of_a_torn_file_reports_the_valid_prefix(match_dir: Path, tmp_path: Path) -> None:
    src = replays(match_dir)[2]
    replay = read_replay(src)
    cut = tmp_path / "torn.replay"
    cut.write_bytes(src.read_bytes()[: replay.offsets[20] + 9])
    r = cli("verify", str(cut))
    assert r.exit_code == 1
    assert "valid through record 19;" in r.stderr and "record 20" in r.stderr and "torn" in r.stderr


# --- replay show / export ------------------------------------------------------------


def _reveals(path: Path) -> tuple[bytes, bytes]:
    envs = [open_envelope(r) for r in read_replay(path).records]
    nonces = [e.body["nonce"] for e in envs if e.type == "reveal"]
    assert len(nonces) == 2
    return nonces[0], nonces[1]


def _fresh_game(path: Path) -> Game:
    h = read_replay(path).header
    n1, n2 = _reveals(path)
    return Game.new(default_manifest(), Options(h.ruleset, h.festum, h.removal), game_seed(h.game, n1, n2))


def test_replay_show_at_3_prints_the_board_after_move_3(match_dir: Path) -> None:
    path = replays(match_dir)[0]
    r = cli("replay", "show", str(path), "--at", "3")
    assert r.exit_code == 0, r.output
    g = _fresh_game(path)
    exported = json.loads(cli("replay", "export", str(path), "--format", "json").stdout)
    for m in exported["moves"][:3]:
        g.apply(parse_action(m["action"]))
    board = render_board(g, ("local-p1", "local-p2"))
    assert board in r.stdout
    assert "board" in r.stdout and "market" in r.stdout
    lines = r.stdout.splitlines()
    assert lines[0].startswith("local-p1 (player 1) vs local-p2 (player 2), portal2022")
    assert lines[1] == "stack shuffled by commit-reveal-v1 (unbiased, but either side could compute the stack)"
    assert any(line.strip().startswith("3. turn") for line in lines)
    assert "game over" in lines[-1]
    start = cli("replay", "show", str(path), "--at", "0")
    assert start.exit_code == 0 and render_board(_fresh_game(path), ("local-p1", "local-p2")) in start.stdout


def test_replay_show_at_shows_the_position_and_the_moves_around_it_not_the_whole_game() -> None:
    from basilica_p2p.cli.replays import AROUND

    path = Path(__file__).resolve().parent.parent / "replays" / "classic-greedy-vs-greedy.replay"
    whole = cli("replay", "show", str(path))
    r = cli("replay", "show", str(path), "--at", "10")
    assert r.exit_code == 0, r.output
    numbered = [int(line.split(".")[0]) for line in r.stdout.splitlines() if re.match(r"\s*\d+\. turn", line)]
    assert numbered == list(range(10 - AROUND, 10 + AROUND + 1)), numbered
    lines = r.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("10. turn"))
    assert lines[at + 1].startswith("Basilica"), lines[at + 1]  # the board right after move 10
    assert len(lines) < len(whole.stdout.splitlines()) // 2
    assert f"{10 - AROUND - 1} earlier moves" in r.stdout and "later moves" in r.stdout
    assert "game over" in lines[-1]


def test_replay_show_at_past_the_end_is_one_error_line(match_dir: Path) -> None:
    path = replays(match_dir)[0]
    r = cli("replay", "show", str(path), "--at", "100000")
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")


def test_replay_export_moves_replay_to_the_same_state_hashes(match_dir: Path, tmp_path: Path) -> None:
    for path in replays(match_dir):
        r = cli("replay", "export", str(path), "--format", "json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        h = read_replay(path).header
        assert doc["header"]["game"] == h.game.hex() and doc["header"]["ruleset"] == h.ruleset
        assert [p["public_key"] for p in doc["header"]["players"]] == [k.hex() for k, _ in h.players]
        assert doc["verified"] is True and doc["error"] is None
        g = _fresh_game(path)
        for i, m in enumerate(doc["moves"]):
            assert m["ply"] == i and m["player"] == g.to_move + 1
            g.apply(parse_action(m["action"]))
            assert g.state_hash() == m["state_hash"], f"{path.name}: move {i} {m['action']}"
        assert g.over
        assert doc["result"]["scores"] == list(g.scores) and doc["result"]["end"] == g.end_reason
        assert doc["result"]["moves"] == len(doc["moves"])
        # The per-move hashes are the acknowledged ones in the replay.
        acks = [open_envelope(x).body["state"].hex() for x in read_replay(path).records
                if open_envelope(x).type == "ack"]
        assert acks == [m["state_hash"] for m in doc["moves"]]
        assert len(doc["scorings"]) == g.scorings
    out = tmp_path / "export.json"
    path = replays(match_dir)[0]
    r = cli("replay", "export", str(path), "--format", "json", "-o", str(out))
    assert r.exit_code == 0 and r.stdout == ""
    assert json.loads(out.read_text()) == json.loads(cli("replay", "export", str(path)).stdout)


def test_replay_export_of_an_unknown_format_or_a_bad_file(match_dir: Path, tmp_path: Path) -> None:
    path = replays(match_dir)[0]
    r = cli("replay", "export", str(path), "--format", "xml")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    garbage = tmp_path / "g.replay"
    garbage.write_bytes(b"nonsense")
    for cmd in (("replay", "export", str(garbage)), ("replay", "show", str(garbage)),
                ("replay", "show", str(tmp_path / "missing"))):
        p = real_cli(*cmd)
        assert p.returncode == 2, cmd
        assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


def test_replay_show_and_export_of_a_damaged_replay_stop_at_the_record(match_dir: Path, tmp_path: Path) -> None:
    bad = _damaged_copy(replays(match_dir)[1], tmp_path / "bad.replay", 15, reframe=True)
    r = cli("replay", "show", str(bad))
    assert r.exit_code == 1
    assert "record 15" in r.stderr and r.stderr.count("\n") == 1
    doc = json.loads(cli("replay", "export", "--unverified", str(bad)).stdout)
    assert doc["verified"] is False and rb.first_record(doc["error"]) == 15


def test_replay_export_of_a_replay_that_does_not_verify_fails_unless_asked_to_export_it_anyway(
        match_dir: Path, tmp_path: Path) -> None:
    """It exited 0 having written '"verified": false', which a script would take for a game."""
    bad = _damaged_copy(replays(match_dir)[1], tmp_path / "bad.replay", 15, reframe=True)
    out = tmp_path / "bad.json"
    r = cli("replay", "export", str(bad), "-o", str(out))
    assert r.exit_code == 1 and not out.exists() and r.stdout == ""
    (line,) = r.stderr.splitlines()
    assert line.startswith(f"error: {bad}: it stops verifying at record 15") and "--unverified" in line, line
    r = cli("replay", "export", "--unverified", str(bad), "-o", str(out))
    assert r.exit_code == 0 and json.loads(out.read_text())["verified"] is False


# --- forfeits, unfinished games, other manifests ----------------------------------------


@pytest.fixture(scope="module")
def short_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("short") / "short.replay"
    rb.record_game(path, rb.find_game(jester=False, max_plies=45))
    return path


def test_a_forfeit_and_an_unfinished_game_on_the_command_line(short_game: Path, tmp_path: Path) -> None:
    replay, envs = rb.load(short_game)
    head = envs[:8]
    forfeit = rb.seal(rb.BOB.key, rb.GAME_ID, 8, head[-1].hash, "forfeit", {"loser": 1, "reason": "left the game"})
    done = rb.write(tmp_path / "forfeit.replay", replay.header_bytes, [*rb.raws(head), forfeit.raw])
    r = cli("verify", str(done))
    assert r.exit_code == 0, r.output
    assert "player 1 (alice) forfeited" in r.stdout and "left the game" in r.stdout and "(forfeit)" in r.stdout
    show = cli("replay", "show", str(done))
    last = show.stdout.splitlines()[-1]
    assert show.exit_code == 0 and last.startswith("alice (player 1) forfeited") and "left the game" in last
    doc = json.loads(cli("replay", "export", str(done)).stdout)
    result = {k: doc["result"][k] for k in ("scores", "winner", "end", "moves", "reason")}
    assert result == {"scores": [0, 0], "winner": 2, "end": "forfeit", "moves": 1, "reason": "left the game"}
    assert len(doc["moves"]) == 1 and doc["verified"] is True

    unfinished = rb.write(tmp_path / "unfinished.replay", replay.header_bytes, rb.raws(head))
    r = cli("verify", str(unfinished))
    assert r.exit_code == 1 and "incomplete game: valid through record 8;" in r.stderr
    show = cli("replay", "show", str(unfinished))
    assert show.exit_code == 0 and show.stdout.splitlines()[-1] == "the game is not finished"
    r = cli("replay", "export", str(unfinished))
    assert r.exit_code == 1 and r.stderr.startswith(f"error: {unfinished}: the game is not finished; nothing exported")
    doc = json.loads(cli("replay", "export", "--unverified", str(unfinished)).stdout)
    assert doc["verified"] is False and doc["result"] is None


def test_a_game_with_another_manifest_needs_it_passed(tmp_path: Path) -> None:
    from basilica_p2p.engine import reconstruct_default
    from basilica_p2p.replay.local import play_recorded

    custom = reconstruct_default(36, name="a custom box")
    assert custom.hash != default_manifest().hash
    mpath = tmp_path / "box.json"
    mpath.write_text(json.dumps(custom.to_json()))
    path = tmp_path / "custom.replay"
    play_recorded(path, custom, Options(), rb.PLAYERS, (rb.RandomBot(1), rb.RandomBot(2)))
    r = cli("verify", str(path))
    assert r.exit_code == 1 and "--manifest" in r.stderr and rb.first_record(r.stderr) == 0
    r = cli("verify", "--manifest", str(mpath), str(path))
    assert r.exit_code == 0, r.output
    r = cli("replay", "show", str(path))
    assert r.exit_code == 2 and "--manifest" in r.stderr
    r = cli("replay", "export", "--manifest", str(mpath), str(path))
    assert r.exit_code == 0 and json.loads(r.stdout)["verified"] is True
    r = cli("verify", "--manifest", str(tmp_path / "nope.json"), str(path))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1


def test_verify_json_reports_a_torn_tail(match_dir: Path, tmp_path: Path) -> None:
    src = replays(match_dir)[0]
    replay = read_replay(src)
    cut = tmp_path / "torn.replay"
    cut.write_bytes(src.read_bytes()[: replay.offsets[9] + 2])
    r = cli("verify", "--json", str(cut))
    assert r.exit_code == 1
    (v,) = json.loads(r.stdout)
    assert v["ok"] is False and v["torn_tail"] == {"record": 9, "offset": replay.offsets[9]}
    assert v["records"] == 9


def test_match_replay_dir_that_is_a_file_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    p = real_cli("--home", str(tmp_path / "home"), "match", "--games", "1", "--replay-dir", str(blocker))
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1 and "Traceback" not in p.stderr


def test_home_option_expands_the_user_directory(tmp_path: Path) -> None:
    r = runner.invoke(app, ["--home", "~/bhome", "id", "new", "--name", "tilde"],
                      env={"HOME": str(tmp_path), "BASILICA_HOME": None})
    assert r.exit_code == 0, r.output
    assert (tmp_path / "bhome" / "identity.key").is_file()


def test_replay_show_marks_a_takeback_and_a_win_on_time() -> None:
    """The protocol-2 vector (a clock, a takeback, a claim on time): replay show says all three."""
    vector = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "clock.replay"
    r = cli("replay", "show", str(vector))
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    (note,) = [i for i, line in enumerate(lines) if "takeback by alice, agreed by both: move 3 taken back" in line]
    assert lines[note - 1].strip().startswith("3. turn  1") and lines[note + 1].strip().startswith("4. turn  1")
    assert lines[-1].startswith("bob (player 2) won on time: alice's clock ran out"), lines[-1]


def test_replay_show_names_the_players(tmp_path: Path) -> None:
    """Moves, scorings, the board and the end name the players, never "player 1/2"."""
    out = tmp_path / "out"
    r = cli("--home", str(tmp_path / "home"), "match", "--p1", "greedy", "--p2", "random", "--replay-dir", str(out))
    assert r.exit_code == 0, r.output
    (path,) = out.glob("*")
    r = cli("replay", "show", str(path), "--boards")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    moves = [line for line in lines if ". turn " in line]
    assert moves and all(line.split()[3] in ("local-p1", "local-p2") for line in moves), moves[:3]
    assert "  Scoring 1: local-p1 +" in r.output
    assert "P1 local-p1 " in r.output and "player 1" not in "\n".join(lines[1:])
    assert lines[-1].startswith("game over (") and "local-p1 " in lines[-1] and lines[-1].endswith(" local-p2")


def test_verify_says_one_move_not_one_moves() -> None:
    from basilica_p2p.referee import Outcome
    from basilica_p2p.replay.verify import Verdict

    for moves, said in ((1, "1 move (forfeit)"), (2, "2 moves (forfeit)")):
        v = Verdict("g.replay", True, names=("alice", "bob"), ruleset="portal2022",
                    outcome=Outcome((0, 0), 1, "forfeit", moves, "quit", claimed_by=0))
        assert said in v.line(), v.line()
