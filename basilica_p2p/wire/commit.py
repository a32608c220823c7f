"""Commit-reveal of the game seed (scheme ``commit-reveal-v1``).

Each side draws a 32-byte nonce from the operating system and commits to
``SHA-256("basilica-p2p/commit/v1" 0x00 game_id pubkey nonce)``; binding the
sender's key means a copied commitment cannot be revealed by the copier.
Once both commitments are in, both reveal, and the seed is
``SHA-256("basilica-p2p/seed/v1" 0x00 game_id nonce_p1 nonce_p2)``.

What this guarantees: as long as one side draws its nonce honestly, neither
side can choose or bias the seed, so the stack order is fair.  What it does
not: once both reveals are in, both clients know the seed and so the whole
stack order; a modified client can show its player what is coming.  Hiding
the stack from both peers needs another scheme (e.g. mental poker); the
handshake names the scheme so one can be added later.
"""

from __future__ import annotations

import hashlib
import os

COMMIT_DOMAIN = b"basilica-p2p/commit/v1\x00"
SEED_DOMAIN = b"basilica-p2p/seed/v1\x00"
JESTER_DOMAIN = b"basilica-p2p/jester/v1\x00"


def new_nonce() -> bytes:
    return os.urandom(32)


def commitment(game: bytes, public_key: bytes, nonce: bytes) -> bytes:
    return hashlib.sha256(COMMIT_DOMAIN + game + public_key + nonce).digest()


def game_seed(game: bytes, nonce_p1: bytes, nonce_p2: bytes) -> bytes:
    return hashlib.sha256(SEED_DOMAIN + game + nonce_p1 + nonce_p2).digest()


def jester_commitment(game: bytes, public_key: bytes, ply: int, action: str, salt: bytes) -> bytes:
    """Binds a secret Jester colour choice (D24) to the game, the player and the decision."""
    return hashlib.sha256(
        JESTER_DOMAIN + game + public_key + ply.to_bytes(4, "big") + salt + action.encode("utf-8")
    ).digest()
