"""Malicious replays: every file here is well framed and (unless a test says
otherwise) every envelope carries a valid signature; the referee must still
refuse it at the right record.

Record numbers are those of ``verify``: the header is record 0, the envelope
with sequence number ``s`` is record ``s + 1``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support import replay_builders as rb
from basilica_p2p.replay.file import Header
from basilica_p2p.replay.verify import referee_for
from basilica_p2p.wire import Envelope, ProtocolError, encode, open_envelope, seal


class Game:
    def __init__(self, path: Path) -> None:
        self.replay, self.envs = rb.load(path)
        self.header_bytes = self.replay.header_bytes
        self.header = self.replay.header

    def index(self, type_: str, nth: int = 0) -> int:
        """The record number of the ``nth`` envelope of a type."""
        found = [k for k, e in enumerate(self.envs, start=1) if e.type == type_]
        return found[nth]

    def env(self, record: int) -> Envelope:
        return self.envs[record - 1]

    @property
    def last(self) -> int:
        return len(self.envs)


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Game:
    path = tmp_path_factory.mktemp("tamper") / "jester.replay"
    rb.record_game(path, rb.find_game(jester=True, max_plies=75))
    g = Game(path)
    v = rb.verify(path)
    assert v.ok, v.error
    assert {"jcommit", "jreveal"} <= {e.type for e in g.envs}
    return g


def check_fails_at(tmp: Path, header: bytes, raws: list[bytes], record: int, *words: str) -> str:
    v = rb.verify_records(tmp, header, raws)
    assert not v.ok, f"verified, expected a failure at record {record}"
    assert rb.first_record(v.error) == record, v.error
    for w in words:
        assert w in v.error, v.error
    assert "\n" not in v.error
    return v.error


def other(ident_key: bytes) -> rb.Identity:
    return rb.BOB if ident_key == rb.ALICE.public else rb.ALICE


# --- deleted, duplicated, reordered ------------------------------------------------


def _sample_records(g: Game) -> list[int]:
    return sorted({1, 2, 3, 4, 5, 6, 7, 8, 9, g.index("jcommit"), g.index("jcommit") + 1, g.index("jreveal"),
                   g.index("jreveal") + 1, g.index("result"), g.last - 3})


def test_a_deleted_record_fails_where_it_was(game: Game, tmp_path: Path) -> None:
    raws = rb.raws(game.envs)
    for k in _sample_records(game):
        check_fails_at(tmp_path, game.header_bytes, raws[: k - 1] + raws[k:], k, "sequence number")
    # The last record deleted: a valid but unfinished game.
    v = rb.verify_records(tmp_path, game.header_bytes, raws[:-1])
    assert not v.ok and f"valid through record {game.last - 1};" in v.error, v.error


def test_a_deleted_record_fails_even_when_the_chain_is_signed_again(game: Game, tmp_path: Path) -> None:
    items = rb.as_items(game.envs)
    for k in _sample_records(game):
        envs = rb.rechain(items[: k - 1] + items[k:])
        check_fails_at(tmp_path, game.header_bytes, rb.raws(envs), k)


def test_a_duplicated_record_fails_at_the_copy(game: Game, tmp_path: Path) -> None:
    raws = rb.raws(game.envs)
    items = rb.as_items(game.envs)
    for k in _sample_records(game):
        check_fails_at(tmp_path, game.header_bytes, raws[:k] + [raws[k - 1]] + raws[k:], k + 1)
        resigned = rb.rechain(items[:k] + [items[k - 1]] + items[k:])
        check_fails_at(tmp_path, game.header_bytes, rb.raws(resigned), k + 1)


def test_swapped_records_fail_at_the_first_of_them(game: Game, tmp_path: Path) -> None:
    raws = rb.raws(game.envs)
    items = rb.as_items(game.envs)
    for k in _sample_records(game):
        if k >= game.last:
            continue
        swapped = raws[: k - 1] + [raws[k], raws[k - 1]] + raws[k + 1 :]
        check_fails_at(tmp_path, game.header_bytes, swapped, k)
        resigned = rb.rechain(items[: k - 1] + [items[k], items[k - 1]] + items[k + 1 :])
        check_fails_at(tmp_path, game.header_bytes, rb.raws(resigned), k)


# --- who signed it -----------------------------------------------------------------


@pytest.mark.parametrize("kind", ["hello", "commit", "reveal", "action", "ack", "jcommit", "jreveal", "result"])
def test_a_record_signed_by_a_stranger_fails(game: Game, tmp_path: Path, kind: str) -> None:
    k = game.index(kind)
    raws = rb.raws(game.envs)
    raws[k - 1] = rb.reseal(game.env(k), rb.MALLORY).raw
    check_fails_at(tmp_path, game.header_bytes, raws, k, "not a player")


@pytest.mark.parametrize("kind", ["hello", "commit", "reveal", "action", "ack", "jcommit", "jreveal", "result"])
def test_a_record_signed_by_the_other_player_fails(game: Game, tmp_path: Path, kind: str) -> None:
    for nth in (0, 1):
        k = game.index(kind, nth)
        raws = rb.raws(game.envs)
        raws[k - 1] = rb.reseal(game.env(k), other(game.env(k).sender)).raw  # valid signature, right seq and prev
        check_fails_at(tmp_path, game.header_bytes, raws, k, "player")


def test_a_legal_action_by_the_player_not_on_turn_fails(game: Game, tmp_path: Path) -> None:
    """The action is legal in the rules (it is the one the game went on with), but the wrong side signed it."""
    items = rb.as_items(game.envs)
    for nth in (0, 1, 2, 5):
        k = game.index("action", nth)
        who, _, body = items[k - 1]
        changed = list(items)
        changed[k - 1] = (other(who.public), "action", body)
        changed[k] = (who, "ack", items[k][2])  # and the acknowledgement from the side that did act
        error = check_fails_at(tmp_path, game.header_bytes, rb.raws(rb.rechain(changed)), k)
        assert "out of turn" in error or "got action from player" in error, error


# --- acknowledgements, commit-reveal ---------------------------------------------


def test_a_wrong_acknowledged_state_hash_is_a_divergence(game: Game, tmp_path: Path) -> None:
    for k in (game.index("ack", 0), game.index("ack", 7), game.index("jreveal") + 1, game.index("result") - 1):
        env = game.env(k)
        assert env.type == "ack"
        raws = rb.raws(game.envs)
        state = bytes(b ^ 1 for b in env.body["state"])
        raws[k - 1] = rb.reseal(env, body={"ply": env.body["ply"], "state": state}).raw
        check_fails_at(tmp_path, game.header_bytes, raws, k, "divergence")
        raws[k - 1] = rb.reseal(env, body={"ply": env.body["ply"] + 1, "state": env.body["state"]}).raw
        check_fails_at(tmp_path, game.header_bytes, raws, k, "ply")


def _bad_reveal_items(g: Game, who: int) -> list[tuple[rb.Identity, str, dict[str, Any]]]:
    """The setup with player ``who`` (0 or 1) revealing a nonce that does not match its commitment."""
    items = rb.as_items(g.envs[:6])
    assert [t for _, t, _ in items] == ["hello", "hello", "commit", "commit", "reveal", "reveal"]
    ident, _, body = items[4 + who]
    items[4 + who] = (ident, "reveal", {"nonce": bytes(b ^ 0xFF for b in body["nonce"])})
    return items[: 5 + who]


def test_a_bad_reveal_without_a_forfeit_is_an_incomplete_game(game: Game, tmp_path: Path) -> None:
    for who in (0, 1):
        envs = rb.rechain(_bad_reveal_items(game, who))
        v = rb.verify_records(tmp_path, game.header_bytes, rb.raws(envs))
        assert not v.ok and v.outcome is None
        assert "incomplete" in v.error and f"forfeit of player {who + 1}" in v.error, v.error


def test_a_bad_reveal_then_the_forfeit_recorded_by_the_other_player_verifies(game: Game, tmp_path: Path) -> None:
    for who in (0, 1):
        items = _bad_reveal_items(game, who)
        items.append((rb.PLAYERS[1 - who], "forfeit", {"loser": who + 1, "reason": "the reveal did not match"}))
        v = rb.verify_records(tmp_path, game.header_bytes, rb.raws(rb.rechain(items)))
        assert v.ok, v.error
        assert v.outcome.end == "forfeit" and v.outcome.winner == 1 - who and v.outcome.moves == 0
        assert v.outcome.scores == (0, 0)
        assert f"player {who + 1} ({rb.PLAYERS[who].name}) forfeited" in v.line()


def test_after_a_bad_reveal_only_the_right_forfeit_is_accepted(game: Game, tmp_path: Path) -> None:
    for who in (0, 1):
        base = _bad_reveal_items(game, who)
        k = len(base) + 1
        wrong = [
            (rb.PLAYERS[1 - who], "forfeit", {"loser": 2 - who, "reason": "no"}),  # the other side resigns instead
            (rb.PLAYERS[who], "forfeit", {"loser": who + 1, "reason": "no"}),  # the cheater records its own
        ]
        if who == 0:
            wrong.append(game_item(game, 6))  # the game goes on with player 2's reveal
        for item in wrong:
            check_fails_at(tmp_path, game.header_bytes, rb.raws(rb.rechain([*base, item])), k)


def game_item(g: Game, record: int) -> tuple[rb.Identity, str, dict[str, Any]]:
    return rb.as_items([g.env(record)])[0]


def test_a_copied_commitment_is_refused(game: Game, tmp_path: Path) -> None:
    items = rb.as_items(game.envs)
    items[3] = (rb.BOB, "commit", dict(items[2][2]))
    check_fails_at(tmp_path, game.header_bytes, rb.raws(rb.rechain(items)), 4, "copied")


def test_revealing_the_other_players_nonce_is_a_bad_reveal(game: Game, tmp_path: Path) -> None:
    """Commitments bind the sender's key: bob cannot reveal alice's nonce as his own."""
    items = rb.as_items(game.envs[:6])
    items[5] = (rb.BOB, "reveal", {"nonce": items[4][2]["nonce"]})
    v = rb.verify_records(tmp_path, game.header_bytes, rb.raws(rb.rechain(items)))
    assert not v.ok and "forfeit of player 2" in v.error, v.error


# --- the handshake ---------------------------------------------------------------------


@pytest.mark.parametrize(("field", "value"), [
    ("ruleset", "classic"),
    ("manifest", bytes(32)),
    ("festum", True),
    ("removal", True),
    ("name", "eve"),
    ("shuffle", "mental-poker-v1"),
    ("protocol", 2),
])
@pytest.mark.parametrize("who", [0, 1])
def test_a_hello_that_disagrees_with_the_game_fails_naming_the_field(game: Game, tmp_path: Path, field: str,
                                                                     value: Any, who: int) -> None:
    k = who + 1
    env = game.env(k)
    body = dict(env.body)
    body[field] = value
    raws = rb.raws(game.envs)
    raws[k - 1] = rb.reseal(env, body=body).raw
    check_fails_at(tmp_path, game.header_bytes, raws, k, field)


def _with_header(g: Game, **changes: Any) -> bytes:
    h = g.header
    fields = dict(ruleset=h.ruleset, festum=h.festum, removal=h.removal, manifest=h.manifest, game=h.game,
                  players=h.players, protocol=h.protocol, shuffle=h.shuffle)
    fields.update(changes)
    return Header(**fields).encode()


def test_a_header_that_disagrees_with_the_signed_hellos_fails(game: Game, tmp_path: Path) -> None:
    raws = rb.raws(game.envs)
    (k1, n1), (k2, n2) = game.header.players
    check_fails_at(tmp_path, _with_header(game, ruleset="classic"), raws, 1, "ruleset")
    check_fails_at(tmp_path, _with_header(game, players=((k1, "carol"), (k2, n2))), raws, 1, "name")
    check_fails_at(tmp_path, _with_header(game, players=((k1, n1), (k2, "dave"))), raws, 2, "name")
    check_fails_at(tmp_path, _with_header(game, players=((k2, n2), (k1, n1))), raws, 1)
    check_fails_at(tmp_path, _with_header(game, players=((k1, n1), (rb.MALLORY.public, n2))), raws, 2, "not a player")
    check_fails_at(tmp_path, _with_header(game, game=bytes(32)), raws, 1, "game id")
    # An unknown scheme is refused from the header itself, before any hello is read.
    check_fails_at(tmp_path, _with_header(game, shuffle="mental-poker-v1"), raws, 0, "shuffle")
    v = rb.verify_records(tmp_path, _with_header(game, players=((k1, n1), (k1, n2))), raws)
    assert not v.ok and rb.first_record(v.error) == 0 and "same key" in v.error, v.error
    for bad in (dict(ruleset="classic", festum=True), dict(removal=True), dict(ruleset="chess")):
        v = rb.verify_records(tmp_path, _with_header(game, **bad), raws)
        assert not v.ok and rb.first_record(v.error) == 0, (bad, v.error)
    v = rb.verify_records(tmp_path, _with_header(game, manifest=bytes(range(32))), raws)
    assert not v.ok and rb.first_record(v.error) == 0 and "manifest" in v.error, v.error


@pytest.mark.parametrize("protocol", [0, 2, 99])
def test_a_header_naming_another_protocol_version_fails(game: Game, tmp_path: Path, protocol: int) -> None:
    """The header is not in the hash chain; the hellos (protocol 1) must agree with every field of it."""
    v = rb.verify_records(tmp_path, _with_header(game, protocol=protocol), rb.raws(game.envs))
    assert not v.ok, f"a header saying protocol {protocol} verified: {v.line()}"
    assert "protocol" in v.error


def test_a_header_with_format_true_instead_of_1_fails(game: Game, tmp_path: Path) -> None:
    """The header's format is the integer 1; msgpack true is another value (and another byte string)."""
    m = game.header.to_map()
    m["format"] = True
    v = rb.verify_records(tmp_path, encode(m), rb.raws(game.envs))
    assert not v.ok, f"a header with format=true verified: {v.line()}"
    assert rb.first_record(v.error) == 0


def test_a_game_under_a_shuffle_scheme_this_client_does_not_implement_fails(game: Game, tmp_path: Path) -> None:
    """Header and both hellos agree on a scheme the referee does not know: it cannot check that game."""
    header = _with_header(game, shuffle="mental-poker-v1")
    items = rb.as_items(game.envs)
    for i in (0, 1):
        who, t, body = items[i]
        items[i] = (who, t, {**body, "shuffle": "mental-poker-v1"})
    v = rb.verify_records(tmp_path, header, rb.raws(rb.rechain(items)))
    assert not v.ok, f"a game under an unknown shuffle scheme verified: {v.line()}"
    assert "shuffle" in v.error


def test_envelopes_of_another_game_fail(game: Game, tmp_path: Path) -> None:
    envs = rb.rechain(rb.as_items(game.envs), game=bytes(32))
    check_fails_at(tmp_path, game.header_bytes, rb.raws(envs), 1, "game id")
    # One envelope of another game in the middle, otherwise right.
    raws = rb.raws(game.envs)
    k = game.index("action", 3)
    raws[k - 1] = rb.reseal(game.env(k), game=bytes(32)).raw
    check_fails_at(tmp_path, game.header_bytes, raws, k, "game id")


# --- the Jester round --------------------------------------------------------------


def test_a_jester_reveal_that_does_not_match_its_commitment_fails(game: Game, tmp_path: Path) -> None:
    for nth in (0, 1):
        k = game.index("jreveal", nth)
        env = game.env(k)
        raws = rb.raws(game.envs)
        raws[k - 1] = rb.reseal(env, body={**env.body, "salt": bytes(32)}).raw
        check_fails_at(tmp_path, game.header_bytes, raws, k, "does not match")
        raws[k - 1] = rb.reseal(env, body={**env.body, "ply": env.body["ply"] + 1}).raw
        check_fails_at(tmp_path, game.header_bytes, raws, k, "ply")
    k = game.index("jcommit", 1)
    env = game.env(k)
    raws = rb.raws(game.envs)
    raws[k - 1] = rb.reseal(env, body={**env.body, "ply": env.body["ply"] - 1}).raw
    check_fails_at(tmp_path, game.header_bytes, raws, k, "ply")


# --- the end ------------------------------------------------------------------------


def test_a_result_with_wrong_scores_state_or_end_fails(game: Game, tmp_path: Path) -> None:
    for k in (game.last - 1, game.last):
        env = game.env(k)
        assert env.type == "result"
        s0, s1 = env.body["scores"]
        for body in ({**env.body, "scores": [s0 + 1, s1]}, {**env.body, "scores": [s1, s0] if s0 != s1 else [s0, s1 + 2]},
                     {**env.body, "state": bytes(32)},
                     {**env.body, "end": "stack" if env.body["end"] != "stack" else "last-scoring"}):
            raws = rb.raws(game.envs)
            raws[k - 1] = rb.reseal(env, body=body).raw
            check_fails_at(tmp_path, game.header_bytes, raws, k, "result")


def test_anything_after_the_end_fails(game: Game, tmp_path: Path) -> None:
    last = game.envs[-1]
    for who, type_, body in [(rb.ALICE, "result", dict(game.envs[-2].body)),
                             (rb.BOB, "forfeit", {"loser": 1, "reason": "late"}),
                             (rb.ALICE, "ack", {"ply": 0, "state": bytes(32)})]:
        extra = seal(who.key, rb.GAME_ID, last.seq + 1, last.hash, type_, body)
        check_fails_at(tmp_path, game.header_bytes, rb.raws(game.envs) + [extra.raw], game.last + 1, "after the end")


def test_anything_after_a_forfeit_fails(game: Game, tmp_path: Path) -> None:
    items = rb.as_items(game.envs[:8]) + [(rb.ALICE, "forfeit", {"loser": 1, "reason": "resigned"})]
    v = rb.verify_records(tmp_path, game.header_bytes, rb.raws(rb.rechain(items)))
    assert v.ok and v.outcome.end == "forfeit" and v.outcome.winner == 1, v.error
    for extra in (game_item(game, 9), (rb.BOB, "forfeit", {"loser": 2, "reason": "me too"})):
        check_fails_at(tmp_path, game.header_bytes, rb.raws(rb.rechain([*items, extra])), 10, "after the end")


# --- the live referee: refused envelopes leave it unchanged ----------------------------


def _bad_bodies(env: Envelope, prev_commit: bytes | None) -> list[dict[str, Any]]:
    b = env.body
    t = env.type
    if t == "hello":
        return [{**b, "name": "eve"}, {**b, "festum": not b["festum"]}]
    if t == "commit":
        return [{"commitment": prev_commit}] if prev_commit is not None else []
    if t in ("action", "ack", "jcommit", "jreveal"):
        out = [{**b, "ply": b["ply"] + 1}]
        if t == "ack":
            out.append({**b, "state": bytes(32)})
        if t == "jreveal":
            out.append({**b, "salt": bytes(32)})
        if t == "action":
            out.append({**b, "action": "none"})
        return out
    if t == "result":
        return [{**b, "scores": [b["scores"][0] + 1, b["scores"][1]]}, {**b, "end": "forfeit"}]
    return []


def test_the_referee_refuses_bad_envelopes_at_every_step_and_stays_unchanged(game: Game) -> None:
    ref = referee_for(game.replay, rb.manifests())
    first_commit = None
    for k, env in enumerate(game.envs, start=1):
        bad = [rb.reseal(env, rb.MALLORY), rb.reseal(env, other(env.sender)), rb.reseal(env, seq=env.seq + 1),
               rb.reseal(env, prev=bytes(32) if env.prev != bytes(32) else b"\x01" * 32)]
        bad += [rb.reseal(env, body=body) for body in _bad_bodies(env, first_commit)]
        if env.type != "forfeit":
            bad.append(rb.reseal(env, type_="forfeit", body={"loser": 1, "reason": "x"}, signer=rb.MALLORY))
        for b in bad:
            expected_before = ref.expected()
            with pytest.raises(ProtocolError) as e:
                ref.feed(open_envelope(b.raw))
            assert "\n" not in str(e.value)
            assert ref.expected() == expected_before and ref.seq == k - 1, f"record {k}: state changed"
        ref.feed(env)
        if env.type == "commit" and first_commit is None:
            first_commit = env.body["commitment"]
    assert ref.finished
    assert ref.game is not None and game.envs[-1].body["state"].hex() == ref.game.state_hash()


# --- one decision, one spelling (PROTOCOL.md section 10) ----------------------------------


def test_an_action_not_in_canonical_notation_is_refused(game: Game, tmp_path: Path) -> None:
    k = game.index("action", 4)
    env = game.env(k)
    text = env.body["action"]
    variants = [" " + text, text + " ", text.replace(":", ": ", 1) if ":" in text else text + "  "]
    if any(c.isdigit() for c in text):  # a row with a leading zero: b3 -> b03
        i = next(i for i, c in enumerate(text) if c.isdigit())
        variants.append(text[:i] + "0" + text[i:])
    for variant in variants:
        raws = rb.raws(game.envs)
        raws[k - 1] = rb.reseal(env, body={**env.body, "action": variant}).raw
        check_fails_at(tmp_path, game.header_bytes, raws, k)


def test_a_jester_reveal_not_in_canonical_form_is_refused_even_if_committed(game: Game, tmp_path: Path) -> None:
    from basilica_p2p.wire import jester_commitment

    items = rb.as_items(game.envs)
    for nth in (0, 1):
        k = game.index("jreveal", nth)
        who, _, body = items[k - 1]
        text = body["action"]
        pairs = text[2:].split(",")
        # Pairs out of order if there are several, else a leading space: committed to, but not canonical.
        variant = "J:" + ",".join(reversed(pairs)) if len(pairs) > 1 else " " + text
        # The jcommit of the same player for the same ply, recomputed over the exact variant text.
        kc = next(j for j in range(1, k) if items[j - 1][1] == "jcommit" and items[j - 1][0] is who
                  and items[j - 1][2]["ply"] == body["ply"])
        changed = list(items)
        changed[kc - 1] = (who, "jcommit", {"ply": body["ply"], "commitment": jester_commitment(
            rb.GAME_ID, who.public, body["ply"], variant, body["salt"])})
        changed[k - 1] = (who, "jreveal", {**body, "action": variant})
        error = check_fails_at(tmp_path, game.header_bytes, rb.raws(rb.rechain(changed)), k)
        assert "canonical" in error, error


def test_uint_fields_run_up_to_2_pow_32_exclusive(game: Game) -> None:
    env = game.env(game.index("ack"))
    for ply, ok in ((2**32 - 1, True), (2**32, False)):
        if ok:
            rb.reseal(env, body={**env.body, "ply": ply})
        else:
            with pytest.raises(ProtocolError):
                rb.reseal(env, body={**env.body, "ply": ply})


# --- forfeits: who signed them, and not after the board has decided ------------------------


def test_a_forfeit_after_the_game_ended_on_the_board_is_refused(game: Game, tmp_path: Path) -> None:
    first_result = game.index("result")
    items = rb.as_items(game.envs[: first_result - 1])
    for who, loser in ((rb.ALICE, 2), (rb.BOB, 1), (rb.ALICE, 1)):
        forfeit = (who, "forfeit", {"loser": loser, "reason": "too late"})
        check_fails_at(tmp_path, game.header_bytes, rb.raws(rb.rechain([*items, forfeit])), first_result)
    # Between the two results too.
    items = rb.as_items(game.envs[:first_result])
    check_fails_at(tmp_path, game.header_bytes,
                   rb.raws(rb.rechain([*items, (rb.BOB, "forfeit", {"loser": 1, "reason": "x"})])), first_result + 1)


def test_a_verdict_says_whether_a_forfeit_was_resigned_or_claimed(game: Game, tmp_path: Path) -> None:
    items = rb.as_items(game.envs[:10])
    resigned = rb.verify_records(tmp_path, game.header_bytes,
                                 rb.raws(rb.rechain([*items, (rb.BOB, "forfeit", {"loser": 2, "reason": "gg"})])))
    assert resigned.ok, resigned.error
    assert resigned.outcome.winner == 0 and resigned.outcome.claimed_by == 1
    assert "player 2 (bob) resigned" in resigned.line()
    assert resigned.to_json()["forfeit_claimed_by"] == 2
    claimed = rb.verify_records(tmp_path, game.header_bytes,
                                rb.raws(rb.rechain([*items, (rb.ALICE, "forfeit", {"loser": 2, "reason": "timeout"})])))
    assert claimed.ok and claimed.outcome.winner == 0 and claimed.outcome.claimed_by == 0
    assert "player 2 (bob)" in claimed.line() and "claimed by player 1" in claimed.line()
    assert claimed.to_json()["forfeit_claimed_by"] == 1
