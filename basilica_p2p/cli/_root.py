"""The ``basilica`` group itself: its options accepted after any subcommand, quiet flags, and leaving
cleanly when a prompt thread still holds standard input."""

from __future__ import annotations

import sys
from typing import Protocol, TypeGuard

import typer
from typer.core import TyperGroup

from .. import __version__
from ._common import HELP_NAMES


class _Root(TyperGroup):
    """The ``basilica`` group: its own options (--home, --version) are also accepted after any subcommand.

    Each command and command group gets a copy of them that does not reach its function: a --home
    given after the subcommand replaces one given before it. Flags get no ``<bool>`` in the help,
    and -h is --help everywhere.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        shared = [p for p in self.params if p.name in ("home", "version")]
        for command in self.commands.values():
            _share_options(command, shared)
        _quiet_flags(self)
        _one_line_paragraphs(self)


def _store_home(ctx, param, value):
    if value is not None:
        ctx.find_root().obj = value
    return value


def _share_options(command, shared) -> None:
    import copy

    for original in shared:
        if any(original.opts[0] in p.opts for p in command.params):
            continue
        p = copy.copy(original)
        p.expose_value = False
        if p.name == "home":
            p.callback = _store_home
            p.help = ("Where keys, known peers and replays are kept (default: $BASILICA_HOME, else "
                      "~/.config/basilica). Same as --home before the command; given both, this one wins.")
        command.params.append(p)
    for sub in getattr(command, "commands", {}).values():
        _share_options(sub, shared)
    _quiet_flags(command)


def _one_line_paragraphs(command) -> None:
    """Each paragraph of a command's help (its docstring) made one line, for the terminal to wrap.

    typer keeps the line breaks of a docstring after its first paragraph (and of the first
    paragraph in a group's list of commands), so a source line wrapped at 100 columns broke the
    help mid-sentence at every other width. A paragraph that starts with \\b keeps its lines.
    """
    import inspect

    if command.help:
        paragraphs = inspect.cleandoc(command.help).split("\n\n")
        command.help = "\n\n".join(p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs)
    for sub in getattr(command, "commands", {}).values():
        _one_line_paragraphs(sub)


def _quiet_flags(command) -> None:
    """No ``<bool>`` after a flag in the help (typer's own --help included)."""
    from types import SimpleNamespace

    help_option = command.get_help_option(SimpleNamespace(help_option_names=HELP_NAMES))
    for p in [*command.params, help_option]:
        if p is not None and getattr(p, "is_flag", False):
            p.metavar = ""


def _version(value: bool) -> None:
    if value:
        typer.echo(f"basilica {__version__}")
        raise typer.Exit()


class _UsageError(Protocol):
    exit_code: int

    def format_message(self) -> str: ...


def _is_usage_error(e: Exception) -> TypeGuard[_UsageError]:
    # Typer's usage errors are click's (older typer) or a private copy of them
    # (newer typer); both carry exit_code 2 and format_message().
    return getattr(e, "exit_code", None) == 2 and callable(getattr(e, "format_message", None))


def _leave(code: int = 130) -> None:
    """Exit (130 after Ctrl-C).  A person's prompt may still be waiting for a line of standard
    input in a worker thread (a daemon, abandoned by the game after Ctrl-C or when the peer
    left); that thread holds stdin's lock and the normal interpreter shutdown aborts with a
    fatal error trying to close it.  So, with other threads alive: run the exit hooks (they
    stop bot programs), flush, and leave without that shutdown."""
    import atexit
    import os
    import threading

    if threading.active_count() <= 1:
        sys.exit(code)
    run_hooks = getattr(atexit, "_run_exitfuncs", None)
    if callable(run_hooks):
        run_hooks()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
