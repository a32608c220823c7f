"""Invite and reply codes (basilica_p2p/net/invite.py, protocol/INVITE-FORMAT.md)."""

from __future__ import annotations

import ast
import base64
import hashlib
import hmac
import ipaddress
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from basilica_p2p.net import invite as invite_module
from basilica_p2p.net.invite import (
    KINDS, MAX_CANDIDATES, Candidate, ChecksumError, ExpiredInvite, Invite, InviteError, InvalidValue,
    MalformedCode, Reply, UnknownVersion, WrongCodeKind, check_knock, check_reply, format_invite, format_reply,
    invite_id, knock_mac, make_reply, parse_invite, parse_reply, reply_mac,
)
from basilica_p2p.vectors.invite import FILE, build_vectors, main

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
REGENERATE = "regenerate with: python -m basilica_p2p.vectors.invite --write protocol/vectors"
FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"

HOST_KEY = bytes([0x11]) * 32
JOINER_KEY = bytes([0x22]) * 32
SECRET = bytes(range(16))
EXPIRES = 1767225600  # 2026-01-01 00:00:00 UTC
LAN = Candidate("lan", "192.168.1.20", 41000)
STUN = Candidate("stun", "203.0.113.7", 41000)
INVITE = Invite(HOST_KEY, SECRET, EXPIRES, (LAN, STUN))
CODE = format_invite(INVITE)
REPLY = make_reply(INVITE, JOINER_KEY, (Candidate("stun", "198.51.100.9", 50000),))
REPLY_CODE = format_reply(REPLY)


# --- strategies ---------------------------------------------------------------


def usable(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return usable(ip.ipv4_mapped)
    if isinstance(ip, ipaddress.IPv6Address) and ip.is_link_local:
        return False
    return not (ip.is_unspecified or ip.is_multicast or ip == ipaddress.IPv4Address("255.255.255.255"))


@st.composite
def candidates(draw: Any) -> Candidate:
    kind = draw(st.sampled_from(KINDS))
    ip = draw(st.ip_addresses(v=6) if kind == "ipv6" else st.ip_addresses())
    assume(usable(ip) and not (kind == "ipv6" and ip.ipv4_mapped is not None))
    return Candidate(kind, str(ip), draw(st.integers(1, 65535)))


keys = st.binary(min_size=32, max_size=32)
candidate_lists = st.lists(candidates(), max_size=MAX_CANDIDATES).map(tuple)
secrets = st.binary(min_size=16, max_size=16)
invites = st.builds(Invite, key=keys, secret=secrets, expires=st.integers(1, 2**64 - 1), candidates=candidate_lists)


def parse_at(inv: Invite) -> Callable[[str], Invite]:
    return lambda text: parse_invite(text, inv.expires - 1)


# --- round trips --------------------------------------------------------------


@FAST
@given(invites)
def test_an_invite_round_trips_in_any_case_and_wrapped(inv: Invite) -> None:
    code = format_invite(inv)
    assert code.startswith("bas1:") and code == code.lower() and len(code) <= 1024
    assert set(code[5:]) <= set(ALPHABET)
    wrapped = "  \n" + "\n".join(code.upper()[i:i + 60] for i in range(0, len(code), 60)) + "\u00a0\n"
    assert parse_invite(code, inv.expires - 1) == inv
    assert parse_invite(wrapped, inv.expires - 1) == inv


@FAST
@given(keys, secrets, keys, candidate_lists)
def test_a_reply_round_trips_and_checks(host: bytes, secret: bytes, joiner: bytes, listed: tuple[Candidate, ...]) -> None:
    inv = Invite(host, secret, 1, ())  # the invite's own candidates play no part in a reply
    r = make_reply(inv, joiner, listed)
    code = format_reply(r)
    assert code.startswith("bas1r:") and len(code) <= 1024
    assert parse_reply(code) == r == parse_reply(f" {code.upper()} ")
    assert check_reply(inv, parse_reply(code))


def test_hosts_are_normalised() -> None:
    assert Candidate("stun", "2001:DB8:0:0::0001", 1).host == "2001:db8::1"
    assert Candidate("lan", "::ffff:10.0.0.1", 1).host == "10.0.0.1"
    assert Candidate("ipv6", "2001:0db8:0000:0000:0001:0000:0000:0000", 1).host == "2001:db8:0:0:1::"
    assert Candidate("public", "::1", 9).address == ipaddress.ip_address("::1")


def test_the_largest_code_fits_the_limit() -> None:
    many = tuple(Candidate("ipv6", f"2001:db8:ffff:ffff:ffff:ffff:ffff:{i:x}", 65535) for i in range(1, 17))
    inv = Invite(HOST_KEY, SECRET, 2**64 - 1, many)
    assert len(format_invite(inv)) < 1024 and len(format_reply(make_reply(inv, JOINER_KEY, many))) < 1024
    assert parse_invite(format_invite(inv), 0) == inv


# --- typos, truncation --------------------------------------------------------


def refused(parse: Callable[[str], Any], text: str) -> InviteError:
    with pytest.raises(InviteError) as e:
        parse(text)
    assert "\n" not in str(e.value)
    return e.value


@FAST
@given(invites, st.data())
def test_a_changed_character_anywhere_is_caught(inv: Invite, data: Any) -> None:
    code = format_invite(inv)
    i = data.draw(st.integers(0, len(code) - 1), label="position")
    c = data.draw(st.sampled_from(ALPHABET + ALPHABET.upper() + ":01 89=-_r"), label="replacement")
    typo = code[:i] + c + code[i + 1:]
    assume("".join(typo.split()).lower() != code)  # a change of letter case is the same code
    assert isinstance(refused(parse_at(inv), typo), (ChecksumError, MalformedCode, UnknownVersion, WrongCodeKind))


@FAST
@given(invites, st.data())
def test_a_dropped_or_doubled_character_is_caught(inv: Invite, data: Any) -> None:
    code = format_invite(inv)
    i = data.draw(st.integers(0, len(code) - 1), label="position")
    for text in (code[:i] + code[i + 1:], code[:i + 1] + code[i:]):
        refused(parse_at(inv), text)


def test_every_single_substitution_and_swap_of_one_code_is_caught() -> None:
    parse = parse_at(INVITE)
    for i, old in enumerate(CODE):
        for c in ALPHABET:
            if c != old:
                refused(parse, CODE[:i] + c + CODE[i + 1:])
        if i + 1 < len(CODE) and CODE[i] != CODE[i + 1]:
            refused(parse, CODE[:i] + CODE[i + 1] + CODE[i] + CODE[i + 2:])


def test_every_truncation_is_refused() -> None:
    for code, parse in ((CODE, parse_at(INVITE)), (REPLY_CODE, parse_reply)):
        for n in range(len(code)):
            assert isinstance(refused(parse, code[:n]), (MalformedCode, ChecksumError))


# --- every error, with its message --------------------------------------------


def crafted(fields: list[Any]) -> str:
    # A payload the format forbids, with a checksum that matches.
    return invite_module._code("bas1", invite_module.INVITE_TAG, invite_module.encode(fields))


BODY = CODE.split(":", 1)[1]
LAN_WIRE = [0, bytes([192, 168, 1, 20]), 41000]


@pytest.mark.parametrize("text, parse, error, phrase", [
    (CODE[:20] + ("b" if CODE[20] != "b" else "c") + CODE[21:], "invite", ChecksumError, "its checksum does not match"),
    (CODE[:-8], "invite", ChecksumError, "copy it again"),
    ("bas2:" + BODY, "invite", UnknownVersion, "newer version of basilica (bas2); upgrade"),
    ("BAS12R:" + BODY, "reply", UnknownVersion, "(bas12)"),
    (REPLY_CODE, "invite", WrongCodeKind, "this is a reply code (bas1r:), not an invite"),
    (CODE, "reply", WrongCodeKind, "this is an invite code (bas1:), not a reply"),
    ("hello there", "invite", MalformedCode, "not a basilica code: it should start with bas1:"),
    ("basilica join " + CODE, "invite", MalformedCode, "not a basilica code"),
    (BODY, "reply", MalformedCode, "it should start with bas1r:"),
    ("   \n", "invite", MalformedCode, "the code is empty"),
    ("bas1:" + BODY[:9] + "é" + BODY[10:], "invite", MalformedCode, "characters no code has"),
    ("bas1:" + BODY[:9] + "0" + BODY[10:], "invite", MalformedCode, "a character no code has ('0')"),
    (CODE + "a", "invite", MalformedCode, "cut short or has a character too many"),
    ("bas1:", "invite", MalformedCode, "cut short"),
    ("bas1:" + "a" * 1020, "invite", MalformedCode, "over the 1024"),
    (CODE + " " * (1025 - len(CODE)), "invite", MalformedCode, "1025 characters"),
    (crafted([HOST_KEY, SECRET, EXPIRES, [LAN_WIRE] * 17]), "invite", MalformedCode, "17 candidates, over 16"),
    (crafted([HOST_KEY, SECRET, EXPIRES, [[0, bytes.fromhex("fe80" + "00" * 13 + "01"), 1]]]), "invite",
     MalformedCode, "fe80::1 is IPv6 link-local"),
    (crafted([HOST_KEY[:31], SECRET, EXPIRES, []]), "invite", MalformedCode, "host key must be 32 bytes"),
    (crafted([HOST_KEY, SECRET, True, []]), "invite", MalformedCode, "the expiry True"),
    (crafted([HOST_KEY, SECRET, EXPIRES, [[9, LAN_WIRE[1], 1]]]), "invite", MalformedCode, "unknown kind"),
    (crafted([HOST_KEY, SECRET, EXPIRES, [[0, LAN_WIRE[1], 0]]]), "invite", MalformedCode, "port 0 is not in"),
    (crafted([HOST_KEY, SECRET, EXPIRES]), "invite", MalformedCode, "not an array of 4 fields"),
    (crafted([HOST_KEY, SECRET, EXPIRES, [[0, bytes(10) + b"\xff\xff" + LAN_WIRE[1], 1]]]), "invite",
     MalformedCode, "not the canonical encoding"),
])
def test_each_error_says_what_happened(text: str, parse: str, error: type[InviteError], phrase: str) -> None:
    e = refused(parse_reply if parse == "reply" else parse_at(INVITE), text)
    assert type(e) is error and isinstance(e, ValueError)
    assert phrase in str(e), str(e)


def test_the_expiry_boundary_and_its_message() -> None:
    assert parse_invite(CODE, EXPIRES - 1) == INVITE
    at = refused(lambda t: parse_invite(t, EXPIRES), CODE)
    assert isinstance(at, ExpiredInvite) and (at.expires, at.now) == (EXPIRES, EXPIRES)
    assert "expired just now (at 2026-01-01 00:00:00 UTC); ask the host for a new one" in str(at)
    assert "expired 6 min ago" in str(refused(lambda t: parse_invite(t, EXPIRES + 400), CODE))
    assert "expired 3 h ago" in str(refused(lambda t: parse_invite(t, EXPIRES + 3 * 3600 + 5), CODE))
    assert "expired 2 days ago" in str(refused(lambda t: parse_invite(t, EXPIRES + 2 * 86400), CODE))


def test_an_expired_invite_is_refused_only_after_its_checks() -> None:
    # A damaged code says so even when it would be expired: the person fixes the paste first.
    assert isinstance(refused(lambda t: parse_invite(t, EXPIRES + 10**6), CODE[:-8]), ChecksumError)


@pytest.mark.parametrize("make, phrase", [
    (lambda: Candidate("lan", "fe80::1", 1), "IPv6 link-local"),
    (lambda: Candidate("lan", "fe80::1%eth0", 1), "zone id"),
    (lambda: Candidate("lan", "2001:db8::1%2", 1), "zone id"),
    (lambda: Candidate("lan", "0.0.0.0", 1), "cannot be connected to"),
    (lambda: Candidate("lan", "::", 1), "cannot be connected to"),
    (lambda: Candidate("lan", "ff02::1", 1), "cannot be connected to"),
    (lambda: Candidate("lan", "224.0.0.1", 1), "cannot be connected to"),
    (lambda: Candidate("lan", "255.255.255.255", 1), "cannot be connected to"),
    (lambda: Candidate("lan", "example.com", 1), "not an IPv4 or IPv6 address"),
    (lambda: Candidate("lan", "[::1]", 1), "not an IPv4 or IPv6 address"),
    (lambda: Candidate("lan", 167772161, 1), "IP address text"),  # type: ignore[arg-type]
    (lambda: Candidate("ipv6", "10.0.0.1", 1), "of kind ipv6 is not an IPv6 address"),
    (lambda: Candidate("relay", "10.0.0.1", 1), "kind 'relay' is not one of lan, ipv6"),
    (lambda: Candidate("lan", "10.0.0.1", 0), "port 0 is not in 1..65535"),
    (lambda: Candidate("lan", "10.0.0.1", 65536), "port 65536"),
    (lambda: Candidate("lan", "10.0.0.1", True), "port True"),
    (lambda: Invite(HOST_KEY[:31], SECRET, 1, ()), "host key must be 32 bytes"),
    (lambda: Invite(bytearray(HOST_KEY), SECRET, 1, ()), "host key must be 32 bytes"),  # type: ignore[arg-type]
    (lambda: Invite(HOST_KEY, SECRET * 2, 1, ()), "invite secret must be 16 bytes"),
    (lambda: Invite(HOST_KEY, SECRET, -1, ()), "expiry -1"),
    (lambda: Invite(HOST_KEY, SECRET, 2**64, ()), "unsigned 64-bit"),
    (lambda: Invite(HOST_KEY, SECRET, 1, (LAN,) * 17), "17 candidates: at most 16"),
    (lambda: Invite(HOST_KEY, SECRET, 1, ("10.0.0.1",)), "tuple of Candidate"),  # type: ignore[arg-type]
    (lambda: Reply(JOINER_KEY, bytes(31), ()), "reply MAC must be 32 bytes"),
    (lambda: knock_mac(SECRET, bytes(31), HOST_KEY, JOINER_KEY), "challenge must be 32 bytes"),
    (lambda: reply_mac(SECRET, HOST_KEY, JOINER_KEY[:1], ()), "joiner key must be 32 bytes"),
])
def test_values_a_code_cannot_hold_are_refused(make: Callable[[], Any], phrase: str) -> None:
    with pytest.raises(InvalidValue) as e:
        make()
    assert phrase in str(e.value) and "\n" not in str(e.value)


def test_candidates_may_be_a_list_and_become_a_tuple() -> None:
    assert Invite(HOST_KEY, SECRET, 1, [LAN]).candidates == (LAN,)  # type: ignore[arg-type]


def test_the_secret_stays_out_of_repr() -> None:
    assert SECRET.hex() not in repr(INVITE) and repr(SECRET) not in repr(INVITE)
    assert "192.168.1.20" in repr(INVITE)


# --- MACs and ids --------------------------------------------------------------


def test_a_reply_fails_with_another_secret_key_or_candidates() -> None:
    assert check_reply(INVITE, REPLY)
    other = Candidate("stun", "198.51.100.10", 50000)
    for r in (
        Reply(JOINER_KEY, REPLY.mac, (other,)),  # an address changed
        Reply(JOINER_KEY, REPLY.mac, ()),  # an address dropped
        Reply(JOINER_KEY, REPLY.mac, (*REPLY.candidates, other)),  # one added
        Reply(JOINER_KEY, REPLY.mac, (Candidate("lan", "198.51.100.9", 50000),)),  # its kind changed
        Reply(bytes([0x33]) * 32, REPLY.mac, REPLY.candidates),  # another joiner key
        Reply(JOINER_KEY, bytes(32), REPLY.candidates),
    ):
        assert not check_reply(INVITE, r)
    assert not check_reply(Invite(HOST_KEY, bytes(16), EXPIRES, ()), REPLY)  # another secret
    assert not check_reply(Invite(bytes([0x44]) * 32, SECRET, EXPIRES, ()), REPLY)  # another host
    assert check_reply(Invite(HOST_KEY, SECRET, 1, ()), REPLY)  # expiry and host candidates are not bound


def test_reordered_candidates_fail_the_reply() -> None:
    two = (Candidate("stun", "198.51.100.9", 50000), Candidate("lan", "10.0.0.5", 50000))
    r = make_reply(INVITE, JOINER_KEY, two)
    assert not check_reply(INVITE, Reply(r.key, r.mac, two[::-1]))


@FAST
@given(st.binary(min_size=32, max_size=32), keys, keys, secrets)
def test_the_knock_binds_challenge_keys_and_secret(challenge: bytes, host: bytes, joiner: bytes, secret: bytes) -> None:
    inv = Invite(host, secret, 1, ())
    mac = knock_mac(secret, challenge, host, joiner)
    assert check_knock(inv, challenge, joiner, mac)
    flipped = bytes([challenge[0] ^ 1]) + challenge[1:]
    assert not check_knock(inv, flipped, joiner, mac)
    assert not check_knock(inv, challenge, bytes([joiner[0] ^ 1]) + joiner[1:], mac)
    assert not check_knock(Invite(bytes([host[0] ^ 1]) + host[1:], secret, 1, ()), challenge, joiner, mac)
    assert not check_knock(Invite(host, bytes([secret[0] ^ 1]) + secret[1:], 1, ()), challenge, joiner, mac)


def test_the_invite_id_names_the_seat() -> None:
    ident = invite_id(INVITE)
    assert len(ident) == 16 and set(ident) <= set("0123456789abcdef")
    assert invite_id(Invite(HOST_KEY, SECRET, 5, ())) == ident  # same key and secret: same seat
    assert invite_id(Invite(HOST_KEY, bytes(16), EXPIRES, INVITE.candidates)) != ident


def test_the_module_is_pure() -> None:
    tree = ast.parse(Path(invite_module.__file__).read_text(encoding="utf-8"))
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not imported & {"os", "time", "random", "secrets", "socket", "trio", "asyncio", "subprocess"}


# --- vectors --------------------------------------------------------------------


@pytest.fixture(scope="module")
def built() -> dict[str, bytes]:
    return build_vectors()


@pytest.fixture(scope="module")
def vectors() -> dict[str, Any]:
    return json.loads((VECTORS / FILE).read_text(encoding="utf-8"))


def test_the_committed_vectors_are_a_fresh_build(built: dict[str, bytes], tmp_path: Path) -> None:
    assert list(built) == [FILE]
    assert (VECTORS / FILE).read_bytes() == built[FILE], f"{FILE} differs from a fresh build; {REGENERATE}"
    assert main(["--write", str(tmp_path)]) == 0
    assert (tmp_path / FILE).read_bytes() == built[FILE]


# The spec, written out again with the standard library only.
TAGS = {"invite": b"basilica-p2p/invite/v1\x00", "reply": b"basilica-p2p/reply/v1\x00",
        "knock": b"basilica-p2p/knock/v1\x00", "reply_mac": b"basilica-p2p/reply-mac/v1\x00",
        "invite_id": b"basilica-p2p/invite-id/v1\x00"}
SPEC_KINDS = ["lan", "ipv6", "pcp", "natpmp", "upnp", "stun", "public"]


def mp_uint(v: int) -> bytes:
    for limit, head, size in ((2**8, b"\xcc", 1), (2**16, b"\xcd", 2), (2**32, b"\xce", 4), (2**64, b"\xcf", 8)):
        if v < 128:
            return bytes([v])
        if v < limit:
            return head + v.to_bytes(size, "big")
    raise AssertionError(v)


def mp_bin(b: bytes) -> bytes:
    return b"\xc4" + bytes([len(b)]) + b


def mp_array(items: list[bytes]) -> bytes:
    head = bytes([0x90 + len(items)]) if len(items) <= 15 else b"\xdc" + len(items).to_bytes(2, "big")
    return head + b"".join(items)


def spec_candidates(listed: list[dict[str, Any]]) -> bytes:
    out = []
    for c in listed:
        address = bytes.fromhex(c["address"])
        assert ipaddress.ip_address(c["host"]).packed == address and str(ipaddress.ip_address(address)) == c["host"]
        out.append(mp_array([mp_uint(SPEC_KINDS.index(c["kind"])), mp_bin(address), mp_uint(c["port"])]))
        assert c["kind_index"] == SPEC_KINDS.index(c["kind"])
    return mp_array(out)


def spec_code(prefix: str, tag: bytes, payload: bytes, checksum_hex: str) -> str:
    check = hashlib.sha256(tag + payload).digest()[:4]
    assert check.hex() == checksum_hex
    return prefix + ":" + base64.b32encode(payload + check).decode("ascii").rstrip("=").lower()


def lp(b: bytes) -> bytes:
    return len(b).to_bytes(2, "big") + b


def test_the_vectors_follow_from_the_spec(vectors: dict[str, Any]) -> None:
    h = bytes.fromhex
    assert {k: h(v) for k, v in vectors["tags"].items()} == TAGS and vectors["kinds"] == SPEC_KINDS
    inputs = vectors["inputs"]
    for seed, key in ((inputs["host_key_seed"], inputs["host_key"]), (inputs["joiner_key_seed"], inputs["joiner_key"])):
        public = Ed25519PrivateKey.from_private_bytes(h(seed)).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        assert public.hex() == key
    by_name = {}
    for v in vectors["invites"]:
        key, secret = h(v["key"]), h(v["secret"])
        payload = mp_array([mp_bin(key), mp_bin(secret), mp_uint(v["expires"]), spec_candidates(v["candidates"])])
        assert payload.hex() == v["payload"]
        assert spec_code("bas1", TAGS["invite"], payload, v["checksum"]) == v["code"]
        assert hashlib.sha256(TAGS["invite_id"] + key + secret).digest()[:8].hex() == v["invite_id"]
        by_name[v["name"]] = v
    for k in vectors["knocks"]:
        message = TAGS["knock"] + lp(h(k["challenge"])) + lp(h(k["host_key"])) + lp(h(k["joiner_key"]))
        assert message.hex() == k["message"]
        assert hmac.new(h(k["secret"]), message, hashlib.sha256).hexdigest() == k["mac"]
    for r in vectors["replies"]:
        inv = by_name[r["invite"]]
        listed = spec_candidates(r["candidates"])
        assert listed.hex() == r["candidates_msgpack"]
        message = TAGS["reply_mac"] + lp(h(inv["key"])) + lp(h(r["key"])) + lp(listed)
        assert message.hex() == r["mac_message"]
        assert hmac.new(h(inv["secret"]), message, hashlib.sha256).hexdigest() == r["mac"]
        payload = mp_array([mp_bin(h(r["key"])), mp_bin(h(r["mac"])), listed])
        assert payload.hex() == r["payload"]
        assert spec_code("bas1r", TAGS["reply"], payload, r["checksum"]) == r["code"]


def test_the_vectors_parse_and_are_refused_as_listed(vectors: dict[str, Any]) -> None:
    invites = {}
    for v in vectors["invites"]:
        inv = parse_invite(v["code"], v["expires"] - 1)
        assert inv.key.hex() == v["key"] and inv.secret.hex() == v["secret"] and inv.expires == v["expires"]
        assert [(c.kind, c.host, c.port) for c in inv.candidates] == [
            (c["kind"], c["host"], c["port"]) for c in v["candidates"]]
        assert format_invite(inv) == v["code"] and invite_id(inv) == v["invite_id"]
        invites[v["name"]] = inv
    for k in vectors["knocks"]:
        inv = Invite(bytes.fromhex(k["host_key"]), bytes.fromhex(k["secret"]), 1, ())
        assert check_knock(inv, bytes.fromhex(k["challenge"]), bytes.fromhex(k["joiner_key"]), bytes.fromhex(k["mac"]))
    for r in vectors["replies"]:
        reply = parse_reply(r["code"])
        assert check_reply(invites[r["invite"]], reply) and format_reply(reply) == r["code"]
    errors = {cls.__name__: cls for cls in (MalformedCode, ChecksumError, UnknownVersion, WrongCodeKind, ExpiredInvite)}
    for case in vectors["refused"]:
        parse = parse_reply if case["parse"] == "reply" else (lambda t, now=case["now"]: parse_invite(t, now))
        e = refused(parse, case["text"])
        assert type(e) is errors[case["error"]], (case["name"], e)
