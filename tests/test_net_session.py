"""Whole games between two honest peers over real loopback TCP, through net.peer.host / join.

Covers: several games on one connection with alternating seats, both
rulesets and the festum expansion; both sides' replays verify and are
byte for byte the same; the handshake refusals (settings that differ, one
identity on both sides, a known name with another key) and the
``basilica peers`` commands that manage known keys.  The end of a session
(a goodbye crossing a hello, a reset) is scripted instead, on virtual time
over memory streams against a scripted host: each ending exactly, never by luck.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from basilica_p2p.agent import AgentBase, BotAgent, Resign
from basilica_p2p.bots import RandomBot
from basilica_p2p.cli import app
from basilica_p2p.engine import default_manifest, reconstruct_default
from basilica_p2p.identity import Identity, fingerprint
from basilica_p2p.net.framing import ENVELOPE, PeerClosed
from basilica_p2p.net.peer import play_games
from basilica_p2p.known_peers import KnownPeers
from basilica_p2p.net.session import GameReport, PeerGone, PeerRefused, Refused, Settings, Timeouts
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.seat import GameStarted, SeatEvent
from basilica_p2p.wire import open_envelope

from support.net_harness import (
    ALICE,
    BOB,
    BOB_IMPOSTOR,
    Fault,
    HungUp,
    PairResult,
    ScriptedPeer,
    config,
    host_and_join,
    ident,
    inline_threads,
    reports,
    settings,
    with_resume,
)

pytestmark = pytest.mark.trio

runner = CliRunner()


def cli(home: Path, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["--home", str(home), *args], env={"BASILICA_HOME": None})


# --- complete games --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "s",
    [settings("portal2022"), settings("classic"), settings("portal2022", festum=True),
     settings("portal2022", festum=True, removal=True)],
    ids=["portal2022", "classic", "festum", "festum-removal"],
)
async def test_three_games_on_one_connection(tmp_path: Path, s: Settings) -> None:
    pair = await host_and_join(
        config(ALICE, s, tmp_path / "host", home=tmp_path / "home-host", games=3, greedy=True, seed=10),
        config(BOB, s, tmp_path / "join", home=tmp_path / "home-join", games=99, seed=20),
    )
    hosted, joined = reports(pair.host), reports(pair.join)
    assert len(hosted) == len(joined) == 3  # the host decides, the joiner follows
    assert [r.seat for r in hosted] == [0, 1, 0]
    assert [r.seat for r in joined] == [1, 0, 1]
    games = set()
    for h, j in zip(hosted, joined):
        assert h.peer == "bob" and j.peer == "alice"
        assert h.outcome == j.outcome
        for r in (h, j):
            v = verify_file(r.replay)
            assert v.ok, v.line()
            assert v.ruleset == s.options.ruleset.value and v.festum == s.options.festum
            assert v.outcome == r.outcome
        assert h.replay.read_bytes() == j.replay.read_bytes(), f"{h.replay} and {j.replay} differ"
        assert h.replay != j.replay
        games.add(h.replay.name.split("-")[0])
    assert len(games) == 3  # a fresh game id every game
    # player 1 of each game: alice, bob, alice
    names = [verify_file(h.replay).names for h in hosted]
    assert names == [("alice", "bob"), ("bob", "alice"), ("alice", "bob")]
    assert sorted(p.name for p in (tmp_path / "host").iterdir() if p.suffix == ".replay") == sorted(
        r.replay.name for r in hosted)
    # first contact remembered on both sides
    assert json.loads((tmp_path / "home-host" / "known_peers.json").read_text()) == {"bob": BOB.public.hex()}
    assert json.loads((tmp_path / "home-join" / "known_peers.json").read_text()) == {"alice": ALICE.public.hex()}


async def test_one_game_each_seat_and_the_reports_agree(tmp_path: Path) -> None:
    s = settings()
    pair = await host_and_join(config(BOB, s, tmp_path / "h", games=1, seed=1),
                               config(ALICE, s, tmp_path / "j", seed=2))
    (h,), (j,) = reports(pair.host), reports(pair.join)
    assert (h.seat, j.seat) == (0, 1)
    assert h.game.state_hash() == j.game.state_hash()
    assert h.replay.read_bytes() == j.replay.read_bytes()
    assert h.replay.name.endswith("-p1.replay") and j.replay.name.endswith("-p2.replay")


# --- handshake refusals --------------------------------------------------------------------------------


OTHER_MANIFEST = reconstruct_default(36, name="another manifest")

MISMATCHES = {
    "ruleset": (settings("portal2022"), settings("classic"), "ruleset", ["portal2022", "classic"]),
    "festum": (settings("portal2022", festum=True), settings("portal2022"), "festum expansion", ["yes", "no"]),
    "removal": (settings("portal2022", festum=True, removal=True), settings("portal2022", festum=True),
                "festum removal", ["yes", "no"]),
    "manifest": (settings(), settings(manifest=OTHER_MANIFEST), "manifest",
                 [default_manifest().hash[:16], OTHER_MANIFEST.hash[:16]]),
}


def refusal_pair(pair: PairResult) -> tuple[Refused, PeerGone]:
    """Exactly one side refused; the other learned it as PeerGone."""
    errors = [pair.host, pair.join]
    assert all(isinstance(e, BaseException) for e in errors), f"a side did not fail: {errors!r}"
    refused = [e for e in errors if isinstance(e, Refused)]
    gone = [e for e in errors if isinstance(e, PeerGone)]
    assert len(refused) == 1 and len(gone) == 1, f"expected one Refused and one PeerGone, got {errors!r}"
    return refused[0], gone[0]  # type: ignore[return-value]


@pytest.mark.parametrize("case", sorted(MISMATCHES))
@pytest.mark.parametrize("swap", [False, True], ids=["host-has-first", "join-has-first"])
async def test_settings_that_differ_are_refused_and_both_sides_name_the_difference(
    tmp_path: Path, case: str, swap: bool
) -> None:
    a, b, label, values = MISMATCHES[case]
    if swap:
        a, b = b, a
    pair = await host_and_join(config(ALICE, a, tmp_path / "h", games=2), config(BOB, b, tmp_path / "j"))
    refused, gone = refusal_pair(pair)
    for e in (refused, gone):
        message = str(e)
        assert label in message, message
        for value in values:
            assert value in message, f"{value!r} not in {message!r}"
    assert "stopped" in str(gone) or "refused" in str(gone).lower()
    assert not list(tmp_path.rglob("*.replay")), "a replay was written for a game that never started"


async def test_the_same_identity_on_both_sides_is_refused(tmp_path: Path) -> None:
    s = settings()
    twin = Identity(ALICE.name, ALICE.key)
    pair = await host_and_join(config(ALICE, s, tmp_path / "h"), config(twin, s, tmp_path / "j"))
    refused, gone = refusal_pair(pair)
    assert "same identity" in str(refused)
    assert "same identity" in str(gone)
    assert not list(tmp_path.rglob("*.replay"))


async def test_same_name_different_keys_is_fine(tmp_path: Path) -> None:
    """Names are not identities: two different keys may both call themselves bob."""
    s = settings()
    pair = await host_and_join(config(BOB, s, tmp_path / "h"), config(BOB_IMPOSTOR, s, tmp_path / "j"))
    (h,), (j,) = reports(pair.host), reports(pair.join)
    assert verify_file(h.replay).ok and h.replay.read_bytes() == j.replay.read_bytes()


# --- known peers ------------------------------------------------------------------------------------------


async def test_known_peers_first_contact_then_a_changed_key_is_refused(tmp_path: Path) -> None:
    s = settings()
    home_h, home_j = tmp_path / "home-h", tmp_path / "home-j"

    first = await host_and_join(config(ALICE, s, tmp_path / "h1", home=home_h),
                                config(BOB, s, tmp_path / "j1", home=home_j))
    reports(first.host), reports(first.join)
    assert KnownPeers(home_h).load() == {"bob": BOB.public.hex()}

    # "bob" comes back with another key: the host refuses, the impostor learns why
    second = await host_and_join(config(ALICE, s, tmp_path / "h2", home=home_h),
                                 config(BOB_IMPOSTOR, s, tmp_path / "j2", home=home_j))
    assert isinstance(second.host, Refused), repr(second.host)
    assert "'bob'" in str(second.host)
    assert fingerprint(BOB_IMPOSTOR.public) in str(second.host)
    assert fingerprint(BOB.public) in str(second.host)
    assert BOB_IMPOSTOR.public.hex() in str(second.host)  # the exact 'peers trust' command
    assert isinstance(second.join, PeerGone), repr(second.join)
    assert "bob" in str(second.join) and "key" in str(second.join)
    assert KnownPeers(home_h).load() == {"bob": BOB.public.hex()}  # not overwritten
    assert not list((tmp_path / "h2").glob("*.replay"))  # the host refused before recording anything

    # the user checks with bob and trusts the new key: then they play
    listed = cli(home_h, "peers", "list")
    assert listed.exit_code == 0, listed.output
    assert "bob" in listed.output and fingerprint(BOB.public) in listed.output
    trusted = cli(home_h, "peers", "trust", "bob", BOB_IMPOSTOR.public.hex())
    assert trusted.exit_code == 0, trusted.output
    assert fingerprint(BOB_IMPOSTOR.public) in cli(home_h, "peers", "list").output
    third = await host_and_join(config(ALICE, s, tmp_path / "h3", home=home_h),
                                config(BOB_IMPOSTOR, s, tmp_path / "j3", home=home_j))
    (h,), _ = reports(third.host), reports(third.join)
    assert verify_file(h.replay).ok

    # forget: the next contact is a first contact again
    forgot = cli(home_h, "peers", "forget", "bob")
    assert forgot.exit_code == 0, forgot.output
    after = cli(home_h, "peers", "list")
    assert "bob" not in after.output, after.output
    again = cli(home_h, "peers", "forget", "bob")
    assert again.exit_code == 2 and "bob" in again.output
    fourth = await host_and_join(config(ALICE, s, tmp_path / "h4", home=home_h),
                                 config(BOB, s, tmp_path / "j4", home=home_j))
    reports(fourth.host), reports(fourth.join)
    assert KnownPeers(home_h).load() == {"bob": BOB.public.hex()}


async def test_the_joiner_refuses_a_host_whose_key_changed(tmp_path: Path) -> None:
    s = settings()
    home_j = tmp_path / "home-j"
    KnownPeers(home_j).trust("alice", ALICE.public)
    alice_impostor = ident(9, "alice")
    pair = await host_and_join(config(alice_impostor, s, tmp_path / "h"), config(BOB, s, tmp_path / "j", home=home_j))
    assert isinstance(pair.join, Refused), repr(pair.join)
    assert "'alice'" in str(pair.join) and fingerprint(alice_impostor.public) in str(pair.join)
    assert isinstance(pair.host, PeerGone), repr(pair.host)
    assert "alice" in str(pair.host)
    assert not list(tmp_path.rglob("*.replay"))


async def test_peers_cli_list_trust_forget(tmp_path: Path) -> None:
    home = tmp_path / "home"
    empty = cli(home, "peers", "list")
    assert empty.exit_code == 0 and "no known peers" in empty.output
    assert cli(home, "peers", "trust", "carol", "zz").exit_code == 2
    assert cli(home, "peers", "trust", "carol", "ab" * 31).exit_code == 2
    ok = cli(home, "peers", "trust", "carol", ALICE.public.hex())
    assert ok.exit_code == 0, ok.output
    assert KnownPeers(home).load() == {"carol": ALICE.public.hex()}
    listed = cli(home, "peers", "list")
    assert "carol" in listed.output and fingerprint(ALICE.public) in listed.output
    assert cli(home, "peers", "forget", "carol").exit_code == 0
    assert KnownPeers(home).load() == {}
    gone = cli(home, "peers", "forget", "carol")
    assert gone.exit_code == 2 and "carol" in gone.output
    (home / "known_peers.json").write_text("not json")
    damaged = cli(home, "peers", "list")
    assert damaged.exit_code == 2 and "damaged" in damaged.output


# --- the end of a session ----------------------------------------------------------------------------


class ResetAtTheNextHello(trio.abc.Stream):
    """The joiner's end of a connection whose host closed while a frame of ours was unread: its
    kernel answers with a reset, which reaches us as our hello for the next game goes out.  With
    ``delivered`` the hello gets through and the reset comes at our next read; without, the hello
    itself fails.  From then on every read and write fails as on a reset socket."""

    def __init__(self, stream: trio.abc.Stream, delivered: bool) -> None:
        self.stream = stream
        self.delivered = delivered
        self.hellos = 0
        self.reset = False

    def _check(self) -> None:
        if self.reset:
            raise trio.BrokenResourceError("[Errno 104] Connection reset by peer")

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self._check()
        if data[4] == ENVELOPE and open_envelope(bytes(data[5:])).type == "hello":
            self.hellos += 1
            if self.hellos == 2:  # the first game's hello, then the next one's
                self.reset = True
                if not self.delivered:
                    self._check()
        await self.stream.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.stream.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        self._check()
        return await self.stream.receive_some(max_bytes)

    async def aclose(self) -> None:
        await self.stream.aclose()


async def says_bye(host: ScriptedPeer) -> None:
    await host.send_control("bye")  # crosses the joiner's next hello
    host.answer_pings = False  # a pong into the closing joiner would fail before its goodbye is read
    await host.drain()


async def reads_the_hello_and_closes(host: ScriptedPeer) -> None:
    """An older host: no goodbye; it reads what comes, then closes."""
    await host.next_envelope()
    await host.aclose()


async def stays(host: ScriptedPeer) -> None:
    await host.drain()  # the reset, not the host, ends the connection


ENDINGS = {
    "bye-crosses-the-hello": (says_bye, None),
    "closed-after-the-hello": (reads_the_hello_and_closes, None),
    "reset-as-the-hello-is-sent": (stays, False),
    "reset-after-the-hello-is-sent": (stays, True),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
async def test_the_joiner_keeps_its_reports_whatever_ends_the_connection_after_the_last_game(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch, ending: str
) -> None:
    """After the host's last game the joiner, player 1 of the next game, sends its hello while
    the host says "bye" and closes; a keepalive of the joiner's still unread when the host closed
    makes its kernel answer with a reset, which fails the hello or the read after it.  Every game
    was complete: in each of these endings the joiner returns its report (the CLI shows
    PeerGone as a failure, exit 1).  Keepalives every millisecond run throughout, on virtual time."""
    inline_threads(monkeypatch)  # the bots decide inline: virtual time stays exact
    script, delivered = ENDINGS[ending]
    s = settings()
    joiner = config(BOB, s, tmp_path / "j", seed=50)
    joiner.timeouts = Timeouts(handshake=5.0, ping_interval=0.001, idle=3.0, frame=2.0)
    ours, theirs = trio.testing.memory_stream_pair()
    stream = ours if delivered is None else ResetAtTheNextHello(ours, delivered)
    host = ScriptedPeer(theirs, ALICE, 0, s)
    ended: list[list[GameReport] | BaseException] = []

    async def join() -> None:
        try:
            ended.append(await play_games(stream, False, joiner))
        except Exception as e:
            ended.append(e)

    async def host_side() -> None:
        try:
            await host.hello()
            assert await host.play(think=0.0025) is None  # the whole game, honestly, keepalives meanwhile
            await trio.sleep(0.0015)  # a moment before it answers: the joiner's keepalives meet the ending too
            await script(host)
        except (HungUp, PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await host.aclose()

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(join)
            nursery.start_soon(host_side)
    (result,) = ended
    assert isinstance(result, list), f"the joiner lost its finished game: {result!r}"
    assert len(result) == 1 and verify_file(result[0].replay).ok
    assert result[0].game.state_hash() == host.game.state_hash()  # type: ignore[union-attr]
    assert any(c["t"] == "ping" for c in host.controls)  # the keepalives ran beside the game
    if isinstance(stream, ResetAtTheNextHello):
        assert stream.reset  # the reset came where this ending puts it
    if script is says_bye:
        assert "bye" in [c["t"] for c in host.controls]  # the joiner's goodbye: it read all the host sent


# --- what each side is told when a game does not end on the board --------------------------------------------


async def test_a_long_run_keeps_no_game_once_it_is_reported(tmp_path: Path) -> None:
    """'host --games N' grew about 40 KB a game: every report kept its game's final state to the
    end. A run that does not keep its reports hands each to on_game and lets its game go."""
    import gc
    import weakref

    s = settings()
    h, j = config(ALICE, s, tmp_path / "h", games=4), config(BOB, s, tmp_path / "j")
    h.keep_reports = j.keep_reports = False
    finished: list[weakref.ref[Any]] = []
    lines: list[str] = []

    def on_game(report: GameReport) -> None:
        finished.append(weakref.ref(report))  # the report holds the game (a Game takes no weak reference)
        lines.append(f"{report.replay.name}: {report.outcome.end}")

    h.on_game = on_game
    pair = await host_and_join(h, j)
    assert pair.host == [] and pair.join == [], pair
    assert len(lines) == 4 and all(verify_file(tmp_path / "h" / line.split(":")[0]).ok for line in lines)
    gc.collect()
    assert [ref() is None for ref in finished] == [True] * 4


async def test_a_refused_joiner_is_told_it_was_refused_and_why_not_to_resume(tmp_path: Path) -> None:
    """The host knows "bob" with another key and refuses.  Player 2 (the joiner) records the game
    before it sends its hello, so it held a replay when the refusal came: it must not be told to
    resume (that would end in a forfeit claimed against a host that never played), and it must
    keep no replay of a game that never began."""
    s = settings()
    home_h = tmp_path / "home-h"
    KnownPeers(home_h).trust("bob", BOB.public)
    pair = await host_and_join(with_resume(config(ALICE, s, tmp_path / "h", home=home_h), "host"),
                               with_resume(config(BOB_IMPOSTOR, s, tmp_path / "j"), "join"))
    assert isinstance(pair.host, Refused), repr(pair.host)
    assert isinstance(pair.join, PeerRefused), repr(pair.join)
    told = str(pair.join)
    assert "resume" not in told, told
    assert told.startswith("alice refused to play: "), told
    assert "'bob'" in told and fingerprint(BOB_IMPOSTOR.public) in told and fingerprint(BOB.public) in told, told
    assert "peers trust" in told and "id rename" in told, told
    assert "no game was begun" in told, told
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and "replay" in p.name], \
        sorted(map(str, tmp_path.rglob("*")))


async def test_a_connection_that_breaks_mid_game_is_made_again_and_the_game_finishes(tmp_path: Path) -> None:
    """Issue 20: a network that fails is not a player who left.  Both sides stay, meet again
    where they met (the joiner dials the host again), prove who they are, and finish the game."""
    s = settings()
    events: dict[str, list[Any]] = {"h": [], "j": []}
    host_cfg = with_resume(config(ALICE, s, tmp_path / "h"), "host")
    join_cfg = with_resume(config(BOB, s, tmp_path / "j", seed=3), "join")
    host_cfg.watch, join_cfg.watch = events["h"].append, events["j"].append
    pair = await host_and_join(host_cfg, join_cfg, fault=Fault(direction=1, drop_after=3000), limit=60)
    (h,), (j,) = reports(pair.host), reports(pair.join)
    assert h.outcome == j.outcome and h.outcome.end != "forfeit"
    a, b = verify_file(h.replay), verify_file(j.replay)
    assert a.ok and b.ok and a.chain == b.chain, (a.line(), b.line())
    for side in ("h", "j"):
        kinds = [type(e).__name__ for e in events[side]]
        assert "PeerBack" in kinds, kinds
    # The side that noticed first counted down the window before the other came back.
    assert any(type(e).__name__ == "PeerAway" and e.first for e in events["h"] + events["j"])


class QuitsAtOnce(AgentBase):
    """A person who types quit at the first prompt."""

    name = "bob"

    def choose(self, ask: Any) -> Any:
        return Resign("quit at the prompt")


def report_lines(reports_: list[GameReport], me: str, capsys: pytest.CaptureFixture[str]) -> str:
    from basilica_p2p.cli import _report_games

    _report_games(reports_, me)
    return capsys.readouterr().out


async def test_the_winner_is_told_why_the_other_side_forfeited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    s = settings()
    quitter = config(BOB, s, tmp_path / "j")
    quitter.agent_for = lambda k: QuitsAtOnce()  # type: ignore[assignment]
    pair = await host_and_join(config(ALICE, s, tmp_path / "h"), quitter)
    (h,), (j,) = reports(pair.host), reports(pair.join)
    assert h.outcome.end == "forfeit" and h.outcome.winner == h.seat
    won = report_lines([h], "alice", capsys)
    assert "you won by forfeit (bob: quit at the prompt)" in won, won
    lost = report_lines([j], "bob", capsys)
    assert "you forfeited (bob: quit at the prompt)" in lost, lost


async def test_a_cmd_bot_is_named_by_its_file_name_to_the_peer(tmp_path: Path) -> None:
    """A cmd: bot that crashes: the signed reason the peer records names the program, not our folders."""
    from basilica_p2p.bots import close_bot, make_bot

    secret = tmp_path / "my-private-folder"
    secret.mkdir()
    script = secret / "crashbot.sh"
    script.write_text("exit 3\n")
    s = settings()
    bots = []

    def crashing(k: int):  # type: ignore[no-untyped-def]
        bots.append(make_bot(f"cmd:sh {script}", s.manifest, k))
        return bots[-1]

    failing = config(BOB, s, tmp_path / "j")
    failing.agent_for = crashing  # type: ignore[assignment]
    try:
        pair = await host_and_join(config(ALICE, s, tmp_path / "h"), failing)
    finally:
        for b in bots:
            close_bot(b)
    (h,), (j,) = reports(pair.host), reports(pair.join)
    for r in (h, j):
        v = verify_file(r.replay)
        assert v.ok and v.outcome is not None and v.outcome.end == "forfeit", v.line()
        reason = v.outcome.reason
        assert reason.startswith("bot cmd:crashbot.sh (player "), reason
        assert "crashed with exit code 3" in reason, reason
        assert "my-private-folder" not in r.replay.read_bytes().decode("latin-1"), reason


async def test_records_and_the_sidecar_are_written_out_of_reach_of_ctrl_c(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C is delivered by trio at once in unprotected code, even in the middle of a write: every
    record and the sidecar are written with KeyboardInterrupt held back to the next checkpoint."""
    import trio

    from basilica_p2p.net import side as sides
    from basilica_p2p.seat import SeatSecrets

    seen: list[tuple[str, bool]] = []

    class Writer:
        path = tmp_path / "game.replay"

        def append(self, raw: bytes, sync: bool = True) -> None:
            seen.append(("record", trio.lowlevel.currently_ki_protected()))

    monkeypatch.setattr(sides, "write_private_json",
                        lambda path, data: seen.append(("sidecar", trio.lowlevel.currently_ki_protected())))
    class Seat:
        secrets = SeatSecrets(bytes(32))

    side = sides.Side(seat=Seat(), writer=Writer(), sidecar=tmp_path / ".game.replay.session")  # type: ignore[arg-type]
    assert not trio.lowlevel.currently_ki_protected()
    side.record(b"x", sync=False)
    side.save()
    assert seen == [("record", True), ("sidecar", True)]


# --- what a person's screen is told ----------------------------------------------------------------


class Watching(AgentBase):
    """An agent that keeps the boards it was shown when a game began (or, resumed, went on)."""

    def __init__(self, seed: int) -> None:
        self.bot = BotAgent(RandomBot(seed))
        self.name = "watching"
        self.seat: int | None = None
        self.begun: list[tuple[int | None, Any]] = []

    def begin(self, seat: int, names: Any, manifest: Any) -> None:
        self.seat = seat

    def choose(self, ask: Any) -> Any:
        return self.bot.choose(ask)

    def observe(self, event: SeatEvent) -> None:
        if isinstance(event, GameStarted):
            self.begun.append((self.seat, event.view))


@pytest.mark.parametrize("shuffle", ["commit-reveal-v1", "sra-p256-v1"])
@pytest.mark.parametrize("seat", [0, 1])
async def test_a_person_is_shown_the_board_once_the_game_is_set_up_before_any_move(
        tmp_path: Path, seat: int, shuffle: str) -> None:
    """The host's screen stayed blank until the other side's first move (15 s and more): the
    board and whose turn it is come with the beginning of the game, whoever moves first."""
    from basilica_p2p.engine import observe

    from support.net_harness import run_against

    agent = Watching(3)

    async def script(p: Any) -> None:
        await p.hello()
        await p.play()

    run = await run_against(script, tmp_path, honest_seat=seat, agent=agent,
                            honest_settings=settings(shuffle=shuffle))
    assert run.error is None and run.report is not None
    assert len(agent.begun) == 1
    told_seat, view = agent.begun[0]
    assert told_seat == seat and view is not None and view.player == seat
    assert view.history == () and not view.over and view.pending is not None
    assert view.pending.player in (0, 1) and view.market  # whose turn it is, and the market dealt
    assert observe(run.report.game, seat).turn >= view.turn


async def test_a_resumed_game_shows_the_board_where_it_stands(tmp_path: Path) -> None:
    import trio
    import trio.testing

    from support import replay_builders as rb
    from basilica_p2p.engine import Options
    from basilica_p2p.net.session import Connection, continue_game, resume_exchange, side_from_replay
    from basilica_p2p.replay.file import read_replay
    from basilica_p2p.replay.local import play_recorded
    from basilica_p2p.replay.verify import known_manifests
    from basilica_p2p.wire import open_envelope

    path = tmp_path / "full.replay"
    play_recorded(path, rb.manifest(), Options(), rb.PLAYERS, (RandomBot(1), RandomBot(2)),
                  nonces=(bytes([1]) * 32, bytes([2]) * 32), game_id=rb.GAME_ID, salts=rb.salts())
    replay = read_replay(path)
    envs = [open_envelope(r) for r in replay.records]
    cut = [i for i, e in enumerate(envs) if e.type == "ack"][10] + 1  # moves made, both hold them
    moves = sum(1 for e in envs[:cut] if e.type in ("action", "jreveal"))
    a = rb.write(tmp_path / "p1.replay", replay.header_bytes, replay.records[:cut])
    b = rb.write(tmp_path / "p2.replay", replay.header_bytes, replay.records[:cut])
    agents = (Watching(5), Watching(6))
    s1, s2 = trio.testing.memory_stream_pair()

    async def run(conn: Connection, path: Path, who: Any, agent: Watching) -> None:
        side, seat = side_from_replay(path, known_manifests(), who)

        async def body() -> None:
            await resume_exchange(conn, side, lambda m: None)
            await continue_game(conn, agent, side, "peer", lambda m: None)
        await conn.run(body)

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run, Connection(s1, Timeouts()), a, rb.ALICE, agents[0])
            nursery.start_soon(run, Connection(s2, Timeouts()), b, rb.BOB, agents[1])
    for seat, agent in enumerate(agents):
        assert len(agent.begun) == 1
        told_seat, view = agent.begun[0]
        assert told_seat == seat and view is not None and len(view.history) == moves > 0
