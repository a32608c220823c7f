"""The side that stays wins: waiting for a peer that went away, and meeting it again.

When the connection to the other side breaks, or the other side falls silent,
a side that keeps a session file does not stop: it waits for the other side
to come back within the window both hellos agreed (protocol 3), counting it
down, meeting it again through net/rejoin.py (each side proves who it is
first), and exchanging what the other lacks (:func:`resume_exchange`).  A
peer that does not come back is claimed against: our signed forfeit by
absence ends the game.  ``basilica resume`` uses the same meeting and
exchange for a side whose own program stopped (net/resume.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import trio

from ..clock import DEFAULT_WINDOW
from ..referee import GameSpec
from ..printable import printable
from ..seat import Late, PeerAway, PeerBack, SeatEvent, Step, StepKind
from .connection import Connection, PeerGone, PeerMisbehaved, Refused, Timeouts
from .framing import close_quietly
from .rejoin import Reach, Rendezvous, reach
from .side import Side

COUNTDOWN = 10.0  # seconds between the reminders while the other side is away
# What the driver tells its agent and watcher: events the seat made, or this module's.
Tell = Callable[[tuple[SeatEvent, ...]], None]


@dataclass(frozen=True)
class Presence:
    """How this side waits for the other to come back after a break: the side that stays wins.

    ``reach(until)`` meets the other side again (net/rejoin.py) and gives a stream that proved
    to be it, or None once ``until`` (trio time) came.  ``window``: seconds it has to come back,
    for a game of protocol 1 or 2, which agreed none (protocol 3 games use their own).
    """

    reach: Reach
    window: float | None = None

    def seconds(self, spec: GameSpec) -> float:
        if spec.limits is not None:
            return float(spec.limits.window)
        return self.window if self.window is not None else float(DEFAULT_WINDOW)


def presence_of(side: Side, timeouts: Timeouts, log: Callable[[str], None] = lambda s: None,
                window: float | None = None) -> Presence | None:
    """Where and how this side meets the other again, from what its session file keeps (the role,
    the address, a relay); None for a side that keeps no session file (it cannot resume)."""
    if side.sidecar is None:
        return None
    try:
        where = Rendezvous.from_info(side.info)
    except ValueError:
        return None
    seat = side.seat
    assert seat.me is not None and seat.identity is not None
    return Presence(reach(where, seat.identity, seat.spec.players[1 - seat.me], seat.spec.game, timeouts.frame, log),
                    window)


async def wait_for_return(conn: Connection, side: Side, presence: Presence, log: Callable[[str], None],
                           told: Tell, why: str) -> bool:
    """The peer has gone: wait for it to come back within the window, counting down.  True once
    it is back (the records exchanged, the connection replaced); False once the window is over
    and our claim is recorded: the game is won by its absence.

    The window is for the whole of one message's wait: a peer that comes back and goes again
    without the game moving on has only what is left of it (so it cannot stall for ever)."""
    seat = side.seat
    assert seat.me is not None
    name = printable(seat.spec.names[1 - seat.me], 64)
    window = presence.seconds(seat.spec)
    seq = seat.referee.seq
    used = side.away[1] if side.away is not None and side.away[0] == seq else 0.0
    start = trio.current_time()
    until = start + max(0.0, window - used)
    await close_quietly(conn.framed)  # a peer that stalls on an open stream must notice we left
    conn.left = True
    told((PeerAway(name, until - start, first=True, why=why),))
    log(f"{name} has gone ({why}): waiting up to {until - start:.0f} s for them to come back")
    async with trio.open_nursery() as nursery:
        async def remind() -> None:
            while True:
                await trio.sleep(COUNTDOWN)
                left = until - trio.current_time()
                if left > 0.5:
                    told((PeerAway(name, left),))

        nursery.start_soon(remind)
        framed = await presence.reach(until)
        nursery.cancel_scope.cancel()
    side.away = (seq, used + trio.current_time() - start)
    if framed is None:
        await claim_absence(side, window, name, log, told)
        return False
    await conn.replace(framed)
    await resume_exchange(conn, side, log)
    told((PeerBack(name),))
    log(f"{name} is back")
    return True


async def claim_absence(side: Side, window: float, name: str, log: Callable[[str], None],
                        told: Callable[[tuple[SeatEvent, ...]], None] = lambda events: None) -> None:
    """The window is over: our signed claim that the peer did not come back ends the game."""
    seat = side.seat
    game = seat.game
    if game is not None and game.over and seat.due().kind is not StepKind.SECRET:
        # (A hidden deal's missing secret is an absence like any other: claimed below.)
        raise PeerGone(f"{name} did not come back; the game ended on the board but its signed result "
                       "is missing, so the replay stays incomplete")
    told(forfeit_by_absence(side, window))
    log(f"{name} did not come back within {window:g} s: the game is recorded as won by their absence")


def forfeit_by_absence(side: Side, window: float) -> tuple[SeatEvent, ...]:
    """Record our claim that the peer did not come back within ``window`` seconds; its events."""
    seat = side.seat
    assert seat.me is not None
    if seat.due() == Step(StepKind.ACK, seat.me):
        # Our acknowledgement was lost with its unsynced tail, but the peer may hold it: sign it
        # again (deterministic: the very same bytes) rather than a forfeit at its place, which
        # would be two different messages of ours for one sequence number.
        ack = seat.make()
        assert not isinstance(ack, Late)
        side.record(ack.envelope.raw)
    claim = seat.claim_forfeit(f"did not come back within {window:g} s")
    side.record(claim.envelope.raw)
    return claim.events


async def away_while_deciding(conn: Connection, side: Side, presence: Presence, log: Callable[[str], None],
                               told: Tell, deciding: trio.CancelScope) -> None:
    """While our person decides nobody reads the connection; a keepalive that fails says the peer
    has gone, and we wait for it meanwhile (the person goes on deciding).  If the window ends
    first, our claim ends the game and the decision is no longer asked for."""
    while True:
        await conn.lost.wait()
        side.waiting_for_return = trio.Event()
        try:
            back = await wait_for_return(conn, side, presence, log, told, "the connection broke")
        finally:
            side.waiting_for_return.set()
            side.waiting_for_return = None
        if not back:
            deciding.cancel()
            return


async def resume_exchange(conn: Connection, side: Side, log: Callable[[str], None]) -> None:
    """After reconnecting: say how many messages we hold, learn the peer's, resend what it lacks.

    Both replays are prefixes of one chain, so the side that holds more
    holds everything the other has; what it resends comes from its file,
    byte for byte, never made again.  That may include the other side's own
    acknowledgements, sent before they were fsynced (see ``_send_own``).  What
    the peer resends comes in through the normal checks of the play loop.
    """
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
