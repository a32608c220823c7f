"""One game between two peers over a framed connection, in lockstep: the seat's network driver.

Each side's :class:`~basilica_p2p.seat.Seat` says whose message comes next.
If it is ours, the seat makes it (asking our agent for a decision), we
append it to the replay (fsynced) and only then send it.  If it is the
peer's, we read it, the seat checks and takes it, we append it, and answer
in the next round.  So each replay always holds a valid prefix of the game,
whatever the network or the peer does, and both end up with the same
records.  This module holds what only a network game has: the framing's
deadlines and keepalives, the handshake, lag and claims, the session file
and resume; the protocol itself is the seat's.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import trio

from .. import safefile
from .._legacy_agent import as_agent
from ..agent import Agent, Decision, Resign, TakeBack
from ..bots.external import NETWORK_SHARE
from ..clock import TimeControl, TimeControlError
from ..engine import Action, Game, Manifest, Options
from ..identity import Identity, fingerprint
from ..names import shown
from ..referee import GENESIS, HIDDEN_DEAL, GameSpec, Outcome
from ..replay.file import Header, ReplayWriter
from ..seat import (
    Ask,
    Late,
    Outgoing,
    OwnMessageRefused,
    Refusal,
    Seat,
    SeatEvent,
    SeatSecrets,
    StepKind,
    printable,
)
from ..seat import Refused as SeatRefused
from ..seat import hello_body as seat_hello_body
from ..wire import Envelope, ProtocolError, open_envelope, seal
from ..wire.envelope import signed_by
from .framing import (
    CHECKED_OFFER,
    CHECKED_SWITCH,
    ENVELOPE,
    CorruptFrame,
    Frame,
    FramedStream,
    PeerBye,
    PeerClosed,
    PeerTimeout,
)
from .ledger import GameLedger, LedgerError
from .peers import KnownPeers, PeerKeyMismatch

T = TypeVar("T")
# Told each event of our seat, beside our agent (the demo's printout, a test's record).
Watch = Callable[[SeatEvent], None]


@dataclass(frozen=True)
class Timeouts:
    """Deadlines, in seconds (docs/network.md)."""

    handshake: float = 20.0  # the hellos must be exchanged within this
    ping_interval: float = 5.0  # a keepalive is sent this often
    idle: float = 30.0  # a peer silent this long (not even a keepalive) is gone
    frame: float = 10.0  # a frame must arrive whole within this once it began
    move: float | None = None  # a peer's decision must come within this (no limit by default)


@dataclass(frozen=True)
class Settings:
    options: Options
    manifest: Manifest
    # Between strangers the stack must stay face down: the hidden deal is the network default,
    # and commit-reveal-v1 is played only when both sides ask for it (a hello field).
    shuffle: str = HIDDEN_DEAL
    clock: TimeControl | None = None  # both sides must ask for the same one (protocol 2)


# The lag allowance taken off the peer's measured thinking time: the round trip measured
# between an action and its acknowledgement, this much before any was measured, and never
# more than MAX_LAG (a peer that slows its acknowledgements cannot buy more; docs/clocks.md).
FIRST_LAG = 0.5
MAX_LAG = 2.0
LAG_SAMPLES = 9  # the round trips the allowance is the median of


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
    shows that the peer did it, so it is no accusation: the game can be resumed."""


class NoGameStarted(PeerGone):
    """The connection ended during a handshake: no game (and no replay) was begun."""


class BadHello(PeerMisbehaved):
    """What came instead of a hello was not a valid one: no game was begun."""


class Refused(SessionError):
    """The handshake found a difference or an unknown key; nothing was played."""


@dataclass
class GameReport:
    replay: Path
    seat: int  # 0: we were player 1
    peer: str
    outcome: Outcome
    game: Game
    sidecar: Path | None = None  # the session file kept for resume, if any
    # The peer holds every record we hold: the last one is its own, so it has read all
    # before it.  Otherwise our last message may not have reached it yet.
    delivered: bool = False
    clock: TimeControl | None = None  # the game's time control (a joiner takes the host's)


@dataclass
class _Side:
    """What one side of a game keeps beside its seat: the replay, the session file, and the
    state of the conversation (a decision chosen ahead, messages being sent back after a resume)."""

    seat: Seat
    writer: ReplayWriter
    sidecar: Path | None = None  # where the secrets and how to reconnect are kept (resume)
    info: dict[str, Any] = field(default_factory=dict)
    prefetch: _Prefetch | None = None  # our next decision, being chosen while the peer acknowledges
    resent: int = 0  # after a resume: how many messages the peer is sending back from its file

    @property
    def records(self) -> list[bytes]:
        return self.seat.records

    @trio.lowlevel.enable_ki_protection  # never half-written by Ctrl-C (atomic anyway: a rename)
    def save(self) -> None:
        """Write the sidecar durably: called before any envelope that commits to a secret."""
        if self.sidecar is None:
            return
        s = self.seat.secrets
        data = dict(self.info, format="basilica-session/1", nonce=s.nonce.hex() or None,
                    jester=[s.jester[0], s.jester[1].hex()] if s.jester else None,
                    deal_secret=s.deal.hex() or None)
        write_private_json(self.sidecar, data)


@dataclass(frozen=True)
class _Prefetch:
    """Our next decision, chosen while the peer checks and acknowledges our last action
    (the acknowledgement changes nothing in the game, so the choice stays valid).  It
    overlaps our thinking with the peer's work."""

    ply: int  # the decision it is for; only an acknowledgement comes before it
    decision: Decision


@trio.lowlevel.enable_ki_protection
def _protected(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` with Ctrl-C held back until the next checkpoint (trio delivers it
    there): a record or the sidecar is never left half-written by an interrupt."""
    return fn(*args)


def _record(side: _Side, raw: bytes, sync: bool = True) -> None:
    """Append one record to the replay, safe from Ctrl-C (the seat holds it already)."""
    _protected(side.writer.append, raw, sync)


def write_private_json(path: Path, data: dict[str, Any]) -> None:
    """Atomically replace ``path`` with ``data``, readable by the owner only (it holds secrets)."""
    import json

    safefile.write_atomically(path, json.dumps(data), 0o600)


def hello_body(me: Identity, settings: Settings) -> dict[str, Any]:
    return seat_hello_body(me.name, settings.options, settings.manifest, settings.shuffle, settings.clock)


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """What must agree between two hellos and does not, in words that read the same on both sides."""
    def show(v: Any) -> str:
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, bytes):
            return v.hex()[:16]
        return str(v)

    out = []
    clocks = ("clock", "clock (--clock)")
    if ours.get("clock") != theirs.get("clock"):
        # A hello with a clock is protocol 2: say what differs, not the version it implies.
        ours, theirs = ({**h, "protocol": 0, "clock": _clock_words(h.get("clock"))} for h in (ours, theirs))
    for key, label in (("protocol", "protocol version"), ("ruleset", "ruleset"), ("festum", "festum expansion"),
                       ("removal", "festum removal of 6 tiles"), ("manifest", "manifest"),
                       ("shuffle", "shuffle scheme"), clocks):
        a, b = ours.get(key), theirs.get(key)
        if a != b:
            out.append(f"{label}: {printable(ours['name'], 64)} has {show(a)}, "
                       f"{printable(theirs['name'], 64)} has {show(b)}")
    return out


def _clock_words(clock: Any) -> str:
    if isinstance(clock, list) and len(clock) == 2:
        return f"{clock[0]}+{clock[1]}"
    return "none"


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

    async def keepalive(self) -> None:
        """Send a ping every ``ping_interval``; run in a nursery for the connection's life."""
        while True:
            await trio.sleep(self.timeouts.ping_interval)
            self._pings += 1
            try:
                await self.framed.send_control("ping", n=self._pings)
            except (PeerClosed, PeerTimeout):
                self.broken = True
                if self.deciding is not None:
                    self.deciding.cancel()
                return  # otherwise the reader notices the broken connection and says so

    async def run(self, body: Callable[[], Awaitable[T]]) -> T:
        """Run ``body`` with keepalives beside it; its exception comes out as itself,
        not wrapped in an exception group."""
        outcome: list[T] = []
        error: list[BaseException] = []
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            nursery.start_soon(self.keepalive)
            try:
                # We read checked frames (framing.py): an older peer ignores this pong.
                try:
                    await self.framed.send_control("pong", n=CHECKED_OFFER)
                except (PeerClosed, PeerTimeout):
                    pass  # the body's first read says what became of the connection, in its words
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

    async def _answer(self, msg: dict[str, Any]) -> None:
        """Control messages that mean the same wherever they come: ping, an error notice, goodbye,
        the switch to checked frames."""
        if msg["t"] == "ping":
            await self.framed.send_control("pong", n=msg["n"])
        elif msg["t"] == "pong" and msg["n"] == CHECKED_OFFER:
            await self.framed.switch_to_checked()
        elif msg["t"] == "pong" and msg["n"] == CHECKED_SWITCH:
            self.framed.checked_in = True
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
        one of its messages reached us damaged, so that it resumes rather than stops."""
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


async def play_one_game(
    conn: Connection,
    me: Identity,
    seat: int,
    settings: Settings,
    agent: object,
    replay_dir: Path,
    peers: KnownPeers | None = None,
    log: Callable[[str], None] = lambda s: None,
    watch: Watch | None = None,
    resume_info: dict[str, Any] | None = None,
    on_start: Callable[[Path], None] | None = None,
    ledger: GameLedger | None = None,
    pinned: bytes | None = None,
) -> GameReport:
    """Play one whole game on an open connection; ``seat`` 0 is player 1 (speaks first).

    With a ``ledger``, a game id our key already signed a hello for is refused.
    With ``pinned`` (the key an invite named, or the one that proved the invite),
    a hello signed by any other key is refused as a possible man in the middle.

    With ``resume_info`` (how to reconnect: role, address, identity...), a
    sidecar file next to the replay keeps it and the secrets, so that
    ``basilica resume`` can finish the game after a crash.  ``on_start`` is
    told the replay's path once it exists; ``watch`` every event of our seat.
    """
    try:
        side, peer_name = await _handshake(conn, me, seat, settings, replay_dir, peers, log, ledger, resume_info,
                                           pinned)
    except ProtocolError as e:
        await conn.tell_error(f"bad hello: {e}")
        raise BadHello(f"the peer's hello is invalid: {e}") from None
    if on_start is not None:
        on_start(side.writer.path)
    try:
        return await continue_game(conn, agent, side, peer_name, log, watch)
    except PeerRefused as e:
        if len(side.records) > 2:
            raise
        # The peer refused right after the hellos (player 2 records the game before it
        # sends its hello; the peer then found a reason not to play, e.g. our name is
        # known to it with another key).  Nothing was played and the peer keeps no
        # replay: ours would only invite a 'resume' that ends in a forfeit claim.
        for path in (side.writer.path, side.sidecar):
            if path is not None:
                try:
                    path.unlink()
                except OSError:
                    pass
        raise PeerRefused(f"{printable(peer_name, 64)} refused to play: {e.reason}; no game was begun "
                          "and no replay kept", e.reason) from None


def resume_hint(replay: Path, seat: int, peer_name: str) -> str:
    """How both sides go on, naming each side's own file: the two replays of a game differ in name."""
    theirs = replay.name.replace(f"-p{seat + 1}.replay", f"-p{2 - seat}.replay")
    return (f"; to go on, both sides run 'basilica resume': here 'basilica resume {replay}', and "
            f"{printable(peer_name, 64)} its own copy, {theirs} in its replay folder")


def sidecar_path(replay: Path) -> Path:
    """A hidden file next to the replay: `basilica verify DIR/*` does not pick it up."""
    return replay.with_name("." + replay.name + ".session")


async def continue_game(conn: Connection, agent: object, side: _Side, peer_name: str,
                        log: Callable[[str], None], watch: Watch | None = None) -> GameReport:
    """Play the game of ``side`` to its end (a new game after its hellos, or a resumed one)."""
    seat = side.seat
    me = seat.me
    assert me is not None
    agent = as_agent(agent, seat)
    agent.begin(me, seat.spec.names, seat.spec.manifest)
    told = _Teller(agent, watch)
    if len(side.records) > 2:
        # A resumed game: the screen starts from where the game stands.
        told(seat.resumed())
    try:
        await _play(conn, agent, side, log, told)
    except PeerRefused:
        raise  # the peer stopped on purpose and said why: it will not resume
    except PeerGone as e:
        hint = resume_hint(side.writer.path, me, peer_name) if side.sidecar else ""
        raise type(e)(f"{e}{hint}") from None  # a CorruptedMessage stays one
    except (PeerMisbehaved, Refused):
        raise
    except SessionError as e:  # our own player failed: the peer should know it is not a network fault
        await conn.tell_error(f"the other side stopped: {e}")
        raise
    finally:
        side.writer.close()
    assert seat.outcome is not None
    # The sidecar stays until the peer is known to hold the result (see forget_session):
    # it may still need our last messages (basilica resume).
    game = seat.game
    if game is None:  # a forfeit before the setup
        game = Game.new(seat.spec.manifest, seat.spec.options, bytes(32))
    delivered = open_envelope(side.records[-1]).sender != seat.spec.players[me]
    return GameReport(side.writer.path, me, peer_name, seat.outcome, game, side.sidecar, delivered, seat.spec.clock)


class _Teller:
    """Tells our agent (and the watcher, if any) each event of our seat."""

    def __init__(self, agent: Agent, watch: Watch | None) -> None:
        self.agent, self.watch = agent, watch

    def __call__(self, events: tuple[SeatEvent, ...]) -> None:
        for event in events:
            self.agent.observe(event)
            if self.watch is not None:
                self.watch(event)


def forget_session(sidecar: Path | None) -> None:
    """Delete a finished game's session file once both sides hold the result: it exists only
    for ``basilica resume``, and a finished game has nothing left to resume."""
    if sidecar is None:
        return
    try:
        sidecar.unlink()
    except FileNotFoundError:
        return
    safefile.sync_directory(sidecar.parent)


async def _handshake(
    conn: Connection, me: Identity, seat: int, settings: Settings, replay_dir: Path,
    peers: KnownPeers | None, log: Callable[[str], None], ledger: GameLedger | None = None,
    resume_info: dict[str, Any] | None = None, pinned: bytes | None = None,
) -> tuple[_Side, str]:
    mine = hello_body(me, settings)
    deadline = trio.current_time() + conn.timeouts.handshake
    try:
        if seat == 0:
            game = os.urandom(32)
            await _claim_game_id(conn, ledger, me, game)
            first = seal(me.key, game, 0, GENESIS, "hello", mine)
            await conn.send_envelope(first.raw)
            second = open_envelope(await conn.receive_envelope(deadline))
            _check_hello(second, game, 1, first.hash)
            theirs = second.body
        else:
            first = open_envelope(await conn.receive_envelope(deadline))
            _check_hello(first, first.game, 0, GENESIS)
            theirs = first.body
            game = first.game
            if settings.clock is None and "clock" in theirs:
                # The clock is the host's to set (--clock): player 2 without one takes it.
                try:
                    settings = replace(settings, clock=TimeControl.from_wire(theirs["clock"]))
                except TimeControlError as e:
                    await conn.tell_error(f"bad clock in the hello: {e}")
                    raise BadHello(f"the peer's hello asks for an impossible clock: {e}") from None
                mine = hello_body(me, settings)
                log(f"clocks: {settings.clock} (minutes each, plus seconds per decision), as the host set them")
    except PeerTimeout:
        raise PeerGone(f"no hello within {conn.timeouts.handshake:g} s") from None
    except PeerMisbehaved as e:
        raise BadHello(f"{e} (instead of its hello: is the other side a basilica client?)") from None
    except (PeerBye, PeerRefused):
        raise  # a goodbye, or a peer that told us why it stopped: nothing to wait for
    except PeerGone as e:
        raise NoGameStarted(str(e)) from None
    except PeerClosed as e:
        raise NoGameStarted(f"the connection ended before the game began: {e}") from None
    diff = differences(mine, theirs)
    if diff:
        reason = "settings differ: " + "; ".join(diff)
        await conn.tell_error(reason)
        raise Refused(reason)
    peer_key = second.sender if seat == 0 else first.sender
    if pinned is not None and peer_key != pinned:
        reason = (f"the hello is signed by {fingerprint(peer_key)}, not by the invite's {fingerprint(pinned)}: "
                  "a possible man in the middle")
        await conn.tell_error(reason)
        raise Refused(reason)
    if peer_key == me.public:
        reason = "both sides use the same identity; give one of them its own --home or BASILICA_HOME"
        await conn.tell_error(reason)
        raise Refused(reason)
    if theirs["software"] != mine["software"]:
        log(f"note: the peer runs {theirs['software']}, we run {mine['software']}")
    if peers is not None:
        try:
            check = peers.check(theirs["name"], peer_key)
        except PeerKeyMismatch as e:
            if e.known_name is None or e.known_key is None:  # our known_peers.json is damaged: not the peer's fault
                await conn.tell_error("the other side cannot check keys: its list of known peers is damaged")
            else:
                await conn.tell_error(
                    f"your key ({fingerprint(peer_key)}) is not the one known here for the name "
                    f"{printable(e.known_name, 64)!r} ({fingerprint(e.known_key)}); if your key "
                    "changed, the other player can accept it with 'basilica peers trust', else play under "
                    "another name ('basilica id rename NAME')")
            raise Refused(str(e)) from None
        if check.new:
            log(f"first contact with {shown(theirs['name'])}: key {check.fingerprint} remembered")
    if seat == 1:
        await _claim_game_id(conn, ledger, me, game)
        second = seal(me.key, game, 1, first.hash, "hello", mine)
    names = (first.body["name"], second.body["name"])
    spec = GameSpec(game, (first.sender, second.sender), names, settings.options, settings.manifest,
                    settings.shuffle, settings.clock)
    # A hidden deal's secret is drawn now, by the seat, and written to the session file below
    # before the replay holds anything: every deal step and share of ours is a function of it,
    # so a resume must find the same one.
    secrets = SeatSecrets(deal=os.urandom(32)) if settings.shuffle == HIDDEN_DEAL else SeatSecrets()
    ours = Seat(spec, me, entropy=os.urandom, secrets=secrets)
    header = Header(settings.options.ruleset.value, settings.options.festum, settings.options.festum_removal,
                    bytes.fromhex(settings.manifest.hash), game, ((first.sender, names[0]), (second.sender, names[1])),
                    protocol=spec.protocol, shuffle=settings.shuffle, clock=settings.clock)
    path = replay_dir / f"{game.hex()[:16]}-{'p1' if seat == 0 else 'p2'}.replay"
    if path.exists():
        await conn.tell_error("that game id is already taken")
        raise Refused(f"the peer reuses the id of a game we already hold ({path})")
    try:
        writer = _protected(ReplayWriter.create, path, header)
    except OSError as e:
        await conn.tell_error("the other side cannot record the game")
        raise SessionError(f"cannot create {path}: {e.strerror}") from None
    side = _Side(ours, writer)
    if resume_info is not None:
        # Written before anything is recorded in the replay: a replay never exists without
        # the file that says how to resume it (a kill in between left one unresumable).
        side.sidecar = sidecar_path(path)
        side.info = dict(resume_info, peer=theirs["name"])
        side.save()
    for env in (first, second):
        got = ours.receive(env, known=True)
        if isinstance(got, SeatRefused):  # the spec is made of these very hellos
            raise ProtocolError(got.detail)
        _record(side, env.raw)
    if seat == 1:
        await conn.send_envelope(second.raw)  # recorded (and fsynced) before it is sent
    log(f"game {game.hex()[:16]}: {names[0]} (player 1) vs {names[1]} (player 2); replay {path}")
    return side, theirs["name"]


async def _claim_game_id(conn: Connection, ledger: GameLedger | None, me: Identity, game: bytes) -> None:
    """Never sign two hellos for one game id (net/ledger.py says why)."""
    if ledger is None:
        return
    try:
        fresh = ledger.claim(me.public, game)
    except LedgerError as e:
        await conn.tell_error("the other side cannot record the game")
        raise SessionError(str(e)) from None
    if not fresh:
        await conn.tell_error("that game id was used before: start a new game")
        raise Refused(f"the peer starts a game with the id of one we already played ({game.hex()[:16]}); "
                      "signing it again would make our key sign two histories of one game")


def _check_hello(env: Envelope, game: bytes, seq: int, prev: bytes) -> None:
    if env.type != "hello" or env.seq != seq or env.prev != prev or env.game != game:
        raise ProtocolError(f"expected the hello as message {seq}, got {env.type} {env.seq}")


async def _play(conn: Connection, agent: Agent, side: _Side, log: Callable[[str], None], told: _Teller) -> None:
    seat = side.seat
    me = seat.me
    assert me is not None
    if conn.timeouts.move is not None:
        agent.limit_time(NETWORK_SHARE * conn.timeouts.move)  # a cmd: bot answers before a --move-time claim
    while not seat.finished:
        step = seat.due()
        # A decision is timed from the moment this side's seat says it is due (not while the
        # peer sends back what our file lost after a resume).
        timed = step.decision and not side.resent
        if timed:
            told(seat.begin(trio.current_time()))
        if step.who == me and not side.resent:
            if not await _send_own(conn, agent, side, log, told):
                return
        else:
            if not await _take_peers(conn, agent, side, step.kind, timed, log, told):
                return


async def _send_own(conn: Connection, agent: Agent, side: _Side, log: Callable[[str], None], told: _Teller) -> bool:
    """Make, record and send our due message; False when the game ended on our side (we resigned,
    or our flag fell and the peer's claim came)."""
    seat = side.seat
    step = seat.due()
    made: Outgoing | Late
    if step.decision:
        answer = await _decide(conn, agent, side)
        if answer is None:  # our flag fell at the prompt: we never send late
            told(seat.stop_own_clock(trio.current_time()))
            await _await_claim(conn, side, log, told)
            return False
        if isinstance(answer, Resign):
            # Our player failed (raised, answered an illegal action; a cmd: bot also
            # crashed, hung or broke its protocol) or left: we resign, signed, so that both
            # replays end as a finished game (docs/bots.md).
            log(f"{answer.told}: we forfeit this game")
            await _record_final(conn, side, seat.resign(answer.public_reason or answer.reason), told)
            return False
        made = await _made(conn, seat, answer)
    else:
        made = await _made(conn, seat, None)
    if isinstance(made, Late):
        told(made.events)
        await _await_claim(conn, side, log, told)
        return False
    if made.secrets is not None:
        side.save()  # a secret must survive a crash, or its reveal could never come
    # An acknowledgement is a function of the state, and Ed25519 signing is deterministic:
    # if a power loss takes it before our next fsync, the peer holds the very same bytes and
    # sends them back on resume.  So it goes out first; everything we choose is durable
    # before it is sent.
    _record(side, made.envelope.raw, sync=step.kind is not StepKind.ACK)
    await conn.send_envelope(made.envelope.raw)
    told(made.events)
    if step.kind is StepKind.ACTION:
        _start_prefetch(conn, agent, side)
        # A round trip is timed only when we did not think meanwhile, so it measures the
        # network and the peer, not our own next decision.
        conn._sent_at = trio.current_time() if side.prefetch is None else None
    return True


async def _made(conn: Connection, seat: Seat, answer: Action | None) -> Outgoing | Late:
    try:
        return seat.make(answer, trio.current_time())
    except OwnMessageRefused as e:
        # Not the peer's doing as far as we can show (the peer's messages were all
        # accepted): say so in one line rather than with a traceback.
        await conn.tell_error("the other side stopped: its own next message was refused")
        raise SessionError(str(e)) from None


async def _take_peers(conn: Connection, agent: Agent, side: _Side, kind: StepKind, timed: bool,
                      log: Callable[[str], None], told: _Teller) -> bool:
    """Read, check and record the peer's due message; False when the game ended on our side (a
    claim of ours on time or by absence)."""
    seat = side.seat
    # A decision may take a person's time (unlimited unless --move-time); every other
    # message needs no thinking and is due within the handshake timeout.
    thinking = kind in (StepKind.ACTION, StepKind.JCOMMIT) and not side.resent
    limit = conn.timeouts.move if thinking else conn.timeouts.handshake
    deadline = None if limit is None else trio.current_time() + limit
    lag = lag_allowance(conn.round_trips)
    flag_at = seat.peer_deadline(lag) if timed else None
    try:
        raw = await conn.receive_envelope(flag_at if deadline is None else min(deadline, flag_at or deadline))
    except PeerTimeout as e:
        # (a hair of float slack: the wait ends at now + (flag_at - now), which may round below)
        if flag_at is not None and trio.current_time() >= flag_at - 1e-6:
            await _record_final(conn, side, seat.claim_on_time(trio.current_time(), lag), told)
            return False
        late = deadline is not None and trio.current_time() >= deadline
        game = seat.game
        # A hidden deal's secrets come after the board's decision but before the
        # results (PROTOCOL.md §5b): one withheld is an absence like any other.
        if late and (kind is StepKind.SECRET or not (game is not None and game.over)):
            what = "decision" if thinking else kind.value
            await _record_final(conn, side, seat.claim_forfeit(f"no {what} within {limit:g} s"), told)
            return False
        raise PeerGone(str(e)) from None
    except PeerClosed as e:
        raise PeerGone(f"the connection ended: {e}") from None
    # While catching up, a message may be one of ours that our replay lost (see
    # _send_own); only we can have signed it, and the seat checks it.
    got = await _accept(conn, side, raw, lag)
    side.resent = max(0, side.resent - 1)
    if kind is StepKind.ACK and conn._sent_at is not None:
        conn.round_trips.append(trio.current_time() - conn._sent_at)
        if conn.measured is not None:
            conn.measured.append(conn.round_trips[-1])
        conn._sent_at = None
    told(got)
    return True


def _start_prefetch(conn: Connection, agent: Agent, side: _Side) -> None:
    """If the next decision of the game is ours and certain, choose it now (a bot's, inline)."""
    if conn.nursery is None or agent.traits.blocking:
        return  # a person (or a program) at a prompt is asked when the time comes, not ahead of it
    ask = side.seat.ask_ahead()
    if ask is None or (side.prefetch is not None and side.prefetch.ply == ask.ply):
        return
    # Chosen right away, before we wait for the acknowledgement: the peer checks,
    # records and acknowledges in its own process meanwhile, and its answer waits
    # in the socket.  (A thread would only add a hand-off and contend for the GIL.)
    side.prefetch = _Prefetch(ask.ply, agent.choose(ask))


async def _accept(conn: Connection, side: _Side, raw: bytes, lag: float) -> tuple[SeatEvent, ...]:
    """Have the seat take the peer's envelope and record it; on any flaw, tell the peer, keep the
    evidence, disconnect."""
    got = side.seat.receive(raw, trio.current_time(), lag, ours_ok=bool(side.resent))
    seat = side.seat
    assert seat.me is not None
    if (isinstance(got, SeatRefused) and got.kind is Refusal.INVALID
            and not signed_by(raw, seat.spec.players[1 - seat.me])):
        # No signature of the peer's holds it together: nothing shows the peer sent it so.
        if conn.framed.checked_in:  # its frame's checksum held: changed on purpose on the way, or a broken client
            why = "something between us changed it, or the peer's client is broken"
        else:  # an older peer's frames carry no checksum
            why = "the connection corrupted it, or the peer's client is broken"
        if conn.framed.checked_out:
            await conn.tell_corrupted()
        else:
            await conn.tell_error(got.notice)
        raise CorruptedMessage(f"a message came that the peer did not sign ({got.detail}): {why}; "
                               "not counted against the peer")
    if isinstance(got, SeatRefused):
        await conn.tell_error(got.notice)
        if got.kind is Refusal.EQUIVOCATION:
            assert got.evidence is not None
            path = write_evidence(side, *got.evidence)
            raise PeerMisbehaved(f"{got.reason}; evidence in {path}")
        if got.kind is Refusal.CROSSED:
            raise Refused(got.reason)
        raise PeerMisbehaved(got.reason)
    # Recorded now; made durable by the fsync of our next own record, which comes before
    # anything we send in answer (so before we acknowledge it).
    _record(side, raw, sync=False)
    return got.events


def lag_allowance(round_trips: Sequence[float]) -> float:
    """Seconds taken off the peer's measured thinking: the median of the last LAG_SAMPLES round
    trips, at most MAX_LAG."""
    if not round_trips:
        return FIRST_LAG
    ordered = sorted(list(round_trips)[-LAG_SAMPLES:])
    return min(MAX_LAG, ordered[len(ordered) // 2])


async def _await_claim(conn: Connection, side: _Side, log: Callable[[str], None], told: _Teller) -> None:
    """After our own flag fell: the peer's claim (or resignation) is all that may come."""
    log("our clock ran out: waiting for the other side's claim on time")
    deadline = trio.current_time() + conn.timeouts.handshake + MAX_LAG
    while not side.seat.finished:
        try:
            raw = await conn.receive_envelope(deadline)
        except PeerTimeout:
            raise PeerGone("our clock ran out and the other side made no claim on time") from None
        told(await _accept(conn, side, raw, 0.0))


async def _record_final(conn: Connection, side: _Side, out: Outgoing, told: _Teller) -> None:
    """Record and (best effort) send the message that ends the game."""
    _record(side, out.envelope.raw)
    with trio.move_on_after(2):
        try:
            await conn.send_envelope(out.envelope.raw)
        except (PeerClosed, PeerGone):
            pass  # recorded and signed; the peer learns it on resume or from its own replay
    told(out.events)


async def _decide(conn: Connection, agent: Agent, side: _Side) -> Action | Resign | None:
    """Our player's decision (taken from a prefetch when one was made for it); None if a person's
    clock ran out at the prompt; :class:`PeerGone` if the connection breaks meanwhile."""
    seat = side.seat
    ask = seat.ask()
    assert ask is not None
    pre, side.prefetch = side.prefetch, None
    if pre is not None and pre.ply == ask.ply:
        answer: Decision = pre.decision
    else:
        answer = await _ask(conn, agent, seat, ask)
    while isinstance(answer, TakeBack):
        # Takebacks are for local games only (docs/playing.md); a client that offers one here
        # is asked again.
        answer = await _ask(conn, agent, seat, ask)
    return answer


async def _ask(conn: Connection, agent: Agent, seat: Seat, ask: Ask) -> Decision | None:
    if not agent.traits.blocking:
        return agent.choose(ask)
    if conn.broken:
        raise PeerGone("the other side has gone: the connection broke")
    # A person (or a program) thinks in a worker thread, so that keepalives flow meanwhile.
    until = seat.own_deadline()
    with trio.CancelScope(deadline=until if until is not None else float("inf")) as scope:
        conn.deciding = scope
        try:
            return await trio.to_thread.run_sync(agent.choose, ask, abandon_on_cancel=True)
        finally:
            conn.deciding = None
    if until is not None and trio.current_time() >= until:
        return None
    raise PeerGone("the other side has gone: the connection broke while you were deciding")


def write_evidence(side: _Side, a: bytes, b: bytes) -> Path:
    """Two different envelopes signed by one key for one sequence number, as a
    ``basilica-evidence/2`` proof next to the replay (a new file: never through a link)."""
    from ..replay.evidence import write_evidence as write_proof

    accused = open_envelope(a).sender
    hello = next((r for r in side.records[:2] if open_envelope(r).sender == accused), None)
    base = side.writer.path.with_suffix(".evidence")
    for n in range(1, 100):
        path = base if n == 1 else base.with_name(f"{base.stem}-{n}.evidence")
        try:
            write_proof(path, [a], [b], hello)
            return path
        except FileExistsError:
            continue
    raise SessionError(f"cannot write the evidence next to {side.writer.path}: too many evidence files")


async def resume_exchange(conn: Connection, side: _Side, log: Callable[[str], None]) -> None:
    """After reconnecting: say how many messages we hold, learn the peer's, resend what it lacks.

    Both replays are prefixes of one chain, so the side that holds more
    holds everything the other has; what it resends comes from its file,
    byte for byte, never made again.  That may include the other side's own
    acknowledgements, sent before they were fsynced (see ``_send_own``).  What
    the peer resends comes in through the normal checks of the play loop.
    """
    import hashlib

    game = side.seat.spec.game
    have = len(side.records)
    tip = hashlib.sha256(side.records[-1]).digest()
    await conn.framed.send_control("resume", game=game, have=have, tip=tip)
    msg = await conn.receive_resume(trio.current_time() + conn.timeouts.handshake)
    if msg["game"] != game:
        await conn.tell_error("that is another game")
        raise Refused("the peer that reconnected is playing another game")
    theirs = msg["have"]
    if not isinstance(theirs, int) or isinstance(theirs, bool) or theirs < 2:
        raise PeerMisbehaved("the peer's resume notice is malformed")
    if theirs == have and msg["tip"] != tip:
        # Same length, different last message (e.g. a move-time forfeit that crossed
        # an action in flight): the two records have parted and cannot be joined.
        await conn.tell_error(f"our records differ at message {have - 1}")
        raise Refused(f"the two sides' records differ at message {have - 1}: the game cannot go on; "
                      "both replays stay valid up to the message before")
    log(f"resuming game {game.hex()[:16]}: we hold {have} messages, the peer {theirs}")
    side.resent = max(0, theirs - have)
    for raw in side.records[theirs:]:
        await conn.send_envelope(raw)


def side_from_replay(path: Path, manifests: dict[str, Manifest], me: Identity) -> tuple[_Side, int]:
    """Rebuild a side from its replay (a torn tail is cut off first) and its sidecar.

    The replay is walked into a live seat with our secrets from the sidecar: for a
    hidden deal, fed the replay, it remakes our own deal steps and checks they are
    the recorded ones, and can make the next ones exactly as before the break.
    """
    import json

    from ..replay.file import ReplayError
    from ..replay.walk import seat_for, spec_from_replay, walk

    writer, replay = ReplayWriter.open_append(path)
    sidecar = sidecar_path(path)
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    try:
        spec = spec_from_replay(replay, manifests)
        if spec.player_of(me.public) is None:
            writer.close()
            raise Refused(f"{path} is not a game of this identity ({me.name})")
        secrets = _secrets_of(data)
        if spec.shuffle == HIDDEN_DEAL and not secrets.deal:
            # Without our deal secret the seat could not remake our deal steps: the file is
            # checked as a verifier would, and only a finished game can be taken as it is.
            verifier = seat_for(replay, manifests, views=False)
            refused = walk(replay, verifier)
            if refused is not None:
                raise _record_error(replay, verifier, refused)
            if not verifier.finished:
                writer.close()
                raise Refused(f"{sidecar} holds no deal secret for this game dealt by {HIDDEN_DEAL}: without it "
                              "our next deal step, share or secret cannot be made, so the game cannot go on")
            secrets = SeatSecrets(secrets.nonce, secrets.jester, b"")
        ours = seat_for(replay, manifests, me, secrets)
        refused = walk(replay, ours)
        if refused is not None:
            raise _record_error(replay, ours, refused)
    except ReplayError:
        writer.close()
        raise
    if ours.clocks is not None:
        # After a break each clock goes on from its owner's last signed figure: the time
        # the break took is nobody's thinking (docs/clocks.md).
        ours.clocks.left = list(ours.referee.signed)
    side = _Side(ours, writer, sidecar)
    side.info = {k: v for k, v in data.items() if k not in ("format", "nonce", "jester", "deal_secret")}
    assert ours.me is not None
    return side, ours.me


def _secrets_of(data: dict[str, Any]) -> SeatSecrets:
    """Our secrets as the sidecar keeps them; what is missing or malformed is left out."""
    def hexed(value: object, size: int | None = None) -> bytes:
        try:
            raw = bytes.fromhex(value) if isinstance(value, str) else b""
        except ValueError:
            return b""
        return raw if size is None or len(raw) == size else b""

    j = data.get("jester")
    jester = (j[0], hexed(j[1])) if isinstance(j, list) and len(j) == 2 and isinstance(j[0], str) else None
    return SeatSecrets(hexed(data.get("nonce")), jester, hexed(data.get("deal_secret"), 32))


def _record_error(replay: Any, seat: Seat, refused: SeatRefused) -> Exception:
    from ..replay.file import ReplayError

    number = len(seat.records) + 1
    return ReplayError(number, replay.offsets[number], refused.detail)
