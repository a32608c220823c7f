"""What the referee refuses in a well-signed replay: a forfeit after a game decided on the board or
before both hellos, an action in non-canonical notation or out of turn, control characters in a
header name; and a forfeit the winner claims is shown as a claim."""

from __future__ import annotations

from pathlib import Path

from support import replay_builders as rb
from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import Options
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.wire import open_envelope


def _finished(tmp: Path):  # type: ignore[no-untyped-def]
    path = tmp / "g.replay"
    play_recorded(path, rb.manifest(), Options(), rb.PLAYERS, (RandomBot(1), RandomBot(2)),
                  nonces=(bytes([1]) * 32, bytes([2]) * 32), game_id=rb.GAME_ID, salts=rb.salts())
    replay = read_replay(path)
    return replay, [open_envelope(r) for r in replay.records]


def test_a_forfeit_cannot_overturn_a_game_decided_on_the_board(tmp_path: Path) -> None:
    replay, envs = _finished(tmp_path)
    items = rb.as_items(envs)
    assert items[-2][1] == "result" and items[-1][1] == "result"
    # Instead of signing the result, player 1 claims that player 2 forfeited.
    forged = rb.rechain(items[:-2] + [(rb.ALICE, "forfeit", {"loser": 2, "reason": "timeout"})])
    v = rb.verify_records(tmp_path, replay.header_bytes, rb.raws(forged))
    assert not v.ok and "after the game ended on the board" in v.error
    assert rb.first_record(v.error) == len(forged)


def test_a_forfeit_claimed_by_the_winner_is_shown_as_a_claim(tmp_path: Path) -> None:
    replay, envs = _finished(tmp_path)
    items = rb.as_items(envs)
    cut = next(i for i, (_, t, _) in enumerate(items) if t == "action") + 4
    claimed = rb.rechain(items[:cut] + [(rb.ALICE, "forfeit", {"loser": 2, "reason": "left"})])
    v = rb.verify_records(tmp_path, replay.header_bytes, rb.raws(claimed))
    assert v.ok and v.outcome is not None and v.outcome.claimed_by == 0 and v.outcome.winner == 0
    assert "claimed by player 1" in v.line()
    resigned = rb.rechain(items[:cut] + [(rb.BOB, "forfeit", {"loser": 2, "reason": "resigned"})])
    v = rb.verify_records(tmp_path, replay.header_bytes, rb.raws(resigned))
    assert v.ok and "resigned" in v.line() and v.to_json()["forfeit_claimed_by"] == 2


def test_an_action_in_non_canonical_notation_is_refused(tmp_path: Path) -> None:
    replay, envs = _finished(tmp_path)
    items = rb.as_items(envs)
    i = next(i for i, (_, t, _) in enumerate(items) if t == "action")
    who, _, body = items[i]
    items[i] = (who, "action", {"ply": body["ply"], "action": " " + body["action"]})
    v = rb.verify_records(tmp_path, replay.header_bytes, rb.raws(rb.rechain(items)))
    assert not v.ok and "canonical notation" in v.error and rb.first_record(v.error) == i + 1


def test_a_header_name_with_control_characters_is_refused(tmp_path: Path) -> None:
    from basilica_p2p.replay.file import Header, ReplayError, parse, MAGIC, frame

    replay, envs = _finished(tmp_path)
    h = replay.header
    bad = Header(h.ruleset, h.festum, h.removal, h.manifest, h.game, ((h.players[0][0], "al\x1b[2Jice"), h.players[1]))
    data = MAGIC + frame(bad.encode()) + b"".join(frame(r) for r in replay.records)
    import pytest

    with pytest.raises(ReplayError) as e:
        parse(data)
    assert e.value.record == 0


def test_a_forfeit_before_both_hellos_is_refused(tmp_path: Path) -> None:
    # Issue 9 §4 (PROTOCOL.md §6): before both signed hellos the header is not
    # authenticated, so there is no game to forfeit yet.
    replay, envs = _finished(tmp_path)
    items = rb.as_items(envs)
    early = rb.rechain(items[:1] + [(rb.ALICE, "forfeit", {"loser": 2, "reason": "never mind"})])
    v = rb.verify_records(tmp_path, replay.header_bytes, rb.raws(early))
    assert not v.ok and "a forfeit before both hellos" in v.error and rb.first_record(v.error) == 2
    # Right after the hellos, a resignation is a finished game.
    after = rb.rechain(items[:2] + [(rb.BOB, "forfeit", {"loser": 2, "reason": "never mind"})])
    v = rb.verify_records(tmp_path, replay.header_bytes, rb.raws(after))
    assert v.ok and "resigned" in v.line()


def test_an_action_by_the_player_not_to_move_is_named_out_of_turn(tmp_path: Path) -> None:
    replay, envs = _finished(tmp_path)
    items = rb.as_items(envs)
    i = next(i for i, (_, t, _) in enumerate(items) if t == "action")
    who, _, body = items[i]
    other = rb.BOB if who is rb.ALICE else rb.ALICE
    items[i] = (other, "action", body)
    v = rb.verify_records(tmp_path, replay.header_bytes, rb.raws(rb.rechain(items[: i + 1])))
    assert not v.ok and "acted out of turn" in v.error and rb.first_record(v.error) == i + 1
