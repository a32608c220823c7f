"""Deadlines of the network layer, on virtual time.

Every test runs under ``trio.testing.MockClock(autojump_threshold=0)`` (the
``autojump_clock`` fixture of pytest-trio) over memory streams: the clock
jumps straight to the next deadline, so a 30-second idle timeout costs no
real time.  The bots' decisions, which the session runs in a worker thread,
run inline here (net_harness.inline_threads): otherwise the autojumping clock
would leap forward while a thread works, and measured times would drift.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
import trio
import trio.testing
from support.net_harness import (
    DEFAULT,
    Run,
    ScriptedPeer,
    at_step,
    frame_bytes,
    holds_none_of,
    inline_threads,
    run_against,
    valid_prefix,
)

from basilica_p2p.clock import Limits
from basilica_p2p.net.framing import ENVELOPE
from basilica_p2p.net.session import GRACE, PeerGone, Timeouts
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire import open_envelope

pytestmark = pytest.mark.trio


@pytest.fixture(autouse=True)
def _no_worker_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    inline_threads(monkeypatch)

LIMIT = 400.0  # virtual seconds: far past every deadline below
T = Timeouts(handshake=20.0, ping_interval=5.0, idle=30.0, frame=10.0)
# A network game's agreed time per decision (protocol 3), short enough for these tests.
DECIDE = replace(DEFAULT, limits=Limits(window=120, decision=12))


async def against(script, tmp_path: Path, **kw) -> Run:  # type: ignore[no-untyped-def]
    kw.setdefault("timeouts", T)
    kw.setdefault("limit", LIMIT)
    return await run_against(script, tmp_path, **kw)


def took(run: Run, since: float) -> float:
    return run.ended - since


def near(value: float, target: float, slack: float = 0.01) -> bool:
    return target - 0.01 <= value <= target + slack


# --- the handshake -------------------------------------------------------------------------------------


@pytest.mark.parametrize("honest_seat", [0, 1], ids=["we-host", "we-join"])
async def test_a_peer_that_never_sends_its_hello_hits_the_handshake_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, honest_seat: int
) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.linger(LIMIT, envelopes_ok=True)  # our hello, if we host

    run = await against(script, tmp_path, honest_seat=honest_seat)
    assert isinstance(run.error, PeerGone), repr(run.error)
    assert "hello" in str(run.error) and "20" in str(run.error)
    assert near(took(run, run.started), 20.0), took(run, run.started)
    assert run.replays == []


async def test_keepalives_do_not_stretch_the_handshake_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Pings without a hello: the handshake deadline still holds (pings reset only the idle timer)."""

    async def script(p: ScriptedPeer) -> None:
        await p.linger(LIMIT, ping_every=1.0)

    run = await against(script, tmp_path, honest_seat=1)
    assert isinstance(run.error, PeerGone), repr(run.error)
    assert "hello" in str(run.error)
    assert near(took(run, run.started), 20.0), took(run, run.started)


async def test_a_handshake_deadline_longer_than_the_idle_timeout(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """With keepalives flowing, the handshake deadline (not the idle timeout) ends the wait."""

    async def script(p: ScriptedPeer) -> None:
        await p.linger(LIMIT, ping_every=5.0)

    t = Timeouts(handshake=90.0, ping_interval=5.0, idle=30.0, frame=10.0)
    run = await against(script, tmp_path, honest_seat=1, timeouts=t)
    assert isinstance(run.error, PeerGone), repr(run.error)
    assert near(took(run, run.started), 90.0), took(run, run.started)


# --- idle and frame timeouts -----------------------------------------------------------------------------


@pytest.mark.parametrize("keepalive", [False, True], ids=["no-pings", "we-ping-nobody-answers"])
async def test_a_silent_peer_is_dropped_after_the_idle_timeout(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, keepalive: bool
) -> None:
    async def script(p: ScriptedPeer) -> None:
        p.answer_pings = False
        await p.hello()
        assert await p.play(stop=at_step("action", after=10)) == "action"
        p.marks["seq"] = p.ref.seq  # type: ignore[union-attr]
        p.mark("silent")
        await p.linger(LIMIT)

    run = await against(script, tmp_path, honest_seat=0, keepalive=keepalive)
    assert isinstance(run.error, PeerGone), repr(run.error)
    assert "silent" in str(run.error) and "30" in str(run.error), str(run.error)
    assert near(took(run, run.peer.marks["silent"]), 30.0), took(run, run.peer.marks["silent"])
    valid_prefix(run, int(run.peer.marks["seq"]))


async def test_a_peer_trickling_a_frame_one_byte_a_second_is_dropped_after_the_frame_timeout(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("action", after=10)) == "action"
        p.marks["seq"] = p.ref.seq  # type: ignore[union-attr]
        env = p.forge("action", p.honest_body("action"))
        data = frame_bytes(ENVELOPE, env.raw)
        p.bad.append(env.raw)
        p.mark("first byte")
        for i in range(len(data)):
            await p.send_bytes(data[i:i + 1])
            await trio.sleep(1.0)

    run = await against(script, tmp_path, honest_seat=0)
    assert isinstance(run.error, PeerGone), repr(run.error)
    assert "frame" in str(run.error) and "10" in str(run.error), str(run.error)
    assert near(took(run, run.peer.marks["first byte"]), 10.0), took(run, run.peer.marks["first byte"])
    valid_prefix(run, int(run.peer.marks["seq"]))
    holds_none_of(run.replay, run.peer.bad)


async def test_a_frame_that_arrives_in_slow_pieces_within_the_frame_timeout_is_fine(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Slow but within the deadline: a frame sent in 4 pieces over 6 s (frame timeout 10 s)."""

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        while True:
            step = await p.play(stop=at_step("action"))
            if step is None:
                break
            env = p.forge("action", p.honest_body("action"))
            p.ref.feed(env)  # type: ignore[union-attr]
            p.records.append(env.raw)
            data = frame_bytes(ENVELOPE, env.raw)
            q = len(data) // 4
            for piece in (data[:q], data[q:2 * q], data[2 * q:3 * q], data[3 * q:]):
                await p.send_bytes(piece)
                await trio.sleep(2.0)
        await p.drain()

    run = await against(script, tmp_path, honest_seat=1)
    assert run.error is None, repr(run.error)
    assert verify_file(run.replay).ok


# --- keepalives ------------------------------------------------------------------------------------------


async def test_our_pings_answered_keep_a_thinking_peer_connected(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """We send keepalives; the peer only answers them while it thinks for 100 s (> idle 30 s)."""

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("action", after=8)) == "action"
        p.mark("think")
        await p.linger(100.0)
        p.mark("decided")
        await p.play()
        await p.drain()

    run = await against(script, tmp_path, honest_seat=0, keepalive=True)
    assert run.error is None, repr(run.error)
    assert run.peer.marks["decided"] - run.peer.marks["think"] >= 100.0
    assert any(c.get("t") == "ping" for c in run.peer.controls)
    v = verify_file(run.replay)
    assert v.ok, v.line()


async def test_the_peers_pings_keep_it_connected_while_it_thinks(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """We send no keepalives; the peer pings every 5 s while it thinks for 100 s; we answer."""

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("action", after=8)) == "action"
        p.mark("think")
        await p.linger(100.0, ping_every=5.0)
        p.mark("decided")
        await p.play()
        await p.drain()

    run = await against(script, tmp_path, honest_seat=1)
    assert run.error is None, repr(run.error)
    assert run.peer.marks["decided"] - run.peer.marks["think"] >= 100.0
    pongs = [c for c in run.peer.controls if c.get("t") == "pong"]
    assert len(pongs) >= 19, len(pongs)
    assert verify_file(run.replay).ok


# --- the move deadline --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ping_every", [None, 2.0], ids=["silent", "pinging"])
async def test_a_peer_that_does_not_decide_in_time_is_recorded_as_forfeiting(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, ping_every: float | None
) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("action", after=10)) == "action"
        p.mark("thinking")
        await p.linger(LIMIT, ping_every=ping_every)

    run = await against(script, tmp_path, honest_seat=0, honest_settings=DECIDE)
    assert run.error is None, repr(run.error)
    assert run.report is not None
    o = run.report.outcome
    assert o.end == "forfeit" and o.winner == 0 and o.claimed_by == 0, o
    assert o.reason == "no decision within 12 s (the agreed limit)"
    # claimed a little after the limit: a peer that runs out resigns at it, and must not cross us
    assert near(took(run, run.peer.marks["thinking"]), 12.0 + GRACE), took(run, run.peer.marks["thinking"])
    v = verify_file(run.replay)
    assert v.ok, v.line()
    assert v.outcome is not None and v.outcome.end == "forfeit" and v.outcome.claimed_by == 0
    assert "forfeited as claimed by player 1" in v.line()
    # the peer was sent the forfeit too
    assert [open_envelope(raw).type for raw in run.peer.late] == ["forfeit"]


async def test_the_move_deadline_does_not_cut_a_peer_that_decides_in_time(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        while True:
            step = await p.play(stop=at_step("action"))
            if step is None:
                break
            await trio.sleep(11.0)  # 1 s within the agreed limit, every time
            await p.send_honest(step)
        await p.drain()

    run = await against(script, tmp_path, honest_seat=1, honest_settings=DECIDE, limit=5000.0)
    assert run.error is None, repr(run.error)
    assert run.report is not None and run.report.outcome.end != "forfeit"
    assert verify_file(run.replay).ok


async def test_a_peer_that_withholds_its_reveal_forfeits_at_the_move_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """PROTOCOL.md section 5: "A peer that never reveals is likewise recorded as forfeiting by
    the other side."  Player 2 has seen player 1's nonce (and so knows the seed); it keeps the
    connection alive with pings and never reveals.  With a move deadline set, the honest side
    must not wait forever: it records the peer's forfeit."""

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("reveal")) == "reveal"
        p.mark("withholding")
        await p.linger(LIMIT, ping_every=2.0)

    run = await against(script, tmp_path, honest_seat=0, honest_settings=DECIDE)
    assert run.error is None, repr(run.error)
    assert run.report is not None and run.report.outcome.end == "forfeit"
    assert run.report.outcome.winner == 0
    assert verify_file(run.replay).ok


async def test_a_peer_that_pings_but_never_reads_cannot_hold_us_past_the_deadlines(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """The peer sends pings and stops reading.  Each ping must be answered with a pong; once
    the transport cannot take the pong (on TCP: after a flood of pings has filled both
    buffers; here, with an unbuffered lockstep stream, after the first), the honest side is
    stuck in that send.  It must still give up, not wait for as long as the peer cares to
    keep the connection open: the frame deadline (10 s) ends the send first, before the
    move deadline (12 s) or the idle one (30 s), and the peer counts as gone (the game can
    be resumed), not as forfeiting."""

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("action", after=10)) == "action"
        p.mark("flood")
        await p.ping()  # taken by the honest side, which answers...
        await trio.sleep(10 * LIMIT)  # ... but we never read again

    run = await against(script, tmp_path, honest_seat=0, honest_settings=DECIDE, lockstep=True)
    assert isinstance(run.error, PeerGone), repr(run.error)
    assert "did not take a frame within 10 s" in str(run.error), run.error
    assert run.report is None
    assert near(took(run, run.peer.marks["flood"]), 10.0), took(run, run.peer.marks["flood"])
    valid_prefix(run)  # what was played is kept, and nothing claims a result
