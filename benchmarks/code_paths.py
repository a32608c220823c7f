"""Issue 12's figures, in the NAT lab with a Magic Wormhole mailbox and transit relay on its internet.

For two pairings of home routers (cone / cone: the two sides punch through on their own; symmetric /
symmetric: only the relay connects), ``--runs`` times each: ``basilica host --code`` and
``basilica join --code CODE`` with greedy bots.  Printed: the path, the time from starting ``join``
to the first move in the joiner's replay (median and range), the time from that first move to
the end of the game, and the relayed / direct ratio of those.

    python benchmarks/code_paths.py            # 10 runs per pairing
    python benchmarks/code_paths.py --runs 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from nat_paths import PORT, Proc, _start  # noqa: E402
from support.natlab import Lab, Router  # noqa: E402
from support.wormhole_servers import WormholeServers  # noqa: E402


def one_game(lab: Lab, servers: WormholeServers, folder: Path) -> tuple[str, float, float]:
    """(path, seconds to the first move, seconds to the end of the game), from starting join."""
    stun = lab.stun_options()
    host = _start(lab, 0, ["host", "--code", "--bot", "greedy", "--port", str(PORT), "--port-mapping", "off",
                           "--replay-dir", str(folder / "a"), *stun, *servers.where], folder / "hh")
    while host.line("code: ") is None:
        if host.proc.poll() is not None:
            raise RuntimeError(f"the host stopped: {host.err}")
        time.sleep(0.02)
    code = host.line("code: ").split()[-1]  # type: ignore[union-attr]
    start = time.monotonic()
    join: Proc = _start(lab, 1, ["join", "--code", code, "--bot", "greedy", "--replay-dir", str(folder / "b"),
                                 *stun, *servers.where], folder / "jh")
    first = 0.0
    while join.proc.poll() is None:
        replays = list((folder / "b").glob("*.replay"))
        if not first and replays and b"\xa6action" in replays[0].read_bytes():
            first = time.monotonic() - start
        time.sleep(0.005)
    whole = time.monotonic() - start
    host.proc.wait(timeout=60)
    if join.proc.returncode != 0 or host.proc.returncode != 0:
        raise RuntimeError(f"a side failed: {join.err[-3:]} {host.err[-3:]}")
    said = next((x for x in join.err if x.startswith("connected: ")), "")
    path = said.removeprefix("connected: ").split(";")[0].rsplit(" (", 1)[0]
    return path, first, whole


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    print(f"NAT lab with a wormhole mailbox and transit relay: {args.runs} greedy-vs-greedy games per pairing")
    medians = {}
    for name, kind in (("cone / cone", "cone"), ("symmetric / symmetric", "symmetric")):
        results = []
        with Lab([Router("h", kind), Router("j", kind)]) as lab, tempfile.TemporaryDirectory() as wh:
            servers = WormholeServers(lab, Path(wh))
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory() as tmp:
                    results.append(one_game(lab, servers, Path(tmp)))
        paths = sorted({p for p, _, _ in results})
        firsts = [f for _, f, _ in results]
        plays = [w - f for _, f, w in results]  # from the first move to the end: the game on its path
        medians[kind] = statistics.median(plays)
        print(f"  {name}: {'; '.join(paths)}; join --code to first move median {statistics.median(firsts):.2f} s "
              f"(range {min(firsts):.2f}-{max(firsts):.2f}); first move to the end median {medians[kind]:.2f} s "
              f"(range {min(plays):.2f}-{max(plays):.2f})", flush=True)
    print(f"  relayed / direct game time (first move to the end): {medians['symmetric'] / medians['cone']:.2f}x")


if __name__ == "__main__":
    main()
