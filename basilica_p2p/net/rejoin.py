"""Meeting the other side again after a break, and knowing it is the other side.

A network game whose connection broke goes on when both sides meet again
where they met: the host listens on its port again, the joiner dials it
again, a relayed game meets on the same relay under the key both kept.  This
happens within the window both agreed (protocol 3), while the side that
stayed waits (net/session.py), or when a side that stopped runs ``basilica
resume`` (net/resume.py).

The first thing on a new connection is a proof, both ways, that it is the
other player of this game, in control frames::

    each side -> the other   rejoin {nonce: 32 fresh bytes}
    each side -> the other   proof  {sig: Ed25519(own key, TAG || game id || the other's nonce || own nonce)}

Nothing of the game is told before the other side's proof checks out (not
even its id, which is only inside the signed bytes), so a stranger who
connects first learns nothing and ends nothing: its stream is dropped, the
listener keeps listening (several trials at once, each bounded in time) and
the dialer dials again, until the window ends.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from ..identity import Identity
from ..wire import ProtocolError
from .framing import CONTROL, FramedStream, PeerClosed, PeerTimeout, close_quietly

PROOF_TAG = b"basilica-p2p/rejoin/v1\x00"
TRIAL = 10.0  # seconds a new connection has to prove itself
MAX_TRIALS = 8  # connections proving themselves at once; a newcomer beyond closes the oldest
DIAL_PAUSE = 0.5  # between a dialer's tries (the host may not listen again yet)

# A stream that proved to be the other side, or None once the window is over.
Reach = Callable[[float], Awaitable[FramedStream | None]]


@dataclass(frozen=True)
class Rendezvous:
    """How to meet again: listen (the host) or dial (the joiner); or, for a game that was
    relayed, meet on that relay again under the key both sides kept for it."""

    listen: bool
    address: str
    port: int
    relay: tuple[str, int] | None = None
    relay_key: bytes = b""

    @classmethod
    def from_info(cls, info: dict[str, Any]) -> Rendezvous:
        """From a session file's (or a live side's) ``role``, ``address``, ``port`` and, for a
        relayed game, ``relay`` and ``relay_key``; :class:`ValueError` when they are damaged."""
        role, address, port = info.get("role"), info.get("address"), info.get("port")
        if role not in ("host", "join") or not isinstance(address, str) or not isinstance(port, int) \
                or isinstance(port, bool) or not 0 <= port < 65536:
            raise ValueError("the role, address or port of the game is missing or damaged")
        relay = info.get("relay")
        if relay is None:
            return cls(role == "host", address, port)
        if not (isinstance(relay, list) and len(relay) == 2 and isinstance(relay[0], str)
                and isinstance(relay[1], int)):
            raise ValueError("the relay of this relayed game is damaged")
        try:
            key = bytes.fromhex(str(info.get("relay_key", "")))
        except ValueError:
            key = b""
        if len(key) != 32:
            raise ValueError("the relay key of this relayed game is missing or damaged")
        return cls(role == "host", address, port, (relay[0], relay[1]), key)

    def __str__(self) -> str:
        if self.relay is not None:
            return f"on the relay {self.relay[0]}:{self.relay[1]}"
        return f"{'listening on' if self.listen else 'dialling'} {self.address}:{self.port}"


def proof_bytes(game: bytes, theirs: bytes, mine: bytes) -> bytes:
    """What a side signs: the game, the nonce the other side chose, then its own."""
    return PROOF_TAG + game + theirs + mine


async def prove(framed: FramedStream, me: Identity, peer: bytes, game: bytes, deadline: float) -> bool:
    """Both sides' proofs on a fresh stream: True once the other side proved it holds ``peer``'s
    key for ``game``; False (and the stream is left to the caller to close) for anything else."""
    mine = os.urandom(32)
    with trio.move_on_at(deadline):
        try:
            await framed.send_control("rejoin", nonce=mine)
            theirs = (await _control(framed, "rejoin"))["nonce"]
            if not (isinstance(theirs, bytes) and len(theirs) == 32) or theirs == mine:
                return False
            await framed.send_control("proof", sig=me.key.sign(proof_bytes(game, theirs, mine)))
            sig = (await _control(framed, "proof"))["sig"]
            if not isinstance(sig, bytes) or len(sig) != 64:
                return False
            try:
                Ed25519PublicKey.from_public_bytes(peer).verify(sig, proof_bytes(game, mine, theirs))
            except InvalidSignature:
                return False
            return True
        except (PeerClosed, PeerTimeout, ProtocolError, ValueError):
            return False
    return False


async def _control(framed: FramedStream, kind: str) -> dict[str, Any]:
    frame = await framed.receive()
    if frame.kind != CONTROL:
        raise ProtocolError(f"expected a {kind} control frame")
    msg = frame.control()
    if msg["t"] != kind:
        raise ProtocolError(f"expected {kind}, got {msg['t']}")
    return msg


def reach(where: Rendezvous, me: Identity, peer: bytes, game: bytes, frame_timeout: float,
          log: Callable[[str], None] = lambda s: None) -> Reach:
    """The way this side meets the other again: ``await reach(until)`` gives a stream that proved
    to be the other player of ``game``, or None when ``until`` (trio time) came first."""
    async def checked(stream: trio.abc.Stream, until: float) -> FramedStream | None:
        framed = FramedStream(stream, frame_timeout)
        if await prove(framed, me, peer, game, min(until, trio.current_time() + TRIAL)):
            return framed
        log("a connection that did not prove to be the other player was dropped")
        await close_quietly(framed)
        return None

    async def meet(until: float) -> FramedStream | None:
        if where.relay is not None:
            return await _on_relay(where, until, checked)
        if where.listen:
            return await _listening(where, until, checked)
        return await _dialling(where, until, checked)

    return meet


Check = Callable[[trio.abc.Stream, float], Awaitable[FramedStream | None]]


async def _listening(where: Rendezvous, until: float, checked: Check) -> FramedStream | None:
    found: list[FramedStream] = []
    with trio.move_on_at(until):
        listeners = await trio.open_tcp_listeners(where.port, host=where.address)
        try:
            async with trio.open_nursery() as nursery:
                trials: list[trio.CancelScope] = []

                async def trial(stream: trio.abc.Stream, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
                    with trio.CancelScope() as scope:
                        task_status.started(scope)
                        framed = await checked(stream, until)
                        if framed is not None:
                            found.append(framed)
                            nursery.cancel_scope.cancel()
                    if scope.cancelled_caught:
                        await close_quietly(stream)  # displaced by newer connections

                while True:
                    stream = await listeners[0].accept()
                    trials[:] = [t for t in trials if not t.cancel_called]
                    if len(trials) >= MAX_TRIALS:
                        trials.pop(0).cancel()  # the oldest trial makes room: a flood cannot starve the peer
                    trials.append(await nursery.start(trial, stream))
        finally:
            for listener in listeners:
                await listener.aclose()
    return found[0] if found else None


async def _dialling(where: Rendezvous, until: float, checked: Check) -> FramedStream | None:
    with trio.move_on_at(until):
        while True:
            try:
                stream = await trio.open_tcp_stream(where.address, where.port)
            except OSError:
                await trio.sleep(DIAL_PAUSE)
                continue
            framed = await checked(stream, until)
            if framed is not None:
                return framed
            await trio.sleep(DIAL_PAUSE)
    return None


async def _on_relay(where: Rendezvous, until: float, checked: Check) -> FramedStream | None:
    from .relay import QuickAckStream, RelayError, meet

    assert where.relay is not None
    while trio.current_time() < until:
        try:
            stream = await meet(where.relay, where.relay_key, sender=where.listen,
                                timeout=max(0.1, until - trio.current_time()))
        except RelayError:
            # The relay is down (restarting, say) or the peer has not come yet: try again while
            # the window lasts.
            await trio.sleep(min(DIAL_PAUSE * 2, max(0.0, until - trio.current_time())))
            continue
        framed = await checked(QuickAckStream(stream), until)
        if framed is not None:
            return framed
    return None
