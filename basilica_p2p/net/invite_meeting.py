"""Hosting and joining with an invite: from one pasted line to an authenticated TCP stream.

The host listens on one port, which its STUN queries and its hole punches
share (net/punch.py), prints an invite with its own addresses at once, and
lets in only the invite's holder (net/gate.py).  Meanwhile it gathers the
candidates that take a while (a port mapped on its router, the address STUN
servers see): if there are any, a second invite follows with the same key,
secret and expiry and the longer list; what was not found is one line.  It
also reads reply codes on its standard input: a joiner that could not reach
any candidate prints one, and both sides then punch a hole.  The joiner tries every candidate at
once (net/dial.py), and after ``reply_after`` seconds without success
queries STUN from a port of its own, prints its reply code and punches
from that port until the host answers or the time is up.  Either way the
result is an ordinary stream, on which the game protocol runs unchanged,
with the other side's key pinned.
"""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

import trio

from ..identity import Identity, fingerprint
from .dial import DialTimes, Dialed, ManInTheMiddle, NoPath, dial
from .gate import Admitted, GateClosed, GateLimits, admit
from .interfaces import local_candidates
from .invite import Candidate, Invite, InviteError, Reply, check_reply, format_reply, make_reply, parse_reply
from .punch import listen, punch, reusable
from .session import NoGameStarted
from ._tasks import background_tasks
from .stun import SYMMETRIC, Mapped, nat_behaviour, public_addresses
from .hostport import host_port

if TYPE_CHECKING:
    from .portmap import Mapping

T = TypeVar("T")

MAX_CANDIDATES = 16
RESEATS = 3  # how many times a joiner connects again after a connection ended before its first game
MAPPING_PROTOCOLS = ("pcp", "natpmp", "upnp")  # in the order they are asked
PROTOCOL_NAMES = {"pcp": "PCP", "natpmp": "NAT-PMP", "upnp": "UPnP"}


@dataclass(frozen=True)
class InternetOptions:
    stun: tuple[tuple[str, int], ...] = ()  # STUN servers; empty: none
    port_mapping: str = "auto"  # ask the router: "auto" (PCP, then NAT-PMP, then UPnP-IGD), one of them, or "off"
    ttl: int = 600  # seconds an invite stays valid
    limits: GateLimits = GateLimits()
    reply_after: float = 4.0  # seconds the joiner tries the candidates before it prints a reply code
    give_up: float = 60.0  # seconds the joiner tries in all
    times: DialTimes = DialTimes()


@dataclass
class HostReady:
    """What the host has to say at once: where it listens, the invite (its own addresses), and notes."""

    port: int
    invite: Invite
    notes: list[str]


@dataclass(frozen=True)
class Gathered:
    """What the host learned after its first invite, from STUN and the router."""

    invite: Invite | None  # the same invite with more candidates; None when there are none more
    notes: tuple[str, ...]  # what was found (a mapped port, what STUN sees, a symmetric router), a line each
    not_found: str | None  # one line: what found nothing and why, and what that leaves the invite


def _wildcard(bind: str) -> bool:
    return bind in ("", "0.0.0.0", "::")


def _symmetric(stun_candidates: Sequence[Candidate]) -> bool:
    """Two STUN servers saw one address with two ports: the router changes ports per destination."""
    ports: dict[str, set[int]] = {}
    for c in stun_candidates:
        ports.setdefault(c.host, set()).add(c.port)
    return any(len(p) > 1 for p in ports.values())


@dataclass
class Door:
    """What a companion of the waiting host (reading reply codes, a wormhole) works with:
    the invite, the port to punch from, and where to hand a stream it opened (its address,
    written ``relay HOST:PORT`` for a relayed one)."""

    invite: Invite
    port: int
    streams: trio.MemorySendChannel[tuple[trio.SocketStream, str]]
    nursery: trio.Nursery
    log: Callable[[str], None]
    give_up: float
    # Set once the invite holds every candidate the host will find (it replaces ``invite`` then).
    gathered: trio.Event = field(default_factory=trio.Event)

    def take_reply(self, reply: Reply) -> bool:
        """Punch toward a reply's candidates if it was made from this invite; False if it was not."""
        if not check_reply(self.invite, reply):
            return False
        targets = [(c.host, c.port) for c in reply.candidates]
        self.log(f"reply from key {fingerprint(reply.key)}: punching toward {len(targets)} address(es) "
                 f"for {self.give_up:g} s")
        self.nursery.start_soon(_punch_for, self.give_up, self.port, targets, self.streams.clone())
        return True


Companion = Callable[[Door], Awaitable[None]]


async def host_connection(
    bind: str, port: int, me: Identity, options: InternetOptions, now: int, ready: Callable[[HostReady], None],
    log: Callable[[str], None], companions: Sequence[Companion], stack: AsyncExitStack, frame_timeout: float = 10.0,
    gathered: Callable[[Gathered], None] = lambda g: None,
) -> Admitted:
    """Listen, announce the invite at once, gather more candidates, and admit the invite's holder.

    ``ready`` gets the invite with this machine's own addresses as soon as the host listens, and
    the door opens then; ``gathered`` gets what STUN and the router added, a few seconds later
    (not called when neither is asked).  Each companion runs beside the door while the host
    waits (reading reply codes from standard input, a wormhole); all are cancelled once the seat
    is taken, and so is a gathering still under way.  A port mapping, if one is made, stays in
    ``stack`` (renewed while the game lasts, removed when the caller closes the stack).
    """
    if not _wildcard(bind):
        bind = await _numeric(bind)
    listener = await listen("0.0.0.0" if _wildcard(bind) else bind, port)
    port = listener.socket.getsockname()[1]
    listeners = [listener]
    if _wildcard(bind) and socket.has_ipv6:
        try:
            listeners.append(await listen("::", port))
        except OSError:
            pass  # no IPv6 here
    try:
        own = local_candidates(port) if _wildcard(bind) else [Candidate(_kind_of(bind), bind, port)]
        invite = Invite(me.public, os.urandom(16), now + options.ttl, tuple(own[:MAX_CANDIDATES]))
        inside = next((c.host for c in own if c.kind == "lan"), None)
        mapping_asked = options.port_mapping != "off" and inside is not None
        gathering = bool(options.stun) or mapping_asked
        ready(HostReady(port, invite, [] if own or gathering else [NO_ADDRESS]))
        send, receive = trio.open_memory_channel[tuple[trio.SocketStream, str]](0)
        deadline = trio.current_time() + options.ttl
        closed: GateClosed | None = None
        # The gathering, and the port mapping it holds, live as long as the caller's stack.
        background = await stack.enter_async_context(background_tasks())
        async with trio.open_nursery() as nursery:
            door = Door(invite, port, send, nursery, log, options.give_up)
            gather = _Gathering(door, own, inside if mapping_asked else None, options, log, gathered)
            if gathering:
                background.start_soon(gather.run)
            else:
                door.gathered.set()
            for companion in companions:
                nursery.start_soon(companion, door)
            try:
                admitted = await admit(listeners, me, invite, deadline, log, options.limits, frame_timeout,
                                       extra=receive)
            except GateClosed as e:  # raised outside the nursery, so not wrapped in a group
                closed = e
            nursery.cancel_scope.cancel()
        gather.stop_unless_done()  # a seat taken on the LAN needs no more: nothing is printed in the game
        if closed is not None:
            raise closed
        return admitted
    finally:
        for lst in listeners:
            await lst.aclose()


NO_ADDRESS = ("warning: the invite holds no address another machine can use (no network address here, no STUN "
              "answer, no port mapped): a joiner can only wait")


class _Gathering:
    """The host's slow candidates: the address STUN servers see for its port, then a port mapped on
    the router (confirmed against what STUN saw).  Their failures are kept, not printed one by
    one: :class:`Gathered` says them in one line at the end."""

    def __init__(self, door: Door, own: list[Candidate], inside: str | None, options: InternetOptions,
                 log: Callable[[str], None], report: Callable[[Gathered], None]) -> None:
        self.door, self.own, self.inside, self.options, self.log, self.report = door, own, inside, options, log, report
        self.scope = trio.CancelScope()
        self.stun_failures: list[str] = []
        self.map_failures: list[str] = []

    def stop_unless_done(self) -> None:
        if not self.door.gathered.is_set():
            self.scope.cancel()

    def _map_log(self, line: str) -> None:
        # Until the gathering is done a failure is one reason among several (said at the end);
        # after it, the renewal of a mapping in use says what went wrong at once.
        (self.log if self.door.gathered.is_set() else self.map_failures.append)(line)

    async def run(self) -> None:
        with self.scope:
            options, port = self.options, self.door.port
            seen = (await public_addresses(list(options.stun), tcp_local=("0.0.0.0", port),
                                           log=self.stun_failures.append) if options.stun else [])
            if self.inside is None:
                self._done(seen, None)
                return
            from .portmap import mapped_port

            protocols = MAPPING_PROTOCOLS if options.port_mapping == "auto" else (options.port_mapping,)
            async with mapped_port(port, internal_host=self.inside, protocols=protocols, log=self._map_log) as m:
                self._done(seen, m)
                if m is not None:
                    await trio.sleep_forever()  # held (and renewed) until the caller's stack closes

    def _done(self, seen: Sequence[Mapped], mapping: Mapping | None) -> None:
        notes: list[str] = []
        mapped: list[Candidate] = []
        if mapping is not None:
            from .portmap import confirmed

            ok, why = confirmed(mapping, [m.host for m in seen])
            if ok:
                mapped.append(Candidate(mapping.protocol, mapping.external_host, mapping.external_port))
                notes.append(f"port {mapping.external_port} mapped by {PROTOCOL_NAMES[mapping.protocol]} on the "
                             f"router ({mapping.external_host})")
            else:
                notes.append(f"the router's port mapping is not used: {why}")
        if seen:
            behaviour = nat_behaviour(seen)
            notes.append(f"STUN sees this host as {', '.join(sorted({host_port(m.host, m.port) for m in seen}))}"
                         f" ({behaviour})")
            if behaviour == SYMMETRIC:
                notes.append("this router changes ports per destination (symmetric NAT): a joiner from outside "
                             "can come in only through the port mapping, or a port forwarded by hand")
        # LAN addresses first (a joiner next door needs nothing else), then the mapped port, then
        # the rest; the STUN-seen address is often the mapped one, given once under its best kind.
        lan = [c for c in self.own if c.kind == "lan"]
        ordered = [*lan, *mapped, *(c for c in self.own if c.kind != "lan"),
                   *(Candidate("stun", m.host, m.port) for m in seen)]
        places: set[tuple[str, int]] = set()
        candidates = []
        for c in ordered:
            if (c.host, c.port) not in places:
                places.add((c.host, c.port))
                candidates.append(c)
        if not candidates:
            notes.append(NO_ADDRESS)
        first = self.door.invite
        fuller = tuple(candidates[:MAX_CANDIDATES])
        invite = replace(first, candidates=fuller) if fuller != first.candidates else None
        if invite is not None:
            self.door.invite = invite
        self.door.gathered.set()
        self.report(Gathered(invite, tuple(notes), self._not_found(seen, mapping, bool(mapped or seen))))

    def _not_found(self, seen: Sequence[Mapped], mapping: Mapping | None, outside: bool) -> str | None:
        missing = []
        if self.options.stun and not seen:
            more = len(self.stun_failures) - 1
            missing.append(f"no STUN server answered ({self.stun_failures[0] if self.stun_failures else 'no answer'}"
                           f"{f', and {more} more' if more > 0 else ''})")
        if self.inside is not None and mapping is None:
            missing.append(f"the router maps no port ({'; '.join(self.map_failures) or 'no answer'})")
        if not missing:
            return None
        if not outside:
            return f"the invite works on this network only: {' and '.join(missing)}"
        if mapping is None:
            return f"for a player on another network, {' and '.join(missing)}: they may have to send a reply code"
        return f"for a player on another network, {' and '.join(missing)}"


def reply_reader(replies: AsyncIterator[str]) -> Companion:
    """A companion taking reply codes as lines (the host's standard input)."""
    async def read(door: Door) -> None:
        async for line in replies:
            text = line.strip()
            if not text:
                continue
            try:
                reply = parse_reply(text)
            except InviteError as e:
                door.log(f"that line is not a reply code: {e}")
                continue
            if not door.take_reply(reply):
                door.log("that reply code was not made from this invite: ignored")

    return read


async def _punch_for(seconds: float, port: int, targets: list[tuple[str, int]],
                     send: trio.MemorySendChannel[tuple[trio.SocketStream, str]]) -> None:
    """Punch as long as a joiner keeps trying (its --connect-timeout default), not until the invite expires."""
    with trio.move_on_after(seconds):
        await punch(port, targets, send)


async def _numeric(host: str) -> str:
    """``--bind`` as an address: a name is resolved (the invite carries addresses, not names)."""
    import ipaddress

    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        pass
    try:
        found = await trio.socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError as e:
        raise OSError(e.errno, f"cannot resolve --bind {host!r}: {e.strerror or e}") from None
    return str(found[0][4][0])


def _kind_of(host: str) -> str:
    import ipaddress

    from .interfaces import classify

    try:
        return classify(ipaddress.ip_address(host)) or "lan"
    except ValueError:
        return "lan"


async def join_connection(
    invite: Invite, me: Identity, options: InternetOptions,
    show_reply: Callable[[str], None], log: Callable[[str], None],
) -> Dialed:
    """Reach the invite's host, punching a hole if needed; the knocked, authenticated connection."""
    send, receive = trio.open_memory_channel[tuple[trio.SocketStream, str]](0)
    ours: list[Candidate] = []

    async def slow_path() -> None:
        await trio.sleep(options.reply_after)
        probe = reusable(socket.AF_INET, 0)
        await probe.bind(("0.0.0.0", 0))
        local_port = probe.getsockname()[1]
        probe.close()
        seen = (await public_addresses(list(options.stun), tcp_local=("0.0.0.0", local_port), log=log)
                if options.stun else [])
        ours.extend(Candidate("stun", m.host, m.port) for m in seen)
        mine = [*ours, *local_candidates(local_port)][:MAX_CANDIDATES]
        show_reply(format_reply(make_reply(invite, me.public, tuple(mine))))
        targets = [(c.host, c.port) for c in invite.candidates if c.kind in ("stun", "public", "upnp", "natpmp",
                                                                             "pcp")]
        if targets:
            await punch(local_port, targets, send)

    return await dial_beside(invite, me, options, log, receive, [slow_path], ours)


async def dial_beside(invite: Invite, me: Identity, options: InternetOptions, log: Callable[[str], None],
                      receive: trio.MemoryReceiveChannel[tuple[trio.SocketStream, str]],
                      helpers: Sequence[Callable[[], Awaitable[None]]], ours: Sequence[Candidate],
                      also: str = "") -> Dialed:
    """:func:`dial` with ``helpers`` (punching, a relay) running beside it until it is done;
    when no way works, the diagnosis (and ``also``) in one line."""
    deadline = trio.current_time() + options.give_up
    failed: NoPath | None = None
    async with trio.open_nursery() as nursery:
        for helper in helpers:
            nursery.start_soon(helper)
        try:
            dialed = await dial(invite, me, deadline, log, options.times, receive)
        except NoPath as e:  # raised outside the nursery, so not wrapped in a group
            failed = e
        nursery.cancel_scope.cancel()
    if isinstance(failed, ManInTheMiddle):
        raise failed
    if failed is not None:
        raise NoPath(f"{failed}: {diagnose(invite, ours)}{also}", failed.failures)
    return dialed


def diagnose(invite: Invite, ours: Sequence[Candidate]) -> str:
    """What a person can do when no path worked, from what both sides' STUN queries showed."""
    host_symmetric = _symmetric([c for c in invite.candidates if c.kind == "stun"])
    our_symmetric = _symmetric(ours)
    if host_symmetric and our_symmetric:
        return ("both routers change ports per destination (symmetric NAT), so a direct connection is "
                "impossible; use a relay or forward a port on the host's router")
    if host_symmetric:
        return ("the host's router changes ports per destination (symmetric NAT): the host needs a port mapped "
                "(UPnP, NAT-PMP, PCP) or forwarded by hand")
    if our_symmetric:
        return ("this router changes ports per destination (symmetric NAT): ask the host to forward a port, "
                "or play from another network")
    if not any(c.kind == "stun" for c in invite.candidates):
        return ("the invite holds no public address (the host ran without STUN or offline): the host needs a "
                "port forwarded by hand, or both players on one network")
    return ("the host did not answer the reply code in time (did it paste it?), or a firewall drops the "
            "connection; forwarding a port on the host's router always works")


async def seated_play(connect: Callable[[float], Awaitable[Dialed]], play: Callable[[Dialed], Awaitable[T]],
                      begun: Callable[[], bool], give_up: float, log: Callable[[str], None]) -> T:
    """The joiner's connection and games: ``connect(seconds)`` dials, ``play`` plays on what it dialled.

    A connection that ends after the host seated us and before any game began (``begun()`` is
    false) is dialled again, up to :data:`RESEATS` times within ``give_up`` seconds in all.  The
    host takes its seat only when our ``sit`` arrives (INVITE-FORMAT.md section 4b): a connection
    reset before that (a router that forgot it, a host that gave up on it) left the seat free.
    A reset after it cannot be told apart from here; then the next try is told the seat is taken.
    """
    deadline = trio.current_time() + give_up
    tries = 0
    while True:
        dialed = await connect(max(0.0, deadline - trio.current_time()))
        try:
            return await play(dialed)
        except NoGameStarted as e:
            tries += 1
            if begun() or tries > RESEATS or trio.current_time() >= deadline:
                raise
            log(f"the connection ended after the host seated us, before the game began ({e}): connecting again")
