"""Manifest loading errors, manifest hash stability, and the seed stream."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import msgpack
import pytest

from basilica_p2p.engine import ManifestError, default_manifest, parse_manifest
from basilica_p2p.engine.rng import SeedStream, first_player, reshuffle_label, shuffled

from support.helpers import SEED, ref_below, ref_shuffle, ref_u64

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "basilica_p2p" / "data" / "manifest.json"


def raw() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def load(d: dict):
    return parse_manifest(json.dumps(d))


def error_of(text: str | bytes) -> str:
    with pytest.raises(ManifestError) as e:
        parse_manifest(text)
    msg = str(e.value)
    assert "\n" not in msg, "a one-line message"
    assert msg.startswith("manifest:")
    return msg


# --- loading -----------------------------------------------------------------------------


def test_shipped_manifest_loads_and_matches_protocol_copy() -> None:
    m = load(raw())
    assert len(m.tiles) == 58 and len(m.festum_tiles) == 8
    assert json.loads((ROOT / "protocol" / "manifest.json").read_text(encoding="utf-8")) == raw()
    assert default_manifest().hash == m.hash


def test_to_json_round_trips() -> None:
    m = default_manifest()
    again = parse_manifest(json.dumps(m.to_json()))
    assert again == m and again.hash == m.hash


@pytest.mark.parametrize("text", ["", "{", "not json", "[1, 2", "{'schema': 1}"])
def test_bad_json(text) -> None:
    msg = error_of(text)
    assert "JSON" in msg


def test_bytes_that_are_not_utf8() -> None:
    assert error_of(b"\xff\xfe") == "manifest: not UTF-8 text"


def test_not_an_object() -> None:
    assert "top level" in error_of("[]")


def test_unknown_field_top_level() -> None:
    d = raw()
    d["colour_scheme"] = "dark"
    assert "unknown field 'colour_scheme'" in error_of(json.dumps(d))


def test_unknown_field_in_a_tile() -> None:
    d = raw()
    d["tiles"][3]["shiny"] = True
    msg = error_of(json.dumps(d))
    assert "tiles[3]" in msg and "'shiny'" in msg


def test_unknown_field_in_supply_and_festum() -> None:
    d = raw()
    d["supply"]["meeples"] = 3
    assert "supply" in error_of(json.dumps(d)) and "meeples" in error_of(json.dumps(d))
    d = raw()
    d["festum"]["jesters"] = 1
    assert "festum" in error_of(json.dumps(d))


def test_missing_field() -> None:
    d = raw()
    del d["tiles"][0]["crown"]
    msg = error_of(json.dumps(d))
    assert "tiles[0]" in msg and "crown" in msg


@pytest.mark.parametrize("colors", ["P", "Y/Y", "Y/B/R", "", "y", "YB", 3])
def test_bad_colour(colors) -> None:
    d = raw()
    d["tiles"][5]["colors"] = colors
    msg = error_of(json.dumps(d))
    assert "tiles[5].colors" in msg


def test_duplicate_id() -> None:
    d = raw()
    d["tiles"][7]["id"] = d["tiles"][2]["id"]
    msg = error_of(json.dumps(d))
    assert "tiles" in msg and str(d["tiles"][2]["id"]) in msg and "twice" in msg


def test_duplicate_id_between_base_and_festum() -> None:
    d = raw()
    d["festum"]["tiles"][0]["id"] = d["tiles"][0]["id"]
    assert "twice" in error_of(json.dumps(d))


@pytest.mark.parametrize("order", ["MOVE", "STAINED_GLASS", "SCAFFOLDING", "DISASTER"])
def test_paid_on_an_order_without_a_paid_option(order: str) -> None:
    d = raw()
    d["tiles"][0]["order"] = order
    d["tiles"][0]["paid"] = True
    msg = error_of(json.dumps(d))
    assert "tiles[0].paid" in msg and "D3" in msg


def test_paid_on_altar_festum_tile() -> None:
    d = raw()
    d["festum"]["tiles"][0]["paid"] = True
    assert "festum.tiles[0].paid" in error_of(json.dumps(d))


def test_altar_in_base_tiles() -> None:
    d = raw()
    d["tiles"][4]["order"] = "ALTAR"
    d["tiles"][4]["paid"] = False
    msg = error_of(json.dumps(d))
    assert "tiles[4].order" in msg and "festum" in msg


def test_unknown_order() -> None:
    d = raw()
    d["tiles"][4]["order"] = "FEAST"
    assert "tiles[4].order" in error_of(json.dumps(d))


@pytest.mark.parametrize(
    "path, value, field",
    [
        (("schema",), "basilica-manifest/2", "schema"),
        (("crown_spaces",), [], "crown_spaces"),
        (("crown_spaces",), [10, 10, 20], "crown_spaces"),
        (("crown_spaces",), [20, 10], "crown_spaces"),
        (("crown_spaces",), [0, 10], "crown_spaces[0]"),
        (("supply", "builders"), 0, "supply.builders"),
        (("supply", "coins"), 2, "supply.coins"),
        (("supply", "promotion_tokens"), True, "supply.promotion_tokens"),
        (("order_faces_show_crown",), "no", "order_faces_show_crown"),
        (("tiles",), [], "tiles"),
        (("festum", "altar_tokens"), -1, "festum.altar_tokens"),
        (("name",), 5, "name"),
    ],
)
def test_field_errors_name_the_field(path, value, field) -> None:
    d = raw()
    node = d
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    msg = error_of(json.dumps(d))
    assert f"manifest: {field}" in msg or f"{field}:" in msg


def test_a_paid_promote_flag_may_be_false() -> None:
    # a box may have a PROMOTE tile without the paid option; only the reverse is refused
    d = raw()
    i = next(i for i, t in enumerate(d["tiles"]) if t["order"] == "PROMOTE")
    d["tiles"][i]["paid"] = False
    m = load(d)
    assert not m.tiles[i].paid


# --- hash ---------------------------------------------------------------------------------


def hand_hash(d: dict) -> str:
    """The hash as protocol/MANIFEST.md describes it, from the raw JSON."""
    bits = {"Y": 1, "B": 2, "R": 4, "G": 8}

    def tile(t):
        return [t["id"], sum(bits[c] for c in t["colors"].split("/")), t["crown"], t["order"], t["paid"]]

    s = d["supply"]
    canon = [
        "basilica-manifest/1",
        d["crown_spaces"],
        d.get("order_faces_show_crown", False),
        [s["builders"], s["promotion_tokens"], s["coins"]],
        [tile(t) for t in d["tiles"]],
        [tile(t) for t in d["festum"]["tiles"]],
        d["festum"]["altar_tokens"],
    ]
    return hashlib.sha256(msgpack.packb(canon, use_bin_type=True)).hexdigest()


def test_hash_follows_the_documented_encoding() -> None:
    d = raw()
    assert load(d).hash == hand_hash(d)
    assert len(load(d).hash) == 64


def test_same_content_same_hash() -> None:
    a = load(raw())
    b = parse_manifest(DATA.read_bytes())
    assert a.hash == b.hash
    # whitespace and key order do not matter
    d = raw()
    text = json.dumps(d, indent=None, sort_keys=True, separators=(",", ":"))
    assert parse_manifest(text).hash == a.hash


def test_name_change_does_not_change_the_hash() -> None:
    d = raw()
    h = load(d).hash
    d["name"] = "my own copy of the game"
    assert load(d).hash == h
    del d["name"]
    assert load(d).hash == h


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["tiles"][0].__setitem__("crown", not d["tiles"][0]["crown"]),
        lambda d: d["tiles"][1].__setitem__("colors", "G"),
        lambda d: d["tiles"][1].__setitem__("order", "DISASTER"),
        lambda d: d["tiles"][0].__setitem__("paid", False),
        lambda d: d["tiles"][0].__setitem__("id", 999),
        lambda d: d["tiles"].reverse(),
        lambda d: d["tiles"].pop(),
        lambda d: d["festum"]["tiles"][0].__setitem__("crown", not d["festum"]["tiles"][0]["crown"]),
        lambda d: d["festum"].__setitem__("altar_tokens", 13),
        lambda d: d.__setitem__("crown_spaces", [10, 20, 31]),
        lambda d: d.__setitem__("order_faces_show_crown", True),
        lambda d: d["supply"].__setitem__("promotion_tokens", 3),
    ],
)
def test_any_component_change_changes_the_hash(change) -> None:
    d = raw()
    h = load(d).hash
    d2 = copy.deepcopy(d)
    change(d2)
    assert load(d2).hash != h


def test_game_state_hash_includes_the_manifest() -> None:
    import dataclasses

    from basilica_p2p.engine import Game, Options

    m = default_manifest()
    m2 = dataclasses.replace(m, name="renamed")
    m3 = dataclasses.replace(m, crown_spaces=(10, 20, 31))
    h1 = Game.new(m, Options(), SEED).state_hash()
    assert Game.new(m2, Options(), SEED).state_hash() == h1
    assert Game.new(m3, Options(), SEED).state_hash() != h1


# --- rng ----------------------------------------------------------------------------------


def test_shuffled_is_a_permutation_and_deterministic() -> None:
    items = list(range(1, 67))
    a = shuffled(items, SEED, b"shuffle")
    assert sorted(a) == items and a != items
    assert shuffled(items, SEED, b"shuffle") == a
    assert items == list(range(1, 67))  # input not modified
    assert shuffled([], SEED, b"shuffle") == [] and shuffled([7], SEED, b"shuffle") == [7]


def test_shuffled_matches_the_reference() -> None:
    items = list(range(1, 59))
    assert shuffled(items, SEED, b"shuffle") == ref_shuffle(items, SEED, b"shuffle")
    assert shuffled(items, SEED, reshuffle_label(1)) == ref_shuffle(items, SEED, b"reshuffle/1")


def test_different_labels_and_seeds_give_different_streams() -> None:
    items = list(range(58))
    a = shuffled(items, SEED, b"shuffle")
    assert shuffled(items, SEED, b"reshuffle/1") != a
    assert shuffled(items, SEED, b"reshuffle/2") != shuffled(items, SEED, b"reshuffle/1")
    assert shuffled(items, bytes(32), b"shuffle") != a
    s1, s2 = SeedStream(SEED, b"a"), SeedStream(SEED, b"b")
    assert [s1.next_u64() for _ in range(4)] != [s2.next_u64() for _ in range(4)]


def test_stream_matches_the_reference_across_digest_boundaries() -> None:
    s = SeedStream(SEED, b"x")
    ref = ref_u64(SEED, b"x")
    assert [s.next_u64() for _ in range(13)] == [next(ref) for _ in range(13)]


def test_below_rejects_non_positive_bounds() -> None:
    s = SeedStream(SEED, b"x")
    for n in (0, -1, -100):
        with pytest.raises(ValueError):
            s.below(n)


def test_below_range_and_reference() -> None:
    s = SeedStream(SEED, b"y")
    ref = ref_u64(SEED, b"y")
    for n in (1, 2, 3, 7, 58, 2**63 + 1, 2**64 - 1):
        x = s.below(n)
        assert 0 <= x < n
        assert x == ref_below(ref, n)
    assert all(s.below(1) == 0 for _ in range(10))


def test_below_is_roughly_uniform() -> None:
    s = SeedStream(SEED, b"uniform")
    counts = [0] * 6
    for _ in range(6000):
        counts[s.below(6)] += 1
    assert all(850 < c < 1150 for c in counts), counts


def test_seed_must_be_32_bytes() -> None:
    for bad in (b"", bytes(31), bytes(33), "x" * 32):
        with pytest.raises(ValueError):
            SeedStream(bad, b"x")  # type: ignore[arg-type]


def test_first_player_uses_its_own_label() -> None:
    for i in range(16):
        seed = bytes([i * 7]) * 32
        assert first_player(seed) == next(ref_u64(seed, b"first-player")) % 2
