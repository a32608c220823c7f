"""The ``basilica`` command line: a thin edge over the engine, bots and matches.

Every command turns expected failures (bad files, bad options) into one
line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import re
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from typer.core import TyperGroup

from . import __version__
from .engine import EngineError, Manifest, Ruleset, default_manifest, parse_manifest

HELP_NAMES = ["-h", "--help"]


class _Root(TyperGroup):
    """The ``basilica`` group: its own options (--home, --version) are also accepted after any subcommand.

    Each command and command group gets a copy of them that does not reach its function: a --home
    given after the subcommand replaces one given before it. Flags get no ``<bool>`` in the help,
    and -h is --help everywhere.
    """

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        shared = [p for p in self.params if p.name in ("home", "version")]
        for command in self.commands.values():
            _share_options(command, shared)
        _quiet_flags(self)


def _store_home(ctx, param, value):  # type: ignore[no-untyped-def]
    if value is not None:
        ctx.find_root().obj = value
    return value


def _share_options(command, shared) -> None:  # type: ignore[no-untyped-def]
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


def _quiet_flags(command) -> None:  # type: ignore[no-untyped-def]
    """No ``<bool>`` after a flag in the help (typer's own --help included)."""
    from types import SimpleNamespace

    help_option = command.get_help_option(SimpleNamespace(help_option_names=HELP_NAMES))
    for p in [*command.params, help_option]:
        if p is not None and getattr(p, "is_flag", False):
            p.metavar = ""


app = typer.Typer(
    cls=_Root,
    help="Play Basilica peer to peer, with replays anyone can verify.",
    context_settings={"help_option_names": HELP_NAMES},
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
rules_app = typer.Typer(help="Work with the rules: score a written cathedral position.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")
id_app = typer.Typer(help="Your identity: the Ed25519 key that signs your games, and the name others see "
                     "(your login name unless you choose one).", no_args_is_help=True)
app.add_typer(id_app, name="id")
replay_app = typer.Typer(help="Look into replay files: the game move by move, as JSON, or as a web page.",
                         no_args_is_help=True)
app.add_typer(replay_app, name="replay")
peers_app = typer.Typer(help="Peers you have played: which key goes with which name.", no_args_is_help=True)
app.add_typer(peers_app, name="peers")

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
        "(default: $BASILICA_HOME, else ~/.config/basilica). May also follow the command; then that one wins."),
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


class Shuffle(str, Enum):
    """The shuffle schemes a local match or tournament can deal with (protocol/PROTOCOL.md §5, §5b)."""

    COMMIT_REVEAL = "commit-reveal-v1"
    HIDDEN = "sra-p256-v1"


SHUFFLE_HELP = ("How the stack is dealt: commit-reveal-v1 (the default: both seats are on this machine, so "
                "nothing is hidden from anyone) or sra-p256-v1 (face down, audited at the end, as between two peers; "
                "slower).")


@app.command("match")
def match(
    ctx: typer.Context,
    p1: str = typer.Option("greedy", "--p1", help="Bot for player 1: random, greedy, mcts[:time=S], module:Class "
                           "or cmd:PROGRAM (docs/bots.md)."),
    p2: str = typer.Option("random", "--p2", help="Bot for player 2 (as --p1)."),
    games: int = typer.Option(1, "--games", "-n", min=1, max=1_000_000, help="Number of games to play."),
    seed: Optional[str] = typer.Option(None, "--seed", help="Any text; every game's seed is derived from it "
                                       "(default '0', or random text when a cmd: bot plays)."),
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
    shuffle: Shuffle = typer.Option(Shuffle.COMMIT_REVEAL.value, "--shuffle", case_sensitive=False,
                                    help=SHUFFLE_HELP + " With --replay-dir the replays are dealt by it (and "
                                    "verify with 'deal audited'); without, a hidden deal is still played through "
                                    "the whole protocol, into a temporary replay that is then deleted."),
) -> None:
    """Play headless games between two bots on this machine and summarise them.

    The same arguments always give the same games and the same results (without --replay-dir).
    """
    from .bots import BotSpecError
    from .match import MatchConfig, run_match

    man = load_manifest_option(manifest)
    try:
        # Built-in names are case-blind; module:Class and cmd:PROGRAM keep their case.
        p1, p2 = (b.strip() if ":" in b else b.strip().lower() for b in (p1, p2))
        seed = match_seed(seed, [p1, p2])
        config = MatchConfig(p1=p1, p2=p2, games=games, seed=seed, ruleset=ruleset,
                             festum=festum, festum_removal=festum_removal, shuffle=shuffle.value)
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
    name: Optional[str] = typer.Option(None, "--name", help="The name other players see (1-64 characters; "
                                       "default: your login name). Change it later with 'basilica id rename'."),
    force: bool = typer.Option(False, "--force", metavar="", help="Replace an existing identity (its key is lost)."),
) -> None:
    """Make a new Ed25519 key pair; the private key is stored with mode 0600 under --home.

    host, join and play make one on first use, named after your login name.
    """
    from .identity import IdentityError, create_identity, default_name

    home = home_of(ctx)
    try:
        ident = create_identity(home, default_name() if name is None else name, force=force)
    except IdentityError as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write under {home}: {e.strerror}") from None
    from .fingerprint_words import fingerprint_words

    typer.echo(f"new identity {ident.name!r} in {home}")
    typer.echo(f"public key  {ident.public.hex()}")
    typer.echo(f"fingerprint {ident.fingerprint}")
    typer.echo(f"words       {fingerprint_words(ident.public)}")


@id_app.command("show")
def id_show(ctx: typer.Context) -> None:
    """Print your name, public key and its fingerprint (SHA-256, as ssh shows host keys),
    and the same as eight words to read to a peer over the phone."""
    from .fingerprint_words import fingerprint_words
    from .identity import IdentityError, load_identity

    try:
        ident = load_identity(home_of(ctx))
    except IdentityError as e:
        raise fail(str(e)) from None
    typer.echo(f"name        {ident.name}")
    typer.echo(f"public key  {ident.public.hex()}")
    typer.echo(f"fingerprint {ident.fingerprint}")
    typer.echo(f"words       {fingerprint_words(ident.public)}")


@id_app.command("rename")
def id_rename(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The new name other players see (1-64 characters)."),
) -> None:
    """Change the name other players see; the key, and so who you are to them, stays.

    Peers that knew you under the old name meet the new name as a first contact.
    """
    from .identity import IdentityError, rename_identity

    home = home_of(ctx)
    try:
        old, ident = rename_identity(home, name)
    except IdentityError as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write under {home}: {e.strerror}") from None
    from .fingerprint_words import fingerprint_words

    typer.echo(f"renamed {old!r} to {ident.name!r}; the key stays")
    typer.echo(f"fingerprint {ident.fingerprint}")
    typer.echo(f"words       {fingerprint_words(ident.public)}")


@app.command("verify")
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
    from .replay.evidence import check_evidence, is_evidence_file
    from .replay.forks import find_forks
    from .replay.verify import verify_file

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
        from .safefile import create_new

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
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="The manifest the game uses, if not the default."),
) -> None:
    """Print the game move by move in notation, with every scoring's breakdown."""
    from .render import render_board, render_scoring

    w = _walk(file, manifest)
    h = w.replay.header
    from .describe import describe_shuffle

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
    for i, m in enumerate(w.moves, start=1):
        typer.echo(f"{i:>4}. turn {m.turn:>2}  {names[m.player]:<{width}}  {m.action}")
        for e in m.events:
            if e.kind == "scoring":
                scorings += 1
                typer.echo(render_scoring(m.game.scoring_log[scorings - 1], scorings, names))
            elif e.kind != "game-over":
                typer.echo(f"        {e.detail}")
        turn_ends = i == len(w.moves) or w.moves[i].turn != m.turn
        if at == i or (boards and turn_ends):
            typer.echo(render_board(m.game, names))
    if w.error:
        raise fail(f"the replay stops verifying at {w.error}", code=1)
    o = w.outcome
    if o is None:
        typer.echo("the game is not finished")
    elif o.end == "forfeit":
        loser = 1 - (o.winner or 0)
        typer.echo(f"{names[loser]} (player {loser + 1}) forfeited: {o.reason}")
    else:
        typer.echo(f"game over ({o.end}): {names[0]} {o.scores[0]} - {o.scores[1]} {names[1]}")


@replay_app.command("export")
def replay_export(
    file: Path = typer.Argument(..., help="A replay file."),
    fmt: str = typer.Option("json", "--format", help="Output format (json)."),
    out: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here instead of standard output."),
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="The manifest the game uses, if not the default."),
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
        from .safefile import write_atomically

        try:
            write_atomically(out, text)
        except OSError as e:
            raise fail(f"cannot write {out}: {e.strerror}") from None


@replay_app.command("html")
def replay_html(
    file: Path = typer.Argument(..., help="A replay file."),
    out: Optional[Path] = typer.Option(None, "--output", "-o",
                                       help="The page to write (default: the replay's name with .html, here)."),
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="The manifest the game uses, if not the default."),
) -> None:
    """Write one self-contained HTML page that steps through the game (buttons and arrow keys).

    The replay is verified first; a file that does not verify gives one error line, exit status 1, and no page.
    The page needs no network and no other file: open it in any browser.
    """
    from .replay.html import OutputError, ViewerError, write_viewer

    manifests = load_manifests(manifest)
    target = out if out is not None else Path(file.name).with_suffix(".html")
    try:
        data = write_viewer(file, target, manifests)
    except OutputError as e:
        raise fail(str(e)) from None
    except ViewerError as e:
        raise fail(f"{file}: {e}", code=1) from None
    steps = len(data["steps"]) - 1 if data["steps"] else 0
    typer.echo(f"{target}: {steps} move{'' if steps == 1 else 's'}, {data['result']['text']}")


# --- network play ---------------------------------------------------------------

def _net_options(
    bot: Optional[str], ruleset: Ruleset, festum: bool, festum_removal: bool, manifest: Optional[Path],
    replay_dir: Optional[Path], handshake_timeout: float, idle_timeout: float, ping_interval: float,
    frame_timeout: float, move_time: Optional[float], ctx: typer.Context, role: str, games: int = 1,
    quiet: bool = False, keep_session: bool = False, shuffle: str = "sra-p256-v1",
):  # type: ignore[no-untyped-def]
    """Everything host and join share, checked, as a PeerConfig."""
    import os as _os

    from .bots import BotSpecError, close_bot, make_bot
    from .engine import Options
    from .identity import IdentityError, local_identity
    from .net.ledger import GameLedger
    from .net.peer import PeerConfig
    from .net.peers import KnownPeers
    from .tui import TerminalPlayer
    from .net.session import Settings, Timeouts

    from .referee import SCHEMES

    home = home_of(ctx)
    man = load_manifest_option(manifest)
    try:
        options = Options(ruleset, festum, festum_removal)
    except EngineError as e:
        raise fail(str(e)) from None
    if shuffle not in SCHEMES:
        raise fail(f"--shuffle {shuffle!r}: choose {' or '.join(SCHEMES[::-1])}")
    if idle_timeout <= ping_interval:
        raise fail("--idle-timeout must be longer than --ping-interval")
    try:
        if bot:
            close_bot(make_bot(bot, man, 0))  # fail early on a bad name
            me = local_identity(home, f"bot-{role}", f"{bot_label(bot)}-{role}")
        else:
            me = user_identity(home)
    except BotSpecError as e:
        raise fail(str(e)) from None
    except (IdentityError, OSError) as e:
        raise fail(f"identity: {e}") from None

    person = None if bot else TerminalPlayer(me.name, manifest=man)

    def agent_for(k: int):  # type: ignore[no-untyped-def]
        if person is None:
            return make_bot(bot, man, int.from_bytes(_os.urandom(8), "big"))
        return person

    timeouts = Timeouts(handshake_timeout, ping_interval, idle_timeout, frame_timeout, move_time)
    config = PeerConfig(me, Settings(options, man, shuffle), agent_for, replay_dir or home / "replays", KnownPeers(home),
                        timeouts, games, log=(lambda m: None) if quiet else (lambda m: typer.echo(m, err=True)),
                        on_move=person.notify if person is not None else None)
    config.resume_info = {
        "role": role, "identity": f"bot-{role}" if bot else "user", "name": me.name, "bot": bot,
        "home": str(home.resolve()), "manifest": str(manifest.resolve()) if manifest else None,
        "move_time": move_time, "keep_session": keep_session,
    }
    config.keep_session = keep_session
    config.ledger = GameLedger(home)
    return config


def match_seed(seed: Optional[str], specs: list[str]) -> str:
    """--seed, or its default: '0', but random text when a program outside this one plays.

    Games follow from the seed text, so a cmd: bot that guessed a known seed could rebuild
    the games and read the stack; a seed it cannot guess keeps the stack hidden.  The
    random seed is printed so that the games can be played again.
    """
    import secrets

    if seed is not None:
        return seed
    if not any(s.strip().lower().startswith("cmd:") for s in specs):
        return "0"
    chosen = secrets.token_hex(8)
    typer.echo(f"seed {chosen!r}, chosen at random so that no cmd: bot can guess the games "
               "(pass --seed to play them again)", err=True)
    return chosen


def user_identity(home: Path):  # type: ignore[no-untyped-def]
    """The person's identity under ``home``, made on first use (named after the login name)."""
    from .identity import IdentityError, create_identity, default_name, load_identity

    try:
        return load_identity(home)
    except IdentityError:
        me = create_identity(home, default_name())
        typer.echo(f"made a new identity {me.name!r} in {home}; other players see this name "
                   "(change it with 'basilica id rename NAME')", err=True)
        return me


def bot_label(spec: str) -> str:
    """A short name for a bot's identity: ``greedy``, ``mcts``, ``MyBot``, ``cmd-line_bot``."""
    import re

    text = spec.strip()
    if text.lower().startswith("cmd:"):
        words = text[4:].split()
        program = Path(words[-1] if words and words[0].startswith("python") else (words[0] if words else "bot"))
        text = "cmd-" + program.stem
    elif ":" in text:
        head, _, tail = text.partition(":")
        text = head if head.lower() in ("mcts",) else tail
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:40] or "bot"


def _report_games(reports, me_name: str) -> None:  # type: ignore[no-untyped-def]
    """One line per game: both names in seat order, each with its score, ours marked "you".

    ``game 1: alice (player 1, you) 31 - 12 bob (player 2): you won, 40 moves (score); replay ...``
    """
    for i, r in enumerate(reports, start=1):
        o = r.outcome
        names = [me_name, r.peer] if r.seat == 0 else [r.peer, me_name]
        sides = [f"{n} (player {k + 1}{', you' if k == r.seat else ''})" for k, n in enumerate(names)]
        if o.end == "forfeit":
            from .net.session import printable

            loser = me_name if o.winner != r.seat else r.peer
            why = f" ({printable(loser, 64)}: {printable(o.reason, 200)})" if o.reason else ""
            what = ("you won by forfeit" if o.winner == r.seat else "you forfeited") + why
        elif o.winner is None:
            what = "shared victory"
        else:
            what = "you won" if o.winner == r.seat else f"{r.peer} won"
        typer.echo(f"game {i}: {sides[0]} {o.scores[0]} - {o.scores[1]} {sides[1]}: {what}, "
                   f"{o.moves} move{'' if o.moves == 1 else 's'} ({o.end}); replay {r.replay}")


def _leaf_errors(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in _leaf_errors(sub)]
    return [e]


def _terminal_state():  # type: ignore[no-untyped-def]
    """The terminal's settings, if standard input is one (POSIX), to put back after Ctrl-C."""
    try:
        import termios

        return termios.tcgetattr(sys.stdin.fileno()) if sys.stdin.isatty() else None
    except (ImportError, OSError, ValueError, AttributeError):
        return None


def _restore_terminal(state) -> None:  # type: ignore[no-untyped-def]
    if state is None:
        return
    try:
        import termios

        termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, state)
    except (ImportError, OSError, ValueError, AttributeError):
        pass


def _run_trio(fn, replay):  # type: ignore[no-untyped-def]
    """``trio.run(fn)``; an error that trio's nurseries wrapped in an exception group comes
    out as itself, and Ctrl-C (status 130) says how to go on with the game: ``replay()`` is
    the replay of the unfinished game, if there is one."""
    import trio

    terminal = _terminal_state()
    try:
        return trio.run(fn)
    except BaseException as e:
        leaves = _leaf_errors(e)
        if any(isinstance(x, KeyboardInterrupt) for x in leaves):
            _restore_terminal(terminal)  # a prompt left waiting (readline: no echo) must not keep the terminal
            path = replay()
            if path is not None:
                message = (f"interrupted: the game is not finished; both sides can go on with 'basilica resume "
                           f"REPLAY' (this side: basilica resume {path})")
            else:
                message = "interrupted: no game was under way"
            typer.echo(("\n" if sys.stderr.isatty() else "") + message, err=True)
            raise typer.Exit(130) from None
        if len(leaves) == 1 and leaves[0] is not e:
            raise leaves[0] from None
        raise


def _run_peer(coro_fn, config, where: str = "", hint=None) -> None:  # type: ignore[no-untyped-def]
    """Run host or join; ``hint(error)`` says what to check after a network error."""
    from .net.session import SessionError

    try:
        reports = _run_trio(coro_fn, lambda: config.current)
    except SessionError as e:
        raise fail(str(e), code=1) from None
    except OSError as e:
        advice = hint(e) if hint is not None else "is the host running and reachable?"
        raise fail(f"network{where}: {e.strerror or e} ({advice})", code=1) from None
    _report_games(reports, config.me.name)


def _host_hint(bind: str, port: int):  # type: ignore[no-untyped-def]
    """What to check when the host cannot listen (not the joiner's advice)."""
    import errno
    import socket

    def hint(e: OSError) -> str:
        if e.errno == errno.EADDRINUSE:
            return f"is another program, or another host, using port {port}? try another --port, or --port 0"
        if e.errno == errno.EACCES:
            return f"port {port} needs privileges here; try a port above 1023, or --port 0"
        if e.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT) or isinstance(e, socket.gaierror):
            return f"is {bind} an address of this machine? 0.0.0.0 listens on every interface"
        return "cannot listen, or the connection failed"

    return hint


NET_HELP = {
    "bot": "Let a bot play: random, greedy, mcts[:time=S], module:Class or cmd:PROGRAM (docs/bots.md). "
           "Without it you play in the terminal (docs/playing.md).",
    "replay_dir": "Where this side's replays go (default: the replays folder under --home).",
    "handshake": "Seconds for the hellos to be exchanged.",
    "idle": "Seconds of silence (not even a keepalive) after which the peer is gone.",
    "ping": "Seconds between keepalives.",
    "frame": "Seconds a started frame may take to arrive whole (stops byte-trickling peers).",
    "move": "Seconds the peer may take per decision (default: no limit); past it the peer forfeits.",
    "shuffle": "How the stack is dealt: sra-p256-v1 (the default: face down, so that neither side can see it, "
               "audited at the end) or commit-reveal-v1 (one seed both sides know: the stack is unbiased but "
               "a modified client could read it). Both sides must ask for the same.",
    "no_invite": "Take the first peer that connects to HOST:PORT, as before invites (trust on first use); "
                 "by default the host prints an invite code and lets in only its holder.",
    "stun": "A STUN server (HOST:PORT) that tells this side its public address; repeat for more. "
            "Default: three public servers (docs/network.md, 'Playing over the internet').",
    "no_stun": "Ask no STUN server: the invite (or the joiner's reply code) then holds no public address.",
    "port_mapping": "Ask the router for a port: auto (PCP, then NAT-PMP, then UPnP-IGD), one of pcp, natpmp, "
                    "upnp, or off.",
    "connect_timeout": "Seconds to try every way to the host (hole punching included) before giving up.",
    "invite_ttl": "Seconds the invite stays valid.",
    "host_code": "Also print a short code (7-crossover-clockwork) to read aloud, through a Magic Wormhole "
                 "mailbox; with it the two sides punch and relay without pasting anything (docs/wormhole.md).",
    "join_code": "Join by the host's short code (the code alone as the argument works too).",
    "mailbox": "The Magic Wormhole mailbox server for --code (default: the public one, "
               "ws://relay.magic-wormhole.io:4000/v1).",
    "relay": "The Magic Wormhole transit relay used when no direct way connects (default: "
             "transit.magic-wormhole.io:4001).",
    "no_relay": "With --code: play directly or not at all (never through a relay).",
    "keep": "Keep each game's hidden .session file (what resume needs) after the game is finished and both "
            "sides hold the result; by default it is deleted then.",
}


# Options shared by host, join and resume (typer lets commands share the declarations).
OPT_BOT = typer.Option(None, "--bot", help=NET_HELP["bot"])
OPT_RULESET = typer.Option(Ruleset.PORTAL2022.value, "--ruleset", case_sensitive=False,
                           help="classic (2010) or portal2022; both sides must agree.")
OPT_FESTUM = typer.Option(False, "--festum", metavar="", help="Play with the festum expansion.")
OPT_REMOVAL = typer.Option(False, "--festum-removal", metavar="", help="With --festum: remove 6 tiles.")
OPT_MANIFEST = typer.Option(None, "--manifest", help="Your own component manifest (JSON).")
OPT_REPLAY_DIR = typer.Option(None, "--replay-dir", help=NET_HELP["replay_dir"])
OPT_HANDSHAKE = typer.Option(20.0, "--handshake-timeout", min=0.1, help=NET_HELP["handshake"])
OPT_IDLE = typer.Option(30.0, "--idle-timeout", min=0.1, help=NET_HELP["idle"])
OPT_PING = typer.Option(5.0, "--ping-interval", min=0.05, help=NET_HELP["ping"])
OPT_FRAME = typer.Option(10.0, "--frame-timeout", min=0.1, help=NET_HELP["frame"])
OPT_MOVE = typer.Option(None, "--move-time", min=0.1, help=NET_HELP["move"])
OPT_KEEP = typer.Option(False, "--keep-session", metavar="", help=NET_HELP["keep"])
OPT_NET_SHUFFLE = typer.Option("sra-p256-v1", "--shuffle", metavar="[sra-p256-v1|commit-reveal-v1]",
                               help=NET_HELP["shuffle"])


@app.command("host")
def host_cmd(
    ctx: typer.Context,
    port: int = typer.Option(7431, "--port", min=0, max=65535, help="TCP port to listen on (0: any free port)."),
    bind: str = typer.Option("0.0.0.0", "--bind", help="Address to listen on (0.0.0.0: every interface)."),
    games: int = typer.Option(1, "--games", "-n", min=1, max=10_000, help="Games to play on this connection; "
                              "seats alternate."),
    bot: Optional[str] = OPT_BOT,
    ruleset: Ruleset = OPT_RULESET,
    festum: bool = OPT_FESTUM,
    festum_removal: bool = OPT_REMOVAL,
    manifest: Optional[Path] = OPT_MANIFEST,
    replay_dir: Optional[Path] = OPT_REPLAY_DIR,
    handshake_timeout: float = OPT_HANDSHAKE,
    idle_timeout: float = OPT_IDLE,
    ping_interval: float = OPT_PING,
    frame_timeout: float = OPT_FRAME,
    move_time: Optional[float] = OPT_MOVE,
    keep_session: bool = OPT_KEEP,
    shuffle: str = OPT_NET_SHUFFLE,
    no_invite: bool = typer.Option(False, "--no-invite", metavar="", help=NET_HELP["no_invite"]),
    stun: Optional[list[str]] = typer.Option(None, "--stun", metavar="HOST:PORT", help=NET_HELP["stun"]),
    no_stun: bool = typer.Option(False, "--no-stun", metavar="", help=NET_HELP["no_stun"]),
    port_mapping: str = typer.Option("auto", "--port-mapping", metavar="[auto|pcp|natpmp|upnp|off]",
                                     help=NET_HELP["port_mapping"]),
    invite_ttl: int = typer.Option(600, "--invite-ttl", min=10, max=7 * 24 * 3600, help=NET_HELP["invite_ttl"]),
    code: bool = typer.Option(False, "--code", metavar="", help=NET_HELP["host_code"]),
    mailbox: Optional[str] = typer.Option(None, "--mailbox", metavar="URL", help=NET_HELP["mailbox"]),
    relay: Optional[str] = typer.Option(None, "--relay", metavar="HOST:PORT", help=NET_HELP["relay"]),
    no_relay: bool = typer.Option(False, "--no-relay", metavar="", help=NET_HELP["no_relay"]),
) -> None:
    """Wait for a peer to join, then play. Prints where it listens and an invite to paste to the other player.

    The invite ('basilica join bas1:...') carries this side's key and the addresses where it may be
    reached, including a port mapped on the router and the public address a STUN server sees; only its
    holder can take the seat. If the joiner prints a reply code ('bas1r:...'), paste it here and both
    sides punch a hole through their routers.

    Without --bot you play under your identity, made on first use and named after your login name.
    'basilica id rename NAME' changes the name the other player sees.
    """
    from .net import peer as net_peer

    config = _net_options(bot, ruleset, festum, festum_removal, manifest, replay_dir, handshake_timeout,
                          idle_timeout, ping_interval, frame_timeout, move_time, ctx, "host", games,
                          keep_session=keep_session, shuffle=shuffle)
    assert config.resume_info is not None
    config.resume_info["address"] = bind
    if not no_invite:
        internet = _internet_options(stun, no_stun, port_mapping, invite_ttl, handshake_timeout)
        coded = _code_options(mailbox, relay, no_relay) if code else None
        _run_peer(lambda: _host_with_invite(bind, port, config, internet, coded), config, f" ({bind}:{port})",
                  _host_hint(bind, port))
        return
    if code:
        raise fail("--code needs an invite: leave out --no-invite")

    def ready(address: str, actual: int) -> None:
        typer.echo(f"listening on {address}:{actual}", err=False)
        if address in ("0.0.0.0", "::"):
            typer.echo(f"(every interface: the joiner uses this machine's address, e.g. 127.0.0.1:{actual} "
                       "on this machine)", err=True)
        sys.stdout.flush()

    _run_peer(lambda: net_peer.host(bind, port, config, ready), config, f" ({bind}:{port})", _host_hint(bind, port))


@app.command("join")
def join_cmd(
    ctx: typer.Context,
    address: Optional[str] = typer.Argument(None, help="The invite the host printed (bas1:...), its short code "
                                            "(7-crossover-clockwork), or the host as HOST:PORT (e.g. "
                                            "192.168.1.20:7431) for a host started with --no-invite."),
    bot: Optional[str] = OPT_BOT,
    ruleset: Ruleset = OPT_RULESET,
    festum: bool = OPT_FESTUM,
    festum_removal: bool = OPT_REMOVAL,
    manifest: Optional[Path] = OPT_MANIFEST,
    replay_dir: Optional[Path] = OPT_REPLAY_DIR,
    handshake_timeout: float = OPT_HANDSHAKE,
    idle_timeout: float = OPT_IDLE,
    ping_interval: float = OPT_PING,
    frame_timeout: float = OPT_FRAME,
    move_time: Optional[float] = OPT_MOVE,
    keep_session: bool = OPT_KEEP,
    shuffle: str = OPT_NET_SHUFFLE,
    stun: Optional[list[str]] = typer.Option(None, "--stun", metavar="HOST:PORT", help=NET_HELP["stun"]),
    no_stun: bool = typer.Option(False, "--no-stun", metavar="", help=NET_HELP["no_stun"]),
    connect_timeout: float = typer.Option(60.0, "--connect-timeout", min=1.0, max=3600.0,
                                          help=NET_HELP["connect_timeout"]),
    code: Optional[str] = typer.Option(None, "--code", metavar="CODE", help=NET_HELP["join_code"]),
    mailbox: Optional[str] = typer.Option(None, "--mailbox", metavar="URL", help=NET_HELP["mailbox"]),
    relay: Optional[str] = typer.Option(None, "--relay", metavar="HOST:PORT", help=NET_HELP["relay"]),
    no_relay: bool = typer.Option(False, "--no-relay", metavar="", help=NET_HELP["no_relay"]),
) -> None:
    """Connect to a host and play as many games as the host starts.

    With an invite, every address in it is tried at once and the host's key is checked against the one
    the invite pins. If none answers within a few seconds, this side prints a reply code for the host to
    paste, and both sides punch a hole through their routers.

    Without --bot you play under your identity, made on first use and named after your login name.
    'basilica id rename NAME' changes the name the other player sees.
    """
    from .net import peer as net_peer

    wormhole_code = code or (address if address and WORMHOLE_CODE.match(address) else None)
    if wormhole_code is not None or (address and re.match(r"\s*bas\d+r?:", address, re.IGNORECASE)):
        _join_with_invite(ctx, wormhole_code or address, bot, ruleset, festum, festum_removal, manifest, replay_dir,
                          handshake_timeout, idle_timeout, ping_interval, frame_timeout, move_time, keep_session,
                          shuffle, _internet_options(stun, no_stun, "off", 600, handshake_timeout, connect_timeout),
                          _code_options(mailbox, relay, no_relay) if wormhole_code is not None else None)
        return
    if address is None:
        raise fail("give the invite (bas1:...), a code (--code 7-word-word) or the host's HOST:PORT")
    host_part, sep, port_part = address.rpartition(":")
    if not sep or not port_part.isdigit() or not 0 < int(port_part) < 65536 or not host_part:
        raise fail(f"{address!r} is not HOST:PORT")
    config = _net_options(bot, ruleset, festum, festum_removal, manifest, replay_dir, handshake_timeout,
                          idle_timeout, ping_interval, frame_timeout, move_time, ctx, "join",
                          keep_session=keep_session, shuffle=shuffle)
    assert config.resume_info is not None
    config.resume_info.update(address=host_part.strip("[]"), port=int(port_part))
    _run_peer(lambda: net_peer.join(host_part.strip("[]"), int(port_part), config), config, f" ({address})")


def _internet_options(stun: Optional[list[str]], no_stun: bool, port_mapping: str, ttl: int,
                      handshake: float, give_up: float = 60.0):  # type: ignore[no-untyped-def]
    from .net.gate import GateLimits
    from .net.invited import MAPPING_PROTOCOLS, InternetOptions
    from .net.stun import DEFAULT_SERVERS

    if port_mapping not in ("auto", "off", *MAPPING_PROTOCOLS):
        raise fail(f"--port-mapping {port_mapping!r}: choose auto, {', '.join(MAPPING_PROTOCOLS)} or off")
    servers = []
    for text in stun or []:
        host_part, sep, port_part = text.rpartition(":")
        if not sep or not port_part.isdigit() or not 0 < int(port_part) < 65536 or not host_part:
            raise fail(f"--stun {text!r} is not HOST:PORT")
        servers.append((host_part.strip("[]"), int(port_part)))
    chosen = () if no_stun else tuple(servers) or DEFAULT_SERVERS
    return InternetOptions(stun=chosen, port_mapping=port_mapping, ttl=ttl,
                           limits=GateLimits(handshake_time=min(5.0, handshake)), give_up=give_up)


WORMHOLE_CODE = re.compile(r"^\s*\d+(-[A-Za-z]+)+\s*$")


def _code_options(mailbox: Optional[str], relay: Optional[str], no_relay: bool):  # type: ignore[no-untyped-def]
    from .net.coded import PUBLIC_MAILBOX, PUBLIC_RELAY, CodeOptions

    if mailbox is not None and not re.match(r"wss?://", mailbox):
        raise fail(f"--mailbox {mailbox!r} is not a ws:// or wss:// URL")
    where = PUBLIC_RELAY
    if relay is not None:
        host_part, sep, port_part = relay.rpartition(":")
        if not sep or not port_part.isdigit() or not 0 < int(port_part) < 65536 or not host_part:
            raise fail(f"--relay {relay!r} is not HOST:PORT")
        where = (host_part.strip("[]"), int(port_part))
    return CodeOptions(mailbox or PUBLIC_MAILBOX, None if no_relay else where)


async def _stdin_lines():  # type: ignore[no-untyped-def]
    """Lines typed or piped on standard input, read only while awaited (nothing is taken from a
    game's prompt later); stops at end of input, or at once when standard input cannot be polled."""
    import os as _os

    import trio

    try:
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return
    line = bytearray()
    while True:
        try:
            await trio.lowlevel.wait_readable(fd)
        except (OSError, ValueError):  # a regular file, /dev/null: nothing to wait for
            return
        # One byte at a time: nothing typed after the line is taken from the game's prompt.
        byte = _os.read(fd, 1)
        if not byte:
            return
        if byte == b"\n":
            yield line.decode("utf-8", "replace")
            line.clear()
        elif len(line) < 4096:  # a code is at most 1024 characters; the rest of a longer line is dropped
            line += byte


async def _host_with_invite(bind: str, port: int, config, internet, coded=None):  # type: ignore[no-untyped-def]
    import time
    from contextlib import AsyncExitStack

    from .net.gate import GateClosed, describe_path
    from .net.invite import format_invite
    from .net.invited import host_connection, reply_reader
    from .net.peer import play_games
    from .net.session import SessionError

    def ready(r) -> None:  # type: ignore[no-untyped-def]
        config.resume_info["port"] = r.port
        typer.echo(f"listening on {bind}:{r.port}")
        typer.echo(f"invite: basilica join {format_invite(r.invite)}")
        sys.stdout.flush()
        for note in r.notes:
            typer.echo(note, err=True)
        typer.echo(f"give the invite line to the other player (it is valid for {internet.ttl} s and lets in one "
                   "player); if they print a 'reply: bas1r:...' line, paste it here and press Enter", err=True)

    companions = [reply_reader(_stdin_lines())]
    relayed: dict[str, object] = {}  # filled by the wormhole: which relay, and the key to meet there again
    if coded is not None:
        from .net.coded import wormhole_companion

        def show_code(text: str) -> None:
            typer.echo(f"code: basilica join --code {text}")
            sys.stdout.flush()
            typer.echo("or read the code out to the other player: it works once, and a wrong guess ends it",
                       err=True)

        companions.append(wormhole_companion(coded, show_code, internet.ttl, relayed))
    async with AsyncExitStack() as stack:
        try:
            admitted = await host_connection(bind, port, config.me, internet, int(time.time()), ready, config.log,
                                             companions, stack, config.timeouts.frame)
        except GateClosed as e:
            raise SessionError(str(e)) from None
        if admitted.via == "relayed":
            from .net.coded import relay_note

            typer.echo(relay_note(admitted.peer), err=True)
            config.resume_info.update(relayed)  # basilica resume meets there again
        else:
            typer.echo(f"connected: {describe_path(admitted.via)} (from {admitted.peer})", err=True)
        config.pinned = admitted.joiner_key
        admitted.framed.frame_timeout = config.timeouts.frame  # the knock had a shorter one
        return await play_games(admitted.framed, True, config)


def _join_with_invite(ctx, code, bot, ruleset, festum, festum_removal, manifest, replay_dir,  # type: ignore[no-untyped-def]
                      handshake_timeout, idle_timeout, ping_interval, frame_timeout, move_time, keep_session,
                      shuffle, internet, coded=None) -> None:
    """Join by an invite code (bas1:...) or, with ``coded``, by a wormhole code (7-word-word)."""
    import time

    from .net.invite import InviteError, invite_id, parse_invite
    from .net.ledger import GameLedger

    invite = None
    if coded is None:
        try:
            invite = parse_invite(code, int(time.time()))
        except InviteError as e:
            raise fail(f"invite: {e}") from None
    config = _net_options(bot, ruleset, festum, festum_removal, manifest, replay_dir, handshake_timeout,
                          idle_timeout, ping_interval, frame_timeout, move_time, ctx, "join",
                          keep_session=keep_session, shuffle=shuffle)
    used = GameLedger(home_of(ctx), "invites_used")
    ident = bytes.fromhex(invite_id(invite)) if invite is not None else b""
    if invite is not None and used.signed(config.me.public, ident):
        raise fail("this invite was used already: ask the host for a new one", code=1)

    async def run():  # type: ignore[no-untyped-def]
        from .net.dial import NoPath
        from .net.invited import join_connection
        from .net.peer import play_games
        from .net.session import SessionError

        def show_reply(text: str) -> None:
            typer.echo(f"reply: {text}")
            sys.stdout.flush()
            typer.echo("no address in the invite answered yet: give the reply line above to the host, who pastes "
                       "it into its window; both sides then punch a hole through their routers", err=True)

        try:
            if coded is not None:
                from .net.coded import join_with_code, relay_note

                dialed = await join_with_code(code, config.me, internet, coded, int(time.time()), config.log)
            else:
                dialed = await join_connection(invite, config.me, internet, show_reply, config.log)
        except NoPath as e:
            for where, why in e.failures:
                typer.echo(f"  {where}: {why}", err=True)
            raise SessionError(str(e)) from None
        if dialed.via == "relayed":
            typer.echo(relay_note(dialed.address.removeprefix("relay ")), err=True)
            config.resume_info.update(dialed.relayed)  # basilica resume meets there again
        host_part, _, port_part = dialed.address.removeprefix("relay ").rpartition(":")
        config.resume_info.update(address=host_part.strip("[]"), port=int(port_part))
        config.pinned = dialed.host_key
        dialed.framed.frame_timeout = config.timeouts.frame
        try:
            return await play_games(dialed.framed, False, config)
        finally:
            if config.games_begun and invite is not None:  # the seat was really taken: a game has a replay
                used.claim(config.me.public, ident)

    _run_peer(run, config, "", lambda e: "the invite's addresses did not answer")


@app.command("tournament")
def tournament_cmd(
    bots: str = typer.Option(..., "--bots", help="Comma-separated bots, e.g. random,greedy,mymod:MyBot."),
    games: int = typer.Option(10, "--games", "-n", min=1, max=100_000, help="Games per pair of bots."),
    jobs: int = typer.Option(2, "--jobs", "-j", min=1, max=64, help="Worker processes."),
    seed: Optional[str] = typer.Option(None, "--seed", help="Any text; every game's seed is derived from it "
                                       "(default '0', or random text when a cmd: bot plays)."),
    ruleset: Ruleset = typer.Option(Ruleset.PORTAL2022.value, "--ruleset", case_sensitive=False,
                                    help="classic (2010) or portal2022."),
    festum: bool = typer.Option(False, "--festum", metavar="", help="Play with the festum expansion."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for tournament.json and standings.csv; "
                                       "results already there are replaced (default: tournament-SEED, or "
                                       "tournament-SEED-2, -3, ... if that holds an earlier run)."),
    shuffle: Shuffle = typer.Option(Shuffle.COMMIT_REVEAL.value, "--shuffle", case_sensitive=False,
                                    help=SHUFFLE_HELP + " A hidden deal plays each game through the whole protocol "
                                    "(no replay is kept)."),
) -> None:
    """A round robin between bots in worker processes: wins, draws, losses, forfeits, Elo with 95% intervals.

    The same arguments give the same results, whatever --jobs is.
    Without --out a rerun never overwrites an earlier one: it goes to the next free folder, named in the last line.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Table

    from .bots import BotSpecError, make_bot
    from .engine import Options
    from .tournament import OUTPUT_FILES, fresh_folder, run_tournament, save, standings

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
    with Progress(TextColumn("games"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("games", total=len(names) * (len(names) - 1) // 2 * games)
        results = run_tournament(names, games, seed, options, jobs,
                                 on_progress=lambda done, total: bar.update(task, completed=done),
                                 shuffle=shuffle.value)
    table_rows = standings(names, results)
    table = Table(title=f"round robin, {games} games per pair, seed {seed!r}, dealt by {shuffle.value}",
                  show_edge=False)
    for col in ("bot", "games", "wins", "draws", "losses", "forfeits", "Elo", "95% interval"):
        table.add_column(col, justify="left" if col == "bot" else "right")
    for s in table_rows:
        table.add_row(s.bot, str(s.games), str(s.wins), str(s.draws), str(s.losses), str(s.forfeits), f"{s.elo:.0f}",
                      f"{s.elo_low:.0f} to {s.elo_high:.0f}")
    console.print(table)
    folder = out if out is not None else fresh_folder(Path(f"tournament-{seed}"))
    replaced = out is not None and any((out / name).exists() for name in OUTPUT_FILES)
    try:
        json_path, csv_path = save(folder, names, games, seed, options, results, table_rows, shuffle.value)
    except OSError as e:
        raise fail(f"cannot write the results to {folder}: {e.strerror or e}", code=1) from None
    note = " (replacing the results of an earlier run)" if replaced else ""
    console.print(f"saved {json_path} and {csv_path}{note}")


@app.command("play")
def play_cmd(
    ctx: typer.Context,
    vs: str = typer.Option("mcts", "--vs", help="The bot you play against: random, greedy, mcts[:time=S], "
                           "module:Class or cmd:PROGRAM."),
    seat: int = typer.Option(1, "--seat", min=1, max=2, help="Play as player 1 or 2 (who starts comes from the seed)."),
    ruleset: Ruleset = typer.Option(Ruleset.PORTAL2022.value, "--ruleset", case_sensitive=False,
                                    help="classic (2010) or portal2022."),
    festum: bool = typer.Option(False, "--festum", metavar="", help="Play with the festum expansion."),
    festum_removal: bool = typer.Option(False, "--festum-removal", metavar="", help="With --festum: remove 6 tiles."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Your own component manifest (JSON)."),
    replay_dir: Optional[Path] = typer.Option(None, "--replay-dir", help="Where the replay goes (default: the "
                                              "replays folder under --home)."),
) -> None:
    """Play a game against a bot in this terminal; the game is saved as a verifiable replay.

    Type actions in notation (Tab completes) or their number; 'help' lists the commands. Quitting is a forfeit.
    You play under your identity, made on first use and named after your login name ('basilica id rename NAME').
    """
    from .bots import BotSpecError, make_bot
    from .engine import Options
    from .identity import IdentityError, local_identity
    from .replay.verify import known_manifests, verify_file
    from .tui import TerminalPlayer, play_local

    import os

    home = home_of(ctx)
    man = load_manifest_option(manifest)
    try:
        options = Options(ruleset, festum, festum_removal)
        bot = make_bot(vs, man, int.from_bytes(os.urandom(8), "big"))
    except (BotSpecError, EngineError) as e:
        raise fail(str(e)) from None
    try:
        me = user_identity(home)
        label = bot_label(vs)
        them = local_identity(home, "bot-play", label if label != me.name else f"{label}-bot")
    except (IdentityError, OSError) as e:
        raise fail(f"identity: {e}") from None
    person = TerminalPlayer(me.name, manifest=man)
    try:
        result = play_local(person, bot, (me, them), seat - 1, man, options, replay_dir or home / "replays")
    except OSError as e:
        raise fail(f"cannot write the replay: {e.strerror or e}", code=1) from None
    finally:
        from .bots import close_bot

        close_bot(bot)
    g = result.game
    if result.forfeit is not None:
        typer.echo(f"{result.forfeit}: player {2 - result.forfeit.player} wins by forfeit")
    else:
        typer.echo(f"final score {g.scores[0]}-{g.scores[1]} ({g.end_reason})")
    verdict = verify_file(result.replay, {**known_manifests(), man.hash: man})
    typer.echo(verdict.line())
    if not verdict.ok:
        raise typer.Exit(1)


@app.command("demo")
def demo_cmd(
    replay_dir: Path = typer.Option(Path("basilica-demo"), "--replay-dir", help="Where both sides' replays go."),
    host_bot: str = typer.Option("greedy", "--host-bot", help="The host's bot."),
    join_bot: str = typer.Option("random", "--join-bot", help="The joiner's bot."),
    ruleset: Ruleset = typer.Option(Ruleset.PORTAL2022.value, "--ruleset", case_sensitive=False,
                                    help="classic (2010) or portal2022."),
    festum: bool = typer.Option(False, "--festum", metavar="", help="Play with the festum expansion."),
    boards: bool = typer.Option(True, "--boards/--no-boards", help="Show the board after every turn."),
) -> None:
    """Watch a whole networked game: a host and a joiner (two bots, two identities) over loopback TCP.

    Both sides run the real network code with their own engine and replay; at the end both replays are verified.
    """
    from .bots import BotSpecError, make_bot
    from .engine import Options
    from .net.demo import run_demo
    from .net.session import SessionError
    from .render import render_board
    from .replay.verify import verify_file

    try:
        for b in (host_bot, join_bot):
            make_bot(b, default_manifest(), 0)
        options = Options(ruleset, festum)
    except (BotSpecError, EngineError) as e:
        raise fail(str(e)) from None
    try:
        host_report, join_report = run_demo(replay_dir, (host_bot, join_bot), options, boards, typer.echo)
    except SessionError as e:
        raise fail(str(e), code=1) from None
    except OSError as e:
        raise fail(f"demo: {e.strerror or e}", code=1) from None
    o = host_report.outcome
    names = (join_report.peer, host_report.peer)  # each side's report names the other one
    if host_report.seat == 1:
        names = names[::-1]
    typer.echo(render_board(host_report.game, names))
    typer.echo(f"game over ({o.end}): {names[0]} {o.scores[0]} - {o.scores[1]} {names[1]}")
    typer.echo("verifying both replays:")
    ok = True
    for report in (host_report, join_report):
        v = verify_file(report.replay)
        ok = ok and v.ok
        typer.echo("  " + v.line())
    same = host_report.replay.read_bytes() == join_report.replay.read_bytes()
    typer.echo(f"  both sides hold the same records: {'yes' if same else 'NO'}")
    if not (ok and same):
        raise typer.Exit(1)


@app.command("resume")
def resume_cmd(
    ctx: typer.Context,
    replay: Path = typer.Argument(..., help="The replay of the unfinished game (its .session file must be next to it)."),
    window: float = typer.Option(120.0, "--window", min=0.1, help="Seconds to wait for the peer to come back; "
                                 "past it the peer loses by forfeit."),
    bot: Optional[str] = typer.Option(None, "--bot", help="Override the bot that played this side."),
    handshake_timeout: float = OPT_HANDSHAKE,
    idle_timeout: float = OPT_IDLE,
    ping_interval: float = OPT_PING,
    frame_timeout: float = OPT_FRAME,
    move_time: Optional[float] = OPT_MOVE,
    keep_session: bool = OPT_KEEP,
) -> None:
    """Reconnect after a crash or a dropped connection and finish the game.

    Run it on both sides: the host listens again on its port, the joiner dials again. Play goes on
    from the last message both hold; no move is lost or applied twice.
    """
    import os as _os

    from .bots import BotSpecError, make_bot
    from .identity import IdentityError, load_identity, local_identity
    from .tui import TerminalPlayer
    from .net.resume import Rendezvous, resume
    from .net.session import SessionError, Timeouts, sidecar_path
    from .replay.file import ReplayError

    side_file = sidecar_path(replay)
    try:
        info = json.loads(side_file.read_text(encoding="utf-8"))
        role, address, port = info["role"], info["address"], int(info["port"])
        if role not in ("host", "join") or not isinstance(address, str):
            raise ValueError
    except OSError:
        raise fail(f"no session file {side_file}: only games played with host or join can be resumed") from None
    except (ValueError, KeyError, TypeError):
        raise fail(f"{side_file} is damaged") from None
    root = ctx.find_root().obj
    home = Path(root) if root else Path(info.get("home") or home_of(ctx))
    manifests = load_manifests([Path(info["manifest"])] if info.get("manifest") else [])
    spec = bot or info.get("bot")
    try:
        if info.get("identity") == "user":
            me = load_identity(home)
        else:
            me = local_identity(home, str(info.get("identity")), str(info.get("name") or "bot"))
        agent = make_bot(spec, default_manifest(), int.from_bytes(_os.urandom(8), "big")) if spec else TerminalPlayer(me.name)
    except (IdentityError, BotSpecError) as e:
        raise fail(str(e)) from None
    if idle_timeout <= ping_interval:
        raise fail("--idle-timeout must be longer than --ping-interval")
    if move_time is None and isinstance(info.get("move_time"), (int, float)):
        move_time = float(info["move_time"])  # the limit the game was started with still holds
    timeouts = Timeouts(handshake_timeout, ping_interval, idle_timeout, frame_timeout, move_time)
    relay = info.get("relay")
    if isinstance(relay, list) and len(relay) == 2 and isinstance(relay[0], str) and isinstance(relay[1], int):
        try:
            key = bytes.fromhex(str(info.get("relay_key", "")))
        except ValueError:
            key = b""
        if len(key) != 32:
            raise fail(f"{side_file}: the relay key of this relayed game is missing or damaged", code=1)
        where = Rendezvous(role == "host", address, port, (relay[0], relay[1]), key)
    else:
        where = Rendezvous(role == "host", address, port)
    try:
        report = _run_trio(lambda: resume(replay, me, manifests, agent, where, timeouts, window,
                                          log=lambda m: typer.echo(m, err=True),
                                          on_move=agent.notify if isinstance(agent, TerminalPlayer) else None,
                                          keep_session=keep_session),
                           lambda: replay)
    except ReplayError as e:
        raise fail(f"{replay}: {e}", code=1) from None
    except SessionError as e:
        raise fail(str(e), code=1) from None
    except OSError as e:
        raise fail(f"network: {e.strerror or e}", code=1) from None
    _report_games([report], me.name)


@peers_app.command("list")
def peers_list(ctx: typer.Context) -> None:
    """Every peer name you have played and the fingerprint of its key (SHA-256 and words)."""
    from .fingerprint_words import fingerprint_words
    from .identity import fingerprint
    from .names import shown
    from .net.peers import KnownPeers, PeerKeyMismatch

    try:
        data = KnownPeers(home_of(ctx)).load()
    except PeerKeyMismatch as e:
        raise fail(str(e)) from None
    if not data:
        typer.echo("no known peers yet")
    for name, key in sorted(data.items()):
        raw = bytes.fromhex(key)
        # shown(): a look-alike spelled out, and a name from the network never prints control characters
        typer.echo(f"{shown(name):<24} {fingerprint(raw)}  {fingerprint_words(raw)}")


@peers_app.command("trust")
def peers_trust(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="The peer's name."),
    key: str = typer.Argument(..., help="Its public key, 64 hex digits (as the refusal message shows)."),
) -> None:
    """Accept a new key for a name (after checking with the peer that it really changed).

    It replaces the entry of any known name that looks the same (alice, Alice, аlice).
    """
    from .fingerprint_words import key_for_people
    from .names import shown
    from .net.peers import KnownPeers, PeerKeyMismatch

    try:
        raw = bytes.fromhex(key)
    except ValueError:
        raw = b""
    if len(raw) != 32:
        raise fail("a key is 64 hex digits")
    try:
        replaced = KnownPeers(home_of(ctx)).trust(name, raw)
    except PeerKeyMismatch as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write under {home_of(ctx)}: {e.strerror}") from None
    for old in replaced:
        typer.echo(f"{shown(old)} looked the same: replaced")
    typer.echo(f"{shown(name)} is now trusted with key {key_for_people(raw)}")


@peers_app.command("forget")
def peers_forget(ctx: typer.Context, name: str = typer.Argument(..., help="The peer's name.")) -> None:
    """Forget a peer, and any known name that looks the same; its key is learned again on the next contact."""
    from .names import shown
    from .net.peers import KnownPeers, PeerKeyMismatch

    try:
        gone = KnownPeers(home_of(ctx)).forget(name)
    except PeerKeyMismatch as e:
        raise fail(str(e)) from None
    except OSError as e:
        raise fail(f"cannot write under {home_of(ctx)}: {e.strerror}") from None
    if not gone:
        raise fail(f"no known peer named {name!r}")
    for old in gone:
        typer.echo(f"forgot {shown(old)}")


def _is_usage_error(e: Exception) -> bool:
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
        message = " ".join(e.format_message().split())  # type: ignore[attr-defined]
        if not message:  # no arguments at all: the help was shown
            sys.exit(2)
        ctx = getattr(e, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        typer.echo(f"error: {message}{hint}", err=True)
        sys.exit(2)
    # click returns an Exit's code rather than raising it
    _leave(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
