"""A hostile peer, one misbehaviour per test, against the real session code.

Each test plays honestly for a while through the scripted peer of
tests/support/net_harness.py, then does one forbidden thing.  A well-signed message,
due at its place in the chain, that breaks the rules ends the game with a
`fault` citing it (PROTOCOL.md §4c): the honest side wins with the proof in
its replay, which verifies.  Any other message the peer signed that a player
may not send (for another place in the chain, another game, a claim against
us) ends the game with the honest side's claim, saying what the peer did.
What is not the peer's doing (bytes that are no message, a stranger's
signature, a message the connection damaged or duplicated) makes the honest
side stop with PeerMisbehaved or PeerGone whose message says what came, tell
the peer why, and keep a replay that is still a valid prefix of the game
(``verify_file``: ok=False, "incomplete game", "valid through record N")
holding no record of the refused message.  An
envelope that carries no signature of the peer's (garbage, a bad signature)
proves nothing about the peer, since anything on the way could have damaged
it: that is a CorruptedMessage, said without blame.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from basilica_p2p.cli import app
from basilica_p2p.net.framing import CONTROL, ENVELOPE, MAX_FRAME, Frame
from basilica_p2p.net.session import CorruptedMessage, PeerGone, PeerMisbehaved, SessionError
from basilica_p2p.replay.evidence import check_evidence
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire import ProtocolError, encode, open_envelope

from support.net_harness import (
    ALICE,
    BOB,
    MALLORY,
    Run,
    ScriptedPeer,
    at_step,
    claimed,
    faulted,
    frame_bytes,
    holds_none_of,
    run_against,
    valid_prefix,
)

pytestmark = pytest.mark.trio

# Play this many envelopes honestly before misbehaving, so that the game is well
# under way (6 envelopes are the handshake; then action/ack pairs).
MID = 14


def refused(run: Run, *words: str, exc: type[BaseException] = PeerMisbehaved, records: int | None = None,
            notice: bool = True) -> str:
    """The honest side stopped with ``exc`` naming ``words``; its replay is a clean prefix."""
    assert isinstance(run.error, exc), f"expected {exc.__name__}, got {run.error!r}"
    message = str(run.error)
    for w in words:
        assert w in message, f"{w!r} not in {message!r}"
    assert run.report is None
    if notice:
        assert run.peer.errors, "the honest side did not tell the peer why it disconnected"
    if run.replays:
        valid_prefix(run, records)
        holds_none_of(run.replay, run.peer.bad)
    return message


async def misbehave_at(tmp_path: Path, step: str, act, *, honest_seat: int = 0, after: int = MID, **kw) -> Run:  # type: ignore[no-untyped-def]
    """Play honestly until our turn to send ``step`` (with at least ``after`` envelopes
    in the chain), then run ``act(peer)`` and read until the honest side hangs up."""
    state: dict[str, int] = {}

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        got = await p.play(stop=at_step(step, after=after))
        assert got == step, f"the game ended before our {step} (seq >= {after})"
        state["seq"] = p.ref.seq  # type: ignore[union-attr]
        await act(p)
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=honest_seat, **kw)
    if isinstance(run.script_error, AssertionError):
        raise run.script_error
    run.peer.marks["seq"] = state.get("seq", -1)
    return run


def seq_of(run: Run) -> int:
    return int(run.peer.marks["seq"])


# --- the framing ------------------------------------------------------------------------


async def test_garbage_bytes_mid_game(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        junk = bytes((i * 37 + 0xF1) & 0xFF for i in range(200))  # starts 0xf1...: an absurd frame length
        p.bad.append(junk)
        await p.send_bytes(junk)

    run = await misbehave_at(tmp_path, "action", act)
    refused(run, "frame", records=seq_of(run))


async def test_garbage_bytes_instead_of_the_hello(tmp_path: Path) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.send_bytes(b"GET / HTTP/1.1\r\nHost: example\r\n\r\n")
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=1)
    refused(run, "hello")
    assert run.replays == []


async def test_garbage_inside_a_well_formed_envelope_frame(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        junk = b"\xc1\xc1 not msgpack at all"
        p.bad.append(junk)
        await p.send_frame(ENVELOPE, junk)

    run = await misbehave_at(tmp_path, "action", act)
    refused(run, "a message came that the peer did not sign", "msgpack", "not counted against the peer",
            exc=CorruptedMessage, records=seq_of(run))


async def test_unknown_frame_kind(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_frame(7, b"\x90")

    run = await misbehave_at(tmp_path, "ack", act)
    refused(run, "kind", records=seq_of(run))


async def test_malformed_control_message(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_frame(CONTROL, encode({"t": "launch-missiles"}))

    run = await misbehave_at(tmp_path, "ack", act)
    refused(run, "control", records=seq_of(run))


@pytest.mark.parametrize("t", [[1], {"a": 1}, 5, None])
async def test_a_control_message_whose_type_is_not_text_is_a_protocol_error(t: object) -> None:
    with pytest.raises(ProtocolError):
        Frame(CONTROL, encode({"t": t})).control()


async def test_frame_over_the_64k_cap(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        body = bytes(MAX_FRAME)  # one byte too many with the kind byte
        await p.send_bytes(frame_bytes(ENVELOPE, body))

    run = await misbehave_at(tmp_path, "action", act)
    message = refused(run, "cap", records=seq_of(run))
    assert str(MAX_FRAME + 1) in message


async def test_frame_over_the_cap_during_the_handshake(tmp_path: Path) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.send_bytes((MAX_FRAME + 1).to_bytes(4, "big") + b"\x01" + bytes(100))
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=1)
    refused(run, "cap")


async def test_stream_closed_mid_game(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_bytes(b"\x00\x00")  # half a frame header, then gone
        await p.framed.stream.aclose()

    run = await misbehave_at(tmp_path, "action", act)
    refused(run, "connection", exc=PeerGone, records=seq_of(run), notice=False)


# --- the envelope -------------------------------------------------------------------------


def _non_canonical_seq(p: ScriptedPeer, step: str) -> bytes:
    """The honest envelope for ``step``, with ``seq`` written as a uint16 (not a fixint)
    inside the payload, and a valid signature over those exact payload bytes."""
    env = p.forge(step, p.honest_body(step))
    seq = env.seq
    assert seq < 128
    needle = b"\xa3seq" + bytes([seq])
    assert env.payload.count(needle) == 1
    payload = env.payload.replace(needle, b"\xa3seq\xcd" + seq.to_bytes(2, "big"))
    return encode([payload, p.me.key.sign(payload)])


async def test_non_canonical_encoding(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_env(_non_canonical_seq(p, "action"), bad=True)

    run = await misbehave_at(tmp_path, "action", act)
    claimed(run, "canonical")


async def test_non_canonical_outer_array(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        env = p.forge("ack", p.honest_body("ack"))
        assert env.raw[0] == 0x92
        raw = b"\xdc\x00\x02" + env.raw[1:]  # array16 of 2 elements: valid msgpack, not minimal
        await p.send_env(raw, bad=True)

    run = await misbehave_at(tmp_path, "ack", act)
    claimed(run, "canonical")


async def test_bad_signature(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        env = p.forge("action", p.honest_body("action"))
        raw = bytearray(env.raw)
        raw[-1] ^= 0x01  # the last byte of the signature
        await p.send_env(bytes(raw), bad=True)

    run = await misbehave_at(tmp_path, "action", act)
    refused(run, "a message came that the peer did not sign (bad signature on seq", "not counted against the peer",
            exc=CorruptedMessage, records=seq_of(run))


async def test_signed_by_a_third_key(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_env(p.forge("action", p.honest_body("action"), key=MALLORY.key), bad=True)

    run = await misbehave_at(tmp_path, "action", act)
    refused(run, "not signed by the peer", records=seq_of(run))


async def test_our_own_message_reflected_back(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        ours = [r for r in p.records if open_envelope(r).sender == ALICE.public]
        await p.send_env(ours[-1])

    run = await misbehave_at(tmp_path, "ack", act)
    # A copy of a message we hold (ours, here) came back: harmless, and not the peer's signature.
    refused(run, "came again", exc=PeerGone, notice=False, records=seq_of(run))


async def test_wrong_game_id(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_env(p.forge("action", p.honest_body("action"), game=os.urandom(32)), bad=True)

    run = await misbehave_at(tmp_path, "action", act)
    claimed(run, "wrong game id")


@pytest.mark.parametrize("skip", [1, 1000])
async def test_wrong_sequence_number(tmp_path: Path, skip: int) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_env(p.forge("action", p.honest_body("action"), seq=p.ref.seq + skip), bad=True)  # type: ignore[union-attr]

    run = await misbehave_at(tmp_path, "action", act)
    claimed(run, "sequence number")


async def test_broken_hash_chain(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_env(p.forge("ack", p.honest_body("ack"), prev=bytes(32)), bad=True)

    run = await misbehave_at(tmp_path, "ack", act)
    claimed(run, "hash chain")


# --- the game ---------------------------------------------------------------------------------


async def test_action_out_of_turn(tmp_path: Path) -> None:
    """The honest side has just acted and must decide again; instead of acknowledging,
    the peer sends one of the honest side's legal actions: legal in the rules, but
    not the peer's to send."""

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        step = await p.play(stop=lambda q, s: s == "ack" and q.game is not None and q.game.to_move == 1 - q.seat)
        assert step == "ack"
        g = p.game
        assert g is not None
        text = p.choose(g)  # a legal action of the position (the honest side's decision)
        p.marks["seq"] = p.ref.seq  # type: ignore[union-attr]
        await p.send_env(p.forge("action", {"ply": len(g.history), "action": text}), bad=True)
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=0)
    faulted(run, "expected the acknowledgement")


async def test_action_instead_of_our_result(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_env(p.forge("result", {"scores": [0, 0], "state": bytes(32), "end": "stack"}), bad=True)

    run = await misbehave_at(tmp_path, "action", act)
    faulted(run, "got result")


async def test_illegal_action(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        g = p.game
        assert g is not None
        await p.send_env(p.forge("action", {"ply": len(g.history), "action": p.illegal_action()}), bad=True)

    run = await misbehave_at(tmp_path, "action", act)
    faulted(run, "not legal")


async def test_unparseable_action(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        g = p.game
        assert g is not None
        await p.send_env(p.forge("action", {"ply": len(g.history), "action": "castle kingside"}), bad=True)

    run = await misbehave_at(tmp_path, "action", act)
    faulted(run, "castle kingside")


async def test_action_for_the_wrong_ply(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        body = p.honest_body("action")
        body["ply"] += 1
        await p.send_env(p.forge("action", body), bad=True)

    run = await misbehave_at(tmp_path, "action", act)
    faulted(run, "ply")


async def test_ack_with_a_wrong_state_hash(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        body = p.honest_body("ack")
        body["state"] = bytes(32)
        await p.send_env(p.forge("ack", body), bad=True)

    run = await misbehave_at(tmp_path, "ack", act)
    faulted(run, "divergence")


async def test_wrong_signed_result(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        body = p.honest_body("result")
        body["scores"] = [body["scores"][0] + 5, body["scores"][1]]
        await p.send_env(p.forge("result", body), bad=True)

    # the peer is player 2 and signs the result second, after the honest side's
    run = await misbehave_at(tmp_path, "result", act, after=0)
    faulted(run, "signed result differs")


async def test_equivocation_writes_evidence(tmp_path: Path) -> None:
    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        assert await p.play(stop=at_step("action", after=MID)) == "action"
        g = p.game
        assert g is not None
        before = g.clone()
        seq, prev = p.ref.seq, p.ref.prev  # type: ignore[union-attr]
        sent = await p.send_honest("action")
        await p.receive()  # the honest side acknowledges it: it holds our first version now
        candidates = [p.choose(before) for _ in range(20)] + [p.illegal_action()]
        other = next(t for t in candidates if t != sent.body["action"])  # signed all the same
        second = p.forge("action", {"ply": sent.body["ply"], "action": other}, seq=seq, prev=prev)
        await p.send_env(second, bad=True)
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=0)
    reason = claimed(run, "two different messages")
    assert len(run.evidence) == 1, run.evidence
    assert run.evidence[0].name in reason
    verdict = check_evidence(run.evidence[0])
    assert verdict.ok, verdict.line()
    assert BOB.fingerprint in verdict.message
    result = CliRunner().invoke(app, ["verify", "--evidence", str(run.evidence[0])])
    assert result.exit_code == 0, result.output
    assert "confirmed" in result.output


async def test_a_resent_copy_of_an_old_message_is_not_evidence(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        mine = [r for r in p.records if open_envelope(r).sender == BOB.public]
        await p.send_env(mine[-1])

    run = await misbehave_at(tmp_path, "action", act)
    # An identical copy of a message we hold changes nothing and proves nothing: the way between
    # us duplicated it (a relay can), so it is the connection's fault, never the peer's.
    refused(run, "came again", exc=PeerGone, notice=False, records=seq_of(run))
    assert run.evidence == []


# --- commit-reveal ----------------------------------------------------------------------------------


async def test_copied_commitment(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        theirs = open_envelope(p.records[2]).body["commitment"]
        await p.send_env(p.forge("commit", {"commitment": theirs}), bad=True)

    run = await misbehave_at(tmp_path, "commit", act, honest_seat=0, after=0)
    faulted(run, "copied")


@pytest.mark.parametrize("honest_seat", [0, 1], ids=["peer-is-player-2", "peer-is-player-1"])
async def test_bad_reveal_is_recorded_as_the_peers_forfeit(tmp_path: Path, honest_seat: int) -> None:
    """PROTOCOL.md section 5: a reveal that does not match its commitment is recorded and
    the other side then records the bad revealer's forfeit: never a re-roll, never a crash."""

    async def act(p: ScriptedPeer) -> None:
        await p.send_env(p.forge("reveal", {"nonce": os.urandom(32)}))
        p.marks["after_bad_reveal"] = 1
        # an honest client would now read the forfeit the other side records
        await p.drain()

    run = await misbehave_at(tmp_path, "reveal", act, honest_seat=honest_seat, after=0)
    assert not isinstance(run.error, AssertionError), f"the honest side crashed: {run.error!r}"
    if run.error is not None:
        assert isinstance(run.error, PeerMisbehaved), repr(run.error)
        assert "reveal" in str(run.error)
    else:
        assert run.report is not None
        assert run.report.outcome.end == "forfeit"
        assert run.report.outcome.winner == honest_seat
    v = verify_file(run.replay)
    assert v.ok, v.line()
    assert v.outcome is not None and v.outcome.end == "forfeit"
    assert v.outcome.winner == honest_seat and v.outcome.claimed_by == honest_seat


# --- identity and game id ----------------------------------------------------------------------------


async def test_peer_reusing_a_game_id_is_refused_cleanly(tmp_path: Path) -> None:
    """Player 1 picks the game id; a peer that starts a second game with the id of one we
    already hold a replay of must be refused as a SessionError (the old replay untouched),
    not crash the client with FileExistsError."""
    game = os.urandom(32)

    async def first(p: ScriptedPeer) -> None:
        await p.hello(game=game)
        await p.play()
        await p.drain()

    run1 = await run_against(first, tmp_path, honest_seat=1)
    assert run1.error is None and run1.report is not None
    before = run1.replay.read_bytes()

    async def again(p: ScriptedPeer) -> None:
        await p.hello(game=game)
        await p.play()
        await p.drain()

    run2 = await run_against(again, tmp_path, honest_seat=1)
    assert isinstance(run2.error, SessionError), f"expected a SessionError, got {run2.error!r}"
    assert run1.replay.read_bytes() == before
    assert verify_file(run1.replay).ok


async def test_hello_with_a_wrong_sequence_number(tmp_path: Path) -> None:
    async def script(p: ScriptedPeer) -> None:
        from basilica_p2p.referee import GENESIS
        from basilica_p2p.wire import seal

        await p.send_env(seal(p.me.key, os.urandom(32), 1, GENESIS, "hello", p.hello_for()), bad=True)
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=1)
    refused(run, "hello")
    assert run.replays == []


@pytest.mark.parametrize("honest_seat", [0, 1])
@pytest.mark.parametrize("step", ["action", "ack"])
async def test_a_peer_cannot_win_by_claiming_our_forfeit(tmp_path: Path, honest_seat: int, step: str) -> None:
    """Issue 9 §1: mid-game, a peer signs a forfeit naming *us* as loser while we are still
    connected and answering.  It is refused as misbehaviour: we never record it (so we never
    countersign a win by claim), and we claim the game ourselves, saying why (issue 20: the
    honest side ends with a finished replay).  (Before issue 9's fix the honest side accepted
    it, exited 0 and printed "we forfeited".)"""

    async def act(p: ScriptedPeer) -> None:
        claim = p.forge("forfeit", {"loser": 1 + honest_seat, "reason": "host cheated"})
        p.bad.append(claim.raw)
        await p.send_env(claim)

    run = await misbehave_at(tmp_path, step, act, honest_seat=honest_seat)
    reason = claimed(run, "forfeit naming us as the loser", "host cheated")
    assert "only the other's own resignation" in reason
    assert any("only your own resignation" in e for e in run.peer.errors), run.peer.errors


async def test_the_peers_own_resignation_is_accepted(tmp_path: Path) -> None:
    """The other half of the rule: a forfeit signed by its loser is a resignation, recorded."""

    async def act(p: ScriptedPeer) -> None:
        await p.send_env(p.forge("forfeit", {"loser": 1 + p.seat, "reason": "quit at the prompt"}))
        await p.drain()

    run = await misbehave_at(tmp_path, "action", act, honest_seat=0)
    assert run.error is None, repr(run.error)
    assert run.report is not None
    o = run.report.outcome
    assert o.end == "forfeit" and o.winner == 0 and o.claimed_by == 1
    v = verify_file(run.replay)
    assert v.ok and "player 2 (" in v.line() and "resigned" in v.line(), v.line()


def _at_our_message(type_: str, body: Callable[[ScriptedPeer, dict], dict]):  # type: ignore[type-arg]
    """A script that plays until the honest side has sent its action (seq N) and waits for our
    ack, then sends a ``type_`` message of its own at seq N, chained where that action is."""

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        got = await p.play(stop=at_step("ack", after=MID))
        assert got == "ack"
        n = p.ref.seq - 1  # type: ignore[union-attr]
        theirs = open_envelope(p.records[n])
        assert theirs.type == "action" and theirs.sender != p.me.public
        env = p.forge(type_, body(p, dict(theirs.body)), seq=n, prev=theirs.prev)
        p.bad.append(env.raw)
        await p.send_env(env)
        await p.drain()

    return script


async def test_an_action_while_we_are_to_move_is_named_out_of_turn(tmp_path: Path) -> None:
    """Issue 9 §4: an action that arrives while the move is ours is reported as out of turn,
    not as a sequence-number error."""
    run = await run_against(_at_our_message("action", lambda p, b: b), tmp_path, honest_seat=0)
    reason = claimed(run, "out of turn")
    assert "sequence number" not in reason


async def test_a_resignation_that_crosses_our_action_is_a_parting_not_misbehaviour(tmp_path: Path) -> None:
    """The peer resigned while our action was in flight: nobody cheated, but the two records part
    at that message and cannot be joined; we say so, keep a valid prefix, and accuse no one."""
    from basilica_p2p.net.session import Refused

    script = _at_our_message("forfeit", lambda p, b: {"loser": p.seat + 1, "reason": "quit at the prompt"})
    run = await run_against(script, tmp_path, honest_seat=0)
    message = refused(run, "crossed our action", "quit at the prompt", exc=Refused)
    assert "out of turn" not in message and "cannot be joined" in message


async def test_no_hang_when_the_peer_floods_pings(tmp_path: Path) -> None:
    """Pings between frames are answered and never confused with envelopes."""

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        while True:
            step = await p.play(stop=lambda q, s: True)
            if step is None:
                break
            for _ in range(3):
                await p.ping()
            await p.send_honest(step)
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=1)
    assert run.error is None, repr(run.error)
    assert verify_file(run.replay).ok
    pongs = [c for c in run.peer.controls if c.get("t") == "pong"]
    assert len(pongs) == run.peer.pings


async def test_the_error_notice_is_the_last_thing_the_honest_side_sends(tmp_path: Path) -> None:
    """After refusing, the honest side hangs up: nothing comes after its error notice but the
    claim that ends the game (sent as its last message, best effort)."""

    async def act(p: ScriptedPeer) -> None:
        await p.send_env(p.forge("action", p.honest_body("action"), seq=p.ref.seq + 1), bad=True)  # type: ignore[union-attr]

    run = await misbehave_at(tmp_path, "action", act)
    claimed(run, "sequence number")
    last = run.peer.controls[-1] if run.peer.controls else {}
    assert last.get("t") == "error", run.peer.controls
    assert [open_envelope(raw).type for raw in run.peer.late] == ["forfeit"]



# --- control messages ------------------------------------------------------------------------------


async def test_bye_in_the_middle_of_a_game(tmp_path: Path) -> None:
    async def act(p: ScriptedPeer) -> None:
        await p.send_control("bye")
        await p.drain()

    run = await misbehave_at(tmp_path, "action", act)
    refused(run, exc=PeerGone, records=seq_of(run), notice=False)


async def test_an_error_notice_is_shown_without_terminal_control_characters(tmp_path: Path) -> None:
    """The peer's error reason is the one peer-chosen text not checked by a schema; it ends up
    in our one-line error message (and on the terminal): no escape sequences, no line breaks."""
    evil = "\x1b[2J\x1b[31mboom\x1b[0m\ngame 1: alice (player 1) vs bob: 99-0, we won\r"

    async def act(p: ScriptedPeer) -> None:
        await p.send_control("error", reason=evil)
        await p.drain()

    run = await misbehave_at(tmp_path, "action", act)
    message = refused(run, "boom", exc=PeerGone, records=seq_of(run), notice=False)
    assert message.isprintable(), f"control characters reach the user: {message!r}"


async def test_a_game_id_used_before_is_refused_whatever_the_replay_folder(tmp_path: Path) -> None:
    """Player 1 alone chooses the game id.  A host that starts a second game
    with the id of an earlier one must not get our key to sign a second hello (and commitment,
    and moves) for it: two histories of one game id signed by us would be a confirmed "proof"
    that *we* cheated.  Before the ledger, only a replay still in the same folder stopped it."""
    from basilica_p2p.net.ledger import GameLedger
    from basilica_p2p.net.session import Refused

    game = bytes([0x42]) * 32
    ledger = GameLedger(tmp_path / "home")

    async def honest_game(p: ScriptedPeer) -> None:
        await p.hello(game=game)
        await p.play()
        await p.drain()

    first = await run_against(honest_game, tmp_path / "one", honest_seat=1, ledger=ledger)
    assert first.error is None and first.report is not None, repr(first.error)
    again = await run_against(honest_game, tmp_path / "two", honest_seat=1, ledger=ledger)
    assert isinstance(again.error, Refused), repr(again.error)
    assert "id of one we already played" in str(again.error)
    assert any("game id was used before" in e for e in again.peer.errors), again.peer.errors
    # Nothing was signed for the second game: no hello of ours reached the peer, no replay.
    assert again.peer.records[1:] == [] and not list((tmp_path / "two").glob("*.replay"))
    assert ledger.signed(ALICE.public, game) and not ledger.signed(BOB.public, game)
