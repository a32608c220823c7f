"""The transit relay client (basilica_p2p/net/relay.py) against a real Magic Wormhole transit
relay (tests/support/relay_server.py), and against fake relays and fake peers that misbehave."""

from __future__ import annotations

import os
import re
import socket
from collections.abc import Awaitable, Callable, Iterator
from functools import partial
from pathlib import Path

import pytest
import trio
import trio.testing

from basilica_p2p.net.relay import (
    BadHandshake,
    QuickAckStream,
    RelayClosed,
    RelayError,
    RelayRefused,
    RelayTimeout,
    RelayUnreachable,
    handshake_lines,
    meet,
    relay_request,
    relay_token,
)
from support.net_harness import tcp_pair
from support.relay_server import TransitRelay, transit_relay

pytestmark = pytest.mark.trio

KEY = bytes(range(32))
# Made by magic-wormhole 0.24.0 itself (wormhole.transit.build_sided_relay_handshake,
# build_sender_handshake, build_receiver_handshake) for KEY and side "0123456789abcdef".
WORMHOLE_REQUEST = (b"please relay 2bb809ffd25339e827f73497f80f9d4419708192bc8282ab3d28e530fc7599e7"
                    b" for side 0123456789abcdef\n")
WORMHOLE_SENDER = b"transit sender df67f98b57b6009f674ac8ea789aa2a494e4c52582da55d38857d56518b81bba ready\n\n"
WORMHOLE_RECEIVER = b"transit receiver c83f7ef38f8b2e0a2495966db3c137772e81c475f54f45483fb1e5dc500db6dc ready\n\n"
REQUEST = re.compile(rb"please relay ([0-9a-f]{64}) for side ([0-9a-f]{16})\n")


@pytest.fixture(scope="module")
def relay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TransitRelay]:
    with transit_relay(tmp_path_factory.mktemp("relay")) as running:
        yield running


def fresh_key() -> bytes:
    return os.urandom(32)


def pattern(n: int, seed: int) -> bytes:
    """n bytes whose order is checkable: a shifted or dropped chunk shows."""
    return bytes((i * 7 + seed + i // 251) % 256 for i in range(n))


async def receive_exactly(stream: trio.abc.ReceiveStream, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = await stream.receive_some(n - len(data))
        assert chunk, f"the stream ended after {len(data)} of {n} bytes"
        data += chunk
    return bytes(data)


async def meet_both(address: tuple[str, int], sender_key: bytes, receiver_key: bytes,
                    timeout: float) -> dict[bool, trio.SocketStream | RelayError]:
    """Run both sides at once; each one's stream, or the RelayError it raised."""
    results: dict[bool, trio.SocketStream | RelayError] = {}

    async def side(key: bytes, sender: bool) -> None:
        try:
            results[sender] = await meet(address, key, sender=sender, timeout=timeout)
        except RelayError as e:
            results[sender] = e

    async with trio.open_nursery() as nursery:
        nursery.start_soon(side, sender_key, True)
        nursery.start_soon(side, receiver_key, False)
    return results


# --- derivations ---------------------------------------------------------------------------

async def test_derivations_match_magic_wormhole() -> None:
    assert relay_request(KEY, "0123456789abcdef") == WORMHOLE_REQUEST
    assert relay_token(KEY) == WORMHOLE_REQUEST.split()[2].decode()
    assert handshake_lines(KEY) == (WORMHOLE_SENDER, WORMHOLE_RECEIVER)
    assert relay_token(bytes(32)) != relay_token(KEY)


async def test_a_side_is_sixteen_hex_digits() -> None:
    with pytest.raises(ValueError):
        relay_request(KEY, "0123")
    with pytest.raises(ValueError):
        relay_request(KEY, "0123456789abcdeg")


# --- against the real relay ----------------------------------------------------------------

async def test_two_sides_meet_and_bytes_flow_both_ways_in_order(relay: TransitRelay) -> None:
    key = fresh_key()
    size = 300_000
    with trio.fail_after(10):
        streams = await meet_both(relay.address, key, key, timeout=5)
        a, b = streams[True], streams[False]
        assert isinstance(a, trio.SocketStream) and isinstance(b, trio.SocketStream)
        got: dict[str, bytes] = {}

        async def pump(name: str, out: trio.SocketStream, data: bytes) -> None:
            # Both directions at once, in chunks of odd sizes, as a game's messages would go.
            async with trio.open_nursery() as nursery:
                async def send() -> None:
                    for i in range(0, len(data), 7919):
                        await out.send_all(data[i:i + 7919])
                nursery.start_soon(send)
                got[name] = await receive_exactly(out, size)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(pump, "at sender", a, pattern(size, 1))
            nursery.start_soon(pump, "at receiver", b, pattern(size, 2))
        assert got["at sender"] == pattern(size, 2)
        assert got["at receiver"] == pattern(size, 1)
        await a.aclose()
        # The relay has no half-close: one side leaving ends the other's stream too.
        assert await b.receive_some() == b""
        await b.aclose()


async def test_different_keys_do_not_pair(relay: TransitRelay) -> None:
    with trio.fail_after(5):
        results = await meet_both(relay.address, fresh_key(), fresh_key(), timeout=1)
    for sender, result in results.items():
        assert isinstance(result, RelayTimeout), (sender, result)
        assert str(result) == f"no peer with this key came to the relay {relay.address[0]}:{relay.address[1]} within 1 s"


async def test_two_senders_fail_the_handshake(relay: TransitRelay) -> None:
    key = fresh_key()
    results: list[BaseException] = []

    async def side() -> None:
        with pytest.raises(BadHandshake) as caught:
            await meet(relay.address, key, sender=True, timeout=5)
        results.append(caught.value)

    with trio.fail_after(8):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(side)
            nursery.start_soon(side)
    assert len(results) == 2
    assert all(str(e).startswith("the peer sent b'transit sender ") for e in results), results


async def test_relay_killed_mid_stream_ends_both_streams(tmp_path: Path) -> None:
    with transit_relay(tmp_path) as own:
        with trio.fail_after(10):
            streams = await meet_both(own.address, KEY, KEY, timeout=5)
        ends: dict[str, str] = {}
        flowing = {name: trio.Event() for name in ("sender", "receiver")}

        async def side(name: str, stream: trio.SocketStream) -> None:
            async def write() -> None:
                try:
                    while True:
                        await stream.send_all(b"x" * 4096)
                except trio.BrokenResourceError:
                    ends[name + " writing"] = "broken"

            async def read() -> None:
                total = 0
                try:
                    while chunk := await stream.receive_some():
                        total += len(chunk)
                        if total >= 65536:
                            flowing[name].set()
                    ends[name + " reading"] = "end of stream"
                except trio.BrokenResourceError:
                    ends[name + " reading"] = "broken"

            async with trio.open_nursery() as nursery:
                nursery.start_soon(write)
                nursery.start_soon(read)
            await stream.aclose()

        async with trio.open_nursery() as nursery:
            for sender, stream in streams.items():
                assert isinstance(stream, trio.SocketStream)
                nursery.start_soon(side, "sender" if sender else "receiver", stream)
            with trio.fail_after(10):
                for event in flowing.values():
                    await event.wait()
            await trio.to_thread.run_sync(own.kill)
            # Every reader and writer on both sides must notice within a bound, never hang.
            nursery.cancel_scope.deadline = trio.current_time() + 5
        assert not nursery.cancel_scope.cancelled_caught, f"only {sorted(ends)} saw the relay go"
        assert sorted(ends) == ["receiver reading", "receiver writing", "sender reading", "sender writing"]


# --- no relay, fake relays -----------------------------------------------------------------

async def test_nothing_listening_is_unreachable_quickly() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connections are refused
        with trio.fail_after(2):
            with pytest.raises(RelayUnreachable, match=rf"^the relay 127\.0\.0\.1:{port} did not answer: "):
                await meet(("127.0.0.1", port), KEY, sender=True, timeout=10)


async def serve(handler: Callable[[trio.SocketStream], Awaitable[None]],
                nursery: trio.Nursery) -> tuple[str, int]:
    """A fake relay on a free port running ``handler`` for each connection."""
    listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
    return "127.0.0.1", listeners[0].socket.getsockname()[1]


def fake_relay(answer: bytes, *, then_hang_up: bool = False,
               requests: list[bytes] | None = None) -> Callable[[trio.SocketStream], Awaitable[None]]:
    async def handler(stream: trio.SocketStream) -> None:
        request = b""
        while not request.endswith(b"\n") and len(request) < 200:
            chunk = await stream.receive_some(200)
            if not chunk:
                return
            request += chunk
        if requests is not None:
            requests.append(request)
        try:
            await stream.send_all(answer)
            if not then_hang_up:
                await trio.sleep_forever()
        except trio.BrokenResourceError:
            pass  # the client gave up, as it should
        await stream.aclose()
    return handler


GARBAGE = r"^the relay 127\.0\.0\.1:\d+ sent b'.{1,200} where b'ok\\n' was expected$"


@pytest.mark.parametrize(("answer", "hang_up", "error", "message"), [
    (b"HTTP/1.1 400 Bad Request\r\n\r\n", False, BadHandshake, GARBAGE),
    (b"OK\n", False, BadHandshake, GARBAGE),
    (b"ok\r\n", False, BadHandshake, GARBAGE),
    (b"okay\n", False, BadHandshake, GARBAGE),
    # a flood: refused at its second byte, never buffered
    (b"o" + b"\xff" * 1_000_000, False, BadHandshake, GARBAGE),
    # what the real relay says to a request it cannot parse, or to bytes sent before "ok"
    (b"bad handshake\n", True, RelayRefused, r"^the relay 127\.0\.0\.1:\d+ refused to relay us: bad handshake$"),
    (b"impatient\n", True, RelayRefused, r"^the relay 127\.0\.0\.1:\d+ refused to relay us: impatient$"),
    (b"o", True, RelayClosed, r"^the relay 127\.0\.0\.1:\d+ hung up after b'o', before b'ok\\n'$"),
    (b"", False, RelayTimeout, r"^no peer with this key came to the relay 127\.0\.0\.1:\d+ within 0\.5 s$"),
], ids=["http", "OK", "crlf", "okay", "flood", "bad handshake", "impatient", "hang-up", "silent"])
async def test_a_misbehaving_relay(answer: bytes, hang_up: bool, error: type[RelayError], message: str) -> None:
    requests: list[bytes] = []
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            address = await serve(fake_relay(answer, then_hang_up=hang_up, requests=requests), nursery)
            with pytest.raises(error, match=message):
                # Only the silent relay should run out of time; the others answer at once.
                await meet(address, KEY, sender=False, timeout=0.5 if error is RelayTimeout else 4)
            nursery.cancel_scope.cancel()
    match = REQUEST.fullmatch(requests[0])
    assert match and match[1].decode() == relay_token(KEY)


async def test_nothing_past_go_is_consumed() -> None:
    """The relay's "ok", the peer's line, "go" and the first application bytes in one segment:
    meet takes the handshake and leaves the application bytes to the caller."""
    sender_line, _ = handshake_lines(KEY)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            address = await serve(fake_relay(b"ok\n" + sender_line + b"go\nfirst move"), nursery)
            stream = await meet(address, KEY, sender=False, timeout=3)
            assert await receive_exactly(stream, 10) == b"first move"
            await stream.aclose()
            nursery.cancel_scope.cancel()


# --- fake peers through the real relay -----------------------------------------------------

async def fake_peer(address: tuple[str, int], key: bytes, says: bytes) -> None:
    """A peer that asks the relay properly, then says ``says`` instead of the handshake, and
    stays until cancelled."""
    async with await trio.open_tcp_stream(*address) as stream:
        await stream.send_all(relay_request(key, os.urandom(8).hex()))
        assert await receive_exactly(stream, 3) == b"ok\n"
        try:
            await stream.send_all(says)
        except trio.BrokenResourceError:
            pass  # refused halfway through a flood, as it should be
        await trio.sleep_forever()


WRONG_LINE = r"^the peer sent b'.{1,200} where b'transit .{1,40}'\.\.\. was expected$"


@pytest.mark.parametrize(("sender", "says", "error", "message"), [
    # a receiver's line, but for another key
    (True, lambda key: handshake_lines(bytes(32))[1], BadHandshake, WRONG_LINE),
    (True, lambda key: b"transit receiver ready\n\n", BadHandshake, WRONG_LINE),
    (False, lambda key: handshake_lines(bytes(32))[0], BadHandshake, WRONG_LINE),
    # a flood: refused within its first line's worth of bytes, never buffered
    (False, lambda key: b"\x00" * 1_000_000, BadHandshake, WRONG_LINE),
    # a wormhole sender that chose another connection
    (False, lambda key: handshake_lines(key)[0] + b"nevermind\n", BadHandshake,
     r"^the peer abandoned this connection \(nevermind\)$"),
    (True, lambda key: b"", RelayTimeout,
     r"^the peer did not finish the handshake through 127\.0\.0\.1:\d+ within 2 s$"),
], ids=["other key", "no hex", "two receivers", "flood", "nevermind", "silent"])
async def test_a_misbehaving_peer(relay: TransitRelay, sender: bool, says: Callable[[bytes], bytes],
                                  error: type[RelayError], message: str) -> None:
    key = fresh_key()
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(fake_peer, relay.address, key, says(key))
            with pytest.raises(error, match=message):
                await meet(relay.address, key, sender=sender, timeout=2)
            nursery.cancel_scope.cancel()


async def test_a_peer_that_hangs_up_mid_handshake(relay: TransitRelay) -> None:
    key = fresh_key()
    _, receiver_line = handshake_lines(key)

    async def leaves() -> None:
        async with await trio.open_tcp_stream(*relay.address) as stream:
            await stream.send_all(relay_request(key, os.urandom(8).hex()))
            assert await receive_exactly(stream, 3) == b"ok\n"
            await stream.send_all(receiver_line[:20])
        # The relay closes our partner's connection when ours goes: no half-close.

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(leaves)
            with pytest.raises(RelayClosed, match=r"^the peer hung up after b'transit receiver \w{3}', before b'transit receiver "):
                await meet(relay.address, key, sender=True, timeout=3)


async def test_a_relayed_stream_that_acknowledges_at_once_passes_bytes_and_ends_unchanged() -> None:
    """QuickAckStream (what a game through the relay runs on) is the stream it wraps, plus an
    immediate acknowledgement of each read."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        accepted: list[trio.SocketStream] = []

        async def accept() -> None:
            accepted.append(await listeners[0].accept())

        nursery.start_soon(accept)
        ours = QuickAckStream(await trio.open_tcp_stream("127.0.0.1", port))
    theirs = accepted[0]
    await theirs.send_all(b"first move")
    assert await ours.receive_some() == b"first move"
    await ours.send_all(b"ack")
    assert await theirs.receive_some() == b"ack"
    assert ours.socket is ours.stream.socket
    await ours.send_eof()
    assert await theirs.receive_some() == b""
    await ours.aclose()
    await theirs.aclose()
    for listener in listeners:
        await listener.aclose()


async def quick_ack_pair() -> tuple[QuickAckStream, QuickAckStream]:
    """Both ends of a loopback TCP connection, each wrapped, so every read sets the flag for real."""
    a, b = await tcp_pair()
    return QuickAckStream(a), QuickAckStream(b)


async def clogged_quick_ack_pair() -> tuple[QuickAckStream, QuickAckStream]:
    """As trio's own tests clog a SocketStream: both ways written into until the kernel's buffers
    are full, so that a send blocks until the other end reads."""
    pair = await quick_ack_pair()
    for stream in pair:
        async with trio.open_nursery() as nursery:

            async def fill(stream: QuickAckStream = stream) -> None:
                while True:
                    await stream.send_all(b"x" * 10000)

            nursery.start_soon(fill)
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
    return pair


async def test_a_relayed_stream_that_acknowledges_at_once_is_a_well_behaved_trio_stream() -> None:
    """trio's own conformance checks for a half-closeable stream: closing, EOF, checkpoints, a
    second concurrent send or receive refused, and waits that do not block on a clogged stream."""
    await trio.testing.check_half_closeable_stream(quick_ack_pair, clogged_quick_ack_pair)
