"""The fixed inputs that several families of vectors share, so that they tell one story.

Two Ed25519 keys from fixed 32-byte seeds (``alice`` and ``bob``), one game id,
two commit nonces, Jester salts counted from 1, and the manifest texts of
manifest.json (whose first, six tiles, is also the small game of hidden-six.replay).
"""

from __future__ import annotations

from collections.abc import Callable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..identity import Identity
from ..wire import game_seed

KEY_SEEDS = (bytes([1]) * 32, bytes([2]) * 32)
NAMES = ("alice", "bob")
GAME_ID = bytes(range(32))
NONCES = (bytes([0xA1]) * 32, bytes([0xB2]) * 32)

# Manifest inputs for the hash (protocol/MANIFEST.md "Hash"), as JSON texts.
# The first two differ only in what is not hashed or is a default written
# out, so they share a hash; the third sets every optional field to
# something else, with wild tiles spelt in both letter orders and ids out of
# order (the hash keeps file order).
_SIX_TILES = """[
    {"id": 1, "colors": "Y", "crown": true, "order": "PROMOTE", "paid": true},
    {"id": 2, "colors": "B", "crown": false, "order": "MOVE", "paid": false},
    {"id": 3, "colors": "R", "crown": false, "order": "RECRUIT", "paid": false},
    {"id": 4, "colors": "G", "crown": true, "order": "CONFUSE", "paid": true},
    {"id": 5, "colors": "Y/B", "crown": false, "order": "STAINED_GLASS", "paid": false},
    {"id": 6, "colors": "R/G", "crown": false, "order": "DISASTER", "paid": false}
  ]"""
MANIFEST_CASES: tuple[tuple[str, str, str], ...] = (
    ("minimal",
     "Only the required fields: no name, order_faces_show_crown, supply or festum.",
     '{"schema": "basilica-manifest/1", "crown_spaces": [3, 7],\n  "tiles": ' + _SIX_TILES + "}\n"),
    ("defaults-written-out",
     "The minimal manifest with a name, the fields in another order, and the defaults written out "
     "(order_faces_show_crown false, supply 5/4/1, festum with no tiles and 0 Altar tokens): the same hash.",
     '{"tiles": ' + _SIX_TILES + ',\n  "festum": {"altar_tokens": 0, "tiles": []},\n'
     '  "supply": {"coins": 1, "promotion_tokens": 4, "builders": 5},\n  "name": "my copy",\n'
     '  "order_faces_show_crown": false, "crown_spaces": [3, 7], "schema": "basilica-manifest/1"}\n'),
    ("non-default",
     "Every optional field set to a non-default value; ids out of order and large; wild tiles written "
     "'B/Y' and 'G/R' (the same colour bits as 'Y/B' and 'R/G').",
     '{"schema": "basilica-manifest/1", "name": "house rules", "crown_spaces": [5, 200, 1000],\n'
     '  "order_faces_show_crown": true,\n  "supply": {"builders": 3, "promotion_tokens": 0, "coins": 0},\n'
     '  "tiles": [\n'
     '    {"id": 1000000, "colors": "B/Y", "crown": true, "order": "RECRUIT", "paid": true},\n'
     '    {"id": 300, "colors": "G", "crown": false, "order": "SCAFFOLDING", "paid": false},\n'
     '    {"id": 2, "colors": "G/R", "crown": true, "order": "MOVE", "paid": false},\n'
     '    {"id": 70000, "colors": "R", "crown": false, "order": "CONFUSE", "paid": false},\n'
     '    {"id": 5, "colors": "Y", "crown": false, "order": "PROMOTE", "paid": false},\n'
     '    {"id": 6, "colors": "B", "crown": true, "order": "DISASTER", "paid": false}\n  ],\n'
     '  "festum": {"tiles": [\n'
     '    {"id": 7, "colors": "Y", "crown": true, "order": "ALTAR", "paid": false},\n'
     '    {"id": 4, "colors": "B/G", "crown": false, "order": "PROMOTE", "paid": true}\n'
     '  ], "altar_tokens": 300}}\n'),
)


def identities() -> tuple[Identity, Identity]:
    return (Identity(NAMES[0], Ed25519PrivateKey.from_private_bytes(KEY_SEEDS[0])),
            Identity(NAMES[1], Ed25519PrivateKey.from_private_bytes(KEY_SEEDS[1])))


def counter_salts() -> Callable[[], bytes]:
    """Jester salts 1, 2, 3, ... as 32-byte big-endian numbers (fixed, unlike real play)."""
    n = 0

    def salt() -> bytes:
        nonlocal n
        n += 1
        return n.to_bytes(32, "big")

    return salt


def seed() -> bytes:
    return game_seed(GAME_ID, NONCES[0], NONCES[1])
