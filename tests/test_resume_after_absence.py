"""A side that comes back with 'basilica resume' (issue 20): real sockets and the real clock for the
game, a virtual clock for the wait.  What it was away counts against whoever was to decide; a claim
made against it at its return is refused and the game claimed back; and a side away longer than the
agreed window claims nothing."""

from __future__ import annotations

import hashlib
import os
import socket
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from basilica_p2p.bots import RandomBot
from basilica_p2p.clock import TimeControl
from basilica_p2p.net.framing import FramedStream
from basilica_p2p.net.peer import PeerConfig
from basilica_p2p.net.rejoin import prove
from basilica_p2p.net.resume import Rendezvous, resume
from basilica_p2p.net.session import PeerGone
from basilica_p2p.replay.verify import known_manifests, verify_file
from basilica_p2p.wire import seal

from support import replay_builders as rb
from support.net_harness import ALICE, BOB, DEFAULT, FAST, host_and_join


def kept_clocked_game(tmp_path: Path) -> tuple[Path, list[Any]]:
    """A whole clocked network game whose host (alice, player 1) kept its session file; the host's
    replay is then cut back to a decision of its own, as if it had stopped there."""
    timed = replace(DEFAULT, clock=TimeControl(1, 0))
    h = PeerConfig(ALICE, timed, lambda k: RandomBot(1), tmp_path / "h", None, FAST, 1)
    j = PeerConfig(BOB, timed, lambda k: RandomBot(2), tmp_path / "j", None, FAST, 1)
    h.resume_info = {"role": "host", "identity": "user", "address": "127.0.0.1", "port": 0}
    h.keep_session = True

    async def play() -> Any:
        return await host_and_join(h, j)

    pair = trio.run(play)
    (report,) = pair.host  # type: ignore[misc]
    replay, envs = rb.load(report.replay)
    cut = [i for i, e in enumerate(envs) if e.type == "action" and e.sender == ALICE.public][6]
    rb.write(report.replay, replay.header_bytes, [e.raw for e in envs[:cut]])
    return report.replay, envs[:cut]


def test_a_false_claim_on_time_at_resume_is_refused_and_the_game_claimed_by_the_side_it_named(
    tmp_path: Path,
) -> None:
    """The peer comes back saying it holds one message more than the host, then signs
    a claim that the host's clock ran out, while the host's own clock shows time left.  A side
    never records a claim made against it: the host refuses it and claims the game, saying why."""
    path, envs = kept_clocked_game(tmp_path)
    game, n = envs[0].game, len(envs)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out: dict[str, Any] = {}

    async def liar() -> None:
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
                break
            except OSError:
                await trio.sleep(0.05)
        framed = FramedStream(stream, 5.0)
        assert await prove(framed, BOB, ALICE.public, game, trio.current_time() + 5)
        await framed.send_control("resume", game=game, have=n + 1, tip=hashlib.sha256(b"lie").digest())
        claim = seal(BOB.key, game, n, envs[-1].hash, "timeout", {"loser": 1, "left": 1, "waited": 1})
        await framed.send(1, claim.raw)
        out["claim"] = claim.raw
        with trio.move_on_after(10):
            try:
                while True:
                    await framed.receive()
            except Exception:
                pass

    async def both() -> None:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(liar)
                out["report"] = await resume(path, ALICE, known_manifests(), RandomBot(1),
                                             Rendezvous(True, "127.0.0.1", port), FAST)

    trio.run(both)
    o = out["report"].outcome
    assert o.end == "forfeit" and o.winner == 0 and o.claimed_by == 0, o
    assert "claiming that we lost" in o.reason, o.reason
    assert out["claim"] not in path.read_bytes()  # never recorded
    v = verify_file(path)
    assert v.ok and "forfeited as claimed by player 1" in v.line(), v.line()


def test_a_side_away_longer_than_the_window_claims_nothing_when_it_comes_back_alone(tmp_path: Path) -> None:
    """A side that stopped (say, right after an unwelcome card) and resumes alone after the
    agreed window has passed finds nobody; the other side, which stayed, had the right to claim
    the game, so this one claims nothing: its replay does not become a win by claim."""
    path, _ = kept_clocked_game(tmp_path)
    long_ago = time.time() - 600  # last written ten minutes ago; the window is 120 s
    os.utime(path, (long_ago, long_ago))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    said: list[str] = []

    async def alone() -> Any:
        return await resume(path, ALICE, known_manifests(), RandomBot(1), Rendezvous(True, "127.0.0.1", port), FAST,
                            log=said.append)

    with pytest.raises(PeerGone, match="claims nothing"):
        trio.run(alone, clock=trio.testing.MockClock(autojump_threshold=0))
    assert any("longer than the agreed 120 s" in line for line in said), said
    v = verify_file(path)
    assert not v.ok and "incomplete game" in v.error, v.line()


def test_a_stranger_first_at_resume_learns_nothing_ends_nothing_and_the_game_goes_on(tmp_path: Path) -> None:
    """Both sides stopped and run 'basilica resume'; before the joiner dials, a stranger
    connects to the host's port and sends four bytes, then another connects and says nothing.
    The host tells neither anything (not even the game id), drops them, and the joiner, when it
    comes, proves itself and the game goes on to its end on both sides."""
    from support.net_harness import Fault, config, with_resume

    s = replace(DEFAULT)
    h, j = with_resume(config(ALICE, s, tmp_path / "h"), "host"), with_resume(config(BOB, s, tmp_path / "j", seed=5), "join")
    h.presence = j.presence = lambda side: None  # both stop at the break, as after a crash

    async def cut() -> Any:
        return await host_and_join(h, j, fault=Fault(direction=1, drop_after=3000))

    pair = trio.run(cut)
    assert not isinstance(pair.host, list) and not isinstance(pair.join, list)
    (rh,) = (tmp_path / "h").glob("*.replay")
    (rj,) = (tmp_path / "j").glob("*.replay")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    out: dict[str, Any] = {}
    heard: list[bytes] = []
    said: list[str] = []

    async def stranger(data: bytes) -> None:
        while True:
            try:
                stream = await trio.open_tcp_stream("127.0.0.1", port)
                break
            except OSError:
                await trio.sleep(0.05)
        if data:
            await stream.send_all(data)
        with trio.move_on_after(1):  # what the host says to a stranger: its nonce, nothing of the game
            try:
                while chunk := await stream.receive_some(65536):
                    heard.append(chunk)
            except trio.BrokenResourceError:
                pass
        await stream.aclose()

    async def both() -> None:
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                async def host_side() -> None:
                    out["h"] = await resume(rh, ALICE, known_manifests(), RandomBot(9),
                                            Rendezvous(True, "127.0.0.1", port), FAST, log=said.append)
                nursery.start_soon(host_side)
                await stranger(b"\x00\x00\x00\x04")
                await stranger(b"")
                out["j"] = await resume(rj, BOB, known_manifests(), RandomBot(8), Rendezvous(False, "127.0.0.1", port),
                                        FAST)

    trio.run(both)
    assert out["h"].outcome == out["j"].outcome and out["h"].outcome.end != "forfeit"
    assert rh.read_bytes() == rj.read_bytes() and verify_file(rh).ok
    assert b"".join(heard)  # it heard something: a nonce
    game = read_game_id(rh)
    assert game not in b"".join(heard)  # ... and nothing of the game
    assert sum("did not prove to be the other player" in line for line in said) == 2, said


def read_game_id(path: Path) -> bytes:
    from basilica_p2p.replay.file import read_replay

    return read_replay(path).header.game
