"""Games as Ray tasks on an existing Ray cluster (``basilica tournament --ray auto|ADDRESS``).

:func:`executor_for` picks where jobs run: ``--jobs`` local processes, or with
``--ray`` a :class:`RayPool`.  Ray itself is the optional extra
``pip install 'basilica-p2p[ray]'``, imported only when ``--ray`` is given.
:class:`RayPool` is an :class:`~basilica_p2p.executor.Executor`: each task
plays one game (or one crown count of ``calibrate``) from its own seed and
returns its result, and the driver writes every file, so a tournament on a
cluster gives the same standings and files as one on this machine.

What the workers get (docs/cluster.md):

* this package, shipped as a Ray ``py_modules`` entry, so they run the
  driver's code whatever they have installed (its dependencies they must have);
* the source of every ``module:Class`` bot: a ``.py`` file or a package folder
  is copied into the job's working directory, which is on the workers' import
  path; anything else (a compiled module, a zip) is refused;
* for ``cmd:PROGRAM`` bots, every file named by a relative path in the command
  (``cmd:python3 bots/mine.py``, ``cmd:./mybot``), copied to the same place in
  that working directory, which is the workers' current directory.  Programs
  found on PATH or by an absolute path must already be on every node;
* for ``policy:PATH`` bots, the model file, the same way (a relative path is
  shipped, an absolute one must be on every node).

Before any game, one task on every node builds every bot there, so a bot that
cannot be imported or whose program is missing on some node is refused with
one line naming the node, not discovered as a forfeit in every game.

:func:`local_cluster` starts a throwaway cluster of a few nodes on this machine
(for the tests and ``benchmarks/ray_tournament.py``) and stops exactly the
processes it started.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from .bots import BotSpecError, make_bot, parse_command
from .executor import Executor, LocalPool, stop_processes

T = TypeVar("T")
R = TypeVar("R")

INSTALL_HINT = "pip install 'basilica-p2p[ray]'"
CANCEL_SECONDS = 10.0  # at most this long for cancelled games to unwind after Ctrl-C
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


class ClusterError(Exception):
    """A cluster cannot be used, or a bot cannot be shipped to it: a one-line reason."""



def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ClusterError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from None
    return ray


def stage_bots(bots: Sequence[str], folder: Path) -> None:
    """Copy into ``folder`` what the workers need to build ``bots``; ClusterError if a bot cannot be shipped."""
    for spec in bots:
        text = spec.strip()
        kind = text.partition(":")[0].strip().lower()
        if kind in ("random", "greedy", "mcts"):
            continue
        if kind == "cmd":
            _stage_command(text, text[4:], folder)
        elif kind == "policy":
            _stage_file(text, text.partition(":")[2].strip(), folder)
        elif ":" in text:
            _stage_module(text, text.partition(":")[0].strip(), folder)


def _stage_module(spec: str, module: str, folder: Path) -> None:
    top = module.partition(".")[0]
    if top == __package__:
        return  # shipped as a whole anyway
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError) as e:
        raise ClusterError(f"cannot ship bot {spec!r}: cannot find module {top!r} ({e})") from None
    if found is None:
        raise ClusterError(f"cannot ship bot {spec!r}: no module {top!r} on this machine's import path")
    places = list(found.submodule_search_locations or [])
    if found.origin and found.origin.endswith(".py") and not places and os.path.isfile(found.origin):
        shutil.copy2(found.origin, folder / f"{top}.py")
    elif len(places) == 1 and os.path.isdir(places[0]) and os.path.isfile(os.path.join(places[0], "__init__.py")):
        shutil.copytree(places[0], folder / top, ignore=_IGNORED, dirs_exist_ok=True)
    else:
        what = found.origin or "a namespace package"
        raise ClusterError(f"cannot ship bot {spec!r} to the Ray workers: module {top!r} is not a .py file or a "
                           f"package folder ({what}), the only sources that can be shipped")


def _stage_command(spec: str, command: str, folder: Path) -> None:
    try:
        argv = parse_command(command)
    except ValueError as e:
        raise ClusterError(f"bot {spec!r}: {e}") from None
    for word in argv:
        _stage_file(spec, word, folder)


def _stage_file(spec: str, word: str, folder: Path) -> None:
    """Copy ``word`` to the same relative place in ``folder`` if it names a file by a relative path;
    anything else (an option, a program on PATH, an absolute path) every node must have itself."""
    if os.path.isabs(word) or not os.path.isfile(word):
        return
    place = os.path.normpath(word)
    if place.startswith(".."):
        raise ClusterError(f"cannot ship bot {spec!r}: {word!r} is outside the current folder; run from a "
                           "folder that holds it, or install it on every node under one absolute path")
    (folder / place).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(word, folder / place)


def check_bots(bots: list[str]) -> str | None:
    """Build every bot here (runs on each node): None, or why one cannot be built."""
    from .engine import default_manifest

    for spec in bots:
        try:
            make_bot(spec, default_manifest(), 0)
        except BotSpecError as e:
            return f"{spec}: {e}"
    return None


class RayPool:
    """Tasks on the Ray cluster at ``address`` (``auto``: the one this machine belongs to).

    A context manager: entering connects and ships the bots (ClusterError if it cannot),
    leaving disconnects.  The cluster itself is never started or stopped here.
    """

    def __init__(self, address: str, bots: Sequence[str] = ()) -> None:
        self.address = address
        self.bots = list(bots)
        self._ray: Any = None
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> RayPool:
        ray = import_ray()
        import basilica_p2p

        self._folder = tempfile.TemporaryDirectory(prefix="basilica-ray-")
        try:
            folder = Path(self._folder.name)
            stage_bots(self.bots, folder)
            _reachable(self.address)
            env: dict[str, Any] = {"py_modules": [basilica_p2p], "excludes": ["__pycache__", "*.pyc"]}
            if any(folder.iterdir()):
                env["working_dir"] = str(folder)
            try:
                ray.init(address=self.address, runtime_env=env, logging_level=logging.ERROR,
                         configure_logging=True, log_to_driver=True)
            except Exception as e:  # ConnectionError, ValueError, RuntimeError: all mean no usable cluster
                raise ClusterError(f"cannot use the Ray cluster at {self.address!r}: {_first_line(e)}") from None
            self._ray = ray
            self._check_nodes()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def _check_nodes(self) -> None:
        ray = self._ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) >= 1]
        if not nodes:
            raise ClusterError(f"the Ray cluster at {self.address!r} has no node with a free CPU for games")
        check = ray.remote(check_bots)
        answers = ray.get([check.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
                           .remote(self.bots) for n in nodes])
        for node, why in zip(nodes, answers):
            if why is not None:
                raise ClusterError(f"bot {why} (on the Ray node {node.get('NodeManagerAddress', '?')}); "
                                   "a cmd: program must be on every node, or named by a relative path to ship it")

    @property
    def cpus(self) -> int:
        assert self._ray is not None, "use RayPool as a context manager"
        return int(self._ray.cluster_resources().get("CPU", 0))

    def run(self, fn: Callable[[T], R], items: Sequence[T]) -> Generator[R, None, None]:
        assert self._ray is not None, "use RayPool as a context manager"
        ray = self._ray
        task = ray.remote(fn).options(num_cpus=1)
        pending = [task.remote(item) for item in items]
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1)
                try:
                    value = ray.get(ready[0])
                except ray.exceptions.RayError as e:
                    raise ClusterError(f"a task failed on the Ray cluster: {_first_line(e)}") from None
                yield value
        finally:
            for ref in pending:
                # A running game gets KeyboardInterrupt and closes its bot programs; a queued one never starts.
                ray.cancel(ref)
            if pending:
                # Until the cancellations have landed: a driver that disconnects first has its running
                # tasks' workers killed outright, and their bot programs are never closed.
                ray.wait(pending, num_returns=len(pending), timeout=CANCEL_SECONDS)


def executor_for(jobs: int, ray: str | None = None, bots: Sequence[str] = ()) -> AbstractContextManager[Executor]:
    """Where to play: ``jobs`` local processes, or, with ``ray`` (``auto`` or an address), that Ray
    cluster, ``bots`` shipped to it (entering raises ClusterError if it cannot be used)."""
    if ray is None:
        return nullcontext(LocalPool(jobs))
    return RayPool(ray, bots)


def _reachable(address: str) -> None:
    """ClusterError unless something listens at HOST:PORT: ray.init would retry an unreachable
    address for minutes.  ``auto`` and ``ray://`` addresses are left to Ray."""
    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterError(f"--ray takes auto or HOST:PORT (the head node's GCS address), not {address!r}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as e:
        raise ClusterError(f"cannot reach the Ray cluster at {address}: {e.strerror or e}") from None


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:300]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _processes(groups: set[int]) -> set[int]:
    """Every live process in the process groups ``groups`` or below one of them (Linux /proc):
    Ray's workers start sessions of their own, but stay children of their node's raylet."""
    parent: dict[int, int] = {}
    group: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rpartition(")")[2].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parent[int(entry.name)], group[int(entry.name)] = int(fields[1]), int(fields[2])
    found = {pid for pid, g in group.items() if g in groups}
    while more := {pid for pid, p in parent.items() if p in found} - found:
        found |= more
    return found


# Ray's token authentication (2.5x on): the mode and the token every process of a cluster must share.
AUTH_MODE = "RAY_AUTH_MODE"
AUTH_TOKEN = "RAY_AUTH_TOKEN"


@contextmanager
def local_cluster(nodes: int = 2, cpus: int = 1) -> Iterator[str]:
    """A Ray cluster of ``nodes`` nodes with ``cpus`` CPUs each on this machine; yields its address.

    Started by the ``ray`` next to this Python (so the workers run this Python), in a
    temporary folder of its own, every node in a session of its own; afterwards exactly
    those processes and their children are stopped, by id (``ray stop`` would stop every
    Ray cluster of this user).  ClusterError if one cannot start or any process is left.

    The cluster has a token of its own, whatever ``~/.ray/auth_token`` or the environment
    holds: Ray 2.5x turns token authentication on for a head node when that file exists
    (and any ``ray.init()`` writes it), but not for the nodes that join, which were then
    refused.  Every node gets the mode and the token in its environment, and so does this
    process's environment while the cluster runs, so that a driver started inside the
    block, here or in a child process, connects with it; ``~/.ray`` is never read or written.
    """
    ray = str(Path(sys.executable).parent / "ray")
    # A short folder: Ray's socket paths below it must stay under the 107-byte limit.
    folder = tempfile.mkdtemp(prefix="bray-", dir="/tmp")
    port = _free_port()
    address = f"127.0.0.1:{port}"
    auth = {AUTH_MODE: "token", AUTH_TOKEN: secrets.token_hex(32)}
    env = {**os.environ, **auth, "RAY_USAGE_STATS_ENABLED": "0"}
    groups: set[int] = set()
    saved = {k: os.environ.get(k) for k in auth}

    def start(*args: str) -> None:
        proc = subprocess.Popen([ray, "start", *args, f"--num-cpus={cpus}", "--disable-usage-stats",
                                 "--node-ip-address=127.0.0.1"], env=env, start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        groups.add(proc.pid)  # a new session: the node's daemons all share this process group
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise ClusterError(f"ray start {' '.join(args[:1])} failed: {(out.strip().splitlines() or ['?'])[-1]}")

    try:
        start("--head", f"--port={port}", f"--temp-dir={folder}", "--include-dashboard=false",
              f"--ray-client-server-port={_free_port()}")
        for _ in range(nodes - 1):
            start(f"--address={address}")
        os.environ.update(auth)
        yield address
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        ours = stop_processes(_processes(groups), 5.0, lambda pids: pids & _processes(groups | pids))
        shutil.rmtree(folder, ignore_errors=True)
        if ours:
            raise ClusterError(f"Ray processes left running: {sorted(ours)}")
