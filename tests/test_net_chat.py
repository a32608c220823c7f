"""Chat over a network game (PROTOCOL.md §4d, net/chat.py): lines said while either side decides
reach the other, both replays record them and verify; a peer that takes no chat is sent none;
a flood is turned away without slowing the game."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any
from collections.abc import Callable

import pytest

from basilica_p2p.agent import AgentBase, Traits
from basilica_p2p.bots import RandomBot
from basilica_p2p.net.chat import BURST, ChatGate, is_chat
from basilica_p2p.net.peer import PeerConfig
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.seat import AgainOffered, Ask, ChatSaid, SeatEvent, Series
from basilica_p2p.wire import open_envelope

from support.net_harness import ALICE, BOB, DEFAULT, FAST, ScriptedPeer, at_step, host_and_join, run_against


class Chatter(AgentBase):
    """A person who plays random moves and says a line at some of its decisions (asked in a
    worker thread, as a person is), keeping every line it is told of and every refusal."""

    def __init__(self, seed: int, lines: dict[int, str]) -> None:
        self.bot = RandomBot(seed)
        self.traits = Traits(blocking=True, chats=True)
        self.lines = lines  # decision number -> what to say then
        self.decisions = 0
        self.heard: list[ChatSaid] = []
        self.not_said: list[str] = []
        self.say: Callable[[str], str | None] | None = None
        self.lock = threading.Lock()

    def open_chat(self, say: Callable[[str], str | None]) -> None:
        self.say = say

    def choose(self, ask: Ask) -> Any:
        self.decisions += 1
        text = self.lines.get(self.decisions)
        if text is not None:
            why = self.say(text) if self.say is not None else "no chat was opened"
            if why is not None:
                self.not_said.append(why)
        return self.bot.choose(ask.view, ask.legal)

    def observe(self, event: SeatEvent) -> None:
        if isinstance(event, ChatSaid):
            with self.lock:
                self.heard.append(event)


def config(me: Any, agent: Any, replay_dir: Path, chat: bool) -> PeerConfig:
    c = PeerConfig(me, DEFAULT, lambda k: agent, replay_dir, None, FAST, 1)
    c.chat = chat
    return c


def chat_lines(path: Path) -> list[tuple[str, str]]:
    lines = []
    for raw in read_replay(path).records:
        env = open_envelope(raw)
        if env.type == "chat":
            lines.append(("alice" if env.sender == ALICE.public else "bob", env.body["text"]))
    return lines


@pytest.mark.trio
async def test_lines_said_by_both_players_reach_each_other_and_both_replays_verify_with_them(tmp_path: Path) -> None:
    alice = Chatter(1, {1: "good luck, have fun", 5: "nice vault \x1b[31m", 12: "gg soon"})
    bob = Chatter(2, {2: "you too", 8: "\u202eevil text"})
    result = await host_and_join(config(ALICE, alice, tmp_path / "a", True), config(BOB, bob, tmp_path / "b", True),
                                 limit=60)
    assert isinstance(result.host, list) and isinstance(result.join, list), result
    assert alice.not_said == [] and bob.not_said == []
    said = {("alice", "good luck, have fun"), ("alice", "nice vault [31m"), ("alice", "gg soon"),
            ("bob", "you too"), ("bob", "evil text")}
    for who, agent in (("alice", alice), ("bob", bob)):
        heard = {(("alice", "bob")[e.who], e.text) for e in agent.heard}
        assert heard == said, (who, heard)
    for side in ("a", "b"):
        (path,) = (tmp_path / side).glob("*.replay")
        v = verify_file(path)
        assert v.ok, v.error
        assert v.chat == 5 and set(chat_lines(path)) == said
    records = [[r for r in read_replay(p).records if not is_chat(r)] for p in
               (next((tmp_path / "a").glob("*.replay")), next((tmp_path / "b").glob("*.replay")))]
    assert records[0] == records[1]  # the game's chain is the same on both sides, chat beside it


@pytest.mark.trio
async def test_a_side_that_takes_no_chat_is_sent_none_and_the_sayer_learns_why(tmp_path: Path) -> None:
    alice = Chatter(1, {1: "hello?"})
    bob = Chatter(2, {1: "hi"})
    result = await host_and_join(config(ALICE, alice, tmp_path / "a", True), config(BOB, bob, tmp_path / "b", False),
                                 limit=60)
    assert isinstance(result.host, list) and isinstance(result.join, list), result
    assert bob.not_said == ["no chat was opened"]  # --no-chat: no chat is opened to this side's person
    assert len(alice.not_said) == 1 and "bob's side takes no chat" in alice.not_said[0]
    for side in ("a", "b"):
        (path,) = (tmp_path / side).glob("*.replay")
        assert verify_file(path).ok and chat_lines(path) == []


@pytest.mark.trio
async def test_a_flood_of_chat_is_turned_away_at_the_gate_and_the_game_goes_on(tmp_path: Path) -> None:
    logged: list[str] = []

    async def flood(peer: ScriptedPeer) -> None:
        await peer.hello()
        step = await peer.play(at_step("action", after=6))
        assert step == "action"
        assert peer.ref is not None
        for n in range(200):
            await peer.send_env(peer.forge("chat", {"n": n, "text": f"spam {n}"}))
        await peer.play()

    run = await run_against(flood, tmp_path, agent=RandomBot(3), chat=True, log=logged.append, honest_seat=0)
    assert run.error is None, run.error
    v = verify_file(run.replay)
    assert v.ok, v.error
    assert 1 <= v.chat <= BURST + 1  # what the gate let in: the burst, and no more in the same instant
    assert sum("lines of chat a second: lines dropped" in line for line in logged) == 1


@pytest.mark.trio
async def test_chat_from_a_peer_never_offered_it_is_neither_heard_nor_recorded(tmp_path: Path) -> None:
    async def chatty(peer: ScriptedPeer) -> None:
        await peer.hello()
        await peer.play(at_step("action", after=6))
        await peer.send_env(peer.forge("chat", {"n": 0, "text": "unasked"}))
        await peer.play()

    heard: list[SeatEvent] = []
    run = await run_against(chatty, tmp_path, agent=RandomBot(3), chat=False, watch=heard.append)
    assert run.error is None, run.error
    assert verify_file(run.replay).chat == 0 and not any(isinstance(e, ChatSaid) for e in heard)


def test_the_gate_lets_a_burst_in_then_a_steady_rate() -> None:
    gate = ChatGate(rate=3.0, burst=6)
    assert [gate.let_in(0.0) for _ in range(8)] == [True] * 6 + [False, False]
    assert gate.dropped == 2
    assert gate.let_in(1 / 3) and not gate.let_in(1 / 3)
    assert [gate.let_in(10.0) for _ in range(7)] == [True] * 6 + [False]  # refilled, never past the burst


@pytest.mark.parametrize("raw", [b"", b"\xc1", b"\x92\x01\x02", b"\x92\xc4\x01x\xc4\x00"])
def test_garbage_is_not_taken_for_chat(raw: bytes) -> None:
    assert not is_chat(raw)


# --- playing again on the same connection (net/again.py) ----------------------------------------


class Rematcher(Chatter):
    """A Chatter that answers each "another game?" from ``answers`` (then no), saying a line
    after each game first."""

    def __init__(self, seed: int, answers: list[bool], after: str = "") -> None:
        super().__init__(seed, {})
        self.answers = answers
        self.after = after
        self.asked: list[Series] = []
        self.offered: list[AgainOffered] = []

    def again(self, series: Series) -> bool:
        self.asked.append(series)
        if self.after and self.say is not None:
            why = self.say(f"{self.after} {len(self.asked)}")
            if why is not None:
                self.not_said.append(why)
        return self.answers.pop(0) if self.answers else False

    def observe(self, event: SeatEvent) -> None:
        super().observe(event)
        if isinstance(event, AgainOffered):
            self.offered.append(event)


def rematch_config(me: Any, agent: Any, replay_dir: Path, again: bool = True) -> PeerConfig:
    c = config(me, agent, replay_dir, True)
    c.again = again
    return c


@pytest.mark.trio
async def test_two_rematches_play_three_games_on_one_connection_with_alternating_seats(tmp_path: Path) -> None:
    # P16: seats alternate; who moves first is each game's own draw, which verify re-checks.
    alice = Rematcher(1, [True, True, False], after="gg")
    bob = Rematcher(2, [True, True, True], after="wp")
    result = await host_and_join(rematch_config(ALICE, alice, tmp_path / "a"),
                                 rematch_config(BOB, bob, tmp_path / "b"), limit=120)
    assert isinstance(result.host, list) and isinstance(result.join, list), result
    assert [r.seat for r in result.host] == [0, 1, 0] and [r.seat for r in result.join] == [1, 0, 1]
    assert len({r.replay.name.split("-")[0] for r in result.host}) == 3  # a new game id each time
    # Each was asked after every game, with the series so far, as each side counts it.
    # (Bob is not asked after the third game when alice's "no" came first: the asking is over.)
    assert [s.games for s in alice.asked] == [1, 2, 3] and [s.games for s in bob.asked][:2] == [1, 2]
    last_a, last_b = alice.asked[1], bob.asked[1]
    assert last_a.names == ("alice", "bob") and last_b.names == ("bob", "alice")
    assert last_a.wins == last_b.wins[::-1] and last_a.shared == last_b.shared
    # Bob heard alice's "no" after the third game, whoever answered first.
    assert AgainOffered("alice", False) in bob.offered and AgainOffered("bob", False) not in alice.offered
    for side in ("a", "b"):
        paths = sorted((tmp_path / side).glob("*.replay"))
        assert len(paths) == 3
        for path in paths:
            v = verify_file(path)
            assert v.ok, v.error
    # Lines said after a game's last move are in that game's replays (both sides').
    said_after = {text for path in (tmp_path / "a").glob("*.replay") for _, text in chat_lines(path)}
    assert {"gg 1", "gg 2", "wp 1", "wp 2"} <= said_after, said_after


@pytest.mark.trio
async def test_an_offer_declined_ends_the_session_after_one_game(tmp_path: Path) -> None:
    alice = Rematcher(1, [True])
    bob = Rematcher(2, [False])
    result = await host_and_join(rematch_config(ALICE, alice, tmp_path / "a"),
                                 rematch_config(BOB, bob, tmp_path / "b"), limit=60)
    assert isinstance(result.host, list) and isinstance(result.join, list), result
    assert len(result.host) == len(result.join) == 1
    assert AgainOffered("bob", False) in alice.offered


@pytest.mark.trio
async def test_a_side_that_cannot_play_again_is_never_asked_and_nobody_waits(tmp_path: Path) -> None:
    alice = Rematcher(1, [True])
    bob = Rematcher(2, [True])
    result = await host_and_join(rematch_config(ALICE, alice, tmp_path / "a"),
                                 rematch_config(BOB, bob, tmp_path / "b", again=False), limit=60)
    assert isinstance(result.host, list) and isinstance(result.join, list), result
    assert len(result.host) == 1 and alice.asked == [] and bob.asked == []


class Flooder(Chatter):
    """A person whose side says a line every millisecond from a thread of its own, whatever the
    game is doing (also as one game ends and the next begins)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed, {})
        self.stop = threading.Event()

    def open_chat(self, say: Callable[[str], str | None]) -> None:
        super().open_chat(say)

        def run() -> None:
            n = 0
            while not self.stop.wait(0.001):
                n += 1
                say(f"line {n}")

        threading.Thread(target=run, daemon=True).start()


@pytest.mark.trio
async def test_a_side_that_chats_without_pause_plays_its_games_to_the_end(tmp_path: Path) -> None:
    flooder = Flooder(2)
    host_cfg = config(ALICE, Chatter(1, {}), tmp_path / "a", True)
    host_cfg.games = 3
    try:
        result = await host_and_join(host_cfg, config(BOB, flooder, tmp_path / "b", True), limit=120)
    finally:
        flooder.stop.set()
    assert isinstance(result.host, list) and isinstance(result.join, list), result
    assert len(result.join) == 3
    for side in ("a", "b"):
        for path in (tmp_path / side).glob("*.replay"):
            v = verify_file(path)
            assert v.ok, v.error
