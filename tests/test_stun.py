"""STUN Binding (basilica_p2p/net/stun.py) against small fake servers on the loopback.

The fake servers encode their answers here, independently of the client's
decoder, and RFC 5769's sample responses pin both down.  Waits run on a
MockClock that jumps once the loopback has been quiet for 10 ms of real time,
so a timeout costs nothing and an answer already in flight still arrives first.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import struct
from collections.abc import Callable
from functools import partial

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st

from basilica_p2p.net.stun import (
    DEFAULT_SERVERS,
    INDEPENDENT,
    MAX_MESSAGE,
    SYMMETRIC,
    UNKNOWN,
    Mapped,
    StunError,
    nat_behaviour,
    parse_response,
    public_addresses,
    stun_tcp,
    stun_udp,
)

MAGIC = b"\x21\x12\xa4\x42"
TXID = bytes.fromhex("b7e7a701bc34d686fa87dfae")

# RFC 5769 2.2 and 2.3: Binding success responses with SOFTWARE (padded with spaces),
# XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY and FINGERPRINT.
RFC5769_V4 = bytes.fromhex(
    "0101003c2112a442b7e7a701bc34d686fa87dfae"
    "8022000b7465737420766563746f7220"
    "002000080001a147e112a643"
    "000800142b91f599fd9e90c38c7489f92af9ba53f06be7d7"
    "80280004c07d4c96")
RFC5769_V6 = bytes.fromhex(
    "010100482112a442b7e7a701bc34d686fa87dfae"
    "8022000b7465737420766563746f7220"
    "002000140002a1470113a9faa5d3f179bc25f4b5bed2b9d9"
    "00080014a382954e4be67bf11784c97c8292c275bfe3ed41"
    "80280004c8fb0b4c")


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0.01)


def attribute(kind: int, value: bytes) -> bytes:
    return struct.pack(">HH", kind, len(value)) + value + b"\0" * (-len(value) % 4)


def address_value(host: str, port: int, txid: bytes | None) -> bytes:
    """(XOR-)MAPPED-ADDRESS's value, XORed as RFC 5389 15.2 says when a txid is given."""
    ip = ipaddress.ip_address(host)
    raw = ip.packed
    if txid is not None:
        port ^= 0x2112
        raw = bytes(a ^ b for a, b in zip(raw, MAGIC + txid))
    return struct.pack(">BBH", 0, 1 if ip.version == 4 else 2, port) + raw


def message(kind: int, txid: bytes, body: bytes = b"") -> bytes:
    return struct.pack(">HH", kind, len(body)) + MAGIC + txid + body


def success(txid: bytes, host: str, port: int, *, xor: bool = True) -> bytes:
    kind = 0x0020 if xor else 0x0001
    return message(0x0101, txid, attribute(0x8022, b"fake") + attribute(kind, address_value(host, port, txid if xor else None)))


Reply = Callable[[bytes, tuple[str, int]], list[bytes]]


def mirror(request: bytes, addr: tuple[str, int]) -> list[bytes]:
    """A server with no NAT in front of the client: it reports the source it sees."""
    return [success(request[8:20], addr[0], addr[1])]


class UdpServer:
    """A STUN server on UDP that answers each request with ``reply``'s datagrams."""

    def __init__(self, reply: Reply = mirror, host: str = "127.0.0.1") -> None:
        self.reply = reply
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((host, 0))
        self.sock = trio.socket.from_stdlib_socket(sock)
        self.address: tuple[str, int] = self.sock.getsockname()[:2]
        self.requests: list[bytes] = []
        self.sources: list[tuple[str, int]] = []

    async def serve(self) -> None:
        with self.sock:
            while True:
                data, addr = await self.sock.recvfrom(4096)
                self.requests.append(data)
                self.sources.append(addr[:2])
                for answer in self.reply(data, addr[:2]):
                    await self.sock.sendto(answer, addr)


async def udp_server(nursery: trio.Nursery, reply: Reply = mirror, host: str = "127.0.0.1") -> UdpServer:
    server = UdpServer(reply, host)
    nursery.start_soon(server.serve)
    return server


def check_request(data: bytes) -> bytes:
    """The request is a bare Binding request; its transaction id."""
    kind, length = struct.unpack_from(">HH", data)
    assert (kind, length, data[4:8], len(data)) == (0x0001, 0, MAGIC, 20)
    return data[8:20]


# ---- the parser


def test_rfc5769_ipv4_response() -> None:
    assert parse_response(RFC5769_V4, TXID) == ("192.0.2.1", 32853)


def test_rfc5769_ipv6_response() -> None:
    assert parse_response(RFC5769_V6, TXID) == ("2001:db8:1234:5678:11:2233:4455:6677", 32853)


def test_mapped_address_is_the_fallback_and_xor_wins_when_both_are_there() -> None:
    txid = bytes(range(12))
    assert parse_response(success(txid, "11.0.0.9", 4000, xor=False), txid) == ("11.0.0.9", 4000)
    both = message(0x0101, txid, attribute(0x0001, address_value("10.9.9.9", 1, None))
                   + attribute(0x0020, address_value("11.0.0.9", 4000, txid)))
    assert parse_response(both, txid) == ("11.0.0.9", 4000)


@pytest.mark.parametrize("data, words", [
    (RFC5769_V4[:-1] + b"\x97", "FINGERPRINT does not match"),
    (RFC5769_V4[:30] + b"X" + RFC5769_V4[31:], "FINGERPRINT does not match"),
    (RFC5769_V4[:-4], "does not match the"),  # the header's length is now wrong
    (RFC5769_V4[:19], "shorter than its 20-byte header"),
    (b"\x41" + RFC5769_V4[1:], "first two bits"),
    (RFC5769_V4[:4] + b"\0\0\0\0" + RFC5769_V4[8:], "magic cookie"),
    (RFC5769_V4[:8] + bytes(12) + RFC5769_V4[20:], "another transaction"),
    (message(0x0101, TXID, b"\0\x20\0\x08\0\x01"), "multiple of 4"),
    (message(0x0001, TXID), "not a Binding response"),
    (message(0x0102, TXID), "not a Binding response"),
    (message(0x0101, TXID), "no mapped address"),
    (message(0x0101, TXID, struct.pack(">HH", 0x0020, 12) + bytes(8)), "runs past the message"),
    (message(0x0101, TXID, attribute(0x0020, b"\0\x01\0")), "cut short"),
    (message(0x0101, TXID, attribute(0x0020, b"\0\x03\x12\x34" + bytes(4))), "family 3"),
    (message(0x0101, TXID, attribute(0x0020, b"\0\x01\x12\x34" + bytes(16))), "family 1 with 16"),
    (message(0x0101, TXID, attribute(0x0001, b"\0\x01\0\0\x0b\0\0\x01")), "port 0"),
    (message(0x0101, TXID, attribute(0x7777, b"") + attribute(0x0020, address_value("11.0.0.1", 9, TXID))),
     "unknown comprehension-required attribute 0x7777"),
    (message(0x0101, TXID, attribute(0x8028, b"\0\0\0\0") + attribute(0x8022, b"x")), "last attribute"),
    (message(0x0111, TXID), "without a readable ERROR-CODE"),
    (message(0x0101, TXID) + bytes(MAX_MESSAGE), "cap"),
])
def test_hostile_responses_are_refused_in_one_line(data: bytes, words: str) -> None:
    with pytest.raises(StunError, match=words) as e:
        parse_response(data, TXID)
    assert "\n" not in str(e.value)


def test_unknown_optional_attributes_and_anything_after_integrity_are_skipped() -> None:
    body = (attribute(0xC001, b"whatever") + attribute(0x0008, bytes(20)) + attribute(0x7777, b"")
            + attribute(0x0020, address_value("10.0.0.1", 1, TXID)))
    with pytest.raises(StunError, match="no mapped address"):
        parse_response(message(0x0101, TXID, body), TXID)


def test_an_error_response_is_told_in_one_line_whatever_its_reason_holds() -> None:
    value = b"\0\0\x04\x14" + b"Unknown\nattr\x1b[31m"
    with pytest.raises(StunError) as e:
        parse_response(message(0x0111, TXID, attribute(0x0009, value)), TXID)
    assert str(e.value) == "STUN server answered error 420 Unknownattr[31m"


def written_in(data: bytes, answer: tuple[str, int], txid: bytes) -> bool:
    """Whether ``answer``, encoded again as XOR-MAPPED-ADDRESS or MAPPED-ADDRESS, is an attribute
    of ``data`` (its reserved first byte aside): what the parser read is what the message says."""
    host, port = answer
    for kind, xor in ((0x0020, txid), (0x0001, None)):
        value = address_value(host, port, xor)
        head = struct.pack(">HH", kind, len(value))
        if re.search(re.escape(head) + b"." + re.escape(value[1:]), data, re.DOTALL):
            return True
    return False


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=120))
def test_fuzz_any_bytes(data: bytes) -> None:
    for candidate in (data, MAGIC.join([data[:4], TXID + data[4:]])):
        try:
            answer = parse_response(candidate, TXID)
        except StunError:
            continue
        assert written_in(candidate, answer, TXID), (candidate.hex(), answer)


KNOWN_ANSWERS = {
    RFC5769_V4: ("192.0.2.1", 32853),
    RFC5769_V6: ("2001:db8:1234:5678:11:2233:4455:6677", 32853),
    success(TXID, "11.0.0.1", 7, xor=False): ("11.0.0.1", 7),
}


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(sorted(KNOWN_ANSWERS)),
       st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), max_size=4), st.integers(0, 200))
def test_fuzz_damaged_responses(valid: bytes, changes: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(valid)
    for at, value in changes:
        data[at % len(data)] = value
    data = data[:len(data) - cut % 8]
    try:
        answer = parse_response(bytes(data), TXID)
    except StunError:
        return
    assert answer[1] > 0 and written_in(bytes(data), answer, TXID), (bytes(data).hex(), answer)
    if data == valid:  # every change wrote the byte already there, nothing was cut
        assert answer == KNOWN_ANSWERS[valid]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0x0001, 0x0020, 0x0009, 0x8022, 0x8028, 0x0008, 0xFFFF]),
                          st.binary(max_size=24)), max_size=5), st.sampled_from([0x0101, 0x0111]))
def test_fuzz_well_framed_attributes(attrs: list[tuple[int, bytes]], kind: int) -> None:
    data = message(kind, TXID, b"".join(attribute(k, v) for k, v in attrs))
    try:
        answer = parse_response(data, TXID)
    except StunError:
        return
    assert kind == 0x0101 and written_in(data, answer, TXID), (data.hex(), answer)


OPTIONAL = st.integers(0x8000, 0xFFFF).filter(lambda k: k not in (0x8028, 0x8022))


@settings(max_examples=300, deadline=None)
@given(st.ip_addresses(), st.integers(1, 0xFFFF), st.binary(min_size=12, max_size=12), st.booleans(),
       st.lists(st.tuples(OPTIONAL, st.binary(max_size=24)), max_size=3))
def test_any_mapped_address_a_server_encodes_is_read_back(
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int, txid: bytes, xor: bool,
    noise: list[tuple[int, bytes]],
) -> None:
    """The round trip: an address encoded as RFC 5389 says (XORed or not, among optional
    attributes a client must skip) is read back as that very address and port."""
    body = b"".join(attribute(k, v) for k, v in noise)
    body += attribute(0x0020 if xor else 0x0001, address_value(str(ip), port, txid if xor else None))
    assert parse_response(message(0x0101, txid, body), txid) == (str(ip), port)


# ---- over UDP


@pytest.mark.trio
async def test_udp_binding(nursery: trio.Nursery) -> None:
    server = await udp_server(nursery, lambda req, addr: [success(req[8:20], "11.0.0.7", 40001)])
    got = await stun_udp(server.address)
    label = f"127.0.0.1:{server.address[1]}"
    assert got == Mapped("11.0.0.7", 40001, label, server.sources[0][1], "udp", label)
    check_request(server.requests[0])
    assert str(got) == "11.0.0.7:40001"


@pytest.mark.trio
async def test_udp_binding_from_a_chosen_local_port(nursery: trio.Nursery) -> None:
    server = await udp_server(nursery)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    got = await stun_udp(server.address, local_port=port)
    assert (got.host, got.port, got.local_port) == ("127.0.0.1", port, port)


@pytest.mark.trio
async def test_udp_binding_over_ipv6(nursery: trio.Nursery) -> None:
    server = await udp_server(nursery, host="::1")
    got = await stun_udp(server.address)
    assert (got.host, got.port, got.server) == ("::1", got.local_port, f"[::1]:{server.address[1]}")
    assert str(got) == f"[::1]:{got.local_port}"


@pytest.mark.trio
async def test_udp_retransmits_until_answered(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    server = await udp_server(nursery, lambda req, addr: mirror(req, addr) if len(server.requests) >= 3 else [])
    start = trio.current_time()
    await stun_udp(server.address, timeout=2.0)
    assert len(server.requests) == 3
    assert len({r[8:20] for r in server.requests}) == 1  # one transaction, sent again
    assert trio.current_time() - start == pytest.approx(0.25 + 0.5)


@pytest.mark.trio
async def test_udp_silence_is_a_timeout(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    server = await udp_server(nursery, lambda req, addr: [])
    start = trio.current_time()
    with pytest.raises(StunError, match=r"no answer from STUN server 127\.0\.0\.1:\d+ \(UDP\) in 2 s"):
        await stun_udp(server.address, timeout=2.0)
    assert trio.current_time() - start == pytest.approx(2.0)
    assert 3 <= len(server.requests) <= 5  # retransmitted within the timeout, not flooded


@pytest.mark.trio
async def test_udp_ignores_other_transactions_and_strangers(nursery: trio.Nursery) -> None:
    stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    stranger.bind(("127.0.0.1", 0))

    def reply(req: bytes, addr: tuple[str, int]) -> list[bytes]:
        # A forged answer with the right transaction from another address is sent first.
        stranger.sendto(success(req[8:20], "6.6.6.6", 666), addr)
        return [b"noise", success(bytes(12), "6.6.6.6", 667), message(0x0101, bytes(12), b"\0"),
                success(req[8:20], "11.0.0.8", 5000)]

    with stranger:
        server = await udp_server(nursery, reply)
        got = await stun_udp(server.address)
    assert (got.host, got.port) == ("11.0.0.8", 5000)


@pytest.mark.trio
async def test_udp_a_malformed_answer_to_our_transaction_fails_at_once(nursery: trio.Nursery,
                                                                       clock: trio.testing.MockClock) -> None:
    server = await udp_server(nursery, lambda req, addr: [message(0x0101, req[8:20], attribute(0x0020, b"\0\x09"))])
    start = trio.current_time()
    with pytest.raises(StunError, match=r"127\.0\.0\.1:\d+: STUN address attribute cut short"):
        await stun_udp(server.address, timeout=2.0)
    assert trio.current_time() == start


@pytest.mark.trio
async def test_udp_error_response(nursery: trio.Nursery) -> None:
    server = await udp_server(nursery, lambda req, addr: [
        message(0x0111, req[8:20], attribute(0x0009, b"\0\0\x05\x00Server Error"))])
    with pytest.raises(StunError, match="answered error 500 Server Error"):
        await stun_udp(server.address)


@pytest.mark.trio
async def test_an_unresolvable_name_is_a_stun_error() -> None:
    with pytest.raises(StunError, match="cannot resolve STUN server"):
        await stun_udp(("no such host.invalid", 3478), timeout=2.0)


# ---- over TCP


HANG_UP = b""


class TcpServer:
    """A STUN server on TCP: ``reply`` gives what to send for a request, as a list of pieces
    (HANG_UP: close the connection), then waits for the client to close."""

    def __init__(self, reply: Callable[[bytes, tuple[str, int]], list[bytes]] = mirror) -> None:
        self.reply = reply
        self.peers: list[tuple[str, int]] = []
        self.address: tuple[str, int] = ("", 0)

    async def start(self, nursery: trio.Nursery) -> TcpServer:
        (listener,) = await nursery.start(partial(trio.serve_tcp, self.handle, 0, host="127.0.0.1"))
        self.address = listener.socket.getsockname()[:2]
        return self

    async def handle(self, stream: trio.SocketStream) -> None:
        peer = stream.socket.getpeername()[:2]
        self.peers.append(peer)
        request = b""
        while len(request) < 20:
            chunk = await stream.receive_some(20 - len(request))
            if not chunk:
                return
            request += chunk
        check_request(request)
        try:
            for piece in self.reply(request, peer):
                if piece == HANG_UP:
                    await stream.aclose()
                    return
                await stream.send_all(piece)
            await stream.receive_some(1)  # until the client hangs up
        except trio.BrokenResourceError:
            pass


@pytest.mark.trio
async def test_tcp_binding_from_a_chosen_port_that_can_then_listen_and_connect_again(nursery: trio.Nursery) -> None:
    server = await TcpServer().start(nursery)
    got = await stun_tcp(server.address, local=("127.0.0.1", 0))
    port = got.local_port
    assert (got.host, got.port, got.transport) == ("127.0.0.1", port, "tcp")
    assert server.peers == [("127.0.0.1", port)]
    # The port is free for a listener with the same options (what TCP hole punching needs) ...
    listener = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    with listener:
        await listener.bind(("127.0.0.1", port))
        listener.listen()
        # ... and for another connection from it, while the listener holds it.
        again = await stun_tcp(server.address, local=("127.0.0.1", port))
    assert again.local_port == port
    assert server.peers == [("127.0.0.1", port)] * 2


@pytest.mark.trio
async def test_tcp_framing_reads_a_message_in_pieces_and_skips_other_transactions(nursery: trio.Nursery) -> None:
    def reply(req: bytes, addr: tuple[str, int]) -> list[bytes]:
        other = success(bytes(12), "6.6.6.6", 666)
        mine = success(req[8:20], "11.0.0.3", 3333)
        return [other[:7], other[7:] + mine[:1], *[bytes([b]) for b in mine[1:]]]

    server = await TcpServer(reply).start(nursery)
    got = await stun_tcp(server.address)
    assert (got.host, got.port) == ("11.0.0.3", 3333)


@pytest.mark.parametrize("reply, words", [
    (lambda req, addr: [success(req[8:20], "1.2.3.4", 5)[:30], HANG_UP], "closed the TCP connection after 10 of"),
    (lambda req, addr: [b"HTTP/1.1 400 Bad Request\r\n\r\n"], "not a STUN message on the TCP stream"),
    (lambda req, addr: [struct.pack(">HH", 0x0101, 4000) + MAGIC + req[8:20]], "over the 2048-byte cap"),
    (lambda req, addr: [message(0x0111, req[8:20], attribute(0x0009, b"\0\0\x04\x00Bad Request"))],
     "error 400 Bad Request"),
])
@pytest.mark.trio
async def test_tcp_hostile_answers(nursery: trio.Nursery, reply: Reply, words: str) -> None:
    server = await TcpServer(reply).start(nursery)
    with pytest.raises(StunError, match=words):
        await stun_tcp(server.address)


@pytest.mark.trio
async def test_tcp_silence_is_a_timeout(nursery: trio.Nursery, clock: trio.testing.MockClock) -> None:
    server = await TcpServer(lambda req, addr: []).start(nursery)
    with pytest.raises(StunError, match=r"no answer from STUN server 127\.0\.0\.1:\d+ \(TCP\) in 3 s"):
        await stun_tcp(server.address, timeout=3.0)


@pytest.mark.trio
async def test_tcp_refused() -> None:
    with trio.socket.socket() as probe:  # a port with nobody listening
        await probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StunError, match="cannot connect to STUN server 127.0.0.1:.*refused"):
        await stun_tcp(("127.0.0.1", port))


# ---- several servers, and what they tell about the NAT


@pytest.mark.trio
async def test_public_addresses_over_udp_ask_every_server_from_one_port(nursery: trio.Nursery,
                                                                        clock: trio.testing.MockClock) -> None:
    a = await udp_server(nursery, lambda req, addr: [success(req[8:20], "11.0.0.2", 7000)])
    b = await udp_server(nursery, lambda req, addr: [success(req[8:20], "11.0.0.2", 7000)])
    silent = await udp_server(nursery, lambda req, addr: [])
    lines: list[str] = []
    start = trio.current_time()
    got = await public_addresses([a.address, silent.address, b.address], timeout=1.0, log=lines.append)
    assert trio.current_time() - start == pytest.approx(1.0)  # in parallel: one timeout, not three
    assert [m.server for m in got] == [f"127.0.0.1:{s.address[1]}" for s in (a, b)]
    assert a.sources[0] == b.sources[0] == silent.sources[0]
    assert {m.local_port for m in got} == {a.sources[0][1]}
    assert lines == [f"no answer from STUN server 127.0.0.1:{silent.address[1]} (UDP) in 1 s"]
    assert nat_behaviour(got) == INDEPENDENT


@pytest.mark.trio
async def test_a_symmetric_nat_is_told_apart(nursery: trio.Nursery) -> None:
    def seen_from(port: int) -> Reply:
        return lambda req, addr: [success(req[8:20], "11.0.0.2", port)]

    # A router that gives each destination a new port.
    servers = [await udp_server(nursery, seen_from(7000)), await udp_server(nursery, seen_from(7001))]
    got = await public_addresses([s.address for s in servers], timeout=1.0)
    assert len(got) == 2 and nat_behaviour(got) == SYMMETRIC


@pytest.mark.trio
async def test_public_addresses_over_tcp_share_one_local_port(nursery: trio.Nursery) -> None:
    a, b = await TcpServer().start(nursery), await TcpServer().start(nursery)
    got = await public_addresses([a.address, b.address], tcp_local=("127.0.0.1", 0), timeout=3.0)
    assert len(got) == 2 and got[0].local_port == got[1].local_port
    assert [m.server_address for m in got] == [f"127.0.0.1:{s.address[1]}" for s in (a, b)]
    assert a.peers == b.peers == [("127.0.0.1", got[0].local_port)]
    assert {m.transport for m in got} == {"tcp"}
    assert nat_behaviour(got) == INDEPENDENT


def test_nat_behaviour_compares_only_like_with_like() -> None:
    def m(port: int, server: str, local: int = 1, transport: str = "udp", host: str = "11.0.0.2") -> Mapped:
        return Mapped(host, port, server, local, transport)

    assert nat_behaviour([]) == UNKNOWN
    assert nat_behaviour([m(5, "a")]) == UNKNOWN
    assert nat_behaviour([m(5, "a"), m(6, "a")]) == UNKNOWN  # one server, asked twice
    assert nat_behaviour([m(5, "a"), m(6, "b", local=2)]) == UNKNOWN  # two local ports
    assert nat_behaviour([m(5, "a"), m(6, "b", transport="tcp")]) == UNKNOWN
    assert nat_behaviour([m(5, "a"), m(5, "b", host="11.0.0.3")]) == SYMMETRIC  # another address too
    two_names = [Mapped("11.0.0.2", 5, "a", 1, "udp", "1.1.1.1:1"), Mapped("11.0.0.2", 5, "b", 1, "udp", "1.1.1.1:1")]
    assert nat_behaviour(two_names) == UNKNOWN  # one server under two names
    assert nat_behaviour([m(5, "a"), m(5, "b"), m(9, "a", local=2), m(9, "b", local=2)]) == INDEPENDENT
    assert nat_behaviour([m(5, "a"), m(5, "b"), m(9, "a", local=2), m(8, "b", local=2)]) == SYMMETRIC


def test_default_servers_are_two_operators() -> None:
    assert len({host.split(".", 1)[1] for host, _ in DEFAULT_SERVERS}) >= 2
    assert all(0 < port < 65536 for _, port in DEFAULT_SERVERS)
