"""``basilica watch``, and the host's side of watching (``host --watchers N``)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Optional

import typer

from ._common import OPT_MAILBOX, OPT_PLAIN, _run_trio, fail, home_of, user_identity
from ._peer import WORMHOLE_CODE


async def with_watchers(bind: str, watch_port: int, config: Any, play: Callable[[], Awaitable[Any]],
                        relay: tuple[str, int] | None = None, mailbox: str | None = None) -> Any:
    """Run ``play`` (the host's games) while the hub of ``config`` takes watchers on its own
    listener (and, with a ``relay``, on that transit relay too), after printing the watch code
    beside the invite; with a ``mailbox`` (host --code), also a code to read aloud for it."""
    hub = config.hub
    if hub is None:
        return await play()
    import time

    import trio

    from ..net import Candidate, local_candidates

    listeners = await trio.open_tcp_listeners(watch_port, host=bind)
    port = listeners[0].socket.getsockname()[1]
    candidates = local_candidates(port) if bind in ("0.0.0.0", "::") else [Candidate("lan", bind, port)]
    if not candidates:
        candidates = [Candidate("lan", "127.0.0.1", port)]
    relay_ip: tuple[str, int] | None = None
    if relay is not None:
        try:
            found = await trio.socket.getaddrinfo(relay[0], relay[1], type=trio.socket.SOCK_STREAM)
            relay_ip = (str(found[0][4][0]), relay[1])
        except OSError as e:
            typer.echo(f"watchers cannot come through the relay {relay[0]}:{relay[1]}: {e.strerror or e}", err=True)
            relay = None
    watch_code = hub.code(candidates[:16], int(time.time()), relay_ip)
    typer.echo(f"watch code: basilica watch {watch_code}")
    sys.stdout.flush()
    typer.echo(f"anyone with the watch code may watch (at most {hub.limit} at once; it lets nobody play); "
               f"watchers connect to port {port}", err=True)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hub.serve, listeners[0])
        if relay is not None:
            nursery.start_soon(hub.serve_relay, relay)
        if mailbox is not None:
            from ..net import hand_out_watch_codes

            def show(code: str) -> None:
                typer.echo(f"watch code to read aloud: basilica watch --code {code}")
                sys.stdout.flush()

            nursery.start_soon(hand_out_watch_codes, mailbox, watch_code, show, config.log)
        try:
            return await play()
        finally:
            nursery.cancel_scope.cancel()


def watch_cmd(
    ctx: typer.Context,
    code: Optional[str] = typer.Argument(None, help="The watch code the host printed (basilica watch bas1w:...)."),
    spoken: Optional[str] = typer.Option(None, "--code", metavar="CODE", help="A watch code read aloud "
                                         "(7-word-word, printed by a host started with --code and --watchers): "
                                         "it fetches the watch code through the mailbox, once."),
    mailbox: Optional[str] = OPT_MAILBOX,
    at: Optional[str] = typer.Option(None, "--at", metavar="HOST:PORT", help="Connect here instead of the "
                                     "direct addresses in the code (a port forwarded by hand, a tunnel); a relay "
                                     "the code names is still tried after it."),
    manifest: list[Path] = typer.Option([], "--manifest", metavar="FILE", help="The manifest the game uses, if not the default."),
    plain: bool = OPT_PLAIN,
) -> None:
    """Watch a game someone hosts with --watchers: every move as it is played, from the start.

    Every record the host sends is checked as 'basilica verify' checks it (a forged one stops the
    watch), and only what both players see is shown: a tile dealt face down, or a secret Jester
    choice, only once the rules reveal it. Watching never slows the game; Ctrl-C stops watching.
    """
    import time

    from ..net import InviteError, WatchError, parse_watch
    from ._common import load_manifests

    if spoken is None and code is not None and WORMHOLE_CODE.match(code):
        spoken, code = code, None
    if spoken is not None:
        code = _fetched(spoken, mailbox)
    if code is None:
        raise fail("give the watch code (basilica watch bas1w:...) or a code read aloud (--code 7-word-word)")
    try:
        watched = parse_watch(code, int(time.time()))
    except InviteError as e:
        raise fail(f"watch code: {e}") from None
    where = [(c.kind, c.host, c.port) for c in watched.candidates]
    if at is not None:
        host_part, sep, port_part = at.rpartition(":")
        if not sep or not port_part.isdigit() or not 0 < int(port_part) < 65536 or not host_part:
            raise fail(f"--at {at!r} is not HOST:PORT")
        # Not "lan": a port forwarded by hand or a tunnel is only known to be direct (describe_path).
        where = [("at", host_part.strip("[]"), int(port_part))]
    if watched.relay is not None:
        where.append(("relay", *watched.relay))
    if not where:
        raise fail("the watch code names no address: give one with --at HOST:PORT")
    manifests = load_manifests(manifest)
    me = user_identity(home_of(ctx))

    from ..app import wants_app

    if wants_app(plain):
        from ..app import AppPlayer, run_in_app, stoppable

        viewer = AppPlayer(me.name, watching=True)
        begin = viewer.watch_game
    else:
        from ..lineclient import Spectator

        viewer = None
        begin = Spectator().begin

    async def run() -> int:
        from ..net import watch_games

        stream, path = await _connect(where, watched.secret)
        typer.echo(f"connected: {path}", err=True)
        games = await watch_games(stream, watched, me, begin, manifests=manifests)
        return len(games)

    try:
        if viewer is not None:
            games = run_in_app(viewer, lambda: _run_trio(stoppable(viewer, run), lambda: None)) or 0
        else:
            games = _run_trio(run, lambda: None)
    except WatchError as e:
        raise fail(str(e), code=1) from None
    except OSError as e:
        raise fail(f"network: {e.strerror or e} (is the host still running, and is its watch port reachable?)",
                   code=1) from None
    typer.echo(f"watched {games} game{'' if games == 1 else 's'}; the host closed the table")


def _fetched(spoken: str, mailbox: str | None) -> str:
    """The watch code a host hands over for a code read aloud."""
    from ..net import PUBLIC_MAILBOX, CodeFailed, fetch_watch_code, missing_extra

    missing = missing_extra()
    if missing is not None:
        raise fail(missing, code=1)
    try:
        return _run_trio(lambda: fetch_watch_code(mailbox or PUBLIC_MAILBOX, spoken.strip()), lambda: None)
    except CodeFailed as e:
        raise fail(str(e), code=1) from None


async def _connect(where: list[tuple[str, str, int]], secret: bytes) -> tuple[Any, str]:
    """The first address that answers, each given a few seconds; the relay, if the code names
    one, after them (net/watch.py serve_relay). With the stream, the way it came, as the players'
    'connected:' line says it ('relayed by HOST:PORT', 'direct (LAN) (HOST:PORT)')."""
    import trio

    from ..net import RelayError, describe_path, host_port, meet_on_relay, watch_relay_key

    last: Exception | None = None
    for kind, host, port in sorted(where, key=lambda w: w[0] == "relay"):
        address = host_port(host, port)
        if kind == "relay":
            try:
                stream = await meet_on_relay((host, port), watch_relay_key(secret), sender=False, timeout=30)
            except RelayError as e:
                last = e
                continue
            return stream, f"relayed by {address}"
        with trio.move_on_after(5):
            try:
                return await trio.open_tcp_stream(host, port), f"{describe_path(kind)} ({address})"
            except OSError as e:
                last = e
    if isinstance(last, RelayError):
        from ..net import WatchError

        raise WatchError(f"the host could not be reached, not even through its relay: {last}")
    raise last or OSError("no address of the watch code answered within 5 s")
