"""The text(N) rule is pinned to Unicode 14.0.0 (protocol/PROTOCOL.md §4), not to
whatever Unicode version the running Python has."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from basilica_p2p.data import printable_14_0_0
from basilica_p2p.replay.file import Header
from basilica_p2p.wire import ProtocolError, check_body, encode
from basilica_p2p.wire.text import (
    BOUNDS, TABLE_MODULE, UNICODE_VERSION, is_printable, is_text, printable_code_point, ranges_from_unicodedata,
    table_module_source,
)

# Python 3.11's unicodedata is Unicode 14.0.0: CI runs 3.11, and that is the
# only interpreter on which the table can be checked against the builtin.
NEEDS = "the table is checked against Python 3.11's unicodedata (Unicode 14.0.0)"


def test_pinned_version_is_this_pythons() -> None:
    assert UNICODE_VERSION == printable_14_0_0.UNICODE_VERSION == "14.0.0"
    assert unicodedata.unidata_version == UNICODE_VERSION, NEEDS


def test_table_agrees_with_isprintable_on_every_code_point() -> None:
    assert unicodedata.unidata_version == UNICODE_VERSION, NEEDS
    wrong = [cp for cp in range(sys.maxunicode + 1) if printable_code_point(cp) != chr(cp).isprintable()]
    assert wrong == []
    # and through the string function, on every code point outside ASCII (the bisect path)
    assert all(is_printable(chr(cp)) == chr(cp).isprintable() for cp in range(0x80, sys.maxunicode + 1, 7))


def test_ascii_fast_path_matches_the_table() -> None:
    for cp in range(0x80):
        assert is_printable(chr(cp)) == printable_code_point(cp) == (0x20 <= cp <= 0x7E)


def test_committed_table_is_the_generators_output() -> None:
    assert TABLE_MODULE.read_text(encoding="utf-8") == table_module_source(ranges_from_unicodedata())


def test_bounds_are_increasing_pairs() -> None:
    assert len(BOUNDS) % 2 == 0
    assert all(a < b for a, b in zip(BOUNDS, BOUNDS[1:]))
    assert BOUNDS[0] == 0x20 and BOUNDS[-1] <= 0x110000


def test_generator_refuses_another_unicode_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(unicodedata, "unidata_version", "15.0.0")
    with pytest.raises(SystemExit, match="pinned to Unicode 14.0.0"):
        ranges_from_unicodedata()


@pytest.mark.parametrize("cp, ok", [
    (0x20, True), (0x7E, True), (0xE9, True), (0x1F600, True),
    (0x1FAF0, True),  # HAND WITH INDEX FINGER AND THUMB CROSSED, new in 14.0
    (0x1FAE8, False),  # SHAKING FACE, new in 15.0
    (0x0CF3, False),  # KANNADA SIGN COMBINING ANUSVARA ABOVE RIGHT, new in 15.0
    (0x31350, False),  # first of CJK Extension H, new in 15.0
    (0x2FFC, False),  # new in 15.1
    (0x1FAE9, False),  # new in 16.0
    (0xA0, False), (0x3000, False), (0x200B, False), (0xAD, False), (0xFEFF, False),
    (0x2028, False), (0x2029, False), (0xE000, False), (0x10FFFD, False), (0xD800, False),
    (0x09, False), (0x7F, False), (0x85, False), (0x10FFFF, False),
])
def test_pinned_examples(cp: int, ok: bool) -> None:
    assert printable_code_point(cp) is ok
    assert is_printable("a" + chr(cp) + "b") is ok


def test_text_counts_code_points() -> None:
    assert is_text("\u00e9" * 64, 64) and not is_text("\u00e9" * 65, 64)
    assert not is_text("", 64) and not is_text(b"alice", 64) and not is_text(None, 64)


def hello(name: str) -> dict[str, object]:
    return {"protocol": 1, "software": "basilica-p2p 0.1.0", "ruleset": "portal2022", "festum": False,
            "removal": False, "manifest": bytes(32), "name": name, "shuffle": "commit-reveal-v1"}


def test_wire_bodies_use_the_pinned_rule() -> None:
    check_body("hello", hello("Zo\u00eb \U0001faf0"))
    with pytest.raises(ProtocolError, match="'name'"):
        check_body("hello", hello("alice \U0001fae8"))  # printable to a Python with Unicode 15+
    with pytest.raises(ProtocolError, match="'reason'"):
        check_body("forfeit", {"loser": 1, "reason": "gone\u2028"})


def header_bytes(name: str) -> bytes:
    return encode({"format": 1, "protocol": 1, "ruleset": "portal2022", "festum": False, "removal": False,
                   "manifest": bytes(32), "shuffle": "commit-reveal-v1", "game": bytes(32),
                   "players": [[bytes([1]) * 32, "alice"], [bytes([2]) * 32, name]]})


def test_replay_header_names_follow_the_text_rule() -> None:
    # PROTOCOL.md section 9: each name is text(64), the rule of the hello's name.
    assert Header.decode(header_bytes("b" * 64)).players[1][1] == "b" * 64
    for bad in ("", "b" * 65, "bob\U0001fae8", "bob\u00a0", "bob\n"):
        with pytest.raises(ProtocolError, match="wrong type"):
            Header.decode(header_bytes(bad))
