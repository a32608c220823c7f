"""Nothing lost, nothing leaked: durability and file modes, checked where they happen.

A mutation audit (issue 9) found that removing the fsync before our own
records are sent, or every fsync of the replay writer, or creating the session
sidecar world-readable, failed no test.  Here two real sides
(``play_one_game``) play whole games over trio memory streams while every
fsync/fdatasync and every byte each side sends goes into one journal, in
order.  Then, for every envelope a side sent, the rule of docs/network.md
("Lockstep") and PROTOCOL.md ("Durability and the torn tail") is checked:

* a message the side *chose* (hello, commit, reveal, action, jcommit,
  jreveal, result, forfeit) is in its replay, and a sync of the replay that
  reaches the end of that record came before the first byte of it was sent;
* an acknowledgement is sent before any sync reaches it (nothing waits for
  the disk there) and a later sync does.

Secret-bearing files (the session sidecar with the seed nonce and the
secret Jester choice; private keys) must be readable by their owner only,
whatever the umask.
"""

from __future__ import annotations

import bisect
import os
import random
import stat
import struct
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import Action, Observation
from basilica_p2p.engine.components import JESTER
from basilica_p2p.identity import create_identity, local_identity
from basilica_p2p.net.framing import ENVELOPE
from basilica_p2p.net.session import Connection, GameReport, Settings, Timeouts, play_one_game, sidecar_path
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire import open_envelope

from basilica_p2p.schemes import HIDDEN_DEAL
from basilica_p2p.seat import SeatEvent

from support.net_harness import ALICE, BOB, settings

CHOSEN = {"hello", "commit", "reveal", "action", "jcommit", "jreveal", "result", "forfeit"}
DEALT = {"deal", "shares", "secret"}  # chosen too: a game dealt by sra-p256-v1 adds them
S = settings("portal2022")
_U32 = struct.Struct(">I")
JESTER_TRIES = 12


# --- the journal -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Synced:
    file: tuple[int, int]  # (st_dev, st_ino): a rename keeps it, a path would not
    size: int  # what the sync made durable: everything up to here


@dataclass(frozen=True)
class Sent:
    side: int
    data: bytes


Journal = list[Synced | Sent]


def journal_syncs(monkeypatch: pytest.MonkeyPatch, journal: Journal) -> None:
    """Record every fsync/fdatasync (of any file) in ``journal``, then do it."""
    real = {name: getattr(os, name) for name in ("fsync", "fdatasync") if hasattr(os, name)}

    def recording(sync: Callable[[int], None]) -> Callable[[int], None]:
        def recorded(fd: int) -> None:
            st = os.fstat(fd)
            journal.append(Synced((st.st_dev, st.st_ino), st.st_size))
            sync(fd)
        return recorded

    for name, sync in real.items():
        monkeypatch.setattr(os, name, recording(sync))
    # A module may have bound os.fdatasync to a name of its own at import time (the replay
    # writer's _sync does): such names go through the recording functions too.  Only names
    # bound to the real functions: a sync replaced by anything else goes unrecorded, and the
    # checks below then fail, as they should.
    for module in [m for n, m in sys.modules.items() if n.startswith("basilica_p2p")]:
        for attr, value in list(vars(module).items()):
            for name, sync in real.items():
                if value is sync:
                    monkeypatch.setattr(module, attr, getattr(os, name))


class TappedSend(trio.abc.SendStream):
    """A send stream that writes what is sent into the journal before passing it on."""

    def __init__(self, inner: trio.abc.SendStream, side: int, journal: Journal) -> None:
        self.inner, self.side, self.journal = inner, side, journal

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if len(data):
            self.journal.append(Sent(self.side, bytes(data)))
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def aclose(self) -> None:
        await self.inner.aclose()


def tapped_pair(journal: Journal) -> tuple[trio.StapledStream, trio.StapledStream]:
    to_1, from_0 = trio.testing.memory_stream_one_way_pair()
    to_0, from_1 = trio.testing.memory_stream_one_way_pair()
    return (trio.StapledStream(TappedSend(to_1, 0, journal), from_1),
            trio.StapledStream(TappedSend(to_0, 1, journal), from_0))


def envelopes_sent(journal: Journal, side: int) -> list[tuple[int, bytes]]:
    """Every envelope ``side`` sent: (journal index of the send that carried its first byte, envelope)."""
    stream = bytearray()
    starts: list[int] = []  # offset in ``stream`` where each send began
    events: list[int] = []  # its journal index
    for i, e in enumerate(journal):
        if isinstance(e, Sent) and e.side == side:
            starts.append(len(stream))
            events.append(i)
            stream += e.data
    out: list[tuple[int, bytes]] = []
    pos = 0
    while pos < len(stream):
        assert pos + 4 <= len(stream), f"side {side} sent a cut frame"
        (length,) = _U32.unpack_from(stream, pos)
        assert pos + 4 + length <= len(stream), f"side {side} sent a cut frame"
        if stream[pos + 4] == ENVELOPE:
            out.append((events[bisect.bisect_right(starts, pos) - 1], bytes(stream[pos + 5:pos + 4 + length])))
        pos += 4 + length
    return out


def check_durable_before_sent(journal: Journal, side: int, replay: Path) -> Counter[str]:
    """The documented order for every envelope ``side`` sent; returns how many of each type were checked."""
    st = replay.stat()
    file = (st.st_dev, st.st_ino)
    held = read_replay(replay)
    # Where each record ends: a sync of at least this size has it on disk.
    ends = {raw: held.offsets[i + 1] + 8 + len(raw) for i, raw in enumerate(held.records)}
    syncs = [(i, e.size) for i, e in enumerate(journal) if isinstance(e, Synced) and e.file == file]
    checked: Counter[str] = Counter()
    for at, raw in envelopes_sent(journal, side):
        env = open_envelope(raw)
        what = f"side {side}: {env.type} (message {env.seq})"
        if env.type == "hello" and env.seq == 0:
            # Player 1's hello goes out before there is a replay to hold it: the game id in it
            # names the file, and the header needs the peer's key, from the answer.
            continue
        assert raw in ends, f"{what} was sent but is not in the sender's replay"
        synced_before = any(i < at and size >= ends[raw] for i, size in syncs)
        if env.type == "ack":
            assert not synced_before, f"{what} waited for a sync before it was sent; it must not (docs/network.md)"
            assert any(i > at and size >= ends[raw] for i, size in syncs), f"{what} was never made durable"
        else:
            assert env.type in CHOSEN | DEALT, what
            assert synced_before, f"{what} was sent before any sync of the replay reached it"
        checked[env.type] += 1
    assert syncs and max(size for _, size in syncs) >= st.st_size, \
        f"side {side}: the end of the replay was never synced"
    return checked


# --- two real sides --------------------------------------------------------------------------------------


class JesterBot(RandomBot):
    """A random bot that promotes to Jester whenever it can: then both players often own
    Jesters at a scoring, and their colours travel by jcommit/jreveal."""

    def choose(self, obs: Observation, legal: list[Action]) -> Action:
        return super().choose(obs, [a for a in legal if a.rank == JESTER] or legal)


class FailsAt(RandomBot):
    """A random bot that raises at its ``n``-th decision: its side forfeits."""

    def __init__(self, seed: int, n: int) -> None:
        super().__init__(seed)
        self.left = n

    def choose(self, obs: Observation, legal: list[Action]) -> Action:
        self.left -= 1
        if self.left == 0:
            raise RuntimeError("the bot broke")
        return super().choose(obs, legal)


def seeded_randomness(monkeypatch: pytest.MonkeyPatch, seed: str) -> None:
    """os.urandom from ``seed`` (the game id, the nonces, the Jester salts), so that a game is the
    same on every run.  One stream per calling function: trio may interleave the two sides
    differently from run to run, but each kind of draw still comes in protocol order."""
    streams: dict[str, random.Random] = {}

    def urandom(n: int) -> bytes:
        caller = sys._getframe(1).f_code.co_name
        return streams.setdefault(caller, random.Random(f"{seed}/{caller}")).randbytes(n)

    monkeypatch.setattr(os, "urandom", urandom)


async def play_pair(
    journal: Journal, folder: Path, agents: tuple[Any, Any], s: Settings = S,
    watch: Callable[[SeatEvent], None] | None = None,
) -> tuple[GameReport, GameReport]:
    """One whole game of two real sides (player 1: ALICE in folder/p1, player 2: BOB in folder/p2),
    each with a session sidecar as `basilica host` / `join` keep one."""
    ends = tapped_pair(journal)
    reports: dict[int, GameReport] = {}

    async def side(seat: int) -> None:
        conn = Connection(ends[seat], Timeouts())
        info = {"role": ("host", "join")[seat], "identity": "user", "name": (ALICE, BOB)[seat].name,
                "address": "127.0.0.1", "port": 1}
        try:
            reports[seat] = await play_one_game(conn, (ALICE, BOB)[seat], seat, s, agents[seat],
                                                folder / f"p{seat + 1}", resume_info=info, watch=watch)
        finally:
            await conn.framed.aclose()

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(side, 0)
            nursery.start_soon(side, 1)
    return reports[0], reports[1]


@pytest.mark.trio
async def test_every_chosen_record_is_synced_before_it_is_sent_and_no_ack_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checked: Counter[str] = Counter()

    async def play_and_check(name: str, agents: tuple[Any, Any]) -> None:
        journal: Journal = []
        with monkeypatch.context() as m:
            seeded_randomness(m, name)
            journal_syncs(m, journal)
            reports = await play_pair(journal, tmp_path / name, agents)
        for seat, report in enumerate(reports):
            assert verify_file(report.replay).ok, verify_file(report.replay).line()
            checked.update(check_durable_before_sent(journal, seat, report.replay))

    await play_and_check("p1-forfeits", (FailsAt(1, 12), RandomBot(2)))
    await play_and_check("p2-forfeits", (RandomBot(1), FailsAt(2, 7)))
    # About one game in four of these bots has a secret Jester round, the first from seed 6 on
    # today (the games are the same on every run); the later seeds are there for when the
    # engine changes.
    for seed in range(6, 6 + JESTER_TRIES):
        if {"jcommit", "jreveal"} <= set(checked):
            break
        await play_and_check(f"jesters-{seed}", (JesterBot(seed), JesterBot(100 + seed)))
    # Every kind of message was checked at least once, or the test would prove less than it says.
    assert set(checked) == CHOSEN | {"ack"}, f"not every kind of message came up: {checked}"


@pytest.mark.trio
async def test_a_hidden_deal_sends_its_deal_steps_shares_and_secrets_only_once_durable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal: Journal = []
    with monkeypatch.context() as m:
        seeded_randomness(m, "hidden")
        journal_syncs(m, journal)
        reports = await play_pair(journal, tmp_path, (RandomBot(1), RandomBot(2)), settings(shuffle=HIDDEN_DEAL))
    checked: Counter[str] = Counter()
    for seat, report in enumerate(reports):
        v = verify_file(report.replay)
        assert v.ok and v.line().endswith("deal audited"), v.line()
        checked.update(check_durable_before_sent(journal, seat, report.replay))
    assert DEALT | {"action", "ack", "result"} <= set(checked), checked


# --- files that hold secrets ------------------------------------------------------------------------------


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def secret_files(*folders: Path) -> list[Path]:
    """The secret-bearing files under ``folders``: private keys and session sidecars (with their temporaries)."""
    return sorted(p for folder in folders for p in folder.rglob("*")
                  if p.is_file() and (p.suffix == ".key" or ".session" in p.name))


def assert_owner_only(paths: list[Path]) -> None:
    wrong = {str(p): oct(mode(p)) for p in paths if mode(p) != 0o600}
    assert not wrong, f"secret-bearing files readable by others: {wrong}"


@pytest.mark.trio
async def test_the_session_sidecar_is_owner_only_while_it_holds_secrets(tmp_path: Path, open_umask: None) -> None:
    seen: set[str] = set()

    def look(event: SeatEvent) -> None:
        found = secret_files(tmp_path)
        assert_owner_only(found)
        seen.update(p.name for p in found)

    reports = await play_pair([], tmp_path, (JesterBot(1), JesterBot(2)), watch=look)
    assert_owner_only(secret_files(tmp_path))
    sidecars = {sidecar_path(r.replay).name for r in reports}
    assert sidecars <= seen, f"the sidecars {sidecars} were never there to check during the game (saw {seen})"


def test_private_keys_are_owner_only(tmp_path: Path, open_umask: None) -> None:
    home = tmp_path / "home"
    create_identity(home, "alice")
    local_identity(home, "bot-host", "bot")
    (home / "identity.key").chmod(0o644)  # as an older client, or a careless copy, may have left it
    create_identity(home, "alice", force=True)
    keys = secret_files(home)
    assert {p.relative_to(home).as_posix() for p in keys} == {"identity.key", "local/bot-host.key"}, keys
    assert_owner_only(keys)

