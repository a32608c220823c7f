"""TCP hole punching: both sides connect to each other at once, from the port a STUN server saw.

Behind two home routers neither side can accept a connection the other
opens: each router drops (or resets) a SYN nobody inside asked for.  But a
router that keeps one outside port per inside port (endpoint-independent
mapping, most home routers) lets in packets from an address once a packet
went out to it.  So each side connects, from the very local port whose
outside address a STUN server reported, to the other's outside address,
again and again: once both SYNs have left their routers, the next one
passes, meets a socket in SYN-SENT with the same four addresses, and TCP's
simultaneous open (RFC 9293 §3.5) gives one ordinary stream on both sides.

The local port is shared with the host's listener and with the STUN query,
so every socket here sets SO_REUSEADDR and SO_REUSEPORT before it binds.
"""

from __future__ import annotations

import errno
import socket
import struct
from collections.abc import Sequence

import trio

from .hostport import host_port


def reusable(family: int, port: int, host: str = "") -> trio.socket.SocketType:
    """A TCP socket bound to ``port`` that others may bind too (a listener, a STUN query, a punch)."""
    sock = trio.socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    except OSError:
        sock.close()
        raise
    return sock


async def abort(stream: trio.abc.Stream) -> None:
    """Close a connection with a reset instead of a FIN, leaving no TIME_WAIT behind.

    A side that closes normally keeps the connection's four addresses in TIME_WAIT for a
    minute, and while it does, a punch from the same port to the same address cannot
    connect (EADDRNOTAVAIL).  A punched connection that fails its handshake (a router
    lost track of it mid-way) must leave the way free for the next punch: a reset does.
    Unsent data is dropped, so a connection that still has something to say (an error
    for the other side) is closed normally instead.
    """
    sock = getattr(stream, "socket", None)  # a relayed stream wraps one too
    try:
        if sock is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass  # already closed by the other side: nothing lingers
    await trio.aclose_forcefully(stream)


async def listen(host: str, port: int, backlog: int = socket.SOMAXCONN) -> trio.SocketListener:
    """A listener on ``host:port`` (port 0: any) whose port a STUN query and punches can share.

    The backlog is as long as the system allows: under a flood of strangers a short one fills
    between two accepts, and the joiner's connection is dropped with them (its SYN then waits
    a second or more to be sent again)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = reusable(family, port)
    try:
        await sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return trio.SocketListener(sock)


async def _connect_from(local_port: int, target: tuple[str, int], timeout: float) -> trio.SocketStream | bool:
    """A stream, or whether the attempt was refused at once (a reset) rather than left unanswered.

    Any error of one attempt (a refusal, an unreachable network, a local firewall, a family
    this machine lacks) is that attempt's failure, never the caller's: punching goes on.
    """
    family = socket.AF_INET6 if ":" in target[0] else socket.AF_INET
    sock = None
    try:
        sock = reusable(family, local_port)
        await sock.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", local_port))
        with trio.move_on_after(timeout):
            await sock.connect(target)
            stream, sock = trio.SocketStream(sock), None
            return stream
        return False
    except OSError as e:
        return e.errno in (errno.ECONNREFUSED, errno.ECONNRESET)
    finally:
        if sock is not None:  # not handed over: also when cancelled
            sock.close()


async def punch(local_port: int, targets: Sequence[tuple[str, int]],
                send: trio.MemorySendChannel[tuple[trio.SocketStream, str]],
                interval: float = 0.1, attempt: float = 2.0, reset_interval: float = 0.005) -> None:
    """Connect from ``local_port`` to every target, again and again, until cancelled; each stream
    that connects is sent on ``send`` with its address (the caller's handshake decides if it is the peer).

    An attempt that hangs (a router dropping the SYN, the kernel retransmitting it) is given
    ``attempt`` seconds, during which its SYNs keep the mapping open and meet the other side's,
    then retried after ``interval``.  One refused at once (a router answering a stray SYN with a
    reset, which also closes the mapping our SYN opened) is retried after only
    ``reset_interval``: both SYNs must then leave within one trip of each other, and only
    tight retries make that likely.
    """
    async def one(target: tuple[str, int]) -> None:
        shown = host_port(*target)
        while True:
            got = await _connect_from(local_port, target, attempt)
            if isinstance(got, trio.SocketStream):
                try:
                    await send.send((got, shown))
                except BaseException as e:  # nobody takes it (the other side won, or we were cancelled)
                    await abort(got)
                    if isinstance(e, (trio.BrokenResourceError, trio.ClosedResourceError)):
                        return
                    raise
                await trio.sleep(interval)  # a stream that fails the handshake: try again
            else:
                await trio.sleep(reset_interval if got else interval)

    async with trio.open_nursery() as nursery:
        for target in dict.fromkeys(targets):
            nursery.start_soon(one, target)
