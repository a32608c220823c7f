"""The seed-derived random stream: the only source of chance in a game.

A 32-byte seed is stretched by SHA-256 in counter mode, one independent
sub-stream per purpose (domain separation), so that e.g. the first player
does not depend on how many numbers the shuffle consumed.  Integers below
``n`` come from rejection sampling, so every value is exactly equally
likely; the shuffle is Fisher-Yates.  Python's ``random`` is never used: its
algorithm is an implementation detail, this one is written down in
protocol/PROTOCOL.md and can be reproduced in any language.
"""

from __future__ import annotations

import hashlib

DOMAIN = b"basilica-p2p/stream/v1"
SHUFFLE = b"shuffle"
FIRST_PLAYER = b"first-player"
FESTUM_REMOVAL = b"festum-removal"


def reshuffle_label(n: int) -> bytes:
    return b"reshuffle/%d" % n


class SeedStream:
    """Uniform integers from ``SHA-256(DOMAIN || 0x00 || label || 0x00 || seed || counter_be64)``."""

    __slots__ = ("_prefix", "_counter", "_buf", "_pos")

    def __init__(self, seed: bytes, label: bytes) -> None:
        if not isinstance(seed, bytes) or len(seed) != 32:
            raise ValueError("a game seed is exactly 32 bytes")
        self._prefix = DOMAIN + b"\x00" + label + b"\x00" + seed
        self._counter = 0
        self._buf = b""
        self._pos = 0

    def next_u64(self) -> int:
        if self._pos + 8 > len(self._buf):
            self._buf = hashlib.sha256(self._prefix + self._counter.to_bytes(8, "big")).digest()
            self._counter += 1
            self._pos = 0
        value = int.from_bytes(self._buf[self._pos : self._pos + 8], "big")
        self._pos += 8
        return value

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``; values from the biased tail are rejected."""
        if n <= 0:
            raise ValueError("below() needs a positive bound")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self.next_u64()
            if x < limit:
                return x % n


def shuffled(items: list[int], seed: bytes, label: bytes) -> list[int]:
    """Fisher-Yates: for i from len-1 down to 1, swap i with below(i + 1)."""
    out = list(items)
    stream = SeedStream(seed, label)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def first_player(seed: bytes) -> int:
    """0 or 1 (player 1 or player 2), D6."""
    return SeedStream(seed, FIRST_PLAYER).below(2)
