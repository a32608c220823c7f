"""Chat during a network game (protocol 3, PROTOCOL.md §4d): lines heard, lines said.

A line of chat is an envelope of its own kind that the seat checks and
numbers (``Seat.say``, ``Seat.receive``); this module moves them.  Lines go
only to a peer that offered to take them (``Connection.peer_chats``), each
recorded in the replay before it is sent; lines that come are taken at most
:data:`RATE` a second (a burst of :data:`BURST`), looked at before their
signature is checked, so that a flood costs nothing but reading it: the
excess is dropped, told once per burst, and the game goes on at its pace.
While our person decides nobody else reads the connection, so
:func:`listen_while_deciding` does, keeping any game message for the play
loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from ..agent import Agent
from ..printable import printable
from ..seat import Accepted, SeatEvent, StepKind
from ..wire import CHAT_TEXT, ProtocolError, as_text, decode
from .connection import Connection, PeerGone, SessionError
from .framing import PeerClosed, PeerTimeout
from .side import Side

RATE = 3.0  # lines a second taken from the peer, on average
BURST = 6  # lines taken at once after a silence
OUTBOX = 16  # lines our person may have typed ahead of the connection


def is_chat(raw: bytes) -> bool:
    """Whether ``raw`` says it is a line of chat: read without checking its signature (the
    seat checks that), so that a flood is turned away for the cost of decoding it."""
    try:
        outer = decode(raw)
        if not isinstance(outer, list) or len(outer) != 2 or not isinstance(outer[0], bytes):
            return False
        payload = decode(outer[0])
    except ProtocolError:
        return False
    return isinstance(payload, dict) and payload.get("type") == StepKind.CHAT.value


@dataclass
class ChatGate:
    """A token bucket: :data:`RATE` lines a second, :data:`BURST` at once.  ``now`` is trio's
    clock in a session (seconds)."""

    rate: float = RATE
    burst: int = BURST
    _tokens: float = field(default=float(BURST), init=False)
    _at: float | None = field(default=None, init=False)
    dropped: int = field(default=0, init=False)  # lines turned away since the last one let in

    def let_in(self, now: float) -> bool:
        if self._at is not None:
            self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            self.dropped = 0
            return True
        self.dropped += 1
        return False


Tell = Callable[[tuple[SeatEvent, ...]], None]


@dataclass
class Chat:
    """One side's chat in one game: the gate for the peer's lines, and our outbox, which our
    person's thread fills (:meth:`submit`) and :meth:`speak` empties."""

    conn: Connection
    side: Side
    told: Tell
    log: Callable[[str], None]
    gate: ChatGate = field(default_factory=ChatGate)

    def __post_init__(self) -> None:
        self._outbox, self._lines = trio.open_memory_channel[str](OUTBOX)
        self._speaking = trio.CancelScope()
        self._submitted = 0  # lines taken from our person, and lines said (or let go) of them
        self._said = 0
        self._caught_up = trio.Event()
        self.closed = False

    def open(self, agent: Agent) -> None:
        """Chat is open to ``agent`` (a person's): what it submits is said, for the connection's
        life or until :meth:`close`."""
        nursery = self.conn.nursery
        if nursery is None:
            return

        async def speak() -> None:
            with self._speaking:
                await self.speak()

        agent.open_chat(self.submitter())
        nursery.start_soon(speak)

    def close(self) -> None:
        """No more lines: the game's replay, which lines are the last to be written to, is closed."""
        self.closed = True
        self._speaking.cancel()
        self._outbox.close()
        self.side.writer.close()

    def hear_any(self, raw: bytes) -> None:
        """An envelope that came after the game: heard if it is a line of chat, else let go."""
        if is_chat(raw):
            self.hear(raw)

    def hear(self, raw: bytes) -> None:
        """A line the peer sent: taken (recorded, told) if the gate lets it in and the seat
        accepts it; otherwise dropped, with one line to our log."""
        if not self.conn.chat or self.closed:
            return  # we never offered (a peer that sends anyway is not heard, nor recorded), or it is over
        if not self.gate.let_in(trio.current_time()):
            if self.gate.dropped == 1:
                self.log(f"the other side writes more than {RATE:g} lines of chat a second: lines dropped")
            return
        got = self.side.seat.receive(raw, trio.current_time())
        if not isinstance(got, Accepted):
            self.log(got.reason)
            return
        self.side.record(raw, sync=False)  # outside the game's chain: made durable with the next fsync
        self.told(got.events)

    def submit(self, typed: str) -> str | None:
        """Our person's line, to be said (in trio's thread): None when it is on its way, else
        why it cannot be (one line)."""
        seat = self.side.seat
        if not self.conn.peer_chats:
            return (f"{printable(seat.spec.names[1 - (seat.me or 0)], 64)}'s side takes no chat "
                    "(an older version, a bot, or --no-chat)")
        if len(seat.records) < 2:
            return "chat opens once both sides have said hello"
        if not as_text(typed, CHAT_TEXT):
            return "nothing to say: only printable text is sent"
        try:
            self._outbox.send_nowait(typed)
            self._submitted += 1
        except trio.WouldBlock:
            return f"{OUTBOX} lines are waiting to be sent already"
        except trio.ClosedResourceError:
            return "chat closed with the game"
        return None

    def submitter(self) -> Callable[[str], str | None]:
        """:meth:`submit` for our person's thread (the app's, the line client's prompt)."""
        token = trio.lowlevel.current_trio_token()

        def submit(typed: str) -> str | None:
            try:
                return trio.from_thread.run_sync(self.submit, typed, trio_token=token)
            except trio.RunFinishedError:
                return "the game's connection is closed"

        return submit

    async def speak(self) -> None:
        """Say every line submitted, in order: signed, recorded, then sent after any message of
        ours already made (§4d: the peer must hold the place a line names)."""
        async for typed in self._lines:
            try:
                await self._say(typed)
            finally:
                self._said += 1
                if self._said == self._submitted:
                    self._caught_up.set()

    async def _say(self, typed: str) -> None:
        async with self.conn.order:
            if self.closed:  # closed while we waited for our turn to send: the replay is shut
                return
            try:
                out = self.side.seat.say(typed)
            except ValueError as e:
                self.log(str(e))
                return
            if out is None:
                return
            self.side.record(out.envelope.raw, sync=False)  # a line lost in a crash costs nothing; no fsync each
            try:
                await self.conn.send_envelope(out.envelope.raw)
            except PeerGone:
                pass  # recorded and signed; the play loop says what became of the connection
        self.told(out.events)

    async def said(self, limit: float = 5.0) -> None:
        """Wait (at most ``limit`` seconds) until every line submitted so far was said, so that
        what follows on the connection comes after them."""
        with trio.move_on_after(limit):
            while self._said < self._submitted:
                self._caught_up = trio.Event()
                await self._caught_up.wait()


async def listen_while_deciding(conn: Connection, chat: Chat) -> None:
    """Read the connection while our person decides: lines of chat are heard at once; the first
    other envelope, or what ended the reading, waits for the play loop (``conn.early``,
    ``conn.trouble``), and reading stops there."""
    framed = conn.framed
    while True:
        try:
            raw = await conn.receive_envelope()
        except SessionError as e:
            if conn.framed is framed:
                conn.trouble = e
            return
        except (PeerClosed, PeerTimeout) as e:
            if conn.framed is framed:
                conn.trouble = PeerGone(f"the connection ended: {e}")
            return
        if is_chat(raw):
            chat.hear(raw)
            continue
        conn.early.append(raw)
        return
