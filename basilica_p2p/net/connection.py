"""A connection to a peer: frames with deadlines, keepalives, and why a game stopped early.

:class:`Connection` wraps a framed stream with the rules for reading from a
peer (an idle limit, a deadline per frame, pings answered on the way, an
error notice turned into :class:`PeerRefused`), and :class:`Timeouts` holds
those limits.  The :class:`SessionError` family says, in one line each, why
a game on it stopped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import trio

from ..printable import printable
from ..wire import ProtocolError
from .framing import (
    AGAIN_OFFER,
    WATCH_OFFER,
    CHAT_OFFER,
    CHECKED_OFFER,
    CHECKED_SWITCH,
    ENVELOPE,
    CorruptFrame,
    Frame,
    FramedStream,
    PeerBye,
    PeerClosed,
    PeerTimeout,
    close_quietly,
)

T = TypeVar("T")

LAG_SAMPLES = 9  # the round trips the lag allowance is the median of (net/session.py)
MAX_WATCHERS = 64  # people watching one game at most (net/watch.py)


@dataclass(frozen=True)
class Timeouts:
    """Deadlines, in seconds (docs/network.md)."""

    handshake: float = 20.0  # the hellos must be exchanged within this
    ping_interval: float = 5.0  # a keepalive is sent this often
    idle: float = 30.0  # a peer silent this long (not even a keepalive) is gone
    frame: float = 10.0  # a frame must arrive whole within this once it began
    move: float | None = None  # a peer's decision must come within this (no limit by default)


class SessionError(Exception):
    """The game stopped early; ``str(e)`` is one line for the user."""


class PeerMisbehaved(SessionError):
    """The peer sent something the protocol forbids; we disconnected."""


class PeerGone(SessionError):
    """The connection broke or the peer went silent."""


class PeerRefused(PeerGone):
    """The peer stopped with an explanation (an error notice): a real peer, a real reason.

    ``reason`` is the peer's own words (made printable).  No resume hint goes with
    it: a peer that refused or stopped on purpose does not come back.
    """

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


class CorruptedMessage(PeerGone):
    """A message came that the peer did not sign: its frame's checksum failed (the connection
    damaged it), or its signature did; or the peer said one of ours reached it so.  Nothing
    shows that the peer did it, so it is no accusation: the connection is made again."""


class NoGameStarted(PeerGone):
    """The connection ended during a handshake: no game (and no replay) was begun."""


class BadHello(PeerMisbehaved):
    """What came instead of a hello was not a valid one: no game was begun."""


class Refused(SessionError):
    """The handshake found a difference or an unknown key; nothing was played."""


class Connection:
    """A framed stream plus the rules for reading from a peer: idle and frame deadlines, keepalives."""

    def __init__(self, stream: trio.abc.Stream | FramedStream, timeouts: Timeouts,
                 measured: list[float] | None = None) -> None:
        # A stream that already carried frames (an invite's challenge and knock) keeps its buffer.
        self.framed = stream if isinstance(stream, FramedStream) else FramedStream(stream, timeouts.frame)
        self.timeouts = timeouts
        self._pings = 0
        # Seconds from sending an action to its acknowledgement (only for actions after which we
        # did not choose our next decision at once): the last few, which the lag allowance
        # needs, so that a connection of thousands of games does not keep them all; every one
        # also goes to ``measured`` when it is given (a benchmark's).
        self.round_trips: deque[float] = deque(maxlen=LAG_SAMPLES)
        self.measured = measured
        self._sent_at: float | None = None
        self.nursery: trio.Nursery | None = None  # for work beside the game (keepalives, prefetching)
        # While a person decides nobody reads the socket: a failed keepalive cancels this
        # scope, so that they learn at once that the other side has gone.
        self.deciding: trio.CancelScope | None = None
        self.broken = False  # a keepalive could not be sent
        self.lost = trio.Event()  # set with ``broken``: a side that waits for the peer's return starts then
        self.left = False  # we closed it, the peer being away: no game more on it unless it comes back
        # Chat (PROTOCOL.md §4d): whether we take lines (offered on every stream), whether the
        # peer said it does; our envelopes go out in the order our seat made them (a line of
        # chat names the place in the chain it was said at, which the peer must hold first).
        self.chat = False
        self.peer_chats = False
        # Whether we, and the peer, may play again after a game (net/again.py).
        self.again = False
        self.peer_again = False
        # Watching (net/watch.py): a joiner that takes the names of who watches says so; the host
        # tells it (``watching``), and it may close watching (``unwatch``).
        self.watch = False
        self.peer_watch = False
        self.on_watchers: Callable[[tuple[str, ...]], None] = lambda names: None
        self.on_unwatch: Callable[[], None] = lambda: None
        self.order = trio.Lock()
        # Envelopes read while our person decided (net/chat.py), and what ended that reading:
        # the play loop takes them first.
        self.early: deque[bytes] = deque()
        self.trouble: SessionError | None = None

    async def keepalive(self) -> None:
        """Send a ping every ``ping_interval``; run in a nursery for the stream's life (a new one
        starts with each new stream, see :meth:`replace`)."""
        framed = self.framed
        while True:
            await trio.sleep(self.timeouts.ping_interval)
            if self.framed is not framed:
                return  # replaced: the new stream's keepalive took over
            self._pings += 1
            try:
                await framed.send_control("ping", n=self._pings)
            except (PeerClosed, PeerTimeout):
                if self.framed is not framed:
                    return
                self.broken = True
                self.lost.set()
                if self.deciding is not None:
                    self.deciding.cancel()
                return  # otherwise the reader notices the broken connection and says so

    async def offer(self) -> None:
        """We read checked frames (framing.py), and lines of chat if we take them: an older peer
        ignores these pongs."""
        try:
            await self.framed.send_control("pong", n=CHECKED_OFFER)
            if self.chat:
                await self.framed.send_control("pong", n=CHAT_OFFER)
            if self.again:
                await self.framed.send_control("pong", n=AGAIN_OFFER)
            if self.watch:
                await self.framed.send_control("pong", n=WATCH_OFFER)
        except (PeerClosed, PeerTimeout):
            pass  # the next read says what became of the connection, in its words

    async def replace(self, framed: FramedStream) -> None:
        """Go on over a new stream to the same peer (it came back after a break): the old one is
        closed, and keepalives go on over the new one."""
        old, self.framed = self.framed, framed
        self.broken, self.lost, self.left, self._pings, self._sent_at = False, trio.Event(), False, 0, None
        # The peer offers chat, playing again and watching again on the new stream.
        self.peer_chats, self.peer_again, self.peer_watch, self.trouble = False, False, False, None
        await close_quietly(old)
        await self.offer()  # a new stream starts unchecked both ways
        if self.nursery is not None:
            self.nursery.start_soon(self.keepalive)

    async def run(self, body: Callable[[], Awaitable[T]]) -> T:
        """Run ``body`` with keepalives beside it; its exception comes out as itself,
        not wrapped in an exception group."""
        outcome: list[T] = []
        error: list[BaseException] = []
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            nursery.start_soon(self.keepalive)
            try:
                await self.offer()
                outcome.append(await body())
            except (PeerClosed, PeerTimeout) as e:  # a control frame could not be sent or read
                error.append(PeerGone(f"the connection ended: {e}"))
            except Exception as e:  # re-raised below, outside the nursery
                error.append(e)
            nursery.cancel_scope.cancel()
        self.nursery = None
        if error:
            raise error[0]
        return outcome[0]

    async def await_goodbye(self, limit: float = 5.0) -> bool:
        """After our goodbye: whether the peer's came within ``limit`` seconds.  It shows the
        peer read everything we sent before it (the stream is in order); a peer that just
        closes (an older client) or goes silent shows nothing."""
        with trio.move_on_after(min(limit, self.timeouts.handshake)):
            try:
                while True:  # e.g. a joiner's hello for a next game that will not be played
                    await self.receive_envelope()
            except PeerBye:
                return True
            except (PeerClosed, PeerTimeout, SessionError):
                pass
        return False

    async def send_envelope(self, raw: bytes) -> None:
        try:
            await self.framed.send(ENVELOPE, raw)
        except (PeerClosed, PeerTimeout) as e:
            raise PeerGone(f"the connection ended: {e}") from None

    async def receive_envelope(self, deadline: float | None = None) -> bytes:
        """The next envelope; answers pings on the way, raises on an error notice or silence."""
        if self.early:
            return self.early.popleft()
        if self.trouble is not None:
            trouble, self.trouble = self.trouble, None
            raise trouble
        while True:
            limit = self.timeouts.idle if deadline is None else min(self.timeouts.idle, max(0.0, deadline - trio.current_time()))
            with trio.move_on_after(limit) as scope:
                frame = await self._frame()
            if scope.cancelled_caught:
                if deadline is not None and trio.current_time() >= deadline:
                    raise PeerTimeout("the peer did not decide in time")
                raise PeerTimeout(f"the peer was silent for {self.timeouts.idle:g} s")
            if frame.kind == ENVELOPE:
                return frame.body
            await self._answer(await self._control(frame))  # pong and resume need nothing more here

    async def receive_resume(self, deadline: float) -> dict[str, Any]:
        """The peer's resume notice (the first thing after reconnecting)."""
        while True:
            with trio.move_on_after(max(0.0, deadline - trio.current_time())) as scope:
                frame = await self._frame()
            if scope.cancelled_caught:
                raise PeerGone("the peer reconnected but did not say where it was")
            if frame.kind == ENVELOPE:
                await self.tell_error("a message before the resume notice")
                raise PeerMisbehaved("the peer sent a message before its resume notice")
            msg = await self._control(frame)
            if msg["t"] == "resume":
                return msg
            await self._answer(msg)

    async def receive_again(self, deadline: float, envelope: Callable[[bytes], None] = lambda raw: None) -> bool:
        """The peer's answer after a game (net/again.py): whether it wants another; False when
        none comes by ``deadline``.  Envelopes meanwhile (lines of chat) go to ``envelope``."""
        while True:
            with trio.move_on_after(max(0.0, deadline - trio.current_time())) as scope:
                frame = await self._frame()
            if scope.cancelled_caught:
                return False
            if frame.kind == ENVELOPE:
                envelope(frame.body)
                continue
            msg = await self._control(frame)
            if msg["t"] == "again":
                return msg["yes"] is True
            await self._answer(msg)

    async def _answer(self, msg: dict[str, Any]) -> None:
        """Control messages that mean the same wherever they come: ping, an error notice, goodbye,
        the switch to checked frames."""
        if msg["t"] == "ping":
            await self.framed.send_control("pong", n=msg["n"])
        elif msg["t"] == "pong" and msg["n"] == CHECKED_OFFER:
            await self.framed.switch_to_checked()
        elif msg["t"] == "pong" and msg["n"] == CHECKED_SWITCH:
            self.framed.checked_in = True
        elif msg["t"] == "pong" and msg["n"] == CHAT_OFFER:
            self.peer_chats = True
        elif msg["t"] == "pong" and msg["n"] == AGAIN_OFFER:
            self.peer_again = True
        elif msg["t"] == "pong" and msg["n"] == WATCH_OFFER:
            self.peer_watch = True
        elif msg["t"] == "watching" and self.watch:
            names = msg["names"]
            if not isinstance(names, list) or len(names) > MAX_WATCHERS:
                raise PeerMisbehaved("the peer sent a malformed list of watchers")
            self.on_watchers(tuple(printable(n, 64) for n in names))
        elif msg["t"] == "unwatch" and self.peer_watch:
            self.on_unwatch()
        elif msg["t"] == "corrupted":
            raise CorruptedMessage("the connection corrupted a message: one of ours reached the other side "
                                   "damaged")
        elif msg["t"] == "error":
            reason = printable(msg["reason"], 500)
            raise PeerRefused(f"the peer stopped the game: {reason}", reason)
        elif msg["t"] == "bye":
            raise PeerBye("the peer said goodbye")
        elif msg["t"] == "challenge":
            raise Refused("this host hands out invites: join with the code it printed "
                          "('basilica join bas1:...'), or ask it to host with --no-invite")
        elif msg["t"] == "knock":
            await self.tell_error("this host was started without an invite: join with its HOST:PORT")
            raise Refused("the peer knocked with an invite, but this host hands out none (--no-invite)")

    async def _frame(self) -> Frame:
        """The next frame; a malformed one (bad length, unknown kind) disconnects the peer, one
        the connection damaged (a checked frame's checksum) disconnects without blame."""
        try:
            return await self.framed.receive()
        except CorruptFrame as e:
            await self.tell_corrupted()
            raise CorruptedMessage(f"the connection corrupted a message ({e})") from None
        except ProtocolError as e:
            await self.tell_error(f"bad frame: {e}")
            raise PeerMisbehaved(f"the peer sent a bad frame: {e}") from None
        except PeerTimeout as e:
            raise PeerGone(str(e)) from None

    async def _control(self, frame: Frame) -> dict[str, Any]:
        try:
            return frame.control()
        except ProtocolError as e:
            await self.tell_error(f"bad control message: {e}")
            raise PeerMisbehaved(f"the peer sent a bad control message: {e}") from None

    async def tell_corrupted(self) -> None:
        """Best effort, to a peer that reads checked frames (an older one would refuse the word):
        one of its messages reached us damaged, so that it comes back rather than stops."""
        if not self.framed.checked_out:
            return
        with trio.move_on_after(1):
            try:
                await self.framed.send_control("corrupted")
            except (PeerClosed, PeerTimeout, ValueError):
                pass

    async def tell_error(self, reason: str) -> None:
        """Best effort: the peer learns why we disconnect."""
        with trio.move_on_after(1):
            try:
                await self.framed.send_control("error", reason=reason[:500])
            except (PeerClosed, PeerTimeout, ValueError):
                pass


