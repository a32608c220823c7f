"""Issue 21's figures: how long the invite's holder takes to be seated while strangers flood the gate.

Three processes on loopback: the host's gate (net/gate.py ``admit``, default limits, admitting
the holder again and again with one invite), a flood of strangers (tests/support/hostile_traffic.py:
silent, slowloris, garbage and recorded knocks in turn, from one address or from addresses all
over 127.1.0.0/16, each held until the host closes it), and the joiner (net/dial.py ``dial``)
behind a proxy that gives its path a round trip.  Printed for each hostile rate, round trip and
kind of flood: the time from the joiner's first connect to its seat (median and worst of
``--joins``; a seat counts once the host's first message on it came), how many joins were
not seated within 30 s, how many were reset after the host said 'seated', the connections
the flood really opened per second, and the host's CPU use (of one core) meanwhile.
It asserts nothing.

    python benchmarks/gate_flood.py                      # rates 0, 100, 1000/s; 0, 100, 300 ms
    python benchmarks/gate_flood.py --rates 1000 --rtts 300 --joins 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the flood and the proxy: tests/support/hostile_traffic.py

from basilica_p2p.bench import machine  # noqa: E402
from basilica_p2p.identity import Identity  # noqa: E402
from basilica_p2p.net.dial import DialTimes, NoPath, dial  # noqa: E402
from basilica_p2p.net.framing import PeerClosed, PeerTimeout  # noqa: E402
from basilica_p2p.net.gate import Admitted, admit  # noqa: E402
from basilica_p2p.net.invite import Candidate, Invite, format_invite, parse_invite  # noqa: E402
from basilica_p2p.net.punch import listen  # noqa: E402
from support.hostile_traffic import KINDS, FloodStats, flood, latency_proxy  # noqa: E402

HOST_SEED = bytes(range(32))
JOINER_SEED = bytes(range(1, 33))
WARM_UP = 2.0  # seconds of flood before the first join
TIMES = DialTimes(connect=5.0, challenge=5.0, retry=0.5, frame=10.0)


def identity(seed: bytes, name: str) -> Identity:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Identity(name, Ed25519PrivateKey.from_private_bytes(seed))


async def host_role() -> None:
    """Print the port and the invite, then admit its holder again and again (one seat each time)."""
    me = identity(HOST_SEED, "host")
    listener = await listen("127.0.0.1", 0)
    port = listener.socket.getsockname()[1]
    invite = Invite(me.public, os.urandom(16), 2**40, (Candidate("lan", "127.0.0.1", port),))
    print(port, format_invite(invite), flush=True)
    async def goodbye(admitted: Admitted) -> None:
        await admitted.framed.send_control("ping", n=1)  # the joiner's proof that it holds the seat
        await trio.sleep(1.0)
        await admitted.framed.aclose()

    async with trio.open_nursery() as nursery:
        while True:  # the door opens again at once, as a host's would for its next invite
            admitted = await admit([listener], me, invite, trio.current_time() + 3600, lambda line: None)
            nursery.start_soon(goodbye, admitted)


async def flood_role(port: int, rate: float, many: bool, kinds: tuple[str, ...]) -> None:
    stats = FloodStats()

    async def report() -> None:
        start = trio.current_time()
        while True:
            await trio.sleep(1.0)
            print(f"{stats.opened} {trio.current_time() - start:.3f} {sum(stats.failed.values())}", flush=True)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(report)
        nursery.start_soon(partial(flood, port, rate, many, kinds, stats=stats))


async def joins(port: int, invite: Invite, rtt: float, count: int) -> list[float | str]:
    """Seconds from each join's start to its seat, one after another; or why it was not seated:
    "never" (no seat within 30 s), "reset" (the connection ended after 'seated')."""
    me = identity(JOINER_SEED, "joiner")
    out: list[float | str] = []
    async with trio.open_nursery() as nursery:
        proxy = await nursery.start(latency_proxy, port, rtt)
        far = Invite(invite.key, invite.secret, invite.expires, (Candidate("lan", "127.0.0.1", proxy),))
        for _ in range(count):
            start = trio.current_time()
            try:
                dialed = await dial(far, me, start + 30, times=TIMES)
            except NoPath:
                out.append("never")
                continue
            seated = trio.current_time() - start
            try:
                with trio.fail_after(5 + rtt):
                    frame = await dialed.framed.receive()  # the host's word once it holds our 'sit'
                out.append(seated if frame.control()["t"] == "ping" else "reset")
            except (PeerClosed, PeerTimeout, trio.TooSlowError):
                out.append("reset")
            await dialed.framed.aclose()
        nursery.cancel_scope.cancel()
    return out


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time of a running process, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _spawn(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True,
                            cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))


def cell(rate: float, rtt: float, many: bool, count: int, kinds: str) -> str:
    host = _spawn("--role", "host")
    flooder = None
    try:
        assert host.stdout is not None
        port_text, code = host.stdout.readline().split()
        port = int(port_text)
        invite = parse_invite(code, int(time.time()))
        if rate:
            flooder = _spawn("--role", "flood", "--port", str(port), "--rate", str(rate), "--kinds", kinds,
                             *(["--many"] if many else []))
        time.sleep(WARM_UP if rate else 0.2)
        cpu, wall = _cpu_seconds(host.pid), time.monotonic()
        times = trio.run(joins, port, invite, rtt, count)
        busy = (_cpu_seconds(host.pid) - cpu) / (time.monotonic() - wall)
    finally:
        achieved = ""
        if flooder is not None:
            flooder.terminate()
            out, _ = flooder.communicate(timeout=20)
            lines = [line.split() for line in out.splitlines() if line.strip()]
            if lines:
                opened, seconds, failed = int(lines[-1][0]), float(lines[-1][1]), int(lines[-1][2])
                achieved = f"{opened / seconds:,.0f}/s opened" + (f", {failed} refused" if failed else "")
        host.terminate()
        host.communicate(timeout=20)
    seated = [t for t in times if isinstance(t, float)]
    shown = (f"{statistics.median(seated):.2f} s / {max(seated):.2f} s" if seated else "never")
    where = "" if not rate else (" from many addresses" if many else " from one address")
    return (f"| {rate:g}/s{where} | {rtt * 1000:g} ms | {shown} | {times.count('never')} of {len(times)} "
            f"| {times.count('reset')} | {achieved or '-'} | {busy:.0%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=("bench", "host", "flood"), default="bench")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--rate", type=float, default=0)
    parser.add_argument("--many", action="store_true")
    parser.add_argument("--rates", default="0,100,1000")
    parser.add_argument("--rtts", default="0,100,300", help="milliseconds")
    parser.add_argument("--joins", type=int, default=5)
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"of the strangers, taken in turn: {', '.join(KINDS)}")
    args = parser.parse_args()
    if args.role == "host":
        trio.run(host_role)
        return
    if args.role == "flood":
        trio.run(flood_role, args.port, args.rate, args.many, tuple(args.kinds.split(",")))
        return
    print(f"# {machine()}; every process on this one machine; strangers: {args.kinds}")
    print("| hostile connections | round trip | time to seat, median / worst | joins not seated in 30 s "
          "| reset after 'seated' | the flood really | the host's CPU |")
    print("|---|---|---|---|---|---|---|")
    for rate in (float(r) for r in args.rates.split(",")):
        for rtt in (float(r) / 1000 for r in args.rtts.split(",")):
            for many in ((False, True) if rate else (False,)):
                print(cell(rate, rtt, many, args.joins, args.kinds), flush=True)


if __name__ == "__main__":
    main()
