"""Defects found in review of the network layer, pinned."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio
import trio.testing

import replay_builders as rb
from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import Options
from basilica_p2p.net.framing import CONTROL, Frame
from basilica_p2p.net.session import Connection, Refused, Timeouts, resume_exchange, side_from_replay
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.verify import known_manifests
from basilica_p2p.wire import ProtocolError, encode, open_envelope


@pytest.mark.parametrize("t", [[1], {"a": 1}, 5, None])
def test_a_control_message_whose_type_is_not_text_is_a_protocol_error(t: object) -> None:
    with pytest.raises(ProtocolError):
        Frame(CONTROL, encode({"t": t})).control()


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
