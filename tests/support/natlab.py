"""A lab of home routers built from Linux network namespaces, for tests that play real games
through NATs.  See docs/natlab.md for the picture; in short::

    with Lab([Router("alice", "cone", upnp=True), Router("bob", "symmetric")]) as lab:
        lab.run(lab.player(0), ["upnpc", "-a", lab.player_ip(0), "4000", "4000", "TCP"])
        game = lab.popen(lab.player(1), lab.python(lab.player(1), ["-m", "basilica_p2p.cli", ...]))

Topology: one namespace is the fake internet, a bridge ``br0`` holding the server addresses
11.0.0.1 and 11.0.0.2 (coturn: STUN and TURN on 3478, UDP and TCP) and each router's WAN side
11.0.0.(10+i).  Router i is a namespace with interfaces ``wan`` and ``lan``; its player is a
namespace with ``eth0`` at 192.168.(10+i).2 (11.0.(10+i).2 behind an "open" router, which
routes a public prefix without NAT or firewall).  Private prefixes are unroutable on the fake
internet (routed to a next hop that does not exist), as on the real one.

Router kinds (iptables-legacy in the router's namespace):

- ``cone``: MASQUERADE, which keeps the player's source port (endpoint-independent mapping),
  behind a home firewall that lets in only ESTABLISHED,RELATED traffic (and what miniupnpd
  opens) and silently drops the rest;
- ``symmetric``: MASQUERADE --random-fully, a new external port for every destination;
- ``cone-rst``: as ``cone``, but the firewall answers unsolicited TCP with a RST;
- ``open``: no NAT, no firewall: the player has a public address.

``upnp=True`` runs miniupnpd (UPnP-IGD, NAT-PMP and PCP) on the router, in the foreground, as
a child of this process.

Everything is torn down on exit (the processes in every namespace of the lab, then the
namespaces, and with them their interfaces), also after a failure or a KeyboardInterrupt,
including one during the build.  Namespace names carry the pid of the process that built them
(``natlab-<pid>-<n>-...``); a new Lab first removes the leftovers of processes that are dead.

The lab needs root and the Debian packages in ``PACKAGES`` (``bash scripts/test --setup-only``
installs them); it raises ``LabError`` naming what is missing, it never installs anything.  Readiness is always
polled (a log line, a STUN answer), never waited for with a fixed sleep.

This file is also the small probe tool run inside the namespaces (standard library only):
``python natlab.py stun|connect|pcp|whoami ...``; the Lab methods ``stun``, ``tcp_probe``,
``pcp_map`` and ``serve_whoami`` wrap it.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import re
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

KINDS = ("cone", "symmetric", "cone-rst", "open")
PACKAGES = ("iproute2", "iptables", "conntrack", "coturn", "miniupnpd-iptables", "miniupnpc", "natpmpc")
# command -> Debian package that provides it
TOOLS = {
    "ip": "iproute2", "iptables-legacy": "iptables", "iptables-legacy-restore": "iptables",
    "conntrack": "conntrack", "turnserver": "coturn", "turnutils_stunclient": "coturn",
    "miniupnpd": "miniupnpd-iptables", "upnpc": "miniupnpc", "natpmpc": "natpmpc",
}
STUN_PORT = 3478
UPNP_HTTP_PORT = 5000
NATPMP_PORT = 5351
TURN_USER = ("natlab", "natlab")  # long-term credentials of coturn's one user
TURN_REALM = "natlab"
INTERNET_PREFIX = "11.0.0"  # unreserved on purpose: miniupnpd refuses a reserved WAN address
SERVER_IPS = ("11.0.0.1", "11.0.0.2")
NOWHERE = "11.0.0.254"  # the next hop, which does not exist, of the private prefixes
PRIVATE_PREFIXES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
STALE = re.compile(r"natlab-(\d+)-")
HERE = Path(__file__).resolve()

_counter = itertools.count()


class LabError(RuntimeError):
    """The lab could not be built (missing tools, not root, a daemon that did not come up)."""


@dataclass(frozen=True)
class Router:
    """One home router: ``kind`` is one of KINDS; ``upnp`` runs miniupnpd on it."""

    name: str
    kind: str = "cone"
    upnp: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"router {self.name!r}: kind {self.kind!r} is not one of {', '.join(KINDS)}")
        if self.upnp and self.kind == "open":
            raise ValueError(f"router {self.name!r}: an open router has no NAT for UPnP to map")


@dataclass(frozen=True)
class Mapping:
    """A port mapping miniupnpd installed: ``remote_host`` is None when any host may use it."""

    protocol: str  # "tcp" or "udp"
    external_port: int
    internal_ip: str
    internal_port: int
    remote_host: str | None = None


@dataclass(frozen=True)
class Probe:
    """What a TCP connection attempt met: ``outcome`` is connected, refused, timeout or unreachable;
    ``seen`` is the address a whoami server saw (None from another server); ``local`` the address
    the connecting side used."""

    outcome: str
    local: tuple[str, int] | None = None
    seen: tuple[str, int] | None = None


def missing_tools() -> list[str]:
    """The Debian packages the lab needs that are not installed here (by the commands they give)."""
    return sorted({pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None})


def namespaces() -> list[str]:
    """The names of the network namespaces ``ip netns`` knows."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def pids_in(ns: str) -> list[int]:
    """The processes (not zombies) whose network namespace is ``ns``."""
    try:
        target = os.stat(f"/run/netns/{ns}")
    except FileNotFoundError:
        return []
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            st = os.stat(f"/proc/{entry.name}/ns/net")
        except OSError:
            continue  # gone, or a zombie (its namespaces are released)
        if (st.st_ino, st.st_dev) == (target.st_ino, target.st_dev):
            found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_all_in(names: Sequence[str], grace: float = 2.0) -> None:
    """SIGTERM every process in the namespaces ``names``, then SIGKILL those left after ``grace``
    (and give up on any a SIGKILL has not ended 5 s later: stuck in the kernel)."""
    deadline, sig = time.monotonic() + grace, signal.SIGTERM
    while time.monotonic() < deadline + 5:
        pids = [pid for ns in names for pid in pids_in(ns) if pid != os.getpid()]
        if not pids:
            return
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        if time.monotonic() > deadline:
            sig = signal.SIGKILL
        time.sleep(0.02)


def _delete_namespaces(names: Sequence[str]) -> None:
    _kill_all_in(names)
    for ns in names:
        subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def clean_stale() -> list[str]:
    """Remove the namespaces and temporary folders left by labs whose process is dead; return the
    namespaces removed."""
    stale = [ns for ns in namespaces() if (m := STALE.match(ns)) and not _alive(int(m.group(1)))]
    _delete_namespaces(stale)
    for folder in Path(tempfile.gettempdir()).glob("natlab-*"):
        m = STALE.match(folder.name)
        if m and not _alive(int(m.group(1))):
            shutil.rmtree(folder, ignore_errors=True)
    return stale


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold a Ctrl-C back while the lab is torn down (so the teardown finishes), then raise it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if pending:
        raise KeyboardInterrupt


class Lab:
    """A fake internet, one home router and one player per ``Router``, and a STUN/TURN server.

    A context manager: built by ``__enter__``, torn down by ``__exit__`` (or ``close``).  Routers
    are named by index or by ``Router.name`` wherever an ``i`` is taken."""

    def __init__(self, routers: Sequence[Router], stun: bool = True, name_prefix: str | None = None,
                 ready_timeout: float = 20.0) -> None:
        if not routers:
            raise ValueError("a lab needs at least one router")
        if len(routers) > 200:
            raise ValueError("at most 200 routers")
        names = [r.name for r in routers]
        if len(set(names)) != len(names):
            raise ValueError(f"router names must differ: {names}")
        self.routers = list(routers)
        self.with_stun = stun
        self.prefix = name_prefix or f"natlab-{os.getpid()}-{next(_counter)}"
        self.ready_timeout = ready_timeout
        self.internet = f"{self.prefix}-inet"
        self.server_ips = SERVER_IPS
        self.stun_address = (SERVER_IPS[0], STUN_PORT)
        self.stun_addresses = [(ip, STUN_PORT) for ip in SERVER_IPS]  # two addresses, one server
        self.turn_user = TURN_USER
        self.turn_realm = TURN_REALM
        self.daemons: dict[str, subprocess.Popen[bytes]] = {}  # "turnserver", "miniupnpd-<i>"
        self.logs: Path | None = None  # a folder with the daemons' logs, removed at teardown
        self._created: list[str] = []
        self._procs: list[subprocess.Popen[Any]] = []
        self._open = False
        self._pcp_nonces: dict[tuple[int, str, int], str] = {}

    # ----- names and addresses -----

    def index(self, i: int | str) -> int:
        if isinstance(i, str):
            for n, r in enumerate(self.routers):
                if r.name == i:
                    return n
            raise KeyError(f"no router named {i!r}")
        if not 0 <= i < len(self.routers):
            raise IndexError(f"no router {i} (the lab has {len(self.routers)})")
        return i

    def router(self, i: int | str) -> str:
        """The namespace of router ``i`` (interfaces ``wan`` and ``lan``)."""
        return f"{self.prefix}-r{self.index(i)}"

    def player(self, i: int | str) -> str:
        """The namespace of the player behind router ``i`` (interface ``eth0``)."""
        return f"{self.prefix}-p{self.index(i)}"

    def lan_prefix(self, i: int | str) -> str:
        n = self.index(i)
        return f"11.0.{10 + n}" if self.routers[n].kind == "open" else f"192.168.{10 + n}"

    def player_ip(self, i: int | str) -> str:
        return f"{self.lan_prefix(i)}.2"

    def gateway_ip(self, i: int | str) -> str:
        """Router ``i``'s LAN address: the player's gateway, and where miniupnpd listens."""
        return f"{self.lan_prefix(i)}.1"

    def router_wan_ip(self, i: int | str) -> str:
        return f"{INTERNET_PREFIX}.{10 + self.index(i)}"

    def upnp_url(self, i: int | str) -> str:
        """miniupnpd's root description on router ``i`` (``upnpc -u URL`` skips the 2 s discovery)."""
        return f"http://{self.gateway_ip(i)}:{UPNP_HTTP_PORT}/rootDesc.xml"

    def stun_options(self) -> list[str]:
        """The options that point basilica's host and join at the lab's STUN server (both addresses)."""
        return [w for host, port in self.stun_addresses for w in ("--stun", f"{host}:{port}")]

    def all_namespaces(self) -> list[str]:
        return [self.internet] + [ns for i in range(len(self.routers)) for ns in (self.router(i), self.player(i))]

    # ----- running things inside -----

    @staticmethod
    def _in(ns: str, argv: Sequence[str]) -> list[str]:
        argv = [str(a) for a in argv]
        return argv if argv[:4] == ["ip", "netns", "exec", ns] else ["ip", "netns", "exec", ns, *argv]

    def run(self, ns: str, argv: Sequence[str], **kw: Any) -> subprocess.CompletedProcess[Any]:
        """``argv`` run in ``ns`` to its end: subprocess.run, with output captured as text and a
        60 s timeout unless ``kw`` says otherwise (``check`` is False unless given)."""
        kw = {"capture_output": True, "text": True, "timeout": 60, **kw}
        return subprocess.run(self._in(ns, argv), **kw)

    def popen(self, ns: str, argv: Sequence[str], **kw: Any) -> subprocess.Popen[Any]:
        """``argv`` started in ``ns``, in a session of its own; the lab kills it at teardown."""
        kw["start_new_session"] = True  # so the teardown can kill its whole process group
        proc = subprocess.Popen(self._in(ns, argv), **kw)
        self._procs.append(proc)
        return proc

    def python(self, ns: str, args: Sequence[str]) -> list[str]:
        """The argv running this interpreter (the repository's venv) in ``ns`` with ``args``;
        ``run`` and ``popen`` take it as it is."""
        return ["ip", "netns", "exec", ns, sys.executable, *map(str, args)]

    def _sh(self, ns: str, argv: Sequence[str], stdin: str | None = None) -> str:
        done = subprocess.run(self._in(ns, argv) if ns else list(argv), input=stdin,
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise LabError(f"{' '.join(argv)} in {ns or 'the root namespace'} failed "
                           f"({done.returncode}): {done.stderr.strip()}")
        return done.stdout

    def _ip(self, ns: str, *lines: str) -> None:
        """``ip`` commands in ``ns``, in one batch."""
        done = subprocess.run(["ip", "-n", ns, "-batch", "-"], input="\n".join(lines) + "\n",
                              capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise LabError(f"ip -n {ns} failed: {done.stderr.strip()}")

    # ----- what the routers do -----

    def mappings(self, i: int | str) -> list[Mapping]:
        """The port mappings miniupnpd has installed on router ``i`` right now (UPnP, NAT-PMP and
        PCP alike), read from its iptables chains; [] on a router without miniupnpd."""
        n = self.index(i)
        if not self.routers[n].upnp:
            return []
        for _ in range(50):
            # miniupnpd's DNAT rules use a target revision iptables 1.8.9 prints as "[unsupported
            # revision]", without their destination: it is read from the filter rule that
            # miniupnpd adds with each, in the same order.
            nat, accept = (self._miniupnpd_rules(n, table) for table in ("nat", "filter"))
            if len(nat) == len(accept) and all(a["-p"] == b["-p"] and a.get("-s") == b.get("-s")
                                               for a, b in zip(nat, accept)):
                return [Mapping(a["-p"], int(a["--dport"]), b["-d"].removesuffix("/32"), int(b["--dport"]),
                                a["-s"].removesuffix("/32") if "-s" in a else None)
                        for a, b in zip(nat, accept)]
            time.sleep(0.01)  # read between miniupnpd's two insertions: read again
        raise LabError(f"miniupnpd's nat and filter rules on router {n} do not match:\n{nat}\n{accept}")

    def _miniupnpd_rules(self, n: int, table: str) -> list[dict[str, str]]:
        rules = self._sh(self.router(n), ["iptables-legacy", "-t", table, "-S", "MINIUPNPD"])
        return [dict(zip(words, words[1:]))  # each option with the word after it
                for words in (line.split() for line in rules.splitlines()) if words[:2] == ["-A", "MINIUPNPD"]]

    def pcp_map(self, i: int | str, internal_port: int, *, proto: str = "tcp", lifetime: int = 120,
                external_port: int = 0) -> tuple[str, int]:
        """A PCP MAP request (RFC 6887) from player ``i`` to its router for ``internal_port``;
        returns the external address granted.  Lifetime 0 removes the mapping: the router takes
        that only with the nonce of the request that made it, which the lab keeps."""
        ns = self.player(i)
        nonce = self._pcp_nonces.setdefault((self.index(i), proto, internal_port), os.urandom(12).hex())
        args = ["pcp", self.gateway_ip(i), internal_port, "--proto", proto, "--lifetime", lifetime,
                "--external-port", external_port, "--nonce", nonce]
        done = self.run(ns, self.python(ns, [HERE, *args]))
        if done.returncode != 0:
            raise LabError(f"PCP MAP from {ns} failed: {done.stderr.strip()}")
        ip, port = done.stdout.split()
        return ip, int(port)

    def conntrack(self, i: int | str) -> str:
        """Router ``i``'s connection tracking table (``conntrack -L``), its NAT state."""
        return self.run(self.router(i), ["conntrack", "-L"]).stdout

    # ----- probes, run inside a namespace -----

    def stun(self, ns: str, servers: Sequence[tuple[str, int]] | None = None, *, proto: str = "udp",
             local_port: int = 0, timeout: float = 3.0) -> list[tuple[str, int]]:
        """The address each STUN server saw (a Binding request from ``ns``, all from one local
        port: ``local_port``, or one the system picks); default: the lab's server once."""
        servers = list(servers or [self.stun_address])
        args = ["stun", "--proto", proto, "--local-port", local_port, "--timeout", timeout,
                *(f"{h}:{p}" for h, p in servers)]
        done = self.run(ns, self.python(ns, [HERE, *args]), timeout=timeout * len(servers) + 30)
        if done.returncode != 0:
            raise LabError(f"STUN from {ns} to {servers} over {proto} failed: {done.stderr.strip()}")
        return [(ip, int(port)) for ip, port in (line.split() for line in done.stdout.splitlines())]

    def tcp_probe(self, ns: str, host: str, port: int, *, local_port: int = 0, timeout: float = 2.0) -> Probe:
        """Try a TCP connection from ``ns`` to host:port; a whoami server's answer fills ``seen``
        (another server leaves the probe waiting ``timeout`` for it)."""
        args = ["connect", host, port, "--local-port", local_port, "--timeout", timeout]
        done = self.run(ns, self.python(ns, [HERE, *args]), timeout=timeout * 2 + 30)
        if done.returncode != 0:
            raise LabError(f"probe from {ns} to {host}:{port} failed: {done.stderr.strip()}")
        got = json.loads(done.stdout)
        return Probe(got["outcome"], tuple(got["local"]) if got["local"] else None,
                     tuple(got["seen"]) if got["seen"] else None)

    def serve_whoami(self, ns: str, port: int, host: str = "0.0.0.0") -> subprocess.Popen[str]:
        """A server in ``ns`` on host:port, TCP and UDP, that answers each connection or datagram
        with the address it came from ("ip port"); returned once it listens, killed at teardown."""
        proc = self.popen(ns, self.python(ns, [HERE, "whoami", host, port]), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line.strip() != "ready":
            proc.kill()
            _, err = proc.communicate()
            raise LabError(f"whoami server in {ns} on {host}:{port} did not start: {err.strip()}")
        return proc

    # ----- building -----

    def __enter__(self) -> Lab:
        if self._open:
            raise LabError("this lab is already built")
        self._open = True
        try:
            self._build()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _build(self) -> None:
        if os.geteuid() != 0:
            raise LabError("the NAT lab needs root (network namespaces and iptables)")
        if missing := missing_tools():
            from support.system_needs import missing_message  # the test process only: probes run bare
            raise LabError(missing_message("the NAT lab needs its Debian packages", missing))
        clean_stale()
        taken = set(namespaces())
        if clash := [ns for ns in self.all_namespaces() if ns in taken]:
            raise LabError(f"namespaces already exist: {', '.join(clash)}")
        self.logs = Path(tempfile.mkdtemp(prefix=f"{self.prefix}-"))
        self._add_namespace(self.internet)
        open_lans = [(self.lan_prefix(i), self.router_wan_ip(i))
                     for i, r in enumerate(self.routers) if r.kind == "open"]
        self._ip(self.internet, "link set lo up", "link add br0 type bridge", "link set br0 up",
                 *(f"addr add {ip}/24 dev br0" for ip in SERVER_IPS),
                 *(f"route add {net} via {NOWHERE}" for net in PRIVATE_PREFIXES),
                 *(f"route add {lan}.0/24 via {wan}" for lan, wan in open_lans))
        for i in range(len(self.routers)):
            self._build_router(i, open_lans)
        if self.with_stun:
            self._start_coturn()
        for i, r in enumerate(self.routers):
            if r.upnp:
                self._start_miniupnpd(i)
        self._wait_ready()

    def _add_namespace(self, ns: str) -> None:
        self._created.append(ns)  # first: an interrupt right after the add must not leak it
        self._sh("", ["ip", "netns", "add", ns])

    def _build_router(self, i: int, open_lans: list[tuple[str, str]]) -> None:
        router, player, kind = self.router(i), self.player(i), self.routers[i].kind
        self._add_namespace(router)
        self._add_namespace(player)
        lan, wan_ip = self.lan_prefix(i), self.router_wan_ip(i)
        self._ip(router, "link set lo up",
                 f"link add wan type veth peer name r{i} netns {self.internet}",
                 f"addr add {wan_ip}/24 dev wan", "link set wan up",
                 f"link add lan type veth peer name eth0 netns {player}",
                 f"addr add {lan}.1/24 dev lan", "link set lan up",
                 f"route add default via {SERVER_IPS[0]}",
                 *(f"route add {other}.0/24 via {via}" for other, via in open_lans if via != wan_ip))
        self._ip(self.internet, f"link set r{i} master br0", f"link set r{i} up")
        self._ip(player, "link set lo up", f"addr add {lan}.2/24 dev eth0", "link set eth0 up",
                 f"route add default via {lan}.1")
        self._sh(router, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
        if kind != "open":
            self._sh(router, ["iptables-legacy-restore"], stdin=self._ruleset(kind))

    @staticmethod
    def _ruleset(kind: str) -> str:
        """A home router's iptables: NAT, a firewall, and the empty chains miniupnpd fills (made
        here: miniupnpd does not make them, and Debian's init script that would is incomplete)."""
        masquerade = "MASQUERADE --random-fully" if kind == "symmetric" else "MASQUERADE"
        unsolicited = ["-A INPUT -i wan -p tcp -j REJECT --reject-with tcp-reset",
                       "-A FORWARD -i wan -p tcp -j REJECT --reject-with tcp-reset"] if kind == "cone-rst" else []
        return "\n".join([
            "*nat",
            ":PREROUTING ACCEPT [0:0]", ":INPUT ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]",
            ":POSTROUTING ACCEPT [0:0]", ":MINIUPNPD - [0:0]", ":MINIUPNPD-POSTROUTING - [0:0]",
            "-A PREROUTING -i wan -j MINIUPNPD",
            "-A POSTROUTING -o wan -j MINIUPNPD-POSTROUTING",
            f"-A POSTROUTING -o wan -j {masquerade}",
            "COMMIT",
            "*mangle",
            ":PREROUTING ACCEPT [0:0]", ":INPUT ACCEPT [0:0]", ":FORWARD ACCEPT [0:0]",
            ":OUTPUT ACCEPT [0:0]", ":POSTROUTING ACCEPT [0:0]", ":MINIUPNPD - [0:0]",
            "-A PREROUTING -i wan -j MINIUPNPD",
            "COMMIT",
            "*filter",
            ":INPUT ACCEPT [0:0]", ":FORWARD DROP [0:0]", ":OUTPUT ACCEPT [0:0]", ":MINIUPNPD - [0:0]",
            "-A INPUT -i wan -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
            *unsolicited[:1],
            "-A INPUT -i wan -j DROP",
            "-A FORWARD -i lan -o wan -j ACCEPT",
            "-A FORWARD -i wan -m conntrack --ctstate ESTABLISHED,RELATED -j ACCEPT",
            "-A FORWARD -i wan ! -o wan -j MINIUPNPD",
            *unsolicited[1:],
            "COMMIT",
            "",
        ])

    def _daemon(self, name: str, ns: str, argv: list[str]) -> None:
        assert self.logs is not None
        with open(self.logs / f"{name}.log", "wb") as log:
            self.daemons[name] = self.popen(ns, argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)

    def log(self, name: str) -> str:
        """A daemon's output so far ("turnserver", "miniupnpd-<i>")."""
        assert self.logs is not None
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _start_coturn(self) -> None:
        assert self.logs is not None
        self._daemon("turnserver", self.internet, [
            "turnserver", "-n", *(f"--listening-ip={ip}" for ip in SERVER_IPS),
            f"--relay-ip={SERVER_IPS[0]}", f"--listening-port={STUN_PORT}", "--no-tls", "--no-dtls",
            "--no-cli", "--log-file=stdout", "--simple-log", f"--pidfile={self.logs / 'turnserver.pid'}",
            f"--userdb={self.logs / 'turndb'}", "--lt-cred-mech", f"--user={':'.join(TURN_USER)}",
            f"--realm={TURN_REALM}", "--no-software-attribute",
        ])

    def _start_miniupnpd(self, i: int) -> None:
        assert self.logs is not None
        conf = self.logs / f"miniupnpd-{i}.conf"
        conf.write_text("\n".join([
            "ext_ifname=wan", "listening_ip=lan", f"http_port={UPNP_HTTP_PORT}",
            "enable_natpmp=yes", "enable_upnp=yes", "secure_mode=yes", "ipv6_disable=yes",
            "system_uptime=yes", "notify_interval=60", "clean_ruleset_interval=600",
            f"uuid={uuid.uuid4()}", f"lease_file={self.logs / f'miniupnpd-{i}.leases'}",
            f"allow 1024-65535 {self.lan_prefix(i)}.0/24 1024-65535",
            "deny 0-65535 0.0.0.0/0 0-65535", "",
        ]))
        self._daemon(f"miniupnpd-{i}", self.router(i),
                     ["miniupnpd", "-d", "-f", conf, "-P", self.logs / f"miniupnpd-{i}.pid"])

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.ready_timeout
        for name, proc in self.daemons.items():
            if name.startswith("miniupnpd"):
                marks = ("HTTP listening on port", "Listening for NAT-PMP/PCP traffic on port")
                self._wait_log(name, proc, marks, deadline)
        if self.with_stun:
            for proto in ("udp", "tcp"):
                args = ["stun", "--proto", proto, "--wait", max(0.1, deadline - time.monotonic()),
                        *(f"{h}:{p}" for h, p in self.stun_addresses)]
                done = self.run(self.internet, self.python(self.internet, [HERE, *args]), timeout=self.ready_timeout + 30)
                if done.returncode != 0:
                    raise LabError(f"coturn did not answer STUN over {proto} within {self.ready_timeout:g} s: "
                                   f"{done.stderr.strip()}\n{self.log('turnserver')[-2000:]}")

    def _wait_log(self, name: str, proc: subprocess.Popen[bytes], marks: Sequence[str], deadline: float) -> None:
        while True:
            text = self.log(name)
            if all(m in text for m in marks):
                return
            if proc.poll() is not None:
                raise LabError(f"{name} ended ({proc.returncode}) before it was ready:\n{text[-2000:]}")
            if time.monotonic() > deadline:
                raise LabError(f"{name} was not ready within {self.ready_timeout:g} s:\n{text[-2000:]}")
            time.sleep(0.01)

    # ----- teardown -----

    def close(self) -> None:
        """Kill every process the lab started or that runs in one of its namespaces, delete the
        namespaces (their interfaces go with them) and the log folder.  Safe to call twice."""
        with _sigint_deferred():
            try:
                self._stop_processes()
            finally:
                _delete_namespaces(self._created)
                self._created = []
                if self.logs is not None:
                    shutil.rmtree(self.logs, ignore_errors=True)
                self._open = False

    def _stop_processes(self, grace: float = 2.0) -> None:
        running = [p for p in self._procs if p.poll() is None]
        for p in running:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        for p in running:
            try:
                p.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        for p in self._procs:  # the group may hold more than its leader
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(p.pid, signal.SIGKILL)
        self._procs = []


# ----- the probe tool run inside the namespaces -----

MAGIC = 0x2112A442


def stun_request() -> tuple[bytes, bytes]:
    """A STUN Binding request (RFC 5389) and its transaction id."""
    txid = os.urandom(12)
    return struct.pack("!HHI12s", 0x0001, 0, MAGIC, txid), txid


def stun_mapped(message: bytes, txid: bytes) -> tuple[str, int] | None:
    """The (XOR-)MAPPED-ADDRESS of a Binding success response to ``txid``, or None."""
    if len(message) < 20:
        return None
    mtype, length, cookie, tid = struct.unpack("!HHI12s", message[:20])
    if mtype != 0x0101 or cookie != MAGIC or tid != txid:
        return None
    pos, end, plain = 20, min(len(message), 20 + length), None
    while pos + 4 <= end:
        atype, alen = struct.unpack("!HH", message[pos:pos + 4])
        value = message[pos + 4:pos + 4 + alen]
        if atype in (0x0020, 0x8020) and len(value) >= 8 and value[1] == 1:
            port = struct.unpack("!H", value[2:4])[0] ^ (MAGIC >> 16)
            ip = bytes(a ^ b for a, b in zip(value[4:8], struct.pack("!I", MAGIC)))
            return socket.inet_ntoa(ip), port
        if atype == 0x0001 and len(value) >= 8 and value[1] == 1:
            plain = socket.inet_ntoa(value[4:8]), struct.unpack("!H", value[2:4])[0]
        pos += 4 + alen + (-alen % 4)
    return plain


def _bound(kind: int, local_port: int) -> socket.socket:
    s = socket.socket(socket.AF_INET, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    s.bind(("0.0.0.0", local_port))
    return s


def _stun_udp(servers: list[tuple[str, int]], local_port: int, timeout: float) -> list[tuple[str, int]]:
    with _bound(socket.SOCK_DGRAM, local_port) as s:
        found = []
        for server in servers:
            request, txid = stun_request()
            deadline, mapped = time.monotonic() + timeout, None
            while mapped is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no STUN answer from {server[0]}:{server[1]} over UDP")
                s.sendto(request, server)
                ready, _, _ = select.select([s], [], [], min(0.2, left))
                if ready:
                    data, _ = s.recvfrom(2048)
                    mapped = stun_mapped(data, txid)
            found.append(mapped)
        return found


def _stun_tcp(servers: list[tuple[str, int]], local_port: int, timeout: float) -> list[tuple[str, int]]:
    socks, found = [], []
    try:
        for server in servers:  # every connection from the same port, all open at once
            s = _bound(socket.SOCK_STREAM, local_port)
            socks.append(s)
            local_port = s.getsockname()[1]
            s.settimeout(timeout)
            s.connect(server)
            request, txid = stun_request()
            s.sendall(request)
            data = b""
            while len(data) < 20 or len(data) < 20 + struct.unpack("!H", data[2:4])[0]:
                chunk = s.recv(2048)
                if not chunk:
                    raise ConnectionError(f"{server[0]}:{server[1]} closed without a STUN answer")
                data += chunk
            mapped = stun_mapped(data, txid)
            if mapped is None:
                raise ConnectionError(f"{server[0]}:{server[1]} gave no mapped address")
            found.append(mapped)
    finally:
        for s in socks:
            s.close()
    return found


def _main_stun(a: argparse.Namespace) -> int:
    servers = [(h, int(p)) for h, p in (s.rsplit(":", 1) for s in a.servers)]
    query = _stun_udp if a.proto == "udp" else _stun_tcp
    deadline = time.monotonic() + a.wait
    while True:
        try:
            found = query(servers, a.local_port, a.timeout if not a.wait else min(a.timeout, 0.5))
            break
        except OSError as e:
            if time.monotonic() > deadline:
                print(f"stun: {e}", file=sys.stderr)
                return 1
            time.sleep(0.02)
    for ip, port in found:
        print(ip, port)
    return 0


PCP_RESULTS = {0: "SUCCESS", 1: "UNSUPP_VERSION", 2: "NOT_AUTHORIZED", 3: "MALFORMED_REQUEST",
               4: "UNSUPP_OPCODE", 5: "UNSUPP_OPTION", 6: "MALFORMED_OPTION", 7: "NETWORK_FAILURE",
               8: "NO_RESOURCES", 9: "UNSUPP_PROTOCOL", 10: "USER_EX_QUOTA", 11: "CANNOT_PROVIDE_EXTERNAL",
               12: "ADDRESS_MISMATCH", 13: "EXCESSIVE_REMOTE_PEERS"}


def _v4mapped(ip: str) -> bytes:
    return bytes(10) + b"\xff\xff" + socket.inet_aton(ip)


def _main_pcp(a: argparse.Namespace) -> int:
    """One PCP MAP request (RFC 6887 section 11), retransmitted until answered."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((a.gateway, NATPMP_PORT))
        nonce = bytes.fromhex(a.nonce) if a.nonce else os.urandom(12)
        proto = {"tcp": 6, "udp": 17}[a.proto]
        request = (struct.pack("!BBHI", 2, 1, 0, a.lifetime) + _v4mapped(s.getsockname()[0])
                   + nonce + struct.pack("!B3xHH", proto, a.internal_port, a.external_port) + _v4mapped("0.0.0.0"))
        deadline = time.monotonic() + a.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                print(f"pcp: no answer from {a.gateway}", file=sys.stderr)
                return 1
            s.send(request)
            if select.select([s], [], [], min(0.25, left))[0]:
                answer = s.recv(1100)
                if len(answer) >= 60 and answer[1] == 0x81 and answer[24:36] == nonce:
                    break
    if answer[3] != 0:
        print(f"pcp: {PCP_RESULTS.get(answer[3], answer[3])}", file=sys.stderr)
        return 1
    port = struct.unpack("!H", answer[42:44])[0]
    print(socket.inet_ntoa(answer[56:60]), port)
    return 0


def _main_connect(a: argparse.Namespace) -> int:
    result: dict[str, Any] = {"outcome": "connected", "local": None, "seen": None}
    with _bound(socket.SOCK_STREAM, a.local_port) as s:
        result["local"] = list(s.getsockname())
        s.settimeout(a.timeout)
        try:
            s.connect((a.host, a.port))
        except ConnectionRefusedError:
            result["outcome"] = "refused"
        except TimeoutError:
            result["outcome"] = "timeout"
        except OSError as e:  # EHOSTUNREACH, ENETUNREACH
            result["outcome"] = "unreachable" if "unreachable" in str(e).lower() else f"error: {e}"
        else:
            result["local"] = list(s.getsockname())
            with contextlib.suppress(OSError):
                words = s.recv(200).decode(errors="replace").split()
                if len(words) == 2 and words[1].isdigit():
                    result["seen"] = [words[0], int(words[1])]
    print(json.dumps(result))
    return 0


def _main_whoami(a: argparse.Namespace) -> int:
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for s in (tcp, udp):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a.host, a.port))
    tcp.listen(64)
    print("ready", flush=True)
    while True:
        ready, _, _ = select.select([tcp, udp], [], [])
        if tcp in ready:
            conn, (ip, port) = tcp.accept()
            with conn, contextlib.suppress(OSError):
                conn.sendall(f"{ip} {port}\n".encode())
        if udp in ready:
            _, (ip, port) = udp.recvfrom(2048)
            udp.sendto(f"{ip} {port}\n".encode(), (ip, port))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="natlab.py", description="probes run inside the lab's namespaces")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("stun", help="print the address each STUN server sees, one 'ip port' a line")
    p.add_argument("servers", nargs="+", metavar="HOST:PORT")
    p.add_argument("--proto", choices=("udp", "tcp"), default="udp")
    p.add_argument("--local-port", type=int, default=0)
    p.add_argument("--timeout", type=float, default=3.0)
    p.add_argument("--wait", type=float, default=0.0, help="retry until this many seconds have passed")
    p.set_defaults(run=_main_stun)
    p = sub.add_parser("connect", help="try a TCP connection; print what happened as JSON")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.add_argument("--local-port", type=int, default=0)
    p.add_argument("--timeout", type=float, default=2.0)
    p.set_defaults(run=_main_connect)
    p = sub.add_parser("pcp", help="map a port with PCP; print the external 'ip port' granted")
    p.add_argument("gateway")
    p.add_argument("internal_port", type=int)
    p.add_argument("--proto", choices=("tcp", "udp"), default="tcp")
    p.add_argument("--lifetime", type=int, default=120)
    p.add_argument("--external-port", type=int, default=0)
    p.add_argument("--nonce", help="12 bytes in hex (a removal must repeat the mapping's own)")
    p.add_argument("--timeout", type=float, default=3.0)
    p.set_defaults(run=_main_pcp)
    p = sub.add_parser("whoami", help="answer each TCP connection and UDP datagram with its source")
    p.add_argument("host")
    p.add_argument("port", type=int)
    p.set_defaults(run=_main_whoami)
    a = parser.parse_args(argv)
    return a.run(a)


if __name__ == "__main__":
    sys.exit(main())
