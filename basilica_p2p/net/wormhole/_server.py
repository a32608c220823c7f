"""Our connection to a mailbox server: JSON commands out, replies and mailbox messages in.

The server protocol (magic-wormhole's docs/server-protocol.rst): the server opens with a
``welcome``; we ``bind`` (appid, side), then ``allocate``/``claim`` a nameplate, ``open`` its
mailbox, ``add`` messages, and at the end ``release`` and ``close``. It acks every command
(ignored here) and copies every ``add`` to both sides as a ``message``.

Everything that arrives is checked: a reply nobody asked for, a ``message`` before ``open``,
a second welcome, a malformed field or a flood is a `ProtocolViolation`; an ``error`` is a
`ServerRefused`. Unknown message types are ignored, as the protocol asks of clients.
"""

from __future__ import annotations

import binascii
import json
import os
import re
from collections import deque
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

import trio

from ._json import NotJson, parse_json
from ._websocket import WebSocket, connect
from ...printable import printable
from .errors import ConnectionLost, Crowded, ProtocolViolation, ServerRefused, Timeout

_REPLIES = frozenset({"allocated", "claimed", "released", "closed", "nameplates"})
_TOKEN = re.compile(r"[\x21-\x7e]{1,64}")  # a side, phase or mailbox id: short printable ASCII
_NAMEPLATE = re.compile(r"[0-9]{1,40}")
MAX_QUEUED = 64  # mailbox messages held unread; a real exchange has a handful


@dataclass(frozen=True)
class Sided:
    """A mailbox message: who added it, in which phase, and its body (bytes, hex on the wire)."""

    side: str
    phase: str
    body: bytes


class Server:
    """One bound websocket to the mailbox server. Make it with `open_server`."""

    def __init__(self, ws: WebSocket, timeout: float) -> None:
        self.url = ws.url
        self.motd: str | None = None
        self.usable = True  # False once the connection failed: no polite goodbye then
        self._ws = ws
        self._timeout = timeout
        self._welcomed = False
        self._opened = False
        self._asked: set[str] = set()
        self._replies: dict[str, dict[str, Any]] = {}
        self._messages: deque[Sided] = deque()

    async def send(self, kind: str, **fields: Any) -> None:
        """Send a command; its ``id`` (2 random bytes) is only for the server's timing logs."""
        if kind == "open":
            self._opened = True
        await self._guarded(self._ws.send(json.dumps({"type": kind, "id": os.urandom(2).hex(), **fields})))

    async def ask(self, kind: str, reply: str, **fields: Any) -> dict[str, Any]:
        """Send a command and wait for its reply."""
        self.expect(reply)
        await self.send(kind, **fields)
        return await self.reply(reply)

    def expect(self, reply: str) -> None:
        """Note that a command whose ``reply`` we may await later was sent."""
        self._asked.add(reply)

    async def reply(self, kind: str) -> dict[str, Any]:
        """The reply ``kind`` (asked for before), within the server timeout."""
        with trio.move_on_after(self._timeout):
            while kind not in self._replies:
                await self._receive_one()
            return self._replies.pop(kind)
        self.usable = False
        raise Timeout(f"the mailbox server at {self.url} did not send {kind!r} within {self._timeout:g} s")

    async def welcomed(self) -> None:
        """Wait for the server's welcome (the first thing it sends)."""
        with trio.move_on_after(self._timeout):
            while not self._welcomed:
                await self._receive_one()
            return
        self.usable = False
        raise Timeout(f"the mailbox server at {self.url} sent no welcome within {self._timeout:g} s")

    async def message(self) -> Sided:
        """The next mailbox message, ours (echoed) or the peer's; no deadline."""
        while not self._messages:
            await self._receive_one()
        return self._messages.popleft()

    async def ping(self) -> None:
        await self._guarded(self._ws.ping())

    async def aclose(self) -> None:
        await self._ws.aclose()

    async def _receive_one(self) -> None:
        try:
            self._take(_decode(await self._ws.receive(), self.url))
        except (ConnectionLost, ProtocolViolation, Timeout):
            self.usable = False
            raise

    def _take(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if not self._welcomed:
            if kind != "welcome":
                raise self._broke(f"sent {printable(str(kind), 40, one_line=True, dots=True)!r} before its welcome")
            self._welcome(msg)
        elif kind == "welcome":
            raise self._broke("sent a second welcome")
        elif kind == "error":
            error = msg.get("error")
            reason = error if isinstance(error, str) else "an error without words"
            if reason == "crowded":
                raise Crowded(self.url, "crowded: two others are already using this code")
            raise ServerRefused(self.url, reason)
        elif kind == "message":
            if not self._opened:
                raise self._broke("sent a message before the mailbox was opened")
            if len(self._messages) >= MAX_QUEUED:
                raise self._broke(f"sent more than {MAX_QUEUED} messages unread")
            self._messages.append(self._sided(msg))
        elif kind in _REPLIES:
            if kind not in self._asked:
                raise self._broke(f"sent {kind!r} unasked")
            self._asked.discard(kind)
            self._replies[kind] = msg
        # "ack", "pong" and unknown types carry nothing for us

    def _welcome(self, msg: dict[str, Any]) -> None:
        welcome = msg.get("welcome")
        if not isinstance(welcome, dict):
            raise self._broke("sent a welcome that is not a JSON object")
        if "error" in welcome:
            raise ServerRefused(self.url, str(welcome["error"]))
        motd = welcome.get("motd")
        self.motd = printable(motd, 400, one_line=True, dots=True) if isinstance(motd, str) else None
        self._welcomed = True

    def _sided(self, msg: dict[str, Any]) -> Sided:
        side, phase, body = msg.get("side"), msg.get("phase"), msg.get("body")
        if not (isinstance(side, str) and isinstance(phase, str)
                and _TOKEN.fullmatch(side) and _TOKEN.fullmatch(phase)):
            raise self._broke("sent a message without a proper side and phase")
        try:
            data = binascii.unhexlify(body) if isinstance(body, str) else None
        except ValueError:  # binascii.Error is one
            data = None
        if data is None:
            raise self._broke(f"sent a body that is not hex in phase {phase!r}")
        return Sided(side, phase, data)

    def _broke(self, what: str) -> ProtocolViolation:
        return ProtocolViolation(f"the mailbox server at {self.url} {what}")

    async def _guarded(self, sending: Awaitable[None]) -> None:
        """Await ``sending``, noting that the connection is unusable if it fails."""
        try:
            await sending
        except (ConnectionLost, Timeout):
            self.usable = False
            raise


def nameplate_of(reply: dict[str, Any], url: str) -> str:
    """The nameplate in an ``allocated`` reply."""
    nameplate = reply.get("nameplate")
    if not (isinstance(nameplate, str) and _NAMEPLATE.fullmatch(nameplate)):
        raise ProtocolViolation(f"the mailbox server at {url} allocated a nameplate that is not a number")
    return nameplate


def mailbox_of(reply: dict[str, Any], url: str) -> str:
    """The mailbox id in a ``claimed`` reply."""
    mailbox = reply.get("mailbox")
    if not (isinstance(mailbox, str) and _TOKEN.fullmatch(mailbox)):
        raise ProtocolViolation(f"the mailbox server at {url} gave a mailbox id that is not a short printable string")
    return mailbox


async def open_server(url: str, appid: str, side: str, *, timeout: float, max_message: int,
                      client_version: tuple[str, str]) -> Server:
    """A websocket to ``url``, welcomed and bound to ``appid`` as ``side``."""
    ws = await connect(url, timeout=timeout, max_message=max_message)
    server = Server(ws, timeout)
    try:
        await server.send("bind", appid=appid, side=side, client_version=list(client_version))
        await server.welcomed()
    except BaseException:
        await server.aclose()
        raise
    return server


def _decode(raw: bytes, url: str) -> dict[str, Any]:
    msg = parse_json(raw, len(raw))  # its size was bounded as it came (the websocket's max_message)
    if isinstance(msg, NotJson):
        raise ProtocolViolation(f"the mailbox server at {url} sent a message that is not JSON ({msg.why})")
    if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
        raise ProtocolViolation(f"the mailbox server at {url} sent JSON that is not an object with a 'type'")
    return msg

