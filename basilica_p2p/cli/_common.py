"""What several commands share: one-line failures, the home directory, manifests, seeds and
identities, running trio with Ctrl-C handled, where output goes, and the option declarations that
several commands reuse (typer lets commands share one declaration: add a shared option here once)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Optional

import typer

from ..engine import EngineError, Manifest, Options, Ruleset, default_manifest, parse_manifest
from ..schemes import COMMIT_REVEAL, HIDDEN_DEAL


HELP_NAMES = ["-h", "--help"]


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print one line on stderr and return the Exit to raise."""
    typer.echo(f"error: {message}", err=True)  # plain: rich would wrap a long line
    return typer.Exit(code)


def home_of(ctx: typer.Context) -> Path:
    from ..identity import home_dir

    root = ctx.find_root()
    return home_dir(root.obj if root.obj else None)


def output_folder(ctx: typer.Context, given: Optional[Path], default: str) -> Path:
    """``given`` (-o / --replay-dir / --out), else the folder ``default`` under --home: nothing is
    written to the current folder unless asked for."""
    return given if given is not None else home_of(ctx) / default


def say_where(what: str, path: Path) -> None:
    """The one line each command prints about where it wrote (``replay: PATH``), for people and scripts."""
    typer.echo(f"{what}: {path}")


def load_manifests(paths: list[Path]) -> dict[str, Manifest]:
    """The default manifest and every one given with --manifest, by hash."""
    from ..replay import known_manifests

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


def check_dealable(manifest: Manifest, options: Options, shuffle: str, given: Optional[Path]) -> None:
    """A game the hidden deal cannot deal (too many tiles or classes for its messages) is refused
    here, in one line, before any game or connection begins (PROTOCOL.md §5b)."""
    from ..dealer import deal_problem

    problem = deal_problem(manifest, options) if shuffle == HIDDEN_DEAL else None
    if problem is not None:
        where = f"manifest {given}" if given is not None else "the default manifest"
        raise fail(f"{where}: {problem}; it can be played with --shuffle {COMMIT_REVEAL}")


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


class Shuffle(StrEnum):
    """The shuffle schemes a local match or tournament can deal with (protocol/PROTOCOL.md §5, §5b)."""

    COMMIT_REVEAL = COMMIT_REVEAL
    HIDDEN = HIDDEN_DEAL


SHUFFLE_HELP = (f"How the stack is dealt: {COMMIT_REVEAL} (the default: both seats are on this machine, so "
                f"nothing is hidden from anyone) or {HIDDEN_DEAL} (face down, audited at the end, as between two peers; "
                "slower).")


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


def user_identity(home: Path, app_follows: bool = False):
    """The person's identity under ``home``, made on first use (named after the login name).

    A new one is said on the terminal; when the full-screen app takes the terminal right after
    (``app_follows``: play, join), the person is asked to press Enter first, or the words
    would be under the app until it closes."""
    from ..identity import IdentityError, create_identity, default_name, load_identity

    try:
        return load_identity(home)
    except IdentityError:
        me = create_identity(home, default_name())
        typer.echo(f"made a new identity {me.name!r} in {home}; other players see this name "
                   "(change it with 'basilica id rename NAME')", err=True)
        if app_follows and _at_terminal():
            try:
                input("press Enter to start the game (Ctrl-C stops here) ")
            except EOFError:
                pass  # no more input: the game starts anyway
        return me


def _at_terminal() -> bool:
    try:
        return sys.stdin.isatty() and sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def bot_identity_name(spec: str) -> str:
    """A short name for a bot's identity: ``greedy``, ``mcts``, ``MyBot``, ``cmd-line_bot``, ``policy-model``."""
    import re

    text = spec.strip()
    if text.lower().startswith("cmd:"):
        words = text[4:].split()
        program = Path(words[-1] if words and words[0].startswith("python") else (words[0] if words else "bot"))
        text = "cmd-" + program.stem
    elif text.lower().startswith("policy:"):
        text = "policy-" + Path(text[7:].strip()).stem
    elif ":" in text:
        head, _, tail = text.partition(":")
        text = head if head.lower() in ("mcts",) else tail
    return re.sub(r"[^A-Za-z0-9_.-]", "-", text)[:40] or "bot"


def _report_games(reports, me_name: str) -> None:
    """One line per game: both names in seat order, each with its score, ours marked "you".

    ``game 1: alice (player 1, you) 31 - 12 bob (player 2): you won, 40 moves (score); replay ...``
    """
    for i, r in enumerate(reports, start=1):
        typer.echo(report_line(i, r, me_name))
    if len(reports) > 1:
        from ..net import counted

        series = None
        for r in reports:
            series = counted(series, me_name, r)
        assert series is not None
        typer.echo(f"series: {series.line()}")


def report_line(number: int, r, me_name: str) -> str:
    """The line :func:`_report_games` says for game ``number`` (a GameReport ``r``)."""
    o = r.outcome
    names = [me_name, r.peer] if r.seat == 0 else [r.peer, me_name]
    sides = [f"{n} (player {k + 1}{', you' if k == r.seat else ''})" for k, n in enumerate(names)]
    if o.end == "forfeit":
        from ..printable import printable

        loser = me_name if o.winner != r.seat else r.peer
        why = f" ({printable(loser, 64)}: {printable(o.reason, 200)})" if o.reason else ""
        what = ("you won by forfeit" if o.winner == r.seat else "you forfeited") + why
    elif o.end == "fault":  # won by proof (referee.END_FAULT)
        from ..narration import fault_words

        what = fault_words(o, (names[0], names[1]), r.seat)
    elif o.end == "time":
        what = "you won on time" if o.winner == r.seat else f"{r.peer} won on time (your clock ran out)"
    elif o.winner is None:
        what = "shared victory"
    else:
        what = "you won" if o.winner == r.seat else f"{r.peer} won"
    return (f"game {number}: {sides[0]} {o.scores[0]} - {o.scores[1]} {sides[1]}: {what}, "
            f"{o.moves} move{'' if o.moves == 1 else 's'} ({o.end}); replay {r.replay}")


def _leaf_errors(e: BaseException) -> list[BaseException]:
    if isinstance(e, BaseExceptionGroup):
        return [leaf for sub in e.exceptions for leaf in _leaf_errors(sub)]
    return [e]


def _terminal_state():
    """The terminal's settings, if standard input is one (POSIX), to put back after Ctrl-C."""
    try:
        import termios

        return termios.tcgetattr(sys.stdin.fileno()) if sys.stdin.isatty() else None
    except (ImportError, OSError, ValueError, AttributeError):
        return None


def _restore_terminal(state) -> None:
    if state is None:
        return
    try:
        import termios

        termios.tcsetattr(sys.stdin.fileno(), termios.TCSANOW, state)
    except (ImportError, OSError, ValueError, AttributeError):
        pass


def _run_trio(fn, replay):
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


NET_HELP = {
    "bot": "Let a bot play: random, greedy, mcts[:time=S], module:Class or cmd:PROGRAM (docs/bots.md). "
           "Without it you play in the terminal (docs/playing.md).",
    "replay_dir": "Where this side's replays go (default: the replays folder under --home).",
    "seed": "Any text; every game's seed is derived from it (default '0', or random text when a cmd: bot plays).",
    "handshake": "Seconds for the hellos to be exchanged.",
    "idle": "Seconds of silence (not even a keepalive) after which the peer is gone.",
    "ping": "Seconds between keepalives.",
    "frame": "Seconds a started frame may take to arrive whole (stops byte-trickling peers).",
    "move": "Seconds a decision may take in a game without a clock (10 to 86400; default 600); past it the "
            "other side claims the game. The joiner takes the host's.",
    "window": "Seconds a side whose connection broke or whose program stopped has to come back (it runs "
              "'basilica resume') before the other side claims the game (10 to 3600; default 120). The joiner "
              "takes the host's.",
    "resume_move": "For a game from an older client, which agreed no limits: seconds the peer may take per "
                   "decision (default: none); a game that agreed its limits keeps them.",
    "shuffle": f"How the stack is dealt: {HIDDEN_DEAL} (the default: face down, so that neither side can see it, "
               f"audited at the end) or {COMMIT_REVEAL} (one seed both sides know: the stack is unbiased but "
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
    "mailbox": "The Magic Wormhole mailbox server for --code (default: the public one, named below).",
    "relay": "The Magic Wormhole transit relay used when no direct way connects (default: the public one, "
             "named below).",
    "no_relay": "With --code: play directly or not at all (never through a relay).",
    "keep": "Keep each game's hidden .session file (what resume needs) after the game is finished and both "
            "sides hold the result; by default it is deleted then.",
}


# Below the options of host and join, where a long address has the whole width (in the table's
# narrow help column, rich cut it short with an ellipsis).
CODE_SERVERS = ("With --code, the public Magic Wormhole servers are used unless --mailbox or --relay names "
                "another: the mailbox ws://relay.magic-wormhole.io:4000/v1 and the transit relay "
                "transit.magic-wormhole.io:4001 (docs/wormhole.md).")


# Options shared by several commands: play, host and join (and resume for the timeouts); match, tournament,
# play and demo for the local ruleset and seed.
OPT_BOT = typer.Option(None, "--bot", help=NET_HELP["bot"])
OPT_RULESET = typer.Option(Ruleset.PORTAL2022.value, "--ruleset", case_sensitive=False,
                           help="classic (2010) or portal2022; both sides must agree.")
OPT_LOCAL_RULESET = typer.Option(Ruleset.PORTAL2022.value, "--ruleset", case_sensitive=False,
                                 help="classic (2010) or portal2022.")
OPT_SEED = typer.Option(None, "--seed", help=NET_HELP["seed"])
OPT_FESTUM = typer.Option(False, "--festum", metavar="", help="Play with the festum expansion.")
OPT_REMOVAL = typer.Option(False, "--festum-removal", metavar="", help="With --festum: remove 6 tiles.")
OPT_MANIFEST = typer.Option(None, "--manifest", help="Your own component manifest (JSON).")
OPT_REPLAY_DIR = typer.Option(None, "--replay-dir", "-o", help=NET_HELP["replay_dir"])
OPT_HANDSHAKE = typer.Option(20.0, "--handshake-timeout", min=0.1, help=NET_HELP["handshake"])
OPT_IDLE = typer.Option(30.0, "--idle-timeout", min=0.1, help=NET_HELP["idle"])
OPT_PING = typer.Option(5.0, "--ping-interval", min=0.05, help=NET_HELP["ping"])
OPT_FRAME = typer.Option(10.0, "--frame-timeout", min=0.1, help=NET_HELP["frame"])
OPT_MOVE = typer.Option(None, "--move-time", min=0.1, help=NET_HELP["move"])
OPT_WINDOW = typer.Option(None, "--window", min=10, max=3600, help=NET_HELP["window"])
OPT_KEEP = typer.Option(False, "--keep-session", metavar="", help=NET_HELP["keep"])
OPT_NET_SHUFFLE = typer.Option(HIDDEN_DEAL, "--shuffle", metavar="SCHEME",  # the help names both
                               help=NET_HELP["shuffle"])
OPT_STUN = typer.Option(None, "--stun", metavar="HOST:PORT", help=NET_HELP["stun"])
OPT_NO_STUN = typer.Option(False, "--no-stun", metavar="", help=NET_HELP["no_stun"])
OPT_MAILBOX = typer.Option(None, "--mailbox", metavar="URL", help=NET_HELP["mailbox"])
OPT_RELAY = typer.Option(None, "--relay", metavar="HOST:PORT", help=NET_HELP["relay"])
OPT_NO_RELAY = typer.Option(False, "--no-relay", metavar="", help=NET_HELP["no_relay"])
OPT_NO_CHAT = typer.Option(False, "--no-chat", metavar="", help=(
    "Take no chat: the other player is told that this side reads none, and lines sent anyway are "
    "neither shown nor recorded (the app's 'm' mutes lines for a while instead)."))
OPT_PLAIN = typer.Option(False, "--plain", metavar="", help=(
    "The line client (screen readers, scripts, dumb terminals) instead of the full-screen app; also "
    "when this is not a terminal."))
