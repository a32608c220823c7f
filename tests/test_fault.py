"""A fault (protocol 3, PROTOCOL.md §4c): a signed message that breaks the rules, kept whole as the
proof of a win, and everything a fault must be to be accepted."""

from __future__ import annotations

from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from basilica_p2p.clock import Limits
from basilica_p2p.engine import Options, Ruleset, default_manifest, format_action
from basilica_p2p.identity import Identity
from basilica_p2p.referee import END_FAULT, GameSpec, Referee
from basilica_p2p.replay.file import Header, ReplayWriter
from basilica_p2p.replay.forks import find_forks
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.seat import Refusal, Refused, Seat, StepKind
from basilica_p2p.wire import ProtocolError, open_envelope, seal

ALICE = Identity("alice", Ed25519PrivateKey.from_private_bytes(bytes([1]) * 32))
BOB = Identity("bob", Ed25519PrivateKey.from_private_bytes(bytes([2]) * 32))
GAME = bytes(range(32))


def spec(limits: Limits | None = Limits()) -> GameSpec:
    return GameSpec(GAME, (ALICE.public, BOB.public), ("alice", "bob"), Options(Ruleset.PORTAL2022), default_manifest(),
                    limits=limits)


def nonces(n: int) -> bytes:
    return bytes([n]) * n


def seats(s: GameSpec) -> tuple[Seat, Seat]:
    return Seat(s, ALICE, entropy=nonces), Seat(s, BOB, entropy=nonces)


def play_until(a: Seat, b: Seat, plies: int) -> list[bytes]:
    """Both seats play their first legal decisions until ``plies`` decisions are made and the next
    one is due; the records both hold."""
    both = (a, b)
    while True:
        step = a.due()
        if step.kind is StepKind.ACTION and a.game is not None and len(a.game.history) >= plies:
            return list(a.records)
        maker, taker = both[step.who], both[1 - step.who]
        ask = maker.ask()
        out = maker.make(ask.legal[0] if ask is not None else None)
        got = taker.receive(out.envelope.raw)
        assert not isinstance(got, Refused), got


def illegal(seat: Seat) -> bytes:
    """The mover's signed action, well placed in the chain, that the rules refuse."""
    g = seat.game
    assert g is not None
    who = ALICE if seat.spec.players[g.to_move or 0] == ALICE.public else BOB
    return seal(who.key, GAME, seat.referee.seq, seat.referee.prev, "action",
                {"ply": len(g.history), "action": "V1:a99"}).raw


def test_a_fault_citing_an_illegal_action_ends_the_game_for_the_signer_and_verifies(tmp_path: Path) -> None:
    a, b = seats(spec())
    play_until(a, b, 4)
    mover = a.game.to_move  # type: ignore[union-attr]
    waiting = (a, b)[1 - mover]
    bad = illegal(waiting)
    got = waiting.receive(bad)
    assert isinstance(got, Refused) and got.kind is Refusal.RULES and got.citable == bad
    fault = waiting.claim_fault(got.citable)
    assert waiting.finished and waiting.outcome is not None
    assert waiting.outcome.end == END_FAULT and waiting.outcome.winner == 1 - mover
    assert waiting.outcome.fault == fault.envelope.seq and "not legal" in waiting.outcome.reason
    path = tmp_path / "g.replay"
    with ReplayWriter.create(path, Header.of(waiting.spec)) as w:
        for raw in waiting.records:
            w.append(raw)
    v = verify_file(path)
    assert v.ok, v.error
    name = waiting.spec.names[mover]
    assert f"{name} (player {mover + 1}) signed a message that breaks the rules at record {fault.envelope.seq + 1}" \
        in v.summary()
    assert v.to_json()["fault"] == {"loser": mover + 1, "record": fault.envelope.seq + 1,
                                    "why": waiting.outcome.reason}


def fault_body(seat: Seat, cited: bytes, loser: int) -> dict[str, object]:
    return {"loser": loser, "message": cited}


@pytest.mark.parametrize("case", ["legal", "own", "wrong-place", "other-game", "names-itself", "not-an-envelope",
                                  "cites-a-fault"])
def test_a_fault_that_proves_nothing_is_refused_and_changes_nothing(case: str) -> None:
    a, b = seats(spec())
    play_until(a, b, 4)
    mover = a.game.to_move  # type: ignore[union-attr]
    verifier = Seat(spec(), views=False)
    for raw in a.records:
        assert not isinstance(verifier.receive(raw), Refused)
    ref = verifier.referee
    keys = (ALICE, BOB)
    claimant, cheater = keys[1 - mover], keys[mover]
    g = verifier.game
    assert g is not None
    text = format_action(g.legal_actions()[0])
    cited = {
        "legal": seal(cheater.key, GAME, ref.seq, ref.prev, "action", {"ply": len(g.history), "action": text}).raw,
        "own": seal(claimant.key, GAME, ref.seq, ref.prev, "action", {"ply": len(g.history), "action": "V1:a99"}).raw,
        "wrong-place": seal(cheater.key, GAME, ref.seq + 1, ref.prev, "action",
                            {"ply": len(g.history), "action": "V1:a99"}).raw,
        "other-game": seal(cheater.key, bytes(32), ref.seq, ref.prev, "action",
                           {"ply": len(g.history), "action": "V1:a99"}).raw,
        "names-itself": illegal(verifier),
        "not-an-envelope": b"\x92\xc4\x01x",
        "cites-a-fault": seal(cheater.key, GAME, ref.seq, ref.prev, "fault",
                              {"loser": 2 - mover, "message": illegal(verifier)}).raw,
    }[case]
    loser = (1 - mover if case == "names-itself" else mover) + 1
    env = seal(claimant.key, GAME, ref.seq, ref.prev, "fault", {"loser": loser, "message": cited})
    before = (ref.seq, ref.prev, ref.waiting_for(), g.state_hash())
    got = verifier.receive(env.raw)
    assert isinstance(got, Refused), case
    assert (ref.seq, ref.prev, ref.waiting_for(), verifier.game.state_hash()) == before  # type: ignore[union-attr]
    words = {"legal": "breaks no rule", "own": "not signed by player", "wrong-place": "not one for this place",
             "other-game": "not one for this place", "names-itself": "must name the other player",
             "not-an-envelope": "not a valid envelope", "cites-a-fault": "cannot cite a fault"}[case]
    assert words in got.detail, got.detail


def test_a_fault_in_a_game_of_protocol_1_is_refused() -> None:
    a, b = seats(spec(limits=None))
    play_until(a, b, 2)
    mover = a.game.to_move  # type: ignore[union-attr]
    waiting = (a, b)[1 - mover]
    got = waiting.receive(illegal(waiting))
    assert isinstance(got, Refused) and got.citable == b""  # nothing to cite it in
    ref = Referee(spec(limits=None))
    for raw in a.records[:len(waiting.records)]:
        ref.feed(open_envelope(raw))
    env = seal((ALICE, BOB)[1 - mover].key, GAME, ref.seq, ref.prev, "fault",
               {"loser": mover + 1, "message": illegal(waiting)})
    with pytest.raises(ProtocolError, match="only protocol 3"):
        ref.feed(env)


def test_files_that_part_at_a_fault_prove_that_the_cited_signer_took_its_message_back(tmp_path: Path) -> None:
    """A cheater whose false message was cited, who then cuts its own file and
    signs another message for the same place, has signed two histories of one game."""
    a, b = seats(spec())
    play_until(a, b, 4)
    mover = a.game.to_move  # type: ignore[union-attr]
    honest, cheater = (a, b)[1 - mover], (a, b)[mover]
    bad = illegal(honest)
    got = honest.receive(bad)
    assert isinstance(got, Refused)
    honest.claim_fault(got.citable)
    ask = cheater.ask()
    assert ask is not None
    cheater.make(ask.legal[0])  # the cheater's own file goes on with a legal move for that place
    paths = []
    for seat, name in ((honest, "honest"), (cheater, "cheater")):
        path = tmp_path / f"{name}.replay"
        with ReplayWriter.create(path, Header.of(seat.spec)) as w:
            for raw in seat.records:
                w.append(raw)
        paths.append(path)
    forks = find_forks([verify_file(p) for p in paths])
    assert len(forks) == 1
    fork = forks[0]
    assert fork.seq == len(honest.records) - 1
    assert [s.key for s in fork.signed_both] == [cheater.spec.players[mover]]
    assert "the action its fault cites" in fork.line() and "proof of cheating" in fork.line()
    from basilica_p2p.replay.evidence import check_evidence

    proof = tmp_path / "proof.evidence"
    proof.write_bytes(fork.evidence())
    assert check_evidence(proof).ok


def test_the_fault_vector_verifies_as_a_win_by_proof_and_its_cited_message_is_what_the_readme_says() -> None:
    """protocol/vectors/fault.replay (tests/test_vectors.py checks its bytes against a fresh build)."""
    from basilica_p2p.replay.file import read_replay
    from basilica_p2p.vectors.protocol import FAULT_ACTION, FAULT_GAME_ID

    path = Path(__file__).parent.parent / "protocol" / "vectors" / "fault.replay"
    replay = read_replay(path)
    assert replay.header.protocol == 3 and replay.header.limits == Limits(120, 600)
    assert replay.header.game == FAULT_GAME_ID
    last = open_envelope(replay.records[-1])
    cited = open_envelope(last.body["message"])
    assert (last.type, last.body["loser"], cited.type, cited.body["action"]) == ("fault", 2, "action", FAULT_ACTION)
    assert (cited.seq, cited.prev) == (last.seq, last.prev)
    v = verify_file(path)
    assert v.ok and v.outcome is not None and v.outcome.end == END_FAULT and v.outcome.winner == 0
    assert f"at record {last.seq + 1}" in v.summary()
