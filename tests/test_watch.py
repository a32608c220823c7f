"""Watching a game (net/watch.py): a watcher proves the watch code, catches up from the host's
record, checks every record as verify does, and can never slow or stop the game."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from basilica_p2p.agent import AgentBase, Traits
from basilica_p2p.bots import RandomBot
from basilica_p2p.identity import Identity
from basilica_p2p.net.framing import CONTROL, ENVELOPE, FramedStream, PeerClosed
from basilica_p2p.net.invite import Candidate, Invite, InviteError, WatchCode, parse_invite, parse_watch, watch_mac
from basilica_p2p.net.peer import PeerConfig
from basilica_p2p.net.watch import WatchError, WatchHub, Watched, watch_games
from basilica_p2p.replay.file import Header, read_replay
from basilica_p2p.seat import SeatEvent, Watching

from support.net_harness import ALICE, BOB, DEFAULT, FAST, host_and_join, ident

CAROL = ident(7, "carol")
DAVE = ident(8, "dave")
NOW = 1_800_000_000


def code_of(hub: WatchHub, port: int) -> Invite:
    return parse_watch(hub.code([Candidate("lan", "127.0.0.1", port)], NOW), NOW)


async def listener() -> tuple[trio.SocketListener, int]:
    (lst,) = await trio.open_tcp_listeners(0, host="127.0.0.1")
    return lst, lst.socket.getsockname()[1]


class Seen:
    """What one watcher was told: each game's header and events."""

    def __init__(self) -> None:
        self.headers: list[Header] = []
        self.events: list[SeatEvent] = []

    def begin(self, header: Header) -> Any:
        self.headers.append(header)
        return self.events.append


def config(me: Identity, seed: int, replay_dir: Path) -> PeerConfig:
    return PeerConfig(me, DEFAULT, lambda k: RandomBot(seed + k), replay_dir, None, FAST, 1)


async def wait_for(predicate: Any, what: str, limit: float = 10.0) -> None:
    with trio.fail_after(limit):
        while not predicate():
            await trio.sleep(0.01)


@pytest.mark.trio
@pytest.mark.parametrize("late", [False, True], ids=["from-the-start", "late"])
async def test_a_watcher_checks_every_record_and_holds_the_same_game_as_the_players(tmp_path: Path,
                                                                                    late: bool) -> None:
    hub = WatchHub(ALICE, 8)
    lst, port = await listener()
    host_cfg = config(ALICE, 1, tmp_path / "a")
    host_cfg.hub = hub
    seen = Seen()
    watched: list[Watched] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hub.serve, lst)

        async def watcher() -> None:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            watched.extend(await watch_games(stream, code_of(hub, port), CAROL, seen.begin))

        if not late:
            nursery.start_soon(watcher)
            await wait_for(lambda: hub.watchers, "the watcher admitted")
        else:
            # Joins when the game is under way: it catches up from the host's record.
            original = hub.publish

            def publish(raw: bytes) -> None:
                original(raw)
                if len(hub.records) == 40:
                    nursery.start_soon(watcher)

            hub.publish = publish  # type: ignore[method-assign]
        pair = await host_and_join(host_cfg, config(BOB, 2, tmp_path / "b"), direct=True, limit=60)
        assert isinstance(pair.host, list), pair.host
        await wait_for(lambda: watched, "the watcher's end")
        nursery.cancel_scope.cancel()
    (game,) = watched
    assert game.finished and game.seat.outcome == pair.host[0].outcome
    held = read_replay(pair.host[0].replay)
    assert game.seat.records == held.records and seen.headers[0] == held.header
    assert sum(1 for e in seen.events if type(e).__name__ == "MoveApplied") == game.seat.outcome.moves


@pytest.mark.trio
async def test_a_players_invite_is_no_watch_code_and_a_watch_code_no_invite() -> None:
    hub = WatchHub(ALICE, 8)
    text = hub.code([Candidate("lan", "127.0.0.1", 7432)], NOW)
    assert text.startswith("bas1w:")
    with pytest.raises(InviteError, match="lets you watch, not play"):
        parse_invite(text, NOW)
    from basilica_p2p.net.invite import format_invite

    invite = format_invite(Invite(ALICE.public, bytes(16), NOW + 60, (Candidate("lan", "127.0.0.1", 7431),)))
    with pytest.raises(InviteError, match="not for watching"):
        parse_watch(invite, NOW)


async def knock(hub: WatchHub, secret: bytes, me: Identity = CAROL) -> tuple[FramedStream, list[dict[str, Any]]]:
    """A would-be watcher on a memory stream, proving ``secret``; the controls it got back."""
    ours, theirs = trio.testing.memory_stream_pair()
    framed = FramedStream(ours, 5.0)
    got: list[dict[str, Any]] = []

    async def admit() -> None:
        await hub._admit(theirs)

    trio.lowlevel.spawn_system_task(admit)
    look = (await framed.receive()).control()
    await framed.send_control("watch", key=me.public, name=me.name, mac=watch_mac(secret, look["nonce"],
                                                                                   ALICE.public, me.public))
    return framed, got


async def refusal(framed: FramedStream) -> str:
    with trio.fail_after(5):
        while True:
            try:
                frame = await framed.receive()
            except PeerClosed:
                return ""
            if frame.kind == CONTROL and frame.control()["t"] == "error":
                return str(frame.control()["reason"])


@pytest.mark.trio
async def test_a_wrong_secret_or_a_full_table_is_turned_away_with_one_line() -> None:
    hub = WatchHub(ALICE, 1)
    framed, _ = await knock(hub, bytes(16))
    assert await refusal(framed) == "that is not this game's watch code"
    first, _ = await knock(hub, hub.secret)
    await wait_for(lambda: hub.watchers, "the first watcher")
    second, _ = await knock(hub, hub.secret, DAVE)
    assert await refusal(second) == "the table is full: 1 people watch already"
    assert hub.names == ("carol",)
    hub.close_watching()
    assert await refusal(first) == "a player closed watching" and hub.names == ()
    third, _ = await knock(hub, hub.secret, DAVE)
    assert await refusal(third) == "the players closed watching"


@pytest.mark.trio
async def test_a_watcher_that_falls_behind_is_let_go_and_publishing_never_waits() -> None:
    hub = WatchHub(ALICE, 8, queue=16)
    hub.begin(b"header", [])
    framed, _ = await knock(hub, hub.secret)  # never reads again
    await wait_for(lambda: hub.watchers, "the watcher admitted")
    told: list[tuple[str, ...]] = []
    hub.changed = told.append
    for n in range(200):  # each call returns at once, whatever the watcher does
        hub.publish(bytes([n % 256]) * 100)
    assert hub.names == () and told == [()]
    assert len(hub.records) == 200


class FeedSteps(trio.abc.Instrument):
    """The clock's readings at which a watcher's task ran."""

    def __init__(self) -> None:
        self.times: set[float] = set()

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        if task.name.endswith("WatchHub._feed"):
            self.times.add(trio.current_time())


@pytest.mark.trio
async def test_watchers_tasks_run_only_when_a_record_is_handed_over_and_send_in_batches(
        autojump_clock: trio.testing.MockClock) -> None:
    """While a game goes on, a watcher's task runs only when the host's game task has just handed
    over a record (so when that task next waits: as it sends the record on), never at a moment
    of the clock's own, and not more often than the batches (net/watch.py)."""
    hub = WatchHub(ALICE, 8)
    hub.begin(b"header", [])
    framed, _ = await knock(hub, hub.secret)
    await wait_for(lambda: hub.watchers, "the watcher admitted")
    got: list[bytes] = []

    async def read() -> None:
        while True:
            frame = await framed.receive()
            if frame.kind == ENVELOPE:
                got.append(frame.body)

    spy = FeedSteps()
    handed: set[float] = set()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(read)
        await trio.sleep(1)  # the catch-up (the header) sent
        trio.lowlevel.add_instrument(spy)
        try:
            start = trio.current_time()
            for n in range(100):  # a bot's game: a record every 13.7 ms (no multiple of 100 ms)
                handed.add(trio.current_time())
                hub.publish(bytes([n]) * 50)
                await trio.sleep(0.0137)
            during = trio.current_time() - start
        finally:
            trio.lowlevel.remove_instrument(spy)
        await wait_for(lambda: len(got) == 100, "every record")  # the last go out on their latest time
        nursery.cancel_scope.cancel()
    assert got == [bytes([n]) * 50 for n in range(100)]
    assert spy.times <= handed, sorted(spy.times - handed)
    assert len(spy.times) <= 2 * (int(during / 0.1) + 1)  # a record after each write, then the next go


@pytest.mark.trio
async def test_a_watcher_that_sends_anything_but_keepalives_is_let_go() -> None:
    hub = WatchHub(ALICE, 8)
    framed, _ = await knock(hub, hub.secret)
    await wait_for(lambda: hub.watchers, "the watcher admitted")
    await framed.send(ENVELOPE, b"\x92\xc4\x01x\xc4\x00")
    await wait_for(lambda: not hub.watchers, "the watcher let go")
    assert await refusal(framed) == "a watcher sends nothing but keepalives"


@pytest.mark.trio
async def test_a_host_whose_records_do_not_verify_stops_the_watcher(tmp_path: Path) -> None:
    """A watcher is a live verifier: a forged record ends its watch with the reason."""
    path = sorted((Path(__file__).parent.parent / "replays").glob("*.replay"))[0]
    replay = read_replay(path)
    ours, theirs = trio.testing.memory_stream_pair()
    code = WatchCode(replay.header.players[0][0], bytes(16), NOW + 60, (Candidate("lan", "127.0.0.1", 1),))

    async def fake_host() -> None:
        framed = FramedStream(theirs, 5.0)
        await framed.send_control("look", nonce=bytes(32))
        await framed.receive()
        await framed.send_control("game", header=replay.header.encode())
        records = list(replay.records)
        records[5] = records[5][:-1] + bytes([records[5][-1] ^ 1])  # a signature broken
        try:
            for raw in records:
                await framed.send(ENVELOPE, raw)
        except PeerClosed:
            pass  # the watcher stopped at the broken record

    async with trio.open_nursery() as nursery:
        nursery.start_soon(fake_host)
        with pytest.raises(WatchError, match="does not verify"):
            await watch_games(ours, code, CAROL, lambda h: (lambda e: None))


class Closer(AgentBase):
    """A joining person (random moves) who is told who watches and, at its 5th decision, closes
    watching."""

    traits = Traits(blocking=True, chats=True)

    def __init__(self, seed: int) -> None:
        self.bot = RandomBot(seed)
        self.told: list[tuple[str, ...]] = []
        self.send_away: Any = None
        self.decisions = 0
        self.closed: list[str | None] = []

    def observe(self, event: SeatEvent) -> None:
        if isinstance(event, Watching):
            self.told.append(event.names)

    def open_watching(self, close: Any) -> None:
        self.send_away = close

    def choose(self, ask: Any) -> Any:
        self.decisions += 1
        if self.decisions == 5 and self.send_away is not None:
            self.closed.append(self.send_away())
        return self.bot.choose(ask.view, ask.legal)


@pytest.mark.trio
async def test_the_joiner_is_told_who_watches_and_can_close_watching_mid_game(tmp_path: Path) -> None:
    hub = WatchHub(ALICE, 8)
    lst, port = await listener()
    host_cfg = config(ALICE, 1, tmp_path / "a")
    host_cfg.hub = hub
    closer = Closer(2)
    join_cfg = PeerConfig(BOB, DEFAULT, lambda k: closer, tmp_path / "b", None, FAST, 1)
    join_cfg.watching = True
    ended: list[BaseException] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(hub.serve, lst)

        async def watcher(me: Identity) -> None:
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            try:
                await watch_games(stream, code_of(hub, port), me, Seen().begin)
            except WatchError as e:
                ended.append(e)

        nursery.start_soon(watcher, CAROL)
        nursery.start_soon(watcher, DAVE)
        await wait_for(lambda: len(hub.watchers) == 2, "both watchers admitted")
        pair = await host_and_join(host_cfg, join_cfg, direct=True, limit=60)
        assert isinstance(pair.join, list), pair.join
        await wait_for(lambda: len(ended) == 2, "both watchers sent away")
        nursery.cancel_scope.cancel()
    assert closer.closed == [None]
    assert {"carol", "dave"} <= set(closer.told[0]) and closer.told[-1] == ()
    assert all("the other player closed watching" in str(e) for e in ended), ended
    assert not hub.open


# --- watching through a transit relay ---------------------------------------------------------------


def test_a_watch_code_may_name_a_relay() -> None:
    hub = WatchHub(ALICE, 8)
    code = parse_watch(hub.code([Candidate("lan", "192.168.1.20", 4000)], NOW, ("127.0.0.1", 4001)), NOW)
    assert code.relay == ("127.0.0.1", 4001) and [c.port for c in code.candidates] == [4000]
    assert parse_watch(hub.code([], NOW), NOW).relay is None


@pytest.mark.trio
async def test_a_watcher_comes_through_the_relay_and_sees_the_whole_game(tmp_path: Path) -> None:
    from basilica_p2p.net import meet_on_relay, watch_relay_key
    from support.relay_server import transit_relay

    with transit_relay(tmp_path / "relay") as relay:
        hub = WatchHub(ALICE, 8)
        host_cfg = config(ALICE, 1, tmp_path / "a")
        host_cfg.hub = hub
        code = parse_watch(hub.code([], NOW, relay.address), NOW)
        watched: list[Watched] = []
        async with trio.open_nursery() as nursery:
            nursery.start_soon(hub.serve_relay, relay.address)

            async def watcher() -> None:
                stream = await meet_on_relay(relay.address, watch_relay_key(code.secret), sender=False, timeout=20)
                watched.extend(await watch_games(stream, code, CAROL, Seen().begin))

            nursery.start_soon(watcher)
            await wait_for(lambda: hub.watchers, "the watcher admitted through the relay", limit=20)
            pair = await host_and_join(host_cfg, config(BOB, 2, tmp_path / "b"), direct=True, limit=60)
            assert isinstance(pair.host, list), pair.host
            await wait_for(lambda: watched, "the watcher's end", limit=20)
            nursery.cancel_scope.cancel()
    (game,) = watched
    assert game.finished and game.seat.records == read_replay(pair.host[0].replay).records
