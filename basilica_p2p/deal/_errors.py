"""The deal's errors: one base class, one subclass per check.

``str(e)`` is always one line.  ``e.player`` names who is to blame (1 or 2)
when the failed check proves it on its own, and is None when only the audit
(both secrets) can tell, or when the caller, not a peer, made the mistake.
"""

from __future__ import annotations


class DealError(Exception):
    """Input to the deal that breaks ``sra-p256-v1``; the subclass names the check."""

    check = "deal"

    def __init__(self, reason: str, player: int | None = None) -> None:
        super().__init__(" ".join(reason.split()))
        self.reason = str(self)
        self.player = player


class MalformedValue(DealError):
    """A message, share or secret of the wrong type, size or shape."""

    check = "malformed"


class WrongCardCount(DealError):
    """A deal message whose number of cards (or key commitments) is not the deck's."""

    check = "card-count"


class NotOnCurve(DealError):
    """A card that is not the x-coordinate of a P-256 point."""

    check = "not-on-curve"


class RepeatedCard(DealError):
    """A value that appears twice in a message, or that the previous step already held (an unkeyed card)."""

    check = "repeated-card"


class FalseShare(DealError):
    """A share that does not match the sender's published key commitment: blamed at once."""

    check = "false-share"


class NotACard(DealError):
    """A position that opens to no card of the deck: someone dealt falsely; the audit says who."""

    check = "not-a-card"


class CardOpenedTwice(DealError):
    """A card that a second position opens to as well: someone dealt falsely; the audit says who."""

    check = "card-opened-twice"


class InvalidDeck(DealError):
    """A deck, layout or position the caller gave that cannot be dealt (the caller's mistake)."""

    check = "invalid-deck"


class OutOfOrder(DealError):
    """A message, share or opening that comes when the deal does not expect it."""

    check = "out-of-order"
