"""Issue 9 §3: the session sidecar (secrets and how to reconnect) is created without
following links and is deleted once a game is finished and both sides hold the result."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import trio

from basilica_p2p.net.session import sidecar_path, write_private_json
from support.net_harness import ALICE, BOB, config, host_and_join, reports, settings, with_resume

pytestmark = pytest.mark.trio


def _sidecars(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob(".*.session*"))


@pytest.mark.parametrize("games", [1, 2, 3])
async def test_sidecars_are_deleted_once_both_sides_hold_the_result(tmp_path: Path, games: int) -> None:
    # With one game the joiner (player 2) signs the last result and learns the host read it
    # from the host's goodbye; with two, the host signs last and learns it from the joiner's
    # goodbye; in between, the next game's hello confirms the game before.
    s = settings()
    pair = await host_and_join(with_resume(config(ALICE, s, tmp_path / "h", games=games), "host"),
                               with_resume(config(BOB, s, tmp_path / "j", games=games, seed=5), "join"))
    made = [r.sidecar for r in reports(pair.host) + reports(pair.join)]
    assert len(made) == 2 * games and all(p is not None for p in made)
    assert _sidecars(tmp_path) == [], _sidecars(tmp_path)
    assert len(list(tmp_path.rglob("*.replay"))) == 2 * games  # the replays themselves stay


async def test_keep_session_keeps_them(tmp_path: Path) -> None:
    s = settings()
    h = with_resume(config(ALICE, s, tmp_path / "h", games=2), "host")
    j = with_resume(config(BOB, s, tmp_path / "j", games=2, seed=5), "join")
    h.keep_session = j.keep_session = True
    pair = await host_and_join(h, j)
    kept = {p.name for p in _sidecars(tmp_path)}
    assert kept == {sidecar_path(r.replay).name for r in reports(pair.host) + reports(pair.join)}
    assert len(kept) == 4


async def test_a_sidecar_is_kept_while_the_peer_may_lack_our_last_message(tmp_path: Path) -> None:
    # An older joiner closes without a goodbye: the host, which signed the last result of the
    # second game, cannot know it arrived, so it keeps what resume would need.
    from basilica_p2p.net import peer as net_peer

    s = settings()
    real = net_peer.Connection.await_goodbye

    async def silent(self, limit: float = 5.0) -> bool:  # type: ignore[no-untyped-def]
        return False

    net_peer.Connection.await_goodbye = silent  # type: ignore[method-assign]
    try:
        pair = await host_and_join(with_resume(config(ALICE, s, tmp_path / "h", games=2), "host"),
                                   with_resume(config(BOB, s, tmp_path / "j", games=2, seed=5), "join"))
    finally:
        net_peer.Connection.await_goodbye = real  # type: ignore[method-assign]
    last = reports(pair.host)[-1]
    assert last.seat == 1 and not last.delivered  # the host was player 2 and signed last
    assert _sidecars(tmp_path) == [last.sidecar]


async def test_the_sidecar_is_never_written_through_a_planted_link(tmp_path: Path) -> None:
    # Someone who can write to a shared replay folder plants links where our temporary
    # and final names will be; neither target may be written, and the file is ours, 0600.
    target = tmp_path / "world-readable.txt"
    target.write_text("")
    os.chmod(target, 0o644)
    sidecar = tmp_path / ".game.replay.session"
    os.symlink(target, sidecar)
    for name in (f".{sidecar.name}.tmp", f"{sidecar.name}.tmp"):
        os.symlink(target, tmp_path / name)
    write_private_json(sidecar, {"nonce": "00" * 32})
    assert target.read_text() == ""
    assert not sidecar.is_symlink() and (sidecar.stat().st_mode & 0o777) == 0o600
    assert "nonce" in sidecar.read_text()


async def test_a_finished_resume_deletes_both_sidecars(tmp_path: Path) -> None:
    # A game interrupted and finished with `basilica resume` on both sides leaves no sidecar.
    from basilica_p2p.bots import RandomBot
    from basilica_p2p.net.resume import Rendezvous, resume
    from basilica_p2p.replay.verify import known_manifests
    from support.net_harness import Fault

    s = settings()
    h, j = with_resume(config(ALICE, s, tmp_path / "h"), "host"), with_resume(config(BOB, s, tmp_path / "j", seed=5), "join")
    h.presence = j.presence = lambda side: None  # both stop at the break, as after a crash
    pair = await host_and_join(h, j, fault=Fault(direction=1, drop_after=3000))
    assert not isinstance(pair.host, list) and not isinstance(pair.join, list)
    (rh,) = (tmp_path / "h").glob("*.replay")
    (rj,) = (tmp_path / "j").glob("*.replay")
    assert len(_sidecars(tmp_path)) == 2
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    out: dict[str, object] = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            async def side(key: str, path: Path, me, listen: bool) -> None:  # type: ignore[no-untyped-def]
                out[key] = await resume(path, me, known_manifests(), RandomBot(9), Rendezvous(listen, "127.0.0.1", port),
                                        window=10)
            nursery.start_soon(side, "h", rh, ALICE, True)
            nursery.start_soon(side, "j", rj, BOB, False)
    assert _sidecars(tmp_path) == []


async def test_resume_delivers_a_last_result_the_peer_never_recorded(tmp_path: Path) -> None:
    # Player 2 signs the last result; player 1 crashed before recording it.  Player 2's game is
    # finished, but its kept session file lets `resume` meet once more and hand it over; then
    # both replays verify and both session files are gone.
    from support import replay_builders as rb
    from basilica_p2p.bots import RandomBot
    from basilica_p2p.net.resume import Rendezvous, resume
    from basilica_p2p.replay.verify import known_manifests, verify_file

    s = settings()
    h = with_resume(config(ALICE, s, tmp_path / "h"), "host")
    j = with_resume(config(BOB, s, tmp_path / "j", seed=5), "join")
    h.keep_session = j.keep_session = True
    pair = await host_and_join(h, j)
    (rh,) = reports(pair.host)
    (rj,) = reports(pair.join)
    assert rj.seat == 1 and not rj.delivered  # the joiner, player 2, signed the last message
    replay, envs = rb.load(rh.replay)
    rb.write(rh.replay, replay.header_bytes, [e.raw for e in envs[:-1]])  # the crash took it
    assert not verify_file(rh.replay).ok
    listener = trio.socket.socket()
    await listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            async def side(path: Path, me, listen: bool) -> None:  # type: ignore[no-untyped-def]
                await resume(path, me, known_manifests(), RandomBot(9), Rendezvous(listen, "127.0.0.1", port), window=10)
            nursery.start_soon(side, rh.replay, ALICE, True)
            nursery.start_soon(side, rj.replay, BOB, False)
    assert verify_file(rh.replay).ok and rh.replay.read_bytes()[8:] == rj.replay.read_bytes()[8:]
    assert _sidecars(tmp_path) == []


async def test_no_record_reaches_a_replay_before_its_session_file_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kill between the replay's first record and the session file left a game that
    # `resume` refused ("no session file"): the file now comes first.
    from basilica_p2p.net.side import Side

    missing: list[str] = []
    real = Side.record

    def record(side, raw, sync=True):  # type: ignore[no-untyped-def]
        if side.sidecar is None or not side.sidecar.exists():
            missing.append(side.writer.path.name)
        real(side, raw, sync)

    monkeypatch.setattr(Side, "record", record)
    s = settings()
    h = with_resume(config(ALICE, s, tmp_path / "h"), "host")
    j = with_resume(config(BOB, s, tmp_path / "j", seed=5), "join")
    h.keep_session = j.keep_session = True
    pair = await host_and_join(h, j)
    assert len(reports(pair.host)) == 1 and missing == []
