"""A websocket client (RFC 6455) on a trio TCP stream, its protocol done by wsproto (sans-IO).

Only what the mailbox needs: one connection to ``ws://`` or ``wss://``, whole messages in
and out, pings answered. Failures are the wormhole's typed errors, naming the URL.

Cancellation: a `receive` may be cancelled at any point without losing data (bytes read are
handed to wsproto at once, and a message in progress stays in ``_parts``); every write is
shielded and bounded, so a cancelled task never leaves half a frame on the wire.
"""

from __future__ import annotations

import ssl
from collections import deque
from dataclasses import dataclass
from urllib.parse import urlsplit

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Event,
    Message,
    Ping,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)
from wsproto.utilities import RemoteProtocolError

from ...printable import printable
from .errors import ConnectionLost, MailboxUnreachable, ProtocolViolation, Timeout, WormholeError

RECEIVE_SIZE = 65536
# A message may come in pieces (continuation frames); a server sends each whole, and one
# sending a byte a piece only makes us work: its pieces are bounded like its size.
MAX_PIECES = 1024
SEND_TIMEOUT = 10.0  # a write the server does not take within this means it is gone
CLOSE_TIMEOUT = 2.0  # how long a polite close waits for the server's close frame


@dataclass(frozen=True)
class WsUrl:
    secure: bool
    host: str
    port: int
    target: str  # path and query, as sent in the request line

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.secure else 80
        return host if self.port == default else f"{host}:{self.port}"


def parse_ws_url(url: str) -> WsUrl:
    """``url``'s parts; `MailboxUnreachable` unless it is a ``ws://`` or ``wss://`` URL."""
    try:
        parts = urlsplit(url)
        port = parts.port  # ValueError for a port out of range
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise MailboxUnreachable(printable(url, 100, one_line=True, dots=True), "that is not a ws:// or wss:// URL")
    secure = parts.scheme == "wss"
    port = port or (443 if secure else 80)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return WsUrl(secure, parts.hostname, port, target)


class WebSocket:
    """One open websocket. Use `connect` to make one."""

    def __init__(self, url: str, stream: trio.abc.Stream, ws: WSConnection, max_message: int) -> None:
        self.url = url
        self._stream = stream
        self._ws = ws
        self._max_message = max_message
        self._events: deque[Event] = deque()
        self._parts: list[bytes] = []
        self._size = 0
        self._send_lock = trio.Lock()
        self._broken = False  # after a failure there is no polite close, only a dropped stream

    async def send(self, text: str) -> None:
        """Send ``text`` as one text message (as magic-wormhole's client does)."""
        await self._write(self._frame(TextMessage(data=text)))

    async def ping(self) -> None:
        """A websocket ping: keeps NAT bindings alive while we wait for the peer."""
        await self._write(self._frame(Ping(payload=b"basilica")))

    async def receive(self) -> bytes:
        """The next whole message (a text message as UTF-8); pings are answered on the way."""
        while True:
            while self._events:
                event = self._events.popleft()
                if isinstance(event, Message):
                    data = event.data.encode("utf-8") if isinstance(event, TextMessage) else bytes(event.data)
                    self._size += len(data)
                    if self._size > self._max_message:
                        raise self._broke(f"sent a message over {self._max_message} bytes")
                    self._parts.append(data)
                    if len(self._parts) > MAX_PIECES:
                        raise self._broke(f"sent a message in more than {MAX_PIECES} pieces")
                    if event.message_finished:
                        message = b"".join(self._parts)
                        self._parts.clear()
                        self._size = 0
                        return message
                elif isinstance(event, Ping):
                    await self._write(self._frame(event.response()))
                elif isinstance(event, CloseConnection):
                    await self._closed_by_server(event)
                # a Pong needs nothing
            await self._read()

    async def aclose(self) -> None:
        """Close politely (a close frame, and the server's, briefly awaited), then the stream.
        Safe to call in any state, from a cancelled task too."""
        if self._broken:
            await trio.aclose_forcefully(self._stream)
            return
        with trio.CancelScope(shield=True):
            with trio.move_on_after(CLOSE_TIMEOUT):
                try:
                    if self._ws.state in (ConnectionState.OPEN, ConnectionState.REMOTE_CLOSING):
                        await self._write(self._ws.send(CloseConnection(code=1000)))
                    while self._ws.state is ConnectionState.LOCAL_CLOSING:
                        await self._read()
                        self._events.clear()
                except (ConnectionLost, ProtocolViolation, Timeout):
                    pass  # it is going away either way
        await trio.aclose_forcefully(self._stream)

    def _fail(self, error: WormholeError) -> WormholeError:
        self._broken = True
        return error

    def _broke(self, what: str) -> WormholeError:
        return self._fail(ProtocolViolation(f"the mailbox server at {self.url} {what}"))

    def _frame(self, event: Event) -> bytes:
        # The server's close frame may be read (and the state changed) before its turn comes.
        if self._ws.state is not ConnectionState.OPEN:
            raise self._fail(ConnectionLost(self.url, "it closed the connection"))
        return self._ws.send(event)

    async def _closed_by_server(self, event: CloseConnection) -> None:
        if self._ws.state is ConnectionState.OPEN:
            # wsproto reports frames it cannot parse as a close it made up, state unchanged.
            raise self._broke(f"broke the websocket protocol: {printable(str(event.reason or event.code), 200, one_line=True, dots=True)}")
        if self._ws.state is ConnectionState.REMOTE_CLOSING:
            try:
                await self._write(self._ws.send(event.response()))
            except (ConnectionLost, Timeout):
                pass
        raise self._fail(ConnectionLost(self.url, "the connection broke" if event.code == 1006 else "it closed the connection"))

    async def _read(self) -> None:
        """Read once from the stream and hand the bytes to wsproto (the only checkpoint)."""
        try:
            data = await self._stream.receive_some(RECEIVE_SIZE)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as e:
            raise self._fail(ConnectionLost(self.url, f"the connection broke ({_reason(e)})")) from None
        try:
            self._ws.receive_data(bytes(data) if data else None)  # None: end of stream
            self._events.extend(self._ws.events())
        except RemoteProtocolError as e:
            raise self._broke(f"broke the websocket protocol: {printable(str(e), 200, one_line=True, dots=True)}") from None

    async def _write(self, data: bytes) -> None:
        # Shielded: a cancel mid-write would corrupt the stream; bounded: a server that stops
        # reading cannot hold us.
        async with self._send_lock:
            with trio.CancelScope(shield=True):
                try:
                    with trio.fail_after(SEND_TIMEOUT):
                        await self._stream.send_all(data)
                except trio.TooSlowError:
                    raise self._fail(Timeout(f"the mailbox server at {self.url} took nothing for {SEND_TIMEOUT:g} s")) from None
                except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as e:
                    raise self._fail(ConnectionLost(self.url, f"the connection broke ({_reason(e)})")) from None


async def connect(url: str, *, timeout: float, max_message: int) -> WebSocket:
    """An open websocket to ``url``; `MailboxUnreachable` if none within ``timeout`` seconds."""
    where = parse_ws_url(url)
    stream: trio.abc.Stream | None = None
    try:
        with trio.fail_after(timeout):
            try:
                stream = await trio.open_tcp_stream(where.host, where.port)
                if where.secure:
                    tls = trio.SSLStream(stream, ssl.create_default_context(), server_hostname=where.host)
                    stream = tls
                    await tls.do_handshake()
            except (OSError, trio.BrokenResourceError) as e:
                raise MailboxUnreachable(url, _reason(e)) from None
            ws = WSConnection(ConnectionType.CLIENT)
            socket = WebSocket(url, stream, ws, max_message)
            await socket._write(ws.send(Request(host=where.host_header, target=where.target)))
            while True:
                try:
                    await socket._read()
                except ConnectionLost:
                    raise MailboxUnreachable(url, "it closed the connection before the websocket opened") from None
                while socket._events:
                    event = socket._events.popleft()
                    if isinstance(event, AcceptConnection):
                        return socket
                    if isinstance(event, RejectConnection):
                        raise MailboxUnreachable(url, f"it answered HTTP {event.status_code}, not a websocket")
                    if isinstance(event, CloseConnection):
                        raise MailboxUnreachable(url, "it closed the connection before the websocket opened")
                    if not isinstance(event, RejectData):
                        raise socket._broke(f"sent {type(event).__name__} before the websocket opened")
    except BaseException as e:
        if stream is not None:
            await trio.aclose_forcefully(stream)
        if isinstance(e, trio.TooSlowError):
            raise MailboxUnreachable(url, f"no websocket within {timeout:g} s") from None
        raise


def _reason(error: BaseException) -> str:
    return printable(str(error) or type(error).__name__, 160, one_line=True, dots=True)
