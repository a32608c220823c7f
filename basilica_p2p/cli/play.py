"""Playing a game: ``play`` (against a bot here), ``host`` and ``join`` (over the network),
``resume`` and ``demo``."""

from __future__ import annotations

import json
from dataclasses import replace
import re
import sys
from pathlib import Path
from typing import Optional

import typer

from ..clock import DEFAULT_DECISION, DEFAULT_WINDOW, Limits, TimeControl, TimeControlError
from ..engine import EngineError, Ruleset, default_manifest
from ._common import (
    NET_HELP, OPT_BOT, OPT_FESTUM, OPT_FRAME, OPT_HANDSHAKE, OPT_IDLE, OPT_KEEP, OPT_LOCAL_RULESET, OPT_MANIFEST,
    OPT_MAILBOX, OPT_MOVE, OPT_NET_SHUFFLE, OPT_NO_CHAT, OPT_NO_RELAY, OPT_NO_STUN, OPT_PING, OPT_PLAIN, OPT_RELAY, OPT_REMOVAL,
    OPT_REPLAY_DIR, OPT_RULESET, OPT_STUN, OPT_WINDOW, _report_games, _run_trio,
    bot_identity_name, fail, home_of, load_manifest_option, load_manifests, output_folder, say_where, user_identity,
)
from .watching import with_watchers
from ._peer import (
    WORMHOLE_CODE, NetOptions, _code_options, relay_address, _host_hint, _host_with_invite, _internet_options,
    _join_with_invite, _net_options, _run_peer, check_timeouts,
)


OPT_CLOCK = typer.Option(None, "--clock", metavar="MIN+SEC", help="Clocks: MIN minutes each plus SEC seconds per "
                         "decision (e.g. 15+10); out of time loses the game (docs/clocks.md).")


def _limits(window: Optional[int], move_time: Optional[float]) -> Limits:
    """The host's --window and --move-time, as the limits its hello names (the defaults for neither)."""
    try:
        return Limits(window if window is not None else DEFAULT_WINDOW,
                      round(move_time) if move_time is not None else DEFAULT_DECISION)
    except TimeControlError as e:
        raise fail(f"--window/--move-time: {e}") from None


def _clock(text: Optional[str]) -> Optional[TimeControl]:
    try:
        return TimeControl.parse(text) if text is not None else None
    except TimeControlError as e:
        raise fail(f"--clock: {e}") from None


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
    window: Optional[int] = OPT_WINDOW,
    keep_session: bool = OPT_KEEP,
    shuffle: str = OPT_NET_SHUFFLE,
    no_invite: bool = typer.Option(False, "--no-invite", metavar="", help=NET_HELP["no_invite"]),
    stun: Optional[list[str]] = OPT_STUN,
    no_stun: bool = OPT_NO_STUN,
    port_mapping: str = typer.Option("auto", "--port-mapping", metavar="MODE",
                                     help=NET_HELP["port_mapping"]),
    invite_ttl: int = typer.Option(600, "--invite-ttl", min=10, max=7 * 24 * 3600, help=NET_HELP["invite_ttl"]),
    code: bool = typer.Option(False, "--code", metavar="", help=NET_HELP["host_code"]),
    mailbox: Optional[str] = OPT_MAILBOX,
    relay: Optional[str] = OPT_RELAY,
    no_relay: bool = OPT_NO_RELAY,
    clock: Optional[str] = OPT_CLOCK,
    no_chat: bool = OPT_NO_CHAT,
    watchers: int = typer.Option(0, "--watchers", min=0, max=64, metavar="N", help=(
        "Let up to N people watch (8 is a good number): prints a watch code beside the invite for "
        "'basilica watch'; it lets nobody play, and watchers never slow the game.")),
    watch_port: int = typer.Option(0, "--watch-port", min=0, max=65535, help=(
        "The TCP port watchers connect to (0: any free port; the watch code names it).")),
    plain: bool = OPT_PLAIN,
) -> None:
    """Wait for a peer to join, then play. Prints where it listens and an invite to paste to the other player.

    The invite ('basilica join bas1:...') carries this side's key and the addresses where it may be
    reached, including a port mapped on the router and the public address a STUN server sees; only its
    holder can take the seat. If the joiner prints a reply code ('bas1r:...'), paste it here and both
    sides punch a hole through their routers.

    Without --bot you play under your identity, made on first use and named after your login name.
    'basilica id rename NAME' changes the name the other player sees.
    """
    from .. import net

    if code and no_invite:
        raise fail("--code needs an invite: leave out --no-invite")
    coded = _code_options(mailbox, relay, no_relay) if code else None  # before anything is printed
    options = NetOptions(bot, ruleset, festum, festum_removal, manifest, replay_dir,
                         net.Timeouts(handshake_timeout, ping_interval, idle_timeout, frame_timeout, move_time),
                         keep_session, shuffle, plain, chat=not no_chat)
    config = _net_options(options, ctx, "host", games, watchers)
    # Watchers may come through the relay too: the code's, or the one --relay names.
    watch_relay = (coded.relay if coded is not None else relay_address(relay) if relay is not None else None) \
        if watchers and not no_relay else None
    # The joiner takes the clock and the limits from our hello: the host's alone, so not in NetOptions.
    config.settings = replace(config.settings, clock=_clock(clock), limits=_limits(window, move_time))
    assert config.resume_info is not None
    config.resume_info["address"] = bind
    if not no_invite:
        internet = _internet_options(stun, no_stun, port_mapping, invite_ttl, handshake_timeout)
        _run_peer(lambda: with_watchers(bind, watch_port, config,
                                        lambda: _host_with_invite(bind, port, config, internet, coded), watch_relay,
                                        coded.mailbox if coded is not None and watchers else None),
                  config, f" ({bind}:{port})", _host_hint(bind, port))
        return

    def ready(address: str, actual: int) -> None:
        typer.echo(f"listening on {address}:{actual}", err=False)
        if address in ("0.0.0.0", "::"):
            typer.echo(f"(every interface: the joiner uses this machine's address, e.g. 127.0.0.1:{actual} "
                       "on this machine)", err=True)
        sys.stdout.flush()

    _run_peer(lambda: with_watchers(bind, watch_port, config, lambda: net.host(bind, port, config, ready),
                                    watch_relay),
              config, f" ({bind}:{port})", _host_hint(bind, port))


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
    keep_session: bool = OPT_KEEP,
    shuffle: str = OPT_NET_SHUFFLE,
    stun: Optional[list[str]] = OPT_STUN,
    no_stun: bool = OPT_NO_STUN,
    connect_timeout: float = typer.Option(60.0, "--connect-timeout", min=1.0, max=3600.0,
                                          help=NET_HELP["connect_timeout"]),
    code: Optional[str] = typer.Option(None, "--code", metavar="CODE", help=NET_HELP["join_code"]),
    mailbox: Optional[str] = OPT_MAILBOX,
    relay: Optional[str] = OPT_RELAY,
    no_relay: bool = OPT_NO_RELAY,
    no_chat: bool = OPT_NO_CHAT,
    plain: bool = OPT_PLAIN,
) -> None:
    """Connect to a host and play as many games as the host starts.

    With an invite, every address in it is tried at once and the host's key is checked against the one
    the invite pins. If none answers within a few seconds, this side prints a reply code for the host to
    paste, and both sides punch a hole through their routers.

    Without --bot you play under your identity, made on first use and named after your login name.
    'basilica id rename NAME' changes the name the other player sees.
    """
    from .. import net

    # The joiner has no --move-time: the host's hello names the limits.
    options = NetOptions(bot, ruleset, festum, festum_removal, manifest, replay_dir,
                         net.Timeouts(handshake_timeout, ping_interval, idle_timeout, frame_timeout, None),
                         keep_session, shuffle, plain, chat=not no_chat)
    wormhole_code = code or (address if address and WORMHOLE_CODE.match(address) else None)
    invited = wormhole_code or (address if address and re.match(r"\s*bas\d+r?:", address, re.IGNORECASE) else None)
    if invited is not None:
        _join_with_invite(ctx, invited, options,
                          _internet_options(stun, no_stun, "off", 600, handshake_timeout, connect_timeout),
                          _code_options(mailbox, relay, no_relay) if wormhole_code is not None else None)
        return
    if address is None:
        raise fail("give the invite (bas1:...), a code (--code 7-word-word) or the host's HOST:PORT")
    host_part, sep, port_part = address.rpartition(":")
    if not sep or not port_part.isdigit() or not 0 < int(port_part) < 65536 or not host_part:
        raise fail(f"{address!r} is not HOST:PORT")
    config = _net_options(options, ctx, "join")
    assert config.resume_info is not None
    config.resume_info.update(address=host_part.strip("[]"), port=int(port_part))
    _run_peer(lambda: net.join(host_part.strip("[]"), int(port_part), config), config, f" ({address})")


def play_cmd(
    ctx: typer.Context,
    vs: str = typer.Option("mcts", "--vs", help="The bot you play against: random, greedy, mcts[:time=S], "
                           "module:Class or cmd:PROGRAM."),
    seat: int = typer.Option(1, "--seat", min=1, max=2, help="Play as player 1 or 2 (who starts comes from the seed)."),
    ruleset: Ruleset = OPT_LOCAL_RULESET,
    festum: bool = OPT_FESTUM,
    festum_removal: bool = OPT_REMOVAL,
    manifest: Optional[Path] = OPT_MANIFEST,
    replay_dir: Optional[Path] = OPT_REPLAY_DIR,
    plain: bool = OPT_PLAIN,
    web: bool = typer.Option(False, "--web", metavar="", help="Serve the app as a web page (prints its URL)."),
    web_port: int = typer.Option(8000, "--web-port", min=1, max=65535, help="The port of --web's page."),
    clock: Optional[str] = OPT_CLOCK,
) -> None:
    """Play a game against a bot in this terminal; the game is saved as a verifiable replay.

    The full-screen app: click a market space, then a highlighted cell ('?' lists the keys). --plain: type
    actions in notation (Tab completes) or their number; 'help' lists the commands. Quitting is a forfeit.
    You play under your identity, made on first use and named after your login name ('basilica id rename NAME').
    """
    from ..bots import BotSpecError, make_bot
    from ..engine import Options
    from ..identity import IdentityError, local_identity
    from ..replay import known_manifests, verify_file
    from ..lineclient import TerminalPlayer, play_local

    import os

    home = home_of(ctx)
    man = load_manifest_option(manifest)
    time_control = _clock(clock)
    if web:
        from ..app import serve_play

        try:  # made (and said) here, not silently by the first page's own process
            user_identity(home)
        except (IdentityError, OSError) as e:
            raise fail(f"identity: {e}") from None
        serve_play(home, web_port, vs, seat, ruleset.value, festum, festum_removal, manifest, replay_dir, clock)
        return
    try:
        options = Options(ruleset, festum, festum_removal)
        bot = make_bot(vs, man, int.from_bytes(os.urandom(8), "big"))
    except (BotSpecError, EngineError) as e:
        raise fail(str(e)) from None
    from ..app import AppPlayer, run_in_app, wants_app

    try:
        me = user_identity(home, app_follows=wants_app(plain))
        label = bot_identity_name(vs)
        them = local_identity(home, "bot-play", label if label != me.name else f"{label}-bot")
    except (IdentityError, OSError) as e:
        raise fail(f"identity: {e}") from None
    folder = output_folder(ctx, replay_dir, "replays")
    person = AppPlayer(me.name, man, undo=True) if wants_app(plain) else TerminalPlayer(me.name, manifest=man)
    try:
        def game():
            return play_local(person, bot, (me, them), seat - 1, man, options, folder,
                              clock=time_control)

        result = run_in_app(person, game) if isinstance(person, AppPlayer) else game()
    except OSError as e:
        raise fail(f"cannot write the replay: {e.strerror or e}", code=1) from None
    finally:
        from ..bots import close_bot

        close_bot(bot)
    if result is None:
        typer.echo("the game closed before it began: no game was played, and no replay written")
        return
    g = result.game
    if result.forfeit is not None:
        typer.echo(f"{result.forfeit.summary}: player {2 - result.forfeit.player} wins by forfeit")
    elif result.on_time is not None:
        from ..clock import out_of_time

        names = (me.name, them.name) if seat == 1 else (them.name, me.name)
        typer.echo(out_of_time(result.on_time.loser, names, seat - 1))
        typer.echo(f"  ({result.on_time.figures(names)})")
    else:
        typer.echo(f"final score {g.scores[0]}-{g.scores[1]} ({g.end_reason})")
    say_where("replay", result.replay)
    verdict = verify_file(result.replay, {**known_manifests(), man.hash: man})
    typer.echo(verdict.line())
    if not verdict.ok:
        raise typer.Exit(1)
    manifest_option = f" --manifest {manifest}" if manifest is not None else ""
    typer.echo(f"analyse it: basilica replay analyse {result.replay}{manifest_option}  (the search bot's view of "
               "every move; 'basilica replay html' then draws it)")


def demo_cmd(
    ctx: typer.Context,
    replay_dir: Optional[Path] = typer.Option(None, "--replay-dir", "-o", help="Where both sides' replays go "
                                              "(default: the demo folder under --home)."),
    host_bot: str = typer.Option("greedy", "--host-bot", help="The host's bot."),
    join_bot: str = typer.Option("random", "--join-bot", help="The joiner's bot."),
    ruleset: Ruleset = OPT_LOCAL_RULESET,
    festum: bool = OPT_FESTUM,
    boards: bool = typer.Option(True, "--boards/--no-boards", help="Show the board after every turn."),
) -> None:
    """Watch a whole networked game: a host and a joiner (two bots, two identities) over loopback TCP.

    Both sides run the real network code with their own engine and replay; at the end both replays are verified.
    """
    from ..bots import BotSpecError, make_bot
    from ..engine import Options
    from ..net import SessionError, run_demo
    from ..render import render_board
    from ..replay import Agreement, verify_file

    try:
        for b in (host_bot, join_bot):
            make_bot(b, default_manifest(), 0)
        options = Options(ruleset, festum)
    except (BotSpecError, EngineError) as e:
        raise fail(str(e)) from None
    try:
        folder = output_folder(ctx, replay_dir, "demo")
        host_report, join_report = run_demo(folder, (host_bot, join_bot), options, boards, typer.echo)
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
    verdicts = [verify_file(report.replay) for report in (host_report, join_report)]
    for v in verdicts:
        typer.echo("  " + v.line())
    agreement = Agreement(*verdicts)
    typer.echo("  " + agreement.line())
    say_where("replays", folder)
    if not (all(v.ok for v in verdicts) and agreement.same):
        raise typer.Exit(1)


def resume_cmd(
    ctx: typer.Context,
    replay: Path = typer.Argument(..., help="The replay of the unfinished game (its .session file must be next to it)."),
    window: Optional[float] = typer.Option(None, "--window", min=0.1, help="Seconds to wait for the peer to come "
                                           "back, past which it loses by forfeit, for a game from an older client "
                                           "(default 120); a game that agreed its window (protocol 3) waits that."),
    bot: Optional[str] = typer.Option(None, "--bot", help="Override the bot that played this side."),
    handshake_timeout: float = OPT_HANDSHAKE,
    idle_timeout: float = OPT_IDLE,
    ping_interval: float = OPT_PING,
    frame_timeout: float = OPT_FRAME,
    move_time: Optional[float] = typer.Option(None, "--move-time", min=0.1, help=NET_HELP["resume_move"]),
    keep_session: bool = OPT_KEEP,
    no_chat: bool = OPT_NO_CHAT,
    plain: bool = OPT_PLAIN,
) -> None:
    """Reconnect after a crash or a dropped connection and finish the game.

    Run it on the side whose program stopped: a side that stayed is waiting for it, within the window
    the game agreed (run it on both if both stopped). The host listens again on its port, the joiner
    dials again, and each proves who it is before anything is said. Play goes on from the last message
    both hold; no move is lost or applied twice.
    """
    import os as _os

    from ..bots import BotSpecError, make_bot
    from ..identity import IdentityError, load_identity, local_identity
    from ..app import AppPlayer, run_in_app, stoppable, wants_app
    from ..lineclient import TerminalPlayer
    from ..net import Rendezvous, SessionError, Timeouts, sidecar_path
    from ..net.resume import resume
    from ..replay import ReplayError

    side_file = sidecar_path(replay)
    if not side_file.exists():
        _nothing_to_resume(replay, side_file)
        return
    try:
        info = json.loads(side_file.read_text(encoding="utf-8"))
        if not isinstance(info, dict):
            raise ValueError("not a session file")
        where = Rendezvous.from_info(info)
    except OSError as e:
        raise fail(f"cannot read {side_file}: {e.strerror or e}") from None
    except ValueError as e:
        raise fail(f"{side_file} is damaged: {e}", code=1) from None
    root = ctx.find_root().obj
    home = Path(root) if root else Path(info.get("home") or home_of(ctx))
    manifests = load_manifests([Path(info["manifest"])] if info.get("manifest") else [])
    spec = bot or info.get("bot")
    try:
        if info.get("identity") == "user":
            me = load_identity(home)
        else:
            me = local_identity(home, str(info.get("identity")), str(info.get("name") or "bot"))
        agent = make_bot(spec, default_manifest(), int.from_bytes(_os.urandom(8), "big")) if spec else \
            AppPlayer(me.name, network=True) if wants_app(plain) else TerminalPlayer(me.name)
    except (IdentityError, BotSpecError) as e:
        raise fail(str(e)) from None
    if move_time is None and isinstance(info.get("move_time"), (int, float)):
        move_time = float(info["move_time"])  # the limit the game was started with still holds
    timeouts = Timeouts(handshake_timeout, ping_interval, idle_timeout, frame_timeout, move_time)
    check_timeouts(timeouts)

    def game():
        return resume(replay, me, manifests, agent, where, timeouts, window, log=lambda m: typer.echo(m, err=True),
                      keep_session=keep_session, chat=not no_chat and not spec)

    try:
        if isinstance(agent, AppPlayer):  # the game in a thread of its own, the app in this one
            report = run_in_app(agent, lambda: _run_trio(stoppable(agent, game), lambda: replay))
        else:
            report = _run_trio(game, lambda: replay)
    except ReplayError as e:
        raise fail(f"{replay}: {e}", code=1) from None
    except SessionError as e:
        raise fail(str(e), code=1) from None
    except OSError as e:
        raise fail(f"network: {e.strerror or e}", code=1) from None
    _report_games([report], me.name)


def _nothing_to_resume(replay: Path, side_file: Path) -> None:
    """Without its session file a game cannot go on; one that is finished (the file is deleted once
    both sides hold the result) says so, with its result, and where its replay is."""
    from ..replay import verify_file

    if not replay.exists():
        raise fail(f"no replay {replay}")
    verdict = verify_file(replay)
    if not verdict.ok:
        raise fail(f"no session file {side_file}: only games played with host or join can be resumed "
                   f"({verdict.error})")
    typer.echo(f"this game is finished, nothing to resume: {verdict.summary()}")
    say_where("replay", replay)
