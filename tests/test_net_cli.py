"""The network commands as a new user meets them.

Ctrl-C (SIGINT) in `basilica host`, `join` and `resume`: one line that says how to go on, status 130,
no traceback, the terminal given back; and the interrupted replays are whole, so `basilica resume`
on both sides finishes the game.  Also: the host's own advice when it cannot listen, and how a
`cmd:` bot is named to the network peer.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from basilica_p2p.agent import bot_label
from basilica_p2p.bots.external import ExternalBot, public_label
from basilica_p2p.cli import app
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.verify import verify_file

from support.readiness import drain, held, log_until, wait_until

TESTS = Path(__file__).resolve().parent


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, BASILICA_HOME=str(home), PYTHONPATH=str(TESTS), LOGNAME="carol")
    env.pop("NO_COLOR", None)
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "basilica_p2p.cli", *args]


def _start(args: list[str], home: Path, stdin: int | None = subprocess.DEVNULL,
           stdout: int | None = subprocess.PIPE) -> subprocess.Popen[str]:
    return subprocess.Popen(_cli(*args), env=_env(home), stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                            text=True)


def _listening_port(host: subprocess.Popen[str]) -> str:
    assert host.stdout is not None
    line = host.stdout.readline()
    assert line.startswith("listening on "), line
    return line.strip().rsplit(":", 1)[1]


def _wait_for(folder: Path, pattern: str = "*.replay", timeout: float = 20) -> Path:
    wait_until(lambda: bool(list(folder.glob(pattern))), f"nothing like {pattern} in {folder}", timeout)
    (found,) = folder.glob(pattern)
    return found


def _interrupt(proc: subprocess.Popen[str]) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=20)  # before communicate(), which closes stdin: for a person that is quitting
    _, err = proc.communicate(timeout=20)
    return proc.returncode, err


def _check_interrupted(code: int, err: str, replay: Path | None) -> None:
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert code == 130, (code, err)
    last = err.strip().splitlines()[-1]
    if replay is None:
        assert last == "interrupted: no game was under way", err
    else:
        assert last.startswith("interrupted: the game is not finished; both sides can go on with "
                               "'basilica resume REPLAY'"), err
        assert f"basilica resume {replay}" in last, err


def test_ctrl_c_while_waiting_for_a_peer_to_join(tmp_path: Path) -> None:
    host = _start(["host", "--no-invite", "--port", "0", "--bind", "127.0.0.1", "--bot", "random"], tmp_path / "home")
    _listening_port(host)
    code, err = _interrupt(host)
    _check_interrupted(code, err, None)


def test_ctrl_c_in_host_join_and_resume_leaves_replays_that_resume_and_finish(tmp_path: Path) -> None:
    """The host is a bot, the joiner a person whose input never comes: the host waits for the
    joiner's move, the joiner sits at its prompt.  Both are interrupted; then `resume` is
    interrupted while it waits; then both sides resume (a bot taking the person's seat) and the
    game ends, both replays verifying and identical."""
    home = tmp_path / "home"
    host = _start(["host", "--no-invite", "--port", "0", "--bind", "127.0.0.1", "--bot", "greedy", "--replay-dir",
                   str(tmp_path / "a")], home)
    port = _listening_port(host)
    # The person's input stays open and empty.
    join = _start(["join", f"127.0.0.1:{port}", "--replay-dir", str(tmp_path / "b")], home, stdin=subprocess.PIPE)
    assert join.stdout is not None
    screen = drain(join.stdout.fileno())
    try:
        a, b = _wait_for(tmp_path / "a"), _wait_for(tmp_path / "b")
        # Past the seed's commit-reveal and the host bot's first move, if it has the first: the
        # person is asked, and once both hold the same messages the host waits for the person.
        wait_until(lambda: b"> " in screen and held(tmp_path / "a") == held(tmp_path / "b") >= 6,
                   "the person was never asked, with both sides level")
        code, err = _interrupt(host)
        _check_interrupted(code, err, a)
        code, err = _interrupt(join)  # at its prompt, in a worker thread
        _check_interrupted(code, err, b)
        assert "made a new identity 'carol'" in err, err
    finally:
        for p in (host, join):
            if p.poll() is None:
                p.kill()
                p.communicate()
    for replay in (a, b):
        assert read_replay(replay).torn is None, replay
        v = verify_file(replay)
        assert not v.ok and "incomplete game: valid through record" in v.line(), v.line()  # valid so far

    waiting = _start(["resume", str(a), "--window", "30"], home)
    assert "listening on" in log_until(waiting, "listening on")[-1]
    code, err = _interrupt(waiting)
    _check_interrupted(code, err, a)

    rh = _start(["resume", str(a), "--window", "30"], home)
    try:
        said = log_until(rh, "listening on")  # the joiner retries until the host listens
        rj = subprocess.run(_cli("resume", str(b), "--window", "30", "--bot", "random"), env=_env(home),
                            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        _, err_h = rh.communicate(timeout=60)
        err_h = "".join(said) + err_h
    finally:
        if rh.poll() is None:
            rh.kill()
            rh.communicate()
    assert rh.returncode == 0, err_h
    assert rj.returncode == 0, rj.stderr
    va, vb = verify_file(a), verify_file(b)
    assert va.ok and vb.ok, (va.line(), vb.line())
    assert va.outcome is not None and va.outcome.end != "forfeit", va.line()
    assert a.read_bytes() == b.read_bytes()


def test_ctrl_c_at_a_terminal_prompt_gives_the_terminal_back(tmp_path: Path) -> None:
    """A person at a real terminal: the prompt (readline, in a worker thread) turns echo and line
    editing off while it waits; after Ctrl-C the terminal must be as it was, not left silent."""
    import pty
    import termios

    home = tmp_path / "home"
    host = _start(["host", "--no-invite", "--port", "0", "--bind", "127.0.0.1", "--bot", "greedy", "--replay-dir",
                   str(tmp_path / "a")], home)
    port = _listening_port(host)
    master, slave = pty.openpty()
    before = termios.tcgetattr(slave)
    assert before[3] & termios.ECHO and before[3] & termios.ICANON
    join = subprocess.Popen(_cli("join", f"127.0.0.1:{port}", "--plain", "--replay-dir", str(tmp_path / "b")),
                            env=dict(_env(home), TERM="xterm"), stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                            text=True)
    screen = drain(master)
    try:
        _wait_for(tmp_path / "a")
        b = _wait_for(tmp_path / "b")
        wait_until(lambda: held(tmp_path / "a") >= 6 and b"> " in screen, "the person was never asked")
        # The prompt (readline) turns echo off once it waits; the "> " is written just before.
        wait_until(lambda: not termios.tcgetattr(slave)[3] & termios.ECHO,
                   "the prompt was expected to turn echo off while it waits", timeout=10)
        code, err = _interrupt(join)
        _check_interrupted(code, err, b)
        after = termios.tcgetattr(slave)
        assert after[3] & termios.ECHO and after[3] & termios.ICANON, "the terminal was left without echo"
    finally:
        for p in (host, join):
            if p.poll() is None:
                p.kill()
                p.communicate()
        os.close(slave)
        os.close(master)


# --- the host's advice when it cannot listen -----------------------------------------------------------


def test_a_busy_port_gets_the_hosts_advice_not_the_joiners(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "host", "--no-invite", "--port", str(port), "--bind",
                                     "127.0.0.1", "--bot", "random"], env={"BASILICA_HOME": None})
    assert r.exit_code == 1, r.output
    err = r.stderr.strip()
    assert err.startswith("error: network (127.0.0.1:") and "Address already in use" in err, err
    assert f"using port {port}?" in err and "--port 0" in err, err
    assert "is the host running" not in err, err


def test_the_joiner_keeps_its_advice(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: a connection is refused
        r = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "join", f"127.0.0.1:{port}", "--bot", "random"],
                               env={"BASILICA_HOME": None})
    assert r.exit_code == 1, r.output
    assert "(is the host running and reachable?)" in r.stderr, r.stderr


def test_resuming_a_finished_game_says_it_is_finished_and_where_its_replay_is(tmp_path: Path) -> None:
    """A finished game's session file is gone (deleted once both sides hold the result): resume says the
    game is over, with its result, rather than that only host or join games can be resumed."""
    import shutil

    replay = tmp_path / "a" / "game-p1.replay"
    replay.parent.mkdir()
    shutil.copy(TESTS.parent / "replays" / "portal2022-greedy-vs-random.replay", replay)
    outcome = verify_file(replay).outcome
    assert outcome is not None
    r = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "resume", str(replay)], env={"BASILICA_HOME": None})
    assert r.exit_code == 0, r.output
    assert "only games played with host or join" not in r.output
    assert "finished" in r.stdout and f"{outcome.scores[0]}-{outcome.scores[1]}" in r.stdout, r.stdout
    assert f"replay: {replay}" in r.stdout.splitlines(), r.stdout


def test_resuming_an_unfinished_local_game_still_says_what_can_be_resumed(tmp_path: Path) -> None:
    replay = tmp_path / "cut.replay"
    data = (TESTS.parent / "replays" / "portal2022-greedy-vs-random.replay").read_bytes()
    replay.write_bytes(data[: len(data) // 2])
    r = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "resume", str(replay)], env={"BASILICA_HOME": None})
    assert r.exit_code == 2, r.output
    assert "only games played with host or join can be resumed" in r.stderr, r.stderr


# --- a cmd: bot's name, as the network peer sees it ---------------------------------------------------------


@pytest.mark.parametrize("command, public", [
    ("python3 /home/me/secret/bot.py --depth 3", "cmd:bot.py"),
    ("/home/me/secret/mybot.sh level3", "cmd:mybot.sh"),
    ("env python3 -u /srv/x/c.py", "cmd:c.py"),
    ("sh examples/line_bot.sh", "cmd:line_bot.sh"),
    ("./mybot", "cmd:mybot"),
    # nothing private is sent: values, KEY=secret words, paths that are not scripts
    ("env API_KEY=hunter2 ./bot", "cmd:env"),
    ("sh -c '/home/me/bot --token=abc'", "cmd:sh"),
    ("java -cp /home/me/secret Main", "cmd:java"),
])
def test_a_cmd_bot_is_named_by_its_program_file_only(command: str, public: str) -> None:
    class Spec:  # what the labels read: a cmd: bot's spec (built without starting anything)
        spec = "cmd:" + command

    assert public_label(Spec()) == public
    assert bot_label(Spec()) == "cmd:" + command  # locally the whole command stays
    assert public_label(ExternalBot(["sh", "examples/line_bot.sh"])) == "cmd:line_bot.sh"


# --- the result line of each game, as host, join and resume print it ----------------------------------------


def report_line(seat: int, me: str, peer: str, scores: tuple[int, int], winner: int | None,
                capsys: pytest.CaptureFixture[str], end: str = "score", moves: int = 40, reason: str = "") -> str:
    from types import SimpleNamespace

    from basilica_p2p.cli import _report_games

    outcome = SimpleNamespace(end=end, winner=winner, scores=scores, moves=moves, reason=reason)
    _report_games([SimpleNamespace(outcome=outcome, seat=seat, peer=peer, replay="g.replay")], me)
    return capsys.readouterr().out.strip()


def test_the_joiner_sees_names_and_scores_in_seat_order(capsys: pytest.CaptureFixture[str]) -> None:
    line = report_line(1, "bob", "alice", (31, 12), 0, capsys)
    assert line == "game 1: alice (player 1) 31 - 12 bob (player 2, you): alice won, 40 moves (score); replay g.replay"


def test_the_host_sees_the_same_order(capsys: pytest.CaptureFixture[str]) -> None:
    line = report_line(0, "alice", "bob", (31, 12), 0, capsys)
    assert line == "game 1: alice (player 1, you) 31 - 12 bob (player 2): you won, 40 moves (score); replay g.replay"


def test_a_lost_game_seated_second_and_one_move(capsys: pytest.CaptureFixture[str]) -> None:
    line = report_line(1, "bob", "alice", (0, 0), 0, capsys, end="forfeit", moves=1, reason="quit")
    assert line.startswith("game 1: alice (player 1) 0 - 0 bob (player 2, you): you forfeited (bob: quit), 1 move ")


def test_a_game_lost_on_time_says_so_on_both_sides(capsys: pytest.CaptureFixture[str]) -> None:
    """A claim on time reads as a win on time, not a bare '(time)'."""
    lost = report_line(1, "bob", "alice", (20, 25), 0, capsys, end="time", moves=31)
    assert ": alice won on time (your clock ran out), 31 moves (time);" in lost, lost
    won = report_line(0, "alice", "bob", (20, 25), 0, capsys, end="time", moves=31)
    assert ": you won on time, 31 moves (time);" in won, won
