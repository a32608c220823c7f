"""A key's fingerprint as eight English words, to compare over the phone.

``SHA256:...`` is fine to paste but hard to read aloud; two people checking
that they see the same key say these words instead.  The words are the first
88 bits of the SHA-256 of the raw public key, cut into eight 11-bit numbers
(most significant first), each an index into the 2048 words of
``data/fingerprint_words.json`` (the BIP-0039 English list: 3 to 8 letters, no
two alike in their first four).  88 bits is what a person can compare; the
full ``SHA256:`` form stays beside it for those who paste.
"""

from __future__ import annotations

import functools
import hashlib
import json
from importlib import resources

from .identity import fingerprint

WORD_LIST = "fingerprint_words.json"
WORD_COUNT = 8
BITS_PER_WORD = 11  # 2**11 == 2048 words


@functools.cache  # the list is package data: read once, never changed
def word_list() -> tuple[str, ...]:
    text = resources.files("basilica_p2p.data").joinpath(WORD_LIST).read_text(encoding="utf-8")
    words = tuple(json.loads(text)["words"])
    # a damaged install must not show words that differ from the peer's: refuse it loudly
    if len(words) != 1 << BITS_PER_WORD or len(set(words)) != len(words):
        raise RuntimeError(f"basilica_p2p/data/{WORD_LIST} is damaged; reinstall basilica-p2p")
    return words


def fingerprint_words(public: bytes) -> str:
    """Eight words, space separated, from the SHA-256 of ``public``."""
    bits = WORD_COUNT * BITS_PER_WORD
    number = int.from_bytes(hashlib.sha256(public).digest(), "big") >> (256 - bits)
    words = word_list()
    mask = (1 << BITS_PER_WORD) - 1
    return " ".join(words[(number >> (BITS_PER_WORD * (WORD_COUNT - 1 - i))) & mask] for i in range(WORD_COUNT))


def key_for_people(public: bytes) -> str:
    """Both forms a person compares: ``SHA256:... (words: eight words)``."""
    return f"{fingerprint(public)} (words: {fingerprint_words(public)})"
