"""One game between two peers over a framed connection, in lockstep: the seat's network driver.

Each side's :class:`~basilica_p2p.seat.Seat` says whose message comes next.
If it is ours, the seat makes it (asking our agent for a decision), we
append it to the replay (fsynced) and only then send it.  If it is the
peer's, we read it, the seat checks and takes it, we append it, and answer
in the next round.  So each replay always holds a valid prefix of the game,
whatever the network or the peer does, and both end up with the same
records.  This module holds the play loop of a network game: deadlines per
decision, the lag allowance and claims, choosing ahead, refusals, faults and
their evidence; the protocol itself is the seat's, the handshake is in
net/handshake.py, the frames' rules in net/connection.py, the wait for a peer
that went away in net/presence.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..agent import Agent, Decision, Resign, TakeBack, as_agent
from ..bots import NETWORK_SHARE
from ..clock import Limits, TimeControl
from ..engine import Action, Game
from ..identity import Identity
from ..referee import GameSpec, Outcome
from ..seat import (
    Ask,
    Late,
    Outgoing,
    OwnMessageRefused,
    Refusal,
    Seat,
    SeatEvent,
    Step,
    StepKind,
    TimeWarning,
    Watching,
)
from ..seat import Refused as SeatRefused
from ..printable import printable
from ..wire import ProtocolError, open_envelope, signed_by
from .chat import Chat, is_chat, listen_while_deciding
from .connection import (
    LAG_SAMPLES,
    BadHello,
    Connection,
    CorruptedMessage,
    NoGameStarted,
    PeerGone,
    PeerMisbehaved,
    PeerRefused,
    Refused,
    SessionError,
    Timeouts,
)
from .framing import PeerClosed, PeerTimeout
from ..replay import Header
from .handshake import Settings, differences, handshake, hello_body
from .ledger import GameLedger
from ..known_peers import KnownPeers
from .watch import WatchHub
from .presence import (
    Presence,
    away_while_deciding,
    claim_absence,
    forfeit_by_absence,
    presence_of,
    resume_exchange,
    wait_for_return,
)
from .side import (
    Prefetch,
    Side,
    forget_session,
    side_from_replay,
    sidecar_path,
    write_private_json,
)

# Told each event of our seat, beside our agent (the demo's printout, a test's record).
Watch = Callable[[SeatEvent], None]

# The lag allowance taken off the peer's measured thinking time: the round trip measured
# between an action and its acknowledgement, this much before any was measured, and never
# more than MAX_LAG (a peer that slows its acknowledgements cannot buy more; docs/clocks.md).
FIRST_LAG = 0.5
MAX_LAG = 2.0
# A decision's agreed limit (protocol 3, no clock) is claimed this much after it ends: the side
# that ran out resigns at the limit by its own measure, and its resignation must not cross our
# claim.  The person who decides is warned WARNING seconds before, and so is the one who waits.
GRACE = MAX_LAG + 3.0
WARNING = 60.0


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
    limits: Limits | None = None  # the game's agreed limits (a joiner takes the host's)
    # Still open after the game, until both players answered whether to play again: close it then.
    chat: Chat | None = field(default=None, repr=False, compare=False)


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
    presence: Callable[[Side], Presence | None] | None = None,
    hub: WatchHub | None = None,
) -> GameReport:
    """Play one whole game on an open connection; ``seat`` 0 is player 1 (speaks first).

    With a ``ledger``, a game id our key already signed a hello for is refused.
    With ``pinned`` (the key an invite named, or the one that proved the invite),
    a hello signed by any other key is refused as a possible man in the middle.

    With ``resume_info`` (how to reconnect: role, address, identity...), a
    sidecar file next to the replay keeps it and the secrets, so that
    ``basilica resume`` can finish the game after a crash, and when the peer
    goes away this side waits for it to come back (``presence`` says how, from
    the side; by default from the session file).  ``on_start`` is told the
    replay's path once it exists; ``watch`` every event of our seat.  With a ``hub`` (a host
    that lets people watch) every record goes to the watchers too.
    """
    try:
        side, peer_name = await handshake(conn, me, seat, settings, replay_dir, peers, log, ledger, resume_info,
                                           pinned)
    except ProtocolError as e:
        await conn.tell_error(f"bad hello: {e}")
        raise BadHello(f"the peer's hello is invalid: {e}") from None
    if on_start is not None:
        on_start(side.writer.path)
    if hub is not None:
        hub.begin(Header.of(side.seat.spec).encode(), side.records)
        side.tap = hub.publish
    waits = (presence or (lambda sd: presence_of(sd, conn.timeouts, log)))(side)
    try:
        return await continue_game(conn, agent, side, peer_name, log, watch, waits, hub)
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


async def continue_game(conn: Connection, agent: object, side: Side, peer_name: str,
                        log: Callable[[str], None], watch: Watch | None = None,
                        presence: Presence | None = None, hub: WatchHub | None = None) -> GameReport:
    """Play the game of ``side`` to its end (a new game after its hellos, or a resumed one).
    With ``presence``, a peer that goes away is waited for, and claimed against once its window
    is over; without, a broken connection ends the call with a resume hint."""
    seat = side.seat
    me = seat.me
    assert me is not None
    agent = as_agent(agent)
    agent.begin(me, seat.spec.names, seat.spec.manifest)
    told = Teller(agent, watch)
    if len(side.records) > 2:
        # A resumed game: the screen starts from where the game stands.
        told(seat.resumed())
    chat = Chat(conn, side, told, log)
    if conn.chat and agent.traits.chats and seat.spec.limits is not None:
        chat.open(agent)
    _open_watching(conn, agent, told, hub)
    # Lines of chat may still be said after the game while both players are asked about another
    # (net/again.py): the chat, and the replay with it, stay open until then.
    lingering = False
    try:
        await _play(conn, agent, side, log, told, presence, chat)
        lingering = conn.again and conn.peer_again
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
        if not lingering:
            chat.close()
    assert seat.outcome is not None
    # The sidecar stays until the peer is known to hold the result (see forget_session):
    # it may still need our last messages (basilica resume).
    game = seat.game
    if game is None:  # a forfeit before the setup
        game = Game.new(seat.spec.manifest, seat.spec.options, bytes(32))
    delivered = open_envelope(side.records[-1]).sender != seat.spec.players[me]
    return GameReport(side.writer.path, me, peer_name, seat.outcome, game, side.sidecar, delivered, seat.spec.clock,
                      seat.spec.limits, chat if lingering else None)


def _open_watching(conn: Connection, agent: Agent, told: Teller, hub: WatchHub | None) -> None:
    """Who watches is told to our player (and, from the host, to a joiner that takes it), and a
    person may send the watchers away: the host's hub at once, a joiner by asking the host."""
    if hub is not None:
        joiner = _WatchersToJoiner(conn)

        def changed(names: tuple[str, ...]) -> None:
            told((Watching(names),))
            joiner.tell(names)

        hub.changed = changed
        conn.on_unwatch = lambda: hub.close_watching("the other player closed watching")
        if hub.watchers:
            changed(hub.names)
        if agent.traits.chats:
            agent.open_watching(_from_thread(lambda: hub.close_watching("the host closed watching")))
    elif conn.watch:
        conn.on_watchers = lambda names: told((Watching(names),))
        if agent.traits.chats and conn.nursery is not None:
            async def unwatch() -> None:
                try:
                    await conn.framed.send_control("unwatch")
                except (PeerClosed, PeerTimeout):
                    pass

            agent.open_watching(_from_thread(lambda: conn.nursery.start_soon(unwatch) if conn.nursery else None))


class _WatchersToJoiner:
    """Sends the joiner who watches, the latest names only and in order, by one task at a time."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.latest: tuple[str, ...] | None = None
        self.sending = False

    def tell(self, names: tuple[str, ...]) -> None:
        if not self.conn.peer_watch or self.conn.nursery is None:
            return
        self.latest = names
        if not self.sending:
            self.sending = True
            self.conn.nursery.start_soon(self._send)

    async def _send(self) -> None:
        try:
            while self.latest is not None:
                names, self.latest = self.latest, None
                try:
                    await self.conn.framed.send_control("watching", names=list(names))
                except (PeerClosed, PeerTimeout):
                    return  # the play loop says what became of the connection
        finally:
            self.sending = False


def _from_thread(fn: Callable[[], object]) -> Callable[[], str | None]:
    """``fn`` run in trio's thread, callable from a person's thread; why not, when the game is gone."""
    token = trio.lowlevel.current_trio_token()

    def call() -> str | None:
        try:
            trio.from_thread.run_sync(fn, trio_token=token)
        except trio.RunFinishedError:
            return "the game's connection is closed"
        return None

    return call


class Teller:
    """Tells our agent (and the watcher, if any) each event of our seat, and the driver's own."""

    def __init__(self, agent: Agent, watch: Watch | None) -> None:
        self.agent, self.watch = agent, watch

    def __call__(self, events: tuple[SeatEvent, ...]) -> None:
        for event in events:
            self.agent.observe(event)
            if self.watch is not None:
                self.watch(event)


def _decision_limit(spec: GameSpec, timeouts: Timeouts) -> float | None:
    """Seconds a decision may take before the other side claims the game: the agreed limit of a
    network game without a clock; ``--move-time`` for a resumed game of protocol 1 or 2; none
    with a clock, which bounds decisions itself."""
    if spec.clock is not None:
        return None
    if spec.limits is not None:
        return float(spec.limits.decision)
    return timeouts.move


async def _play(conn: Connection, agent: Agent, side: Side, log: Callable[[str], None], told: Teller,
                presence: Presence | None, chat: Chat) -> None:
    seat = side.seat
    me = seat.me
    assert me is not None
    limit = _decision_limit(seat.spec, conn.timeouts)
    if limit is not None:
        agent.limit_time(NETWORK_SHARE * limit)  # a cmd: bot answers before the other side may claim
    while not seat.finished:
        step = seat.due()
        if side.due is None or side.due[0] != seat.referee.seq:
            side.due = (seat.referee.seq, trio.current_time())
        # A decision is timed from the moment this side's seat says it is due (not while the
        # peer sends back what our file lost after a resume).
        timed = step.decision and not side.resent
        if timed:
            told(seat.begin(side.due[1]))
        try:
            if step.who == me and not side.resent:
                going = await _send_own(conn, agent, side, log, told, presence, chat)
            else:
                going = await _take_peers(conn, side, step, timed, log, told, presence, chat)
        except PeerGone as e:
            if isinstance(e, PeerRefused) or presence is None:
                raise
            going = await wait_for_return(conn, side, presence, log, told, str(e))
        if not going:
            return


async def _send_own(conn: Connection, agent: Agent, side: Side, log: Callable[[str], None], told: Teller,
                    presence: Presence | None, chat: Chat) -> bool:
    """Make, record and send our due message; False when the game ended on our side (we resigned,
    our flag fell and the peer's claim came, or the peer did not come back while we decided)."""
    seat = side.seat
    step = seat.due()
    made: Outgoing | Late
    answer: Action | Resign | None = None
    if step.decision:
        answer = await _decide(conn, agent, side, log, told, presence, chat)
        if seat.finished:  # the peer went away while we decided and did not come back: claimed
            return False
        if answer is None:  # our flag fell at the prompt: we never send late
            told(seat.stop_own_clock(trio.current_time()))
            await _await_claim(conn, side, log, told, chat)
            return False
        if isinstance(answer, Resign):
            # Our player failed (raised, answered an illegal action; a cmd: bot also
            # crashed, hung or broke its protocol), left, or ran out of its agreed time: we
            # resign, signed, so that both replays end as a finished game (docs/bots.md).
            log(f"{answer.told}: we forfeit this game")
            await _record_final(conn, side, seat.resign(answer.public_reason or answer.reason), told)
            return False
    # Made, recorded and sent before any line of chat is said after it (net/chat.py).
    async with conn.order:
        assert not isinstance(answer, Resign)
        made = await _made(conn, seat, answer)
        if isinstance(made, Late):
            told(made.events)
        else:
            if made.secrets is not None:
                side.save()  # a secret must survive a crash, or its reveal could never come
            # An acknowledgement is a function of the state, and Ed25519 signing is deterministic:
            # if a power loss takes it before our next fsync, the peer holds the very same bytes and
            # sends them back on resume.  So it goes out first; everything we choose is durable
            # before it is sent.
            side.record(made.envelope.raw, sync=step.kind is not StepKind.ACK)
            try:
                await conn.send_envelope(made.envelope.raw)  # recorded: a break here loses nothing (resume sends it)
            finally:
                told(made.events)
    if isinstance(made, Late):
        await _await_claim(conn, side, log, told, chat)
        return False
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


async def _take_peers(conn: Connection, side: Side, step: Step, timed: bool, log: Callable[[str], None],
                      told: Teller, presence: Presence | None, chat: Chat) -> bool:
    """Read, check and record the peer's due message; False when the game ended on our side (a
    claim of ours on time, by the agreed limit, or by absence)."""
    seat = side.seat
    spec, kind = seat.spec, step.kind
    assert side.due is not None and seat.me is not None
    since = side.due[1]
    handshake = conn.timeouts.handshake
    # A decision may take a person's time (the agreed limit, or the clock); every other message
    # needs no thinking and is due within the handshake timeout.  In a network game (protocol 3)
    # a message that needs no thinking and does not come is first a network that stalled: the
    # connection is made again, and only a peer that stays away past the window is claimed.
    thinking = step.decision and not side.resent
    lag = lag_allowance(conn.round_trips)
    flag_at = seat.peer_deadline(lag) if timed else None
    stall_at: float | None = None
    warn_at: float | None = None
    if thinking:
        limit = _decision_limit(spec, conn.timeouts)
        claim_at = None if limit is None else since + limit + (GRACE if spec.limits is not None else 0.0)
        if limit is not None and spec.limits is not None and limit > 2 * WARNING:
            warn_at = since + limit - WARNING
        what = "decision" if limit is None else \
            f"decision within {limit:g} s" + (" (the agreed limit)" if spec.limits is not None else "")
    elif spec.limits is not None and presence is not None:
        claim_at = since + presence.seconds(spec)
        stall_at = trio.current_time() + handshake
        what = f"{kind.value} within {presence.seconds(spec):g} s"
    else:
        claim_at = trio.current_time() + handshake
        what = f"{kind.value} within {handshake:g} s"
    while True:
        wake = min([t for t in (claim_at, flag_at, stall_at, warn_at) if t is not None], default=None)
        try:
            raw = await conn.receive_envelope(wake)
            if is_chat(raw):  # beside the game: heard, and the wait goes on
                chat.hear(raw)
                continue
            break
        except PeerTimeout as e:
            now = trio.current_time()
            # (a hair of float slack: the wait ends at now + (t - now), which may round below)
            if flag_at is not None and now >= flag_at - 1e-6:
                await _record_final(conn, side, seat.claim_on_time(now, lag), told)
                return False
            if warn_at is not None and now >= warn_at - 1e-6:
                told((TimeWarning(1 - seat.me, WARNING),))
                warn_at = None
                continue
            if claim_at is not None and now >= claim_at - 1e-6:
                game = seat.game
                # A hidden deal's secrets come after the board's decision but before the
                # results (PROTOCOL.md §5b): one withheld is an absence like any other.
                if kind is StepKind.SECRET or not (game is not None and game.over):
                    await _record_final(conn, side, seat.claim_forfeit(f"no {what}"), told)
                    return False
                raise PeerGone(str(e)) from None
            if stall_at is not None and now >= stall_at - 1e-6:
                raise PeerGone(f"no {kind.value} for {handshake:g} s with the connection open") from None
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


def _start_prefetch(conn: Connection, agent: Agent, side: Side) -> None:
    """If the next decision of the game is ours and certain, choose it now (a bot's, inline)."""
    if conn.nursery is None or agent.traits.blocking:
        return  # a person (or a program) at a prompt is asked when the time comes, not ahead of it
    ask = side.seat.ask_ahead()
    if ask is None or (side.prefetch is not None and side.prefetch.ply == ask.ply):
        return
    # Chosen right away, before we wait for the acknowledgement: the peer checks,
    # records and acknowledges in its own process meanwhile, and its answer waits
    # in the socket.  (A thread would only add a hand-off and contend for the GIL.)
    side.prefetch = Prefetch(ask.ply, agent.choose(ask))


async def _accept(conn: Connection, side: Side, raw: bytes, lag: float) -> tuple[SeatEvent, ...]:
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
    if isinstance(got, SeatRefused) and got.citable:
        fault = _fault(side.seat, got.citable)
        if fault is not None:
            # Signed proof that the peer broke the rules: the game ends here, won by it.
            await conn.tell_error(f"{got.notice}: the game is recorded as your loss, with that message as proof")
            return await _record_final(conn, side, fault)
    if isinstance(got, SeatRefused) and raw in side.records:
        # A copy of a message we hold, come again: the way between us duplicated it (a peer
        # that means harm gains nothing by it), so it is the connection's fault, not the peer's.
        raise CorruptedMessage(f"a copy of message {side.records.index(raw)} came again: the connection "
                               "duplicated it; not counted against the peer")
    if isinstance(got, SeatRefused):
        await conn.tell_error(got.notice)
        if got.kind is Refusal.CROSSED:
            raise Refused(got.reason)
        why = got.reason
        if got.kind is Refusal.EQUIVOCATION:
            assert got.evidence is not None
            why = f"{got.reason}; evidence in {write_evidence(side, *got.evidence).name}"
        if got.kind is not Refusal.NOT_PEER:
            # The peer's own signature is on what it sent, and it is no message a player may send
            # here: it stopped playing by the rules.  No message of ours can prove it (a fault can
            # cite only the message due), so we claim the game, saying why.
            claim = _claim(seat, f"stopped playing by the rules: {why}")
            if claim is not None:
                return await _record_final(conn, side, claim)
        raise PeerMisbehaved(why)
    # Recorded now; made durable by the fsync of our next own record, which comes before
    # anything we send in answer (so before we acknowledge it).
    side.record(raw, sync=False)
    return got.events


def _claim(seat: Seat, reason: str) -> Outgoing | None:
    """Our claim that the peer forfeits, for ``reason`` (cut to the 200 characters a forfeit
    holds); None where no forfeit may stand (after the board decided: only results follow)."""
    text = printable(reason, 200)
    try:
        return seat.claim_forfeit(text if len(text) <= 200 else text[:199] + "…")
    except OwnMessageRefused:
        return None


def _fault(seat: Seat, cited: bytes) -> Outgoing | None:
    """Our fault citing ``cited``; None if our own referee will not take it (then we only stop)."""
    try:
        return seat.claim_fault(cited)
    except OwnMessageRefused:
        return None


def lag_allowance(round_trips: Sequence[float]) -> float:
    """Seconds taken off the peer's measured thinking: the median of the last LAG_SAMPLES round
    trips, at most MAX_LAG."""
    if not round_trips:
        return FIRST_LAG
    ordered = sorted(list(round_trips)[-LAG_SAMPLES:])
    return min(MAX_LAG, ordered[len(ordered) // 2])


async def _await_claim(conn: Connection, side: Side, log: Callable[[str], None], told: Teller,
                       chat: Chat) -> None:
    """After our own flag fell: the peer's claim (or resignation) is all that may come."""
    log("our clock ran out: waiting for the other side's claim on time")
    deadline = trio.current_time() + conn.timeouts.handshake + MAX_LAG
    while not side.seat.finished:
        try:
            raw = await conn.receive_envelope(deadline)
        except PeerTimeout:
            raise PeerGone("our clock ran out and the other side made no claim on time") from None
        if is_chat(raw):
            chat.hear(raw)
        else:
            told(await _accept(conn, side, raw, 0.0))


async def _record_final(conn: Connection, side: Side, out: Outgoing, told: Teller | None = None) -> tuple[SeatEvent, ...]:
    """Record and (best effort) send the message that ends the game; its events, told if ``told``."""
    async with conn.order:
        side.record(out.envelope.raw)
        with trio.move_on_after(2):
            try:
                await conn.send_envelope(out.envelope.raw)
            except (PeerClosed, PeerGone):
                pass  # recorded and signed; the peer learns it on resume or from its own replay
    if told is not None:
        told(out.events)
    return out.events


async def _decide(conn: Connection, agent: Agent, side: Side, log: Callable[[str], None], told: Teller,
                  presence: Presence | None, chat: Chat) -> Action | Resign | None:
    """Our player's decision (taken from a prefetch when one was made for it); None if a person's
    clock ran out at the prompt; a :class:`Resign` if it ran past the agreed limit.  Without
    ``presence``, :class:`PeerGone` if the connection breaks meanwhile; with it, the person goes
    on deciding while we wait for the peer to come back (if it does not, our claim ends the
    game: ``side.seat.finished``)."""
    seat = side.seat
    ask = seat.ask()
    assert ask is not None
    pre, side.prefetch = side.prefetch, None
    if pre is not None and pre.ply == ask.ply:
        answer: Decision | None = pre.decision
    else:
        answer = await _ask(conn, agent, side, ask, log, told, presence, chat)
    while isinstance(answer, TakeBack):
        # Takebacks are for local games only (docs/playing.md); a client that offers one here
        # is asked again.
        answer = await _ask(conn, agent, side, ask, log, told, presence, chat)
    return answer


async def _ask(conn: Connection, agent: Agent, side: Side, ask: Ask, log: Callable[[str], None], told: Teller,
               presence: Presence | None, chat: Chat) -> Decision | None:
    seat = side.seat
    if not agent.traits.blocking:
        return agent.choose(ask)
    if conn.broken and presence is None:
        raise PeerGone("the other side has gone: the connection broke")
    # A person (or a program) thinks in a worker thread, so that keepalives flow meanwhile.
    assert side.due is not None and seat.me is not None
    limit = _decision_limit(seat.spec, conn.timeouts) if seat.spec.limits is not None else None
    limit_at = side.due[1] + limit if limit is not None else None
    clock_at = seat.own_deadline()
    until = min([t for t in (clock_at, limit_at) if t is not None], default=float("inf"))
    answer: Decision | None = None
    async with trio.open_nursery() as nursery:
        with trio.CancelScope(deadline=until) as scope:
            if limit_at is not None and limit is not None and limit > 2 * WARNING:
                nursery.start_soon(_warn_at, limit_at - WARNING, told, seat.me)
            if conn.chat and not conn.early and conn.trouble is None:
                nursery.start_soon(listen_while_deciding, conn, chat)  # lines of chat come meanwhile
            if presence is not None:
                nursery.start_soon(away_while_deciding, conn, side, presence, log, told, scope)
            else:
                conn.deciding = scope
            try:
                answer = await trio.to_thread.run_sync(agent.choose, ask, abandon_on_cancel=True)
            finally:
                conn.deciding = None
        if side.waiting_for_return is not None:
            await side.waiting_for_return.wait()  # decided while the peer is away: its return first
        nursery.cancel_scope.cancel()
    if seat.finished:
        return None  # the peer did not come back while we decided: our claim ended the game
    if not scope.cancelled_caught:
        return answer
    if clock_at is not None and trio.current_time() >= clock_at:
        return None
    if limit_at is not None and trio.current_time() >= limit_at:
        why = f"no decision within {limit:g} s, the agreed limit"
        return Resign(why, summary=f"you took longer than the agreed {limit:g} s for a decision")
    raise PeerGone("the other side has gone: the connection broke while you were deciding")


async def _warn_at(when: float, told: Teller, who: int) -> None:
    await trio.sleep_until(when)
    told((TimeWarning(who, WARNING),))


def write_evidence(side: Side, a: bytes, b: bytes) -> Path:
    """Two different envelopes signed by one key for one sequence number, as a
    ``basilica-evidence/2`` proof next to the replay (a new file: never through a link)."""
    from ..replay import write_evidence as write_proof

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


__all__ = [
    "BadHello", "claim_absence", "Teller", "Connection", "continue_game", "CorruptedMessage", "differences", "forfeit_by_absence",
    "forget_session", "GameReport", "hello_body", "lag_allowance", "NoGameStarted", "PeerGone",
    "PeerMisbehaved", "PeerRefused", "play_one_game", "Presence", "presence_of", "Refused", "resume_exchange",
    "resume_hint", "SessionError", "Settings", "Side", "side_from_replay", "sidecar_path", "Timeouts",
    "Watch", "write_evidence", "write_private_json",
]
