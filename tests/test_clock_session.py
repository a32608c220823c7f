"""Game clocks over the network (issue 13), on virtual time.

Both sides are the real session code over memory streams, under
``MockClock(autojump_threshold=0)``: a decision that "takes" 25 seconds sleeps
25 virtual seconds in place of the worker thread, and no real time passes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from basilica_p2p.agent import AgentBase, Decision, Traits
from basilica_p2p.bots import RandomBot
from basilica_p2p.clock import ClockView, TimeControl
from basilica_p2p.net.session import (
    BadHello,
    Connection,
    GameReport,
    Refused,
    Settings,
    Timeouts,
    hello_body,
    play_one_game,
)
from basilica_p2p.schemes import HIDDEN_DEAL
from basilica_p2p.seat import Ask, ClocksChanged, SeatEvent
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire import open_envelope, seal

from support.net_harness import ALICE, BOB, DEFAULT, ScriptedPeer, at_step, claimed, faulted, holds_none_of, run_against

pytestmark = pytest.mark.trio

CLOCK = TimeControl(1, 0)
TIMED = replace(DEFAULT, clock=CLOCK)
T = Timeouts(handshake=20.0, ping_interval=5.0, idle=30.0, frame=10.0)


@pytest.fixture(autouse=True)
def _thinking_takes_virtual_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A blocking agent's decision (``agent.choose(ask)`` in a worker thread) runs inline, after
    sleeping its ``think`` seconds of virtual time (cancellable, as a person at the prompt is
    when the clock runs out)."""

    async def run_sync(fn: Callable[..., Any], *args: Any, abandon_on_cancel: bool = False, **kw: Any) -> Any:
        agent = getattr(fn, "__self__", None)
        think = agent.think if isinstance(agent, (Slow, Never)) else 0.0
        await trio.sleep(think(args[0].view) if callable(think) else think)
        return fn(*args)

    monkeypatch.setattr(trio.to_thread, "run_sync", run_sync)


class Slow(AgentBase):
    """A person who takes ``think`` seconds over every decision and watches the clocks."""

    traits = Traits(blocking=True)

    def __init__(self, think: float, seed: int = 5) -> None:
        self.think = think
        self.name = "slow"
        self.bot = RandomBot(seed)
        self.views: list[ClockView] = []

    def choose(self, ask: Ask) -> Decision:
        return self.bot.choose(ask.view, list(ask.legal))

    def observe(self, event: SeatEvent) -> None:
        if isinstance(event, ClocksChanged):
            self.views.append(event.view)


async def two_sides(tmp_path: Path, settings: tuple[Settings, Settings], agents: tuple[Any, Any],
                    ) -> tuple[list[GameReport | None], list[BaseException | None]]:
    a, b = trio.testing.memory_stream_pair()
    conns = (Connection(a, T), Connection(b, T))
    reports: list[GameReport | None] = [None, None]
    errors: list[BaseException | None] = [None, None]
    done = (trio.Event(), trio.Event())

    async def side(seat: int) -> None:
        conn = conns[seat]
        folder = tmp_path / f"p{seat + 1}"
        folder.mkdir()
        try:
            reports[seat] = await conn.run(lambda: play_one_game(conn, (ALICE, BOB)[seat], seat, settings[seat],
                                                                 agents[seat], folder))
        except Exception as e:
            errors[seat] = e
        finally:
            done[seat].set()
            # Open until the other side is done too, as between games of one connection
            # (net/peer.py waits for the goodbye): a side that has its last message must
            # not be cut off while it reads it.
            with trio.move_on_after(60):
                await done[1 - seat].wait()
            await conn.framed.aclose()

    with trio.fail_after(5000):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(side, 0)
            nursery.start_soon(side, 1)
    return reports, errors


@pytest.mark.parametrize("shuffle", ["commit-reveal-v1", HIDDEN_DEAL])
async def test_two_clocked_sides_finish_and_the_joiner_takes_the_hosts_clock(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, shuffle: str
) -> None:
    host, joiner = Slow(0.5, 1), Slow(0.25, 2)
    settings = (replace(TIMED, shuffle=shuffle), replace(DEFAULT, shuffle=shuffle))
    reports, errors = await two_sides(tmp_path, settings, (host, joiner))
    assert errors == [None, None], errors
    for report in reports:
        assert report is not None and report.clock == CLOCK
        v = verify_file(report.replay)
        assert v.ok, v.error
        replay = read_replay(report.replay)
        assert replay.header.protocol == 3 and replay.header.clock == CLOCK and replay.header.shuffle == shuffle
        assert replay.header.limits is not None and replay.header.limits.decision == 0
        envs = [open_envelope(r) for r in replay.records]
        assert all(e.body["clock"] == [1, 0] for e in envs if e.type == "hello")
        # Every decision carries a figure: the actions, and a secret Jester choice (jcommit)
        # when the game's seed brings one (the test missed those at first, failing 1 run in 50).
        figures = [e.body["clock"] for e in envs if e.type in ("action", "jcommit") and e.sender == ALICE.public]
        # Each of the host's figures is what it had left: 60 s less half a second per decision.
        assert figures == [60_000 - 500 * (k + 1) for k in range(len(figures))]
    # Both people were shown both clocks, at the start and the end of decisions.
    assert host.views and joiner.views
    assert {v.running for v in host.views} == {0, 1, None}
    last = host.views[-1]
    assert last.me == 0 and last.remaining[0] < 60 and last.remaining[1] < 60


async def test_a_player_out_of_time_loses_on_time_claimed_by_the_other(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """25 s a decision on a 1-minute clock: the third decision runs out; the host's prompt is
    stopped at 0:00 and the joiner claims, both replays end with the signed claim."""
    host, joiner = Slow(25.0), Slow(0.0, 2)
    reports, errors = await two_sides(tmp_path, (TIMED, TIMED), (host, joiner))
    assert errors == [None, None], errors
    lines = set()
    for report in reports:
        assert report is not None
        v = verify_file(report.replay)
        assert v.ok, v.error
        o = v.outcome
        assert o is not None and o.end == "time" and o.winner == 1 and o.time is not None
        assert o.time.loser == 0 and o.time.waited >= o.time.left
        assert o.time.signed == 10_000  # after two decisions of 25 s
        lines.add(v.line().split(": ", 1)[1])
        assert "player 2 (bob) won on time: alice's clock ran out" in v.line()
        assert read_replay(report.replay).records == read_replay(reports[1].replay).records  # type: ignore[union-attr]
    assert len(lines) == 1
    assert host.views[-1].flagged == 0


async def test_a_silent_peer_is_claimed_on_time_after_its_clock_and_the_lag(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        await p.play(stop=at_step("action", after=12))
        await p.linger(200.0, envelopes_ok=True)

    run = await run_against(script, tmp_path, honest_settings=TIMED, timeouts=T, limit=400.0, keepalive=True)
    assert run.error is None, run.error
    v = run.verdict()
    assert v.ok, v.error
    o = v.outcome
    assert o is not None and o.end == "time" and o.winner == 0 and o.time is not None
    # The peer said it used no time: its signed figure is the whole minute, as is our measure.
    assert o.time.left == o.time.signed == 60_000 and o.time.waited >= 60_000
    assert "won on time" in v.line() and "bob's clock ran out" in v.line()


SLOW_FROM = 3  # the turn from which Never thinks long


class Never(AgentBase):
    """A person quick at first, then thinking far longer than any test waits: the peer's
    claim comes meanwhile."""

    traits = Traits(blocking=True)
    name = "never"

    def think(self, obs: Any) -> float:
        return 1000.0 if obs.turn >= SLOW_FROM else 0.0

    def choose(self, ask: Ask) -> Decision:
        return ask.legal[0]


@pytest.mark.parametrize(("settings", "body", "words"), [
    (TIMED, {"left": 60_000, "waited": 59_999}, "before the time is up by the claimant's own figures"),
    (TIMED, {"left": 0, "waited": 0, "us": True}, "must name the other player"),
], ids=["too-early", "names-itself"])
async def test_a_false_claim_on_time_is_refused(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, settings: Settings, body: dict[str, Any], words: str
) -> None:
    """The honest side's decision is due (the scripted peer just acknowledged), its person
    thinking: a claim whose own figures do not show the time up is a signed message against the
    rules, and ends the game with it as proof (a fault)."""
    sent: list[bytes] = []

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert p.ref is not None
        while True:
            step, who = p.ref.waiting_for()
            if step == "action" and who == 1 - p.seat and p.game is not None and p.game.turn >= SLOW_FROM:
                break
            await (p.send_honest(step) if who == p.seat else p.receive())
        loser = p.seat if body.get("us") else 1 - p.seat
        env = p.forge("timeout", {"loser": loser + 1, "left": body["left"], "waited": body["waited"]})
        sent.append(env.raw)
        await p.send_env(env, bad=True)
        await p.drain()

    run = await run_against(script, tmp_path, honest_settings=settings, timeouts=T, limit=2000.0, agent=Never())
    # Our flag fell meanwhile (the person thinks on), so the claim is read as one we may accept;
    # its own figures (or its naming its sender) break the rules: it ends the game as proof.
    faulted(run, words)


async def test_a_claim_on_time_in_a_game_without_a_clock_is_refused(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    sent: list[bytes] = []

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        await p.play(stop=at_step("action", after=8))
        env = p.forge("timeout", {"loser": 2 - p.seat, "left": 0, "waited": 0})
        sent.append(env.raw)
        await p.send_env(env, bad=True)
        await p.drain()

    run = await run_against(script, tmp_path, timeouts=T, limit=400.0)
    # It names us: refused before any rule, never recorded, and the game is ours by our claim.
    claimed(run, "claiming that we lost")
    holds_none_of(run.replay, sent)


@pytest.mark.parametrize(("settings", "change", "words"), [
    (TIMED, lambda body: {k: v for k, v in body.items() if k != "clock"}, "lacks its clock figure"),
    (TIMED, lambda body: {**body, "clock": body["clock"] + 1}, "more than"),
    (DEFAULT, lambda body: {**body, "clock": 5}, "a clock figure in a game without a clock"),
    (DEFAULT, lambda body: ("takeback", {"to": 0}), "takebacks are for local games only"),
], ids=["missing", "more-than-it-had", "no-clock", "takeback"])
async def test_a_bad_clock_figure_or_a_takeback_is_refused(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, settings: Settings,
    change: Callable[[dict[str, Any]], Any], words: str,
) -> None:
    sent: list[bytes] = []

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        await p.play(stop=at_step("action", after=8))
        changed = change(p.honest_body("action"))
        env = p.forge(*changed) if isinstance(changed, tuple) else p.forge("action", changed)
        sent.append(env.raw)
        await p.send_env(env, bad=True)
        await p.drain()

    run = await run_against(script, tmp_path, honest_settings=settings, timeouts=T, limit=400.0)
    if words == "takebacks are for local games only":  # refused by the live rules, which no file shows
        claimed(run, words)
        holds_none_of(run.replay, sent)
    else:
        faulted(run, words)


@pytest.mark.parametrize("clock", [[99_999, 0], [0, 5], [15, 10**6]], ids=["huge", "zero", "huge-increment"])
async def test_an_impossible_clock_in_the_hosts_hello_is_a_bad_hello(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, clock: list[int]
) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.hello(clock=clock)
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=1, timeouts=T, limit=100.0)
    assert isinstance(run.error, BadHello), run.error
    assert "impossible clock" in str(run.error) and "\n" not in str(run.error)
    assert run.replays == []


async def test_hosts_with_different_clocks_refuse_each_other(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    async def script(p: ScriptedPeer) -> None:
        first = open_envelope(await p.next_envelope())
        await p.send_env(seal(p.me.key, first.game, 1, first.hash, "hello", p.hello_for(clock=[5, 3], limits=[120, 0])))
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=0, honest_settings=TIMED, timeouts=T, limit=100.0)
    assert isinstance(run.error, Refused), run.error
    assert "clock (--clock): alice has 1+0, bob has 5+3" in str(run.error)


async def test_a_network_hello_is_protocol_3_with_its_limits_after_any_clock() -> None:
    """PROTOCOL.md §4c: a network game names its limits; a clock bounds decisions itself (0)."""
    body = hello_body(ALICE, DEFAULT)
    assert list(body) == ["protocol", "software", "ruleset", "festum", "removal", "manifest", "name", "shuffle",
                          "limits"]
    assert body["protocol"] == 3 and body["limits"] == [120, 600]
    timed = hello_body(ALICE, TIMED)
    assert list(timed)[-2:] == ["clock", "limits"] and timed["protocol"] == 3
    assert timed["clock"] == [1, 0] and timed["limits"] == [120, 0]


async def test_after_a_resume_each_clock_goes_on_from_its_owners_last_signed_figure(tmp_path: Path) -> None:
    from basilica_p2p.engine import default_manifest
    from basilica_p2p.net.session import side_from_replay
    from basilica_p2p.replay.local import play_recorded
    from basilica_p2p.replay.verify import known_manifests

    reads = iter(range(1, 10**6))
    path = tmp_path / "r.replay"
    play_recorded(path, default_manifest(), DEFAULT.options, (ALICE, BOB), (RandomBot(1), RandomBot(2)),
                  clock=TimeControl(30, 1), now=lambda: next(reads) * 0.25)
    side, seat = side_from_replay(path, known_manifests(), BOB)
    side.writer.close()
    clocks = side.seat.clocks
    assert seat == 1 and clocks is not None and clocks.me == 1
    envs = [open_envelope(r) for r in read_replay(path).records]
    # Every decision signs its maker's figure: an action, and a Jester commitment too (a game
    # may end on a Jester round, whose commitments are then the last figures).
    last = {who: [e.body["clock"] for e in envs if e.type in ("action", "jcommit") and e.sender == key][-1]
            for who, key in ((0, ALICE.public), (1, BOB.public))}
    assert clocks.left == [last[0], last[1]] and last[0] != 30 * 60_000  # not the starting time
