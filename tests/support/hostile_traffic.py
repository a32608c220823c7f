"""Hostile traffic for the invite's gate, on loopback: a path with a round trip, and a flood of strangers.

On one machine a connection's handshake takes microseconds, so a gate that lets a newcomer
displace a joiner's handshake still lets the joiner in: its knock arrives before anything can
displace it.  Across the internet the knock comes a round trip after the host accepted, and a
stranger's flood has all that time.  :func:`latency_proxy` puts that round trip back (each
chunk reaches the other side ``rtt / 2`` seconds after it was read, in order, without slowing
the stream down otherwise), and :func:`flood` opens connections at a steady rate from one
source address or from many (loopback is all of 127.0.0.0/8), each of them one of the
:data:`KINDS`.  Used by tests/test_invite_gate.py and benchmarks/gate_flood.py.
"""

from __future__ import annotations

import itertools
import os
import random
import socket
import struct
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import trio

from basilica_p2p.net.framing import CONTROL
from basilica_p2p.wire import encode

# silent: connects and says nothing; slowloris: a frame's length, then a byte a second;
# garbage: bytes that are no frame; knock: a knock recorded on another connection (a MAC
# over a nonce that is not this connection's), sent as soon as the challenge came.
KINDS = ("silent", "slowloris", "garbage", "knock")
JOINER_SOURCE = "127.0.0.2"  # the address the proxy connects to the host from: the joiner's
FLOOD_SOURCE = "127.0.0.3"  # the one address of a flood "from one address"


def flood_source(rng: random.Random) -> str:
    """An address of a flood "from many addresses": one of 65,536 in 127.1.0.0/16."""
    n = rng.randrange(65536)
    return f"127.1.{n >> 8}.{n & 255}"


@dataclass
class FloodStats:
    opened: int = 0
    failed: Counter[str] = field(default_factory=Counter)  # why a connect failed (the host's backlog full...)
    kinds: Counter[str] = field(default_factory=Counter)


def _frame(body: bytes) -> bytes:
    return struct.pack(">I", len(body) + 1) + bytes([CONTROL]) + body


def recorded_knock(joiner_key: bytes = bytes(32)) -> bytes:
    """A well-formed knock frame whose MAC belongs to no connection of the flood."""
    return _frame(encode({"t": "knock-seat", "key": joiner_key, "mac": os.urandom(32), "via": "lan"}))


async def _stranger(kind: str, port: int, source: str, hold: float, knock: bytes, stats: FloodStats) -> None:
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        await sock.bind((source, 0))
        try:
            await sock.connect(("127.0.0.1", port))
        except OSError as e:
            stats.failed[e.strerror or str(e)] += 1
            return
        stats.opened += 1
        stats.kinds[kind] += 1
        with trio.move_on_after(hold):
            try:
                if kind == "garbage":
                    await sock.send(b"GET / HTTP/1.1\r\nHost: basilica\r\n\r\n")
                elif kind == "knock":
                    await sock.recv(4096)  # the challenge
                    await sock.send(knock)
                elif kind == "slowloris":
                    for byte in _frame(b"\x80" * 40):
                        await sock.send(bytes([byte]))
                        await trio.sleep(1.0)
                while await sock.recv(4096):  # held until the host closes it
                    pass
            except OSError:
                pass  # the host reset it: what the gate does to a stranger
    finally:
        sock.close()


async def flood(port: int, rate: float, many: bool = False, kinds: tuple[str, ...] = KINDS, hold: float = 30.0,
                stats: FloodStats | None = None, seed: int = 0) -> None:
    """Open ``rate`` connections a second to ``port`` until cancelled, the kinds taken in turn, from
    :data:`FLOOD_SOURCE` or (``many``) from random addresses of 127.1.0.0/16; each is held until
    the host closes it or ``hold`` seconds passed."""
    rng = random.Random(seed)
    stats = stats if stats is not None else FloodStats()
    knock = recorded_knock()
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        for n, kind in zip(itertools.count(), itertools.cycle(kinds)):
            # Paced against the clock, not by sleeping a fixed step: a busy loop catches up.
            await trio.sleep_until(start + n / rate)
            source = flood_source(rng) if many else FLOOD_SOURCE
            nursery.start_soon(_stranger, kind, port, source, hold, knock, stats)


async def _delayed(src: trio.SocketStream, dst: trio.SocketStream, delay: float) -> None:
    """Copy ``src`` to ``dst``, each chunk ``delay`` seconds after it was read (a one-way latency)."""
    send, receive = trio.open_memory_channel[tuple[float, bytes]](float("inf"))

    async def reader() -> None:
        async with send:
            while True:
                try:
                    data = await src.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                try:
                    await send.send((trio.current_time() + delay, data))
                except trio.BrokenResourceError:
                    return  # the other side is gone: the writer stopped
                if not data:
                    return

    async def writer() -> None:
        async with receive:
            async for due, data in receive:
                await trio.sleep_until(due)
                if not data:
                    break
                try:
                    await dst.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
        await trio.aclose_forcefully(dst)  # a reset or an end reaches the other side, late as the rest

    async with trio.open_nursery() as nursery:
        nursery.start_soon(reader)
        nursery.start_soon(writer)


async def _proxy_one(client: trio.SocketStream, port: int, rtt: float, source: str) -> None:
    await trio.sleep(rtt / 2)  # the SYN's way to the host
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        await sock.bind((source, 0))
        await sock.connect(("127.0.0.1", port))
    except OSError:
        sock.close()
        await trio.aclose_forcefully(client)
        return
    server = trio.SocketStream(sock)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_delayed, client, server, rtt / 2)
        nursery.start_soon(_delayed, server, client, rtt / 2)


async def latency_proxy(port: int, rtt: float, source: str = JOINER_SOURCE,
                        task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Listen on a free loopback port and relay every connection to ``port`` with a round trip of
    ``rtt`` seconds, connecting from ``source``; the port listened on goes to ``task_status``."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    async with trio.open_nursery() as nursery:
        async with listeners[0]:
            while True:
                client = await listeners[0].accept()
                nursery.start_soon(_proxy_one, client, port, rtt, source)
