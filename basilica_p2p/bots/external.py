"""Bots in any language: a line protocol over a program's stdin and stdout.

``--bot cmd:PROGRAM`` runs PROGRAM (a command line, split like a shell
would but run without one) and speaks the protocol of protocol/BOTS.md with
it: a version handshake, ``newgame``, then for every decision the action
history, the public state as JSON, the legal actions and ``go``, answered by
``action <notation>``.

This module is the conversation; the program itself, as a child process
(started, its output read with deadlines, stopped whatever it does), is
:class:`~basilica_p2p.bots.process.BotProcess`, so a bot that hangs cannot
hang us.  A bot that crashes, answers late, answers an illegal action or
breaks the protocol raises :class:`~basilica_p2p.agent.BotFailed`, and its
side loses the game, as a built-in or ``module:Class`` bot that fails does.
"""

from __future__ import annotations

import json
import os
import shlex
import threading
import time
import weakref
from collections.abc import Sequence
from typing import IO, Any

from ..agent import BotFailed, bot_label, shown_quoted
from ..printable import cut, printable
from ..engine import Action, NotationError, Observation, format_action, parse_action
from .process import MAX_LINE, BotProcess, Read, parse_command

PROTOCOL = "basilica-bot"
VERSION = 1
DEFAULT_MOVE_TIME = 10.0  # seconds per decision
DEFAULT_HANDSHAKE_TIME = 10.0  # seconds to start and answer the handshake, and to answer newgame
ENV_MOVE_TIME = "BASILICA_BOT_TIME"
ENV_HANDSHAKE_TIME = "BASILICA_BOT_HANDSHAKE_TIME"
QUIT_GRACE = 1.0  # seconds a bot has to exit after quit before it is killed
FAIL_GRACE = 0.2  # the same after the error that ends a failed bot
NETWORK_SHARE = 0.8  # with --move-time T, our own bot must answer within this share of T


SCRIPT_SUFFIXES = frozenset({".py", ".sh", ".js", ".mjs", ".ts", ".rb", ".pl", ".php", ".lua", ".r", ".jl", ".jar",
                             ".bash"})


def public_label(bot: object) -> str:
    """How a network peer is told the bot's name: a ``cmd:`` bot by its program's file name only,
    ``cmd:mine``, so that the local path stays private.  For an interpreter
    (``cmd:python3 /home/me/bot.py``) that is the script's name."""
    label = bot_label(bot)
    if not label.startswith("cmd:"):
        return label
    argv = [str(a) for a in bot.argv] if isinstance(bot, ExternalBot) else []
    if not argv:
        try:
            argv = shlex.split(label[4:])
        except ValueError:
            argv = label[4:].split()
    interpreters = {"python", "pypy", "node", "ruby", "perl", "sh", "bash", "dash", "zsh", "java", "php", "lua",
                    "rscript", "julia", "deno", "bun", "env"}
    def interpreter(name: str) -> bool:
        return name.lower().removesuffix(".exe").rstrip("0123456789.w") in interpreters

    # Only the program's own file name, or a script's when an interpreter runs one; any
    # other word (a path, an option's value, KEY=secret) may be private and is never sent.
    program = ""
    for i, word in enumerate(argv):
        name = os.path.basename(word.replace("\\", "/").rstrip("/"))
        if i == 0:
            program = name
            if not interpreter(name):
                break
            continue
        if word == "-c":
            break  # code on the command line: the interpreter's name only
        if word.startswith("-") or "=" in word or not name:
            continue
        if os.path.splitext(name)[1].lower() in SCRIPT_SUFFIXES:
            program = name
            break
        if not interpreter(name):
            break
        program = name
    return "cmd:" + (printable(program, 40, bad="") or "bot")


def _env_seconds(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number of seconds") from None
    if not 0 < value <= 86400:
        raise ValueError(f"{name}={raw!r}: seconds must be above 0 and at most 86400")
    return value


def limits_from_env() -> tuple[float, float]:
    """(seconds per decision, seconds for the handshake) from the environment or the defaults."""
    return _env_seconds(ENV_MOVE_TIME, DEFAULT_MOVE_TIME), _env_seconds(ENV_HANDSHAKE_TIME, DEFAULT_HANDSHAKE_TIME)


class ExternalBot:
    """A bot that is a separate program speaking protocol/BOTS.md on stdin/stdout.

    The program is started on the first decision (so building the bot to check
    a name starts nothing) and stopped by :meth:`close`, on failure, when the
    bot is garbage collected, or at exit.
    """

    blocking = True  # waits on another process: the network session asks it in a worker thread

    def __init__(
        self,
        command: str | Sequence[str],
        seed: int = 0,
        *,
        move_time: float | None = None,
        handshake_time: float | None = None,
        stderr: IO[Any] | int | None = None,
    ) -> None:
        if isinstance(command, str):
            self.argv = parse_command(command)
            text = command.strip()
        else:
            self.argv = list(command)
            text = shlex.join(self.argv)
        env_move, env_handshake = limits_from_env()
        self.spec = "cmd:" + cut(text, 120)
        self.name = os.path.basename(self.argv[-1] if len(self.argv) > 1 else self.argv[0])[:40] or "cmd"
        self.seed = seed
        self.move_time = float(move_time) if move_time is not None else env_move
        self.handshake_time = float(handshake_time) if handshake_time is not None else env_handshake
        self.stderr = stderr  # None: the bot's stderr passes through to ours
        self._child: BotProcess | None = None
        self._finalizer: weakref.finalize | None = None
        self._failed: BotFailed | None = None
        self._seat: int | None = None  # in a game as this player, after newgame
        self._known = 0  # history length at our last decision, to tell a new game
        self.pid: int | None = None
        self._whole = False  # limit_time: one deadline for start, handshake and decision
        self._due = float("inf")  # that deadline, while a decision is under way

    @property
    def public_spec(self) -> str:
        """How a network peer is told this bot's name (its program's file name only)."""
        return public_label(self)

    # -- life cycle --

    def limit_time(self, seconds: float) -> None:
        """Lower the time per decision (network play: a share of --move-time).  The limit then
        covers the whole decision: starting the program and a new game's handshake included,
        so that the peer's move-time claim never crosses our late answer."""
        self.move_time = max(0.05, min(self.move_time, seconds))
        self._whole = True

    def _fail(self, what: str, player: int | None) -> BotFailed:
        e = BotFailed(self.spec, what, player)
        self._failed = e
        child = self._child
        if child is not None:
            # The bot may read why (its author may log it) while our side goes on at once;
            # close() waits for the stop to finish.
            child.send(f"error {cut(what, 200)}")
            threading.Thread(target=child.stop, args=(FAIL_GRACE,), daemon=True, name="bot-stop").start()
        return e

    def _start(self, player: int) -> BotProcess:
        try:
            child = BotProcess(self.argv, self.stderr)
        except OSError as e:
            raise self._fail(f"could not be started: {e.strerror or e}", player) from None
        self._child = child
        self.pid = child.proc.pid
        self._finalizer = weakref.finalize(self, child.stop, QUIT_GRACE)
        child.send(f"{PROTOCOL} {VERSION}")
        line = self._line(min(self._due, time.monotonic() + self.handshake_time), "the handshake",
                          self.handshake_time, player)
        words = line.split()
        if words[:3] != ["ok", PROTOCOL, str(VERSION)]:
            raise self._fail(f"broke the protocol: expected 'ok {PROTOCOL} {VERSION}', got {shown_quoted(line)}", player)
        for w in words[3:]:
            key, _, value = w.partition("=")
            if key == "name" and value:
                self.name = printable(value, 40, bad="") or self.name
        return child

    def close(self) -> None:
        """Say quit and stop the program (killed after a grace period); safe to call twice."""
        if self._finalizer is not None:
            self._finalizer()  # runs child.stop(QUIT_GRACE) once

    # -- talking --

    def _line(self, deadline: float, what: str, limit: float, player: int | None) -> str:
        """The bot's next meaningful line before ``deadline`` (info and blank lines skipped)."""
        child = self._child
        assert child is not None
        while True:
            got = child.read(deadline)
            if got is None:
                raise self._fail(f"did not answer {what} within {limit:g} s", player)
            kind, raw = got
            if kind == Read.EOF:
                raise self._fail(f"{child.exit_text(1.0)} before answering {what}", player)
            if kind == Read.LONG:
                raise self._fail(f"broke the protocol: a line longer than {MAX_LINE} bytes", player)
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                raise self._fail("broke the protocol: a line that is not UTF-8", player) from None
            if not line.strip() or line == "info" or line.startswith("info "):
                continue
            if line == "error" or line.startswith("error "):
                raise self._fail(f"gave up: {shown_quoted(line[6:].strip(), 120)}", player)
            return line

    def _unexpected(self, player: int) -> None:
        """A line that came while no answer was due breaks the protocol."""
        child = self._child
        assert child is not None
        for raw in child.lines_ready():
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            if line.strip() and not (line == "info" or line.startswith("info ")):
                if line == "error" or line.startswith("error "):
                    raise self._fail(f"gave up: {shown_quoted(line[6:].strip(), 120)}", player)
                raise self._fail(f"broke the protocol: {shown_quoted(line)} when no answer was due", player)

    def _new_game(self, obs: Observation) -> None:
        child = self._child
        assert child is not None
        yes = {True: "yes", False: "no"}
        child.send(f"newgame ruleset={obs.ruleset} festum={yes[obs.festum]} removal={yes[obs.festum_removal]} "
                   f"seat={obs.player + 1} manifest={obs.manifest_hash} seed={self.seed} "
                   f"time={int(self.move_time * 1000)}")
        line = self._line(min(self._due, time.monotonic() + self.handshake_time), "newgame", self.handshake_time,
                          obs.player)
        if line.split() != ["ready"]:
            raise self._fail(f"broke the protocol: expected 'ready', got {shown_quoted(line)}", obs.player)
        self._seat = obs.player

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if self._failed is not None:
            raise BotFailed(self.spec, f"failed before: {self._failed.what}", obs.player)
        player = obs.player
        self._due = time.monotonic() + self.move_time if self._whole else float("inf")
        child = self._child if self._child is not None else self._start(player)
        self._unexpected(player)
        if self._seat != player or len(obs.history) < self._known:
            self._new_game(obs)
        self._known = len(obs.history)
        pend = obs.pending
        moves = " ".join(format_action(a) for a in obs.history)
        options = " ".join(format_action(a) for a in legal)
        child.send(f"position {len(obs.history)}" + (f" {moves}" if moves else ""))
        child.send("state " + json.dumps(obs.describe(), separators=(",", ":")))
        child.send(f"legal {len(legal)} {options}")
        deadline = min(self._due, time.monotonic() + self.move_time)
        # The time left, which is the whole move time unless starting the program used some.
        ms = max(1, round((deadline - time.monotonic()) * 1000)) if self._whole else int(self.move_time * 1000)
        child.send(f"go time={ms} decision={pend.kind if pend else 'main'} turn={obs.turn}")
        line = self._line(deadline, "its decision", self.move_time, player)
        word, _, text = line.partition(" ")
        text = text.strip()
        if word != "action" or not text:
            raise self._fail(f"broke the protocol: expected 'action <notation>', got {shown_quoted(line)}", player)
        try:
            action = parse_action(text)
        except NotationError as e:
            raise self._fail(f"answered {shown_quoted(text)}, which is not an action ({e})", player) from None
        if action not in legal:
            raise self._fail(f"answered illegal action {shown_quoted(text)}", player)
        return action

    def game_over(self, scores: tuple[int, int], winner: int | None, end: str) -> None:
        """Tell a running bot the result (it need not answer)."""
        child = self._child
        if child is None or self._failed is not None:
            return
        w = "none" if winner is None else str(winner + 1)
        child.send(f"gameover winner={w} scores={scores[0]},{scores[1]} end={end.split(':')[0]}")
        self._seat = None


def make_external(command: str, seed: int) -> ExternalBot:
    """``cmd:COMMAND`` as given to make_bot (errors are ValueError with one line)."""
    return ExternalBot(command, seed)


