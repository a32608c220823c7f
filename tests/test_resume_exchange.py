"""Two records of one game meeting again at resume (net/presence.py ``resume_exchange``): records
that part at their last message are refused, an acknowledgement of ours that a power loss took is
taken back from the peer byte for byte, and a forfeit by absence comes after that acknowledgement."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

from support import replay_builders as rb
from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import Options
from basilica_p2p.net.session import (
    Connection,
    Refused,
    Timeouts,
    continue_game,
    resume_exchange,
    side_from_replay,
)
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.verify import known_manifests, verify_file
from basilica_p2p.wire import open_envelope


@pytest.mark.trio
async def test_resume_refuses_two_records_of_equal_length_that_differ(tmp_path: Path) -> None:
    # Two honest records of one game that part at their last message (as when a
    # move-time forfeit crosses an action in flight): resume must not join them.
    path = tmp_path / "a.replay"
    play_recorded(path, rb.manifest(), Options(), rb.PLAYERS, (RandomBot(1), RandomBot(2)),
                  nonces=(bytes([1]) * 32, bytes([2]) * 32), game_id=rb.GAME_ID, salts=rb.salts())
    replay = read_replay(path)
    items = rb.as_items([open_envelope(r) for r in replay.records])
    cut = next(i for i, (_, t, _) in enumerate(items) if t == "action") + 6
    mine = rb.rechain(items[:cut])  # ends with an ack by one player...
    theirs = rb.rechain(items[:cut - 1] + [(rb.ALICE, "forfeit", {"loser": 2, "reason": "too slow"})])
    a = rb.write(tmp_path / "p1.replay", replay.header_bytes, rb.raws(theirs))
    b = rb.write(tmp_path / "p2.replay", replay.header_bytes, rb.raws(mine))
    side_a, _ = side_from_replay(a, known_manifests(), rb.ALICE)
    side_b, _ = side_from_replay(b, known_manifests(), rb.BOB)
    s1, s2 = trio.testing.memory_stream_pair()
    errors: list[BaseException] = []

    async def run(conn: Connection, side) -> None:  # type: ignore[no-untyped-def]
        try:
            await resume_exchange(conn, side, lambda m: None)
        except Exception as e:
            errors.append(e)

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run, Connection(s1, Timeouts()), side_a)
            nursery.start_soon(run, Connection(s2, Timeouts()), side_b)
    # Both sides stop: each sees the other's tip differ (or is told so by the other).
    assert len(errors) == 2, errors
    assert any(isinstance(e, Refused) and "differ at message" in str(e) for e in errors), errors


@pytest.mark.trio
@pytest.mark.parametrize("extra", [0, 1])
async def test_resume_takes_back_our_own_acknowledgement_that_a_power_loss_took(tmp_path: Path, extra: int) -> None:
    # An acknowledgement is sent before it is fsynced (it is a function of the
    # state, and signing is deterministic).  If our replay loses it, the peer holds
    # it and sends it back on resume; we accept our own signature and go on.
    path = tmp_path / "full.replay"
    play_recorded(path, rb.manifest(), Options(), rb.PLAYERS, (RandomBot(1), RandomBot(2)),
                  nonces=(bytes([1]) * 32, bytes([2]) * 32), game_id=rb.GAME_ID, salts=rb.salts())
    replay = read_replay(path)
    envs = [open_envelope(r) for r in replay.records]
    alice_key = rb.ALICE.public
    ack = next(i for i, e in enumerate(envs) if i > 12 and e.type == "ack" and e.sender == alice_key)
    a = rb.write(tmp_path / "p1.replay", replay.header_bytes, replay.records[:ack])  # lost her last ack
    b = rb.write(tmp_path / "p2.replay", replay.header_bytes, replay.records[:ack + 1 + extra])
    side_a, seat_a = side_from_replay(a, known_manifests(), rb.ALICE)
    side_b, seat_b = side_from_replay(b, known_manifests(), rb.BOB)
    s1, s2 = trio.testing.memory_stream_pair()

    async def run(conn: Connection, side, seat: int, bot: RandomBot) -> None:  # type: ignore[no-untyped-def]
        async def body() -> None:
            await resume_exchange(conn, side, lambda m: None)
            await continue_game(conn, bot, side, "peer", lambda m: None)
        await conn.run(body)

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run, Connection(s1, Timeouts()), side_a, seat_a, RandomBot(5))
            nursery.start_soon(run, Connection(s2, Timeouts()), side_b, seat_b, RandomBot(6))
    ra, rb_ = read_replay(a), read_replay(b)
    assert ra.records == rb_.records
    assert ra.records[ack] == replay.records[ack]  # the very bytes she signed before
    assert verify_file(a).ok and verify_file(b).ok


def test_a_forfeit_by_absence_never_takes_the_place_of_our_lost_acknowledgement(tmp_path: Path) -> None:
    # A power loss took our last ack (sent before its fsync), and the peer, which holds it,
    # never comes back. The claim must come after that very ack, not at its sequence number:
    # two different messages of ours for one number would be evidence against us.
    from basilica_p2p.net.session import forfeit_by_absence
    from basilica_p2p.replay.file import ReplayWriter

    path = tmp_path / "full.replay"
    play_recorded(path, rb.manifest(), Options(), rb.PLAYERS, (RandomBot(1), RandomBot(2)),
                  nonces=(bytes([1]) * 32, bytes([2]) * 32), game_id=rb.GAME_ID, salts=rb.salts())
    replay = read_replay(path)
    envs = [open_envelope(r) for r in replay.records]
    ack = next(i for i, e in enumerate(envs) if i > 12 and e.type == "ack" and e.sender == rb.ALICE.public)
    a = rb.write(tmp_path / "p1.replay", replay.header_bytes, replay.records[:ack])
    side, seat = side_from_replay(a, known_manifests(), rb.ALICE)
    side.writer.close()
    side.writer, _ = ReplayWriter.open_append(a)
    forfeit_by_absence(side, 5.0)
    side.writer.close()
    mine = read_replay(a).records
    assert mine[ack] == replay.records[ack]  # the same ack the peer holds, byte for byte
    assert open_envelope(mine[ack + 1]).type == "forfeit"
    assert verify_file(a).ok
