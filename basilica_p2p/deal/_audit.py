"""The audit: with both secrets published, name the first player whose signed data is false."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from ._deal import DealMessage, MalformedValue, key, rekey, share, shuffle
from ._deck import HashedDeck
from ._errors import InvalidDeck


@dataclass(frozen=True)
class Share:
    """A share as signed: who gave it, for which position, and the 32 bytes given."""

    player: int
    position: int
    value: bytes


@dataclass(frozen=True)
class DealRecord:
    """One deck's signed deal: its three messages and the shares given for it, in chain order."""

    deck: HashedDeck
    messages: tuple[DealMessage, DealMessage, DealMessage]
    shares: tuple[Share, ...] = ()


def audit(secrets: tuple[object, object], records: Sequence[DealRecord],
          check: Collection[int] = (1, 2)) -> int | None:
    """The first player (1 or 2) whose signed data its own secret does not reproduce, or None.

    For each record in order: player 1's shuffle, player 2's keyed deck (from
    the shuffle as signed), player 1's re-key (from the keyed deck as
    signed), then the shares in order.  A secret that is not 32 bytes blames
    its player.  ``check`` limits the audit to some players: a peer need only
    audit the other (its own data it made itself), at half the cost.

    Every message was checked by :func:`parse_message` when received, so
    each recomputation here starts from valid points.
    """
    def secret(player: int) -> bytes:
        s = secrets[player - 1]
        if not isinstance(s, bytes) or len(s) != 32:
            raise MalformedValue("", player)
        return s

    try:
        for rec in records:
            m1, m2, m3 = rec.messages
            if 1 in check and shuffle(secret(1), rec.deck) != m1:
                return 1
            if 2 in check and key(secret(2), rec.deck, m1) != m2:
                return 2
            if 1 in check and rekey(secret(1), rec.deck, m2) != m3:
                return 1
            for sh in rec.shares:
                if sh.player not in check:
                    continue
                try:
                    expected = share(secret(sh.player), sh.player, rec.deck, sh.position)
                except InvalidDeck:  # a share signed for a position the deck does not have
                    return sh.player
                if expected != sh.value:
                    return sh.player
    except MalformedValue as e:
        return e.player
    return None
