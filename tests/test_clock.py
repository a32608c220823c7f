"""Clocks (issue 13): the values, the local loop's clocks, and what verify says of them."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from basilica_p2p.bots import RandomBot
from basilica_p2p.clock import ClockView, Clocks, TimeClaim, TimeControl, TimeControlError, format_seconds
from basilica_p2p.engine import Options, Ruleset, default_manifest
from basilica_p2p.replay.file import FORMAT_VERSION, Header, read_replay
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.verify import referee_for, known_manifests, verify_file
from basilica_p2p.lineclient import TerminalPlayer, play_local
from basilica_p2p.wire import ProtocolError, encode, open_envelope, seal

from support.net_harness import ALICE, BOB

MANIFEST = default_manifest()
OPTIONS = Options(Ruleset.PORTAL2022)


# --- the values ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "minutes", "increment"), [("15+10", 15, 10), (" 5+0 ", 5, 0), ("90", 90, 0),
                                                            ("1+3600", 1, 3600), ("1440+0", 1440, 0)])
def test_a_time_control_parses_and_prints_back(text: str, minutes: int, increment: int) -> None:
    tc = TimeControl.parse(text)
    assert (tc.minutes, tc.increment) == (minutes, increment)
    assert TimeControl.parse(str(tc)) == tc and TimeControl.from_wire(tc.to_wire()) == tc


@pytest.mark.parametrize("text", ["15+", "+10", "-1+0", "abc", "15+-3", "1e3+0", "15.5+0", "0+10", "1441+0",
                                  "15+3601", "9" * 40, "15+10+1", ""])
def test_a_bad_time_control_is_one_typed_line(text: str) -> None:
    with pytest.raises(TimeControlError) as e:
        TimeControl.parse(text)
    assert "\n" not in str(e.value) and len(str(e.value)) < 100


@pytest.mark.parametrize("wire", [None, [], [15], [15, 10, 1], ["15", 10], [True, 10], [15, 2**40], [-1, 0], 7])
def test_a_clock_from_the_network_is_checked(wire: Any) -> None:
    with pytest.raises(TimeControlError):
        TimeControl.from_wire(wire)


def test_format_seconds_and_the_clock_line() -> None:
    assert [format_seconds(s) for s in (900, 65.9, 9.94, 0, -3, 3725)] == ["15:00", "1:05", "0:09.9", "0:00.0",
                                                                           "0:00.0", "1:02:05"]
    view = ClockView(TimeControl(15, 10), (600.0, 9.5), running=1, names=("ada", "bot"), me=0)
    assert view.line() == "clocks 15+10: ada (you) 10:00 | bot 0:09.5 <"
    assert "OUT" in ClockView(TimeControl(1, 0), (0.0, 60.0), None, flagged=0).line()


def test_clocks_add_the_increment_charge_takebacks_and_flag_at_zero() -> None:
    c = Clocks(TimeControl(1, 5), me=0)
    c.start(0, 100.0)
    assert c.view(110.0).remaining == (50.0, 60.0)
    assert c.stop(110.0) == (60_000, 10_000) and c.left == [55_000, 60_000]
    c.start(1, 200.0)
    assert c.deadline(lag=0.5) == 260.5
    assert c.stop(230.0, lag=0.5) == (60_000, 29_500) and c.left[1] == 35_500
    c.start(0, 300.0)
    c.charge(320.0)  # a takeback: the time is gone, no increment
    assert c.left[0] == 35_000 and c.running is None
    c.start(0, 400.0)
    c.stop(435.0)  # exactly all that was left
    assert c.flagged == 0 and c.left[0] == 0


# --- the local loop --------------------------------------------------------------------------


class Ticker:
    """A clock that moves ``step`` seconds each time it is read (the loop reads it around decisions)."""

    def __init__(self, step: float) -> None:
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step
        return self.t


def test_a_local_game_with_clocks_signs_every_figure_and_verifies(tmp_path: Path) -> None:
    g = play_recorded(tmp_path / "c.replay", MANIFEST, OPTIONS, (ALICE, BOB), (RandomBot(1), RandomBot(2)),
                      clock=TimeControl(60, 0), now=Ticker(0.001))
    assert g.over
    replay = read_replay(tmp_path / "c.replay")
    assert replay.header.protocol == 2 and replay.header.clock == TimeControl(60, 0)
    envs = [open_envelope(r) for r in replay.records]
    decisions = [e for e in envs if e.type in ("action", "jcommit")]
    assert decisions and all(isinstance(e.body["clock"], int) for e in decisions)
    for who in (ALICE.public, BOB.public):  # each side's figures only go down (no increment)
        figures = [e.body["clock"] for e in decisions if e.sender == who]
        assert figures == sorted(figures, reverse=True) and figures[0] < 3_600_000
    v = verify_file(tmp_path / "c.replay")
    assert v.ok, v.error


def test_a_game_without_a_clock_is_protocol_1_as_before(tmp_path: Path) -> None:
    play_recorded(tmp_path / "n.replay", MANIFEST, OPTIONS, (ALICE, BOB), (RandomBot(1), RandomBot(2)))
    replay = read_replay(tmp_path / "n.replay")
    assert replay.header.protocol == 1 and replay.header.clock is None
    assert b"clock" not in (tmp_path / "n.replay").read_bytes()


def test_running_out_at_the_prompt_loses_on_time_recorded(tmp_path: Path) -> None:
    out = io.StringIO()
    person = TerminalPlayer("ada", console=Console(width=80, file=out, no_color=True, highlight=False),
                            inp=io.StringIO("1\n" * 400))
    # Each read of the clock is 4 seconds later: a decision takes 8 s of a 1-minute clock.
    result = play_local(person, RandomBot(3), (ALICE, BOB), 0, MANIFEST, OPTIONS, tmp_path,
                        clock=TimeControl(1, 0), now=Ticker(4.0))
    assert result.on_time is not None
    v = verify_file(result.replay)
    assert v.ok, v.error
    o = v.outcome
    assert o is not None and o.end == "time" and o.time is not None and o.time.loser == result.on_time.loser
    assert result.on_time == o.time  # what the terminal says is what verify reads from the replay
    assert o.time.waited >= o.time.left
    assert f"won on time: {('alice', 'bob')[o.time.loser]}'s clock ran out" in v.line()
    text = out.getvalue()
    said = "Your clock ran out. bob wins on time." if o.time.loser == 0 else "bob's clock ran out. You win on time."
    assert "clocks 1+0:" in text and said in text, text[-2000:]
    assert v.to_json()["on_time"]["loser"] == o.time.loser + 1


# --- verify and the referee ------------------------------------------------------------------


def _clocked(tmp_path: Path) -> Path:
    path = tmp_path / "c.replay"
    play_recorded(path, MANIFEST, OPTIONS, (ALICE, BOB), (RandomBot(1), RandomBot(2)), clock=TimeControl(1, 2),
                  now=Ticker(0.01))
    return path


def _fed_until(path: Path, stop: str, count: int) -> tuple[Any, list[bytes]]:
    """A referee fed the replay up to (not including) the ``count``-th envelope of type ``stop``."""
    replay = read_replay(path)
    ref = referee_for(replay, known_manifests())
    seen = 0
    for raw in replay.records:
        env = open_envelope(raw)
        if env.type == stop:
            seen += 1
            if seen == count:
                return ref, [env]
        ref.feed(env)
    raise AssertionError(f"fewer than {count} {stop}")


def test_the_referee_bounds_a_figure_by_the_last_one_and_the_increment(tmp_path: Path) -> None:
    ref, (action,) = _fed_until(_clocked(tmp_path), "action", 6)
    who = ref.spec.player_of(action.sender)
    key = (ALICE, BOB)[who].key
    most = ref.signed[who] + 2_000
    too_much = seal(key, ref.spec.game, ref.seq, ref.prev, "action", {**action.body, "clock": most + 1})
    with pytest.raises(ProtocolError, match="more than"):
        ref.feed(too_much)
    ref.feed(seal(key, ref.spec.game, ref.seq, ref.prev, "action", {**action.body, "clock": most}))


@pytest.mark.parametrize(("body", "words"), [
    ({"left": 5_000, "waited": 4_999}, "before the time is up"),
    ({"left": 5_000, "waited": 5_000, "self": True}, "must name the other player"),
    ({"left": 0, "waited": 0, "early": True}, "whose decision is not due"),
])
def test_a_claim_on_time_is_checked_against_its_own_figures(tmp_path: Path, body: dict[str, Any], words: str) -> None:
    ref, (action,) = _fed_until(_clocked(tmp_path), "action", 6)
    mover = ref.spec.player_of(action.sender)
    claimant = mover if body.get("self") else 1 - mover
    if body.get("early"):  # the mover acts, and the claim comes while the acknowledgement is due
        ref.feed(action)
    loser = claimant + 1 if body.get("self") else mover + 1
    claim = seal((ALICE, BOB)[claimant].key, ref.spec.game, ref.seq, ref.prev, "timeout",
                 {"loser": loser, "left": body["left"], "waited": body["waited"]})
    with pytest.raises(ProtocolError, match=words) as e:
        ref.feed(claim)
    assert "\n" not in str(e.value)


def test_a_good_claim_ends_the_game_and_verify_shows_both_figures(tmp_path: Path) -> None:
    ref, (action,) = _fed_until(_clocked(tmp_path), "action", 6)
    mover = ref.spec.player_of(action.sender)
    signed = ref.signed[mover]
    ref.feed(seal((ALICE, BOB)[1 - mover].key, ref.spec.game, ref.seq, ref.prev, "timeout",
                  {"loser": mover + 1, "left": signed - 700, "waited": signed}))
    o = ref.outcome
    assert o is not None and o.end == "time" and o.winner == 1 - mover and o.claimed_by == 1 - mover
    assert o.time == TimeClaim(mover, signed, signed - 700, signed)
    words = o.time.words(ref.spec.names)
    assert format_seconds(signed / 1000) in words and format_seconds((signed - 700) / 1000) in words


@pytest.mark.parametrize(("protocol", "clock"), [(2, None), (1, [1, 0]), (2, [0, 0]), (2, [1, 10**6])])
def test_a_header_whose_clock_and_protocol_disagree_is_refused(protocol: int, clock: Any) -> None:
    h = Header("portal2022", False, False, bytes(32), bytes(32), ((bytes(32), "a"), (bytes([1]) * 32, "b")))
    m = h.to_map()
    assert m["format"] == FORMAT_VERSION
    m["protocol"] = protocol
    if clock is not None:
        m["clock"] = clock
    with pytest.raises(ProtocolError, match="clock"):
        Header.decode(encode(m))


def test_the_viewer_shows_a_claim_on_time(tmp_path: Path) -> None:
    from basilica_p2p.replay.html import build_viewer_data

    result = play_local(TerminalPlayer("ada", console=Console(file=io.StringIO()), inp=io.StringIO("1\n" * 400)),
                        RandomBot(3), (ALICE, BOB), 0, MANIFEST, OPTIONS, tmp_path, clock=TimeControl(1, 0),
                        now=Ticker(4.0))
    assert result.on_time is not None
    data = build_viewer_data(result.replay)
    winner = ("alice", "bob")[1 - result.on_time.loser]
    assert data["result"]["text"].startswith(f"{winner} claims a win on time, signed by {winner}: ")
    assert data["clock"] == "1+0" and data["result"]["on_time"]["loser"] == result.on_time.loser + 1
    assert data["steps"][-1]["next"].startswith("the game ends here: ")


def test_the_protocol_2_vector_holds_figures_a_takeback_and_a_claim() -> None:
    """protocol/vectors/clock.replay (tests/test_vectors.py checks its bytes against a fresh build)."""
    path = Path(__file__).parent.parent / "protocol" / "vectors" / "clock.replay"
    replay = read_replay(path)
    assert replay.header.protocol == 2 and replay.header.clock == TimeControl(1, 0)
    envs = [open_envelope(r) for r in replay.records]
    types = [e.type for e in envs]
    assert types.count("takeback") == 2 and types[-1] == "timeout"
    assert all("clock" in e.body for e in envs if e.type in ("action", "jcommit"))
    v = verify_file(path)
    assert v.ok and v.outcome is not None and v.outcome.takebacks == (1, 0) and v.outcome.end == "time"


@pytest.mark.parametrize(("type_", "body", "ok"), [
    ("action", {"ply": 3, "action": "V1:b1", "clock": 59_000}, True),
    ("action", {"ply": 3, "action": "V1:b1"}, True),
    ("jcommit", {"ply": 3, "commitment": bytes(32), "clock": 0}, True),
    ("action", {"ply": 3, "action": "V1:b1", "clock": -1}, False),
    ("action", {"ply": 3, "action": "V1:b1", "clock": True}, False),
    ("action", {"ply": 3, "action": "V1:b1", "clock": 2**32}, False),
    ("action", {"ply": 3, "action": "V1:b1", "clock": "59"}, False),
    ("action", {"clock": 5, "ply": 3, "action": "V1:b1"}, False),  # the extra field goes last
    ("action", {"ply": 3, "action": "V1:b1", "clock": 5, "more": 1}, False),
    ("ack", {"ply": 3, "state": bytes(32), "clock": 5}, False),  # only decisions carry a figure
    ("jreveal", {"ply": 3, "action": "J:c2=G", "salt": bytes(32), "clock": 5}, False),
    ("timeout", {"loser": 2, "left": 1, "waited": 1}, True),
    ("timeout", {"loser": 3, "left": 1, "waited": 1}, False),
    ("timeout", {"loser": 2, "left": -1, "waited": 1}, False),
    ("timeout", {"loser": 2, "left": 1.5, "waited": 1}, False),
    ("takeback", {"to": 0}, True),
    ("takeback", {"to": -2}, False),
])
def test_the_clock_fields_on_the_wire(type_: str, body: dict[str, Any], ok: bool) -> None:
    from basilica_p2p.wire import check_body

    if ok:
        check_body(type_, body)
        return
    with pytest.raises(ProtocolError) as e:
        check_body(type_, body)
    assert "\n" not in str(e.value)


def test_a_hello_with_a_clock_is_the_hello_with_one_more_field() -> None:
    from basilica_p2p.seat import hello_body
    from basilica_p2p.wire import check_body

    body = hello_body(ALICE.name, OPTIONS, MANIFEST, "commit-reveal-v1", TimeControl(15, 10))
    check_body("hello", body)
    assert body["protocol"] == 2 and body["clock"] == [15, 10]
    with pytest.raises(ProtocolError):
        check_body("hello", {**body, "clock": [15]})
    with pytest.raises(ProtocolError):
        check_body("hello", {"clock": [15, 10], **{k: v for k, v in body.items() if k != "clock"}})


def test_after_an_undo_the_claim_on_time_names_the_last_signed_figure(tmp_path: Path) -> None:
    """Time spent before an undo stays spent but is never signed: the claim the terminal reports
    must name the loser's last *signed* figure, as verify reads it (a new player saw 0:00.0 on the
    terminal and 0:44 in verify)."""
    from basilica_p2p.replay.local import play_both_seats
    from basilica_p2p.seat import SeatSecrets

    class Person(TerminalPlayer):
        """The person takes 8 s over each decision (an undo too); the bot none."""

        def __init__(self) -> None:
            super().__init__("ada", console=Console(width=80, file=io.StringIO()),
                             inp=io.StringIO("1\n" * 6 + "undo\n" + "1\n" * 400))
            self.t = 0.0

        def choose(self, ask: Any) -> Any:
            self.t += 8.0
            return super().choose(ask)

    person = Person()
    person.takebacks = True  # as play_local sets it against a bot
    path = tmp_path / "undo.replay"
    played = play_both_seats(path, MANIFEST, OPTIONS, (ALICE, BOB), (person, RandomBot(3)),
                             secrets=(SeatSecrets(bytes([1]) * 32), SeatSecrets(bytes([2]) * 32)), game_id=bytes(32),
                             clock=TimeControl(1, 0), now=lambda: person.t)
    v = verify_file(path)
    assert v.ok, v.error
    assert "takeback" in v.line() and v.outcome is not None and v.outcome.time is not None
    # Six decisions leave 12 s, signed; the undo spends 8 of them unsigned; the next decision flags.
    assert played.on_time == v.outcome.time and (v.outcome.time.signed, v.outcome.time.left) == (12_000, 4_000)
