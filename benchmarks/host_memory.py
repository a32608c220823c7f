"""Issue 21's figures: a host's memory over a long run of games on one connection.

``basilica host --no-invite --games N --bot random`` and ``basilica join --bot random`` in two
processes over loopback, each with its own home; the host's resident memory (VmRSS) is read
when each sampled game has ended (its next game's replay appears), and the growth per game is
fitted between the first and the last sample.  It asserts nothing.

    python benchmarks/host_memory.py                       # after 40 and 300 games
    python benchmarks/host_memory.py --at 40,100,200,300,1000
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from basilica_p2p.bench import machine  # noqa: E402


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cli(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "basilica_p2p.cli", "--home", str(home), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at", default="40,300", help="games after which the host's memory is read")
    args = parser.parse_args()
    marks = sorted(int(n) for n in args.at.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        replays = base / "host-replays"
        host = cli(base / "h", "host", "--no-invite", "--bind", "127.0.0.1", "--port", "0", "--bot", "random",
                   "--games", str(marks[-1] + 1), "--replay-dir", str(replays))
        assert host.stdout is not None
        listening = host.stdout.readline()  # "listening on 127.0.0.1:PORT"
        port = listening.strip().rsplit(":", 1)[1]
        join = cli(base / "j", "join", f"127.0.0.1:{port}", "--bot", "random", "--replay-dir", str(base / "join"))
        samples: list[tuple[int, int, float]] = []
        start = time.monotonic()
        try:
            for mark in marks:
                # Game ``mark`` has ended once game mark + 1 has its replay.
                while sum(1 for _ in replays.glob("*.replay")) <= mark:
                    if host.poll() is not None:
                        raise SystemExit(f"the host ended early (status {host.returncode})")
                    time.sleep(0.05)
                samples.append((mark, rss_kib(host.pid), time.monotonic() - start))
        finally:
            host.kill()
            join.kill()
            host.communicate()
            join.communicate()
    print(f"# {machine()}; host and joiner random bots, the hidden deal, over loopback")
    print("| games played | the host's resident memory | seconds |")
    print("|---|---|---|")
    for games, kib, seconds in samples:
        print(f"| {games} | {kib / 1024:.1f} MiB | {seconds:.0f} |")
    (g0, m0, _), (g1, m1, _) = samples[0], samples[-1]
    print(f"growth: {(m1 - m0) / (g1 - g0):+.1f} KiB a game between game {g0} and game {g1}")


if __name__ == "__main__":
    main()
