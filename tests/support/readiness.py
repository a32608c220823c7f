"""Waiting for a `basilica` process to be ready, instead of sleeping a fixed time before a
signal or a kill: a fixed sleep is too short on a loaded machine and wasted on an idle one.
Every wait is bounded and fails the test saying what did not happen."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from basilica_p2p.replay.file import ReplayError, read_replay


def wait_until(ready: Callable[[], bool], what: str, timeout: float = 20) -> None:
    """Poll ``ready`` until it holds; fail with ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"{what} within {timeout:g} s"
        time.sleep(0.01)


def held(folder: Path) -> int:
    """How many messages the replay in ``folder`` holds so far (0 before it has a whole header)."""
    found = list(folder.glob("*.replay"))
    try:
        return len(read_replay(found[0]).records) if found else 0
    except ReplayError:
        return 0  # just created: the header is not all written yet


def log_until(proc: subprocess.Popen[str], *marks: str) -> list[str]:
    """The lines of ``proc``'s standard error up to the first holding one of ``marks``, all of
    them if it ends first (a `resume` ends by itself when its --window closes)."""
    assert proc.stderr is not None
    seen: list[str] = []
    for line in proc.stderr:
        seen.append(line)
        if any(mark in line for mark in marks):
            break
    return seen


def drain(fd: int) -> bytearray:
    """Everything read from ``fd`` from now on, collected by a daemon thread: a person's screen
    must go somewhere, or that side blocks writing it."""
    screen = bytearray()

    def read() -> None:
        while True:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            screen.extend(data)

    threading.Thread(target=read, daemon=True).start()
    return screen
