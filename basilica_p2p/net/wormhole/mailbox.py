"""Two peers swap one small message each through a magic-wormhole mailbox server, given a
short code such as ``7-crossover-clockwork``; SPAKE2 on the code gives them a shared key.

One side calls `create` (the server allocates a nameplate, we pick the words) and shows
``wormhole.code``; the other types it into `join`. Both then call `exchange` and `close`::

    wormhole = await create(MAILBOX, APPID)
    print(wormhole.code)
    try:
        theirs = await wormhole.exchange(ours)
    finally:
        await wormhole.close()

What goes over the mailbox, as magic-wormhole's client does it (docs/client-protocol.rst):
phase ``pake`` (the SPAKE2 message, in the clear), phase ``version`` (sealed JSON
``{"app_versions": {}}``), then phases ``0``, ``1``... (sealed application messages, one
per `exchange`). The first of the peer's sealed messages that fails to open means the codes
differ: `WrongCode`. See docs/wormhole.md.
"""

from __future__ import annotations

import json
import math
import os
import re
from types import TracebackType

import trio

from ... import __version__ as _basilica_version
from ._code import MAX_WORDS, Code, make_code, parse_code
from ._json import parse_json
from ._keys import VERIFIER_PURPOSE, Pake, derive_key, seal, text_bytes, unseal
from ._server import Server, Sided, mailbox_of, nameplate_of, open_server
from .errors import ProtocolViolation, Timeout, WormholeError, WrongCode

PUBLIC_MAILBOX = "ws://relay.magic-wormhole.io:4000/v1"
DEFAULT_TIMEOUT = 15.0  # for each reply of the mailbox server (not for the peer)
MAX_PAYLOAD = 64 * 1024  # one exchange: a mailbox is for introductions, not bulk data
# A server message carries the payload in hex, sealed (40 bytes more), in JSON.
_MAX_SERVER_MESSAGE = 2 * (MAX_PAYLOAD + 40) + 4096
PING_INTERVAL = 30.0  # websocket pings while waiting for the peer, for NAT bindings
CLOSE_TIMEOUT = 3.0  # how long `close` spends on release and close before dropping the socket
MAX_EARLY = 16  # peer messages held before their pake, or ahead of the phase awaited
_CLIENT_VERSION = ("basilica-p2p", _basilica_version)
_OUR_VERSIONS = json.dumps({"app_versions": {}}).encode("utf-8")
_NUMERIC = re.compile(r"[0-9]+")


class Wormhole:
    """An open mailbox with our SPAKE2 message in it. Make one with `create` or `join`."""

    def __init__(self, server: Server, code: Code, appid: str, side: str) -> None:
        self.code = str(code)
        self.motd = server.motd  # the server's message of the day, to show, or None
        self._server = server
        self._nameplate = code.nameplate
        self._side = side
        self._pake = Pake(code.password, appid)
        self._key: bytes | None = None
        self._peer: str | None = None
        self._early: list[Sided] = []
        self._received: dict[str, bytes] = {}  # numeric phase -> plaintext, not yet returned
        self._confirmed = False  # a sealed message of the peer's opened: same code
        self._next_phase = 0
        self._mood: str | None = None  # set by a failure: what `close` tells the server
        self._released = False
        self._closed = False
        self._busy = False

    @property
    def verifier(self) -> bytes:
        """magic-wormhole's verifier (``derive_key("wormhole:verifier")``): equal on both
        sides exactly when they share the key, for people who compare it by eye."""
        return self.derive_key(VERIFIER_PURPOSE)

    def derive_key(self, purpose: bytes | str, length: int = 32) -> bytes:
        """A key for ``purpose`` from the shared key, as magic-wormhole's ``derive_key`` (a str
        purpose is NFC UTF-8). Only once a message of the peer's has opened with the key, so
        never after a `WrongCode`."""
        if self._key is None or not self._confirmed:
            raise RuntimeError("no confirmed key: derive_key needs a successful exchange first")
        return derive_key(self._key, text_bytes(purpose) if isinstance(purpose, str) else purpose, length)

    async def exchange(self, payload: bytes, *, timeout: float | None = None) -> bytes:
        """Send ``payload`` sealed with the shared key and return the peer's message of the
        same turn (the n-th call sends and awaits phase n-1). `WrongCode` if the peer's first
        sealed message does not open; `Timeout` if the peer is not heard within ``timeout``.
        One at a time; after a failure or a cancellation only `close` is left."""
        if self._closed or self._mood is not None:
            raise RuntimeError("exchange on a wormhole that failed or was closed")
        if self._busy:
            raise RuntimeError("exchange while another exchange is under way")
        if len(payload) > MAX_PAYLOAD:
            raise ValueError(f"a wormhole message holds at most {MAX_PAYLOAD} bytes, not {len(payload)}")
        phase = str(self._next_phase)
        self._next_phase += 1
        self._busy = True
        try:
            with trio.fail_after(math.inf if timeout is None else timeout):
                while self._key is None:
                    await self._take(await self._next_message())
                await self._add_sealed(phase, payload)
                while phase not in self._received:
                    await self._take(await self._next_message())
                return self._received.pop(phase)
        except trio.TooSlowError:
            self._mood = "lonely" if not self._confirmed else "errory"
            what = "nobody used the code" if self._key is None else "the other side sent nothing"
            raise Timeout(f"{what} within {timeout:g} s") from None
        except WrongCode:
            self._mood = "scary"
            raise
        except WormholeError:
            self._mood = "errory"
            raise
        except BaseException:
            # Cancelled from outside: the turns of the two sides may no longer match.
            self._mood = "lonely" if not self._confirmed else "errory"
            raise
        finally:
            self._busy = False

    async def close(self, mood: str | None = None) -> None:
        """Release the nameplate, close the mailbox with ``mood`` (by default what happened:
        happy, lonely, scary or errory) and the websocket. Never raises a `WormholeError`;
        takes at most a few seconds, even in a cancelled task."""
        if self._closed:
            return
        self._closed = True
        mood = mood or self._mood or ("happy" if self._confirmed else "lonely")
        try:
            with trio.CancelScope(shield=True), trio.move_on_after(CLOSE_TIMEOUT):
                if self._server.usable:
                    await self._release()
                    await self._server.ask("close", "closed", mood=mood)
                    await self._server.reply("released")
        except WormholeError:
            pass  # the server forgets idle nameplates and mailboxes by itself
        finally:
            await self._server.aclose()

    async def __aenter__(self) -> Wormhole:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def _next_message(self) -> Sided:
        while True:
            with trio.move_on_after(PING_INTERVAL):
                return await self._server.message()
            await self._server.ping()

    async def _take(self, message: Sided) -> None:
        """Fold one mailbox message into what we know."""
        if message.side == self._side:
            return  # the server echoes ours back
        if self._peer is None and message.phase != "pake":
            if len(self._early) >= MAX_EARLY:
                raise ProtocolViolation(f"more than {MAX_EARLY} messages came before the peer's pake")
            self._early.append(message)  # the server may deliver out of order
            return
        if self._peer is None:
            self._peer = message.side
            self._key = self._pake.finish(message.body)
            await self._add_sealed("version", _OUR_VERSIONS)
            # The peer has found the mailbox: the nameplate (the short number) can go back.
            await self._release()
            early, self._early = self._early, []
            for held in early:
                self._open(held)
            return
        self._open(message)

    def _open(self, message: Sided) -> None:
        assert self._key is not None and self._peer is not None
        if message.side != self._peer:
            raise ProtocolViolation("a third side wrote into the mailbox")
        if message.phase != "version" and not _NUMERIC.fullmatch(message.phase):
            return  # a pake again, or a phase we do not know: ignored, as the protocol asks
        plaintext = unseal(self._key, self._peer, message.phase, message.body)
        if plaintext is None:
            if self._confirmed:
                raise ProtocolViolation(f"the peer's message in phase {message.phase} did not decrypt, unlike the earlier")
            raise WrongCode()
        self._confirmed = True
        if message.phase == "version":
            _check_versions(plaintext)
        elif int(message.phase) >= self._next_phase - 1 and message.phase not in self._received:
            if len(self._received) >= MAX_EARLY:
                raise ProtocolViolation(f"the peer sent more than {MAX_EARLY} messages ahead")
            self._received[message.phase] = plaintext
        # an earlier phase again: the server may repeat itself

    async def _add_sealed(self, phase: str, plaintext: bytes) -> None:
        assert self._key is not None
        await self._server.send("add", phase=phase, body=seal(self._key, self._side, phase, plaintext).hex())

    async def _release(self) -> None:
        if not self._released:
            self._released = True
            self._server.expect("released")
            await self._server.send("release", nameplate=self._nameplate)


async def create(mailbox_url: str, appid: str, *, code_length: int = 2, timeout: float = DEFAULT_TIMEOUT) -> Wormhole:
    """A new code (a nameplate the server allocates, ``code_length`` random words) with its
    mailbox opened; show ``.code`` to the peer."""
    if not 2 <= code_length <= MAX_WORDS:
        raise ValueError(f"a code has 2 to {MAX_WORDS} words, not {code_length}")
    side = os.urandom(5).hex()
    server = await _open_server(mailbox_url, appid, side, timeout)
    try:
        nameplate = nameplate_of(await server.ask("allocate", "allocated"), server.url)
        return await _open_mailbox(server, make_code(nameplate, code_length), appid, side)
    except BaseException:
        await server.aclose()
        raise


async def join(mailbox_url: str, appid: str, code: str, *, timeout: float = DEFAULT_TIMEOUT) -> Wormhole:
    """The mailbox of ``code`` (as the peer typed it: case and surrounding spaces do not
    matter), opened; `BadCode` before any connection if it is malformed."""
    parsed = parse_code(code)
    side = os.urandom(5).hex()
    server = await _open_server(mailbox_url, appid, side, timeout)
    try:
        return await _open_mailbox(server, parsed, appid, side)
    except BaseException:
        await server.aclose()
        raise


async def _open_server(mailbox_url: str, appid: str, side: str, timeout: float) -> Server:
    return await open_server(mailbox_url, appid, side, timeout=timeout, max_message=_MAX_SERVER_MESSAGE,
                             client_version=_CLIENT_VERSION)


async def _open_mailbox(server: Server, code: Code, appid: str, side: str) -> Wormhole:
    # allocate claims too, but magic-wormhole claims every nameplate, allocated or typed in.
    mailbox = mailbox_of(await server.ask("claim", "claimed", nameplate=code.nameplate), server.url)
    await server.send("open", mailbox=mailbox)
    wormhole = Wormhole(server, code, appid, side)
    await server.send("add", phase="pake", body=wormhole._pake.body.hex())
    return wormhole


def _check_versions(plaintext: bytes) -> None:
    versions = parse_json(plaintext, len(plaintext))  # bounded by the size of the message it came in
    if not isinstance(versions, dict):
        raise ProtocolViolation("the peer's version message is not a JSON object")
