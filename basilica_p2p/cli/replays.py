"""``basilica verify`` and ``basilica replay``: checking replays and looking into them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ._common import fail, load_manifests, output_folder


AROUND = 6  # moves shown before and after --at N: two turns of three actions each way

replay_app = typer.Typer(help="Look into replay files: the game move by move, as JSON, or as a web page.",
                         no_args_is_help=True)


def verify(
    files: list[Path] = typer.Argument(None, metavar="FILE...", show_default=False,
                                       help="Replay files to check, and evidence files to confirm."),
    as_json: bool = typer.Option(False, "--json", metavar="", help="Print one JSON verdict per file, as a list."),
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="A manifest the games may use (repeatable)."),
    evidence: Optional[Path] = typer.Option(
        None, "--evidence", metavar="FILE",
        help="With replay files: if two files of one game hold two histories signed by one key, write the "
        "proof to FILE (which must not exist). Alone: FILE is such a proof; confirm it."),
) -> None:
    """Check replays end to end: signatures, hash chain, commit-reveal, every action, every state hash, the result.

    Files of one game are also checked against each other: they must agree, or one be a prefix of the other. Where two part, every key that signed records on both branches is named: proof of cheating.

    Evidence files (written by --evidence or by a live game) are recognised and confirmed.

    Needs no private key and no network. Exit 0 if every replay is a valid, finished game, the replays of each game agree and every evidence file is confirmed; 1 otherwise.
    """
    from ..replay import agreements, check_evidence, find_forks, is_evidence_file, verify_file

    files = list(files or [])
    proofs = [p for p in files if is_evidence_file(p)]
    replays = [p for p in files if p not in proofs]
    if evidence is not None and (not replays or is_evidence_file(evidence)):
        proofs.append(evidence)  # alone, or an existing proof: confirm it, never overwrite it
        evidence = None
    if not files and not proofs:
        raise fail("name the replay files to check (or an evidence file)")
    if evidence is not None and (evidence.exists() or evidence.is_symlink()):
        raise fail(f"{evidence} already exists; the proof is written only to a new file")
    manifests = load_manifests(manifest)
    verdicts = [verify_file(path, manifests) for path in replays]
    forks = find_forks(verdicts)
    confirmations = [check_evidence(path) for path in proofs]
    written = None
    proven = [f for f in forks if f.signed_both]
    if evidence is not None and proven:
        from ..safefile import create_new

        try:
            create_new(evidence, proven[0].evidence())
        except OSError as e:
            raise fail(f"cannot write {evidence}: {e.strerror}") from None
        written = evidence
    if as_json:
        out: list[dict[str, object]] = []
        for v in verdicts:
            d = v.to_json()
            d["conflicts"] = [dict(f.to_json(), evidence=str(written) if written and f is proven[0] else None)
                              for f in forks if v in (f.a, f.b)]
            out.append(d)
        out += [{"path": r.path, "evidence": True, "confirmed": r.ok, "message": r.message} for r in confirmations]
        typer.echo(json.dumps(out, indent=1))
    else:
        for v in verdicts:
            typer.echo(v.line(), err=not v.ok)
        for agreement in agreements(verdicts):
            typer.echo(f"{agreement.a.path} and {agreement.b.path}: {agreement.line()}", err=not agreement.same)
        for f in forks:
            typer.echo(f"conflict: {f.line()}", err=True)
        for r in confirmations:
            typer.echo(r.line(), err=not r.ok)
        if written is not None:
            accused = proven[0].signed_both[0]
            who = f"player {accused.seat + 1} ({accused.name})" if accused.seat is not None else "the key"
            typer.echo(f"evidence against {who} written to {written}; anyone can confirm it with "
                       f"'basilica verify --evidence {written}'")
        elif evidence is not None:
            why = "no key signed both histories" if forks else "the files of each game agree"
            typer.echo(f"no evidence written: {why}", err=True)
    if not all(v.ok for v in verdicts) or forks or not all(r.ok for r in confirmations):
        raise typer.Exit(1)


def _walk(path: Path, manifest: list[Path]):
    from ..replay import ReplayError
    from ..replay.show import walk

    try:
        return walk(path, load_manifests(manifest))
    except ReplayError as e:
        raise fail(f"{path}: {e}") from None


@replay_app.command("show")
def replay_show(
    file: Path = typer.Argument(..., help="A replay file."),
    at: Optional[int] = typer.Option(None, "--at", min=0, help=f"Print the board after move N (0: the start) and the "
                                     f"{AROUND} moves before and after it instead of the whole game."),
    boards: bool = typer.Option(False, "--boards", metavar="", help="Print the board after every turn."),
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="The manifest the game uses, if not the default."),
) -> None:
    """Print the game move by move in notation, with every scoring's breakdown."""
    from ..render import render_board, render_scoring

    w = _walk(file, manifest)
    h = w.replay.header
    from ..describe import describe_shuffle

    typer.echo(f"{h.players[0][1]} (player 1) vs {h.players[1][1]} (player 2), {h.ruleset}"
               f"{' + festum' if h.festum else ''}, game {h.game.hex()[:16]}")
    typer.echo(f"stack {describe_shuffle(h.shuffle)}")
    if at is not None and at > len(w.moves):
        raise fail(f"--at {at}: the replay has {len(w.moves)} move{'' if len(w.moves) == 1 else 's'}")
    names = (h.players[0][1], h.players[1][1])
    width = max(len(n) for n in names)
    if at == 0 and w.start is not None:
        typer.echo(render_board(w.start, names))
    scorings = 0
    backs = {note.index: note for note in w.takebacks}  # by the move they come before

    said: dict[int, list[str]] = {}  # chat lines, by the number of moves played before them
    for c in w.chat:
        said.setdefault(c.index, []).append(f"      {names[c.player]} says: {c.text}")

    def between(index: int) -> None:
        """What was said and agreed before move index + 1."""
        for line in said.get(index, ()):
            typer.echo(line)
        note = backs.get(index)
        if note is not None:
            first, last = note.to + 1, note.index
            span = f"move {first}" if first == last else f"moves {first}-{last}"
            typer.echo(f"      takeback by {names[note.player]}, agreed by both: {span} taken back, "
                       f"play goes on from turn {note.turn}")

    shown = range(1, len(w.moves) + 1) if at is None else range(max(1, at - AROUND), min(len(w.moves), at + AROUND) + 1)
    if shown.start > 1:
        typer.echo(f"      ... {shown.start - 1} earlier move{'' if shown.start == 2 else 's'}")
    for i, m in enumerate(w.moves, start=1):
        number = scorings  # scorings are numbered through the whole game, shown or not
        scorings += sum(1 for e in m.events if e.kind == "scoring")
        if i not in shown:
            continue
        between(i - 1)
        typer.echo(f"{i:>4}. turn {m.turn:>2}  {names[m.player]:<{width}}  {m.action}")
        for e in m.events:
            if e.kind == "scoring":
                number += 1
                typer.echo(render_scoring(m.game.scoring_log[number - 1], number, names))
            elif e.kind != "game-over":
                typer.echo(f"        {e.detail}")
        turn_ends = i == len(w.moves) or w.moves[i].turn != m.turn
        if at == i or (boards and turn_ends):
            typer.echo(render_board(m.game, names))
    if shown.stop <= len(w.moves):
        later = len(w.moves) - shown.stop + 1
        typer.echo(f"      ... {later} later move{'' if later == 1 else 's'}")
    else:
        between(len(w.moves))
    if w.error:
        raise fail(f"the replay stops verifying at {w.error}", code=1)
    o = w.outcome
    if o is None:
        typer.echo("the game is not finished")
    elif o.end == "forfeit":
        loser = 1 - (o.winner or 0)
        typer.echo(f"{names[loser]} (player {loser + 1}) forfeited: {o.reason}")
    elif o.end == "fault":  # won by proof (referee.END_FAULT)
        from ..narration import fault_words

        typer.echo(fault_words(o, (names[0], names[1])))
    elif o.end == "time" and o.winner is not None:
        typer.echo(f"{names[o.winner]} (player {o.winner + 1}) won on time: {names[1 - o.winner]}'s clock ran out "
                   f"({names[0]} {o.scores[0]} - {o.scores[1]} {names[1]} on the board)")
    else:
        typer.echo(f"game over ({o.end}): {names[0]} {o.scores[0]} - {o.scores[1]} {names[1]}")


@replay_app.command("export")
def replay_export(
    file: Path = typer.Argument(..., help="A replay file."),
    fmt: str = typer.Option("json", "--format", help="Output format (json)."),
    out: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here instead of standard output."),
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="The manifest the game uses, if not the default."),
    unverified: bool = typer.Option(False, "--unverified", metavar="",
                                    help="Export a replay that does not verify too (damaged, or the game unfinished): "
                                    "the moves up to where it stops, with \"verified\": false and the error, and "
                                    "exit 0."),
) -> None:
    """Write the game as plain JSON: header, moves in notation, per-move state hashes, result.

    Exit 0 once written; 1, writing nothing, if the replay does not verify (unless --unverified)."""
    from ..replay import export_json

    if fmt != "json":
        raise fail(f"unknown format {fmt!r} (json is the only one)")
    w = _walk(file, manifest)
    doc = export_json(w)
    if not doc["verified"] and not unverified:
        why = f"it stops verifying at {w.error}" if w.error else "the game is not finished"
        raise fail(f"{file}: {why}; nothing exported (--unverified exports what there is)", code=1)
    text = json.dumps(doc, indent=1) + "\n"
    if out is None:
        typer.echo(text, nl=False)
    else:
        from ..safefile import write_atomically

        try:
            write_atomically(out, text)
        except OSError as e:
            raise fail(f"cannot write {out}: {e.strerror}") from None


@replay_app.command("html")
def replay_html(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="A replay file."),
    out: Optional[Path] = typer.Option(None, "--output", "-o",
                                       help="The page to write (default: the replay's name with .html, in the pages folder "
                                       "under --home)."),
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="The manifest the game uses, if not the default."),
) -> None:
    """Write one self-contained HTML page that steps through the game (buttons and arrow keys).

    The replay is verified first; a file that does not verify gives one error line, exit status 1, and no page.
    The page needs no network and no other file: open it in any browser.
    """
    from ..replay import OutputError, ViewerError, write_viewer

    manifests = load_manifests(manifest)
    if out is not None:
        target = out
    else:
        pages = output_folder(ctx, None, "pages")
        try:
            pages.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise fail(f"cannot write {pages}: {e.strerror}") from None
        target = pages / Path(file.name).with_suffix(".html")
    try:
        data = write_viewer(file, target, manifests)
    except OutputError as e:
        raise fail(str(e)) from None
    except ViewerError as e:
        raise fail(f"{file}: {e}", code=1) from None
    steps = len(data["steps"]) - 1 if data["steps"] else 0
    typer.echo(f"{target}: {steps} move{'' if steps == 1 else 's'}, {data['result']['text']}")


@replay_app.command("analyse")
def replay_analyse(
    file: Path = typer.Argument(..., help="A replay file of a finished game."),
    seat: Optional[int] = typer.Option(None, "--seat", min=1, max=2, help="Analyse player 1's or player 2's "
                                       "decisions only (default: both players')."),
    time: Optional[float] = typer.Option(None, "--time", metavar="S", min=0.01, max=60,
                                         help="Seconds of search per decision (default 0.5)."),
    playouts: Optional[int] = typer.Option(None, "--playouts", metavar="N", min=1, max=1_000_000,
                                           help="Playouts per decision instead of a time: the same figures "
                                           "on any machine."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, max=64, help="Worker processes."),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="auto|ADDRESS", help="Search the decisions as tasks "
                                      "on this running Ray cluster instead of --jobs processes (docs/cluster.md)."),
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="The manifest the game uses, if not the default."),
) -> None:
    """For each decision, the search bot's value of the move played against the best it finds.

    Values are expected score differences in points, from the decider's side; a move that gives away 3 points or
    more is an inaccuracy, 8 or more a blunder. The search sees only what the player saw then (docs/viewer.md).
    The results are saved beside the replay as FILE.analysis.json and reused by a later run with the same budget,
    and by 'replay html', which draws them. Ctrl-C stops it and keeps what was found.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from ..replay import BLUNDER, INACCURACY, AnalysisError, Budget, analyse
    from ..cluster import ClusterError, executor_for
    from ..executor import gather

    if time is not None and playouts is not None:
        raise fail("give --time or --playouts, not both")
    budget = Budget(time=time, playouts=playouts)
    seats = (0, 1) if seat is None else (seat - 1,)
    bar = Progress(TextColumn("decisions"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                   console=Console(stderr=True), transient=True)
    task = bar.add_task("decisions", total=0)

    def run(fn, items, on_result):
        def done(j):
            on_result(j)
            bar.advance(task)

        with executor_for(jobs, ray) as executor, bar:
            return gather(executor, fn, items, done)

    try:
        result, interrupted = analyse(file, load_manifests(manifest), seats, budget, run,
                                      on_start=lambda total: bar.update(task, total=total))
    except AnalysisError as e:
        raise fail(f"{file}: {e}", code=1) from None
    except ClusterError as e:
        raise fail(str(e)) from None
    names = result.names
    who = "both players" if seat is None else f"{names[seat - 1]} (player {seat})"
    typer.echo(f"{file}: {names[0]} (player 1) vs {names[1]} (player 2); decisions of {who}; "
               f"mcts, {result.budget.words()} a decision")
    typer.echo(f"{'move':>5} {'turn':>4}  {'player':<12} {'played':<14} {'value':>6}  {'best':<14} {'value':>6} "
               f"{'loss':>5}")
    for j in result.judged:
        typer.echo(f"{j.move:>5} {j.turn:>4}  {names[j.player][:12]:<12} {j.played:<14} {j.played_value:>+6.1f}  "
                   f"{j.best:<14} {j.best_value:>+6.1f} {j.loss:>5.1f}  {j.mark}".rstrip())
    for p in seats:
        n, mean, inaccuracies, blunders = result.summary(p)
        typer.echo(f"{names[p]} (player {p + 1}): {n} decision{'' if n == 1 else 's'}, mean loss {mean:.1f} "
                   f"points, {inaccuracies} inaccurac{'y' if inaccuracies == 1 else 'ies'} (>= {INACCURACY:g}), "
                   f"{blunders} blunder{'' if blunders == 1 else 's'} (>= {BLUNDER:g})")
    if result.saved is not None:
        again = f" ({result.reused} reused from it)" if result.reused else ""
        typer.echo(f"saved {result.saved}{again}")
    if result.save_error:
        typer.echo(f"warning: {result.save_error}", err=True)
    if interrupted:
        typer.echo(f"interrupted: {len(result.judged)} decisions analysed", err=True)
        raise typer.Exit(130)
