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
or knocks with a wrong MAC is dropped with one log line, and the host
keeps listening.  Trials are bounded in number (a newcomer beyond the
bound displaces the oldest trial) and in time, so a flood of half-open
connections cannot starve the joiner: its knock comes one round trip after
it connects, and only that many newer connections could displace it.
"""

from __future__ import annotations

import hmac
import itertools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..identity import Identity
from ..wire import ProtocolError
from .framing import CONTROL, FramedStream, PeerClosed, PeerTimeout
from .invite import Invite, knock_mac
from .punch import abort

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
    handshakes: int = 16  # trials at once; more connections are closed at once
    handshake_time: float = 5.0  # seconds a connection has to knock and sit


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
                 frame_timeout: float, log: Callable[[str], None]) -> None:
    """One stranger's connection: challenge, knock, and either the seat or the door."""
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
            if not hmac.compare_digest(knock_mac(invite.secret, nonce, me.public, key), mac):
                told = True
                await _tell(framed, "this connection does not hold the invite: refused")
                log(f"a connection from {peer} did not prove the invite: dropped")
                return
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


async def admit(
    listeners: Sequence[trio.SocketListener], me: Identity, invite: Invite, deadline: float,
    log: Callable[[str], None], limits: GateLimits = GateLimits(), frame_timeout: float = 10.0,
    extra: trio.MemoryReceiveChannel[tuple[trio.SocketStream, str]] | None = None,
) -> Admitted:
    """Accept connections on ``listeners`` (and streams sent on ``extra``: hole-punched ones)
    until one proves the invite; ``deadline`` is a trio time (the invite's expiry)."""
    seat = _Seat()
    # The trials under way, oldest first.  When all slots are taken the oldest gives way to the
    # newcomer: a flood of silent connections then holds each slot only until newer ones come,
    # while a real joiner knocks one round trip after it connects.
    trials: dict[int, tuple[trio.CancelScope, str]] = {}
    numbers = itertools.count()

    async def take(stream: trio.SocketStream) -> None:
        number = next(numbers)
        if len(trials) >= limits.handshakes:
            oldest = next(iter(trials))
            scope, peer = trials.pop(oldest)
            scope.cancel()
            log(f"too many handshakes at once: the oldest, from {peer}, closed unheard")
        with trio.CancelScope() as scope:
            trials[number] = (scope, _peer_text(stream))
            try:
                await _trial(stream, me, invite, seat, limits, frame_timeout, log)
            finally:
                trials.pop(number, None)
        if scope.cancelled_caught:
            await abort(stream)

    async def serve(listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        while True:
            try:
                stream = await listener.accept()
            except OSError as e:  # e.g. EMFILE under a flood: wait a little, go on
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
    if seat.taken is None:
        raise GateClosed("the invite expired and nobody took the seat; start the host again for a new invite")
    return seat.taken


async def _tell(framed: FramedStream, reason: str) -> None:
    with trio.move_on_after(1):
        try:
            await framed.send_control("error", reason=reason)
        except (PeerClosed, PeerTimeout):
            pass


def _peer_text(stream: trio.SocketStream) -> str:
    try:
        address = stream.socket.getpeername()
    except OSError:
        return "an unknown address"
    host, port = address[0], address[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _short(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    return text if len(text) <= 120 else text[:117] + "..."
