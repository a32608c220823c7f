"""Test vectors for invite and reply codes (protocol/INVITE-FORMAT.md), written to protocol/vectors/invite.json.

Fixed inputs: the Ed25519 keys of the other vectors (seeds ``01`` x 32 for
the host, ``02`` x 32 for the joiner), a fixed secret and challenge, and a
few candidate lists from none to the largest code.  Besides the valid codes
the file lists texts every reader must refuse, with the error each gives.
tests/test_invite.py checks the committed file against a fresh build and
re-derives every byte with hashlib, hmac and base64.  Regenerate with::

    python -m basilica_p2p.vectors.invite --write protocol/vectors
"""

from __future__ import annotations

import json
from typing import Any

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from ..net import invite as iv
from ..net import Candidate, Invite
from ..wire import encode
from ._files import emit, parser
from ._inputs import KEY_SEEDS

FILE = "invite.json"
SECRET = bytes(range(0xA0, 0xB0))
CHALLENGE = bytes(range(0x40, 0x60))
EXPIRES = 1767225600  # 2026-01-01 00:00:00 UTC


def public_key(seed: bytes) -> bytes:
    return Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


HOST_KEY, JOINER_KEY = public_key(KEY_SEEDS[0]), public_key(KEY_SEEDS[1])  # "alice" and "bob" of the other vectors

INVITES: tuple[tuple[str, int, tuple[Candidate, ...]], ...] = (
    ("no-candidates", EXPIRES, ()),
    ("lan-and-stun", EXPIRES, (Candidate("lan", "192.168.1.20", 41000), Candidate("stun", "203.0.113.7", 41000))),
    ("every-kind", EXPIRES, (
        Candidate("lan", "127.0.0.1", 1),
        Candidate("ipv6", "2001:db8::2", 41000),
        Candidate("pcp", "198.51.100.1", 52000),
        Candidate("natpmp", "198.51.100.1", 52001),
        Candidate("upnp", "198.51.100.1", 52002),
        Candidate("stun", "2001:DB8:0:0:0:0:0:7", 41000),  # written long: the candidate holds the short form
        Candidate("public", "::ffff:192.0.2.10", 65535),  # IPv4-mapped: the candidate holds the IPv4 form
    )),
    ("largest-expiry", iv.MAX_EXPIRES, (Candidate("public", "192.0.2.10", 7777),)),
    ("sixteen-ipv6", EXPIRES, tuple(
        Candidate(iv.KINDS[i % len(iv.KINDS)], f"2001:db8:ffff:ffff:ffff:ffff:ffff:{i:x}", 65535 - i)
        for i in range(1, iv.MAX_CANDIDATES + 1)
    )),
)
REPLIES: tuple[tuple[str, str, tuple[Candidate, ...]], ...] = (
    ("answers-lan-and-stun", "lan-and-stun", (
        Candidate("stun", "198.51.100.9", 50000), Candidate("lan", "10.0.0.5", 50000))),
    ("no-candidates", "lan-and-stun", ()),
)


def _candidate(c: Candidate) -> dict[str, Any]:
    return {"kind": c.kind, "kind_index": iv.KINDS.index(c.kind), "host": c.host,
            "address": c.address.packed.hex(), "port": c.port}


def _invite(name: str, expires: int, candidates: tuple[Candidate, ...]) -> dict[str, Any]:
    inv = Invite(HOST_KEY, SECRET, expires, candidates)
    payload = iv._invite_payload(inv)
    return {
        "name": name, "key": inv.key.hex(), "secret": inv.secret.hex(), "expires": inv.expires,
        "candidates": [_candidate(c) for c in inv.candidates],
        "payload": payload.hex(), "checksum": iv._checksum(iv.INVITE_TAG, payload).hex(),
        "code": iv.format_invite(inv), "invite_id": iv.invite_id(inv),
    }


def _knock() -> dict[str, Any]:
    message = iv.KNOCK_TAG + b"".join(iv._field(f) for f in (CHALLENGE, HOST_KEY, JOINER_KEY))
    return {"secret": SECRET.hex(), "challenge": CHALLENGE.hex(), "host_key": HOST_KEY.hex(),
            "joiner_key": JOINER_KEY.hex(), "message": message.hex(),
            "mac": iv.knock_mac(SECRET, CHALLENGE, HOST_KEY, JOINER_KEY).hex()}


def _reply(name: str, answers: str, candidates: tuple[Candidate, ...]) -> dict[str, Any]:
    inv = next(Invite(HOST_KEY, SECRET, e, c) for n, e, c in INVITES if n == answers)
    r = iv.make_reply(inv, JOINER_KEY, candidates)
    listed = encode(iv._candidates_value(r.candidates))
    message = iv.REPLY_MAC_TAG + iv._field(HOST_KEY) + iv._field(JOINER_KEY) + iv._field(listed)
    payload = iv._reply_payload(r)
    return {
        "name": name, "invite": answers, "key": r.key.hex(),
        "candidates": [_candidate(c) for c in r.candidates], "candidates_msgpack": listed.hex(),
        "mac_message": message.hex(), "mac": r.mac.hex(),
        "payload": payload.hex(), "checksum": iv._checksum(iv.REPLY_TAG, payload).hex(),
        "code": iv.format_reply(r),
    }


def _refused() -> list[dict[str, Any]]:
    """Texts a reader must refuse, each with the error it gives and why."""
    good = iv.format_invite(Invite(HOST_KEY, SECRET, EXPIRES, INVITES[1][2]))
    reply = iv.format_reply(iv.make_reply(Invite(HOST_KEY, SECRET, EXPIRES, ()), JOINER_KEY, ()))
    body = good.split(":", 1)[1]
    typo = body[:20] + ("b" if body[20] != "b" else "c") + body[21:]
    # The no-candidates invite's text has one bit past its data (101 characters, 63 bytes); set it.
    short = iv.format_invite(Invite(HOST_KEY, SECRET, EXPIRES, ()))
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    unused = short[:-1] + alphabet[alphabet.index(short[-1]) | 1]
    lan = [0, bytes([192, 168, 1, 20]), 41000]

    def sealed(fields: object, raw: bytes | None = None) -> str:  # any value: most vectors' are wrong
        # A payload this format forbids, with a checksum that matches: only the structure is wrong.
        payload = raw if raw is not None else msgpack.packb(fields, use_bin_type=True)
        return iv._code(iv.INVITE_PREFIX, iv.INVITE_TAG, payload)

    def fields(**change: Any) -> list[Any]:
        values = {"key": HOST_KEY, "secret": SECRET, "expires": EXPIRES, "candidates": [lan]} | change
        return [values["key"], values["secret"], values["expires"], values["candidates"]]

    cases: list[tuple[str, str, str, str]] = [
        ("one character changed", "invite", f"bas1:{typo}", "ChecksumError"),
        ("last three characters cut", "invite", good[:-3], "ChecksumError"),
        ("last eight characters cut", "invite", good[:-8], "ChecksumError"),
        ("a newer version", "invite", f"bas2:{body}", "UnknownVersion"),
        ("a newer version of reply", "reply", f"bas2r:{body}", "UnknownVersion"),
        ("a reply where an invite is expected", "invite", reply, "WrongCodeKind"),
        ("an invite where a reply is expected", "reply", good, "WrongCodeKind"),
        ("expired: now equals expires", "invite", good, "ExpiredInvite"),
        ("no prefix", "invite", body, "MalformedCode"),
        ("another prefix", "invite", f"bas:{body}", "MalformedCode"),
        ("version 0", "invite", f"bas0:{body}", "MalformedCode"),
        ("a digit base32 does not use", "invite", f"bas1:{body[:9]}1{body[10:]}", "MalformedCode"),
        ("a length base32 never has", "invite", good + "a", "MalformedCode"),
        ("last character cut", "invite", good[:-1], "MalformedCode"),
        ("the bit past the data set", "invite", unused, "MalformedCode"),
        ("only the prefix", "invite", "bas1:", "MalformedCode"),
        ("over 1024 characters", "invite", "bas1:" + "a" * 1020, "MalformedCode"),
        ("17 candidates", "invite", sealed(fields(candidates=[lan] * 17)), "MalformedCode"),
        ("IPv6 link-local candidate", "invite",
         sealed(fields(candidates=[[0, bytes.fromhex("fe80" + "00" * 13 + "01"), 41000]])), "MalformedCode"),
        ("IPv4-mapped IPv6 candidate", "invite",
         sealed(fields(candidates=[[0, bytes(10) + b"\xff\xff" + bytes([192, 0, 2, 10]), 41000]])), "MalformedCode"),
        ("unspecified candidate", "invite", sealed(fields(candidates=[[0, bytes(4), 41000]])), "MalformedCode"),
        ("kind ipv6 with an IPv4 address", "invite", sealed(fields(candidates=[[1, lan[1], 41000]])), "MalformedCode"),
        ("unknown kind 7", "invite", sealed(fields(candidates=[[7, lan[1], 41000]])), "MalformedCode"),
        ("kind as text", "invite", sealed(fields(candidates=[["lan", lan[1], 41000]])), "MalformedCode"),
        ("port 0", "invite", sealed(fields(candidates=[[0, lan[1], 0]])), "MalformedCode"),
        ("port 65536", "invite", sealed(fields(candidates=[[0, lan[1], 65536]])), "MalformedCode"),
        ("address of 5 bytes", "invite", sealed(fields(candidates=[[0, bytes(5), 41000]])), "MalformedCode"),
        ("key of 31 bytes", "invite", sealed(fields(key=HOST_KEY[:31])), "MalformedCode"),
        ("secret of 32 bytes", "invite", sealed(fields(secret=SECRET * 2)), "MalformedCode"),
        ("expires negative", "invite", sealed(fields(expires=-1)), "MalformedCode"),
        ("expires true", "invite", sealed(fields(expires=True)), "MalformedCode"),
        ("five fields", "invite", sealed([*fields(), 0]), "MalformedCode"),
        ("a map, not an array", "invite", sealed({"key": HOST_KEY}), "MalformedCode"),
        ("a byte after the payload", "invite", sealed([], msgpack.packb(fields(), use_bin_type=True) + b"\x00"),
         "MalformedCode"),
        ("port as uint32", "invite", sealed([], b"\x94\xc4\x20" + HOST_KEY + b"\xc4\x10" + SECRET + b"\xce"
                                            + EXPIRES.to_bytes(4, "big") + bytes.fromhex("919300c404c0a80114ce0000a028")),
         "MalformedCode"),
    ]
    return [{"name": name, "parse": parse, "text": text, **({"now": EXPIRES} if parse == "invite" else {}),
             "error": error} for name, parse, text, error in cases]


def build() -> dict[str, Any]:
    return {
        "about": "Invite and reply codes, protocol/INVITE-FORMAT.md. Binary values are lowercase hex. "
                 "Written by python -m basilica_p2p.vectors.invite; checked by tests/test_invite.py.",
        "inputs": {"host_key_seed": KEY_SEEDS[0].hex(), "joiner_key_seed": KEY_SEEDS[1].hex(),
                   "host_key": HOST_KEY.hex(), "joiner_key": JOINER_KEY.hex(),
                   "secret": SECRET.hex(), "challenge": CHALLENGE.hex()},
        "kinds": list(iv.KINDS),
        "tags": {name: tag.hex() for name, tag in (
            ("invite", iv.INVITE_TAG), ("reply", iv.REPLY_TAG), ("knock", iv.KNOCK_TAG),
            ("reply_mac", iv.REPLY_MAC_TAG), ("invite_id", iv.INVITE_ID_TAG))},
        "invites": [_invite(*case) for case in INVITES],
        "knocks": [_knock()],
        "replies": [_reply(*case) for case in REPLIES],
        "refused": _refused(),
    }


def build_vectors() -> dict[str, bytes]:
    return {FILE: (json.dumps(build(), indent=2) + "\n").encode("utf-8")}


def main(argv: list[str] | None = None) -> int:
    emit(build_vectors(), parser("Build the invite code test vectors.", FILE).parse_args(argv).write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
