"""Frames on a byte stream: what goes over TCP between two peers.

    frame = length: u32 big-endian | kind: 1 byte | body: length - 1 bytes

Kind 1 carries one signed envelope (recorded in the replay); kind 2 a
control message (canonical msgpack map, not recorded): keepalive pings,
the error that explains a disconnect, and the resume exchange.  Reading a
frame has a deadline once its first byte arrived, so a peer trickling one
byte a second is dropped instead of holding the connection forever.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

import trio

from ..wire import MAX_MESSAGE, ProtocolError, decode, encode

ENVELOPE = 1
CONTROL = 2
MAX_FRAME = MAX_MESSAGE + 1
_U32 = struct.Struct(">I")

CONTROL_SCHEMAS: dict[str, tuple[str, ...]] = {
    "ping": ("t", "n"),
    "pong": ("t", "n"),
    "error": ("t", "reason"),
    "resume": ("t", "game", "have", "tip"),  # how many envelopes of this game I hold, the hash of the last
    "bye": ("t",),
    # Before a game on an invite's connection (net/gate.py): the host's signed challenge, the joiner's proof.
    "challenge": ("t", "key", "nonce", "sig"),
    "knock": ("t", "key", "mac", "via"),  # from joiners before 0.2: the seat is taken at once
    # The joiner asks to be told it is seated, and sits only then: a stream counts once both
    # directions have carried a message (INVITE-FORMAT.md section 4b).
    "knock-seat": ("t", "key", "mac", "via"),
    "seated": ("t",),
    "sit": ("t",),
    # Meeting again after a break (net/rejoin.py): each side's nonce, then its signed proof.
    "rejoin": ("t", "nonce"),
    "proof": ("t", "sig"),
}


class PeerClosed(Exception):
    """The peer closed the connection (or it broke)."""


class PeerBye(PeerClosed):
    """The peer ended the connection politely (no more games)."""


class PeerTimeout(Exception):
    """The peer was silent, or too slow to finish a frame, past a deadline."""


@dataclass(frozen=True)
class Frame:
    kind: int
    body: bytes

    def control(self) -> dict[str, Any]:
        msg = decode(self.body)
        if not isinstance(msg, dict) or not isinstance(msg.get("t"), str) or msg["t"] not in CONTROL_SCHEMAS:
            raise ProtocolError("unknown control message")
        if tuple(msg) != CONTROL_SCHEMAS[msg["t"]]:
            raise ProtocolError(f"malformed {msg['t']} control message")
        return msg


def control(t: str, **fields: Any) -> bytes:
    msg = {"t": t, **fields}
    if tuple(msg) != CONTROL_SCHEMAS[t]:
        raise ValueError(f"fields of a {t} control message: {CONTROL_SCHEMAS[t]}")
    return encode(msg)


class FramedStream:
    """Frames over a trio stream; sending is safe from several tasks."""

    def __init__(self, stream: trio.abc.Stream, frame_timeout: float = 10.0) -> None:
        self.stream = stream
        self.frame_timeout = frame_timeout
        self._buf = bytearray()
        self._send_lock = trio.Lock()
        self.bytes_in = 0
        self.bytes_out = 0

    async def send(self, kind: int, body: bytes) -> None:
        if not 0 < len(body) + 1 <= MAX_FRAME:
            raise ValueError("frame too large")
        data = _U32.pack(len(body) + 1) + bytes([kind]) + body
        async with self._send_lock:
            # A peer that stops reading fills the socket buffers; do not wait on it forever.
            with trio.move_on_after(self.frame_timeout) as scope:
                try:
                    await self.stream.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                    raise PeerClosed(str(e) or "connection closed") from None
            if scope.cancelled_caught:
                raise PeerTimeout(f"the peer did not take a frame within {self.frame_timeout:g} s")
        self.bytes_out += len(data)

    async def send_control(self, t: str, **fields: Any) -> None:
        await self.send(CONTROL, control(t, **fields))

    async def _fill(self, n: int) -> None:
        while len(self._buf) < n:
            try:
                chunk = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as e:
                raise PeerClosed(str(e) or "connection closed") from None
            if not chunk:
                raise PeerClosed("the peer closed the connection")
            self._buf += chunk
            self.bytes_in += len(chunk)

    async def receive(self) -> Frame:
        """The next frame.  Waits as long as it takes for a frame to start, then
        at most ``frame_timeout`` for the rest of it."""
        if not self._buf:
            await self._fill(1)
        with trio.move_on_after(self.frame_timeout) as scope:
            await self._fill(4)
            (length,) = _U32.unpack_from(self._buf, 0)
            if length == 0 or length > MAX_FRAME:
                raise ProtocolError(f"frame of {length} bytes is over the {MAX_FRAME}-byte cap")
            await self._fill(4 + length)
        if scope.cancelled_caught:
            raise PeerTimeout(f"the peer did not finish a frame within {self.frame_timeout:g} s")
        kind = self._buf[4]
        body = bytes(self._buf[5 : 4 + length])
        del self._buf[: 4 + length]
        if kind not in (ENVELOPE, CONTROL):
            raise ProtocolError(f"unknown frame kind {kind}")
        if not body:
            raise ProtocolError("empty frame")
        return Frame(kind, body)

    async def aclose(self) -> None:
        with trio.move_on_after(1):
            await self.stream.aclose()


async def close_quietly(stream: trio.abc.AsyncResource) -> None:
    """Close, shielded and within a second, whatever state the other end left the stream in."""
    with trio.move_on_after(1) as scope:
        scope.shield = True
        try:
            await stream.aclose()
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass
