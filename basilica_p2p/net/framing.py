"""Frames on a byte stream: what goes over TCP between two peers.

    frame         = length: u32 big-endian | kind: 1 byte | body: length - 1 bytes
    checked frame = length: u32 big-endian | kind: 1 byte | body | crc: u32 big-endian   (length counts all after it)

Kind 1 carries one signed envelope (recorded in the replay); kind 2 a
control message (canonical msgpack map, not recorded): keepalive pings,
the error that explains a disconnect, and the resume exchange.  Reading a
frame has a deadline once its first byte arrived, so a peer trickling one
byte a second is dropped instead of holding the connection forever.

Checked frames carry the CRC-32 (as zlib's) of kind and body, so that a message
the connection corrupted (a relay or a router that flips bytes) is told apart from
one the peer sent: a signature that fails on a frame whose checksum holds was sent
so, one that fails its checksum was damaged on the way and proves nothing about
the peer.  They are versioned without a word an older peer would refuse (it
refuses any control message it does not know): each side first sends a pong it
never asked for, ``n = CHECKED_OFFER`` ("I read checked frames"), which an older
peer ignores as it ignores every pong.  A side that receives the offer answers
``pong n = CHECKED_SWITCH`` and sends checked frames from the next frame on; a side
that receives the switch reads the peer's frames as checked from the next one on.
Each direction switches on its own, at a point both sides see in the stream.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from typing import Any, Protocol

import trio

from ..wire import MAX_MESSAGE, ProtocolError, decode, encode

ENVELOPE = 1
CONTROL = 2
MAX_FRAME = MAX_MESSAGE + 1
_U32 = struct.Struct(">I")
CHECKSUM = 4  # the bytes a checked frame adds
# Pong numbers no keepalive reaches (pings count up from 1): the offer and switch above.
CHECKED_OFFER = (1 << 63) + 2
CHECKED_SWITCH = (1 << 63) + 3
# "Send me lines of chat" (PROTOCOL.md §4d): an older peer, or one started with --no-chat,
# never says it, and is sent none.
CHAT_OFFER = (1 << 63) + 4
# "I may play again after a game" (net/again.py): only then is an "again" answer sent.
AGAIN_OFFER = (1 << 63) + 5
# "Tell me who watches, and let me close watching" (net/watch.py): a joiner's.
WATCH_OFFER = (1 << 63) + 6

CONTROL_SCHEMAS: dict[str, tuple[str, ...]] = {
    "ping": ("t", "n"),
    "pong": ("t", "n"),
    "error": ("t", "reason"),
    "again": ("t", "yes"),
    # Watching (net/watch.py): the host's challenge to a watcher, the watcher's proof, each game's
    # replay header to watchers; to the joiner who watches, and the joiner's "close watching".
    "look": ("t", "nonce"),
    "watch": ("t", "key", "name", "mac"),
    "game": ("t", "header"),
    "watching": ("t", "names"),
    "unwatch": ("t",),  # after a game: this side wants another one, or not (net/again.py)
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
    # Only to a peer that offered checked frames: a frame of yours reached me damaged (a
    # checksum that did not match, or no signature of yours): the connection is at fault.
    "corrupted": ("t",),
}


class PeerClosed(Exception):
    """The peer closed the connection (or it broke)."""


class PeerBye(PeerClosed):
    """The peer ended the connection politely (no more games)."""


class PeerTimeout(Exception):
    """The peer was silent, or too slow to finish a frame, past a deadline."""


class CorruptFrame(Exception):
    """A checked frame whose checksum does not match: the connection damaged it on the way."""


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
        self.checked_out = False  # our frames carry a checksum (the peer offered to read them)
        self.checked_in = False  # the peer's frames do (it said it switched)

    async def send(self, kind: int, body: bytes) -> None:
        async with self._send_lock:
            await self._send(kind, body)

    async def switch_to_checked(self) -> None:
        """Tell the peer that our frames carry a checksum from the next one on, and do so."""
        async with self._send_lock:
            if not self.checked_out:
                await self._send(CONTROL, control("pong", n=CHECKED_SWITCH))
                self.checked_out = True

    async def _send(self, kind: int, body: bytes) -> None:
        await self._send_all(self._frame(kind, body))

    async def send_many(self, frames: list[tuple[int, bytes]]) -> None:
        """Several frames in one write (a watcher's batch, net/watch.py)."""
        async with self._send_lock:
            await self._send_all(b"".join(self._frame(kind, body) for kind, body in frames))

    def _frame(self, kind: int, body: bytes) -> bytes:
        if not 0 < len(body) + 1 <= MAX_FRAME:
            raise ValueError("frame too large")
        data = bytes([kind]) + body
        if self.checked_out:
            data += _U32.pack(zlib.crc32(data))
        return _U32.pack(len(data)) + data

    async def _send_all(self, data: bytes) -> None:
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
        at most ``frame_timeout`` for the rest of it.  Once the peer's frames are checked,
        anything wrong with one (its length too, or its kind) is :class:`CorruptFrame`."""
        checked = self.checked_in
        extra = CHECKSUM if checked else 0
        if not self._buf:
            await self._fill(1)
        with trio.move_on_after(self.frame_timeout) as scope:
            await self._fill(4)
            (length,) = _U32.unpack_from(self._buf, 0)
            if not extra < length <= MAX_FRAME + extra:
                if checked:
                    raise CorruptFrame(f"a frame length of {length} bytes")
                raise ProtocolError(f"frame of {length} bytes is over the {MAX_FRAME}-byte cap")
            await self._fill(4 + length)
        if scope.cancelled_caught:
            raise PeerTimeout(f"the peer did not finish a frame within {self.frame_timeout:g} s")
        data = bytes(self._buf[4 : 4 + length])
        del self._buf[: 4 + length]
        if checked:
            data, crc = data[:-CHECKSUM], _U32.unpack_from(data, len(data) - CHECKSUM)[0]
            if crc != zlib.crc32(data):
                raise CorruptFrame("a frame whose checksum does not match")
        kind, body = data[0], data[1:]
        if kind not in (ENVELOPE, CONTROL):
            raise ProtocolError(f"unknown frame kind {kind}")
        if not body:
            raise ProtocolError("empty frame")
        return Frame(kind, body)

    async def aclose(self) -> None:
        with trio.move_on_after(1):
            await self.stream.aclose()


class Closable(Protocol):
    """Anything with trio's ``aclose``: a stream, or a :class:`FramedStream` over one."""

    async def aclose(self) -> None: ...


async def close_quietly(stream: Closable) -> None:
    """Close, shielded and within a second, whatever state the other end left the stream in."""
    with trio.move_on_after(1) as scope:
        scope.shield = True
        try:
            await stream.aclose()
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            pass
