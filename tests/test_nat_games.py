"""Whole games through home routers built from network namespaces (issue 11; tests/support/natlab.py).

Each test runs the real commands, `basilica host` and `basilica join bas1:...`, in two player
namespaces behind two routers, and checks what a person would: the path named on both sides,
the game played, both replays verified, nothing left mapped on the router, and a diagnosis a
person can act on when no path exists.
"""

from __future__ import annotations

import os
import signal
import threading
import subprocess
import time
from collections.abc import Iterator
from typing import IO
from pathlib import Path

import pytest

from basilica_p2p.net.invite import parse_invite
from basilica_p2p.replay.verify import verify_file
from support.natlab import Lab, Router
from support.wormhole_servers import RELAY_PORT, WormholeServers

# One worker runs the lab's tests one after another: a router under two labs' load at once
# would test the machine, not the hole punching.
pytestmark = pytest.mark.xdist_group("natlab")

TESTS = Path(__file__).resolve().parent
HOST_PORT = 7431


def _env(home: Path) -> dict[str, str]:
    return dict(os.environ, BASILICA_HOME=str(home), PYTHONPATH=str(TESTS), LOGNAME="carol")


class Side:
    """One basilica process in a player namespace; a thread per output stream collects its lines."""

    def __init__(self, lab: Lab, i: int, args: list[str], home: Path) -> None:
        ns = lab.player(i)
        self.proc = lab.popen(ns, lab.python(ns, ["-m", "basilica_p2p.cli", *args]), env=_env(home),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [threading.Thread(target=self._collect, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err))]
        for t in self._readers:
            t.start()

    @staticmethod
    def _collect(stream: IO[str] | None, lines: list[str]) -> None:
        assert stream is not None
        for line in stream:
            lines.append(line.rstrip("\n"))

    def wait_for(self, prefix: str, timeout: float = 30.0, nth: int = 1) -> str:
        """The ``nth`` stdout line starting with ``prefix``, as soon as it is printed (up to ``timeout``)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = [line for line in list(self.out) if line.startswith(prefix)]
            if len(found) >= nth:
                return found[nth - 1]
            if self.proc.poll() is not None and not any(t.is_alive() for t in self._readers):
                break
            time.sleep(0.05)
        raise AssertionError(f"no line {prefix!r} within {timeout} s; out {self.out}, err {self.err}")

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def finish(self, timeout: float = 90.0) -> tuple[int, str]:
        """Wait for the end (stdin closed, as at the end of a person's input); status and stderr."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        self.proc.wait(timeout=timeout)
        for t in self._readers:
            t.join(timeout=10)
        return self.proc.returncode, "\n".join(self.err)


def _host(lab: Lab, tmp: Path, *extra: str, i: int = 0, home: str = "hh") -> tuple[Side, str]:
    side = Side(lab, i, ["host", "--bot", "random", "--port", str(HOST_PORT), "--replay-dir", str(tmp / "a"),
                         "--invite-ttl", "90", *lab.stun_options(), *extra], tmp / home)
    # The first invite (printed at once) holds the LAN address; the second adds what STUN and the
    # router gave, which a joiner behind another router needs.
    return side, side.wait_for("invite: basilica join ", nth=2).split()[-1]


def _join(lab: Lab, tmp: Path, code: str, *extra: str, i: int = 1) -> Side:
    return Side(lab, i, ["join", code, "--bot", "random", "--replay-dir", str(tmp / "b"), *lab.stun_options(), *extra],
                tmp / "jh")


def _played(tmp: Path, host: Side, join: Side) -> tuple[str, str]:
    """Both sides finished with status 0 and both replays verify; their stderr."""
    jcode, jerr = join.finish()
    hcode, herr = host.finish()
    if (hcode, jcode) != (0, 0):  # the whole of both sides' output: a cut repr hides the cause
        pytest.fail(f"host exit {hcode}, joiner exit {jcode}\n--- host stderr:\n{herr}\n--- joiner stderr:\n{jerr}",
                    pytrace=False)
    for folder in ("a", "b"):
        (replay,) = (tmp / folder).glob("*.replay")
        assert verify_file(replay).ok, replay
    assert "Traceback" not in herr + jerr
    return herr, jerr


@pytest.fixture(scope="module")
def mapped_lab() -> Iterator[Lab]:
    """The host behind a home router that maps ports (UPnP-IGD, NAT-PMP, PCP), the joiner behind another."""
    with Lab([Router("home", "cone", upnp=True), Router("away", "cone")]) as lab:
        yield lab


@pytest.fixture(scope="module")
def symmetric_lab() -> Iterator[Lab]:
    with Lab([Router("home", "symmetric"), Router("away", "cone")]) as lab:
        yield lab


@pytest.mark.parametrize("protocol,said", [("pcp", "PCP"), ("natpmp", "NAT-PMP"), ("upnp", "UPnP")])
def test_a_port_mapped_on_the_hosts_router_lets_the_joiner_in(mapped_lab: Lab, tmp_path: Path, protocol: str,
                                                             said: str) -> None:
    host, code = _host(mapped_lab, tmp_path, "--port-mapping", protocol)
    invite = parse_invite(code, 0)
    assert any(c.kind == protocol and c.host == mapped_lab.router_wan_ip(0) for c in invite.candidates), invite
    assert mapped_lab.mappings(0), "the router holds the mapping while the host waits"
    join = _join(mapped_lab, tmp_path, code)
    herr, jerr = _played(tmp_path, host, join)
    assert f"connected: port mapped by {said} on the router" in jerr, jerr
    assert f"  not used: {mapped_lab.player_ip(0)}:{HOST_PORT}: " in jerr, jerr  # the host's LAN address
    assert f"connected: port mapped by {said} on the router" in herr, herr
    assert mapped_lab.mappings(0) == [], "the host removes its mapping when it exits"


@pytest.fixture(scope="module")
def reset_lab() -> Iterator[Lab]:
    """Two home routers whose firewalls answer a stray SYN with a reset (which also ends the mapping)."""
    with Lab([Router("home", "cone-rst"), Router("away", "cone-rst")]) as lab:
        yield lab


@pytest.mark.parametrize("which", ["mapped_lab", "reset_lab"])
def test_two_cone_routers_without_port_mapping_punch_a_hole(which: str, request: pytest.FixtureRequest,
                                                            tmp_path: Path) -> None:
    """Cone routers that drop a stray SYN, and ones that reset it (tight retries are needed there)."""
    lab: Lab = request.getfixturevalue(which)
    host, code = _host(lab, tmp_path, "--port-mapping", "off")
    join = _join(lab, tmp_path, code)
    reply = join.wait_for("reply: bas1r:", timeout=40)
    host.send(reply.split()[-1])
    herr, jerr = _played(tmp_path, host, join)
    assert "connected: hole punched" in jerr, jerr
    assert "connected: hole punched" in herr, herr


def test_a_host_behind_a_symmetric_router_gets_a_diagnosis_and_nothing_stays_mapped(symmetric_lab: Lab,
                                                                                    tmp_path: Path) -> None:
    host, code = _host(symmetric_lab, tmp_path, "--invite-ttl", "18")
    join = _join(symmetric_lab, tmp_path, code, "--connect-timeout", "10")
    reply = join.wait_for("reply: bas1r:", timeout=40)
    host.send(reply.split()[-1])
    jcode, jerr = join.finish()
    assert jcode == 1, jerr
    last = jerr.strip().splitlines()[-1]
    assert last.startswith("error: no way to the host worked: the host's router changes ports per destination "
                           "(symmetric NAT)"), jerr
    hcode, herr = host.finish()
    assert hcode == 1, herr
    assert "this router changes ports per destination (symmetric NAT)" in herr, herr
    assert herr.strip().splitlines()[-1] == ("error: the invite expired and nobody took the seat; start the host "
                                             "again for a new invite"), herr
    assert symmetric_lab.run(symmetric_lab.router(0), ["iptables-legacy", "-t", "nat", "-S"]).stdout.count(
        "DNAT") == 0


def test_scanners_garbage_and_a_flood_on_the_mapped_port_do_not_keep_the_joiner_out(mapped_lab: Lab,
                                                                                     tmp_path: Path) -> None:
    host, code = _host(mapped_lab, tmp_path, "--port-mapping", "upnp")
    (mapped,) = [c for c in parse_invite(code, 0).candidates if c.kind == "upnp"]
    script = (
        "import socket, time\n"
        f"target = ({mapped.host!r}, {mapped.port})\n"
        "held = []\n"
        "for i in range(5):\n"
        "    s = socket.create_connection(target, timeout=5); s.sendall(b'GET / HTTP/1.0\\r\\n\\r\\n'); s.close()\n"
        "for i in range(60):\n"  # half-open handshakes: connect and stay silent
        "    held.append(socket.create_connection(target, timeout=5))\n"
        "print('flooding', flush=True)\n"
        "time.sleep(60)\n"
    )
    flood = mapped_lab.popen(mapped_lab.internet, mapped_lab.python(mapped_lab.internet, ["-c", script]),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert flood.stdout is not None and flood.stdout.readline().strip() == "flooding"
    join = _join(mapped_lab, tmp_path, code)
    herr, jerr = _played(tmp_path, host, join)
    flood.kill()
    assert "connected: port mapped by UPnP on the router" in jerr, jerr
    assert "failed the invite handshake" in herr, herr
    assert "closed unheard" in herr or "did not knock and sit within" in herr, herr


def test_a_man_in_the_middle_with_another_key_is_refused(mapped_lab: Lab, tmp_path: Path) -> None:
    """The invite's host goes away and another key answers at its addresses: the joiner refuses it."""
    first, code = _host(mapped_lab, tmp_path, "--port-mapping", "upnp")
    first.proc.send_signal(signal.SIGINT)  # as a person's Ctrl-C: the host removes its mapping
    first.finish()
    impostor, _ = _host(mapped_lab, tmp_path, "--port-mapping", "upnp", home="mallory")
    join = _join(mapped_lab, tmp_path, code, "--connect-timeout", "8")
    jcode, jerr = join.finish()
    impostor.proc.send_signal(signal.SIGINT)
    impostor.finish()
    assert jcode == 1, jerr
    assert "a possible man in the middle" in jerr.strip().splitlines()[-1], jerr
    assert not list((tmp_path / "b").glob("*.replay"))


# --- issue 12: a code read aloud, and a relay when no direct way exists ---------------------------

@pytest.fixture(scope="module")
def symmetric_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, WormholeServers]]:
    with Lab([Router("home", "symmetric"), Router("away", "symmetric")]) as lab:
        yield lab, WormholeServers(lab, tmp_path_factory.mktemp("wh"))


@pytest.fixture(scope="module")
def cone_pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, WormholeServers]]:
    with Lab([Router("home", "cone"), Router("away", "cone")]) as lab:
        yield lab, WormholeServers(lab, tmp_path_factory.mktemp("wh"))


def _code_sides(lab: Lab, where: list[str], tmp: Path, bot: str = "random") -> tuple[Side, Side]:
    host = Side(lab, 0, ["host", "--code", "--bot", bot, "--port", str(HOST_PORT), "--replay-dir",
                         str(tmp / "a"), "--port-mapping", "off", *lab.stun_options(), *where], tmp / "hh")
    code = host.wait_for("code: basilica join --code ").split()[-1]
    join = Side(lab, 1, ["join", "--code", code, "--bot", bot, "--replay-dir", str(tmp / "b"), *lab.stun_options(),
                         *where], tmp / "jh")
    return host, join


def _code_game(lab: Lab, where: list[str], tmp: Path) -> tuple[str, str]:
    return _played(tmp, *_code_sides(lab, where, tmp))


def test_a_code_between_two_symmetric_routers_plays_through_the_relay(symmetric_pair: tuple[Lab, WormholeServers],
                                                                     tmp_path: Path) -> None:
    lab, servers = symmetric_pair
    herr, jerr = _code_game(lab, servers.where, tmp_path)
    relay = f"{lab.server_ips[0]}:{RELAY_PORT}"
    assert f"connected: relayed by {relay}; staying on it for this game" in jerr, jerr
    assert "connected: relayed by" in herr, herr


def test_a_code_between_two_cone_routers_connects_directly_without_the_relay(cone_pair: tuple[Lab, WormholeServers],
                                                                            tmp_path: Path) -> None:
    lab, servers = cone_pair
    herr, jerr = _code_game(lab, servers.where, tmp_path)
    assert "connected: hole punched" in jerr and "relayed" not in jerr, jerr
    assert "meeting the other side on the relay" not in jerr + herr


def _least_held(tmp: Path) -> int:
    """Bytes in the shorter of the two replays (0 while one is missing)."""
    sizes = [p.stat().st_size for f in ("a", "b") for p in (tmp / f).glob("*.replay")]
    return min(sizes) if len(sizes) == 2 else 0


def test_a_relay_that_drops_mid_game_is_met_again_on_it_by_both_sides(symmetric_pair: tuple[Lab, WormholeServers],
                                                                    tmp_path: Path) -> None:
    """Issue 20: a relay that dies is a network that failed, not a player who left: both sides
    stay, meet again on the relay under the key they kept, prove who they are, and finish."""
    lab, servers = symmetric_pair
    host, join = _code_sides(lab, servers.where, tmp_path, bot="support.slow_bot:SlowRandom")
    end = time.monotonic() + 60
    while _least_held(tmp_path) < 50_000:  # past the deal (about 25 KiB of it), into the moves
        assert time.monotonic() < end and host.proc.poll() is None, (host.err, join.err)
        time.sleep(0.2)
    assert any("connected: relayed by" in line for line in join.err), join.err
    servers.restart_relay()
    hcode, herr = host.finish(timeout=180)
    jcode, jerr = join.finish(timeout=180)
    if (hcode, jcode) != (0, 0):  # the whole of both sides' output: a cut repr hides the cause
        pytest.fail(f"host exit {hcode}, joiner exit {jcode}\n--- host stderr:\n{herr}\n--- joiner stderr:\n{jerr}",
                    pytrace=False)
    assert "has gone" in herr + jerr and "is back" in herr and "is back" in jerr, (herr, jerr)
    (a,), (b,) = (tmp_path / "a").glob("*.replay"), (tmp_path / "b").glob("*.replay")
    for replay in (a, b):
        assert verify_file(replay).ok, replay
    assert a.read_bytes() == b.read_bytes()


def test_no_relay_between_two_symmetric_routers_is_direct_play_or_nothing(symmetric_pair: tuple[Lab, WormholeServers],
                                                                          tmp_path: Path) -> None:
    lab, servers = symmetric_pair
    host = Side(lab, 0, ["host", "--code", "--no-relay", "--bot", "random", "--port", str(HOST_PORT),
                         "--invite-ttl", "15", "--replay-dir", str(tmp_path / "a"), "--port-mapping", "off",
                         *lab.stun_options(), *servers.where], tmp_path / "hh")
    code = host.wait_for("code: basilica join --code ").split()[-1]
    join = Side(lab, 1, ["join", "--code", code, "--no-relay", "--connect-timeout", "8", "--bot", "random",
                         *lab.stun_options(), *servers.where], tmp_path / "jh")
    jcode, jerr = join.finish()
    hcode, herr = host.finish()
    assert (jcode, hcode) == (1, 1), (jerr, herr)
    assert "both routers change ports per destination (symmetric NAT)" in jerr.strip().splitlines()[-1], jerr
    assert "meeting the other side on the relay" not in jerr + herr, (jerr, herr)  # never tried
    assert not list(tmp_path.glob("*/*.replay"))


def test_a_wrong_code_across_routers_fails_on_both_sides_and_no_game_starts(cone_pair: tuple[Lab, WormholeServers],
                                                                            tmp_path: Path) -> None:
    lab, servers = cone_pair
    host = Side(lab, 0, ["host", "--code", "--bot", "random", "--port", str(HOST_PORT), "--replay-dir",
                         str(tmp_path / "a"), "--port-mapping", "off", *lab.stun_options(), *servers.where],
                tmp_path / "hh")
    nameplate, *words = host.wait_for("code: basilica join --code ").split()[-1].split("-")
    wrong = "-".join([nameplate, *("zulu" if w != "zulu" else "yucatan" for w in words)])
    join = Side(lab, 1, ["join", "--code", wrong, "--bot", "random", "--replay-dir", str(tmp_path / "b"),
                         *lab.stun_options(), *servers.where], tmp_path / "jh")
    jcode, jerr = join.finish()
    hcode, herr = host.finish()
    assert (jcode, hcode) == (1, 1), (jerr, herr)
    for text in (jerr, herr):
        assert "the code is wrong, or someone else tried it" in text.strip().splitlines()[-1], text
    assert not list(tmp_path.glob("*/*.replay"))


def test_a_mailbox_that_is_down_is_one_line_on_both_sides(cone_pair: tuple[Lab, WormholeServers],
                                                         tmp_path: Path) -> None:
    lab, _ = cone_pair
    nowhere = ["--mailbox", f"ws://{lab.server_ips[1]}:4999/v1"]
    host = Side(lab, 0, ["host", "--code", "--bot", "random", "--port", str(HOST_PORT), "--port-mapping", "off",
                         "--no-stun", "--invite-ttl", "10", *nowhere], tmp_path / "hh")
    join = Side(lab, 1, ["join", "--code", "7-crossover-clockwork", "--bot", "random", "--no-stun", *nowhere],
                tmp_path / "jh")
    code, err = join.finish()
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: the code: ") and f"{lab.server_ips[1]}:4999" in last, err
    assert "ask the host for its invite line" in last, err
    # The host has no code, but keeps waiting with the invite it printed until that expires.
    code, err = host.finish()
    assert code == 1, err
    (said,) = [line for line in err.splitlines() if line.startswith("no code: ")]
    assert f"{lab.server_ips[1]}:4999" in said and "the invite above still works" in said, err
    assert err.strip().splitlines()[-1].startswith("error: the invite expired"), err
    assert "Traceback" not in err
