"""JSON from the mailbox server and from the peer, bounded in size and depth before it is parsed.

Python's json parser recurses once per level of nesting: 100,000 ``[`` (well within the size
a mailbox message may have) run past the interpreter's recursion limit, and a RecursionError
is no ValueError.  Nothing the mailbox protocol carries is nested more than a few levels, so
the depth is counted first, in one pass that steps over strings, and a deeper text is
refused as not JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_DEPTH = 16  # the protocol's deepest message, a welcome asking for a permission, has 4 levels

_ESCAPE = re.compile(rb"\\.", re.DOTALL)  # what is escaped in a string, quotes included
_STRUCTURE = re.compile(rb'"[^"]*"|[\[\]{}]')  # a string (once its escapes are gone), or a bracket


@dataclass(frozen=True)
class NotJson:
    """Why a text was not taken as JSON (said after "not JSON: ")."""

    why: str


def parse_json(raw: bytes, max_size: int, max_depth: int = MAX_DEPTH) -> Any | NotJson:
    """The JSON value ``raw`` holds, or :class:`NotJson` if it is too large, too deep, not UTF-8
    or not JSON; the parser is never given anything deeper than ``max_depth``."""
    if len(raw) > max_size:
        return NotJson(f"over {max_size} bytes")
    depth = 0
    # Escapes go first, so that no string holds a quote and the pattern needs no backtracking.
    for token in _STRUCTURE.finditer(_ESCAPE.sub(b"", raw)):
        mark = token.group()
        if mark in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                return NotJson(f"nested deeper than {max_depth} levels")
        elif mark in (b"]", b"}"):
            depth -= 1
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return NotJson("not JSON")
