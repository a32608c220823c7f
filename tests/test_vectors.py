"""protocol/vectors: the committed files are what the generator builds, and they
agree with protocol/PROTOCOL.md when checked from scratch (hashlib, msgpack,
zlib and cryptography directly, not the wire layer)."""

from __future__ import annotations

import hashlib
import json
import struct
import unicodedata
import zlib
from pathlib import Path
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from basilica_p2p.engine import Game, Options, default_manifest
from basilica_p2p.engine.manifest import parse_manifest
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.wire.text import is_text
from basilica_p2p.vectors.deal import FILE as DEAL_FILE
from basilica_p2p.vectors.invite import FILE as INVITE_FILE
from basilica_p2p.vectors.playthroughs import FILES as PLAYTHROUGH_FILES
from basilica_p2p.vectors.protocol import FILES, build_vectors, main

from support.helpers import ref_below, ref_shuffle, ref_u64

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
REGENERATE = "regenerate with: python -m basilica_p2p.vectors.protocol --write protocol/vectors"


@pytest.fixture(scope="module")
def built() -> dict[str, bytes]:
    return build_vectors()


def load(name: str) -> dict[str, Any]:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def h(text: str) -> bytes:
    return bytes.fromhex(text)


def sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


# --- the committed files are the generator's output -----------------------


def test_committed_files_match_a_fresh_build_byte_for_byte(built: dict[str, bytes]) -> None:
    assert sorted(built) == sorted(FILES)
    for name, data in built.items():
        assert (VECTORS / name).read_bytes() == data, f"{name} differs from a fresh build; {REGENERATE}"


def test_the_build_is_reproducible_and_main_writes_it(built: dict[str, bytes], tmp_path: Path) -> None:
    assert main(["--write", str(tmp_path)]) == 0
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == built


def test_the_folder_holds_the_vectors_and_a_readme() -> None:
    # Three generators write here; tests/test_playthroughs.py checks the golden playthroughs' files,
    # tests/test_deal.py the hidden deal's.
    assert sorted(p.name for p in VECTORS.iterdir()) == sorted([*FILES, *PLAYTHROUGH_FILES, DEAL_FILE, INVITE_FILE,
                                                                  "README.md"])


# --- commit-reveal.json -------------------------------------------------------


def test_commit_reveal_from_the_documented_formulas() -> None:
    v = load("commit-reveal.json")
    inp = v["inputs"]
    game, nonces = h(inp["game"]), [h(n) for n in inp["nonces"]]
    keys = [
        Ed25519PrivateKey.from_private_bytes(h(s)).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        for s in inp["private_key_seeds"]
    ]
    assert [k.hex() for k in keys] == v["public_keys"]
    for key, nonce, c in zip(keys, nonces, v["commitments"]):
        assert sha(b"basilica-p2p/commit/v1\x00" + game + key + nonce).hex() == c
    seed = sha(b"basilica-p2p/seed/v1\x00" + game + nonces[0] + nonces[1])
    assert seed.hex() == v["seed"]
    assert inp["manifest"] == default_manifest().hash

    # The seed stream and the shuffle, from the independent reference in helpers.py.
    assert v["first_player"] == ref_below(ref_u64(seed, b"first-player"), 2)
    for label, values in v["below_1000_by_label"].items():
        stream = ref_u64(seed, label.encode())
        assert [ref_below(stream, 1000) for _ in range(8)] == values
    assert v["below_1000"] == v["below_1000_by_label"]["shuffle"]
    ids = sorted(t.id for t in default_manifest().tiles)
    assert v["shuffle"] == ref_shuffle(ids, seed, b"shuffle")
    deal = v["deal"]
    assert deal["orders"] + deal["market"] + deal["stack"] == v["shuffle"]

    # The jester commitment example.
    j = v["jester_commitment"]
    assert sha(b"basilica-p2p/jester/v1\x00" + game + keys[0] + j["ply"].to_bytes(4, "big") + h(j["salt"])
               + j["action"].encode()).hex() == j["commitment"]


def test_commit_reveal_matches_the_engine_setup() -> None:
    v = load("commit-reveal.json")
    seed = h(v["seed"])
    g = Game.new(default_manifest(), Options(), seed)
    assert g.active == v["first_player"]
    assert g.orders == v["deal"]["orders"] and g.market == v["deal"]["market"]
    assert g.stack[::-1] == v["deal"]["stack"]


def test_festum_removal_vector() -> None:
    v = load("commit-reveal.json")
    seed = h(v["seed"])
    f = v["festum_removal"]
    m = default_manifest()
    assert f["shuffle"] == ref_shuffle(sorted(t.id for t in m.tiles + m.festum_tiles), seed, b"shuffle")
    rest, stream = list(f["shuffle"]), ref_u64(seed, b"festum-removal")
    assert [rest.pop(ref_below(stream, len(rest))) for _ in range(6)] == f["removed"]
    assert rest == f["after_removal"] and sorted(f["removed"]) == f["out"]
    g = Game.new(m, Options(festum=True, festum_removal=True), seed)
    assert g.out == f["out"]
    assert g.orders + g.market + g.stack[::-1] == f["after_removal"]


# --- envelope.json ------------------------------------------------------------


def test_envelope_decodes_and_verifies_independently() -> None:
    v = load("envelope.json")
    raw = h(v["envelope"])
    payload, signature = msgpack.unpackb(raw, raw=False)
    assert payload == h(v["payload"]) and signature == h(v["signature"]) and len(signature) == 64
    fields = msgpack.unpackb(payload, raw=False)
    assert list(fields) == ["tag", "v", "game", "seq", "prev", "from", "type", "body"]
    assert list(fields["body"]) == ["protocol", "software", "ruleset", "festum", "removal", "manifest", "name",
                                    "shuffle"]
    as_hex = {k: (x.hex() if isinstance(x, bytes) else x) for k, x in fields.items()}
    as_hex["body"] = {k: (x.hex() if isinstance(x, bytes) else x) for k, x in fields["body"].items()}
    assert as_hex == v["payload_fields"]
    assert fields["seq"] == 0 and fields["prev"] == bytes(32)  # the first prev (PROTOCOL.md section 3)
    Ed25519PublicKey.from_public_bytes(fields["from"]).verify(signature, payload)  # raises if bad
    assert sha(raw).hex() == v["hash"]
    # Canonical: re-encoding what was decoded gives the same bytes.
    assert msgpack.packb([payload, signature], use_bin_type=True) == raw
    assert msgpack.packb(fields, use_bin_type=True) == payload


def test_envelope_is_record_one_of_the_replay() -> None:
    records = split_replay((VECTORS / "small.replay").read_bytes())
    assert records[1] == h(load("envelope.json")["envelope"])


# --- state-hash.json ----------------------------------------------------------


def test_state_hashes() -> None:
    v = load("state-hash.json")
    seed = h(load("commit-reveal.json")["seed"])
    setup = h(v["setup_canonical"])
    assert sha(setup).hex() == v["setup"]
    g = Game.new(default_manifest(), Options(), seed)
    assert msgpack.packb(g.canonical(), use_bin_type=True) == setup
    decoded = msgpack.unpackb(setup, raw=False)
    assert decoded[0] == "basilica-state/1" and decoded[5] == seed and len(decoded) == 35
    # The plies are the first moves of small.replay, each acknowledged with its state hash.
    payloads = [msgpack.unpackb(payload_of(r), raw=False) for r in split_replay((VECTORS / "small.replay").read_bytes())[1:]]
    moves = [(p["type"], p["body"]) for p in payloads if p["type"] in ("action", "ack")]
    for i, ply in enumerate(v["plies"]):
        (t1, action), (t2, ack) = moves[2 * i], moves[2 * i + 1]
        assert (t1, t2) == ("action", "ack")
        assert action == {"ply": ply["ply"], "action": ply["action"]}
        assert ack == {"ply": ply["ply"], "state": h(ply["state"])}


# --- small.replay -------------------------------------------------------------


def split_replay(data: bytes) -> list[bytes]:
    """Framing by hand: magic, then u32 length | data | u32 CRC-32 of data."""
    assert data[:8] == b"BASILREP"
    pos, out = 8, []
    while pos < len(data):
        (n,) = struct.unpack_from(">I", data, pos)
        blob = data[pos + 4 : pos + 4 + n]
        (crc,) = struct.unpack_from(">I", data, pos + 4 + n)
        assert len(blob) == n and crc == zlib.crc32(blob)
        out.append(blob)
        pos += 8 + n
    assert pos == len(data)  # no torn tail
    return out


def payload_of(record: bytes) -> bytes:
    payload, _ = msgpack.unpackb(record, raw=False)
    return payload  # type: ignore[no-any-return]


def test_replay_framing_chain_and_signatures_by_hand() -> None:
    records = split_replay((VECTORS / "small.replay").read_bytes())
    header = msgpack.unpackb(records[0], raw=False)
    assert list(header) == ["format", "protocol", "ruleset", "festum", "removal", "manifest", "shuffle", "game",
                            "players"]
    assert header["format"] == 1 and header["shuffle"] == "commit-reveal-v1"
    keys = [p[0] for p in header["players"]]
    prev = bytes(32)
    types = []
    for seq, raw in enumerate(records[1:]):
        payload, signature = msgpack.unpackb(raw, raw=False)
        p = msgpack.unpackb(payload, raw=False)
        assert (p["game"], p["seq"], p["prev"]) == (header["game"], seq, prev)
        assert p["from"] in keys
        Ed25519PublicKey.from_public_bytes(p["from"]).verify(signature, payload)
        prev = sha(raw)
        types.append((p["type"], keys.index(p["from"]) + 1))
    assert types[:6] == [("hello", 1), ("hello", 2), ("commit", 1), ("commit", 2), ("reveal", 1), ("reveal", 2)]
    assert types[-2:] == [("result", 1), ("result", 2)]
    kinds = [t for t, _ in types]
    # The bot seeds were picked for a game with a secret Jester round; if an
    # engine change loses it, pick new BOT_SEEDS in basilica_p2p/vectors/protocol.py.
    assert "jcommit" in kinds, "the vector game no longer has a secret Jester round"
    i = kinds.index("jcommit")
    assert kinds[i : i + 6] == ["jcommit", "jcommit", "jreveal", "ack", "jreveal", "ack"]


def test_the_replay_verifies() -> None:
    verdict = verify_file(VECTORS / "small.replay")
    assert verdict.ok, verdict.error


def test_result_state_is_the_last_acknowledged_state() -> None:
    # PROTOCOL.md section 6, End: a game decided on the board ends with an ack,
    # and both results sign the state that ack acknowledged.
    payloads = [msgpack.unpackb(payload_of(r), raw=False) for r in split_replay((VECTORS / "small.replay").read_bytes())[1:]]
    acks = [p["body"] for p in payloads if p["type"] == "ack"]
    assert [p["type"] for p in payloads[-3:]] == ["ack", "result", "result"]
    results = [p["body"] for p in payloads[-2:]]
    assert results[0] == results[1]
    assert results[0]["state"] == acks[-1]["state"]
    assert acks[-1]["ply"] == max(a["ply"] for a in acks)


# --- manifest.json ------------------------------------------------------------

COLOUR_BITS = {"Y": 1, "B": 2, "R": 4, "G": 8}


def manifest_canonical_by_hand(text: str) -> bytes:
    """MANIFEST.md "Hash", written from the document: defaults filled in, the name left out."""
    m = json.loads(text)
    supply = m.get("supply", {"builders": 5, "promotion_tokens": 4, "coins": 1})
    festum = m.get("festum", {"tiles": [], "altar_tokens": 0})

    def tiles(ts: list[dict[str, Any]]) -> list[list[Any]]:
        return [[t["id"], sum(COLOUR_BITS[c] for c in t["colors"].split("/")), t["crown"], t["order"], t["paid"]]
                for t in ts]

    value = ["basilica-manifest/1", m["crown_spaces"], m.get("order_faces_show_crown", False),
             [supply["builders"], supply["promotion_tokens"], supply["coins"]],
             tiles(m["tiles"]), tiles(festum["tiles"]), festum["altar_tokens"]]
    return msgpack.packb(value, use_bin_type=True)  # type: ignore[no-any-return]


def test_manifest_hashes_from_the_documented_formula() -> None:
    v = load("manifest.json")
    cases = {c["name"]: c for c in v["cases"]}
    for case in v["cases"]:
        canonical = manifest_canonical_by_hand(case["json"])
        assert canonical.hex() == case["canonical"], case["name"]
        assert sha(canonical).hex() == case["hash"], case["name"]
    # What is not hashed (the name, key order, a default written out) does not change the hash...
    assert cases["minimal"]["hash"] == cases["defaults-written-out"]["hash"]
    # ...and every field the non-default case changes does.
    assert cases["non-default"]["hash"] != cases["minimal"]["hash"]
    nd = json.loads(cases["non-default"]["json"])
    assert nd["order_faces_show_crown"] is True and nd["supply"] != {"builders": 5, "promotion_tokens": 4, "coins": 1}
    assert nd["festum"]["tiles"] and nd["festum"]["altar_tokens"] > 0
    # The absent festum is hashed as no tiles and 0 Altar tokens: the array ends 90 00.
    assert cases["minimal"]["canonical"].endswith("9000")
    default = v["default"]
    text = (VECTORS.parent / "manifest.json").read_text(encoding="utf-8")
    assert default["file"] == "../manifest.json"
    assert manifest_canonical_by_hand(text).hex() == default["canonical"]
    assert sha(h(default["canonical"])).hex() == default["hash"] == load("commit-reveal.json")["inputs"]["manifest"]


def test_manifest_hashes_agree_with_the_engine() -> None:
    for case in load("manifest.json")["cases"]:
        assert parse_manifest(case["json"]).hash == case["hash"], case["name"]


# --- text.json ----------------------------------------------------------------


def ranges_by_hand(version: str) -> str:
    """The allowed ranges from the categories, as PROTOCOL.md section 4 states the rule."""
    assert unicodedata.unidata_version == version, "recomputing the table needs Python 3.11's Unicode database"
    excluded = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}
    allowed = [cp == 0x20 or unicodedata.category(chr(cp)) not in excluded for cp in range(0x110000)]
    out, cp = [], 0
    while cp < 0x110000:
        if allowed[cp]:
            start = cp
            while cp + 1 < 0x110000 and allowed[cp + 1]:
                cp += 1
            out.append(f"{start:04X}-{cp:04X}")
        cp += 1
    return " ".join(out)


def test_text_ranges_are_unicode_14_categories() -> None:
    v = load("text.json")
    assert v["unicode_version"] == "14.0.0"
    assert v["excluded_categories"] == ["Cc", "Cf", "Cn", "Co", "Cs", "Zl", "Zp", "Zs"]
    assert v["ranges"] == ranges_by_hand(v["unicode_version"])


def test_text_cases_follow_the_ranges() -> None:
    v = load("text.json")
    ranges = [tuple(int(x, 16) for x in r.split("-")) for r in v["ranges"].split()]

    def allowed(cp: int) -> bool:
        return any(a <= cp <= b for a, b in ranges)

    oks = set()
    for case in v["cases"]:
        text = h(case["utf8"]).decode("utf-8")
        assert " ".join(f"U+{ord(c):04X}" for c in text) == case["code_points"]
        expected = 1 <= len(text) <= case["n"] and all(allowed(ord(c)) for c in text)
        assert case["ok"] == expected, case["why"]
        assert is_text(text, case["n"]) == expected, case["why"]
        oks.add(case["ok"])
    assert oks == {True, False}


def test_player_numbering_is_as_the_readme_labels_it() -> None:
    # vectors/README.md, "Conventions": first_player counts from 0 like the
    # state (element 26, the player on turn); plies[].player counts from 1.
    first = load("commit-reveal.json")["first_player"]
    sh = load("state-hash.json")
    assert msgpack.unpackb(h(sh["setup_canonical"]), raw=False)[26] == first
    assert sh["plies"][0]["player"] == first + 1
    assert "jester_commitment.player" in (VECTORS / "README.md").read_text(encoding="utf-8")
