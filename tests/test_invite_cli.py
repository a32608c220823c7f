"""`basilica host` with its invite and `basilica join bas1:...` as a user meets them, on one machine
(issue 11); the same commands through real routers are in tests/test_nat_games.py."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from basilica_p2p.net.invite import Candidate
from basilica_p2p.replay.verify import verify_file

TESTS = Path(__file__).resolve().parent


def _env(home: Path) -> dict[str, str]:
    return dict(os.environ, BASILICA_HOME=str(home), PYTHONPATH=str(TESTS), LOGNAME="carol")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "basilica_p2p.cli", *args]


LOCAL = ["--bind", "127.0.0.1", "--port", "0", "--no-stun", "--port-mapping", "off"]


def _host(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    host = subprocess.Popen(_cli("host", *LOCAL, "--bot", "random", "--replay-dir", str(tmp_path / "a"), *extra),
                            env=_env(tmp_path / "hh"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert host.stdout is not None
    listening = host.stdout.readline()
    assert listening.startswith("listening on 127.0.0.1:"), listening
    invite = host.stdout.readline()
    assert invite.startswith("invite: basilica join bas1:"), invite
    return host, invite.split()[-1]


@contextmanager
def _waiting_host(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A host that should still be waiting at the end: killed then."""
    host, code = _host(tmp_path)
    try:
        yield host, code
    finally:
        if host.poll() is None:
            host.kill()
        host.communicate(timeout=20)


def _join(tmp_path: Path, code: str, home: str = "jh", *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_cli("join", code, "--bot", "random", "--no-stun", "--replay-dir", str(tmp_path / "b"),
                               *extra),
                          env=_env(tmp_path / home), capture_output=True, text=True, timeout=120)


def test_an_invite_pasted_plays_a_game_that_both_sides_verify_and_cannot_be_used_twice(tmp_path: Path) -> None:
    host, code = _host(tmp_path)
    joined = _join(tmp_path, code)
    out, err = host.communicate(timeout=60)
    assert host.returncode == 0 and joined.returncode == 0, (err, joined.stderr)
    assert "connected: direct (LAN) (127.0.0.1:" in joined.stderr, joined.stderr
    assert "connected: direct (LAN) (from 127.0.0.1:" in err, err
    assert "Traceback" not in err + joined.stderr
    for folder in ("a", "b"):
        (replay,) = (tmp_path / folder).glob("*.replay")
        assert verify_file(replay).ok
    again = _join(tmp_path, code)
    assert again.returncode == 1
    assert again.stderr.strip().splitlines()[-1] == "error: this invite was used already: ask the host for a new one"


def test_a_join_by_address_to_a_host_with_an_invite_is_told_to_use_the_invite(tmp_path: Path) -> None:
    with _waiting_host(tmp_path) as (host, code):
        from basilica_p2p.net.invite import parse_invite
        port = parse_invite(code, 0).candidates[0].port
        r = subprocess.run(_cli("join", f"127.0.0.1:{port}", "--bot", "random", "--replay-dir", str(tmp_path / "b")),
                           env=_env(tmp_path / "jh"), capture_output=True, text=True, timeout=60)
        assert r.returncode == 1, r.stderr
        assert "this host hands out invites: join with the code it printed" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
        assert host.poll() is None  # still waiting for the invite's holder


def test_a_damaged_truncated_misplaced_or_expired_code_gets_one_line_and_no_connection(tmp_path: Path) -> None:
    with _waiting_host(tmp_path) as (host, code):
        typo = code[:-3] + ("a" if code[-3] != "a" else "b") + code[-2:]
        from basilica_p2p.net.invite import Invite, format_invite, parse_invite
        inv = parse_invite(code, 0)
        expired = format_invite(Invite(inv.key, inv.secret, 1_000_000_000, inv.candidates))
        for bad, phrase in ((typo, "checksum does not match"), (code[:20], "invite"), ("bas1r:" + code[5:], "reply"),
                            (expired, "expired")):
            r = _join(tmp_path, bad)
            assert r.returncode == 2, (bad, r.stderr)
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: invite: ") and phrase in lines[0], r.stderr
        assert host.poll() is None


def test_a_reply_code_pasted_into_the_host_is_checked(tmp_path: Path) -> None:
    """A line that is no reply code, and a reply made from another invite, are answered with one line each."""
    host, code = _host(tmp_path)
    try:
        from basilica_p2p.net.invite import Invite, format_reply, make_reply, parse_invite
        invite = parse_invite(code, 0)
        other = Invite(invite.key, os.urandom(16), invite.expires, invite.candidates)
        foreign = format_reply(make_reply(other, bytes(range(32)), ()))
        assert host.stdin is not None
        host.stdin.write("hello there\n" + foreign + "\n")
        host.stdin.flush()
        joined = _join(tmp_path, code)
        out, err = host.communicate(timeout=60)
        assert joined.returncode == 0 and host.returncode == 0, err
        assert "that line is not a reply code" in err, err
        assert "that reply code was not made from this invite: ignored" in err, err
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate(timeout=20)


def test_a_host_name_that_begins_like_a_code_is_an_address(tmp_path: Path) -> None:
    r = subprocess.run(_cli("join", "bastion.invalid:7431", "--bot", "random"), env=_env(tmp_path / "jh"),
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "bastion.invalid" in r.stderr and "code" not in r.stderr, r.stderr


def test_an_invite_is_not_used_up_when_the_host_drops_the_joiner_before_any_game(tmp_path: Path) -> None:
    """A host (here a fake one) that takes the knock and closes: the seat was never taken, so the
    same code may be tried again, and the second try is not refused as a reuse."""
    import socket
    import threading

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from basilica_p2p.net.framing import CONTROL
    from basilica_p2p.net.gate import CHALLENGE_TAG
    from basilica_p2p.net.invite import Candidate, Invite, format_invite
    from basilica_p2p.wire import encode

    key = Ed25519PrivateKey.generate()
    public = key.public_key().public_bytes_raw()
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]

    def fake_host() -> None:
        while True:  # the joiner tries again until its --connect-timeout
            try:
                conn, _ = server.accept()
            except OSError:  # closed at the end of the test
                return
            nonce = os.urandom(32)
            body = encode({"t": "challenge", "key": public, "nonce": nonce, "sig": key.sign(CHALLENGE_TAG + nonce)})
            conn.sendall(len(body).__add__(1).to_bytes(4, "big") + bytes([CONTROL]) + body)
            conn.recv(4096)  # the knock
            conn.close()

    threading.Thread(target=fake_host, daemon=True).start()
    code = format_invite(Invite(public, os.urandom(16), 2**40, (Candidate("lan", "127.0.0.1", port),)))
    for attempt in range(2):
        r = _join(tmp_path, code, "jh", "--connect-timeout", "4")
        assert r.returncode == 1, r.stderr
        assert "used already" not in r.stderr, (attempt, r.stderr)
        # Never seated (the host closed before 'seated'), so the joiner never began a game.
        assert "closed" in r.stderr and "no hello" not in r.stderr, (attempt, r.stderr)
    server.close()


def test_the_invite_comes_at_once_and_a_fuller_one_follows_when_stun_answers(tmp_path: Path) -> None:
    """The STUN server here holds its answer until the first invite is out: the invite does not wait
    for the slow candidates, and the one that follows holds the same seat with the STUN-seen address."""
    import socket
    import threading

    from basilica_p2p.net.invite import parse_invite
    from test_stun import success

    release = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def answer_when_released() -> None:
        conn, _ = server.accept()
        held.append(conn)
        request = conn.recv(20)
        release.wait(60)
        conn.sendall(success(request[8:20], "203.0.113.7", 4242))

    threading.Thread(target=answer_when_released, daemon=True).start()
    stun = f"127.0.0.1:{server.getsockname()[1]}"
    host = subprocess.Popen(_cli("host", "--bind", "127.0.0.1", "--port", "0", "--stun", stun, "--port-mapping", "off",
                                 "--invite-ttl", "15", "--bot", "random"),
                            env=_env(tmp_path / "hh"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None
        invites = (line.split()[-1] for line in host.stdout if line.startswith("invite: basilica join "))
        first = parse_invite(next(invites), 0)
        assert [c.kind for c in first.candidates] == ["lan"], first
        release.set()  # only now does the STUN server answer
        second = parse_invite(next(invites, "no second invite"), 0)
        assert (second.key, second.secret, second.expires) == (first.key, first.secret, first.expires)
        assert second.candidates == (*first.candidates, Candidate("stun", "203.0.113.7", 4242)), second
    finally:
        host.kill()
        _, err = host.communicate(timeout=20)
        server.close()
    assert "STUN sees this host as 203.0.113.7:4242" in err, err


def test_what_the_host_could_not_find_is_one_line(tmp_path: Path) -> None:
    import socket

    closed = []
    for _ in range(2):  # two STUN servers that refuse the connection
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed.append(f"127.0.0.1:{s.getsockname()[1]}")
    host = subprocess.Popen(_cli("host", "--bind", "127.0.0.1", "--port", "0", "--stun", closed[0], "--stun", closed[1],
                                 "--port-mapping", "off", "--invite-ttl", "10", "--bot", "random"),
                            env=_env(tmp_path / "hh"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert host.stderr is not None
        from support.readiness import log_until

        said = log_until(host, "this network only")
    finally:
        host.kill()
        host.communicate(timeout=20)
    about_stun = [line for line in said if "STUN" in line]
    assert len(about_stun) == 1, said
    assert about_stun[0].startswith("the invite works on this network only: no STUN server answered ("), said
    assert closed[0] in about_stun[0] or closed[1] in about_stun[0], said
