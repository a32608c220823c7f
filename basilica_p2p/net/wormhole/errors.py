"""What can go wrong between us, the mailbox server and the peer; ``str(e)`` is one line."""

from __future__ import annotations

from ...printable import printable


class WormholeError(Exception):
    """The exchange through the mailbox did not happen; ``str(e)`` is one line for the user."""


class BadCode(WormholeError, ValueError):
    """The code typed in is not of the form ``<number>-<word>-<word>``."""


class WrongCode(WormholeError):
    """The peer's first encrypted message did not decrypt: the two sides used different codes,
    or a third party guessed (and so spent) the code."""

    def __init__(self, message: str = "the code is wrong, or someone else tried it: no game") -> None:
        super().__init__(message)


class MailboxUnreachable(WormholeError):
    """No websocket to the mailbox server could be opened."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"the mailbox server at {url} did not answer: {reason}")


class ConnectionLost(WormholeError):
    """The websocket to the mailbox server broke after it was opened."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"lost the mailbox server at {url}: {reason}")


class ServerRefused(WormholeError):
    """The mailbox server said no: an ``error`` in its welcome, or an ``error`` reply."""

    def __init__(self, url: str, reason: str) -> None:
        shown = printable(str(reason), 200, one_line=True, dots=True)  # what a server says is shown, never trusted
        super().__init__(f"the mailbox server at {url} refused: {shown}")


class Crowded(ServerRefused):
    """Two other sides already hold the code's nameplate or mailbox."""


class Timeout(WormholeError):
    """The mailbox server or the peer stayed silent past a deadline."""


class ProtocolViolation(WormholeError):
    """The mailbox server (or a peer through it) sent what the protocol forbids."""


