"""Whether a change made the test suite slower: two runs' ``--durations=0`` output compared,
over the tests both have, by name (a test file renamed keeps its tests' names).

    python -m pytest -q --durations=0 > after.txt          # in each checkout, one after the other
    python benchmarks/suite_durations.py before.txt after.txt

A suite that grows takes longer; what a tidy must not do is make the tests that were there
slower.  The figure is the time of the tests common to both runs, after against before.
Names are a test's function and parameters, without its file: two tests of one name in
different files count together, in both runs alike.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

_LINE = re.compile(r"\s*([0-9.]+)s (?:call|setup|teardown)\s+(\S+)")
_SUMMARY = re.compile(r"(\d+) passed.* in ([0-9.]+)s")


@dataclass(frozen=True)
class Run:
    seconds: dict[str, float]  # by test name: setup, call and teardown together
    passed: int
    wall: float


def read_run(path: Path) -> Run:
    seconds: dict[str, float] = defaultdict(float)
    passed, wall = 0, 0.0
    for line in path.read_text(errors="replace").splitlines():
        if m := _LINE.match(line):
            node = m.group(2)
            seconds[node.split("::", 1)[1] if "::" in node else node] += float(m.group(1))
        elif m := _SUMMARY.search(line):
            passed, wall = int(m.group(1)), float(m.group(2))
    return Run(dict(seconds), passed, wall)


def compare(before: Run, after: Run) -> list[str]:
    common = before.seconds.keys() & after.seconds.keys()
    b = sum(before.seconds[k] for k in common)
    a = sum(after.seconds[k] for k in common)
    new = after.seconds.keys() - common
    gone = before.seconds.keys() - common
    return [
        f"before: {before.passed} passed in {before.wall:.0f} s; after: {after.passed} passed in {after.wall:.0f} s",
        f"the {len(common)} tests of both: {b:.0f} s before, {a:.0f} s after ({a / b:.3f}x)" if b else
        "no test of both runs took measurable time",
        f"only after: {len(new)} tests, {sum(after.seconds[k] for k in new):.0f} s; "
        f"only before: {len(gone)} tests, {sum(before.seconds[k] for k in gone):.0f} s",
    ]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: python benchmarks/suite_durations.py BEFORE.txt AFTER.txt", file=sys.stderr)
        return 2
    try:
        before, after = (read_run(Path(p)) for p in argv)
    except OSError as e:
        print(f"suite_durations: {e}", file=sys.stderr)
        return 1
    print("\n".join(compare(before, after)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
