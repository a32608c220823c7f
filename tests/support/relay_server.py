"""A real Magic Wormhole transit relay on a local port, for the relay client's tests.

The relay is `magic-wormhole-transit-relay`, a Twisted plugin, kept out of the project's own
environment (it brings Twisted and autobahn) in a venv of its own that `bash scripts/test
--setup-only` creates.  A test run installs nothing: without it the tests fail, naming that command.
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from support.system_needs import SETUP_COMMAND
from support.wormhole_servers import TWIST, require_venv, stop

HOST = "127.0.0.1"
# Twisted's own line for a listening port, which names the port the kernel picked for tcp:0.
_LISTENING = re.compile(r"ServerFactory starting on (\d+)")


@dataclass(frozen=True)
class TransitRelay:
    """A running relay: where to reach it, and a way to make it vanish mid-stream."""

    address: tuple[str, int]
    process: subprocess.Popen[bytes]
    log: Path

    def kill(self) -> None:
        """SIGKILL: the kernel closes every connection, as when a relay host dies."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)


def _log_text(log: Path) -> str:
    return log.read_text(errors="replace") if log.exists() else ""


def _accepts(port: int) -> bool:
    try:
        # The relay sees a connection that sends nothing and leaves: it just forgets it.
        with socket.create_connection((HOST, port), timeout=1):
            return True
    except OSError:
        return False


def _wait_listening(process: subprocess.Popen[bytes], log: Path, timeout: float) -> int:
    """The relay's port, once it accepts connections; fails the test if it never does."""
    deadline = time.monotonic() + timeout
    while True:
        found = _LISTENING.search(_log_text(log))
        if found and _accepts(int(found[1])):
            return int(found[1])
        if process.poll() is not None:
            pytest.fail(f"the transit relay exited with status {process.returncode} before listening "
                        f"(`{SETUP_COMMAND}` installs it):\n{_log_text(log)[-2000:]}", pytrace=False)
        if time.monotonic() > deadline:
            process.kill()
            process.wait()
            pytest.fail(f"the transit relay did not listen within {timeout:g} s:\n{_log_text(log)[-2000:]}",
                        pytrace=False)
        time.sleep(0.02)


@contextmanager
def transit_relay(log_dir: Path, timeout: float = 20) -> Iterator[TransitRelay]:
    """Start `twist transitrelay` on a port of 127.0.0.1 that the kernel picks (no race for a
    free port), yield it once it accepts connections, and stop it on the way out unless the
    test has killed it already. Its log is ``log_dir/transitrelay.log``."""
    require_venv(TWIST)
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / "transitrelay.log"
    # twist logs to its standard output, usage errors (say, no transitrelay plugin in that venv)
    # included, so one file holds whatever explains a failure.
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(TWIST), "--log-format=text", "transitrelay", f"--port=tcp:0:interface={HOST}"],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        )
    try:
        port = _wait_listening(process, log, timeout)
        yield TransitRelay((HOST, port), process, log)
    finally:
        stop(process)
