"""P-256 arithmetic for the deal, through ``cryptography`` alone.

``cryptography`` has no point addition and no plain scalar multiplication,
but ECDH is exactly x(k·P): a private key made from the scalar k, exchanged
with the public key P, gives the 32-byte x-coordinate of k·P.  Cards are
x-coordinates only, so a point is loaded from its compressed encoding
``0x02 || x`` (one of the two points with that x; x(k·P) = x(k·(−P)), so
which one never matters).  P-256 has prime order n and cofactor 1: every
point but the identity generates the whole group, so a valid x-coordinate
needs no subgroup check.
"""

from __future__ import annotations

import hashlib

from cryptography.hazmat.primitives.asymmetric import ec

# FIPS 186-4 D.1.2.3: the field prime, the curve's b (a = -3) and the group order.
P = 2**256 - 2**224 + 2**192 + 2**96 - 1
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551

_CURVE = ec.SECP256R1()
_ECDH = ec.ECDH()

CARD_TAG = b"basilica-p2p/deal/sra-p256-v1/card"
KEY_COMMIT_TAG = b"basilica-p2p/deal/sra-p256-v1/key-commitment"


def tagged_preimage(tag: bytes, *fields: bytes) -> bytes:
    """tag || 0x00 || for each field: u32be(len) || field: no two field lists give the same bytes."""
    return b"".join([tag, b"\x00", *(len(f).to_bytes(4, "big") + f for f in fields)])


def tagged_hash(tag: bytes, *fields: bytes) -> bytes:
    """SHA-256 of :func:`tagged_preimage` (DEAL-FORMAT.md §3's H)."""
    return hashlib.sha256(tagged_preimage(tag, *fields)).digest()


def _decompress(prefix: int, x: object) -> ec.EllipticCurvePublicKey | None:
    # Refused: anything but 32 bytes, 0 (OpenSSL would take it: 0 is the x of
    # a point, but no hash ever gives it and it is a fixed, recognisable
    # value), and x >= p (the same point spelt twice).
    if not isinstance(x, bytes) or len(x) != 32:
        return None
    v = int.from_bytes(x, "big")
    if v == 0 or v >= P:
        return None
    try:
        return ec.EllipticCurvePublicKey.from_encoded_point(_CURVE, bytes([prefix]) + x)
    except ValueError:  # x^3 - 3x + b is not a square mod p
        return None


def load(x: object) -> ec.EllipticCurvePublicKey | None:
    """The point with x-coordinate ``x`` (32 bytes, 0 < x < p) as a public key object, or None."""
    return _decompress(2, x)


def hash_to_card(game: bytes, deck_id: str, label: str) -> tuple[bytes, int]:
    """Try-and-increment: the first counter whose tagged hash is a valid x.  Returns (x, counter)."""
    x, counter, _ = hash_to_point(game, deck_id, label)
    return x, counter


def hash_to_point(game: bytes, deck_id: str, label: str) -> tuple[bytes, int, ec.EllipticCurvePublicKey]:
    """:func:`hash_to_card` with the point it loaded on the way, so a deck is decompressed once.

    The test is the one ``load`` makes: 0 < x < p and x^3 - 3x + b a square
    mod p (p ≡ 3 mod 4, so a square root is one pow; OpenSSL's
    decompression does it in C).  About half of all counters succeed.
    """
    fields = (game, deck_id.encode("utf-8"), label.encode("utf-8"))
    counter = 0
    while True:
        x = tagged_hash(CARD_TAG, *fields, counter.to_bytes(4, "big"))
        point = load(x)
        if point is not None:
            return x, counter, point
        counter += 1


def private(k: int) -> ec.EllipticCurvePrivateKey:
    """The scalar 1 ≤ k < n as a private key (OpenSSL computes k·G as well: the cost of a call)."""
    return ec.derive_private_key(k, _CURVE)


def multiply(key: ec.EllipticCurvePrivateKey, point: ec.EllipticCurvePublicKey) -> bytes:
    """x(k·P) for a private key k and a loaded point P."""
    return key.exchange(_ECDH, point)


def key_commitment(game: bytes, deck_id: str, player: int, position: int, k: int) -> bytes:
    """A player's commitment to its per-card key k for one position: a tagged SHA-256, 32 bytes.

    A hash binds k exactly (another key with the same commitment is a
    SHA-256 collision) and hides it (k is a uniform 256-bit scalar), and
    checking a share against it costs a hash, where a commitment k·G costs a
    scalar multiplication to make and another to check.
    """
    return tagged_hash(KEY_COMMIT_TAG, game, deck_id.encode("utf-8"), bytes([player]),
                       position.to_bytes(4, "big"), k.to_bytes(32, "big"))


def inverse(k: int) -> int:
    return pow(k, -1, N)
