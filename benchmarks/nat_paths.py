"""Issue 11's figures, measured in the NAT lab (tests/support/natlab.py; root, and the packages .ci/run installs).

For each pairing of home routers, ``--runs`` times: a host (``basilica host --bot random``) in one
player namespace, a joiner (``basilica join bas1:... --bot random``) in the other, the joiner's
reply code pasted into the host at once when it prints one.  Printed: how many runs connected,
the path both sides named, and the time from starting ``join`` to the first move in the joiner's
replay (median and range).  A run stops at its first move (Ctrl-C to both: mappings removed).

    python benchmarks/nat_paths.py            # 10 runs per pairing, a few minutes
    python benchmarks/nat_paths.py --runs 3
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.natlab import Lab, Router  # noqa: E402

PORT = 7431


@dataclass(frozen=True)
class Pairing:
    name: str
    host: Router
    join: Router
    mapping: str  # the host's --port-mapping
    same_lan: bool = False  # the joiner in the host's own network


PAIRINGS = (
    Pairing("same LAN", Router("h", "cone"), Router("j", "cone"), "off", same_lan=True),
    Pairing("cone / cone, UPnP only", Router("h", "cone", upnp=True), Router("j", "cone"), "upnp"),
    Pairing("cone / cone, NAT-PMP only", Router("h", "cone", upnp=True), Router("j", "cone"), "natpmp"),
    Pairing("cone-rst / cone-rst, no port mapping (routers answer a stray SYN with a reset)",
            Router("h", "cone-rst"), Router("j", "cone-rst"), "off"),
    Pairing("cone / cone, port mapping", Router("h", "cone", upnp=True), Router("j", "cone"), "auto"),
    Pairing("cone / cone, no port mapping", Router("h", "cone"), Router("j", "cone"), "off"),
    Pairing("cone / symmetric, port mapping", Router("h", "cone", upnp=True), Router("j", "symmetric"), "auto"),
    Pairing("cone / symmetric, no port mapping", Router("h", "cone"), Router("j", "symmetric"), "off"),
    Pairing("symmetric / cone, port mapping", Router("h", "symmetric", upnp=True), Router("j", "cone"), "auto"),
    Pairing("symmetric / cone, no port mapping", Router("h", "symmetric"), Router("j", "cone"), "off"),
)


@dataclass
class Run:
    connected: bool
    path: str = ""
    seconds: float = 0.0


@dataclass
class Proc:
    proc: subprocess.Popen[str]
    out: list[str] = field(default_factory=list)
    err: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        for stream, lines in ((self.proc.stdout, self.out), (self.proc.stderr, self.err)):
            threading.Thread(target=lambda s=stream, ls=lines: [ls.append(x.rstrip("\n")) for x in s],
                             daemon=True).start()

    def line(self, prefix: str, lines: list[str] | None = None) -> str | None:
        return next((x for x in list(self.out if lines is None else lines) if x.startswith(prefix)), None)


def _start(lab: Lab, i: int, args: list[str], home: Path) -> Proc:
    ns = lab.player(i)
    env = dict(os.environ, BASILICA_HOME=str(home), LOGNAME="bench")
    return Proc(lab.popen(ns, lab.python(ns, ["-m", "basilica_p2p.cli", *args]), env=env, stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))


def _stop(p: Proc) -> None:
    if p.proc.poll() is None:
        p.proc.send_signal(signal.SIGINT)
    try:
        p.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.proc.kill()
        p.proc.wait()


def one_run(lab: Lab, pairing: Pairing, folder: Path, limit: float) -> Run:
    stun = [w for host, port in lab.stun_addresses for w in ("--stun", f"{host}:{port}")]
    host = _start(lab, 0, ["host", "--bot", "random", "--port", str(PORT), "--replay-dir", str(folder / "a"),
                           "--invite-ttl", str(int(limit) + 5), "--port-mapping", pairing.mapping, *stun],
                  folder / "hh")
    try:
        # The first invite holds the LAN address at once; the second adds what STUN and the router gave.
        while len(invites := [x for x in list(host.out) if x.startswith("invite: ")]) < 2:
            if host.proc.poll() is not None:
                raise RuntimeError(f"the host stopped: {host.err}")
            time.sleep(0.02)
        code = invites[1].split()[-1]
        start = time.monotonic()
        join = _start(lab, 0 if pairing.same_lan else 1, ["join", code, "--bot", "random", "--replay-dir", str(folder / "b"),
                               "--connect-timeout", str(limit), *stun], folder / "jh")
        try:
            pasted = False
            while time.monotonic() - start < limit + 10:
                reply = join.line("reply: ")
                if reply and not pasted:
                    assert host.proc.stdin is not None
                    host.proc.stdin.write(reply.split()[-1] + "\n")
                    host.proc.stdin.flush()
                    pasted = True
                replays = list((folder / "b").glob("*.replay"))
                if replays and b"\xa6action" in replays[0].read_bytes():
                    said = join.line("connected: ", join.err) or ""
                    return Run(True, said.removeprefix("connected: ").rsplit(" (", 1)[0], time.monotonic() - start)
                if join.proc.poll() is not None:
                    break
                time.sleep(0.01)
            return Run(False)
        finally:
            _stop(join)
    finally:
        _stop(host)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--limit", type=float, default=12.0, help="seconds a joiner tries before giving up")
    parser.add_argument("--only", default="", help="run only the pairings whose name contains this text")
    args = parser.parse_args()
    print(f"NAT lab: {args.runs} runs per pairing (host / joiner routers), random bots, reply codes pasted at once")
    for pairing in (p for p in PAIRINGS if args.only in p.name):
        runs: list[Run] = []
        with Lab([pairing.host, pairing.join]) as lab:
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory() as tmp:
                    runs.append(one_run(lab, pairing, Path(tmp), args.limit))
        ok = [r for r in runs if r.connected]
        paths = sorted({r.path for r in ok})
        line = f"  {pairing.name}: {len(ok)}/{len(runs)} connected"
        if ok:
            times = [r.seconds for r in ok]
            line += (f" ({'; '.join(paths)}); join to first move median {statistics.median(times):.2f} s, "
                     f"range {min(times):.2f}-{max(times):.2f} s")
        print(line, flush=True)


if __name__ == "__main__":
    main()
