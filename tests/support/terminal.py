"""A real terminal for tests: a tmux session of 80x24 columns, its screen read and keys sent."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable

from support.system_needs import require_command


def tmux_command() -> str:
    """tmux from the system packages (scripts/test installs it; a test run installs nothing)."""
    return require_command("tmux is needed for the terminal test (Debian's tmux)", "tmux")


class Pane:
    def __init__(self, tmux: str, name: str) -> None:
        # A tmux server of its own (-L): with the shared default server, one test's last
        # session ending stops the server while another's new-session is connecting to it.
        self.tmux = [tmux, "-L", name]
        self.name = name

    def text(self, escapes: bool = False) -> str:
        args = [*self.tmux, "capture-pane", "-p", "-J", "-t", self.name] + (["-e"] if escapes else [])
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout

    def history(self) -> str:
        """Everything the pane printed, scrolled off or not (lines joined where they wrapped)."""
        args = [*self.tmux, "capture-pane", "-p", "-J", "-S", "-", "-t", self.name]
        return subprocess.run(args, capture_output=True, text=True, check=True).stdout

    def send(self, line: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, "-l", line], check=True)
        subprocess.run([*self.tmux, "send-keys", "-t", self.name, "Enter"], check=True)

    def wait(self, ready: Callable[[str], bool], what: str, timeout: float = 30.0, settle: float = 0.25) -> str:
        """Wait until ``ready`` holds for a screen that stayed the same for ``settle`` seconds (a
        moment; 0: as soon as it holds)."""
        end = time.monotonic() + timeout
        last, since = "", time.monotonic()
        while time.monotonic() < end:
            now = self.text()
            if now != last:
                last, since = now, time.monotonic()
            if time.monotonic() - since >= settle and ready(now):
                return now
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{last}")


def at_prompt(screen: str) -> bool:
    lines = [ln.rstrip() for ln in screen.splitlines() if ln.strip()]
    return bool(lines) and (lines[-1] == ">" or "EXIT=" in screen)


def start_session(argv: list[str], env: dict[str, str], width: int = 80, height: int = 24) -> Pane:
    """``argv`` in a tmux session (and server) of its own; it prints EXIT=code when it ends."""
    import uuid

    tmux = tmux_command()
    name = f"basilica-test-{uuid.uuid4().hex[:8]}"
    cmd = " ".join(f"'{a}'" for a in argv) + "; echo EXIT=$?; sleep 600"
    subprocess.run([tmux, "-L", name, "new-session", "-d", "-s", name, "-x", str(width), "-y", str(height),
                    "env", *[f"{k}={v}" for k, v in env.items()], "sh", "-c", cmd], check=True)
    return Pane(tmux, name)


def kill(pane: Pane) -> None:
    subprocess.run([*pane.tmux, "kill-server"], capture_output=True)
