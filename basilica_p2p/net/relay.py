"""Meeting a peer on a Magic Wormhole transit relay, when no direct connection can be made.

The relay (`magic-wormhole-transit-relay`, run as `twist transitrelay --port tcp:PORT`) pairs
two TCP connections that name the same token and glues them together. Both sides derive the
token and the handshake lines from one shared 32-byte transit key, as magic-wormhole's own
transit client does (src/wormhole/transit.py), so either end may also be a wormhole client:

    each side -> relay:    please relay {HKDF(key, "transit_relay_token") hex} for side {8 random bytes hex}\\n
    relay -> each side:    ok\\n                  (once a connection with the same token and another side is there)
    sender -> receiver:    transit sender {HKDF(key, "transit_sender") hex} ready\\n\\n
    receiver -> sender:    transit receiver {HKDF(key, "transit_receiver") hex} ready\\n\\n
    sender -> receiver:    go\\n                  (after checking the receiver's line)

and then application bytes flow both ways. HKDF is RFC 5869 with SHA-256, no salt, 32 bytes.

Everything the relay or the peer sends before `go` is hostile input: `meet` never reads past
the line it expects (so it holds under a hundred bytes and leaves application bytes in the
socket), fails with `BadHandshake` as soon as what arrived differs from that line, and bounds
the whole meeting by one timeout, since the relay itself keeps a lonely connection waiting
forever (its MAX_WAIT_TIME is declared but unused).

The relay is trusted for nothing but carrying bytes: it learns the token, not the key, and our
own signed protocol runs on the returned stream, so it can drop or delay data but not forge it.

After `meet` the stream is an ordinary `trio.SocketStream`, with the relay's limits:

* no half-close: `send_eof` (or a peer's) ends the relayed pair for both sides, so say goodbye
  in the application protocol and close only then;
* when the relay or the peer goes away, `receive_some` returns ``b""`` or raises
  `trio.BrokenResourceError`, and `send_all` raises `trio.BrokenResourceError`: nothing hangs
  once the relay's TCP connection is gone (a relay that stays up but stops forwarding is the
  application's timeouts' business).
"""

from __future__ import annotations

import os
import socket

import trio
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

OK = b"ok\n"
GO = b"go\n"
# What the relay says instead of "ok" (transit_server.py): a request line it could not parse,
# or bytes sent before it paired us. Both are followed by a hang-up.
_REFUSALS = (b"bad handshake\n", b"impatient\n")
# The receiver may hear this instead of "go" from a wormhole sender that picked another path.
_NEVERMIND = b"nevermind\n"
_SHOWN = 40  # at most this many received bytes are quoted in an error message


class RelayError(Exception):
    """Meeting on the relay failed; the message is one line saying how."""


class RelayUnreachable(RelayError):
    """No TCP connection to the relay: refused, unresolvable, or no answer in time."""


class RelayRefused(RelayError):
    """The relay answered the request with a refusal ("bad handshake", "impatient")."""


class RelayTimeout(RelayError):
    """No peer with the same key came, or the peer did not finish the handshake, in time."""


class RelayClosed(RelayError):
    """The relay, or the peer through it, hung up before the meeting was complete."""


class BadHandshake(RelayError):
    """The relay or the peer sent something other than the exact line expected: a hostile or
    confused party, another transit key, or both sides claiming the same role."""


def _hkdf(key: bytes, context: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=context).derive(key)


def relay_token(transit_key: bytes) -> str:
    """The hex token both sides name to the relay, derived as magic-wormhole derives it."""
    return _hkdf(transit_key, b"transit_relay_token").hex()


def handshake_lines(transit_key: bytes) -> tuple[bytes, bytes]:
    """The sender's and the receiver's handshake lines, in that order, as magic-wormhole's."""
    sender = b"transit sender " + _hkdf(transit_key, b"transit_sender").hex().encode() + b" ready\n\n"
    receiver = b"transit receiver " + _hkdf(transit_key, b"transit_receiver").hex().encode() + b" ready\n\n"
    return sender, receiver


def relay_request(transit_key: bytes, side: str) -> bytes:
    """The first line sent to the relay; ``side`` is 16 hex digits, new for each connection."""
    if len(side) != 16 or any(c not in "0123456789abcdef" for c in side):
        raise ValueError(f"a side is 16 lowercase hex digits, not {side!r}")
    return f"please relay {relay_token(transit_key)} for side {side}\n".encode()


def _shown(data: bytes) -> str:
    return repr(data[:_SHOWN]) + ("..." if len(data) > _SHOWN else "")


async def _expect(stream: trio.SocketStream, expected: bytes, who: str,
                  alternatives: tuple[bytes, ...] = ()) -> bytes:
    """Read exactly ``expected``, or one of the known ``alternatives``, and return which.

    Each read asks for no more than the bytes still missing, so whatever follows the line (the
    peer's handshake after "ok", application bytes after "go") stays in the socket, and a
    sender of garbage fails at its first wrong byte instead of filling our memory.
    """
    got = b""
    target = expected
    while got != target:
        try:
            data = await stream.receive_some(len(target) - len(got))
        except trio.BrokenResourceError as e:
            raise RelayClosed(f"{who} reset the connection ({_cause(e)}) before {_shown(expected)}") from None
        if not data:
            raise RelayClosed(f"{who} hung up after {_shown(got)}, before {_shown(expected)}")
        got += data
        if not target.startswith(got):
            target = next((line for line in (expected, *alternatives) if line.startswith(got)), b"")
            if not target:
                raise BadHandshake(f"{who} sent {_shown(got)} where {_shown(expected)} was expected")
    return got


def _cause(e: BaseException) -> str:
    return str(e.__cause__ or e) or type(e).__name__


def _reasons(e: OSError) -> str:
    """Why a connection failed, in words: trio's "all attempts failed" hides one error per
    address in its cause, and those say "Connection refused"."""
    tried = e.__cause__.exceptions if isinstance(e.__cause__, BaseExceptionGroup) else (e,)
    return ", ".join(dict.fromkeys(_reason(x) for x in tried))


def _reason(e: BaseException) -> str:
    if isinstance(e, OSError) and not isinstance(e, socket.gaierror) and e.errno and e.errno > 0:
        return os.strerror(e.errno)
    return (e.strerror if isinstance(e, OSError) else None) or str(e)


async def meet(relay: tuple[str, int], transit_key: bytes, *, sender: bool,
               timeout: float = 30.0) -> trio.SocketStream:
    """Meet the peer holding ``transit_key`` on ``relay`` (host, port) and return the stream.

    One side passes ``sender=True``, the other ``sender=False``; ``timeout`` bounds everything,
    the wait for the peer included. Raises a `RelayError`: `RelayUnreachable` (no connection
    to the relay, or none within ``timeout``), `RelayRefused` (the relay said no),
    `RelayTimeout` (no peer with this key, or an unfinished handshake, within ``timeout``),
    `RelayClosed` (a hang-up before the end) or `BadHandshake`. On success the next byte
    read is the peer's first application byte.
    """
    host, port = relay
    where = f"{host}:{port}"
    mine, theirs = handshake_lines(transit_key)
    if not sender:
        mine, theirs = theirs, mine
    # A fresh side for each connection: the relay pairs only different sides, so two of our
    # own attempts never meet each other, and it drops spare ones from a side once paired.
    request = relay_request(transit_key, os.urandom(8).hex())
    deadline = trio.current_time() + timeout

    stream = None
    # Not nested around _meet: with one deadline, the outer scope would catch its expiry and
    # a missing peer would be reported as a missing relay.
    with trio.move_on_at(deadline):
        try:
            stream = await trio.open_tcp_stream(host, port)
        except OSError as e:
            raise RelayUnreachable(f"the relay {where} did not answer: {_reasons(e)}") from None
    if stream is None:
        raise RelayUnreachable(f"the relay {where} did not answer within {timeout:g} s")
    return await _meet(stream, where, request, mine, theirs, sender, deadline, timeout)


async def _meet(stream: trio.SocketStream, where: str, request: bytes, mine: bytes,
                theirs: bytes, sender: bool, deadline: float, timeout: float) -> trio.SocketStream:
    relay = f"the relay {where}"
    phase = f"no peer with this key came to {relay}"
    try:
        with trio.move_on_at(deadline):
            try:
                await stream.send_all(request)
                answer = await _expect(stream, OK, relay, _REFUSALS)
                if answer != OK:
                    raise RelayRefused(f"{relay} refused to relay us: {answer.decode().strip()}")
                phase = f"the peer did not finish the handshake through {where}"
                # The relay forwards everything after "ok" verbatim: from here on, the peer speaks.
                await stream.send_all(mine)
                await _expect(stream, theirs, "the peer")
                if sender:
                    await stream.send_all(GO)
                elif await _expect(stream, GO, "the peer", (_NEVERMIND,)) != GO:
                    raise BadHandshake("the peer abandoned this connection (nevermind)")
            except trio.BrokenResourceError as e:
                raise RelayClosed(f"the connection to {relay} broke: {_cause(e)}") from None
            return stream
        raise RelayTimeout(f"{phase} within {timeout:g} s")
    except BaseException:
        await trio.aclose_forcefully(stream)
        raise


__all__ = [
    "BadHandshake", "RelayClosed", "RelayError", "RelayRefused", "RelayTimeout", "RelayUnreachable",
    "handshake_lines", "meet", "relay_request", "relay_token",
]


class QuickAckStream(trio.abc.HalfCloseableStream):
    """A relayed stream that acknowledges every read at once (Linux ``TCP_QUICKACK``).

    The relay forwards each of our peer's small frames as it comes, but with Nagle's algorithm
    (Twisted leaves it on): a second frame waits until the first is acknowledged, and a
    receiver with nothing to send back delays that acknowledgement by 40 ms.  In the lockstep
    game a frame often follows another (an action, then its shares), so a game through the
    relay spent most of its time in those waits.  The flag does not stick, so it is set again
    after every read.
    """

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.socket = stream.socket

    def _quick(self) -> None:
        quickack = getattr(socket, "TCP_QUICKACK", None)
        if quickack is not None:
            try:
                self.socket.setsockopt(socket.IPPROTO_TCP, quickack, 1)
            except OSError:
                pass

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        data = await self.stream.receive_some(max_bytes)
        self._quick()
        return data

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()
