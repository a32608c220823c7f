"""The program behind a ``cmd:`` bot, as a child process: starting it, its output read
line by line with deadlines, its input written, and stopping it whatever it does.

Nothing here knows protocol/BOTS.md (that is :mod:`basilica_p2p.bots.external`); it only
guarantees that a program which hangs, floods or dies cannot hang or flood us.  The
program's output is read by a thread into a bounded queue, its input written by another,
so no call here blocks past its deadline; the program runs in its own process group,
which is killed when it is stopped and at exit.
"""

from __future__ import annotations

import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Iterator
from enum import StrEnum
from typing import IO, Any

MAX_LINE = 4096  # bytes in one line from a bot, its line ending not counted
LINES_BUFFERED = 1024  # lines read from a bot and not yet looked at


class Read(StrEnum):
    """What the reader found next in a program's output."""

    LINE = "line"  # a whole line, its ending included
    EOF = "eof"  # the end of the output (a last line without its ending counts as none)
    LONG = "long"  # a line longer than MAX_LINE: reading stops there


def parse_command(text: str) -> list[str]:
    """The argv of ``cmd:PROGRAM``; raises ValueError with a one-line reason."""
    try:
        argv = shlex.split(text)
    except ValueError as e:
        raise ValueError(f"cannot split the command {text!r}: {e}") from None
    if not argv:
        raise ValueError("cmd: needs a program, e.g. cmd:python3 examples/line_bot.py")
    program = argv[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        if not os.path.isfile(program):
            raise ValueError(f"no program {program!r}")
        if not os.access(program, os.X_OK):
            raise ValueError(f"{program!r} is not executable (chmod +x, or name its interpreter first)")
    elif shutil.which(program) is None:
        raise ValueError(f"no program {program!r} on PATH")
    return argv



_children: weakref.WeakSet[BotProcess] = weakref.WeakSet()


def live_children() -> list[int]:
    """Process ids of bot programs started here and not yet reaped (for tests)."""
    return [c.proc.pid for c in list(_children) if c.proc.returncode is None]


class BotProcess:
    """One running bot program: its pipes, a reader and a writer thread."""

    def __init__(self, argv: list[str], stderr: IO[Any] | int | None) -> None:
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, bufsize=0,
            start_new_session=hasattr(os, "killpg"),  # its own process group, killed as a whole
        )
        # Bounded: a bot that floods its output waits for us (and fails on time), not our memory.
        self.lines: queue.Queue[tuple[Read, bytes]] = queue.Queue(maxsize=LINES_BUFFERED)
        self.outbox: queue.Queue[bytes | None] = queue.Queue()
        self._lock = threading.Lock()
        self.stopped = False
        self._done = threading.Event()  # set once the process is reaped
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self.reader = threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True, name="bot-reader")
        writer = threading.Thread(target=self._write, args=(self.proc.stdin,), daemon=True, name="bot-writer")
        self.reader.start()
        writer.start()
        _children.add(self)

    def _read(self, raw: IO[bytes]) -> None:
        stream = open(raw.fileno(), "rb", buffering=65536, closefd=False)
        try:
            while True:
                line = stream.readline(MAX_LINE + 2)  # room for "\r\n"
                if not line:
                    break
                if len(line.rstrip(b"\r\n")) > MAX_LINE:
                    self.lines.put((Read.LONG, b""))
                    return
                if not line.endswith(b"\n"):
                    break  # a last line cut off by the end of output is no answer
                self.lines.put((Read.LINE, line))
        except (OSError, ValueError):
            pass
        self.lines.put((Read.EOF, b""))

    def _write(self, raw: IO[bytes]) -> None:
        fd = raw.fileno()
        try:
            while True:
                data = self.outbox.get()
                if data is None:
                    break
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)  # blocks only while a bot does not read; then it fails on time
                    view = view[n:]
        except (OSError, ValueError):
            pass  # the bot is gone: the reader sees it
        finally:
            try:
                raw.close()  # end of input: a bot that reads it exits
            except OSError:
                pass

    def read(self, deadline: float) -> tuple[Read, bytes] | None:
        """What the output holds next, waiting for it until ``deadline`` (``time.monotonic()``);
        None once the deadline has passed."""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            try:
                return self.lines.get(timeout=left)
            except queue.Empty:
                continue

    def lines_ready(self) -> Iterator[bytes]:
        """The whole lines read already and not yet taken, without waiting; an end of output or
        an over-long line stays queued for :meth:`read`."""
        for _ in range(self.lines.qsize()):
            try:
                kind, raw = self.lines.get_nowait()
            except queue.Empty:
                return
            if kind != Read.LINE:
                self.lines.put((kind, raw))  # seen when the answer is read
                return
            yield raw

    def send(self, line: str) -> None:
        if not self.stopped:
            self.outbox.put(line.encode("utf-8") + b"\n")

    def exit_text(self, wait: float) -> str:
        """What became of a program whose output ended."""
        try:
            code = self.proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return "closed its output"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        if code == 0:
            return "exited (code 0)"
        return f"crashed with exit code {code}"

    def stop(self, grace: float = 0.0) -> None:
        """Say quit (with a grace period), then kill the process group and reap it.

        A second call waits until the first is done, so after any call returns
        the program and its process group are gone."""
        with self._lock:
            first = not self.stopped
            self.stopped = True
        if not first:
            self._done.wait()
            return
        try:
            self._stop(grace)
        finally:
            self._done.set()

    def _stop(self, grace: float) -> None:
        proc = self.proc
        if grace > 0 and proc.poll() is None:
            self.outbox.put(b"quit\n")
            self.outbox.put(None)  # then end of input
            try:
                proc.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        else:
            self.outbox.put(None)
        if hasattr(os, "killpg"):
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the group: whatever the bot started dies too
            except OSError:
                pass
        if proc.poll() is None:
            try:
                proc.kill()
            except OSError:
                pass
        proc.wait()  # reaped: no zombie
        # The reader ends at end of output; only then is its descriptor closed (closing it
        # under a blocked read could hand the number to another file).  A grandchild that
        # left the process group and kept the pipe open would keep it, and only it, open.
        deadline = time.monotonic() + 1.0
        while self.reader.is_alive() and time.monotonic() < deadline:
            try:
                while True:
                    self.lines.get_nowait()  # room for the reader to reach the end of the output
            except queue.Empty:
                pass
            self.reader.join(timeout=0.05)
        if proc.stdout is not None and not self.reader.is_alive():
            try:
                proc.stdout.close()
            except OSError:
                pass
        _children.discard(self)
