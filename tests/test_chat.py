"""Chat (protocol 3, PROTOCOL.md §4d): a signed line of its own kind, outside the game's chain,
state and rules, checked where it says it was said, and counted by ``verify``."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from basilica_p2p.engine import default_manifest
from basilica_p2p.replay.file import Header, ReplayWriter
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.seat import Accepted, ChatSaid, Refusal, Refused, Seat, StepKind
from basilica_p2p.wire import CHAT_TEXT, as_text, open_envelope, seal
from basilica_p2p.wire.text import is_text

from support.replay_builders import ALICE, BOB, GAME_ID, MALLORY
from support.replay_builders import fixed_nonces as nonces
from support.replay_builders import network_spec as spec

GAME = GAME_ID


def play(a: Seat, b: Seat, steps: int | None = None, chat_every: int = 0) -> None:
    """Both seats play first legal decisions (``steps`` messages, or to the end); every
    ``chat_every`` messages the one who just moved says a line, which the other takes."""
    both = (a, b)
    made = 0
    while not a.finished and (steps is None or made < steps):
        step = a.due()
        maker, taker = both[step.who], both[1 - step.who]
        ask = maker.ask()
        out = maker.make(ask.legal[0] if ask is not None else None)
        assert not isinstance(taker.receive(out.envelope.raw), Refused)
        made += 1
        if chat_every and made % chat_every == 0 and len(maker.records) >= 2:
            line = maker.say(f"line {made}")
            assert line is not None
            got = taker.receive(line.envelope.raw)
            assert isinstance(got, Accepted), got


def write(path: Path, seat: Seat, lines: dict[int, bytes]) -> Path:
    """The replay a side writes: the game's records with its chat (by where each was said)."""
    with ReplayWriter.create(path, Header.of(seat.spec)) as w:
        for seq, raw in enumerate(seat.records):
            w.append(raw)
            if seq + 1 in lines:
                w.append(lines[seq + 1])
    return path


def test_a_line_said_reaches_the_other_seat_as_an_event_with_where_it_was_said() -> None:
    a, b = Seat(spec(), ALICE, entropy=nonces), Seat(spec(), BOB, entropy=nonces)
    play(a, b, steps=6)
    line = a.say("good luck, have fun")
    assert line is not None and line.envelope.type == StepKind.CHAT
    assert line.events == (ChatSaid(0, "good luck, have fun", len(a.records), 0),)
    got = b.receive(line.envelope.raw)
    assert isinstance(got, Accepted) and got.events == line.events
    assert b.chat == [line.envelope] and a.chat == [line.envelope]
    again = b.say("thanks")
    assert again is not None and again.events[0].who == 1 and again.events[0].n == 0


def test_chat_never_changes_the_game_state_hash() -> None:
    plain = Seat(spec(), ALICE, entropy=nonces), Seat(spec(), BOB, entropy=nonces)
    chatty = Seat(spec(), ALICE, entropy=nonces), Seat(spec(), BOB, entropy=nonces)
    play(*plain)
    play(*chatty, chat_every=3)
    assert chatty[0].chat and chatty[0].records == plain[0].records
    assert chatty[1].game is not None and plain[1].game is not None
    assert chatty[1].game.state_hash() == plain[1].game.state_hash()


def test_what_a_person_types_is_cleaned_to_the_text_rule() -> None:
    assert as_text("\x1b[31mred\x1b[0m \u202eevil\u202c\tok\n", CHAT_TEXT) == "[31mred[0m evil ok"
    assert as_text("\x07\u200f \t", CHAT_TEXT) == ""
    assert len(as_text("x" * 2000, CHAT_TEXT)) == CHAT_TEXT
    a, b = Seat(spec(), ALICE, entropy=nonces), Seat(spec(), BOB, entropy=nonces)
    play(a, b, steps=2)
    assert a.say("\x1b\x07") is None and a.chat == []


@given(st.text(max_size=700))
def test_any_typed_text_becomes_wire_text_or_nothing(typed: str) -> None:
    text = as_text(typed, CHAT_TEXT)
    assert text == "" or is_text(text, CHAT_TEXT)


def test_no_chat_before_both_hellos_or_in_games_of_older_protocols() -> None:
    a = Seat(spec(), ALICE, entropy=nonces)
    with pytest.raises(ValueError, match="after both hellos"):
        a.say("hi")
    old_a, old_b = Seat(spec(None), ALICE, entropy=nonces), Seat(spec(None), BOB, entropy=nonces)
    play(old_a, old_b, steps=4)
    with pytest.raises(ValueError, match="network games"):
        old_a.say("hi")
    forged = seal(ALICE.key, GAME, 4, old_a.referee.prev, "chat", {"n": 0, "text": "hi"})
    got = old_b.receive(forged.raw)
    assert isinstance(got, Refused) and got.kind is Refusal.CHAT and "protocol" in got.reason


def chat_refusal(raw: bytes, b: Seat) -> str:
    got = b.receive(raw)
    assert isinstance(got, Refused) and got.kind is Refusal.CHAT, got
    return got.reason


def test_a_line_is_refused_unless_signed_by_the_other_player_where_the_game_has_been_and_in_order() -> None:
    a, b = Seat(spec(), ALICE, entropy=nonces), Seat(spec(), BOB, entropy=nonces)
    play(a, b, steps=6)
    seq, prev = len(b.records), b.referee.prev
    assert "not signed by the other player" in chat_refusal(seal(MALLORY.key, GAME, seq, prev, "chat",
                                                                 {"n": 0, "text": "hi"}).raw, b)
    assert "not signed by the other player" in chat_refusal(seal(BOB.key, GAME, seq, prev, "chat",
                                                                 {"n": 0, "text": "hi"}).raw, b)
    assert "another game" in chat_refusal(seal(ALICE.key, bytes(32), seq, prev, "chat",
                                               {"n": 0, "text": "hi"}).raw, b)
    assert "not reached" in chat_refusal(seal(ALICE.key, GAME, seq + 1, prev, "chat",
                                              {"n": 0, "text": "hi"}).raw, b)
    assert "not reached" in chat_refusal(seal(ALICE.key, GAME, seq, bytes(32), "chat",
                                              {"n": 0, "text": "hi"}).raw, b)
    earlier = seal(ALICE.key, GAME, 3, open_envelope(b.records[2]).hash, "chat", {"n": 4, "text": "late"})
    assert isinstance(b.receive(earlier.raw), Accepted)  # said while message 3 was the next: fine
    assert "numbered 4" in chat_refusal(earlier.raw, b)  # the same line twice
    assert "numbered 2" in chat_refusal(seal(ALICE.key, GAME, seq, prev, "chat", {"n": 2, "text": "x"}).raw, b)
    assert len(b.chat) == 1


def test_a_replay_with_chat_verifies_and_says_how_many_lines(tmp_path: Path) -> None:
    a, b = Seat(spec(), ALICE, entropy=nonces), Seat(spec(), BOB, entropy=nonces)
    play(a, b, chat_every=5)
    assert b.finished and len(b.chat) > 3
    path = write(tmp_path / "chat.replay", b, {env.seq: env.raw for env in b.chat})
    v = verify_file(path)
    assert v.ok, v.error
    assert v.chat == len(b.chat) and f"{len(b.chat)} lines of chat" in v.line()
    assert v.to_json()["chat"] == len(b.chat)
    assert v.records == 1 + len(b.records) + len(b.chat)


def test_a_chat_line_altered_in_a_replay_fails_verification(tmp_path: Path) -> None:
    a, b = Seat(spec(), ALICE, entropy=nonces), Seat(spec(), BOB, entropy=nonces)
    play(a, b, steps=8)
    line = a.say("you played well")
    assert line is not None
    tampered = line.envelope.raw.replace(b"you played well", b"you played bad!")
    assert tampered != line.envelope.raw
    play(a, b)
    path = write(tmp_path / "t.replay", b, {line.envelope.seq: tampered})
    v = verify_file(path)
    assert not v.ok and "signature" in v.error


def chat_replay(tmp_path: Path) -> tuple[Path, Seat]:
    a, b = Seat(spec(), ALICE, entropy=nonces), Seat(spec(), BOB, entropy=nonces)
    play(a, b, steps=2)
    hello = a.say("hello \x1b[2Jbob")  # said after both hellos, before the deal is done
    assert hello is not None and isinstance(b.receive(hello.envelope.raw), Accepted)
    play(a, b, chat_every=7)
    return write(tmp_path / "chat.replay", b, {env.seq: env.raw for env in b.chat}), b


def test_replay_show_and_export_put_each_line_where_it_was_said(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from basilica_p2p.cli import app
    from basilica_p2p.replay.show import export_json, walk

    path, b = chat_replay(tmp_path)
    w = walk(path, {default_manifest().hash: default_manifest()})
    assert (w.chat[0].player, w.chat[0].text) == (0, "hello [2Jbob") and len(w.chat) == len(b.chat)
    assert w.chat[0].index == 0 and all(c.index > 0 for c in w.chat[1:])
    exported = export_json(w)["chat"]
    assert exported[0] == {"after_move": 0, "player": 1, "text": "hello [2Jbob"} and len(exported) == len(b.chat)
    out = CliRunner().invoke(app, ["replay", "show", str(path)], env={"BASILICA_HOME": str(tmp_path)}).output
    lines = out.splitlines()
    first_move = next(i for i, line in enumerate(lines) if line.strip().startswith("1. turn"))
    assert lines[first_move - 1].strip() == "alice says: hello [2Jbob"
    said = w.chat[1]
    at = next(i for i, line in enumerate(lines) if line.strip().startswith(f"{said.index + 1}. turn"))
    assert f"{('alice', 'bob')[said.player]} says: {said.text}" in lines[at - 1]


def test_the_viewer_shows_each_line_with_the_step_it_followed(tmp_path: Path) -> None:
    from basilica_p2p.replay.html import build_viewer_data

    path, b = chat_replay(tmp_path)
    steps = build_viewer_data(path)["steps"]
    said = [(i, c["text"]) for i, s in enumerate(steps) for c in s["chat"]]
    assert said[0] == (0, "hello [2Jbob") and len(said) == len(b.chat)
    assert [t for _, t in said] == [env.body["text"] for env in b.chat]


def test_the_narrator_tells_a_line_with_who_said_it() -> None:
    from basilica_p2p.narration import LineKind, Narrator

    n = Narrator(1, ("alice", "bob"))
    (theirs,) = n.tell(ChatSaid(0, "gg", 40, 3))
    (ours,) = n.tell(ChatSaid(1, "thanks", 40, 0))
    assert (theirs.text, theirs.kind) == ("alice: gg", LineKind.CHAT) and ours.text == "You: thanks"
