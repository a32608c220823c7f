"""Where independent jobs run (games, crown counts, replay analyses): an :class:`Executor`.

:class:`LocalPool` runs them in worker processes on this machine;
``basilica_p2p.cluster.RayPool`` is the other executor, tasks on a Ray cluster,
and ``cluster.executor_for`` picks one from the command line's ``--jobs`` and
``--ray``.  Either way each job is a pure function of its item, and the results
come back to the driver, which writes every file.  :func:`gather` feeds a
driver the results as they come; Ctrl-C or SIGTERM stops the jobs still running
and keeps the finished ones.

Local workers are started fresh (forkserver, or spawn where there is none),
never forked from this process: a bot built here may have started threads
(torch's pool does), and a forked copy of a process with threads can block
forever on a lock one of them held.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn, Protocol, TypeVar

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    """Somewhere to run independent jobs (games, crown counts): this machine or a cluster."""

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Generator[R, None, None]:
        """``fn(item)`` for every item, yielded as each finishes.  Leaving the iteration early
        (Ctrl-C included) stops what is still running; a running game closes its bot programs."""
        ...


def _stop_worker(signum: int, frame: Any) -> NoReturn:
    # SystemExit, not KeyboardInterrupt: a game unwinds (its bot programs are closed) and
    # an idle worker ends quietly, where a KeyboardInterrupt would print a traceback.
    # Ignoring SIGTERM from now on also marks this worker as stopped for _in_worker.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise SystemExit(0)


def _worker_started(pids: Any) -> None:
    # Ctrl-C in a terminal reaches the whole process group; only the driver acts on it
    # and stops the workers by SIGTERM, as a Ray cluster's tasks are stopped by ray.cancel.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop_worker)
    pids.put(os.getpid())


def _in_worker(fn: Callable[[T], R], item: T) -> R:
    # The pool hands a worker its next job ahead of time; a stopped worker must not start it.
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        raise SystemExit(0)
    return fn(item)


STOP_GRACE = 5.0  # seconds a worker has to unwind after SIGTERM before it is killed


def worker_context() -> Any:
    """How local workers start: a fresh interpreter (forkserver, else spawn), never a fork of
    this process, which may hold threads (a bot's torch pool) whose locks a fork would copy held."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _running(pids: set[int]) -> set[int]:
    alive = set()
    for pid in pids:
        try:
            os.kill(pid, 0)
        except (ProcessLookupError, PermissionError):  # gone, or the pid now belongs to another user
            continue
        alive.add(pid)
    return alive


def stop_processes(pids: set[int], grace: float, running: Callable[[set[int]], set[int]] = _running) -> set[int]:
    """SIGTERM to ``pids``, then SIGKILL to those ``running`` still finds after ``grace`` seconds (a
    process blocked in native code never runs Python's signal handler); returns any left after that."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while (pids := running(pids)) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not pids:
            break
    return pids


@dataclass(frozen=True)
class LocalPool:
    """``jobs`` worker processes on this machine; with one job, everything runs in this process."""

    jobs: int = 1

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Generator[R, None, None]:
        if self.jobs <= 1 or len(items) <= 1:
            for item in items:
                yield fn(item)
            return
        ctx = worker_context()
        pids: Any = ctx.SimpleQueue()
        pool = ProcessPoolExecutor(max_workers=min(self.jobs, len(items)), mp_context=ctx,
                                   initializer=_worker_started, initargs=(pids,))
        finished = False
        try:
            futures = [pool.submit(_in_worker, fn, item) for item in items]
            for f in as_completed(futures):
                yield f.result()
            finished = True
        finally:
            pool.shutdown(wait=False, cancel_futures=True)
            if not finished:
                started = set()
                while not pids.empty():
                    started.add(pids.get())
                stop_processes(started, STOP_GRACE)
            pool.shutdown(wait=True)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM handled as Ctrl-C while the block runs (in the main thread): the driver stops its
    workers and keeps what finished, instead of dying and leaving them running."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> NoReturn:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def gather(executor: Executor, fn: Callable[[T], R], items: Sequence[T],
           on_result: Callable[[R], None]) -> bool:
    """Feed ``on_result`` every result as it comes; True if Ctrl-C or SIGTERM stopped it first."""
    jobs = executor.run(fn, items)
    try:
        with sigterm_as_interrupt():
            for r in jobs:
                on_result(r)
    except KeyboardInterrupt:
        return True
    finally:
        jobs.close()
    return False

