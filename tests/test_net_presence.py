"""A fair end against a peer that walks away, stalls or lies about time (issue 20), on virtual time.

The honest side is the real session code; the scripted peer of tests/support/net_harness.py goes away
and, in some tests, comes back through a :class:`Doorway`, which hands its new stream to the
honest side's presence exactly as a reconnection would (each side proves who it is first,
net/rejoin.py).  In every test the honest side does nothing but wait, and ends with a
finished replay that ``verify`` accepts and that names what the other side did.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from basilica_p2p.agent import Decision
from basilica_p2p.clock import TimeControl
from basilica_p2p.seat import Ask, GameOver, PeerAway, PeerBack, SeatEvent, TimeWarning
from basilica_p2p.net.session import GRACE, WARNING, Timeouts
from basilica_p2p.replay.verify import verify_file

from support.net_harness import (
    DEFAULT,
    MALLORY,
    Doorway,
    Run,
    ScriptedPeer,
    at_step,
    Thinker,
    frame_bytes,
    run_against,
    thinking_in_virtual_time,
)

pytestmark = pytest.mark.trio

T = Timeouts(handshake=20.0, ping_interval=5.0, idle=30.0, frame=10.0)
LIMIT = 3000.0  # virtual seconds: far past every deadline below


@pytest.fixture(autouse=True)
def _thinking_takes_virtual_time(monkeypatch: pytest.MonkeyPatch) -> None:
    thinking_in_virtual_time(monkeypatch)


def since(run: Run, mark: str) -> float:
    return run.ended - run.peer.marks[mark]


def ends_as_claimed(run: Run, reason: str) -> None:
    """The honest side won by its signed claim, and its replay says why."""
    assert run.error is None, repr(run.error)
    assert run.report is not None
    o = run.report.outcome
    honest = 1 - run.peer.seat
    assert o.end == "forfeit" and o.winner == honest and o.claimed_by == honest, o
    assert o.reason == reason, o.reason
    v = verify_file(run.replay)
    assert v.ok and f"forfeited as claimed by player {honest + 1}: {reason}" in v.line(), v.line()


def finished_normally(run: Run) -> None:
    assert run.error is None, repr(run.error)
    assert run.report is not None and run.report.outcome.end in ("last-scoring", "stack"), run.report.outcome
    v = verify_file(run.replay)
    assert v.ok, v.line()


async def walks_away(p: ScriptedPeer) -> None:
    await p.hello()
    assert await p.play(stop=at_step("action", after=12)) == "action"
    p.mark("gone")
    await p.aclose()


async def test_a_peer_that_walks_away_is_waited_for_then_claimed_with_a_countdown(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Presence wins: the side that stays says so, counts down the agreed window, and records its
    claim at its end."""
    told: list[SeatEvent] = []
    run = await run_against(walks_away, tmp_path, timeouts=T, doorway=Doorway(), watch=told.append, limit=LIMIT)
    ends_as_claimed(run, "did not come back within 120 s")
    assert 120.0 <= since(run, "gone") <= 121.0, since(run, "gone")
    away = [e for e in told if isinstance(e, PeerAway)]
    assert away[0].first and away[0].seconds == pytest.approx(120.0) and away[0].name == "bob"
    left = [round(e.seconds) for e in away[1:]]
    assert left == sorted(left, reverse=True) and left[0] == 110 and left[-1] <= 10, left
    assert isinstance(told[-1], GameOver)


async def test_a_peer_that_comes_back_within_the_window_goes_on_with_the_game(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    told: list[SeatEvent] = []

    async def script(p: ScriptedPeer) -> None:
        await walks_away(p)
        await trio.sleep(60)
        assert await p.come_back()
        await p.play()
        await p.drain()

    door = Doorway()
    run = await run_against(script, tmp_path, timeouts=T, doorway=door, watch=told.append, limit=LIMIT)
    finished_normally(run)
    kinds = [type(e) for e in told]
    assert kinds.index(PeerAway) < kinds.index(PeerBack)
    assert (door.tried, door.refused) == (1, 0)


async def test_strangers_who_connect_first_end_nothing_and_learn_nothing(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Before the peer comes back, garbage, a silent connection and another key's proof
    reach the waiting side; each is dropped and it goes on waiting, then the peer comes back."""
    async def script(p: ScriptedPeer) -> None:
        await walks_away(p)
        await p.stranger_knocks(b"\x00\x00\x00\x04")  # four bytes: a frame length, then nothing
        await p.stranger_knocks(frame_bytes(2, b"\x81\xa1t\xa6resume"))  # a resume notice, unproven
        assert not await p.come_back(key=MALLORY)  # a proof by the wrong key
        assert await p.come_back()
        await p.play()
        await p.drain()

    door = Doorway()
    run = await run_against(script, tmp_path, timeouts=T, doorway=door, limit=LIMIT)
    finished_normally(run)
    assert (door.tried, door.refused) == (4, 3)


async def test_a_network_that_stalls_is_reconnected_not_claimed(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The peer's acknowledgement (no thinking needed) does not come for 25 s, the
    connection open but silent, as through a stalled relay.  The waiting side drops the
    connection at the handshake timeout and waits for the peer, which comes back and goes on."""
    told: list[SeatEvent] = []

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("ack", after=12)) == "ack"
        p.answer_pings = False
        with trio.move_on_after(25):
            while True:  # nothing goes out; what comes in is read and dropped
                try:
                    await p.next_frame()
                except Exception:
                    break
        assert await p.come_back()
        await p.play()
        await p.drain()

    run = await run_against(script, tmp_path, timeouts=T, doorway=Doorway(), watch=told.append, limit=LIMIT)
    finished_normally(run)
    first = next(e for e in told if isinstance(e, PeerAway))
    assert "no ack for 20 s" in first.why, first
    assert any(isinstance(e, PeerBack) for e in told)


async def test_a_peer_away_past_its_window_on_a_message_that_needs_no_thinking_cannot_stall_for_ever(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Coming back and going again without the game moving on buys nothing: one message's wait
    has one window in all."""
    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("ack", after=12)) == "ack"
        p.mark("due")
        for _ in range(10):
            await p.aclose()
            await trio.sleep(50)
            if not await p.come_back():
                return

    run = await run_against(script, tmp_path, timeouts=T, doorway=Doorway(), limit=LIMIT)
    ends_as_claimed(run, "did not come back within 120 s")
    assert since(run, "due") < 200, since(run, "due")


class Deliberate(Thinker):
    """A person who decides after ``think`` seconds (of virtual time), from the ``slow_from``th
    decision on; at once before."""

    name = "alice"

    def __init__(self, think: float, slow_from: int = 3) -> None:
        self.think, self.slow_from, self.asked = think, slow_from, 0

    def seconds(self, view: Any) -> float:
        self.asked += 1
        return self.think if self.asked >= self.slow_from else 0.0

    def choose(self, ask: Ask) -> Decision:
        return ask.legal[0]


async def test_a_peer_that_stalls_on_its_move_is_warned_then_claimed_at_the_agreed_limit(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Every network game has a limit per decision (600 s by default, in the hellos); the
    waiting side is told a minute before, and claims a little after (GRACE)."""
    told: list[SeatEvent] = []

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("action", after=12)) == "action"
        p.mark("thinking")
        await p.linger(LIMIT, ping_every=2.0)

    run = await run_against(script, tmp_path, timeouts=T, watch=told.append, limit=LIMIT)
    ends_as_claimed(run, "no decision within 600 s (the agreed limit)")
    assert 600 + GRACE <= since(run, "thinking") <= 601 + GRACE
    warnings = [e for e in told if isinstance(e, TimeWarning)]
    assert warnings == [TimeWarning(1, WARNING)], warnings


async def test_a_person_who_runs_past_the_agreed_limit_resigns_before_the_claim_could_cross_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Our own side, at the prompt past the limit, resigns at it (signed), warned a minute before;
    the peer would claim only GRACE seconds later, so the two never cross."""
    told: list[SeatEvent] = []

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        await p.play()
        await p.drain()

    run = await run_against(script, tmp_path, timeouts=T, honest_seat=1, agent=Deliberate(10_000.0),
                            watch=told.append, limit=LIMIT * 10)
    assert run.error is None and run.report is not None
    o = run.report.outcome
    assert o.end == "forfeit" and o.claimed_by == 1 and o.winner == 0, o  # resigned, signed by itself
    assert o.reason == "no decision within 600 s, the agreed limit"
    assert [e for e in told if isinstance(e, TimeWarning)] == [TimeWarning(1, WARNING)]
    assert verify_file(run.replay).ok


async def test_a_clock_goes_on_running_while_its_owner_is_away(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """On a 1+0 clock the peer thinks 45 s, drops, comes back and stalls: the claim comes
    when its 60 s are up from when its decision became due, not 60 s after its return."""
    timed = replace(DEFAULT, clock=TimeControl(1, 0))

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("action", after=12)) == "action"
        p.mark("due")
        await trio.sleep(45)
        await p.aclose()
        await trio.sleep(5)
        assert await p.come_back()
        await p.linger(LIMIT, ping_every=2.0)

    run = await run_against(script, tmp_path, honest_settings=timed, timeouts=T, doorway=Doorway(), limit=LIMIT)
    assert run.error is None and run.report is not None
    o = run.report.outcome
    assert o.end == "time" and o.winner == 0, o
    assert 60.0 <= since(run, "due") <= 62.5, since(run, "due")  # the lag allowance at most
    assert verify_file(run.replay).ok
