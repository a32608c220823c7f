"""`basilica host --code` and `basilica join --code 7-word-word` on one machine, through a real
local Magic Wormhole mailbox and transit relay (issue 12). The relay itself carries games between
symmetric routers in tests/test_nat_games.py, where no direct way exists."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from basilica_p2p.replay.verify import verify_file
from support.relay_server import TransitRelay, transit_relay
from support.wormhole_servers import MailboxServer, mailbox_server

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MailboxServer, TransitRelay]]:
    folder = tmp_path_factory.mktemp("wormhole")
    with mailbox_server(folder) as mailbox, transit_relay(folder) as relay:
        yield mailbox, relay


def _env(home: Path) -> dict[str, str]:
    return dict(os.environ, BASILICA_HOME=str(home), PYTHONPATH=str(TESTS), LOGNAME="carol")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "basilica_p2p.cli", *args]


def _where(servers: tuple[MailboxServer, TransitRelay]) -> list[str]:
    mailbox, relay = servers
    return ["--mailbox", mailbox.url, "--relay", f"{relay.address[0]}:{relay.address[1]}"]


def _host(tmp_path: Path, servers: tuple[MailboxServer, TransitRelay], *extra: str) -> tuple[subprocess.Popen[str], str]:
    host = subprocess.Popen(_cli("host", "--code", "--bind", "127.0.0.1", "--port", "0", "--no-stun",
                                 "--port-mapping", "off", "--bot", "random", "--replay-dir", str(tmp_path / "a"),
                                 *_where(servers), *extra),
                            env=_env(tmp_path / "hh"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert host.stdout is not None
    for _ in range(3):
        line = host.stdout.readline()
        if line.startswith("code: basilica join --code "):
            return host, line.split()[-1]
    host.kill()
    raise AssertionError(f"no code line: {host.communicate(timeout=20)}")


def _join(tmp_path: Path, servers: tuple[MailboxServer, TransitRelay], code: str, *extra: str,
          home: str = "jh") -> subprocess.CompletedProcess[str]:
    return subprocess.run(_cli("join", code, "--no-stun", "--bot", "random", "--replay-dir", str(tmp_path / "b"),
                               *_where(servers), *extra),
                          env=_env(tmp_path / home), capture_output=True, text=True, timeout=120)


def test_a_code_read_aloud_connects_directly_and_both_replays_verify(tmp_path: Path, servers: tuple[MailboxServer, TransitRelay]) -> None:
    host, code = _host(tmp_path, servers)
    joined = _join(tmp_path, servers, code)
    _, err = host.communicate(timeout=60)
    assert (host.returncode, joined.returncode) == (0, 0), (err, joined.stderr)
    assert "connected: direct (LAN)" in joined.stderr and "relayed" not in joined.stderr, joined.stderr
    for folder in ("a", "b"):
        (replay,) = (tmp_path / folder).glob("*.replay")
        assert verify_file(replay).ok


def test_a_wrong_code_fails_on_both_sides_with_one_line_and_no_game(tmp_path: Path, servers: tuple[MailboxServer, TransitRelay]) -> None:
    host, code = _host(tmp_path, servers)
    nameplate, *words = code.split("-")
    wrong = "-".join([nameplate, *("zulu" if w != "zulu" else "yucatan" for w in words)])
    joined = _join(tmp_path, servers, wrong)
    _, err = host.communicate(timeout=60)
    assert joined.returncode == 1 and host.returncode == 1, (err, joined.stderr)
    for text in (joined.stderr, err):
        last = text.strip().splitlines()[-1]
        assert last.startswith("error: the code: ") and "wrong" in last, text
        assert "Traceback" not in text
    assert not list(tmp_path.glob("*/*.replay"))


def test_a_mailbox_that_is_down_is_one_line(tmp_path: Path) -> None:
    r = subprocess.run(_cli("join", "7-crossover-clockwork", "--mailbox", "ws://127.0.0.1:9/v1", "--bot", "random"),
                       env=_env(tmp_path / "jh"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("error: the code: ") and "127.0.0.1:9" in lines[-1], r.stderr
    assert "ask the host for its invite line" in lines[-1] and "--mailbox URL" in lines[-1], lines[-1]
    assert "Traceback" not in r.stderr


def test_without_the_internet_extra_code_says_what_to_install(tmp_path: Path) -> None:
    script = ("import sys; sys.modules['wsproto'] = None; sys.argv = ['basilica'] + sys.argv[1:]; "
              "from basilica_p2p.cli import main; main()")
    r = subprocess.run([sys.executable, "-c", script, "join", "--code", "7-crossover-clockwork", "--bot", "random"],
                       env=_env(tmp_path / "jh"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert r.stderr.strip().splitlines()[-1] == ("error: --code needs the internet extra (wsproto is missing): "
                                                 "pip install 'basilica-p2p[internet]'"), r.stderr


def test_without_the_internet_extra_host_code_refuses_before_any_invite(tmp_path: Path) -> None:
    """No invite is printed that would die with the process a moment later."""
    script = ("import sys; sys.modules['wsproto'] = None; sys.argv = ['basilica'] + sys.argv[1:]; "
              "from basilica_p2p.cli import main; main()")
    r = subprocess.run([sys.executable, "-c", script, "host", "--code", "--bind", "127.0.0.1", "--port", "0",
                        "--no-stun", "--port-mapping", "off", "--bot", "random"],
                       env=_env(tmp_path / "hh"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    assert r.stdout == "", r.stdout
    assert r.stderr.strip().splitlines() == ["error: --code needs the internet extra (wsproto is missing): "
                                             "pip install 'basilica-p2p[internet]'"], r.stderr


def test_a_host_whose_mailbox_does_not_answer_keeps_its_invite_and_says_what_to_do(tmp_path: Path) -> None:
    from support.readiness import log_until

    host = subprocess.Popen(_cli("host", "--code", "--mailbox", "ws://127.0.0.1:9/v1", "--bind", "127.0.0.1",
                                 "--port", "0", "--no-stun", "--port-mapping", "off", "--bot", "random",
                                 "--replay-dir", str(tmp_path / "a")),
                            env=_env(tmp_path / "hh"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        invite = next(line for line in host.stdout if line.startswith("invite: ")).split()[-1]
        said = log_until(host, "did not answer")
        (line,) = [s for s in said if "did not answer" in s]
        assert "ws://127.0.0.1:9/v1" in line and "the invite above still works" in line and "--mailbox URL" in line
        assert host.poll() is None  # still waiting for the invite's holder
        joined = subprocess.run(_cli("join", invite, "--no-stun", "--bot", "random", "--replay-dir",
                                     str(tmp_path / "b")),
                                env=_env(tmp_path / "jh"), capture_output=True, text=True, timeout=120)
        _, err = host.communicate(timeout=60)
        assert (host.returncode, joined.returncode) == (0, 0), (err, joined.stderr)
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate()


def test_a_watcher_that_cannot_reach_the_host_watches_through_its_relay(
        tmp_path: Path, servers: tuple[MailboxServer, TransitRelay]) -> None:
    """host --watchers with --relay waits for watchers on the relay too; a watcher whose direct
    way fails (--at a closed port) meets it there and sees the whole game."""
    _, relay = servers
    host = subprocess.Popen(_cli("host", "--no-invite", "--bind", "127.0.0.1", "--port", "0", "--bot", "greedy",
                                 "--watchers", "2", "--relay", f"{relay.address[0]}:{relay.address[1]}",
                                 "--replay-dir", str(tmp_path / "a")),
                            env=_env(tmp_path / "host"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        code = port = ""
        for line in host.stdout:
            if line.startswith("watch code: basilica watch "):
                code = line.split()[-1]
            if line.startswith("listening on "):
                port = line.strip().rsplit(":", 1)[1]
                break
        watcher = subprocess.Popen(_cli("watch", code, "--plain", "--at", "127.0.0.1:9"), env=_env(tmp_path / "w"),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)  # it meets the host on the relay before the game starts (or catches up after)
        joined = subprocess.run(_cli("join", f"127.0.0.1:{port}", "--bot", "random", "--replay-dir",
                                     str(tmp_path / "b")), env=_env(tmp_path / "join"), capture_output=True,
                                text=True, timeout=60)
        assert joined.returncode == 0, joined.stderr
        out, err = watcher.communicate(timeout=60)
        assert watcher.returncode == 0, err
        assert "You watch greedy-host (player 1) against random-join (player 2)" in out and "Game over" in out, out
        assert "watched 1 game" in out, out
        assert f"connected: relayed by {relay.address[0]}:{relay.address[1]}" in err, err
    finally:
        for p in (host,):
            if p.poll() is None:
                p.kill()
            p.communicate()


def test_a_watch_code_read_aloud_hands_over_the_watch_code_and_the_watcher_sees_the_game(
        tmp_path: Path, servers: tuple[MailboxServer, TransitRelay]) -> None:
    """host --code --watchers prints a second code to read aloud, for watching: 'basilica watch
    --code' fetches the watch code through the mailbox, and watches with it."""
    mailbox, _ = servers
    host = subprocess.Popen(_cli("host", "--code", "--watchers", "2", "--bind", "127.0.0.1", "--port", "0",
                                 "--no-stun", "--port-mapping", "off", "--bot", "greedy", "--replay-dir",
                                 str(tmp_path / "a"), *_where(servers)),
                            env=_env(tmp_path / "hh"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        join_code = spoken = ""
        for _ in range(12):
            line = host.stdout.readline()
            if line.startswith("code: basilica join --code "):
                join_code = line.split()[-1]
            if line.startswith("watch code to read aloud: basilica watch --code "):
                spoken = line.split()[-1]
            if join_code and spoken:
                break
        assert join_code and spoken, (join_code, spoken)
        watcher = subprocess.Popen(_cli("watch", "--code", spoken, "--mailbox", mailbox.url, "--plain"),
                                   env=_env(tmp_path / "w"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        joined = _join(tmp_path, servers, join_code)
        assert joined.returncode == 0, joined.stderr
        out, err = watcher.communicate(timeout=60)
        assert watcher.returncode == 0, err
        assert "against" in out and "Game over" in out and "watched 1 game" in out, out
        assert "connected: direct (LAN) (127.0.0.1:" in err, err  # the host's only address, on this machine
    finally:
        if host.poll() is None:
            host.kill()
        host.communicate()
