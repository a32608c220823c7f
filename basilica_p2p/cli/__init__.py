"""The ``basilica`` command line: a thin edge over the engine, bots and matches.

Every command turns expected failures (bad files, bad options) into one
line on stderr and exit status 2, never a traceback.

One module per command group: play.py (play, host, join, resume, demo), games.py (match,
tournament), replays.py (verify, replay ...), identity.py (id ..., peers ...), rules.py
(rules ...); _common.py holds what several of them share, option declarations included.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer

from . import games, identity, play, replays, rules, watching
from ._common import CODE_SERVERS, HELP_NAMES, _report_games, fail, home_of, load_manifest_option, load_manifests, read_input
from ._root import _is_usage_error, _leave, _Root, _version

# What tests and scripts import from basilica_p2p.cli, whichever module now holds it.
__all__ = ["app", "main", "fail", "home_of", "load_manifest_option", "load_manifests", "read_input", "_report_games"]
app = typer.Typer(
    cls=_Root,
    help="Play Basilica peer to peer, with replays anyone can verify.",
    context_settings={"help_option_names": HELP_NAMES},
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    home: Optional[Path] = typer.Option(
        None, "--home", help="Where keys, known peers and replays are kept "
        "(default: $BASILICA_HOME, else ~/.config/basilica). May also follow the command; then that one wins."),
    version: bool = typer.Option(False, "--version", metavar="", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    ctx.obj = home

app.add_typer(rules.rules_app, name="rules")
app.add_typer(identity.id_app, name="id")
app.add_typer(replays.replay_app, name="replay")
app.add_typer(identity.peers_app, name="peers")
app.command("match")(games.match)
app.command("verify")(replays.verify)
app.command("host", epilog=CODE_SERVERS)(play.host_cmd)
app.command("join", epilog=CODE_SERVERS)(play.join_cmd)
app.command("tournament")(games.tournament_cmd)
app.command("play")(play.play_cmd)
app.command("demo")(play.demo_cmd)
app.command("resume")(play.resume_cmd)
app.command("watch")(watching.watch_cmd)


def main() -> None:
    """Entry point: usage errors are one line on stderr (status 2), never a box or a traceback."""
    try:
        code = app(prog_name="basilica", standalone_mode=False)
    except typer.Exit as e:
        _leave(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as e:
        if not _is_usage_error(e):
            raise
        message = " ".join(e.format_message().split())
        if not message:  # no arguments at all: the help was shown
            sys.exit(2)
        ctx = getattr(e, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.echo(f"error: {message}{hint}", err=True)
        sys.exit(2)
    # click returns an Exit's code rather than raising it
    _leave(code if isinstance(code, int) else 0)
