"""The one error type of the wire layer."""

from __future__ import annotations


class ProtocolError(Exception):
    """Bytes or messages that break the protocol; ``str(e)`` is one line.

    Everything that decodes or checks input from a peer or a file raises
    this and nothing else, so callers need exactly one ``except``.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(" ".join(reason.split()))
        self.reason = str(self)
