"""The invite's door on loopback (issue 11): the host admits only the invite's holder, keeps listening
through garbage, silence, wrong proofs and floods, and the joiner refuses a host with another key.
The same code runs through real routers in tests/test_nat_games.py."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest
import trio

from basilica_p2p.bots import RandomBot
from basilica_p2p.net.dial import Dialed, DialTimes, ManInTheMiddle, NoPath, dial
from basilica_p2p.net.framing import CONTROL, FramedStream
from basilica_p2p.net.gate import CHALLENGE_TAG, Admitted, GateClosed, GateLimits, admit
from basilica_p2p.net.invite import Candidate, Invite
from basilica_p2p.net.peer import PeerConfig, play_games
from basilica_p2p.net.punch import listen
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire import encode
from support.hostile_traffic import FLOOD_SOURCE, JOINER_SOURCE, FloodStats, flood, latency_proxy
from support.net_harness import ALICE, BOB, DEFAULT, FAST, MALLORY

pytestmark = pytest.mark.trio

QUICK = DialTimes(stagger=0.05, connect=1.0, challenge=1.0, retry=0.1, frame=2.0)
QUICK_BUT_FAR = DialTimes(stagger=0.05, connect=3.0, challenge=3.0, retry=0.1, frame=5.0)  # 300 ms away


def invite_for(port: int, key: bytes = ALICE.public) -> Invite:
    return Invite(key, os.urandom(16), 2**31, (Candidate("lan", "127.0.0.1", port),))


class Log(list[str]):
    def __call__(self, line: str) -> None:
        self.append(line)


async def _door() -> tuple[trio.SocketListener, int, Invite]:
    """A listener on a free loopback port and an invite of ALICE's for it."""
    listener = await listen("127.0.0.1", 0)
    port = listener.socket.getsockname()[1]
    return listener, port, invite_for(port)


async def _admit_into(result: dict[str, object], listener: trio.SocketListener, invite: Invite, log: Log,
                      limits: GateLimits) -> None:
    result["admitted"] = await admit([listener], ALICE, invite, trio.current_time() + 20, log, limits)


async def _connect(port: int) -> trio.SocketStream:
    return await trio.open_tcp_stream("127.0.0.1", port)


async def test_the_invites_holder_is_admitted_and_the_game_runs_with_both_keys_pinned(tmp_path: Path) -> None:
    listener, port, invite = await _door()
    log = Log()
    reports = {}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            async def host() -> None:
                admitted = await admit([listener], ALICE, invite, trio.current_time() + 30, log)
                assert admitted.joiner_key == BOB.public and admitted.via == "lan"
                config = PeerConfig(ALICE, DEFAULT, lambda k: RandomBot(k), tmp_path / "h", None, FAST, 1,
                                    pinned=admitted.joiner_key)
                reports["host"] = await play_games(admitted.framed, True, config)

            async def join() -> None:
                dialed = await dial(invite, BOB, trio.current_time() + 30, times=QUICK)
                assert dialed.path == "direct (LAN)"
                config = PeerConfig(BOB, DEFAULT, lambda k: RandomBot(k + 7), tmp_path / "j", None, FAST, 1,
                                    pinned=invite.key)
                reports["join"] = await play_games(dialed.framed, False, config)

            nursery.start_soon(host)
            nursery.start_soon(join)
    for side in ("host", "join"):
        (report,) = reports[side]
        assert verify_file(report.replay).ok
    assert log == []


async def test_garbage_silence_and_wrong_proofs_are_dropped_and_the_host_keeps_listening(tmp_path: Path) -> None:
    listener, port, invite = await _door()
    log = Log()
    limits = GateLimits(handshakes=8, handshake_time=0.5)
    result: dict[str, object] = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_admit_into, result, listener, invite, log, limits)
            garbage = await _connect(port)
            await garbage.send_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            silent = await _connect(port)
            wrong = FramedStream(await _connect(port))
            challenge = (await wrong.receive()).control()
            await wrong.send_control("knock", key=MALLORY.public, mac=bytes(32), via="lan")
            refusal = (await wrong.receive()).control()
            assert refusal["t"] == "error" and "does not hold the invite" in refusal["reason"]
            stolen = FramedStream(await _connect(port))  # a knock copied from another connection
            await stolen.receive()
            from basilica_p2p.net.invite import knock_mac
            await stolen.send_control("knock", key=BOB.public,
                                      mac=knock_mac(invite.secret, challenge["nonce"], ALICE.public, BOB.public),
                                      via="lan")
            await trio.sleep(0.7)  # the silent one's 0.5 s to knock run out
            dialed = await dial(invite, BOB, trio.current_time() + 10, times=QUICK)
            for s in (garbage, silent):
                await s.aclose()
            await stolen.aclose()
            await wrong.aclose()
            await dialed.framed.aclose()
    assert result["admitted"].joiner_key == BOB.public  # type: ignore[attr-defined]
    assert sum("did not prove the invite" in line for line in log) == 2, log  # a wrong MAC, a copied one
    assert any("failed the invite handshake" in line for line in log), log  # the HTTP request
    assert any("did not knock and sit within 0.5 s" in line for line in log), log


async def test_a_knock_whose_seated_answer_is_lost_leaves_the_seat_for_the_next_try(tmp_path: Path) -> None:
    """A router that forgets a punched connection half-way loses the host's 'seated': the joiner
    never sits there, and its next connection must still find the seat free (CI saw the old
    seat-at-knock gate refuse it, or both sides wait for a hello that never came)."""
    from basilica_p2p.net.invite import knock_mac

    listener, port, invite = await _door()
    log = Log()
    result: dict[str, object] = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_admit_into, result, listener, invite, log, GateLimits(handshake_time=0.5))
            lost = FramedStream(await _connect(port))
            challenge = (await lost.receive()).control()
            await lost.send_control("knock-seat", key=BOB.public,
                                    mac=knock_mac(invite.secret, challenge["nonce"], ALICE.public, BOB.public),
                                    via="punched")
            assert (await lost.receive()).control()["t"] == "seated"
            await lost.aclose()  # as if that answer never arrived: the joiner gives the connection up
            dialed = await dial(invite, BOB, trio.current_time() + 10, times=QUICK)
            ours = dialed.framed.stream.socket.getsockname()[1]  # type: ignore[attr-defined]
            await dialed.framed.aclose()
    admitted = result["admitted"]
    assert admitted.joiner_key == BOB.public  # type: ignore[attr-defined]
    assert admitted.peer.endswith(f":{ours}"), (admitted.peer, ours)  # type: ignore[attr-defined]
    assert any("closed before it was seated" in line for line in log), log


async def test_a_flood_of_half_open_connections_does_not_starve_the_joiner(tmp_path: Path) -> None:
    listener, port, invite = await _door()
    log = Log()
    limits = GateLimits(handshakes=4, handshake_time=0.4)
    flood: list[trio.SocketStream] = []
    result: dict[str, object] = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            async def flooder() -> None:
                while "admitted" not in result:  # silent connections, faster than slots free up
                    flood.append(await _connect(port))
                    await trio.sleep(0.01)

            nursery.start_soon(_admit_into, result, listener, invite, log, limits)
            nursery.start_soon(flooder)
            await trio.sleep(0.3)
            dialed = await dial(invite, BOB, trio.current_time() + 15, times=QUICK)
            nursery.cancel_scope.cancel()
    for s in flood:
        await s.aclose()
    await dialed.framed.aclose()
    assert len(flood) > 2 * limits.handshakes
    assert any("closed unheard" in line for line in log)


async def _connect_from(source: str, port: int) -> trio.SocketStream:
    sock = trio.socket.socket()
    await sock.bind((source, 0))
    await sock.connect(("127.0.0.1", port))
    return trio.SocketStream(sock)


async def test_a_connection_that_proved_the_invite_is_never_displaced_by_strangers() -> None:
    """The joiner knocked and was told it is seated; before its 'sit' arrives, more strangers come
    than there is room for: they displace one another, never the connection that proved the invite."""
    from basilica_p2p.net.invite import knock_mac

    listener, port, invite = await _door()
    log = Log()
    result: dict[str, object] = {}
    strangers: list[trio.SocketStream] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_admit_into, result, listener, invite, log,
                               GateLimits(handshakes=4, per_address=2, handshake_time=20, quiet_after=100))
            joiner = FramedStream(await _connect_from(JOINER_SOURCE, port))
            challenge = (await joiner.receive()).control()
            await joiner.send_control("knock-seat", key=BOB.public,
                                      mac=knock_mac(invite.secret, challenge["nonce"], ALICE.public, BOB.public),
                                      via="lan")
            assert (await joiner.receive()).control()["t"] == "seated"
            for n in range(40):  # from one address and from many
                strangers.append(await _connect_from(FLOOD_SOURCE if n % 2 else f"127.1.0.{n}", port))
            while sum("closed unheard" in line for line in log) < 36:  # 40 strangers, room for 4
                await trio.sleep(0.01)
            await joiner.send_control("sit")
            while "admitted" not in result:
                await trio.sleep(0.01)
    for s in strangers:
        await s.aclose()
    admitted = result["admitted"]
    assert admitted.joiner_key == BOB.public  # type: ignore[attr-defined]
    await admitted.framed.send_control("ping", n=7)  # type: ignore[attr-defined]
    assert (await joiner.receive()).control() == {"t": "ping", "n": 7}
    await joiner.aclose()


async def test_a_flood_from_one_address_displaces_only_its_own_handshakes() -> None:
    """A stranger from one address, then many more from another than the room for all: only the
    flood's own handshakes give way; the first stranger's is left to its handshake time."""
    listener, port, invite = await _door()
    log = Log()
    result: dict[str, object] = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_admit_into, result, listener, invite, log,
                               GateLimits(handshakes=8, per_address=3, handshake_time=20, quiet_after=100))
            lone = FramedStream(await _connect_from(JOINER_SOURCE, port))
            await lone.receive()  # the challenge: its handshake is under way
            flood_ = [await _connect_from(FLOOD_SOURCE, port) for _ in range(30)]
            while sum("closed unheard" in line for line in log) < 27:
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    assert not any(JOINER_SOURCE in line for line in log), log
    assert all(FLOOD_SOURCE in line for line in log), log
    for s in flood_:
        await s.aclose()
    await lone.aclose()


async def test_a_flood_is_counted_in_the_hosts_log_not_written_line_by_line() -> None:
    """A thousand strangers a second would be a thousand lines a second on the host's terminal:
    past the first few of an interval, one line counts the rest."""
    listener, port, invite = await _door()
    log = Log()
    result: dict[str, object] = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_admit_into, result, listener, invite, log,
                               GateLimits(quiet_after=3, quiet_interval=600))
            for _ in range(10):
                garbage = await _connect_from(FLOOD_SOURCE, port)
                await garbage.send_all(b"GET / HTTP/1.1\r\n\r\n")
                await garbage.receive_some(100)  # the host closed it: dropped and logged
                await garbage.aclose()
            dialed = await dial(invite, BOB, trio.current_time() + 10, times=QUICK)
            while "admitted" not in result:
                await trio.sleep(0.01)
    await dialed.framed.aclose()
    assert len(log) == 4, log
    assert all("failed the invite handshake" in line for line in log[:3]), log
    assert log[3].startswith("7 more connections from 1 address(es) dropped in the last 600 s"), log


@pytest.mark.parametrize("many", [False, True], ids=["from one address", "from many addresses"])
async def test_a_joiner_a_round_trip_away_gets_in_through_a_flood_of_strangers(many: bool) -> None:
    """Across the internet the knock comes a round trip after the host accepted: a flood that
    displaces the joiner's handshake meanwhile keeps it out for good (the old gate let any
    newcomer displace the oldest of 16 handshakes, so 16 strangers per round trip were enough).
    Here 300 ms away, with 200 strangers a second of every kind (silent, slowloris, garbage,
    recorded knocks), the joiner is seated with the default limits, on a connection that stays."""
    listener, port, invite = await _door()
    log = Log()
    seated: trio.MemorySendChannel[Admitted]
    seated, admissions = trio.open_memory_channel[Admitted](1)
    stats = FloodStats()

    async def host() -> None:
        await seated.send(await admit([listener], ALICE, invite, trio.current_time() + 30, log))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            proxy = await nursery.start(latency_proxy, port, 0.3)
            nursery.start_soon(partial(flood, port, 200, many, stats=stats))
            await trio.sleep(1.0)  # the flood is under way before the joiner comes
            slow = Invite(invite.key, invite.secret, invite.expires, (Candidate("lan", "127.0.0.1", proxy),))
            dialed = await dial(slow, BOB, trio.current_time() + 20, times=QUICK_BUT_FAR)
            admitted = await admissions.receive()
            assert admitted.peer.startswith(JOINER_SOURCE + ":"), admitted.peer
            # The seat is the joiner's connection, still open both ways (not reset after 'seated').
            await admitted.framed.send_control("ping", n=1)
            assert (await dialed.framed.receive()).control() == {"t": "ping", "n": 1}
            nursery.cancel_scope.cancel()
    await dialed.framed.aclose()
    assert stats.opened > 200, stats


async def test_a_joiner_whose_connection_is_reset_after_it_was_seated_connects_again_and_plays(
        tmp_path: Path) -> None:
    """The old gate could reset a connection after 'seated' (a newcomer displaced it before 'sit'
    arrived); a router can too.  No game began and the seat is still free: the joiner dials again
    (the old joiner exited with 'the connection ended before the game began')."""
    from basilica_p2p.net.invite import knock_mac
    from basilica_p2p.net.invite_meeting import seated_play
    from basilica_p2p.net.punch import abort

    listener, port, invite = await _door()
    log = Log()
    reports: dict[str, object] = {}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            async def host() -> None:
                first = FramedStream(await listener.accept())  # seats the joiner, then is reset
                nonce = os.urandom(32)
                await first.send_control("challenge", key=ALICE.public, nonce=nonce,
                                         sig=ALICE.key.sign(CHALLENGE_TAG + nonce))
                knock = (await first.receive()).control()
                assert knock["mac"] == knock_mac(invite.secret, nonce, ALICE.public, BOB.public)
                await first.send_control("seated")
                assert (await first.receive()).control()["t"] == "sit"
                await abort(first.stream)
                admitted = await admit([listener], ALICE, invite, trio.current_time() + 30, Log())
                config = PeerConfig(ALICE, DEFAULT, lambda k: RandomBot(k), tmp_path / "h", None, FAST, 1,
                                    pinned=admitted.joiner_key)
                reports["host"] = await play_games(admitted.framed, True, config)

            async def join() -> None:
                config = PeerConfig(BOB, DEFAULT, lambda k: RandomBot(k + 7), tmp_path / "j", None, FAST, 1,
                                    pinned=invite.key)

                async def connect(seconds: float) -> Dialed:
                    return await dial(invite, BOB, trio.current_time() + seconds, times=QUICK)

                reports["join"] = await seated_play(connect, lambda d: play_games(d.framed, False, config),
                                                    lambda: config.games_begun > 0, 30, log)

            nursery.start_soon(host)
            nursery.start_soon(join)
    for side in ("host", "join"):
        (report,) = reports[side]  # type: ignore[misc]
        assert verify_file(report.replay).ok
    assert len(log) == 1 and log[0].startswith("the connection ended after the host seated us"), log


async def test_a_host_with_another_key_is_refused_as_a_man_in_the_middle() -> None:
    listener = await listen("127.0.0.1", 0)
    port = listener.socket.getsockname()[1]
    invite = invite_for(port, key=ALICE.public)
    impostor = Invite(MALLORY.public, invite.secret, invite.expires, invite.candidates)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(admit, [listener], MALLORY, impostor, trio.current_time() + 10, Log())
        with pytest.raises(ManInTheMiddle) as info:
            await dial(invite, BOB, trio.current_time() + 1.5, times=QUICK)
        nursery.cancel_scope.cancel()
    from basilica_p2p.identity import fingerprint
    text = str(info.value)
    assert fingerprint(MALLORY.public) in text and fingerprint(ALICE.public) in text
    assert "man in the middle" in text


async def test_a_host_that_replays_a_challenge_signed_for_another_key_is_refused() -> None:
    """The challenge names the pinned key but is signed by another: still an impostor."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    invite = invite_for(port)

    async def fake_host() -> None:
        stream = await listeners[0].accept()
        framed = FramedStream(stream)
        nonce = os.urandom(32)
        await framed.send(CONTROL, encode({"t": "challenge", "key": ALICE.public, "nonce": nonce,
                                           "sig": MALLORY.key.sign(nonce)}))
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fake_host)
        with pytest.raises(ManInTheMiddle):
            await dial(invite, BOB, trio.current_time() + 1.0, times=QUICK)
        nursery.cancel_scope.cancel()


async def test_nothing_listening_is_no_path_with_the_reason() -> None:
    listener = await listen("127.0.0.1", 0)
    port = listener.socket.getsockname()[1]
    await listener.aclose()
    with pytest.raises(NoPath) as info:
        await dial(invite_for(port), BOB, trio.current_time() + 0.5, times=QUICK)
    assert not isinstance(info.value, ManInTheMiddle)
    assert info.value.failures and "refused" in info.value.failures[0][1].lower()


async def test_an_invite_nobody_uses_closes_the_gate_with_one_line() -> None:
    listener = await listen("127.0.0.1", 0)
    with pytest.raises(GateClosed, match="expired and nobody took the seat"):
        await admit([listener], ALICE, invite_for(1), trio.current_time() + 0.2, Log())


async def test_an_impostor_at_one_address_does_not_stop_the_join_from_reaching_the_host_at_another() -> None:
    """Another key answering at a LAN address (a neighbour's host, or an attacker) is refused with one
    line, and the joiner goes on to the invite's real host at its next address."""
    fake, fake_port, _ = await _door()
    real, real_port, _ = await _door()
    invite = Invite(ALICE.public, os.urandom(16), 2**31,
                    (Candidate("lan", "127.0.0.1", fake_port), Candidate("stun", "127.0.0.1", real_port)))
    impostor = Invite(MALLORY.public, invite.secret, invite.expires, invite.candidates)
    log = Log()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(admit, [fake], MALLORY, impostor, trio.current_time() + 20, Log())
            nursery.start_soon(admit, [real], ALICE, invite, trio.current_time() + 20, Log())
            dialed = await dial(invite, BOB, trio.current_time() + 10, log, times=QUICK)
            nursery.cancel_scope.cancel()
    await dialed.framed.aclose()
    assert dialed.address == f"127.0.0.1:{real_port}"
    assert any(line.startswith(f"refused 127.0.0.1:{fake_port}: it answered with the key ") and
               line.endswith("a possible man in the middle (still trying)") for line in log), log


async def test_a_punch_attempt_meeting_any_local_error_is_only_that_attempts_failure(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A local firewall (EPERM), an ICMP protocol-unreachable (ENOPROTOOPT): punching goes on."""
    import errno

    from basilica_p2p.net import punch

    for code in (errno.EPERM, errno.ENOPROTOOPT, errno.ECONNREFUSED):
        async def refuse(self: object, address: object, code: int = code) -> None:
            raise OSError(code, os.strerror(code))

        probe = trio.socket.socket()
        probe.close()
        monkeypatch.setattr(type(probe), "connect", refuse)
        got = await punch._connect_from(0, ("127.0.0.1", 9), 1.0)
        assert got is (code == errno.ECONNREFUSED)
