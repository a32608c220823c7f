"""A hidden deal (scheme ``sra-p256-v1``): neither peer can see the stack.

Sans-IO: no trio, no files, no engine.  Fed messages and shares, it gives
labels out; the session signs and sends what it returns, the engine decides
which positions to open.  Wire format: protocol/DEAL-FORMAT.md.

Decks.  The caller names what is dealt: a :class:`Deck` is a deck id and
distinct labels.  :func:`layout` builds the two-level deck of face cards
and per-class sub-decks from (face, tiles) pairs.  :func:`hash_deck` binds a
deck to a game id and hashes every label to a P-256 point (its x, the card).

Dealing one deck, three messages (values to put in an envelope body)::

    deck = hash_deck(game_id, Deck("faces", labels))
    p1 = DeckDeal(deck, me=1, secret=secret_1)   # secret = os.urandom(32), stored durably first
    p2 = DeckDeal(deck, me=2, secret=secret_2)
    p2.receive(p1.make())      # player 1's shuffle
    p1.receive(p2.make())      # player 2 keys each card, with key commitments
    p2.receive(p1.make())      # player 1 re-keys each card, with key commitments
    # position i opens when both give their share (checked against the commitment at once):
    p1.add_share(2, i, p2.my_share(i)); p1.add_share(1, i, p1.my_share(i))  # -> label

A verifier is ``DeckDeal(deck)`` fed every message with :meth:`DeckDeal.receive`.
Once both secrets are public, :func:`audit` recomputes everything and names
the first player whose signed data is false.  Every check of peer input
raises a :class:`DealError` subclass with a one-line message and the
player to blame when the check alone proves it.

The lower-level pure functions (:func:`shuffle`, :func:`key`,
:func:`rekey`, :func:`share`, :func:`parse_message`, :func:`open_card`) are
what the machine is made of, and what the audit recomputes.
"""

from ._audit import DealRecord, Share, audit
from ._curve import hash_to_card
from ._deal import KEY, REKEY, SHUFFLE, DealMessage, DeckStep, key, open_card, parse_message, parse_share, rekey, share, shuffle
from ._deck import FACE_SEPARATOR, MAX_CARDS, Deck, HashedDeck, Layout, hash_deck, layout, subdeck_id
from ._errors import (CardOpenedTwice, DealError, FalseShare, InvalidDeck, MalformedValue, NotACard, NotOnCurve,
                      OutOfOrder, RepeatedCard, WrongCardCount)
from ._keys import DeckKeys, deck_keys
from ._machine import DeckDeal

__all__ = [
    "FACE_SEPARATOR", "KEY", "MAX_CARDS", "REKEY", "SHUFFLE", "CardOpenedTwice", "DealError", "DealMessage",
    "DealRecord", "DeckStep",
    "Deck", "DeckDeal", "DeckKeys", "FalseShare", "HashedDeck", "InvalidDeck", "Layout", "MalformedValue",
    "NotACard", "NotOnCurve", "OutOfOrder", "RepeatedCard", "Share", "WrongCardCount", "audit", "deck_keys",
    "hash_deck", "hash_to_card", "key", "layout", "open_card", "parse_message", "parse_share", "rekey", "share",
    "shuffle", "subdeck_id",
]
