"""The audit: with both secrets published, name the first player whose signed data is false."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ._curve import N, inverse, key_commitment, multiply, private
from ._deal import DealMessage, shuffle
from ._errors import MalformedValue
from ._deck import HashedDeck
from ._keys import card_key, deck_key, permutation


@dataclass(frozen=True)
class Share:
    """A share as signed: who gave it, for which position, and the 32 bytes given."""

    player: int
    position: int
    value: bytes


@dataclass(frozen=True)
class DealRecord:
    """One deck's signed deal: its three messages, the shares given for it in chain order, and the
    label each position opened to in the game (position -> label)."""

    deck: HashedDeck
    messages: tuple[DealMessage, ...]  # shuffle, key, rekey: a deal's three, as DeckDeal.messages holds them
    shares: tuple[Share, ...] = ()
    opened: Mapping[int, str] = field(default_factory=dict)


def audit(secrets: tuple[object, object], records: Sequence[DealRecord],
          check: Collection[int] = (1, 2)) -> int | None:
    """The first player (1 or 2) whose signed data its own secret does not reproduce, or None.

    One blame order, the one a game follows (each secret audited when it arrives, player 1's
    first): player 1's data in every record, then player 2's, so that when both cheated
    player 1 is named whatever the decks.  A player's data, record by record in order: player
    1's shuffle, its re-key (from the keyed deck as signed) and its shares in order; player
    2's keyed deck (from the shuffle as signed) and its shares in order.  A secret that is not
    32 bytes blames its player.  ``check`` limits the audit to some players: a peer need only
    audit the other (its own data it made itself), at half the cost; a secret not yet known
    may then be None.

    Every message was checked by :func:`parse_message` when received, so
    each recomputation here starts from valid points.

    When both secrets are known, a position that opened in the game to the
    label the two permutations put there needs no curve arithmetic for its
    ``key`` and ``rekey`` values: the opening showed x(D3[i]) = x(a_i·b_i·C),
    with the shares checked below against the secrets, and with the shuffle
    recomputed in full that holds only if both values are the ones the
    secrets give (unless the two players cheat together, which wrongs
    neither).  DEAL-FORMAT.md §8.
    """
    def secret(player: int) -> bytes:
        s = secrets[player - 1]
        if not isinstance(s, bytes) or len(s) != 32:
            raise MalformedValue("", player)
        return s

    def holds(p: int, rec: DealRecord, shown: frozenset[int]) -> bool:
        """Whether player ``p``'s secret reproduces everything it signed for ``rec``'s deck."""
        m1, m2, m3 = rec.messages
        deck = rec.deck
        # The player's per-card keys, derived once: the key checks and the shares use the same.
        keys = [card_key(secret(p), p, deck.game, deck.deck_id, i) for i in range(len(deck))]
        if p == 1 and (shuffle(secret(1), deck) != m1 or not _rekey_holds(secret(1), deck, m2, m3, shown, keys)):
            return False
        if p == 2 and not _key_holds(secret(2), deck, m1, m2, shown, keys):
            return False
        for sh in rec.shares:
            if sh.player != p:
                continue
            if not (isinstance(sh.position, int) and not isinstance(sh.position, bool)
                    and 0 <= sh.position < len(deck)):
                return False  # a share signed for a position the deck does not have
            if keys[sh.position].to_bytes(32, "big") != sh.value:
                return False
        return True

    shown = [_shown_as_dealt(secrets, rec) for rec in records]
    for p in (1, 2):
        if p not in check:
            continue
        try:
            if not all(holds(p, rec, opened) for rec, opened in zip(records, shown)):
                return p
        except MalformedValue:
            return p
    return None


def _shown_as_dealt(secrets: tuple[object, object], rec: DealRecord) -> frozenset[int]:
    """The positions that opened to the label both secrets' permutations put there (none unless both are known)."""
    s1, s2 = secrets
    if not rec.opened or not (isinstance(s1, bytes) and len(s1) == 32 and isinstance(s2, bytes) and len(s2) == 32):
        return frozenset()
    deck = rec.deck
    sigma = permutation(s1, 1, deck.game, deck.deck_id, len(deck))
    tau = permutation(s2, 2, deck.game, deck.deck_id, len(deck))
    labels = deck.deck.labels
    return frozenset(i for i, label in rec.opened.items()
                     if 0 <= i < len(deck) and labels[sigma[tau[i]]] == label)


def _key_holds(secret: bytes, deck: HashedDeck, shuffled: DealMessage, keyed: DealMessage,
               shown: frozenset[int], card_keys: list[int]) -> bool:
    """:func:`key` recomputed and compared, skipping the card arithmetic of the positions in ``shown``."""
    tau = permutation(secret, 2, deck.game, deck.deck_id, len(deck))
    for i, j in enumerate(tau):
        b = card_keys[i]
        if keyed.keys[i] != key_commitment(deck.game, deck.deck_id, 2, i, b):
            return False
        if i not in shown and keyed.cards[i] != multiply(private(b), shuffled.point(j)):
            return False
    return True


def _rekey_holds(secret: bytes, deck: HashedDeck, keyed: DealMessage, rekeyed: DealMessage,
                 shown: frozenset[int], card_keys: list[int]) -> bool:
    """:func:`rekey` recomputed and compared, skipping the card arithmetic of the positions in ``shown``."""
    a_inv = inverse(deck_key(secret, 1, deck.game, deck.deck_id))
    for i in range(len(deck)):
        a_i = card_keys[i]
        if rekeyed.keys[i] != key_commitment(deck.game, deck.deck_id, 1, i, a_i):
            return False
        if i not in shown and rekeyed.cards[i] != multiply(private(a_i * a_inv % N), keyed.point(i)):
            return False
    return True
