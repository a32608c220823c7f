"""The network glue behind host and join: their shared configuration, invites, codes, and
what to say when the network fails."""

from __future__ import annotations

import itertools
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ..engine import EngineError, Ruleset
from ..schemes import SCHEMES
from ._common import (
    _report_games, _run_trio, bot_identity_name, check_dealable, fail, home_of, load_manifest_option, output_folder,
    report_line, user_identity,
)

if TYPE_CHECKING:
    from ..net import CodeOptions, InternetOptions, PeerConfig, Timeouts


@dataclass(frozen=True)
class NetOptions:
    """What host and join share, as their command line gave it; checked by :func:`_net_options`."""

    bot: Optional[str]  # the bot that plays this side; None: the person at this terminal
    ruleset: Ruleset
    festum: bool
    festum_removal: bool
    manifest: Optional[Path]  # the --manifest file, if given
    replay_dir: Optional[Path]
    timeouts: Timeouts
    keep_session: bool
    shuffle: str  # the deal's scheme (schemes.SCHEMES)
    plain: bool  # the line client, not the app
    chat: bool  # take lines of chat (a person's side; without --no-chat)


def _net_options(options: NetOptions, ctx: typer.Context, role: str, games: int = 1,
                 watchers: int = 0) -> PeerConfig:
    """Everything host and join share, checked, as a PeerConfig; ``watchers``: how many people
    may watch (the host's --watchers)."""
    import os as _os

    from ..bots import BotSpecError, close_bot, make_bot
    from ..engine import Options
    from ..identity import IdentityError, local_identity
    from ..known_peers import KnownPeers
    from ..net import GameLedger, PeerConfig, Settings, WatchHub
    from ..lineclient import TerminalPlayer

    bot, manifest, shuffle, timeouts = options.bot, options.manifest, options.shuffle, options.timeouts
    home = home_of(ctx)
    man = load_manifest_option(manifest)
    try:
        rules = Options(options.ruleset, options.festum, options.festum_removal)
    except EngineError as e:
        raise fail(str(e)) from None
    if shuffle not in SCHEMES:
        raise fail(f"--shuffle {shuffle!r}: choose {' or '.join(SCHEMES[::-1])}")
    check_dealable(man, rules, shuffle, manifest)
    check_timeouts(timeouts)
    try:
        if bot:
            close_bot(make_bot(bot, man, 0))  # fail early on a bad name
            me = local_identity(home, f"bot-{role}", f"{bot_identity_name(bot)}-{role}")
        else:
            from ..app import wants_app

            # The joiner's app takes the terminal at once; the host's only after its invite was used.
            me = user_identity(home, app_follows=role == "join" and wants_app(options.plain))
    except BotSpecError as e:
        raise fail(str(e)) from None
    except (IdentityError, OSError) as e:
        raise fail(f"identity: {e}") from None

    from ..app import AppPlayer, wants_app

    person = None if bot else AppPlayer(me.name, man, network=True) if wants_app(options.plain) else \
        TerminalPlayer(me.name, manifest=man)

    def agent_for(k: int) -> object:
        if bot:  # then there is no person
            return make_bot(bot, man, int.from_bytes(_os.urandom(8), "big"))
        return person

    def log(m: str) -> None:
        typer.echo(m, err=True)

    # A bot's games are said one line each as they end, and not kept: 'host --games N' runs for
    # hours, and its memory stays flat.  A person's are said at the end, after the app has given
    # the terminal back (_run_peer).
    played = itertools.count(1)
    resume_info: dict[str, object] = {
        "role": role, "identity": f"bot-{role}" if bot else "user", "name": me.name, "bot": bot,
        "home": str(home.resolve()), "manifest": str(manifest.resolve()) if manifest else None,
        "move_time": timeouts.move, "keep_session": options.keep_session,
    }
    return PeerConfig(
        me, Settings(rules, man, shuffle), agent_for, output_folder(ctx, options.replay_dir, "replays"),
        KnownPeers(home), timeouts, games, log=log,
        on_game=(lambda report: typer.echo(report_line(next(played), report, me.name))) if person is None else None,
        resume_info=resume_info, keep_session=options.keep_session, ledger=GameLedger(home),
        keep_reports=person is not None,
        hub=WatchHub(me, watchers, log) if watchers else None,
        watching=person is not None,  # a joining person is told who watches, and may close watching
        chat=options.chat and person is not None,  # bots ignore chat, and are sent none
        again=person is not None,  # a person may play again after the game (net/again.py); a bot never asks
        person=person,
    )


def check_timeouts(timeouts: Timeouts) -> None:
    """The deadlines host, join and resume were given, as one line when they cannot work together."""
    if timeouts.idle <= timeouts.ping_interval:
        raise fail("--idle-timeout must be longer than --ping-interval")


def _run_peer(coro_fn, config, where: str = "", hint=None) -> None:
    """Run host or join; ``hint(error)`` says what to check after a network error."""
    from ..app import AppPlayer, run_in_app, stoppable
    from ..net import SessionError

    person = config.person
    try:
        if isinstance(person, AppPlayer):  # the game in a thread of its own, the app in this one
            reports = run_in_app(person, lambda: _run_trio(stoppable(person, coro_fn), lambda: config.current))
        else:
            reports = _run_trio(coro_fn, lambda: config.current)
    except SessionError as e:
        raise fail(str(e), code=1) from None
    except OSError as e:
        advice = hint(e) if hint is not None else "is the host running and reachable?"
        raise fail(f"network{where}: {e.strerror or e} ({advice})", code=1) from None
    _report_games(reports, config.me.name)


def _host_hint(bind: str, port: int):
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


def _internet_options(stun: Optional[list[str]], no_stun: bool, port_mapping: str, ttl: int,
                      handshake: float, give_up: float = 60.0) -> InternetOptions:
    from ..net import DEFAULT_SERVERS, MAPPING_PROTOCOLS, GateLimits, InternetOptions

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


def _code_options(mailbox: Optional[str], relay: Optional[str], no_relay: bool) -> CodeOptions:
    """--mailbox, --relay and --no-relay, checked, and the internet extra that codes need."""
    from ..net import PUBLIC_MAILBOX, PUBLIC_RELAY, CodeOptions, missing_extra

    missing = missing_extra()
    if missing is not None:
        raise fail(missing, code=1)
    if mailbox is not None and not re.match(r"wss?://", mailbox):
        raise fail(f"--mailbox {mailbox!r} is not a ws:// or wss:// URL")
    where = PUBLIC_RELAY if relay is None else relay_address(relay)
    return CodeOptions(mailbox or PUBLIC_MAILBOX, None if no_relay else where)


def relay_address(relay: str) -> tuple[str, int]:
    """--relay HOST:PORT, checked."""
    host_part, sep, port_part = relay.rpartition(":")
    if not sep or not port_part.isdigit() or not 0 < int(port_part) < 65536 or not host_part:
        raise fail(f"--relay {relay!r} is not HOST:PORT")
    return host_part.strip("[]"), int(port_part)


async def _stdin_lines():
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


async def _host_with_invite(bind: str, port: int, config, internet, coded=None):
    import time
    from contextlib import AsyncExitStack

    from ..net import GateClosed, SessionError, describe_path, format_invite, host_connection, play_games, reply_reader

    def ready(r) -> None:
        config.resume_info["port"] = r.port
        typer.echo(f"listening on {bind}:{r.port}")
        typer.echo(f"invite: basilica join {format_invite(r.invite)}")
        sys.stdout.flush()
        for note in r.notes:
            typer.echo(note, err=True)
        typer.echo(f"give the invite line to the other player (it is valid for {internet.ttl} s and lets in one "
                   "player); if they print a 'reply: bas1r:...' line, paste it here and press Enter", err=True)

    def gathered(g) -> None:
        for note in g.notes:
            typer.echo(note, err=True)
        if g.invite is not None:
            typer.echo(f"invite: basilica join {format_invite(g.invite)}")
            sys.stdout.flush()
            typer.echo("the invite above is the same seat with addresses for a player on another network "
                       "(the first one works on this network only)", err=True)
        if g.not_found is not None:
            typer.echo(g.not_found, err=True)

    companions = [reply_reader(_stdin_lines())]
    relayed: dict[str, object] = {}  # filled by the wormhole: which relay, and the key to meet there again
    if coded is not None:
        from ..net import wormhole_companion

        def show_code(text: str) -> None:
            typer.echo(f"code: basilica join --code {text}")
            sys.stdout.flush()
            typer.echo("or read the code out to the other player: it works once, and a wrong guess ends it",
                       err=True)

        companions.append(wormhole_companion(coded, show_code, internet.ttl, relayed))
    async with AsyncExitStack() as stack:
        try:
            admitted = await host_connection(bind, port, config.me, internet, int(time.time()), ready, config.log,
                                             companions, stack, config.timeouts.frame, gathered)
        except GateClosed as e:
            raise SessionError(str(e)) from None
        if admitted.via == "relayed":
            from ..net import relay_note

            typer.echo(relay_note(admitted.peer), err=True)
            config.resume_info.update(relayed)  # basilica resume meets there again
        else:
            typer.echo(f"connected: {describe_path(admitted.via)} (from {admitted.peer})", err=True)
        config.pinned = admitted.joiner_key
        admitted.framed.frame_timeout = config.timeouts.frame  # the knock had a shorter one
        return await play_games(admitted.framed, True, config)


def _join_with_invite(ctx: typer.Context, code: str, options: NetOptions, internet: InternetOptions,
                      coded: CodeOptions | None = None) -> None:
    """Join by an invite code (bas1:...) or, with ``coded``, by a wormhole code (7-word-word)."""
    import time

    from ..net import GameLedger, InviteError, invite_id, parse_invite

    invite = None
    if coded is None:
        try:
            invite = parse_invite(code, int(time.time()))
        except InviteError as e:
            raise fail(f"invite: {e}") from None
    config = _net_options(options, ctx, "join")
    used = GameLedger(home_of(ctx), "invites_used")
    ident = bytes.fromhex(invite_id(invite)) if invite is not None else b""
    if invite is not None and used.signed(config.me.public, ident):
        raise fail("this invite was used already: ask the host for a new one", code=1)

    async def run():
        from dataclasses import replace

        from ..net import NoPath, SessionError, join_connection, play_games, seated_play

        def show_reply(text: str) -> None:
            typer.echo(f"reply: {text}")
            sys.stdout.flush()
            typer.echo("no address in the invite answered yet: give the reply line above to the host, who pastes "
                       "it into its window; both sides then punch a hole through their routers", err=True)

        async def connect(seconds: float):
            try:
                if coded is not None:
                    from ..net import join_with_code

                    return await join_with_code(code, config.me, internet, coded, int(time.time()), config.log)
                assert invite is not None  # parsed above when no wormhole code is given
                return await join_connection(invite, config.me, replace(internet, give_up=seconds), show_reply,
                                             config.log)
            except NoPath as e:
                for where, why in e.failures:
                    typer.echo(f"  {where}: {why}", err=True)
                raise SessionError(str(e)) from None

        async def play(dialed):
            if dialed.via == "relayed":
                from ..net import relay_note

                typer.echo(relay_note(dialed.address.removeprefix("relay ")), err=True)
                config.resume_info.update(dialed.relayed)  # basilica resume meets there again
            host_part, _, port_part = dialed.address.removeprefix("relay ").rpartition(":")
            config.resume_info.update(address=host_part.strip("[]"), port=int(port_part))
            config.pinned = dialed.host_key
            dialed.framed.frame_timeout = config.timeouts.frame
            return await play_games(dialed.framed, False, config)

        try:
            if coded is not None:  # a wormhole's code works once: no second try
                return await play(await connect(internet.give_up))
            return await seated_play(connect, play, lambda: config.games_begun > 0, internet.give_up, config.log)
        finally:
            if config.games_begun and invite is not None:  # the seat was really taken: a game has a replay
                used.claim(config.me.public, ident)

    _run_peer(run, config, "", lambda e: "the invite's addresses did not answer")
