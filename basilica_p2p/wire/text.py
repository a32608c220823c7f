"""The protocol's text rule, pinned to one Unicode version (protocol/PROTOCOL.md §4).

``str.isprintable()`` answers from the Unicode database of the running
Python, which changes between Python releases: a name with a character that
Unicode 15.0 assigned would be refused by one peer on Python 3.11 and
accepted by the other on 3.12, and a replay would verify on one machine and
not on another.  So the rule is a fixed table of code point ranges, made once
from Unicode :data:`UNICODE_VERSION` (the version of Python 3.11's
``unicodedata``) and shipped as ``basilica_p2p/data/printable_14_0_0.py``.

Regenerate the table (only under a Python whose ``unicodedata`` is that
version; it refuses otherwise)::

    python -m basilica_p2p.wire.text --write
"""

from __future__ import annotations

import argparse
from bisect import bisect_right
from pathlib import Path

from ..data.printable_14_0_0 import BOUNDS as BOUNDS  # the table and its version: part of this module's face
from ..data.printable_14_0_0 import UNICODE_VERSION as UNICODE_VERSION

# The general categories that are not printable ("Other" and "Separator");
# U+0020 SPACE is the one exception, printable although it is Zs.
EXCLUDED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
TABLE_MODULE = Path(__file__).resolve().parent.parent / "data" / "printable_14_0_0.py"


def printable_code_point(cp: int) -> bool:
    # BOUNDS alternates first-allowed, first-refused-after, so an odd number of
    # bounds at or below cp means cp lies inside an allowed range.
    return bisect_right(BOUNDS, cp) & 1 == 1


def is_printable(s: str) -> bool:
    """True when every code point of ``s`` is printable under Unicode 14.0.0 (true for "")."""
    if s.isascii():
        # Printable ASCII (U+0020-U+007E) has not changed in any Unicode
        # version, so the builtin answers for the pinned version too, at C speed.
        return s.isprintable()
    return all(bisect_right(BOUNDS, ord(ch)) & 1 for ch in s)


def is_text(value: object, limit: int) -> bool:
    """The wire's text(N): a string of 1 to ``limit`` code points, all printable."""
    return isinstance(value, str) and 0 < len(value) <= limit and is_printable(value)


def as_text(typed: str, limit: int) -> str:
    """What a person typed, made into the wire's text(``limit``): tabs and line breaks become
    spaces, every other code point the rule refuses (terminal escapes, bidi overrides, control
    characters) is dropped, and the rest is cut to ``limit`` code points; "" when nothing is left."""
    spaced = "".join(" " if ch in "\t\r\n" else ch for ch in typed)
    kept = "".join(ch for ch in spaced if printable_code_point(ord(ch))).strip()
    return kept[:limit].rstrip()


# --- the generator ----------------------------------------------------------


def ranges_from_unicodedata() -> list[tuple[int, int]]:
    """The allowed ranges (first, last), inclusive, from the running Python's database."""
    import unicodedata

    if unicodedata.unidata_version != UNICODE_VERSION:
        raise SystemExit(f"the text table is pinned to Unicode {UNICODE_VERSION}, but this Python has "
                         f"{unicodedata.unidata_version}; run the generator under Python 3.11")
    out: list[tuple[int, int]] = []
    start: int | None = None
    for cp in range(0x110000):
        ok = cp == 0x20 or unicodedata.category(chr(cp)) not in EXCLUDED_CATEGORIES
        if ok and start is None:
            start = cp
        elif not ok and start is not None:
            out.append((start, cp - 1))
            start = None
    if start is not None:
        out.append((start, 0x10FFFF))
    return out


def table_module_source(ranges: list[tuple[int, int]]) -> str:
    lines = [
        f'"""Printable code points of Unicode {UNICODE_VERSION} (protocol/PROTOCOL.md §4): generated, do not edit.',
        "",
        "Made by ``python -m basilica_p2p.wire.text --write``: every code point whose",
        "general category is not Cc, Cf, Cs, Co, Cn, Zl, Zp or Zs, and U+0020 SPACE.",
        "BOUNDS lists, for each allowed range, its first code point and the code",
        "point just after its last one, in increasing order.",
        '"""',
        "",
        f'UNICODE_VERSION = "{UNICODE_VERSION}"',
        "",
        "BOUNDS: tuple[int, ...] = (",
    ]
    flat = [b for first, last in ranges for b in (first, last + 1)]
    for i in range(0, len(flat), 8):
        lines.append("    " + " ".join(f"0x{b:05X}," for b in flat[i : i + 8]))
    lines.append(")")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=f"Build the Unicode {UNICODE_VERSION} printable table.")
    parser.add_argument("--write", action="store_true", help=f"write {TABLE_MODULE.name} (else print it)")
    args = parser.parse_args(argv)
    source = table_module_source(ranges_from_unicodedata())
    if args.write:
        TABLE_MODULE.write_text(source, encoding="utf-8")
        print(f"{TABLE_MODULE}: {source.count(chr(10))} lines")
    else:
        print(source, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
