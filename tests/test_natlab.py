"""The NAT lab (tests/support/natlab.py) behaves as a lab of home routers must: a cone router keeps the
player's port, a symmetric one does not, the home firewall keeps unsolicited connections out
(silently or with a RST), UPnP, NAT-PMP and PCP mappings let the other player in, and the lab
leaves nothing behind, even when interrupted.

It needs root and the packages in natlab.PACKAGES (`bash scripts/test --setup-only` installs them): without them these
tests fail, they are never skipped."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from support import natlab
from support.natlab import PACKAGES, Lab, LabError, Mapping, Router, missing_tools, namespaces, pids_in
from support.system_needs import missing_message

# One worker runs the lab's tests one after another: a router under two labs' load at once
# would test the machine, not the hole punching.
pytestmark = pytest.mark.xdist_group("natlab")

CONE, SYMMETRIC, RST, OPEN = 0, 1, 2, 3
ROUTERS = [Router("cone", "cone", upnp=True), Router("symmetric", "symmetric", upnp=True),
           Router("rst", "cone-rst"), Router("open", "open")]
DROPPED = 0.5  # seconds a probe waits for an answer that must not come (answers here take milliseconds)


def require_lab() -> None:
    """Fail the test, in one line naming what to install, if the lab cannot be built here."""
    if os.geteuid() != 0:
        pytest.fail("the NAT lab needs root (network namespaces, iptables)", pytrace=False)
    if missing := missing_tools():
        pytest.fail(missing_message(f"the NAT lab needs the Debian packages {' '.join(PACKAGES)}", missing),
                    pytrace=False)


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    require_lab()
    with Lab(ROUTERS) as built:
        yield built


def test_cone_router_keeps_the_players_port(lab: Lab) -> None:
    lab.serve_whoami(lab.internet, 8000, host=lab.server_ips[0])
    probe = lab.tcp_probe(lab.player(CONE), lab.server_ips[0], 8000, local_port=41000)
    assert probe.outcome == "connected"
    assert probe.local == (lab.player_ip(CONE), 41000)
    assert probe.seen == (lab.router_wan_ip(CONE), 41000)
    # endpoint-independent mapping: both STUN addresses see the one port the player used
    for proto in ("udp", "tcp"):
        seen = lab.stun(lab.player(CONE), lab.stun_addresses, proto=proto, local_port=41001)
        assert seen == [(lab.router_wan_ip(CONE), 41001)] * 2, proto


def test_symmetric_router_gives_each_destination_its_own_port(lab: Lab) -> None:
    for proto in ("udp", "tcp"):
        seen = lab.stun(lab.player(SYMMETRIC), lab.stun_addresses, proto=proto, local_port=41002)
        assert [ip for ip, _ in seen] == [lab.router_wan_ip(SYMMETRIC)] * 2, proto
        assert seen[0][1] != seen[1][1], f"{proto}: one external port for two destinations: {seen}"


def test_open_router_neither_translates_nor_filters(lab: Lab) -> None:
    assert lab.stun(lab.player(OPEN), local_port=41003) == [(lab.player_ip(OPEN), 41003)]
    lab.serve_whoami(lab.player(OPEN), 42000)
    probe = lab.tcp_probe(lab.player(CONE), lab.player_ip(OPEN), 42000, local_port=41004)
    assert (probe.outcome, probe.seen) == ("connected", (lab.router_wan_ip(CONE), 41004))
    assert lab.tcp_probe(lab.internet, lab.player_ip(OPEN), 42000).outcome == "connected"


def test_unsolicited_connections_from_the_internet_are_kept_out(lab: Lab) -> None:
    for i in (CONE, RST):
        lab.serve_whoami(lab.player(i), 42000)
        assert lab.tcp_probe(lab.player(i), "127.0.0.1", 42000).outcome == "connected"  # it does listen
    attempts = {  # what each attempt must meet; those that wait, wait together
        (lab.internet, lab.router_wan_ip(CONE)): {"timeout"},  # dropped without a word
        (lab.player(RST), lab.router_wan_ip(CONE)): {"timeout"},  # from behind another router too
        (lab.internet, lab.player_ip(CONE)): {"timeout"},  # private: lost on the way, no error
        (lab.internet, lab.router_wan_ip(RST)): {"refused"},  # the RST of the cone-rst firewall
    }
    with ThreadPoolExecutor(len(attempts)) as pool:
        outcomes = dict(zip(attempts, pool.map(
            lambda a: lab.tcp_probe(a[0], a[1], 42000, timeout=DROPPED).outcome, attempts)))
    assert all(outcomes[a] in attempts[a] for a in attempts), outcomes
    assert lab.mappings(CONE) == [] and lab.mappings(RST) == []


def upnpc(lab: Lab, i: int, *args: str) -> str:
    done = lab.run(lab.player(i), ["upnpc", "-u", lab.upnp_url(i), "-e", "natlab test", *args])
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_upnp_mapping_lets_the_other_player_in(lab: Lab) -> None:
    lab.serve_whoami(lab.player(CONE), 43000)
    out = upnpc(lab, CONE, "-a", lab.player_ip(CONE), "43000", "43000", "TCP")
    assert f"ExternalIPAddress = {lab.router_wan_ip(CONE)}" in out
    assert lab.mappings(CONE) == [Mapping("tcp", 43000, lab.player_ip(CONE), 43000)]
    assert "43000->" in upnpc(lab, CONE, "-l")  # miniupnpd lists it too
    probe = lab.tcp_probe(lab.player(RST), lab.router_wan_ip(CONE), 43000, local_port=41005)
    assert (probe.outcome, probe.seen) == ("connected", (lab.router_wan_ip(RST), 41005))
    upnpc(lab, CONE, "-d", "43000", "TCP")
    assert lab.mappings(CONE) == []
    assert lab.tcp_probe(lab.player(RST), lab.router_wan_ip(CONE), 43000, timeout=DROPPED).outcome == "timeout"


def test_upnp_discovery_finds_the_router(lab: Lab) -> None:
    # SSDP multicast on the LAN, as a client without the URL finds the router (upnpc waits 2 s)
    done = lab.run(lab.player(SYMMETRIC), ["upnpc", "-s"])
    assert f"desc: {lab.upnp_url(SYMMETRIC)}" in done.stdout, done.stdout + done.stderr
    assert f"ExternalIPAddress = {lab.router_wan_ip(SYMMETRIC)}" in done.stdout


def test_a_nat_pmp_mapping_on_a_symmetric_router_lets_the_other_player_in(lab: Lab) -> None:
    lab.serve_whoami(lab.player(SYMMETRIC), 44000)
    done = lab.run(lab.player(SYMMETRIC), ["natpmpc", "-g", lab.gateway_ip(SYMMETRIC), "-a", "44001", "44000", "tcp", "60"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"Public IP address : {lab.router_wan_ip(SYMMETRIC)}" in done.stdout
    assert "Mapped public port 44001 protocol TCP to local port 44000" in done.stdout
    assert Mapping("tcp", 44001, lab.player_ip(SYMMETRIC), 44000) in lab.mappings(SYMMETRIC)
    probe = lab.tcp_probe(lab.player(CONE), lab.router_wan_ip(SYMMETRIC), 44001, local_port=41006)
    assert (probe.outcome, probe.seen) == ("connected", (lab.router_wan_ip(CONE), 41006))
    done = lab.run(lab.player(SYMMETRIC), ["natpmpc", "-g", lab.gateway_ip(SYMMETRIC), "-a", "44001", "44000", "tcp", "0"])
    assert done.returncode == 0 and Mapping("tcp", 44001, lab.player_ip(SYMMETRIC), 44000) not in lab.mappings(SYMMETRIC)


def test_a_pcp_mapping_lets_the_other_player_in_over_udp(lab: Lab) -> None:
    lab.serve_whoami(lab.player(SYMMETRIC), 45000)
    assert lab.pcp_map(SYMMETRIC, 45000, proto="udp", external_port=45001) == (lab.router_wan_ip(SYMMETRIC), 45001)
    assert Mapping("udp", 45001, lab.player_ip(SYMMETRIC), 45000) in lab.mappings(SYMMETRIC)
    # the whoami server answers a datagram with its source: STUN's job, done by hand
    wan = lab.router_wan_ip(SYMMETRIC)
    script = ("import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3); "
              f"s.bind(('0.0.0.0', 41007)); s.sendto(b'?', ('{wan}', 45001)); print(s.recv(100).decode())")
    done = lab.run(lab.player(CONE), lab.python(lab.player(CONE), ["-c", script]))
    assert done.stdout.split() == [lab.router_wan_ip(CONE), "41007"], done.stderr
    lab.pcp_map(SYMMETRIC, 45000, proto="udp", lifetime=0)
    assert Mapping("udp", 45001, lab.player_ip(SYMMETRIC), 45000) not in lab.mappings(SYMMETRIC)


def gone(pid: int) -> bool:
    """No such process, or only a zombie left for its parent to reap."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_teardown_after_an_interrupt_leaves_nothing_behind(lab: Lab) -> None:
    small = Lab([Router("a", "cone", upnp=True)])
    names = small.all_namespaces()
    strays: list[subprocess.Popen[bytes]] = []
    try:
        with pytest.raises(KeyboardInterrupt), small:
            logs, daemons = small.logs, [p.pid for p in small.daemons.values()]
            assert len(daemons) == 2 and set(names) <= set(namespaces())
            # one process the lab starts, one it knows nothing of
            served = small.serve_whoami(small.player(0), 46000).pid
            strays.append(subprocess.Popen(["ip", "netns", "exec", small.player(0), "sleep", "300"]))
            raise KeyboardInterrupt
        assert strays[0].poll() is not None, "a process in the lab outlived it"
    finally:
        for stray in strays:
            stray.kill()
            stray.wait()
    assert not set(names) & set(namespaces())
    assert all(gone(pid) for pid in [*daemons, served])
    assert logs is not None and not logs.exists()
    assert set(lab.all_namespaces()) <= set(namespaces())  # the other lab still stands


class BrokenLab(Lab):
    """Interrupted while it builds, once miniupnpd runs."""

    def _start_miniupnpd(self, i: int) -> None:
        super()._start_miniupnpd(i)
        self.started = self.daemons[f"miniupnpd-{i}"].pid
        raise KeyboardInterrupt


def test_an_interrupted_build_is_torn_down() -> None:
    require_lab()
    broken = BrokenLab([Router("a", "symmetric", upnp=True)], stun=False)
    with pytest.raises(KeyboardInterrupt):
        broken.__enter__()
    assert gone(broken.started)
    assert not set(broken.all_namespaces()) & set(namespaces())


def test_a_dead_runs_leftovers_are_removed(lab: Lab) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    ns = f"natlab-{dead.pid}-0-inet"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    stray = subprocess.Popen(["ip", "netns", "exec", ns, "sleep", "300"])
    folder = Path(tempfile.mkdtemp(prefix=f"natlab-{dead.pid}-0-"))
    try:
        with Lab([Router("a", "cone")], stun=False) as small:
            assert ns not in namespaces() and not folder.exists()
            assert stray.poll() is not None, "a process in the leftover namespace outlived it"
            assert set(lab.all_namespaces()) <= set(namespaces())  # a live run's lab is left alone
            assert pids_in(small.player(0)) == []
    finally:
        stray.kill()
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def test_what_the_lab_refuses() -> None:
    with pytest.raises(ValueError):
        Router("x", "full-cone")
    with pytest.raises(ValueError):
        Router("x", "open", upnp=True)
    with pytest.raises(ValueError):
        Lab([Router("x"), Router("x")])


def test_a_missing_package_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    require_lab()
    real = natlab.shutil.which
    monkeypatch.setattr(natlab.shutil, "which", lambda name: None if name == "miniupnpd" else real(name))
    small = Lab([Router("a", "cone", upnp=True)])
    with pytest.raises(LabError, match="miniupnpd-iptables"):
        small.__enter__()
    assert not set(small.all_namespaces()) & set(namespaces())
