"""Issue 10 over the network: games dealt face down by sra-p256-v1 between two peers.

Two honest peers (net.peer.host / join over loopback TCP) play whole games
whose replays verify with the deal audited; a mismatch of schemes is refused
in one line; a false share is misbehaviour named at once; withheld shares are
the waiting side's claim, a withheld secret only costs the audit; a connection
dropped inside the deal or between the two halves of a shares round resumes,
and the session file holds the deal secret (0600) before our first deal step.
"""

from __future__ import annotations

import json
import os
import random
import socket
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing

from basilica_p2p.bots import RandomBot
from basilica_p2p.identity import Identity
from basilica_p2p.net.peer import PeerConfig
from basilica_p2p.net.session import Connection, GameReport, Refused, Settings, Timeouts
from basilica_p2p.schemes import COMMIT_REVEAL, HIDDEN_DEAL
from basilica_p2p.seat import PeerAway, PeerBack
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire import open_envelope

from support.net_harness import ALICE, BOB, FAST, Fault, Run, ScriptedPeer, faulted, host_and_join, run_against, settings

HIDDEN = settings(shuffle=HIDDEN_DEAL)


def config(me: Identity, s: Settings, replay_dir: Path, *, games: int = 1, seed: int = 0,
           resume: str | None = None) -> PeerConfig:
    cfg = PeerConfig(me, s, lambda k: RandomBot(seed + k), replay_dir, None, FAST, games)
    if resume is not None:  # as the CLI does: a session file next to each replay
        cfg.resume_info = {"role": resume, "identity": "user", "address": "127.0.0.1", "port": 0}
    return cfg


def reports(result: list[GameReport] | BaseException) -> list[GameReport]:
    assert isinstance(result, list), f"expected the reports, got {result!r}"
    return result


def audited(path: Path) -> str:
    v = verify_file(path)
    assert v.ok, v.line()
    assert v.line().endswith(", deal audited"), v.line()
    return v.line()


def types(path: Path) -> list[str]:
    from basilica_p2p.replay.file import read_replay

    return [open_envelope(r).type for r in read_replay(path).records]


@pytest.mark.trio
async def test_two_games_on_one_connection_are_dealt_face_down_and_audited(tmp_path: Path) -> None:
    pair = await host_and_join(config(ALICE, HIDDEN, tmp_path / "h", games=2, seed=1),
                               config(BOB, HIDDEN, tmp_path / "j", games=99, seed=5))
    hosted, joined = reports(pair.host), reports(pair.join)
    assert len(hosted) == len(joined) == 2
    for h, j in zip(hosted, joined):
        assert h.outcome == j.outcome and h.outcome.audited is True
        audited(h.replay)
        audited(j.replay)
        assert h.replay.read_bytes() == j.replay.read_bytes()
        kinds = types(h.replay)
        assert kinds.count("deal") >= 3 and "shares" in kinds and kinds[-4:] == ["secret", "secret", "result", "result"]


@pytest.mark.parametrize("swap", [False, True], ids=["host-hides", "joiner-hides"])
@pytest.mark.trio
async def test_a_shuffle_mismatch_is_refused_in_one_line_on_both_sides(tmp_path: Path, swap: bool) -> None:
    ours, theirs = (HIDDEN, settings()) if not swap else (settings(), HIDDEN)
    pair = await host_and_join(config(ALICE, ours, tmp_path / "h"), config(BOB, theirs, tmp_path / "j"))
    a, b = (HIDDEN_DEAL, COMMIT_REVEAL) if not swap else (COMMIT_REVEAL, HIDDEN_DEAL)
    for error in (pair.host, pair.join):
        assert isinstance(error, Exception), repr(error)
        message = str(error)
        assert "\n" not in message
        # Both sides name the difference with the same words, whoever refused.
        assert f"settings differ: shuffle scheme: alice has {a}, bob has {b}" in message \
            or f"settings differ: shuffle scheme: bob has {b}, alice has {a}" in message, message
    assert any(isinstance(e, Refused) for e in (pair.host, pair.join))
    assert not list(tmp_path.rglob("*.replay")), "a replay was written for a game that never started"


# --- a scripted peer that cheats or stalls -------------------------------------------------------------


@pytest.mark.trio
async def test_a_false_share_ends_the_game_with_it_as_proof(tmp_path: Path) -> None:
    """The false share is kept, whole, in the honest side's fault, and the
    replay verifies as a win naming the share that did not match its commitment."""
    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        step = await p.play(stop=lambda peer, step: step == "shares")
        assert step == "shares"
        body = p.honest_body("shares")
        deck, position, share = body["shares"][0]
        body["shares"][0] = [deck, position, share[:-1] + bytes([share[-1] ^ 1])]  # another key: false
        await p.send_env(p.forge("shares", body), bad=True)
        await p.drain()

    run = await run_against(script, tmp_path, honest_settings=HIDDEN, honest_seat=0)
    summary = faulted(run, "share", "does not match its key commitment")
    assert "bob (player 2)" in summary


@pytest.mark.trio
async def test_a_wrong_secret_ends_the_game_with_it_as_proof(tmp_path: Path) -> None:
    """A secret that does not reproduce its sender's signed deal is kept, whole,
    in the honest side's fault, and the replay verifies as a win naming the audit that failed."""
    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=lambda peer, step: step == "secret") == "secret"
        await p.send_env(p.forge("secret", {"secret": bytes(32)}), bad=True)
        await p.drain()

    run = await run_against(script, tmp_path, honest_settings=HIDDEN, honest_seat=0, limit=60.0)
    faulted(run, "the audit of the deal", "player 2")


async def withholding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: Any) -> Run:
    """The honest side (player 1) against a peer that plays honestly until ``stop``, then
    keeps the connection alive (pings) but sends nothing more (under a MockClock)."""
    from support.net_harness import inline_threads

    inline_threads(monkeypatch)

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=stop) is not None
        p.mark("withheld")
        await p.linger(200.0, ping_every=1.0, envelopes_ok=True)

    t = Timeouts(handshake=20.0, ping_interval=5.0, idle=30.0, frame=10.0)
    return await run_against(script, tmp_path, honest_settings=HIDDEN, honest_seat=0, timeouts=t, limit=400.0)


@pytest.mark.trio
async def test_withheld_shares_are_claimed_as_a_forfeit_at_the_handshake_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Honest until the first round where the peer's shares are due after ours, then silent.
    run = await withholding(tmp_path, monkeypatch, lambda peer, step: step == "shares" and peer.ref.deal_table.given)
    assert run.error is None, repr(run.error)
    assert run.report is not None
    o = run.report.outcome
    assert o.end == "forfeit" and o.winner == 0 and o.claimed_by == 0, o
    assert "no shares within 20 s" in o.reason, o.reason
    assert 20.0 <= run.ended - run.peer.marks["withheld"] <= 20.1
    v = verify_file(run.replay)
    assert v.ok, v.line()
    assert "forfeited as claimed by player 1" in v.line() and "deal not audited" in v.line(), v.line()


# --- the secret on disk, and resume inside the deal ------------------------------------------------------

# No keepalives during these short games: the proxy's byte counts then meet only envelopes.
QUIET = Timeouts(handshake=5.0, ping_interval=60.0, idle=120.0, frame=5.0)


@pytest.mark.trio
async def test_the_session_file_holds_the_deal_secret_owner_only_before_our_first_deal_message(
    tmp_path: Path, open_umask: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[bytes, tuple[int, str | None]] = {}
    real = Connection.send_envelope
    folders = {ALICE.public: tmp_path / "h", BOB.public: tmp_path / "j"}

    async def watched(self: Connection, raw: bytes) -> None:
        env = open_envelope(raw)
        if env.type in ("deal", "shares") and env.sender not in seen:
            (side,) = folders[env.sender].glob(f".{env.game.hex()[:16]}-*.replay.session")
            seen[env.sender] = (stat.S_IMODE(side.stat().st_mode),
                                json.loads(side.read_text(encoding="utf-8")).get("deal_secret"))
        await real(self, raw)

    monkeypatch.setattr(Connection, "send_envelope", watched)
    h, j = config(ALICE, HIDDEN, tmp_path / "h", resume="host"), config(BOB, HIDDEN, tmp_path / "j", seed=3,
                                                                        resume="join")
    h.keep_session = j.keep_session = True
    pair = await host_and_join(h, j)
    (report,) = reports(pair.host)
    audited(report.replay)
    from basilica_p2p.replay.file import read_replay

    published = {open_envelope(r).sender: open_envelope(r).body["secret"]
                 for r in read_replay(report.replay).records if open_envelope(r).type == "secret"}
    assert set(seen) == set(published) == {ALICE.public, BOB.public}
    for key, (mode, secret) in seen.items():
        assert mode == 0o600
        # The very secret the side later published (and the audit checked) was on disk first.
        assert secret == published[key].hex()


def frames_through(replay: Path, sender: bytes, last_seq: int) -> int:
    """Bytes ``sender`` sent up to and including message ``last_seq``: its offer of checked frames
    and its switch to them (net/framing.py), and each envelope's frame (a 4-byte length, the kind,
    and once switched a 4-byte checksum).  Player 1's hello alone goes before its switch."""
    from basilica_p2p.net.framing import CHECKED_OFFER, control
    from basilica_p2p.replay.file import read_replay

    pongs = 2 * (5 + len(control("pong", n=CHECKED_OFFER)))
    envs = [open_envelope(r) for r in read_replay(replay).records]
    return pongs + sum(frame_size(replay, e.seq) for e in envs if e.sender == sender and e.seq <= last_seq)


def frame_size(replay: Path, seq: int) -> int:
    from basilica_p2p.net.framing import CHECKSUM
    from basilica_p2p.replay.file import read_replay

    return 5 + len(read_replay(replay).records[seq]) + (0 if seq == 0 else CHECKSUM)


async def resume_both(tmp_path: Path, rh: Path, rj: Path) -> tuple[GameReport, GameReport]:
    """``basilica resume`` on both sides at once: the host listens again, the joiner dials."""
    from basilica_p2p.net.resume import Rendezvous, resume
    from basilica_p2p.replay.verify import known_manifests

    with socket.socket() as probe:  # a port free now, for the host to listen on again
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done: dict[bool, GameReport] = {}

    async def side(path: Path, me: Identity, listen: bool) -> None:
        where = Rendezvous(listen, "127.0.0.1", port)
        done[listen] = await resume(path, me, known_manifests(), RandomBot(len(done)), where, QUIET, window=10)

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            for args in ((rh, ALICE, True), (rj, BOB, False)):
                nursery.start_soon(side, *args)
    return done[True], done[False]


def seeded_randomness(monkeypatch: pytest.MonkeyPatch, seed: str) -> None:
    """os.urandom from ``seed``, one stream per calling function: the game id, nonces and deal
    secrets come in protocol order, so a game is played the same twice (as in test_durability)."""
    streams: dict[str, random.Random] = {}

    def urandom(n: int) -> bytes:
        caller = sys._getframe(1).f_code.co_name
        return streams.setdefault(caller, random.Random(f"{seed}/{caller}")).randbytes(n)

    monkeypatch.setattr(os, "urandom", urandom)


async def reference(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The game a faulted run will play, played once whole: where its messages lie in the stream."""
    with monkeypatch.context() as m:
        seeded_randomness(m, "cut")
        pair = await host_and_join(config(ALICE, HIDDEN, folder / "h", seed=1),
                                   config(BOB, HIDDEN, folder / "j", seed=2), direct=True)
    (report,) = reports(pair.host)
    assert types(report.replay)[6:11] == ["deal", "deal", "deal", "shares", "shares"]
    return report.replay


CUTS = {
    # The joiner has only part of player 1's first deal step (its shuffle).
    "in-player-1s-shuffle": lambda ref: Fault(direction=1, drop_after=frames_through(ref, ALICE.public, 4)
                                              + frame_size(ref, 6) // 2),
    # The host has player 2's deal step and made its last one, which never reaches the joiner.
    "after-player-2s-deal-step": lambda ref: Fault(direction=0, drop_after=frames_through(ref, BOB.public, 7)),
    # Player 1's shares of the setup round arrived; player 2's answer may not.
    "between-the-two-shares": lambda ref: Fault(direction=1, drop_after=frames_through(ref, ALICE.public, 9)),
}


# How many messages each side (host, joiner) may then hold: a side whose message is next goes
# on making its messages (each durable before it is sent) until a send fails.
LANDED = {
    "in-player-1s-shuffle": {(7, 6)},  # the host's shuffle is recorded, the joiner lacks it
    "after-player-2s-deal-step": {(9, 8), (10, 8)},  # the host's last deal step (and shares) are not delivered
    "between-the-two-shares": {(10, 11), (11, 11)},  # the joiner's shares may or may not reach the host
}


@pytest.mark.parametrize("cut", sorted(CUTS))
@pytest.mark.trio
async def test_a_connection_dropped_inside_the_deal_is_made_again_and_both_replays_are_audited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: str
) -> None:
    """Issue 20: neither side leaves when the connection breaks mid-deal; they meet again (the
    joiner dials the host), exchange what the other lacks, and finish the same audited game."""
    whole = await reference(tmp_path / "reference", monkeypatch)
    h = config(ALICE, HIDDEN, tmp_path / "h", seed=1, resume="host")
    j = config(BOB, HIDDEN, tmp_path / "j", seed=2, resume="join")
    h.timeouts = j.timeouts = QUIET
    held: dict[str, int] = {}
    back: list[str] = []
    for name, cfg in (("h", h), ("j", j)):
        def watch(event: Any, name: str = name, cfg: PeerConfig = cfg) -> None:
            if isinstance(event, PeerAway) and event.first and name not in held:
                assert cfg.current is not None
                held[name] = len(types(cfg.current))  # where the cut left this side
            if isinstance(event, PeerBack):
                back.append(name)
        cfg.watch = watch
    with monkeypatch.context() as m:
        seeded_randomness(m, "cut")
        pair = await host_and_join(h, j, fault=CUTS[cut](whole), limit=60)
    (hr,), (jr,) = reports(pair.host), reports(pair.join)
    assert hr.replay.name == whole.name  # the same game as the reference, so the cut is where it says
    # The side that noticed the break first said where it stood; both were told the other came back.
    assert set(held) and all(count in {c for pair_ in LANDED[cut] for c in pair_} for count in held.values()), held
    assert sorted(set(back)) == ["h", "j"], back
    assert hr.outcome == jr.outcome and hr.outcome.end != "forfeit", hr.outcome
    audited(hr.replay)
    audited(jr.replay)
    assert hr.replay.read_bytes() == jr.replay.read_bytes()


@pytest.mark.parametrize("cut", sorted(CUTS))
@pytest.mark.trio
async def test_sides_that_stopped_inside_the_deal_resume_from_their_files_and_both_replays_are_audited(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: str
) -> None:
    """The same cuts, with sides that do not wait (as after a crash): 'basilica resume' rebuilds
    each from its replay and session file, mid-deal, and both finish the same audited game."""
    whole = await reference(tmp_path / "reference", monkeypatch)
    h = config(ALICE, HIDDEN, tmp_path / "h", seed=1, resume="host")
    j = config(BOB, HIDDEN, tmp_path / "j", seed=2, resume="join")
    h.timeouts = j.timeouts = QUIET
    h.presence = j.presence = lambda side: None
    with monkeypatch.context() as m:
        seeded_randomness(m, "cut")
        pair = await host_and_join(h, j, fault=CUTS[cut](whole))
    assert not isinstance(pair.host, list) and not isinstance(pair.join, list), (pair.host, pair.join)
    (rh,) = (tmp_path / "h").glob("*.replay")
    (rj,) = (tmp_path / "j").glob("*.replay")
    assert rh.name == whole.name
    held = (len(types(rh)), len(types(rj)))
    assert held in LANDED[cut], (cut, held)
    hr, jr = await resume_both(tmp_path, rh, rj)
    assert hr.outcome == jr.outcome and hr.outcome.end != "forfeit", hr.outcome
    audited(rh)
    audited(rj)
    assert rh.read_bytes() == rj.read_bytes()


# --- the commands -------------------------------------------------------------------------------------------


def _cli(home: Path, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, BASILICA_HOME=str(home))
    return subprocess.Popen([sys.executable, "-m", "basilica_p2p.cli", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _host_and_join(tmp_path: Path, host_args: list[str], join_args: list[str]) -> tuple[tuple[int, str, str], ...]:
    host = _cli(tmp_path / "hh", "host", "--no-invite", "--port", "0", "--bind", "127.0.0.1", "--bot", "random",
                "--replay-dir", str(tmp_path / "h"), *host_args)
    assert host.stdout is not None
    line = host.stdout.readline()
    assert line.startswith("listening on "), line
    port = line.strip().rsplit(":", 1)[1]
    join = _cli(tmp_path / "jh", "join", f"127.0.0.1:{port}", "--bot", "greedy", "--replay-dir",
                str(tmp_path / "j"), *join_args)
    out = []
    for proc in (host, join):
        stdout, stderr = proc.communicate(timeout=120)
        out.append((proc.returncode, stdout, stderr))
    return tuple(out)


def test_host_and_join_deal_face_down_by_default(tmp_path: Path) -> None:
    (hc, hout, herr), (jc, jout, jerr) = _host_and_join(tmp_path, [], [])
    assert hc == 0 and jc == 0, (herr, jerr)
    for out, folder in ((hout, "h"), (jout, "j")):
        assert "game 1: " in out and " moves (" in out, out  # the result line, as for any game
        (replay,) = (tmp_path / folder).glob("*.replay")
        assert types(replay)[6] == "deal"
        audited(replay)


def test_host_and_join_that_ask_for_different_schemes_are_refused(tmp_path: Path) -> None:
    (hc, _, herr), (jc, _, jerr) = _host_and_join(tmp_path, ["--shuffle", "commit-reveal-v1"], [])
    assert hc != 0 and jc != 0
    for err in (herr, jerr):
        assert "Traceback" not in err, err
        assert "shuffle scheme: " in err and "has commit-reveal-v1" in err and "has sra-p256-v1" in err, err
    assert not list(tmp_path.rglob("*.replay"))


def test_an_unknown_scheme_is_refused_before_anything_starts(tmp_path: Path) -> None:
    proc = _cli(tmp_path / "hh", "host", "--no-invite", "--port", "0", "--bot", "random", "--shuffle", "deck-of-cards")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "Traceback" not in err
    assert "--shuffle 'deck-of-cards': choose sra-p256-v1 or commit-reveal-v1" in err, err


@pytest.mark.trio
async def test_a_withheld_secret_is_an_absence_claimed_and_the_deal_is_not_audited(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = await withholding(tmp_path, monkeypatch, lambda peer, step: step == "secret")
    assert run.error is None and run.report is not None, repr(run.error)
    o = run.report.outcome
    # The board had decided, but the results come after the audit: refusing it keeps no win.
    assert o.end == "forfeit" and o.winner == 0 and "no secret within 20 s" in o.reason, o
    assert 20.0 <= run.ended - run.peer.marks["withheld"] <= 20.1
    v = verify_file(run.replay)
    assert v.ok and "deal not audited" in v.line(), v.line()


async def kept_game(tmp_path: Path) -> GameReport:
    """One whole hidden game; the host (player 1) keeps its session file."""
    h = config(ALICE, HIDDEN, tmp_path / "h", resume="host")
    h.keep_session = True
    pair = await host_and_join(h, config(BOB, HIDDEN, tmp_path / "j", seed=3))
    (report,) = reports(pair.host)
    return report


@pytest.mark.trio
async def test_resume_needs_the_deal_secret_of_the_session_file(tmp_path: Path) -> None:
    from support import replay_builders as rb
    from basilica_p2p.net.session import side_from_replay, sidecar_path
    from basilica_p2p.replay.file import ReplayError
    from basilica_p2p.replay.verify import known_manifests

    report = await kept_game(tmp_path)
    side = sidecar_path(report.replay)
    data = json.loads(side.read_text(encoding="utf-8"))
    replay, envs = rb.load(report.replay)
    rb.write(report.replay, replay.header_bytes, [e.raw for e in envs[:10]])  # cut inside the setup round

    rebuilt, seat = side_from_replay(report.replay, known_manifests(), ALICE)
    rebuilt.writer.close()
    assert seat == 0 and rebuilt.seat.due().kind == "shares" and rebuilt.seat.secrets.deal.hex() == data["deal_secret"]

    # Another secret does not give the deal steps we signed: refused, naming the record.
    side.write_text(json.dumps(dict(data, deal_secret=bytes(32).hex())), encoding="utf-8")
    with pytest.raises(ReplayError, match="record 7 .*our own deal step is not the one we made"):
        side_from_replay(report.replay, known_manifests(), ALICE)
    # No secret at all: nothing of ours could be made again.
    side.write_text(json.dumps({k: v for k, v in data.items() if k != "deal_secret"}), encoding="utf-8")
    with pytest.raises(Refused, match="holds no deal secret"):
        side_from_replay(report.replay, known_manifests(), ALICE)


def test_a_peer_that_does_not_come_back_for_the_audit_loses_by_absence(tmp_path: Path) -> None:
    """Played on the real clock; the wait for the peer's return on a virtual one (the agreed window
    is 120 s, which a side that resumes does not shorten)."""
    from support import replay_builders as rb
    from basilica_p2p.net.resume import Rendezvous, resume
    from basilica_p2p.replay.verify import known_manifests

    report = trio.run(kept_game, tmp_path)
    replay, envs = rb.load(report.replay)
    first_secret = [e.type for e in envs].index("secret")
    rb.write(report.replay, replay.header_bytes, [e.raw for e in envs[:first_secret + 1]])  # ours, not theirs
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    async def come_back() -> GameReport:
        with trio.fail_after(300):
            return await resume(report.replay, ALICE, known_manifests(), RandomBot(1),
                                Rendezvous(True, "127.0.0.1", port), QUIET)

    again = trio.run(come_back, clock=trio.testing.MockClock(autojump_threshold=0))
    o = again.outcome
    # The board had decided, but the peer's secret (the audit) never came: a claim, not a result.
    assert o.end == "forfeit" and o.winner == 0 and o.claimed_by == 0, o
    assert o.reason == "did not come back within 120 s"
    v = verify_file(report.replay)
    assert v.ok and "did not come back" in v.line() and "deal not audited" in v.line(), v.line()
