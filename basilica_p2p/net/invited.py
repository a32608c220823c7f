"""Hosting and joining with an invite: from one pasted line to an authenticated TCP stream.

The host listens on one port, which its STUN queries and its hole punches
share (net/punch.py), gathers candidates (its own addresses, a port mapped
on its router, the address STUN servers see), prints the invite, and lets
in only the invite's holder (net/gate.py).  It also reads reply codes on
its standard input: a joiner that could not reach any candidate prints one,
and both sides then punch a hole.  The joiner tries every candidate at
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
from dataclasses import dataclass

import trio

from ..identity import Identity, fingerprint
from .dial import DialTimes, Dialed, ManInTheMiddle, NoPath, dial
from .gate import Admitted, GateClosed, GateLimits, admit
from .interfaces import local_candidates
from .invite import Candidate, Invite, InviteError, Reply, check_reply, format_reply, make_reply, parse_reply
from .punch import listen, punch, reusable
from .stun import SYMMETRIC, nat_behaviour, public_addresses

MAX_CANDIDATES = 16
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
    """What the host has to say before it waits: where it listens, the invite, and what it learned."""

    port: int
    invite: Invite
    notes: list[str]


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
) -> Admitted:
    """Listen, gather candidates, announce the invite, and admit its holder.

    Each companion runs beside the door while the host waits (reading reply
    codes from standard input, a wormhole); all are cancelled once the seat
    is taken.  A port mapping, if one is made, stays in ``stack`` (renewed
    while the game lasts, removed when the caller closes the stack).
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
        notes: list[str] = []
        mapped: list[Candidate] = []
        candidates = local_candidates(port) if _wildcard(bind) else [Candidate(_kind_of(bind), bind, port)]
        seen = (await public_addresses(list(options.stun), tcp_local=("0.0.0.0", port), log=log)
                if options.stun else [])
        seen_hosts = [m.host for m in seen]
        if options.port_mapping != "off":
            from .portmap import confirmed, mapped_port

            protocols = MAPPING_PROTOCOLS if options.port_mapping == "auto" else (options.port_mapping,)
            inside = next((c.host for c in candidates if c.kind == "lan"), None)
            mapping = await stack.enter_async_context(
                mapped_port(port, internal_host=inside, protocols=protocols, log=log)) if inside else None
            if mapping is not None:
                ok, why = confirmed(mapping, seen_hosts)
                if ok:
                    mapped.append(Candidate(mapping.protocol, mapping.external_host, mapping.external_port))
                    notes.append(f"port {mapping.external_port} mapped by {PROTOCOL_NAMES[mapping.protocol]} on the router "
                                 f"({mapping.external_host})")
                else:
                    notes.append(f"the router's port mapping is not used: {why}")
            elif inside:
                notes.append("the router maps no port (no PCP, NAT-PMP or UPnP answered)")
        stun_candidates = [Candidate("stun", m.host, m.port) for m in seen]
        # LAN addresses first (a joiner next door needs nothing else), then the mapped port, then
        # the rest; the STUN-seen address is often the mapped one, given once under its best kind.
        lan = [c for c in candidates if c.kind == "lan"]
        ordered = [*lan, *mapped, *(c for c in candidates if c.kind != "lan"), *stun_candidates]
        places: set[tuple[str, int]] = set()
        candidates = []
        for c in ordered:
            if (c.host, c.port) not in places:
                places.add((c.host, c.port))
                candidates.append(c)
        if seen:
            behaviour = nat_behaviour(seen)
            notes.append(f"STUN sees this host as {', '.join(sorted({_addr(m.host, m.port) for m in seen}))}"
                         f" ({behaviour})")
            if behaviour == SYMMETRIC:
                notes.append("this router changes ports per destination (symmetric NAT): a joiner from outside "
                             "can come in only through the port mapping, or a port forwarded by hand")
        if not candidates:
            notes.append("warning: the invite holds no address another machine can use (no network address "
                         "here, no STUN answer, no port mapped): a joiner can only wait")
        invite = Invite(me.public, os.urandom(16), now + options.ttl, tuple(candidates[:MAX_CANDIDATES]))
        ready(HostReady(port, invite, notes))
        send, receive = trio.open_memory_channel[tuple[trio.SocketStream, str]](0)
        deadline = trio.current_time() + options.ttl
        closed: GateClosed | None = None
        async with trio.open_nursery() as nursery:
            door = Door(invite, port, send, nursery, log, options.give_up)
            for companion in companions:
                nursery.start_soon(companion, door)
            try:
                admitted = await admit(listeners, me, invite, deadline, log, options.limits, frame_timeout,
                                       extra=receive)
            except GateClosed as e:  # raised outside the nursery, so not wrapped in a group
                closed = e
            nursery.cancel_scope.cancel()
        if closed is not None:
            raise closed
        return admitted
    finally:
        for lst in listeners:
            await lst.aclose()


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


def _addr(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


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
