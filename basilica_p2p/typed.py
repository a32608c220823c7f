"""What a person types, read as notation: one reader for the app's box and the line client's prompt.

Both clients forgive the same things (docs/playing.md, "Typing an action"):

* case: ``v2:B3`` is ``V2:b3``, ``o1:c2=m`` is ``O1:c2=M``, ``PASS`` is ``pass``;
* spaces: ``V2 b3`` is ``V2:b3``;
* the colon after a market space, ``B`` or ``J``: ``v2b3`` is ``V2:b3``, ``bd1`` is ``B:d1``;
* a target alone, when the legal actions make it plain: after placing a vault ``d1`` is
  ``B:d1`` (the builder's cell, lit on the app's board); a cell that several actions of the
  market end on lists them (a payment is never guessed: ``$c4`` is typed whole);
* a target after a market space typed on its own: ``V2``, then ``d1``, is ``V2:d1``.

The reader knows no rules: it matches the text against the legal actions' notation
(engine/actions.py), so whatever it settles on is one of them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_HEAD = re.compile(r"([vo][0-9]?|[bj])(:?)(.*)")  # V2: O1: B: J:, lower-cased
# What comes before a legal action's target. Not '$': a payment is typed as one, never guessed.
_LEGAL_HEAD = re.compile(r"[VO][1-3]:|[BJ]:")


@dataclass(frozen=True)
class Reading:
    """What a typed text means among the legal actions."""

    text: str  # a whole legal action when the text settles one; otherwise the text, tidied
    candidates: tuple[str, ...]  # the legal actions it may still become, in their order

    @property
    def settled(self) -> bool:
        return self.text in self.candidates


def _target(text: str) -> str:
    """Cells lower case; a rank or colour after '=' upper case (``C2=m`` is ``c2=M``)."""
    return re.sub(r"=([a-z])", lambda m: "=" + m.group(1).upper(), text.lower())


def tidy(text: str) -> str:
    """``text`` as notation, its case, spaces and a missing colon forgiven."""
    low = "".join(text.split()).lower()
    if low in ("pass", "none", "$"):
        return low
    if low == "v*":
        return "V*"
    if low.startswith("$"):
        return "$" + _target(low[1:])
    m = _HEAD.fullmatch(low)
    if m is not None:
        head, colon, rest = m.groups()
        if colon or not rest:
            return head.upper() + colon + _target(rest)
        if rest[0] in "abcde":  # 'v2b3': the colon left out
            return head.upper() + ":" + _target(rest)
    return _target(low)


def _tail(action: str) -> str | None:
    m = _LEGAL_HEAD.match(action)
    return action[m.end():] if m is not None else None


def read(typed: str, legal: Sequence[str], before: str = "") -> Reading:
    """The legal actions ``typed`` may mean: those it starts, as written (tidied) or as a target
    alone (``b`` may start the cell ``b3``); failing that, those whose target it starts, a
    builder's or a Jester's first (the cells the app lights up while nothing is picked), then
    the market's.  ``before`` is a part typed earlier that a target completes (``V2`` then
    ``d1`` is ``V2:d1``), as the app's box keeps what was typed into it."""
    text = tidy(typed)
    if before and text[:1] in "abcde-=,":
        return read(before + typed, legal)
    if not text:
        return Reading("", tuple(legal))
    target = _target("".join(typed.split()))
    for guess in dict.fromkeys((text, target)):
        starts = tuple(t for t in legal if t.startswith(guess))
        if starts:
            return Reading(guess, starts)
    if not target or target[0] not in "abcde":
        return Reading(text, ())
    ends = tuple(t for t in legal if (_tail(t) or "").startswith(target))
    ends = tuple(t for t in ends if t[0] in "BJ") or ends
    exact = [t for t in ends if _tail(t) == target]
    return Reading(exact[0] if len(exact) == 1 else text, ends)
