"""``basilica match`` and ``basilica tournament``: headless games between bots on this machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from ..engine import EngineError, Ruleset, default_manifest
from ._common import (
    OPT_FESTUM, OPT_LOCAL_RULESET, OPT_MANIFEST, OPT_SEED, SHUFFLE_HELP, Shuffle, check_dealable, fail, home_of,
    load_manifest_option, match_seed, output_folder,
)


def match(
    ctx: typer.Context,
    p1: str = typer.Option("greedy", "--p1", help="Bot for player 1: random, greedy, mcts[:time=S], module:Class "
                           "or cmd:PROGRAM (docs/bots.md)."),
    p2: str = typer.Option("random", "--p2", help="Bot for player 2 (as --p1)."),
    games: int = typer.Option(1, "--games", "-n", min=1, max=1_000_000, help="Number of games to play."),
    seed: Optional[str] = OPT_SEED,
    ruleset: Ruleset = OPT_LOCAL_RULESET,
    festum: bool = typer.Option(False, "--festum", metavar="", help="Play with the Festum Fatuorum expansion (portal2022)."),
    festum_removal: bool = typer.Option(False, "--festum-removal", metavar="", help="With --festum: remove 6 random tiles."),
    manifest: Optional[Path] = OPT_MANIFEST,
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print the summary and each game's result as JSON."),
    replay_dir: Optional[Path] = typer.Option(
        None, "--replay-dir", "-o", help="Write one signed, verifiable replay per game here (seeds then come from a "
        "real commit-reveal between two local identities, so games differ from run to run)."),
    show: bool = typer.Option(False, "--show", metavar="", help="Print each game's actions and scorings as it is played "
                              "(with --json: add each game's moves to the JSON)."),
    shuffle: Shuffle = typer.Option(Shuffle.COMMIT_REVEAL.value, "--shuffle", case_sensitive=False, metavar="SCHEME",
                                    help=SHUFFLE_HELP + " With --replay-dir the replays are dealt by it (and "
                                    "verify with 'deal audited'); without, a hidden deal is still played through "
                                    "the whole protocol, into a temporary replay that is then deleted."),
) -> None:
    """Play headless games between two bots on this machine and summarise them.

    The same arguments always give the same games and the same results (without --replay-dir).
    """
    from ..bots import BotSpecError
    from ..match import MatchConfig, run_match

    man = load_manifest_option(manifest)
    try:
        # Built-in names are case-blind; module:Class and cmd:PROGRAM keep their case.
        p1, p2 = (b.strip() if ":" in b else b.strip().lower() for b in (p1, p2))
        seed = match_seed(seed, [p1, p2])
        config = MatchConfig(p1=p1, p2=p2, games=games, seed=seed, ruleset=ruleset,
                             festum=festum, festum_removal=festum_removal, shuffle=shuffle.value)
        check_dealable(man, config.options(), config.shuffle, manifest)
        identities = None
        if replay_dir is not None:
            from ..identity import IdentityError, local_identity

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


def tournament_cmd(
    ctx: typer.Context,
    bots: str = typer.Option(..., "--bots", help="Comma-separated bots, e.g. random,greedy,mymod:MyBot."),
    games: int = typer.Option(10, "--games", "-n", min=1, max=100_000, help="Games per pair of bots."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, max=64, help="Worker processes."),
    seed: Optional[str] = OPT_SEED,
    ruleset: Ruleset = OPT_LOCAL_RULESET,
    festum: bool = OPT_FESTUM,
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Folder for tournament.json and standings.csv; "
                                       "results already there are replaced (default: tournaments/SEED under "
                                       "--home, or SEED-2, -3, ... if that holds an earlier run)."),
    shuffle: Shuffle = typer.Option(Shuffle.COMMIT_REVEAL.value, "--shuffle", case_sensitive=False, metavar="SCHEME",
                                    help=SHUFFLE_HELP + " A hidden deal plays each game through the whole protocol "
                                    "(no replay is kept)."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="auto|ADDRESS", help="Play the games as tasks on this "
                                      "running Ray cluster instead of --jobs processes (docs/cluster.md)."),
) -> None:
    """A round robin between bots in worker processes: wins, draws, losses, forfeits, Elo with 95% intervals.

    The same arguments give the same results, whatever --jobs is, and with --ray.
    Ctrl-C stops the games still running; the finished ones are shown and saved.
    Without --out a rerun never overwrites an earlier one: it goes to the next free folder, named in the last line.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Table

    from ..bots import BotSpecError, make_bot
    from ..engine import Options
    from ..cluster import ClusterError, executor_for
    from ..tournament import OUTPUT_FILES, fresh_folder, play_tournament, save, standings

    names = [b.strip() for b in bots.split(",") if b.strip()]
    if len(names) < 2 or len(set(names)) != len(names):
        raise fail("--bots needs at least two different bots, e.g. --bots random,greedy")
    seed = match_seed(seed, names)
    try:
        for b in names:
            make_bot(b, default_manifest(), 0)
        options = Options(ruleset, festum)
    except (BotSpecError, EngineError) as e:
        raise fail(str(e)) from None
    console = Console(highlight=False)
    try:
        with executor_for(jobs, ray, names) as executor, Progress(
                TextColumn("games"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("games", total=len(names) * (len(names) - 1) // 2 * games)
            played = play_tournament(names, games, seed, options, executor,
                                     on_progress=lambda done, total: bar.update(task, completed=done),
                                     shuffle=shuffle.value)
    except ClusterError as e:
        raise fail(str(e)) from None
    results = played.results
    if not results:
        raise fail("interrupted before any game finished", code=130)
    table_rows = standings(names, results)
    n = len(results)
    stop = f" (interrupted: {n} game{'s' if n != 1 else ''} finished)" if played.interrupted else ""
    table = Table(title=f"round robin, {games} games per pair, seed {seed!r}, dealt by {shuffle.value}{stop}",
                  show_edge=False)
    for col in ("bot", "games", "wins", "draws", "losses", "forfeits", "Elo", "95% interval"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for s in table_rows:
        table.add_row(s.bot, str(s.games), str(s.wins), str(s.draws), str(s.losses), str(s.forfeits), f"{s.elo:.0f}",
                      f"{s.elo_low:.0f} to {s.elo_high:.0f}")
    console.print(table)
    folder = out if out is not None else fresh_folder(output_folder(ctx, None, "tournaments") / folder_name(seed))
    replaced = out is not None and any((out / name).exists() for name in OUTPUT_FILES)
    try:
        json_path, csv_path = save(folder, names, games, seed, options, results, table_rows, shuffle.value)
    except OSError as e:
        raise fail(f"cannot write the results to {folder}: {e.strerror or e}", code=1) from None
    note = " (replacing the results of an earlier run)" if replaced else ""
    typer.echo(f"saved {json_path} and {csv_path}{note}")  # one line: rich would wrap a long path
    if played.interrupted:
        raise typer.Exit(130)


def folder_name(seed: str) -> str:
    """The seed as one folder name: any text may be a seed, but '../x' or 'a/b' must not leave tournaments/."""
    import re

    return re.sub(r"[^\w.-]", "-", seed).strip(".")[:80] or "seed"
