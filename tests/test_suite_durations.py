"""benchmarks/suite_durations.py: two runs' --durations=0 output compared over the tests both have."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "suite_durations.py"

BEFORE = """\
============================= slowest durations =============================
2.00s call     tests/test_net_review_fixes.py::test_a_peer_that_stalls[relay]
0.50s setup    tests/test_net_review_fixes.py::test_a_peer_that_stalls[relay]
1.00s call     tests/test_old.py::test_gone_since
2115 passed in 343.09s (0:05:43)
"""
AFTER = """\
============================= slowest durations =============================
1.25s call     tests/test_net_timeouts.py::test_a_peer_that_stalls[relay]
4.00s call     tests/test_table_relay.py::test_the_table_through_the_relay[app]
2228 passed in 407.92s (0:06:47)
"""


def test_the_tests_of_both_runs_are_compared_by_name_whatever_their_file(tmp_path: Path) -> None:
    (tmp_path / "before.txt").write_text(BEFORE)
    (tmp_path / "after.txt").write_text(AFTER)
    out = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "before.txt"), str(tmp_path / "after.txt")],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert out == [
        "before: 2115 passed in 343 s; after: 2228 passed in 408 s",
        "the 1 tests of both: 2 s before, 1 s after (0.500x)",  # setup and call together: 2.5 s, then 1.25 s
        "only after: 1 tests, 4 s; only before: 1 tests, 1 s",
    ]


def test_a_missing_file_is_one_line_and_exit_1(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "nope.txt"), str(tmp_path / "nope2.txt")],
                          capture_output=True, text=True)
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "nope.txt" in done.stderr
