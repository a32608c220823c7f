"""Watching a game: the host's hub, which hands every record to the people watching, and the
watcher's side, which checks each one as ``basilica verify`` does.

``basilica host --watchers N`` opens a second listener and prints a watch code
(``bas1w:``, net/invite.py): the host's key, a secret of its own and where to
connect.  A watcher proves it holds the secret over a fresh challenge (``look``,
``watch``); a player's invite cannot be used to watch, nor a watch code to take
the seat (the secrets differ).  Then it receives each game's replay header
(``game``) and every record the host's side writes, from the first (a watcher
who comes late catches up from the host's record) and then as they are written.

Nothing a watcher does can slow the game: the host hands each record to a
bounded queue per watcher and never waits; a watcher whose queue is full, who
does not take a frame in time, or who sends anything but keepalives, is let go
with one line.  The records are the public, signed envelopes: a watcher learns
a face-down tile or a secret Jester choice only when the rules reveal it to both
players, as a verifier of the replay does.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import trio

from ..engine import Manifest
from ..identity import Identity
from ..replay import Header, known_manifests, spec_of
from ..printable import printable
from ..seat import Accepted, Seat, SeatEvent
from ..wire import ProtocolError
from .connection import MAX_WATCHERS
from .framing import CONTROL, ENVELOPE, Frame, FramedStream, PeerClosed, PeerTimeout, close_quietly, control
from .invite import CHALLENGE_SIZE, KEY_SIZE, MAC_SIZE, Candidate, WatchCode, format_watch, watch_mac

QUEUE = 4096  # frames a watcher may fall behind by before it is let go (a whole game is ~1000)
PROOF_TIME = 5.0  # seconds a watcher has to prove it holds the watch code
PING_EVERY = 5.0  # the host's keepalive to each watcher
IDLE = 30.0  # a host silent this long is gone (for the watcher)
WATCH_TTL = 24 * 3600  # a watch code's life
FRAME_TIME = 10.0  # seconds a watcher has to take one frame
# Records go to a watcher in batches, at most this often: one write per watcher now and then rather
# than one per record, made when the host has just handed over a record of its own, so that the
# host does its watchers' work while the other side answers, not between a move and its answer
# (python -m basilica_p2p.bench watchers).
BATCH_EVERY = 0.1
# A record handed over with no other after it (the game's last, a person thinking) goes out this
# long after it at the latest.
BATCH_LATEST = 0.25
BATCH_BYTES = 256 * 1024


def relay_key(secret: bytes) -> bytes:
    """The transit key a host and its watchers meet under on a relay (net/relay.py): the watch
    code's secret, hashed under a tag of its own (the relay learns only a hash of this)."""
    return hashlib.sha256(b"basilica-p2p/watch-relay/v1\x00" + secret).digest()


class WatchError(Exception):
    """Watching stopped; ``str(e)`` is one line for the person watching."""


@dataclass
class _Watcher:
    name: str
    send: trio.MemorySendChannel[tuple[int, bytes]]
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    why: str = ""


class WatchHub:
    """The host's side of watching: who watches, the current game's record, and the hand-off."""

    def __init__(self, me: Identity, limit: int, log: Callable[[str], None] = lambda s: None,
                 secret: bytes | None = None, queue: int = QUEUE, frame_time: float = FRAME_TIME,
                 batch_every: float = BATCH_EVERY) -> None:
        if not 1 <= limit <= MAX_WATCHERS:
            raise ValueError(f"between 1 and {MAX_WATCHERS} watchers")
        self.me, self.limit, self.log = me, limit, log
        self.secret = secret if secret is not None else os.urandom(16)
        self.queue, self.frame_time, self.batch_every = queue, frame_time, batch_every
        self.header: bytes | None = None
        self.records: list[bytes] = []
        self.watchers: list[_Watcher] = []
        self.open = True
        self.changed: Callable[[tuple[str, ...]], None] = lambda names: None  # told who watches
        # Set when the watchers' tasks may send what came (then replaced), and how many times it
        # was: see _prompt().
        self._go = trio.Event()
        self._gos = 0
        self._next_go = float("-inf")

    def code(self, candidates: Sequence[Candidate], now: int, relay: tuple[str, int] | None = None) -> str:
        """The watch code people paste into ``basilica watch`` (with the ``relay`` the hub also
        waits on, if any: :meth:`serve_relay`)."""
        return format_watch(WatchCode(self.me.public, self.secret, now + WATCH_TTL, tuple(candidates), relay))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(w.name for w in self.watchers)

    # --- told by the host's session ---------------------------------------------------

    def begin(self, header: bytes, records: Sequence[bytes]) -> None:
        """A game began (its replay's header, the records it holds): every watcher sees it."""
        self.header, self.records = header, list(records)
        for w in list(self.watchers):
            self._offer(w, CONTROL, control("game", header=header))
            for raw in self.records:
                self._offer(w, ENVELOPE, raw)
        self._prompt()

    def publish(self, raw: bytes) -> None:
        """A record the host's side wrote: handed to every watcher, never waited for."""
        if self.header is None:
            return
        self.records.append(raw)
        for w in list(self.watchers):
            self._offer(w, ENVELOPE, raw)
        self._prompt()

    def _prompt(self) -> None:
        """Let the watchers' tasks send what came, at most every :attr:`batch_every` seconds.

        Called as a record is handed over, in the host's game task: the tasks it wakes run when
        that task next waits, which is as it sends the record on (a record of its own) and
        waits for the other side's answer.  A clock would wake them at any moment, the moment
        an answer comes among them."""
        now = trio.current_time()
        if now >= self._next_go:
            self._next_go = now + self.batch_every
            self._gos += 1
            self._go.set()
            self._go = trio.Event()

    async def finish(self, limit: float = 5.0) -> None:
        """The host's games are over: each watcher is told so after what it still has to take
        (within ``limit`` seconds), then let go."""
        for w in list(self.watchers):
            self._offer(w, CONTROL, control("bye"))
            w.send.close()
        self._next_go = float("-inf")
        self._prompt()
        with trio.move_on_after(limit):
            while self.watchers:
                await trio.sleep(0.05)
        for w in list(self.watchers):
            self._drop(w, "", f"{w.name} was too slow to take the end of the game")

    def close_watching(self, why: str = "a player closed watching") -> None:
        """Send every watcher away, and let nobody else in."""
        if not self.open:
            return
        self.open = False
        for w in list(self.watchers):
            self._drop(w, why)
        self.log(f"watching closed: {why}")

    # --- the listener --------------------------------------------------------------------

    async def serve_relay(self, relay: tuple[str, int], retry: float = 5.0) -> None:
        """Wait for watchers on a transit relay too, one connection waiting there at a time,
        until cancelled: each watcher that comes is paired with it and admitted as any other."""
        from .relay import RelayError, meet

        told = False
        async with trio.open_nursery() as nursery:
            while True:
                try:
                    stream = await meet(relay, relay_key(self.secret), sender=True, timeout=3600.0)
                except RelayError as e:
                    if not told:
                        self.log(f"watchers cannot come through the relay {relay[0]}:{relay[1]}: {e}")
                        told = True
                    await trio.sleep(retry)
                    continue
                nursery.start_soon(self._admit, stream)

    async def serve(self, listener: trio.abc.Listener[trio.abc.Stream]) -> None:
        """Take watchers on ``listener`` until cancelled."""
        async with trio.open_nursery() as nursery:
            while True:
                stream = await listener.accept()
                nursery.start_soon(self._admit, stream)

    async def _admit(self, stream: trio.abc.Stream) -> None:
        framed = FramedStream(stream, self.frame_time)
        try:
            name = await self._proof(framed)
        except (PeerClosed, PeerTimeout, ProtocolError, trio.TooSlowError, _Refusal) as e:
            if isinstance(e, _Refusal):
                await _tell_error(framed, str(e))
            await close_quietly(framed)
            return
        send, receive = trio.open_memory_channel[tuple[int, bytes]](self.queue)
        w = _Watcher(name, send)
        self.watchers.append(w)
        self.log(f"{name} is watching ({len(self.watchers)} of at most {self.limit})")
        self.changed(self.names)
        if self.header is not None:
            self._offer(w, CONTROL, control("game", header=self.header))
            for raw in self.records:
                self._offer(w, ENVELOPE, raw)
        try:
            with w.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._feed, framed, receive, w)
                    nursery.start_soon(self._listen, framed, w)
                    nursery.start_soon(self._ping, w)
        finally:
            if w in self.watchers:
                self.watchers.remove(w)
                self.changed(self.names)
            if w.why:
                await _tell_error(framed, w.why)
            await close_quietly(framed)

    async def _proof(self, framed: FramedStream) -> str:
        """The watcher's name, once it proved it holds the watch code."""
        with trio.fail_after(PROOF_TIME):
            nonce = os.urandom(CHALLENGE_SIZE)
            await framed.send_control("look", nonce=nonce)
            frame = await framed.receive()
        if frame.kind != CONTROL:
            raise _Refusal("a watcher proves it holds the watch code first")
        msg = frame.control()
        if msg["t"] != "watch":
            raise _Refusal("this listener is for watchers: players join with the invite")
        key, name, mac = msg["key"], msg["name"], msg["mac"]
        if not (isinstance(key, bytes) and len(key) == KEY_SIZE and isinstance(mac, bytes) and len(mac) == MAC_SIZE
                and isinstance(name, str)):
            raise _Refusal("a malformed proof")
        if not hmac.compare_digest(watch_mac(self.secret, nonce, self.me.public, key), mac):
            raise _Refusal("that is not this game's watch code")
        if not self.open:
            raise _Refusal("the players closed watching")
        if len(self.watchers) >= self.limit:
            raise _Refusal(f"the table is full: {self.limit} people watch already")
        return printable(name, 64) or "someone"

    async def _feed(self, framed: FramedStream, frames: trio.MemoryReceiveChannel[tuple[int, bytes]],
                    w: _Watcher) -> None:
        """What came for ``w``, in one write once the hub said go (:meth:`_prompt`) since the last,
        or :data:`BATCH_LATEST` seconds after the first record waiting, whichever is first.  So
        this task runs when a record was handed over, never by the clock while a game goes on."""
        sent_at = -1  # the hub's count of gos at our last write
        ended = False
        while not ended:
            try:
                batch = [await frames.receive()]
            except trio.EndOfChannel:
                break
            if self._gos == sent_at:  # no go since our last write: wait for the next one
                with trio.move_on_after(BATCH_LATEST):
                    await self._go.wait()
            sent_at = self._gos
            size = len(batch[0][1])
            while size < BATCH_BYTES:
                try:
                    item = frames.receive_nowait()
                except trio.WouldBlock:
                    break
                except trio.EndOfChannel:
                    ended = True
                    break
                batch.append(item)
                size += len(item[1])
            try:
                await framed.send_many(batch)
            except (PeerClosed, PeerTimeout) as e:
                self._drop(w, "", f"{w.name} stopped watching ({e})")
                return
        # The host finished: everything handed over (the goodbye last).
        if w in self.watchers:
            self.watchers.remove(w)
            self.changed(self.names)
        w.scope.cancel()

    async def _listen(self, framed: FramedStream, w: _Watcher) -> None:
        """A watcher says nothing but keepalives; anything else, or its leaving, ends its watch."""
        while True:
            try:
                frame = await framed.receive()
                ok = frame.kind == CONTROL and frame.control()["t"] in ("ping", "pong")
            except (PeerClosed, PeerTimeout, ProtocolError):
                self._drop(w, "", f"{w.name} stopped watching")
                return
            if not ok:
                self._drop(w, "a watcher sends nothing but keepalives", f"{w.name} sent something else and was let go")
                return

    async def _ping(self, w: _Watcher) -> None:
        n = 0
        while True:
            await trio.sleep(PING_EVERY)
            n += 1
            self._offer(w, CONTROL, control("ping", n=n))

    def _offer(self, w: _Watcher, kind: int, body: bytes) -> None:
        try:
            w.send.send_nowait((kind, body))
        except trio.WouldBlock:
            self._drop(w, "you fell too far behind the game", f"{w.name} fell behind the game and was let go")
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass

    def _drop(self, w: _Watcher, why: str, logged: str = "") -> None:
        if w in self.watchers:
            self.watchers.remove(w)
            self.changed(self.names)
            self.log(logged or f"{w.name} was sent away: {why}")
        w.why = w.why or why
        w.scope.cancel()


class _Refusal(Exception):
    """Why a would-be watcher is turned away (sent to it, then the connection closed)."""


async def _tell_error(framed: FramedStream, reason: str) -> None:
    with trio.move_on_after(1):
        try:
            await framed.send_control("error", reason=reason[:500])
        except (PeerClosed, PeerTimeout, ValueError):
            pass


# --- the watcher's side ---------------------------------------------------------------------


Tell = Callable[[SeatEvent], None]


@dataclass
class Watched:
    """What a watcher saw of one game: its seat (a verifier, fed every record) and the header."""

    header: Header
    seat: Seat

    @property
    def finished(self) -> bool:
        return self.seat.finished


async def watch_games(stream: trio.abc.Stream, code: WatchCode, me: Identity, begin: Callable[[Header], Tell],
                log: Callable[[str], None] = lambda s: None, manifests: dict[str, Manifest] | None = None,
                idle: float = IDLE) -> list[Watched]:
    """Watch on ``stream`` (connected to a candidate of ``code``) until the host says goodbye or
    closes: prove the code, then check every record as ``verify`` does, telling each game's
    events to what ``begin(header)`` returns.  :class:`WatchError` when watching stops early."""
    framed = FramedStream(stream, FRAME_TIME)
    manifests = manifests if manifests is not None else known_manifests()
    games: list[Watched] = []
    tell: Tell = lambda event: None  # noqa: E731 (replaced at the first game)
    try:
        with trio.fail_after(PROOF_TIME):
            look = await _next(framed, idle)
        if look.kind != CONTROL or look.control()["t"] != "look":
            raise WatchError("the other end is not a host that lets people watch")
        nonce = look.control()["nonce"]
        if not isinstance(nonce, bytes) or len(nonce) != CHALLENGE_SIZE:
            raise WatchError("the host's challenge is malformed")
        await framed.send_control("watch", key=me.public, name=me.name,
                                  mac=watch_mac(code.secret, nonce, code.key, me.public))
        while True:
            frame = await _next(framed, idle)
            if frame.kind == ENVELOPE:
                if not games:
                    raise WatchError("the host sent a record before the game's header")
                got = games[-1].seat.receive(frame.body, known=True)
                if not isinstance(got, Accepted):
                    raise WatchError(f"the host sent a record that does not verify: {got.detail or got.reason}")
                for event in got.events:
                    tell(event)
                continue
            msg = frame.control()
            if msg["t"] == "game":
                header = _header(msg["header"], code)
                spec = spec_of(header, manifests)
                if isinstance(spec, str):
                    raise WatchError(f"the host's game cannot be watched here: {spec}")
                games.append(Watched(header, Seat(spec)))
                tell = begin(header)
            elif msg["t"] == "ping":
                await framed.send_control("pong", n=msg["n"])
            elif msg["t"] == "error":
                raise WatchError(f"the host sent us away: {printable(msg['reason'], 500)}")
            elif msg["t"] == "bye":
                return games
    except trio.TooSlowError:
        raise WatchError("the host did not answer as a host that lets people watch") from None
    except PeerClosed:
        if games and games[-1].finished:
            return games
        raise WatchError("the host closed the connection") from None
    except PeerTimeout as e:
        raise WatchError(f"the host fell silent ({e})") from None
    except ProtocolError as e:
        raise WatchError(f"the host sent something that is no watcher's frame: {e}") from None
    finally:
        await close_quietly(framed)


async def _next(framed: FramedStream, idle: float) -> Frame:
    with trio.move_on_after(idle) as scope:
        return await framed.receive()
    assert scope.cancelled_caught
    raise PeerTimeout(f"nothing for {idle:g} s")


def _header(data: object, code: WatchCode) -> Header:
    if not isinstance(data, bytes):
        raise WatchError("the host sent a malformed game header")
    try:
        header = Header.decode(data)
    except ProtocolError as e:
        raise WatchError(f"the host sent a malformed game header: {e}") from None
    if code.key not in (header.players[0][0], header.players[1][0]):
        raise WatchError("the game the host sent is not one of its own: its key is not a player's")
    return header


__all__ = ["QUEUE", "WatchError", "WatchHub", "Watched", "watch_games"]
