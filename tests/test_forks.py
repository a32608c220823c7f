"""Issue 9 §1: nobody wins by a claim.  Files of one game are checked against each other;
a key that signed two histories is named, and the proof is checkable offline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from support import replay_builders as rb
from basilica_p2p.bots import RandomBot
from basilica_p2p.cli import app
from basilica_p2p.engine import Options
from basilica_p2p.identity import fingerprint
from basilica_p2p.replay.evidence import FORMAT_V1, check_evidence, encode_evidence, prove
from basilica_p2p.replay.forks import find_forks
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire import decode, encode, open_envelope

runner = CliRunner()


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("honest") / "game-p1.replay"
    play_recorded(path, rb.manifest(), Options(), rb.PLAYERS, (RandomBot(1), RandomBot(2)),
                  nonces=(bytes([1]) * 32, bytes([2]) * 32), game_id=rb.GAME_ID, salts=rb.salts())
    return path


def _forge(honest: Path, out: Path, forger: int, cut_at_type: str = "action") -> tuple[Path, int]:
    """The losing player's trick: cut its copy of the finished game mid-play and append a
    forfeit claim, signed by itself, naming the other player as loser."""
    replay, envs = rb.load(honest)
    me = rb.PLAYERS[forger]
    # Cut where the other player was to act, halfway through the game.
    candidates = [i for i, e in enumerate(envs) if e.type == cut_at_type and e.sender != me.public]
    cut = candidates[len(candidates) // 2]
    claim = rb.rechain(rb.as_items(envs[:cut]) + [(me, "forfeit", {"loser": 2 - forger, "reason": "no decision within 30 s"})])
    return rb.write(out, replay.header_bytes, [e.raw for e in envs[:cut]] + [claim[-1].raw]), cut


def test_each_file_alone_passes_as_a_claim(honest: Path, tmp_path: Path) -> None:
    # The reason the cross-check exists: a single forged file is a well-formed claim.
    forged, _ = _forge(honest, tmp_path / "forged.replay", forger=1)
    v = verify_file(forged, rb.manifests())
    assert v.ok and v.outcome is not None and v.outcome.winner == 1 and v.outcome.claimed_by == 1
    assert verify_file(honest, rb.manifests()).ok


def test_the_offline_forge_is_found_the_forger_named_and_the_proof_confirmed(honest: Path, tmp_path: Path) -> None:
    forged, cut = _forge(honest, tmp_path / "forged.replay", forger=1)
    proof = tmp_path / "proof.evidence"
    result = runner.invoke(app, ["verify", str(honest), str(forged), "--evidence", str(proof)])
    assert result.exit_code == 1, result.output
    [out] = [line for line in result.output.splitlines() if line.startswith("conflict: ")]
    assert f"part at record {cut + 1} (seq {cut})" in out
    assert "player 2 (bob)" in out and fingerprint(rb.BOB.public) in out and "proof of cheating" in out
    assert "player 1 (alice)" not in out  # the honest player signed nothing on the forged branch
    assert proof.exists()
    # The proof stands alone: another machine, no replays, no manifest.
    confirmed = runner.invoke(app, ["verify", "--evidence", str(proof)])
    assert confirmed.exit_code == 0, confirmed.output
    assert "confirmed" in confirmed.output and "player 2 (bob)" in confirmed.output
    assert fingerprint(rb.BOB.public) in confirmed.output
    # ... and it is recognised as evidence among positional files too.
    assert runner.invoke(app, ["verify", str(proof)]).exit_code == 0


def test_the_json_verdict_names_the_conflict(honest: Path, tmp_path: Path) -> None:
    forged, cut = _forge(honest, tmp_path / "forged.replay", forger=0)
    result = runner.invoke(app, ["verify", "--json", str(honest), str(forged)])
    assert result.exit_code == 1
    import json

    data = json.loads(result.stdout)
    conflicts = data[0]["conflicts"]
    assert len(conflicts) == 1 and conflicts[0]["seq"] == cut
    assert [s["player"] for s in conflicts[0]["signed_both"]] == [1]
    assert conflicts[0]["signed_both"][0]["key"] == rb.ALICE.public.hex()


def test_two_honest_replays_of_one_game_agree(honest: Path, tmp_path: Path) -> None:
    copy = tmp_path / "game-p2.replay"
    copy.write_bytes(honest.read_bytes())
    result = runner.invoke(app, ["verify", str(honest), str(copy)])
    assert result.exit_code == 0, result.output
    assert "conflict" not in result.output


def test_a_prefix_is_not_a_conflict(honest: Path, tmp_path: Path) -> None:
    replay, envs = rb.load(honest)
    short = rb.write(tmp_path / "short.replay", replay.header_bytes, [e.raw for e in envs[: len(envs) // 2]])
    verdicts = [verify_file(p, rb.manifests()) for p in (honest, short)]
    assert find_forks(verdicts) == []
    result = runner.invoke(app, ["verify", str(honest), str(short)])
    assert "conflict" not in result.output
    assert "incomplete game" in result.output  # the short file is still reported as what it is


def test_two_claims_made_apart_disagree_but_prove_nothing(honest: Path, tmp_path: Path) -> None:
    # Both sides gave up waiting at the same point and each claimed the win: the files part,
    # but no key signed both histories, so nobody is accused and no evidence is written.
    replay, envs = rb.load(honest)
    cut = next(i for i, e in enumerate(envs) if e.type == "action") + 4
    items = rb.as_items(envs[:cut])
    a = rb.rechain(items + [(rb.ALICE, "forfeit", {"loser": 2, "reason": "did not come back within 120 s"})])
    b = rb.rechain(items + [(rb.BOB, "forfeit", {"loser": 1, "reason": "did not come back within 120 s"})])
    fa = rb.write(tmp_path / "a.replay", replay.header_bytes, rb.raws(a))
    fb = rb.write(tmp_path / "b.replay", replay.header_bytes, rb.raws(b))
    proof = tmp_path / "proof.evidence"
    result = runner.invoke(app, ["verify", str(fa), str(fb), "--evidence", str(proof)])
    assert result.exit_code == 1
    assert "no key signed both" in result.output and "proof of cheating" not in result.output
    assert not proof.exists()


def test_files_of_different_games_are_not_compared(honest: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.replay"
    play_recorded(other, rb.manifest(), Options(), rb.PLAYERS, (RandomBot(3), RandomBot(4)),
                  nonces=(bytes([3]) * 32, bytes([4]) * 32), game_id=bytes([6]) * 32, salts=rb.salts())
    assert runner.invoke(app, ["verify", str(honest), str(other)]).exit_code == 0


def test_the_evidence_file_is_never_written_through_a_planted_link(honest: Path, tmp_path: Path) -> None:
    forged, _ = _forge(honest, tmp_path / "forged.replay", forger=1)
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    link = tmp_path / "proof.evidence"
    os.symlink(target, link)
    result = runner.invoke(app, ["verify", str(honest), str(forged), "--evidence", str(link)])
    assert result.exit_code == 2
    assert "already exists" in result.output
    assert target.read_text() == "precious\n"


# --- the proof itself ------------------------------------------------------------


def _proof_parts(honest: Path, tmp_path: Path) -> dict[str, object]:
    forged, _ = _forge(honest, tmp_path / "forged.replay", forger=1)
    forks = find_forks([verify_file(p, rb.manifests()) for p in (honest, forged)])
    assert len(forks) == 1
    data = decode(forks[0].evidence(), max_size=1 << 26)
    assert isinstance(data, dict)
    return data


def _check(tmp_path: Path, data: object, name: str = "p.evidence") -> tuple[bool, str]:
    path = tmp_path / name
    path.write_bytes(encode(data))
    v = check_evidence(path)
    return v.ok, v.message


def test_a_proof_with_a_broken_chain_is_not_confirmed(honest: Path, tmp_path: Path) -> None:
    data = _proof_parts(honest, tmp_path)
    a = list(data["a"])  # type: ignore[call-overload]
    _, envs = rb.load(honest)
    later = [e.raw for e in envs if e.sender == rb.BOB.public and e.seq > open_envelope(a[-1]).seq + 2]
    a[-1] = later[0]  # bob's record, but one that does not descend from where the histories part
    ok, message = _check(tmp_path, dict(data, a=a))
    assert not ok and "chain is broken" in message


def test_a_proof_whose_runs_end_with_two_different_keys_is_not_confirmed(honest: Path, tmp_path: Path) -> None:
    data = _proof_parts(honest, tmp_path)
    a = list(data["a"])  # type: ignore[call-overload]
    a.pop()  # now ends with a record of the honest player
    while open_envelope(a[-1]).sender == rb.BOB.public:
        a.pop()
    ok, message = _check(tmp_path, dict(data, a=a))
    assert not ok and "different keys" in message


def test_a_proof_of_one_history_is_not_confirmed(honest: Path, tmp_path: Path) -> None:
    data = _proof_parts(honest, tmp_path)
    ok, message = _check(tmp_path, dict(data, b=data["a"]))
    assert not ok and "do not part" in message


def test_a_proof_with_a_bad_signature_is_not_confirmed(honest: Path, tmp_path: Path) -> None:
    data = _proof_parts(honest, tmp_path)
    b = list(data["b"])  # type: ignore[call-overload]
    raw = bytearray(b[-1])
    raw[-1] ^= 1
    b[-1] = bytes(raw)
    ok, message = _check(tmp_path, dict(data, b=b))
    assert not ok and "bad signature" in message


def test_a_proof_with_someone_elses_hello_is_not_confirmed(honest: Path, tmp_path: Path) -> None:
    data = _proof_parts(honest, tmp_path)
    _, envs = rb.load(honest)
    ok, message = _check(tmp_path, dict(data, hello=envs[0].raw))  # alice's hello, bob accused
    assert not ok and "hello" in message


def test_evidence_of_the_first_format_is_still_confirmed(honest: Path, tmp_path: Path) -> None:
    # Files written by earlier clients (one key, one seq, two messages) keep their meaning.
    _, envs = rb.load(honest)
    i = next(i for i, e in enumerate(envs) if e.type == "action" and e.sender == rb.BOB.public)
    other = rb.reseal(envs[i], body=dict(envs[i].body, action="X"))  # any different body, signed by bob
    ok, message = _check(tmp_path, {"format": FORMAT_V1, "a": envs[i].raw, "b": other.raw})
    assert ok and f"for seq {i}" in message and fingerprint(rb.BOB.public) in message
    same = {"format": FORMAT_V1, "a": envs[i].raw, "b": envs[i].raw}
    assert not _check(tmp_path, same, "same.evidence")[0]


def test_prove_reads_the_accused_seat_and_name_from_its_hello(honest: Path, tmp_path: Path) -> None:
    data = _proof_parts(honest, tmp_path)
    proof = prove(data)
    assert (proof.seat, proof.name, proof.key) == (1, "bob", rb.BOB.public)
    assert proof.a.sender == proof.b.sender == rb.BOB.public
    # Without the hello the key alone is named.
    assert prove(dict(data, hello=None)).seat is None
    assert encode_evidence(list(data["a"]), list(data["b"]), None)  # type: ignore[call-overload]


@pytest.mark.trio
async def test_the_two_files_both_sides_write_in_a_network_game_agree(tmp_path: Path) -> None:
    # Not a byte copy: each side writes its own replay over a real connection.
    from support.net_harness import ALICE, BOB, config, host_and_join, reports, settings

    s = settings()
    pair = await host_and_join(config(ALICE, s, tmp_path / "h", games=2), config(BOB, s, tmp_path / "j", games=2))
    files = [str(r.replay) for r in reports(pair.host) + reports(pair.join)]
    assert len(files) == 4
    result = runner.invoke(app, ["verify", *files, "--evidence", str(tmp_path / "proof")])
    assert result.exit_code == 0, result.output
    assert "conflict" not in result.output and "no evidence written: the files of each game agree" in result.output
    assert not (tmp_path / "proof").exists()
    verdicts = [verify_file(Path(f), rb.manifests()) for f in files]
    assert len({v.game for v in verdicts}) == 2 and find_forks(verdicts) == []


def test_an_existing_proof_given_to_evidence_is_confirmed_not_refused(honest: Path, tmp_path: Path) -> None:
    # 'verify --evidence PROOF R.replay' (the reading the user meant) confirms PROOF and checks R.
    forged, _ = _forge(honest, tmp_path / "forged.replay", forger=1)
    proof = tmp_path / "proof.evidence"
    assert runner.invoke(app, ["verify", str(honest), str(forged), "--evidence", str(proof)]).exit_code == 1
    before = proof.read_bytes()
    result = runner.invoke(app, ["verify", "--evidence", str(proof), str(honest)])
    assert result.exit_code == 0, result.output
    assert "confirmed" in result.output and proof.read_bytes() == before


def test_files_of_one_game_that_agree_are_said_to_agree(honest: Path, tmp_path: Path) -> None:
    """verify a/* b/* says what the demo says when both sides' files hold the same records."""
    import shutil

    a, b = tmp_path / "a" / "game-p1.replay", tmp_path / "b" / "game-p2.replay"
    for copy in (a, b):
        copy.parent.mkdir()
        shutil.copy(honest, copy)
    result = runner.invoke(app, ["verify", str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert f"{a} and {b}: both sides hold the same records: yes" in result.stdout.splitlines(), result.stdout


def test_a_side_that_holds_fewer_records_is_named(honest: Path, tmp_path: Path) -> None:
    replay, envs = rb.load(honest)
    short = rb.write(tmp_path / "short.replay", replay.header_bytes, [e.raw for e in envs[:-1]])
    result = runner.invoke(app, ["verify", str(honest), str(short)])
    assert result.exit_code == 1, result.output
    assert (f"{honest} and {short}: both sides hold the same records: NO ({short} holds the first "
            f"{len(envs) - 1} of {len(envs)})") in result.stderr.splitlines(), result.stderr
