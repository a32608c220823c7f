"""Text from outside, shown to the person at this terminal: printable, and bounded.

A peer's name or reason, a bot's answer, a mailbox server's or a router's message: whatever
it holds, what reaches the screen has no control character (no escape sequence can move the
cursor or recolour the terminal) and no more than a given number of characters.  One function,
:func:`printable`; each caller says how much it shows and what a refused character becomes,
and a line for a log or an error folds its white space into single spaces (``one_line``).

"Printable" here is ``str.isprintable()``, the running Python's own answer: only this
terminal is concerned.  Text that both peers must judge alike (a name in a hello, a line of
chat) follows the wire's pinned rule instead, ``wire/text.py``, whatever Python each runs.
"""

from __future__ import annotations


def cut(text: str, limit: int) -> str:
    """``text``, or its first ``limit`` characters with the last three made "..." when longer."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def printable(text: object, limit: int, *, bad: str = "?", one_line: bool = False, dots: bool = False) -> str:
    """``text`` made safe to show: every character ``str.isprintable()`` refuses becomes ``bad``
    ("" drops it), then at most ``limit`` characters are kept (with ``dots``, the last three of a
    cut text are "...", as :func:`cut`).  ``one_line``: runs of white space (line breaks too) are
    one space first, and none leads or trails; a ``bad`` that is white space folds in with them.
    What is not a string at all is "?": a caller that has something to say of it says it first
    (``repr``, ``str``)."""
    if not isinstance(text, str):
        return "?"
    if one_line:
        text = " ".join("".join(c if c.isprintable() or c.isspace() else bad for c in text).split())
    else:
        text = "".join(c if c.isprintable() else bad for c in text)
    return cut(text, limit) if dots else text[:limit]
