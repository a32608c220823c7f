"""Wormhole codes: ``<nameplate>-<word>-<word>``, e.g. ``7-crossover-clockwork``.

The nameplate (digits) tells the mailbox server which mailbox to open; the whole code, words
and all, is the SPAKE2 password. Each word is one byte from the PGP word list, first from the
odd list, then the even one, alternately, as magic-wormhole makes them.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass

from ._wordlist import EVEN, ODD, WORDS
from .errors import BadCode

EXAMPLE = "7-crossover-clockwork"
MAX_NAMEPLATE = 40  # the mailbox server refuses longer nameplates
MAX_WORDS = 16
_NAMEPLATE = re.compile(r"[0-9]+")
# A hyphen is the separator; spaces are taken as one too, as a person may type them.
_SEPARATOR = re.compile(r"\s*-\s*|\s+")


@dataclass(frozen=True)
class Code:
    nameplate: str
    words: tuple[str, ...]

    def __str__(self) -> str:
        return "-".join((self.nameplate, *self.words))

    @property
    def password(self) -> bytes:
        """The SPAKE2 password: the code as magic-wormhole spells it (ASCII, lower case)."""
        return str(self).encode("ascii")


def parse_code(text: str) -> Code:
    """The code in ``text``, whatever its case and surrounding spaces; `BadCode` if malformed."""
    parts = _SEPARATOR.split(text.strip().lower())
    if parts == [""]:
        raise BadCode(f"no code given: a code looks like {EXAMPLE}")
    nameplate, words = parts[0], tuple(parts[1:])
    if not _NAMEPLATE.fullmatch(nameplate) or len(nameplate) > MAX_NAMEPLATE:
        raise BadCode(f"a code starts with a number, as in {EXAMPLE}: {_shown(nameplate)} is not one")
    if not words:
        raise BadCode(f"the code has no words after its number {nameplate}, as in {EXAMPLE}")
    if "" in words:
        raise BadCode("the code has an empty word: two hyphens in a row, or one at the end")
    if len(words) > MAX_WORDS:
        raise BadCode(f"the code has {len(words)} words, more than {MAX_WORDS}")
    for word in words:
        # Refused here, a typo costs nothing; sent, it would spend the peer's code.
        if word not in WORDS:
            raise BadCode(f"{_shown(word)} is not one of the code's words: check its spelling")
    return Code(nameplate, words)


def make_code(nameplate: str, length: int, *, entropy: Callable[[int], bytes] = os.urandom) -> Code:
    """A fresh code on ``nameplate`` with ``length`` random words (8 bits each)."""
    if not 1 <= length <= MAX_WORDS:
        raise ValueError(f"a code has 1 to {MAX_WORDS} words, not {length}")
    if not _NAMEPLATE.fullmatch(nameplate) or len(nameplate) > MAX_NAMEPLATE:
        raise ValueError(f"a nameplate is a number of at most {MAX_NAMEPLATE} digits, not {nameplate!r}")
    picks = entropy(length)
    return Code(nameplate, tuple((ODD if i % 2 == 0 else EVEN)[b] for i, b in enumerate(picks)))


def _shown(text: str, limit: int = 24) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
