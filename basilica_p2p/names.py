"""When two peer names look alike: skeletons in the manner of Unicode TR39.

A name is what a person reads, so ``alice``, ``Alice``, ``alice `` and
``аlice`` (Cyrillic а) are one name to them and must be one name to the list
of known peers.  A name's skeleton is: NFKC, format characters (zero-width
joiners, direction marks) dropped, whitespace trimmed and collapsed, then each
character replaced by the prototype Unicode's confusables.txt gives it (NFD
around it, as TR39's skeleton does), and case folded; repeated until nothing
changes.  Case is folded *before* the mapping too, in a second skeleton: the
first catches ``ALICE`` for ``alice``, the second ``AIice`` (capital i) for
``Alice``.  Two names look alike when either skeleton agrees.

The confusables come from the ``confusable-homoglyphs`` package, which keeps
confusables.txt as a two-way table; which side of a pair is the prototype is
read back from it (a prototype may have many look-alikes, a look-alike has one
prototype), and a pair with no other member maps to its lower code point.
"""

from __future__ import annotations

import functools
import unicodedata
from collections.abc import Mapping
from types import MappingProxyType

# the package's table wraps right-to-left characters in LEFT-TO-RIGHT MARKs for display
_DISPLAY_MARKS = dict.fromkeys(map(ord, "\u200e\u200f"))
_ROUNDS = 4  # mapping, normalising and folding settle in two; more is a damaged table, not a name


@functools.cache  # built once from the package's data, read only afterwards
def prototypes() -> Mapping[str, str]:
    """Each confusable character and the string TR39 maps it to."""
    from confusable_homoglyphs.confusables import confusables_data

    links: dict[str, set[str]] = {}
    for char, entries in confusables_data.items():
        links.setdefault(char.translate(_DISPLAY_MARKS), set()).update(
            e["c"].translate(_DISPLAY_MARKS) for e in entries)
    table: dict[str, str] = {}
    for char, others in links.items():
        if len(char) != 1 or len(others) != 1:
            continue  # a sequence, or a prototype that several characters look like
        (other,) = others
        if len(other) != 1 or len(links.get(other, ())) > 1:
            table[char] = other
        elif char > other:
            table[char] = other  # a lone pair: either side will do, as long as both agree
    return MappingProxyType(table)


def _settle(text: str) -> str:
    for _ in range(_ROUNDS):
        nxt = _mapped(_plain(text))
        if nxt == text:
            break
        text = nxt
    return text


def _mapped(text: str) -> str:
    table = prototypes()
    text = "".join(table.get(c, c) for c in unicodedata.normalize("NFC", text))  # precomposed entries
    text = "".join(table.get(c, c) for c in unicodedata.normalize("NFD", text))
    return unicodedata.normalize("NFD", text).casefold()


# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt, unchanged since
# Unicode 6): code points drawn as nothing.  More than the format characters (Cf):
# variation selectors, the combining grapheme joiner and the Hangul fillers are not
# Cf, pass the wire's text rule, and would make `al\ufe0fice` a new `alice`.
_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)


def _invisible(c: str) -> bool:
    o = ord(c)
    return unicodedata.category(c) == "Cf" or any(lo <= o <= hi for lo, hi in _IGNORABLE)


def _plain(name: str) -> str:
    text = unicodedata.normalize("NFKC", name)
    text = "".join(c for c in text if not _invisible(c))
    return " ".join(text.split())


def skeletons(name: str) -> frozenset[str]:
    """The skeletons of ``name``; names that share one look alike."""
    return frozenset({_settle(name), _settle(name.casefold())})


def look_alike(a: str, b: str) -> bool:
    return not skeletons(a).isdisjoint(skeletons(b))


def quoted_name(name: str) -> str:
    """A name quoted for a person; spelled out in escapes too when it is not plain ASCII,
    since the point of a look-alike is that it cannot be told apart on screen."""
    quoted = repr(name)
    return quoted if name.isascii() and name.isprintable() else f"{quoted} (written {ascii(name)})"
