"""The host's door when it hands out an invite: strangers knock, only the invite's holder comes in.

A port open to the internet is hit by scanners and bots.  With an invite
(net/invite.py) the host listens until the invite's seat is taken or the
invite expires, and every connection must first pass a short exchange of
control frames, before the host signs anything of a game:

    host -> joiner   challenge  {key: host key, nonce: 32 fresh bytes, sig: Ed25519(host, TAG || nonce)}
    joiner -> host   knock-seat {key: joiner key, mac: knock_mac(secret, nonce, host key, joiner key), via: kind}
    host -> joiner   seated
    joiner -> host   sit

The seat is taken at ``sit``: a punched connection that a router broke
half-way (one direction lost) then leaves the seat free for the joiner's
next try instead of two sides waiting for a hello (INVITE-FORMAT.md 4b).

The signature lets the joiner check, before it proves anything, that it
speaks to the key pinned in the invite; the MAC proves that the joiner
holds the invite's secret, over a nonce nobody saw before, so a recorded
knock cannot be replayed.  A connection that sends garbage, stays silent,
or knocks with a wrong MAC is dropped with one log line (under a flood,
one line every 10 seconds says how many), and the host keeps listening.

A flood of strangers must not keep the joiner out.  Its knock comes a
round trip after the host accepted its connection (0.3 s across the world),
and the handshakes under way are bounded in number and in time:

- a connection that proved the invite is never displaced: only those that
  have not are counted and give way;
- a newcomer beyond the bound displaces the oldest handshake of the
  address that holds the most (an IPv6 /64 counts as one address), and a
  newcomer from an address at its own bound displaces that address's
  oldest: a flood from one address, or a few, only displaces itself;
- the bound is large (1,024 at once, 32 per address): a flood from more
  addresses than that displaces the oldest, so a handshake lasts as long
  as 1,024 newer ones take to come, a second at 1,000 connections a second;
- each handshake has ``handshake_time`` seconds in all, so silence or a
  byte a second (slowloris) cannot hold a place longer.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import resource
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..identity import Identity
from ..wire import ProtocolError
from .framing import CONTROL, FramedStream, PeerClosed, PeerTimeout
from .invite import Invite, check_knock
from .punch import abort
from .hostport import host_port

CHALLENGE_TAG = b"basilica-p2p/invite-challenge/v1\x00"

# How a joiner reached the host, as the knock tells it (and the dialer says it).
PATHS = {
    "lan": "direct (LAN)",
    "ipv6": "direct (IPv6)",
    "public": "direct (public address)",
    "pcp": "port mapped by PCP on the router",
    "natpmp": "port mapped by NAT-PMP on the router",
    "upnp": "port mapped by UPnP on the router",
    "stun": "direct to the address a STUN server sees (the router let it in)",
    "punched": "hole punched",
    "relayed": "relayed by a transit relay",
}


class GateClosed(Exception):
    """Nobody took the invite's seat before it expired; ``str(e)`` is one line."""


@dataclass(frozen=True)
class GateLimits:
    handshakes: int = 1024  # connections that have not proved the invite, at once; a newcomer displaces one
    per_address: int = 32  # of them from one address (an IPv6 /64)
    handshake_time: float = 5.0  # seconds a connection has to knock and sit
    quiet_after: int = 20  # log lines about strangers in one interval; then a count at its end
    quiet_interval: float = 10.0


@dataclass
class Admitted:
    """The connection that took the seat: its framed stream, the joiner's key, how it came."""

    framed: FramedStream
    joiner_key: bytes
    via: str
    peer: str


def challenge_signature_ok(host_key: bytes, nonce: object, sig: object) -> bool:
    """Whether ``sig`` is the host's signature over the challenge ``nonce``."""
    if not (isinstance(nonce, bytes) and len(nonce) == 32 and isinstance(sig, bytes) and len(sig) == 64):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(host_key).verify(sig, CHALLENGE_TAG + nonce)
    except (InvalidSignature, ValueError):
        return False
    return True


def describe_path(via: str) -> str:
    return PATHS.get(via, "direct")


class _Seat:
    """The one seat an invite gives: the first good knock takes it, later ones are told so."""

    def __init__(self) -> None:
        self.taken: Admitted | None = None
        self.event = trio.Event()

    def take(self, admitted: Admitted) -> bool:
        if self.taken is not None:
            return False
        self.taken = admitted
        self.event.set()
        return True


async def _trial(stream: trio.SocketStream, me: Identity, invite: Invite, seat: _Seat, limits: GateLimits,
                 frame_timeout: float, log: Callable[[str], None], proved: Callable[[], None]) -> None:
    """One stranger's connection: challenge, knock, and either the seat or the door.

    ``proved`` is called as soon as the knock's MAC is found good (before the next checkpoint,
    so that no newcomer can displace the connection from then on)."""
    peer = _peer_text(stream)
    framed = FramedStream(stream, min(frame_timeout, limits.handshake_time))
    admitted = told = False
    try:
        with trio.move_on_after(limits.handshake_time) as scope:
            nonce = os.urandom(32)
            await framed.send_control("challenge", key=me.public, nonce=nonce,
                                      sig=me.key.sign(CHALLENGE_TAG + nonce))
            frame = await framed.receive()
            if frame.kind != CONTROL:
                raise ProtocolError("it sent a game message before knocking")
            msg = frame.control()
            if msg["t"] not in ("knock", "knock-seat"):
                raise ProtocolError(f"it sent {msg['t']!r} instead of a knock")
            key, mac, via = msg["key"], msg["mac"], msg["via"]
            if not (isinstance(key, bytes) and len(key) == 32 and isinstance(mac, bytes) and len(mac) == 32
                    and isinstance(via, str) and len(via) <= 16):
                raise ProtocolError("a malformed knock")
            if not check_knock(invite, nonce, key, mac):
                told = True
                await _tell(framed, "this connection does not hold the invite: refused")
                log(f"a connection from {peer} did not prove the invite: dropped")
                return
            proved()
            if msg["t"] == "knock-seat" and seat.taken is None:
                # Seated only once the joiner answers: if our word is lost on the way (a
                # router forgot a punched connection), the seat stays free for its next try.
                await framed.send_control("seated")
                frame = await framed.receive()
                if frame.kind != CONTROL or frame.control()["t"] != "sit":
                    raise ProtocolError("it did not sit down after being seated")
            if not seat.take(Admitted(framed, key, via if via in PATHS else "public", peer)):
                told = True
                await _tell(framed, "the invite's seat is taken already: ask the host for a new invite")
                log(f"a second use of the invite from {peer}: refused")
                return
            admitted = True
        if scope.cancelled_caught:
            log(f"a connection from {peer} did not knock and sit within {limits.handshake_time:g} s: dropped")
    except PeerClosed:
        # Usually a joiner's attempt that lost its race to another address: not an attack.
        log(f"a connection from {peer} closed before it was seated")
    except (ProtocolError, PeerTimeout, ValueError) as e:
        log(f"a connection from {peer} failed the invite handshake ({_short(e)}): dropped")
    finally:
        if told:
            await framed.aclose()  # let the reason arrive
        elif not admitted:
            await abort(stream)  # no TIME_WAIT on the shared port: the joiner's next punch may need it


@dataclass
class _Handshake:
    scope: trio.CancelScope
    address: str  # what the per-address bound counts by
    peer: str  # as the log says it


@dataclass
class _Handshakes:
    """The handshakes under way that have not proved the invite, and who gives way to a newcomer.

    Kept by address (oldest first within each) and by how many each address holds, so that
    finding the address holding the most is as quick as the rest at thousands a second.
    """

    limits: GateLimits
    room: int  # how many at once: the limits' number, or fewer if file descriptors are short
    by_address: dict[str, dict[int, _Handshake]] = field(default_factory=dict)
    # count -> the addresses holding that many, in the order they came to hold it
    by_count: dict[int, dict[str, None]] = field(default_factory=dict)
    top: int = 0
    size: int = 0

    def _move(self, address: str, old: int, new: int) -> None:
        if old:
            del self.by_count[old][address]
            if not self.by_count[old]:
                del self.by_count[old]
        if new:
            self.by_count.setdefault(new, {})[address] = None
        if new > self.top:
            self.top = new
        while self.top and self.top not in self.by_count:
            self.top -= 1

    def enter(self, number: int, handshake: _Handshake) -> list[_Handshake]:
        """Count a newcomer in; the handshakes it displaces (their scopes are the caller's to cancel)."""
        gone: list[_Handshake] = []
        mine = self.by_address.get(handshake.address, {})
        if len(mine) >= self.limits.per_address:
            gone.append(self.leave(next(iter(mine)), handshake.address))
        elif self.size >= self.room:
            address = next(iter(self.by_count[self.top]))
            gone.append(self.leave(next(iter(self.by_address[address])), address))
        held = self.by_address.setdefault(handshake.address, {})
        held[number] = handshake
        self._move(handshake.address, len(held) - 1, len(held))
        self.size += 1
        return gone

    def leave(self, number: int, address: str) -> _Handshake:
        """Stop counting a handshake (it proved the invite, ended, or was displaced)."""
        held = self.by_address[address]
        handshake = held.pop(number)
        self._move(address, len(held) + 1, len(held))
        if not held:
            del self.by_address[address]
        self.size -= 1
        return handshake

    def holds(self, number: int, address: str) -> bool:
        return number in self.by_address.get(address, {})


class _QuietLog:
    """The gate's log under a flood: the first lines of an interval as they come, then at the
    end of it one line with how many more connections were dropped and from how many addresses."""

    def __init__(self, log: Callable[[str], None], limits: GateLimits) -> None:
        self.log, self.limits = log, limits
        self.until = 0.0
        self.said = 0
        self.more: dict[str, None] = {}  # the addresses of what was not said, in order
        self.count = 0

    def __call__(self, line: str, address: str) -> None:
        now = trio.current_time()
        if now >= self.until:
            self.flush()
            self.until, self.said = now + self.limits.quiet_interval, 0
        if self.said < self.limits.quiet_after:
            self.said += 1
            self.log(line)
        else:
            self.count += 1
            self.more[address] = None

    def flush(self) -> None:
        if self.count:
            self.log(f"{self.count} more connections from {len(self.more)} address(es) dropped in the last "
                     f"{self.limits.quiet_interval:g} s (a flood of strangers: the invite's holder still gets in)")
        self.count, self.more = 0, {}


RESERVED_DESCRIPTORS = 128  # for everything else the process has open: files, the game's connection


def _room_for(handshakes: int) -> int:
    """Raise this process's limit on open files so that ``handshakes`` fit (a flood must meet the
    gate's bound, not accept() failing), as far as the hard limit allows; how many fit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = handshakes + RESERVED_DESCRIPTORS
    if soft != resource.RLIM_INFINITY and soft < want:
        raised = want if hard == resource.RLIM_INFINITY else min(want, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):
            pass
    if soft == resource.RLIM_INFINITY:
        return handshakes
    return max(1, min(handshakes, soft - RESERVED_DESCRIPTORS))


def address_of(peer: tuple[str, int] | None) -> str:
    """What the per-address bound counts by: the address, or its /64 for IPv6 (one host's share)."""
    if peer is None:
        return "?"
    try:
        ip = ipaddress.ip_address(peer[0].split("%")[0])
    except ValueError:
        return peer[0]
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


async def admit(
    listeners: Sequence[trio.SocketListener], me: Identity, invite: Invite, deadline: float,
    log: Callable[[str], None], limits: GateLimits = GateLimits(), frame_timeout: float = 10.0,
    extra: trio.MemoryReceiveChannel[tuple[trio.SocketStream, str]] | None = None,
) -> Admitted:
    """Accept connections on ``listeners`` (and streams sent on ``extra``: hole-punched ones)
    until one proves the invite; ``deadline`` is a trio time (the invite's expiry)."""
    seat = _Seat()
    waiting = _Handshakes(limits, _room_for(limits.handshakes))
    quiet = _QuietLog(log, limits)
    numbers = itertools.count()

    async def take(stream: trio.SocketStream) -> None:
        number = next(numbers)
        peer = _peer_text(stream)
        address = address_of(_peer_address(stream))
        with trio.CancelScope() as scope:
            for gone in waiting.enter(number, _Handshake(scope, address, peer)):
                gone.scope.cancel()
                quiet(f"too many handshakes at once: the oldest, from {gone.peer}, closed unheard", gone.address)

            def proved() -> None:
                waiting.leave(number, address)

            try:
                await _trial(stream, me, invite, seat, limits, frame_timeout, lambda line: quiet(line, address),
                             proved)
            finally:
                if waiting.holds(number, address):
                    waiting.leave(number, address)
        if scope.cancelled_caught:
            await abort(stream)

    async def serve(listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        while True:
            try:
                stream = await listener.accept()
            except OSError as e:  # e.g. EMFILE beyond the bound: wait a little, go on
                log(f"accept failed ({e.strerror or e}); still listening")
                await trio.sleep(0.1)
                continue
            nursery.start_soon(take, stream)

    async def punched(nursery: trio.Nursery) -> None:
        assert extra is not None
        async for stream, _ in extra:
            nursery.start_soon(take, stream)

    with trio.move_on_at(deadline):
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(serve, listener, nursery)
            if extra is not None:
                nursery.start_soon(punched, nursery)
            await seat.event.wait()
            nursery.cancel_scope.cancel()
    quiet.flush()
    if seat.taken is None:
        raise GateClosed("the invite expired and nobody took the seat; start the host again for a new invite")
    return seat.taken


async def _tell(framed: FramedStream, reason: str) -> None:
    with trio.move_on_after(1):
        try:
            await framed.send_control("error", reason=reason)
        except (PeerClosed, PeerTimeout):
            pass


def _peer_address(stream: trio.SocketStream) -> tuple[str, int] | None:
    try:
        address = stream.socket.getpeername()
    except OSError:
        return None
    return address[0], address[1]


def _peer_text(stream: trio.SocketStream) -> str:
    address = _peer_address(stream)
    if address is None:
        return "an unknown address"
    return host_port(*address)


def _short(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text if len(text) <= 120 else text[:117] + "..."
