"""Signed envelopes: the unit of every protocol message and of replay files.

Wire form (canonical msgpack, protocol/PROTOCOL.md §3)::

    envelope = [payload: bin, signature: bin(64)]
    payload  = {"tag": "basilica-p2p/envelope", "v": 1, "game": bin(32),
                "seq": uint, "prev": bin(32), "from": bin(32),
                "type": str, "body": map}

The signature is Ed25519 by ``from`` over the exact payload bytes; the
envelope's hash (what the next envelope's ``prev`` names) is SHA-256 of the
exact envelope bytes.  Field order is fixed; unknown or missing fields,
wrong types and bad signatures are all a :class:`ProtocolError`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import msgpack
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .canonical import MAX_MESSAGE, decode, encode
from .errors import ProtocolError
from .messages import check_body

if TYPE_CHECKING:  # bodies.py reads envelopes: naming its types here must not import it back
    from .bodies import Body

TAG = "basilica-p2p/envelope"
PROTOCOL_VERSION = 1
PAYLOAD_FIELDS = ("tag", "v", "game", "seq", "prev", "from", "type", "body")
MAX_SEQ = 1_000_000


@dataclass(frozen=True)
class Envelope:
    game: bytes
    seq: int
    prev: bytes
    sender: bytes  # Ed25519 public key, 32 bytes
    type: str
    body: dict[str, Any]
    payload: bytes = field(repr=False)  # the exact signed bytes
    signature: bytes = field(repr=False)
    raw: bytes = field(repr=False)  # the exact envelope bytes

    @property
    def hash(self) -> bytes:
        return hashlib.sha256(self.raw).digest()


def public_bytes(key: Ed25519PrivateKey) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def seal(key: Ed25519PrivateKey, game: bytes, seq: int, prev: bytes, type_: str, body: Body) -> Envelope:
    """Build, check and sign an envelope; ``body`` is the body of a ``type_`` message."""
    sender = public_bytes(key)
    payload_map = {
        "tag": TAG, "v": PROTOCOL_VERSION, "game": game, "seq": seq, "prev": prev,
        "from": sender, "type": type_, "body": body,
    }
    _check_payload(payload_map)
    payload = encode(payload_map)
    signature = key.sign(payload)
    raw = encode([payload, signature])
    if len(raw) > MAX_MESSAGE:
        raise ProtocolError(f"{type_} message would be over the {MAX_MESSAGE}-byte cap")
    # A copy: the envelope is frozen, and its body must not change with the maker's map.
    return Envelope(game, seq, prev, sender, type_, dict(body), payload, signature, raw)


def signed_by(raw: bytes, key: bytes) -> bool:
    """Whether ``raw``, however malformed, holds a payload that ``key`` signed.

    Only then is an envelope's flaw its signer's doing: bytes whose signature fails could have
    been damaged on the way by anyone (a relay, a router), and prove nothing about the sender.
    Read loosely, as [payload, signature] in any msgpack form, to find what was signed."""
    try:
        outer = msgpack.unpackb(bytes(raw), raw=True, use_list=True, max_array_len=2, max_map_len=0,
                                max_bin_len=len(raw), max_str_len=len(raw), max_ext_len=0)
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError, OverflowError):
        return False  # msgpack.ExtraData is a ValueError
    if not (isinstance(outer, list) and len(outer) == 2 and all(isinstance(x, bytes) for x in outer)
            and len(outer[1]) == 64 and len(key) == 32):
        return False
    try:
        Ed25519PublicKey.from_public_bytes(key).verify(outer[1], outer[0])
    except (InvalidSignature, ValueError):
        return False
    return True


def _bin32(value: Any, name: str) -> bytes:
    if not isinstance(value, bytes) or len(value) != 32:
        raise ProtocolError(f"{name} must be 32 bytes")
    return value


def _check_payload(p: Any) -> None:
    if not isinstance(p, dict):
        raise ProtocolError("payload must be a map")
    if tuple(p) != PAYLOAD_FIELDS:
        missing = [f for f in PAYLOAD_FIELDS if f not in p]
        unknown = [f for f in p if f not in PAYLOAD_FIELDS]
        if missing:
            raise ProtocolError(f"payload field {missing[0]!r} missing")
        if unknown:
            raise ProtocolError(f"unknown payload field {str(unknown[0])[:40]!r}")
        raise ProtocolError("payload fields out of order")
    if p["tag"] != TAG:
        raise ProtocolError("not a basilica-p2p envelope (wrong domain tag)")
    if type(p["v"]) is not int or p["v"] != PROTOCOL_VERSION:  # msgpack true must not pass for 1
        raise ProtocolError(f"protocol version {p['v']!r} is not supported (this client speaks {PROTOCOL_VERSION})")
    _bin32(p["game"], "game id")
    if not isinstance(p["seq"], int) or isinstance(p["seq"], bool) or not 0 <= p["seq"] <= MAX_SEQ:
        raise ProtocolError("seq must be a whole number from 0")
    _bin32(p["prev"], "prev")
    _bin32(p["from"], "sender key")
    if not isinstance(p["type"], str):
        raise ProtocolError("type must be a string")
    check_body(p["type"], p["body"])


def open_envelope(raw: bytes) -> Envelope:
    """Decode and verify one envelope; any flaw raises :class:`ProtocolError`."""
    outer = decode(raw)
    if not isinstance(outer, list) or len(outer) != 2:
        raise ProtocolError("an envelope is [payload, signature]")
    payload, signature = outer
    if not isinstance(payload, bytes) or not isinstance(signature, bytes) or len(signature) != 64:
        raise ProtocolError("an envelope is [payload bytes, 64-byte signature]")
    p = decode(payload)
    _check_payload(p)
    try:
        Ed25519PublicKey.from_public_bytes(p["from"]).verify(signature, payload)
    except (InvalidSignature, ValueError):
        raise ProtocolError(f"bad signature on seq {p['seq']} ({p['type']})") from None
    return Envelope(p["game"], p["seq"], p["prev"], p["from"], p["type"], p["body"], payload, signature, bytes(raw))


def read_unverified(raw: bytes) -> tuple[dict[str, Any], bytes, bytes]:
    """Decode without checking the signature: (payload map, payload bytes, signature)."""
    outer = decode(raw)
    if not isinstance(outer, list) or len(outer) != 2 or not all(isinstance(x, bytes) for x in outer):
        raise ProtocolError("an envelope is [payload, signature]")
    p = decode(outer[0])
    _check_payload(p)
    return p, outer[0], outer[1]
