"""STUN (RFC 5389) Binding: the address and port a server on the internet sees us from.

    header = type: u16 | length: u16 | magic cookie 0x2112A442: u32 | transaction id: 12 bytes
    attribute = type: u16 | length: u16 | value, padded with 0 to 3 bytes to a multiple of 4

Only the Binding method, without authentication: a request carries no
attributes, and a success response (0x0101) carries XOR-MAPPED-ADDRESS
(MAPPED-ADDRESS from older servers), an error response (0x0111) ERROR-CODE.
Over TCP a message is framed by its own header's length field; RFC 5389 adds
no other framing.

Everything a server sends is hostile input: `parse_response` checks every
length, the padding, the message type, the transaction id and a size cap,
and fails with `StunError` and a one-line reason, never anything else.

`nat_behaviour` reads several answers for one local port: a router that
gives each destination a new port (symmetric NAT) defeats hole punching, and
the user should be told so rather than wait for a connection that never comes.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import trio

from ..printable import printable
from .hostport import host_port

MAGIC = 0x2112A442
BINDING_REQUEST = 0x0001
BINDING_SUCCESS = 0x0101
BINDING_ERROR = 0x0111
# Far above any Binding response (a few attributes), yet a server cannot make us buffer much.
MAX_MESSAGE = 2048

MAPPED_ADDRESS = 0x0001
MESSAGE_INTEGRITY = 0x0008
ERROR_CODE = 0x0009
XOR_MAPPED_ADDRESS = 0x0020
FINGERPRINT = 0x8028
_FINGERPRINT_XOR = 0x5354554E
# Comprehension-required attributes (below 0x8000) a response may carry that we can skip:
# RFC 5389's, RFC 5780's, and RFC 3489's, which classic servers still send.  Any other one in
# a response fails the transaction (RFC 5389 7.3.3).
_KNOWN_REQUIRED = frozenset({
    0x0001, 0x0002, 0x0003, 0x0004, 0x0005, 0x0006, 0x0008, 0x0009, 0x000A, 0x000B,
    0x0014, 0x0015, 0x0020, 0x0026, 0x0027,
})

_HEADER = struct.Struct(">HHI12s")
_ATTR = struct.Struct(">HH")

# Public servers run by two different operators, so that one being down leaves an answer and
# two answers can be compared (nat_behaviour).  Defaults for the command line only: the library
# never contacts a server it was not given.  Google's answers over UDP only.
DEFAULT_SERVERS: tuple[tuple[str, int], ...] = (
    ("stun.l.google.com", 19302),
    ("stun1.l.google.com", 19302),
    ("stun.cloudflare.com", 3478),
)


class StunError(Exception):
    """A STUN exchange failed: no answer, a malformed answer, or an error response."""


@dataclass(frozen=True)
class Mapped:
    """What a STUN server saw: our address from its side, for one local port."""

    host: str
    port: int
    server: str  # "host:port" as given
    local_port: int
    transport: str = "udp"  # "udp" or "tcp": the two are mapped separately by a NAT
    server_address: str = ""  # the server's "ip:port" as dialled: two names may be one server

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


def binding_request(txid: bytes) -> bytes:
    """A Binding request without attributes."""
    if len(txid) != 12:
        raise ValueError("a STUN transaction id is 12 bytes")
    return _HEADER.pack(BINDING_REQUEST, 0, MAGIC, txid)


def new_transaction() -> bytes:
    return os.urandom(12)


def is_stun_for(data: bytes, txid: bytes) -> bool:
    """Whether ``data`` claims to be a STUN message of transaction ``txid``: cheap, so that
    stray datagrams are dropped without judging them."""
    return len(data) >= _HEADER.size and data[4:8] == MAGIC.to_bytes(4, "big") and data[8:20] == txid


def parse_response(data: bytes, txid: bytes) -> tuple[str, int]:
    """The mapped (host, port) of a Binding success response to transaction ``txid``."""
    if len(data) > MAX_MESSAGE:
        raise StunError(f"STUN message of {len(data)} bytes is over the {MAX_MESSAGE}-byte cap")
    if len(data) < _HEADER.size:
        raise StunError(f"STUN message of {len(data)} bytes is shorter than its 20-byte header")
    kind, length, cookie, got_txid = _HEADER.unpack_from(data)
    if kind & 0xC000:
        raise StunError("not a STUN message: the first two bits are not zero")
    if cookie != MAGIC:
        raise StunError("not an RFC 5389 STUN message: wrong magic cookie")
    if got_txid != txid:
        raise StunError("STUN answer to another transaction")
    if length % 4:
        raise StunError(f"STUN message length {length} is not a multiple of 4")
    if _HEADER.size + length != len(data):
        raise StunError(f"STUN message length {length} does not match the {len(data) - _HEADER.size} bytes after the header")
    if kind not in (BINDING_SUCCESS, BINDING_ERROR):
        raise StunError(f"STUN message type 0x{kind:04x} is not a Binding response")
    attrs = _attributes(data)
    if kind == BINDING_ERROR:
        raise StunError(_error_line(attrs.get(ERROR_CODE)))
    if XOR_MAPPED_ADDRESS in attrs:
        return _address(attrs[XOR_MAPPED_ADDRESS], data[4:20])
    if MAPPED_ADDRESS in attrs:
        return _address(attrs[MAPPED_ADDRESS], None)
    raise StunError("STUN response holds no mapped address")


def _attributes(data: bytes) -> dict[int, bytes]:
    """The attributes of a whole message (header already checked), first occurrence of each."""
    attrs: dict[int, bytes] = {}
    at = _HEADER.size
    integrity = False
    while at < len(data):
        if len(data) - at < _ATTR.size:
            raise StunError("STUN attribute header cut short")
        kind, length = _ATTR.unpack_from(data, at)
        start = at + _ATTR.size
        end = start + length
        padded = start + (length + 3) // 4 * 4
        if padded > len(data):
            raise StunError(f"STUN attribute 0x{kind:04x} of {length} bytes runs past the message")
        if kind == FINGERPRINT:
            if padded != len(data) or length != 4:
                raise StunError("STUN FINGERPRINT is not a 4-byte last attribute")
            # The CRC covers the message up to the fingerprint, with the length as sent.
            expected = (zlib.crc32(data[:at]) ^ _FINGERPRINT_XOR) & 0xFFFFFFFF
            if int.from_bytes(data[start:end], "big") != expected:
                raise StunError("STUN FINGERPRINT does not match the message")
        elif not integrity:  # after MESSAGE-INTEGRITY only FINGERPRINT counts (RFC 5389 15.4)
            if kind < 0x8000 and kind not in _KNOWN_REQUIRED:
                raise StunError(f"STUN response holds unknown comprehension-required attribute 0x{kind:04x}")
            attrs.setdefault(kind, data[start:end])
            integrity = kind == MESSAGE_INTEGRITY
        at = padded
    return attrs


def _address(value: bytes, xor: bytes | None) -> tuple[str, int]:
    """Decode (XOR-)MAPPED-ADDRESS; ``xor`` is the cookie and transaction id, or None."""
    if len(value) < 4:
        raise StunError("STUN address attribute cut short")
    family, port = value[1], int.from_bytes(value[2:4], "big")
    raw = value[4:]
    if (family, len(raw)) not in ((1, 4), (2, 16)):
        raise StunError(f"STUN address attribute: family {family} with {len(raw)} address bytes")
    if xor is not None:
        port ^= MAGIC >> 16
        raw = bytes(a ^ b for a, b in zip(raw, xor))
    if port == 0:
        raise StunError("STUN server reports port 0")
    host = str(ipaddress.IPv4Address(raw) if family == 1 else ipaddress.IPv6Address(raw))
    return host, port


def _error_line(value: bytes | None) -> str:
    if value is None or len(value) < 4:
        raise StunError("STUN error response without a readable ERROR-CODE")
    code = (value[2] & 0x07) * 100 + value[3]
    reason = value[4:].decode("utf-8", "replace")
    reason = printable(reason, 80, bad="")  # one line, whatever was sent
    return f"STUN server answered error {code} {reason}".rstrip()


def _label(server: tuple[object, ...]) -> str:
    """host:port of a server as given, or of a socket address."""
    return host_port(server[0], server[1])


def _same_endpoint(a: tuple[object, ...], b: tuple[object, ...]) -> bool:
    try:
        return ipaddress.ip_address(str(a[0])) == ipaddress.ip_address(str(b[0])) and a[1] == b[1]
    except ValueError:
        return False


async def _resolve(server: tuple[str, int], kind: int, family: int = 0) -> tuple[int, tuple[object, ...]]:
    """(family, address) of a server, IPv4 first when the name has both."""
    try:
        infos = await trio.socket.getaddrinfo(server[0], server[1], family, kind)
    except (OSError, UnicodeError) as e:
        raise StunError(f"cannot resolve STUN server {_label(server)}: {e}") from None
    infos.sort(key=lambda info: info[0] != socket.AF_INET)
    if not infos:
        raise StunError(f"cannot resolve STUN server {_label(server)}")
    return infos[0][0], infos[0][4]


def _schedule(timeout: float) -> Iterable[float]:
    """Waits between UDP retransmissions (RFC 5389 7.2.1's doubling, shortened to fit)."""
    wait = min(0.5, max(0.05, timeout / 8))
    while True:
        yield wait
        wait *= 2


class _Pending:
    """One UDP transaction waiting for its answer."""

    def __init__(self, txid: bytes, addr: tuple[object, ...]) -> None:
        self.txid = txid
        self.addr = addr
        self.done = trio.Event()
        self.result: tuple[str, int] | None = None
        self.error: StunError | None = None


class _UdpClient:
    """One UDP socket that several transactions share, so that every server is asked from the
    same local port (what nat_behaviour compares); one reader hands answers out by transaction."""

    def __init__(self, sock: trio.socket.SocketType) -> None:
        self.sock = sock
        self.pending: dict[bytes, _Pending] = {}

    async def read(self) -> None:
        while True:
            try:
                data, addr = await self.sock.recvfrom(MAX_MESSAGE + 1)
            except (ConnectionRefusedError, ConnectionResetError):
                continue  # one server's ICMP error (reported on some systems) is not the others'
            except OSError as e:
                for waiting in self.pending.values():
                    if not waiting.done.is_set():
                        waiting.error = StunError(f"the UDP socket failed: {e.strerror or e}")
                        waiting.done.set()
                return
            p = self.pending.get(data[8:20])
            # Anything not from the server asked, or not about our transaction, is ignored: it
            # may be late, stray or forged, and the real answer may still come.
            if p is None or p.done.is_set() or not _same_endpoint(addr, p.addr) or not is_stun_for(data, p.txid):
                continue
            try:
                p.result = parse_response(data, p.txid)
            except StunError as e:
                p.error = e
            p.done.set()

    async def ask(self, server: tuple[str, int], addr: tuple[object, ...], deadline: float,
                  timeout: float) -> Mapped:
        p = _Pending(new_transaction(), addr)
        self.pending[p.txid] = p
        try:
            with trio.move_on_at(deadline):
                for wait in _schedule(timeout):
                    try:
                        await self.sock.sendto(binding_request(p.txid), addr)
                    except OSError as e:
                        raise StunError(f"cannot send to STUN server {_label(server)}: {e.strerror or e}") from None
                    with trio.move_on_after(wait):
                        await p.done.wait()
                    if p.done.is_set():
                        break
        finally:
            del self.pending[p.txid]
        if p.error is not None:
            raise StunError(f"{_label(server)}: {p.error}")
        if p.result is None:
            raise StunError(f"no answer from STUN server {_label(server)} (UDP) in {timeout:g} s")
        return Mapped(p.result[0], p.result[1], _label(server), self.sock.getsockname()[1], "udp",
                      _label(addr))


def _udp_socket(family: int, local_port: int) -> trio.socket.SocketType:
    # Bound by the standard library, without a checkpoint: no other task can send from it
    # (and so bind it to a random port) before it has its port.
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", local_port))
    except OSError as e:
        sock.close()
        raise StunError(f"cannot bind UDP port {local_port}: {e.strerror or e}") from None
    return trio.socket.from_stdlib_socket(sock)


async def stun_udp(server: tuple[str, int], *, timeout: float = 2.0, local_port: int = 0) -> Mapped:
    """Ask one server over UDP, from ``local_port`` (0: any), retransmitting within ``timeout``."""
    (answer,) = await _ask_udp([server], timeout, local_port)
    if isinstance(answer, StunError):
        raise answer
    return answer


async def _ask_udp(servers: Sequence[tuple[str, int]], timeout: float,
                   local_port: int) -> list[Mapped | StunError]:
    """Ask every server in parallel, from one socket a family: an answer or the error for each.

    Errors are returned, not raised, so that no exception group has to be taken apart."""
    answers: list[Mapped | StunError] = [StunError("not asked")] * len(servers)
    clients: dict[int, _UdpClient] = {}
    deadline = trio.current_time() + timeout

    async def one(i: int, server: tuple[str, int], readers: trio.Nursery) -> None:
        try:
            with trio.fail_at(deadline):
                family, addr = await _resolve(server, socket.SOCK_DGRAM)
            if family not in clients:  # no checkpoint between the test and the assignment
                clients[family] = _UdpClient(_udp_socket(family, local_port))
                readers.start_soon(clients[family].read)
            answers[i] = await clients[family].ask(server, addr, deadline, timeout)
        except trio.TooSlowError:
            answers[i] = StunError(f"cannot resolve STUN server {_label(server)} in {timeout:g} s")
        except StunError as e:
            answers[i] = e

    try:
        async with trio.open_nursery() as readers:
            async with trio.open_nursery() as askers:
                for i, server in enumerate(servers):
                    askers.start_soon(one, i, server, readers)
            readers.cancel_scope.cancel()
    finally:
        for c in clients.values():
            c.sock.close()
    return answers


def _tcp_socket(family: int) -> trio.socket.SocketType:
    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    # Before bind: the same local port is then bound again to listen and to connect to the
    # peer (TCP simultaneous open), while this connection may still be in TIME_WAIT.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if hasattr(socket, "SO_REUSEPORT"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    return sock


def _family_of(host: str) -> int:
    try:
        return socket.AF_INET6 if ipaddress.ip_address(host).version == 6 else socket.AF_INET
    except ValueError:
        return 0


async def stun_tcp(server: tuple[str, int], *, local: tuple[str, int] | None = None,
                   timeout: float = 3.0) -> Mapped:
    """Ask one server over TCP, connecting from ``local`` (host, port), bound with SO_REUSEADDR
    and SO_REUSEPORT so that the port can listen and connect again afterwards."""
    try:
        with trio.fail_after(timeout):
            return await _stun_tcp(server, local)
    except trio.TooSlowError:
        raise StunError(f"no answer from STUN server {_label(server)} (TCP) in {timeout:g} s") from None


async def _stun_tcp(server: tuple[str, int], local: tuple[str, int] | None) -> Mapped:
    family, addr = await _resolve(server, socket.SOCK_STREAM, _family_of(local[0]) if local else 0)
    sock = _tcp_socket(family)
    try:
        if local is not None:
            await sock.bind((local[0] or ("::" if family == socket.AF_INET6 else "0.0.0.0"), local[1]))
        await sock.connect(addr)
    except OSError as e:
        sock.close()
        raise StunError(f"cannot connect to STUN server {_label(server)} (TCP): {e.strerror or e}") from None
    local_port = sock.getsockname()[1]
    stream = trio.SocketStream(sock)
    try:
        txid = new_transaction()
        await stream.send_all(binding_request(txid))
        while True:  # messages of other transactions (indications) are skipped
            data = await _read_message(stream)
            if data[8:20] == txid:
                host, port = parse_response(data, txid)
                return Mapped(host, port, _label(server), local_port, "tcp", _label(addr))
    except StunError as e:
        raise StunError(f"{_label(server)}: {e}") from None
    except (trio.BrokenResourceError, OSError) as e:
        raise StunError(f"STUN server {_label(server)} (TCP) broke the connection: {e}") from None
    finally:
        await stream.aclose()


async def _read_message(stream: trio.SocketStream) -> bytes:
    """One STUN message off a TCP stream, framed by its header's length field."""
    data = await _read_exactly(stream, _HEADER.size)
    kind, length, cookie, _ = _HEADER.unpack(data)
    if kind & 0xC000 or cookie != MAGIC:
        raise StunError("not a STUN message on the TCP stream")
    if _HEADER.size + length > MAX_MESSAGE:
        raise StunError(f"STUN message of {_HEADER.size + length} bytes is over the {MAX_MESSAGE}-byte cap")
    return data + await _read_exactly(stream, length)


async def _read_exactly(stream: trio.SocketStream, n: int) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        chunk = await stream.receive_some(n - len(buf))
        if not chunk:
            raise StunError(f"STUN server closed the TCP connection after {len(buf)} of {n} bytes")
        buf += chunk
    return bytes(buf)


async def public_addresses(servers: Sequence[tuple[str, int]], *, tcp_local: tuple[str, int] | None = None,
                           timeout: float = 2.0, log: Callable[[str], None] = lambda s: None) -> list[Mapped]:
    """Ask every server in parallel from one local port; the answers in the servers' order.

    Over UDP (``tcp_local`` None) one socket asks them all.  Over TCP each connection is bound
    to ``tcp_local``; a port 0 there is first chosen once, so that all share it.  A server that
    does not answer is logged (one line) and left out.
    """
    if tcp_local is None:
        found = []
        for answer in await _ask_udp(servers, timeout, 0):
            if isinstance(answer, StunError):
                log(str(answer))
            else:
                found.append(answer)
        return found
    answers: dict[int, Mapped] = {}
    probe = None
    if tcp_local[1] == 0:
        # Held bound (never listening) while the queries run, so no one else takes the port.
        probe = _tcp_socket(_family_of(tcp_local[0]) or socket.AF_INET)
        try:
            await probe.bind((tcp_local[0] or "0.0.0.0", 0))
        except OSError as e:
            probe.close()
            raise StunError(f"cannot bind a TCP port on {tcp_local[0] or '0.0.0.0'}: {e.strerror or e}") from None
        tcp_local = (tcp_local[0], probe.getsockname()[1])

    async def one(i: int, server: tuple[str, int]) -> None:
        try:
            answers[i] = await stun_tcp(server, local=tcp_local, timeout=timeout)
        except StunError as e:
            log(str(e))

    try:
        async with trio.open_nursery() as nursery:
            for i, server in enumerate(servers):
                nursery.start_soon(one, i, server)
    finally:
        if probe is not None:
            probe.close()
    return [answers[i] for i in sorted(answers)]


SYMMETRIC = "symmetric (port changes per destination)"
INDEPENDENT = "endpoint-independent"
UNKNOWN = "unknown"


def nat_behaviour(results: Iterable[Mapped]) -> str:
    """How the NAT maps one local port toward different servers: the same public port for each
    (endpoint-independent: hole punching can work), a new one each (symmetric: it cannot), or
    unknown when no two servers answered for one local port and transport."""
    seen: dict[tuple[str, int, bool], dict[str, tuple[str, int]]] = {}
    for m in results:
        v6 = ":" in m.host
        seen.setdefault((m.transport, m.local_port, v6), {})[m.server_address or m.server] = (m.host, m.port)
    verdict = UNKNOWN
    for by_server in seen.values():
        if len(by_server) < 2:
            continue
        if len(set(by_server.values())) > 1:
            return SYMMETRIC
        verdict = INDEPENDENT
    return verdict
