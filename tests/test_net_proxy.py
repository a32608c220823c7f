"""Two honest peers through a fault-injecting proxy (tests/support/net_harness.py: run_proxy).

The proxy relays between two loopback TCP connections (host <-> proxy <-> joiner)
and can drop the connection after N bytes, truncate a stream (then close or
stall), delay chunks, corrupt a byte or duplicate a frame.  Every fault must
end in a clean error on both sides (a SessionError, never a hang, never a
stray exception); corruption and duplication must be detected as such; delays
alone must not break a game.  Each side's replay stays a valid prefix.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from basilica_p2p.bots import RandomBot
from basilica_p2p.net.peer import PeerConfig, play_games
from basilica_p2p.net.session import (
    CorruptedMessage,
    GameReport,
    NoGameStarted,
    PeerGone,
    PeerMisbehaved,
    SessionError,
    Settings,
    Timeouts,
)
from basilica_p2p.replay.verify import verify_file

from support.net_harness import (
    ALICE,
    BOB,
    Fault,
    PairResult,
    ProxyLog,
    host_and_join,
    inline_threads,
    relaying_listener,
    run_proxy,
    settings,
)

pytestmark = pytest.mark.trio

S = settings()
# Short deadlines on real sockets (loopback delivers a frame in microseconds): a stalled
# stream ends within a second or two, and a hang fails the test after LIMIT seconds.
PROXY_T = Timeouts(handshake=3.0, ping_interval=0.1, idle=1.5, frame=0.5)
LIMIT = 20.0


def configs(tmp_path: Path, games: int = 1, timeouts: Timeouts = PROXY_T, s: Settings = S) -> tuple[PeerConfig, PeerConfig]:
    return (PeerConfig(ALICE, s, lambda k: RandomBot(100 + k), tmp_path / "host", None, timeouts, games),
            PeerConfig(BOB, s, lambda k: RandomBot(200 + k), tmp_path / "join", None, timeouts, games))


async def through(tmp_path: Path, fault: Fault | None, games: int = 1) -> tuple[PairResult, ProxyLog]:
    log = ProxyLog()
    h, j = configs(tmp_path, games)
    pair = await host_and_join(h, j, fault=fault, proxy_log=log, limit=LIMIT)
    return pair, log


def clean_errors(pair: PairResult) -> tuple[SessionError, SessionError]:
    """Both sides stopped with a SessionError (PeerGone / PeerMisbehaved / Refused), nothing else."""
    for side, result in (("host", pair.host), ("join", pair.join)):
        assert isinstance(result, SessionError), f"{side}: expected a SessionError, got {result!r}"
    return pair.host, pair.join  # type: ignore[return-value]


def prefixes_verify(tmp_path: Path) -> None:
    """Every replay either side wrote is a valid game or a valid prefix of one, never damaged."""
    for path in sorted(tmp_path.rglob("*.replay")):
        v = verify_file(path)
        assert v.ok or "incomplete game" in v.error, v.line()


def complete(pair: PairResult, games: int = 1) -> None:
    assert isinstance(pair.host, list), repr(pair.host)
    assert isinstance(pair.join, list), repr(pair.join)
    assert len(pair.host) == len(pair.join) == games
    for h, j in zip(pair.host, pair.join):
        assert isinstance(h, GameReport)
        assert verify_file(h.replay).ok, verify_file(h.replay).line()
        assert h.replay.read_bytes() == j.replay.read_bytes()


# --- no fault ---------------------------------------------------------------------------------


async def test_a_clean_proxy_changes_nothing(tmp_path: Path) -> None:
    pair, log = await through(tmp_path, None, games=2)
    complete(pair, 2)
    assert log.bytes[0] > 1000 and log.bytes[1] > 1000


# --- dropped connections ------------------------------------------------------------------------


@pytest.mark.parametrize("direction", [0, 1], ids=["join-to-host", "host-to-join"])
@pytest.mark.parametrize("after", [0, 3, 200, 1500, 6000])
async def test_dropped_after_n_bytes(tmp_path: Path, direction: int, after: int) -> None:
    pair, log = await through(tmp_path, Fault(direction=direction, drop_after=after))
    host, join = clean_errors(pair)
    for e in (host, join):
        assert isinstance(e, PeerGone), repr(e)
    assert any("dropped" in ev for ev in log.events), log.events
    prefixes_verify(tmp_path)


@pytest.mark.parametrize("direction", [0, 1], ids=["join-to-host", "host-to-join"])
@pytest.mark.parametrize("after", [2, 700, 3001])
async def test_truncated_then_closed(tmp_path: Path, direction: int, after: int) -> None:
    pair, _ = await through(tmp_path, Fault(direction=direction, truncate_after=after, truncate_then="close"))
    for e in clean_errors(pair):
        assert isinstance(e, PeerGone), repr(e)
    prefixes_verify(tmp_path)


@pytest.mark.parametrize("direction", [0, 1], ids=["join-to-host", "host-to-join"])
@pytest.mark.parametrize("after", [2, 700, 3001])
async def test_truncated_then_stalled(tmp_path: Path, direction: int, after: int) -> None:
    """The stream stops mid-way and stays open: the frame or idle deadline ends it, on both sides."""
    pair, log = await through(tmp_path, Fault(direction=direction, truncate_after=after, truncate_then="stall"))
    clean_errors(pair)
    assert any("stalled" in ev for ev in log.events), log.events
    assert pair.elapsed < PROXY_T.idle + PROXY_T.handshake + 3
    prefixes_verify(tmp_path)


# --- corruption and duplication ------------------------------------------------------------------------


@pytest.mark.parametrize("direction", [0, 1], ids=["join-to-host", "host-to-join"])
@pytest.mark.parametrize("n, offset", [(1, 100), (3, 9), (8, -1), (8, 60), (12, 30), (20, -20)])
async def test_a_corrupted_byte_in_an_envelope_is_the_connections_fault_not_the_peers(
        tmp_path: Path, direction: int, n: int, offset: int) -> None:
    """One flipped byte in envelope frame n: its frame's checksum fails, and neither side accuses
    the other (both did: 'bad signature'). The receiver says the connection corrupted a message,
    the sender that one of its own reached the other side damaged; the game can be resumed."""
    pair, log = await through(tmp_path, Fault(direction=direction, corrupt_envelope=(n, offset)))
    host, join = clean_errors(pair)
    assert any("corrupted" in ev for ev in log.events), log.events
    receiver, sender = (host, join) if direction == 0 else (join, host)
    assert isinstance(receiver, CorruptedMessage) or isinstance(receiver, NoGameStarted), repr(receiver)
    assert str(receiver).startswith("the connection corrupted a message (a frame whose checksum does not match)")
    assert isinstance(sender, CorruptedMessage), repr(sender)
    assert str(sender).startswith("the connection corrupted a message: one of ours reached the other side damaged")
    for e in (host, join):
        assert not isinstance(e, PeerMisbehaved) and "signature" not in str(e), repr(e)
    prefixes_verify(tmp_path)
    for path in sorted(tmp_path.rglob("*.replay")):
        assert verify_file(path).ok is False


async def test_the_first_hello_travels_before_the_checksums_and_is_refused_as_a_bad_hello(tmp_path: Path) -> None:
    """Player 1's hello goes out before it knows whether its peer reads checked frames (an older
    one does not): one damaged on the way is still a bad hello, and no game begins."""
    pair, _ = await through(tmp_path, Fault(direction=1, corrupt_envelope=(0, 40)))
    host, join = clean_errors(pair)
    assert isinstance(join, PeerMisbehaved) and "hello" in str(join), repr(join)
    assert not list(tmp_path.rglob("*.replay"))


@pytest.mark.parametrize("where", [4, 0, 2], ids=["kind-byte", "length-high-byte", "length-third-byte"])
@pytest.mark.parametrize("direction", [0, 1], ids=["join-to-host", "host-to-join"])
async def test_a_corrupted_frame_header_mid_game_ends_cleanly(tmp_path: Path, where: int, direction: int) -> None:
    """The kind byte or the length of a frame mid-game: a clean error on both sides, whatever it becomes
    (an unknown kind, a length over the cap, a length that waits for bytes that never come)."""
    pair, log = await through(tmp_path, Fault(direction=direction, corrupt_envelope=(10, where)))
    assert any("corrupted" in ev for ev in log.events), log.events
    clean_errors(pair)
    prefixes_verify(tmp_path)


@pytest.mark.parametrize("direction", [0, 1], ids=["join-to-host", "host-to-join"])
async def test_after_a_corrupted_message_both_sides_reconnect_and_finish_their_games(
        tmp_path: Path, direction: int) -> None:
    """The connection corrupts a message in the middle of the first of two games: both sides meet
    again as their session files say (the host listens again, the joiner dials again), go on
    from where both stand, and play the second game on the new connection."""
    from basilica_p2p.net.peer import host, join

    logs: dict[str, list[str]] = {"host": [], "join": []}
    h, j = configs(tmp_path, games=2, timeouts=Timeouts(handshake=5.0, ping_interval=0.2, idle=3.0, frame=1.0))
    h.log, j.log = logs["host"].append, logs["join"].append
    h.resume_info = {"role": "host", "address": "127.0.0.1"}
    proxy_log = ProxyLog()
    results: dict[str, object] = {}
    with trio.fail_after(60):
        async with trio.open_nursery() as outer:
            ports = trio.open_memory_channel[int](1)

            async def run_host() -> None:
                results["host"] = await host("127.0.0.1", 0, h, lambda a, p: ports[0].send_nowait(p))

            async def run_join() -> None:
                proxy = await outer.start(relaying_listener, await ports[1].receive(),
                                          [Fault(direction=direction, corrupt_envelope=(24, 30))], proxy_log)
                j.resume_info = {"role": "join", "address": "127.0.0.1", "port": proxy}
                results["join"] = await join("127.0.0.1", proxy, j)

            async with trio.open_nursery() as players:
                players.start_soon(run_host)
                players.start_soon(run_join)
            outer.cancel_scope.cancel()  # the relay
    assert "corrupted envelope 24" in proxy_log.events, proxy_log.events
    complete(PairResult(results["host"], results["join"]), 2)  # type: ignore[arg-type]
    for side in ("host", "join"):
        # Each side waits for the other as after any break (issue 20's presence), saying why.
        assert any(" has gone (" in line and "corrupted" in line for line in logs[side]), logs
        assert any(line.startswith("resuming game ") for line in logs[side]), logs[side]


@pytest.mark.parametrize("direction", [0, 1], ids=["join-to-host", "host-to-join"])
@pytest.mark.parametrize("n", [0, 1, 4, 11])
async def test_a_duplicated_frame_is_detected(tmp_path: Path, direction: int, n: int) -> None:
    pair, log = await through(tmp_path, Fault(direction=direction, duplicate_envelope=n))
    host, join = clean_errors(pair)
    assert any("duplicated" in ev for ev in log.events), log.events
    receiver, sender = (host, join) if direction == 0 else (join, host)
    # A copy of a message already held is the connection's doing, never the peer's: not an
    # accusation (without session files neither side waits for the other, so both stop).
    assert isinstance(receiver, CorruptedMessage) or "hello" in str(receiver), repr(receiver)
    assert isinstance(sender, PeerGone), repr(sender)
    assert not list(tmp_path.rglob("*.evidence")), "an identical copy is not equivocation"
    prefixes_verify(tmp_path)


# --- delays ------------------------------------------------------------------------------------------


async def test_small_delays_on_every_chunk_do_not_break_a_game(tmp_path: Path) -> None:
    pair, _ = await through(tmp_path, Fault(direction=None, delay=0.002))
    complete(pair)


async def test_a_stall_longer_than_the_ping_interval_but_shorter_than_idle_is_fine(tmp_path: Path) -> None:
    # pings every 0.1 s, idle 1.5 s, frame 0.5 s; every 40th chunk waits 0.6 s
    pair, _ = await through(tmp_path, Fault(direction=None, delay=0.6, delay_every=40))
    complete(pair)


async def test_long_delays_on_virtual_time(tmp_path: Path, autojump_clock: trio.testing.MockClock,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Two games over memory streams through the proxy, every 15th chunk held for 20 s
    (idle timeout 30 s, pings every 5 s: a chunk read at most 5 s after the last one
    and held 20 s leaves at most 25 s of silence): slow, but nothing breaks.  (An even number of
    games: after the last one the joiner waits for the host's hello and reads the bye; with an
    odd number it would send its own hello first, see
    test_net_session.py::test_the_joiner_keeps_its_reports_when_the_host_says_bye.)"""
    inline_threads(monkeypatch)
    t = Timeouts(handshake=60.0, ping_interval=5.0, idle=30.0, frame=10.0)
    host_config, join_config = configs(tmp_path, games=2, timeouts=t)
    host_end, proxy_host = trio.testing.memory_stream_pair()
    join_end, proxy_join = trio.testing.memory_stream_pair()
    results: dict[str, object] = {}
    log = ProxyLog()

    async def side(name: str, stream: trio.abc.Stream, hosting: bool, config: PeerConfig) -> None:
        try:
            results[name] = await play_games(stream, hosting, config)
        except Exception as e:
            results[name] = e

    start = trio.current_time()
    with trio.fail_after(100_000):
        async with trio.open_nursery() as nursery:
            async with trio.open_nursery() as inner:
                inner.start_soon(run_proxy, proxy_join, proxy_host, Fault(direction=None, delay=20.0, delay_every=15), log)
                inner.start_soon(side, "host", host_end, True, host_config)
                inner.start_soon(side, "join", join_end, False, join_config)
            nursery.cancel_scope.cancel()
    pair = PairResult(results["host"], results["join"])  # type: ignore[arg-type]
    complete(pair, 2)
    assert trio.current_time() - start > 100.0  # the delays really happened
