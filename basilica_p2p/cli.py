"""The ``basilica`` command line: a thin edge over the engine, bots and matches.

Every command turns expected failures (bad files, bad options) into one
line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from . import __version__
from .engine import EngineError, Manifest, Ruleset, default_manifest, parse_manifest

app = typer.Typer(
    help="Play Basilica peer to peer, with replays anyone can verify.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
rules_app = typer.Typer(help="Work with the rules: score a written cathedral position.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")

def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)  # plain: rich would wrap a long line
    return typer.Exit(code)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"basilica {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", metavar="", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    pass


def load_manifest_option(path: Optional[Path]) -> Manifest:
    """The shipped manifest, or a user's own (the component list of their box)."""
    if path is None:
        return default_manifest()
    text = read_input(path, "manifest")
    try:
        return parse_manifest(text)
    except EngineError as e:
        raise fail(f"{path}: {e}") from None


def read_input(path: Path, what: str) -> str:
    """A text file (or stdin for ``-``) as UTF-8; failures become one-line errors."""
    try:
        data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except OSError as e:
        raise fail(f"cannot read {what} {path}: {e.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise fail(f"cannot read {what} {path}: not UTF-8 text") from None


@rules_app.command("score")
def rules_score(
    position: Path = typer.Argument(..., help="A cathedral position as JSON (format in docs/notation.md); - for stdin."),
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print the breakdown as JSON instead of a table."),
) -> None:
    """Score a written cathedral position: every area with a builder, and the totals.

    Bad input exits with status 2 and one line naming the problem and the cell.
    """
    from .position import load_position, render_table, report_json, score_position

    text = read_input(position, "position")
    try:
        pos = load_position(text)
        result = score_position(pos)
    except EngineError as e:
        raise fail(str(e)) from None
    if as_json:
        typer.echo(json.dumps(report_json(result)))
    else:
        render_table(result, Console(highlight=False))


@app.command("match")
def match(
    p1: str = typer.Option("greedy", "--p1", help="Bot for player 1: random or greedy."),
    p2: str = typer.Option("random", "--p2", help="Bot for player 2: random or greedy."),
    games: int = typer.Option(1, "--games", "-n", min=1, max=1_000_000, help="Number of games to play."),
    seed: str = typer.Option("0", "--seed", help="Any text; every game's seed is derived from it."),
    ruleset: Ruleset = typer.Option(Ruleset.PORTAL2022.value, "--ruleset", case_sensitive=False,
                                    help="classic (2010) or portal2022."),
    festum: bool = typer.Option(False, "--festum", metavar="", help="Play with the Festum Fatuorum expansion (portal2022)."),
    festum_removal: bool = typer.Option(False, "--festum-removal", metavar="", help="With --festum: remove 6 random tiles."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Your own component manifest (JSON)."),
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print the summary and each game's result as JSON."),
    show: bool = typer.Option(False, "--show", metavar="", help="Print each game's actions and scorings as it is played "
                              "(with --json: add each game's moves to the JSON)."),
) -> None:
    """Play headless games between two bots on this machine and summarise them.

    The same arguments always give the same games and the same results.
    """
    from .bots import BotSpecError
    from .match import MatchConfig, run_match

    man = load_manifest_option(manifest)
    try:
        config = MatchConfig(p1=p1.strip().lower(), p2=p2.strip().lower(), games=games, seed=seed, ruleset=ruleset,
                             festum=festum, festum_removal=festum_removal)
        summary = run_match(config, man, progress=not as_json, log=show and not as_json, keep_moves=show and as_json)
    except (BotSpecError, EngineError) as e:
        raise fail(str(e)) from None
    if as_json:
        typer.echo(json.dumps(summary.to_json(), indent=1))
    else:
        summary.render(Console(highlight=False))
    if summary.interrupted:
        raise typer.Exit(130)


def _is_usage_error(e: Exception) -> bool:
    # Typer's usage errors are click's (older typer) or a private copy of them
    # (newer typer); both carry exit_code 2 and format_message().
    return getattr(e, "exit_code", None) == 2 and callable(getattr(e, "format_message", None))


def main() -> None:
    """Entry point: usage errors are one line on stderr (status 2), never a box or a traceback."""
    try:
        code = app(prog_name="basilica", standalone_mode=False)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as e:
        if not _is_usage_error(e):
            raise
        message = " ".join(e.format_message().split())  # type: ignore[attr-defined]
        if not message:  # no arguments at all: the help was shown
            sys.exit(2)
        ctx = getattr(e, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.echo(f"error: {message}{hint}", err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
