"""Playing by a short code read aloud (``7-crossover-clockwork``), with a relay when no direct path exists.

The code opens a Magic Wormhole (net/wormhole/): SPAKE2 on the code gives
both sides one key, so a wrong code fails on both sides and an attacker
gets one online guess per attempt.  Through it the two sides swap exactly
what an invite and its reply carry (net/invite.py): the host sends its
invite, the joiner answers with its reply code (its key, a MAC made with
the invite's secret, its STUN-seen candidates).  Both keys are then
pinned, and the rest is the invite's own connection logic: the joiner
races the candidates, both punch at once (no pasting needed), and after
``relay_after`` seconds both also meet on a Magic Wormhole transit relay
(net/relay.py), keyed from the wormhole's key.  Whichever stream first
passes the invite's challenge and knock carries the game; the signed
protocol runs over it unchanged, so the relay can drop or delay bytes but
never forge a move.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import trio

from ..identity import Identity
from .dial import Dialed
from .interfaces import local_candidates
from .invite import Candidate, InviteError, format_invite, format_reply, make_reply, parse_invite, parse_reply
from .invite_meeting import MAX_CANDIDATES, Companion, Door, InternetOptions, dial_beside
from .punch import punch, reusable
from .session import SessionError
from .stun import public_addresses
from .hostport import host_port

APPID = "basilica-p2p.org/play/v1"
WATCH_APPID = "basilica-p2p.org/watch/v1"  # a wormhole that hands over a watch code (``watch --code``)
PUBLIC_MAILBOX = "ws://relay.magic-wormhole.io:4000/v1"
PUBLIC_RELAY = ("transit.magic-wormhole.io", 4001)
TRANSIT_PURPOSE = b"basilica-p2p/transit-key/v1"
RESUME_PURPOSE = b"basilica-p2p/resume-relay-key/v1"  # another key: a stale first meeting never pairs with a resume
EXCHANGE_TIME = 60.0  # seconds for the other side's message once both are on the wormhole


class CodeFailed(SessionError):
    """The code, the mailbox or the exchange through it failed; ``str(e)`` is one line."""


@dataclass(frozen=True)
class CodeOptions:
    mailbox: str = PUBLIC_MAILBOX
    relay: tuple[str, int] | None = PUBLIC_RELAY  # None: --no-relay
    relay_after: float = 5.0  # seconds the direct ways have before the relay is tried too


def relay_note(address: str) -> str:
    return (f"connected: relayed by {address}; staying on it for this game: a game under way is not moved "
            "to a direct path, since both sides would have to agree on the exact message where they switch")


def missing_extra() -> str | None:
    """Why codes cannot work here, in one line naming what to install, or None: checked before a
    host prints an invite that would die with it a moment later."""
    try:
        from . import wormhole  # noqa: F401
    except ImportError as e:  # wsproto, spake2 or pynacl missing
        return f"--code needs the internet extra ({e.name} is missing): pip install 'basilica-p2p[internet]'"
    return None


def _wormhole():
    """The wormhole client, or a one-line error naming what to install."""
    missing = missing_extra()
    if missing is not None:
        raise CodeFailed(missing)
    from . import wormhole

    return wormhole


async def _meet_on_relay(coded: CodeOptions, transit_key: bytes, sender: bool, wait: float,
                         streams: trio.MemorySendChannel[tuple[trio.SocketStream, str]],
                         log: Callable[[str], None]) -> None:
    """After ``relay_after`` seconds, meet the other side on the relay and hand the stream on."""
    from .relay import QuickAckStream, RelayError, meet

    if coded.relay is None:
        return
    await trio.sleep(coded.relay_after)
    where = host_port(*coded.relay)
    log(f"no direct way yet: meeting the other side on the relay {where}")
    try:
        stream = QuickAckStream(await meet(coded.relay, transit_key, sender=sender, timeout=wait))
    except RelayError as e:
        log(f"the relay did not help: {e}")
        return
    try:
        await streams.send((stream, f"relay {where}"))  # type: ignore[arg-type]  # QuickAckStream keeps the .socket that readers of a SocketStream use
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise


def _resume_info(coded: CodeOptions, key: bytes) -> dict[str, object]:
    """What a relayed game's session file keeps so that ``basilica resume`` meets on the relay again."""
    assert coded.relay is not None
    return {"relay": [coded.relay[0], coded.relay[1]], "relay_key": key.hex()}


def wormhole_companion(coded: CodeOptions, show_code: Callable[[str], None], ttl: float,
                       relayed: dict[str, object]) -> Companion:
    """The host's side: open a wormhole, show its code, swap invite and reply, punch, and relay;
    ``relayed`` is filled with what a relayed game's resume needs."""
    async def run(door: Door) -> None:
        wormhole = _wormhole()
        try:
            wh = await wormhole.create(coded.mailbox, APPID)
        except wormhole.MailboxUnreachable as e:
            # No code, but the invite already printed works without the mailbox: keep waiting with it.
            door.log(f"no code: {e}; the invite above still works (on this network, or wherever its addresses "
                     "reach), and --mailbox URL names another mailbox server")
            return
        except wormhole.WormholeError as e:
            raise CodeFailed(f"the code: {e}") from None
        show_code(wh.code)
        try:
            async with wh:
                await door.gathered.wait()  # the invite with every address found, for a joiner anywhere
                await wh.exchange(format_invite(door.invite).encode(), timeout=ttl)
                answer = await wh.exchange(b"", timeout=EXCHANGE_TIME)
                transit_key = wh.derive_key(TRANSIT_PURPOSE)
                if coded.relay is not None:
                    relayed.update(_resume_info(coded, wh.derive_key(RESUME_PURPOSE)))
        except wormhole.WormholeError as e:
            raise CodeFailed(f"the code: {e}") from None
        try:
            reply = parse_reply(answer.decode("ascii", "replace"))
        except InviteError as e:
            raise CodeFailed(f"the other side sent no reply through the wormhole: {e}") from None
        if not door.take_reply(reply):
            raise CodeFailed("the reply through the wormhole was not made from our invite")
        await _meet_on_relay(coded, transit_key, True, door.give_up, door.streams, door.log)

    return run


async def hand_out_watch_codes(mailbox: str, watch_code: str, show: Callable[[str], None],
                               log: Callable[[str], None]) -> None:
    """The host's side of ``basilica watch --code``: a code read aloud that hands the watch code
    (``bas1w:``) to whoever says it.  Like every wormhole code it works once; the next is shown
    as soon as one is used (or a wrong guess spends it), until cancelled."""
    wormhole = _wormhole()
    while True:
        try:
            wh = await wormhole.create(mailbox, WATCH_APPID)
        except wormhole.WormholeError as e:
            log(f"no watch code to read aloud: {e}; the watch code above still works")
            return
        show(wh.code)
        try:
            async with wh:
                await wh.exchange(watch_code.encode(), timeout=None)
        except wormhole.WormholeError as e:
            log(f"a watch code read aloud was not used: {e}; here is another")


async def fetch_watch_code(mailbox: str, code: str) -> str:
    """The watcher's side of ``basilica watch --code``: the watch code the host hands over."""
    wormhole = _wormhole()
    try:
        wh = await wormhole.join(mailbox, WATCH_APPID, code)
        async with wh:
            return (await wh.exchange(b"", timeout=EXCHANGE_TIME)).decode("ascii", "replace")
    except (wormhole.WormholeError, ValueError) as e:
        raise CodeFailed(f"the code: {e}") from None


async def join_with_code(code: str, me: Identity, options: InternetOptions, coded: CodeOptions, now: int,
                         log: Callable[[str], None]) -> Dialed:
    """The joiner's side: the invite through the wormhole, then the invite's connection logic,
    punching at once and meeting on the relay after ``relay_after`` seconds."""
    wormhole = _wormhole()
    probe = reusable(socket.AF_INET, 0)
    await probe.bind(("0.0.0.0", 0))
    local_port = probe.getsockname()[1]
    probe.close()
    try:
        wh = await wormhole.join(coded.mailbox, APPID, code)
    except wormhole.MailboxUnreachable as e:
        raise CodeFailed(f"the code: {e} (ask the host for its invite line, 'basilica join bas1:...', or name "
                         "another mailbox server with --mailbox URL)") from None
    except (wormhole.WormholeError, ValueError) as e:
        raise CodeFailed(f"the code: {e}") from None
    try:
        async with wh:
            text = await wh.exchange(b"", timeout=EXCHANGE_TIME)
            try:
                invite = parse_invite(text.decode("ascii", "replace"), now)
            except InviteError as e:
                raise CodeFailed(f"the other side sent no invite through the wormhole: {e}") from None
            seen = (await public_addresses(list(options.stun), tcp_local=("0.0.0.0", local_port), log=log)
                    if options.stun else [])
            ours = [Candidate("stun", m.host, m.port) for m in seen]
            mine = [*ours, *local_candidates(local_port)][:MAX_CANDIDATES]
            await wh.exchange(format_reply(make_reply(invite, me.public, tuple(mine))).encode(),
                              timeout=EXCHANGE_TIME)
            transit_key = wh.derive_key(TRANSIT_PURPOSE)
            resume_key = wh.derive_key(RESUME_PURPOSE)
    except (wormhole.WormholeError, ValueError) as e:
        raise CodeFailed(f"the code: {e}") from None
    send, receive = trio.open_memory_channel[tuple[trio.SocketStream, str]](0)
    targets = [(c.host, c.port) for c in invite.candidates if c.kind != "lan"]
    helpers = [partial(_meet_on_relay, coded, transit_key, False, options.give_up, send.clone(), log)]
    if targets:
        helpers.append(partial(punch, local_port, targets, send.clone()))
    also = "" if coded.relay is None else f"; the relay {host_port(*coded.relay)} did not connect either"
    dialed = await dial_beside(invite, me, options, log, receive, helpers, ours, also)
    if dialed.via == "relayed":
        dialed.relayed = _resume_info(coded, resume_key)
    return dialed
