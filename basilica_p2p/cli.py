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
id_app = typer.Typer(help="Your identity: the Ed25519 key that signs your games.", no_args_is_help=True)
app.add_typer(id_app, name="id")
replay_app = typer.Typer(help="Look into replay files: the game move by move, or as JSON.", no_args_is_help=True)
app.add_typer(replay_app, name="replay")

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
    ctx: typer.Context,
    home: Optional[Path] = typer.Option(
        None, "--home", help="Where keys, known peers and replays are kept "
        "(default: $BASILICA_HOME, else ~/.config/basilica)."),
    version: bool = typer.Option(False, "--version", metavar="", callback=_version, is_eager=True,
                                 help="Show the version and exit."),
) -> None:
    ctx.obj = home


def home_of(ctx: typer.Context) -> Path:
    from .identity import home_dir

    root = ctx.find_root()
    return home_dir(root.obj if root.obj else None)


def load_manifests(paths: list[Path]) -> dict[str, Manifest]:
    """The default manifest and every one given with --manifest, by hash."""
    from .replay.verify import known_manifests

    return known_manifests([load_manifest_option(p) for p in paths])


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
    ctx: typer.Context,
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
    replay_dir: Optional[Path] = typer.Option(
        None, "--replay-dir", help="Write one signed, verifiable replay per game here (seeds then come from a "
        "real commit-reveal between two local identities, so games differ from run to run)."),
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
        identities = None
        if replay_dir is not None:
            from .identity import IdentityError, local_identity

            home = home_of(ctx)
            try:
                identities = (local_identity(home, "p1"), local_identity(home, "p2"))
            except (IdentityError, OSError) as e:
                raise fail(f"cannot make the local identities under {home}: {e}") from None
        summary = run_match(config, man, progress=not as_json, log=show and not as_json, keep_moves=show and as_json,
                            replay_dir=replay_dir, identities=identities)
    except (BotSpecError, EngineError) as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write replays to {replay_dir}: {e.strerror}") from None
    if as_json:
        typer.echo(json.dumps(summary.to_json(), indent=1))
    else:
        summary.render(Console(highlight=False))
    if summary.interrupted:
        raise typer.Exit(130)


@id_app.command("new")
def id_new(
    ctx: typer.Context,
    name: str = typer.Option("player", "--name", help="The name other players see (1-64 characters)."),
    force: bool = typer.Option(False, "--force", metavar="", help="Replace an existing identity (its key is lost)."),
) -> None:
    """Make a new Ed25519 key pair; the private key is stored with mode 0600 under --home."""
    from .identity import IdentityError, create_identity

    home = home_of(ctx)
    try:
        ident = create_identity(home, name, force=force)
    except IdentityError as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write under {home}: {e.strerror}") from None
    typer.echo(f"new identity {ident.name!r} in {home}")
    typer.echo(f"public key  {ident.public.hex()}")
    typer.echo(f"fingerprint {ident.fingerprint}")


@id_app.command("show")
def id_show(ctx: typer.Context) -> None:
    """Print your name, public key and its fingerprint (SHA-256, as ssh shows host keys)."""
    from .identity import IdentityError, load_identity

    try:
        ident = load_identity(home_of(ctx))
    except IdentityError as e:
        raise fail(str(e)) from None
    typer.echo(f"name        {ident.name}")
    typer.echo(f"public key  {ident.public.hex()}")
    typer.echo(f"fingerprint {ident.fingerprint}")


@app.command("verify")
def verify(
    files: list[Path] = typer.Argument(..., help="Replay files to check."),
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print one JSON verdict per file, as a list."),
    manifest: list[Path] = typer.Option([], "--manifest", help="A manifest the games may use (repeatable)."),
) -> None:
    """Check replays end to end: signatures, hash chain, commit-reveal, every action, every state hash, the result.

    Needs no private key and no network. Exit 0 if every file is a valid, finished game; 1 otherwise.
    """
    from .replay.verify import verify_file

    manifests = load_manifests(manifest)
    verdicts = [verify_file(path, manifests) for path in files]
    if as_json:
        typer.echo(json.dumps([v.to_json() for v in verdicts], indent=1))
    else:
        for v in verdicts:
            typer.echo(v.line(), err=not v.ok)
    if not all(v.ok for v in verdicts):
        raise typer.Exit(1)


def _walk(path: Path, manifest: list[Path]):  # type: ignore[no-untyped-def]
    from .replay.file import ReplayError
    from .replay.show import walk

    try:
        return walk(path, load_manifests(manifest))
    except ReplayError as e:
        raise fail(f"{path}: {e}") from None


@replay_app.command("show")
def replay_show(
    file: Path = typer.Argument(..., help="A replay file."),
    at: Optional[int] = typer.Option(None, "--at", min=0, help="Also print the board after move N (0: the start)."),
    boards: bool = typer.Option(False, "--boards", metavar="", help="Print the board after every turn."),
    manifest: list[Path] = typer.Option([], "--manifest", help="The manifest the game uses, if not the default."),
) -> None:
    """Print the game move by move in notation, with every scoring's breakdown."""
    from .render import render_board, render_scoring

    w = _walk(file, manifest)
    h = w.replay.header
    typer.echo(f"{h.players[0][1]} (player 1) vs {h.players[1][1]} (player 2), {h.ruleset}"
               f"{' + festum' if h.festum else ''}, game {h.game.hex()[:16]}")
    if at is not None and at > len(w.moves):
        raise fail(f"--at {at}: the replay has {len(w.moves)} moves")
    if at == 0 and w.start is not None:
        typer.echo(render_board(w.start))
    scorings = 0
    for i, m in enumerate(w.moves, start=1):
        typer.echo(f"{i:>4}. turn {m.turn:>2}  P{m.player + 1}  {m.action}")
        for e in m.events:
            if e.kind == "scoring":
                scorings += 1
                typer.echo(render_scoring(m.game.scoring_log[scorings - 1], scorings))
            elif e.kind != "game-over":
                typer.echo(f"        {e.detail}")
        turn_ends = i == len(w.moves) or w.moves[i].turn != m.turn
        if at == i or (boards and turn_ends):
            typer.echo(render_board(m.game))
    if w.error:
        raise fail(f"the replay stops verifying at {w.error}", code=1)
    o = w.outcome
    if o is None:
        typer.echo("the game is not finished")
    elif o.end == "forfeit":
        typer.echo(f"player {2 - (o.winner or 0)} forfeited: {o.reason}")
    else:
        typer.echo(f"game over ({o.end}): {o.scores[0]} - {o.scores[1]}")


@replay_app.command("export")
def replay_export(
    file: Path = typer.Argument(..., help="A replay file."),
    fmt: str = typer.Option("json", "--format", help="Output format (json)."),
    out: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here instead of standard output."),
    manifest: list[Path] = typer.Option([], "--manifest", help="The manifest the game uses, if not the default."),
) -> None:
    """Write the game as plain JSON: header, moves in notation, per-move state hashes, result."""
    from .replay.show import export_json

    if fmt != "json":
        raise fail(f"unknown format {fmt!r} (json is the only one)")
    w = _walk(file, manifest)
    text = json.dumps(export_json(w), indent=1) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        try:
            out.write_text(text)
        except OSError as e:
            raise fail(f"cannot write {out}: {e.strerror}") from None


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
