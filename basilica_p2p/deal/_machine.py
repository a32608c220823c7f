"""One deck's deal as one observer follows it: a player, or a verifier replaying a game."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from ._deal import KEY, REKEY, SENDER, STEP_NAMES, DealMessage, DeckStep, _check_position, check_share, \
    check_secret, key, open_checked, parse_message, parse_share, rekey, share, shuffle
from ._audit import Share
from ._deck import HashedDeck
from ._errors import CardOpenedTwice, FalseShare, InvalidDeck, OutOfOrder

class DeckDeal:
    """The state of one deck's deal: messages in, labels out; no I/O.

    A player passes ``me`` (1 or 2) and its ``secret``; :meth:`make` then
    writes its own messages when they are due.  A verifier passes neither and
    feeds every message to :meth:`receive`.  Every method checks before it
    changes anything, so after a :class:`DealError` the state is as before.

    States, by what is known: ``step`` 0 (nothing), 1 (player 1's
    shuffle), 2 (player 2's keyed deck), 3 (the final deck: positions can
    open).  Shares may arrive one at a time and in any order after step 3
    (:meth:`add_share` keeps the first until its partner comes).
    """

    def __init__(self, deck: HashedDeck, me: int | None = None, secret: bytes | None = None) -> None:
        if not isinstance(deck, HashedDeck):
            raise InvalidDeck("DeckDeal takes a HashedDeck (see hash_deck)")
        if (me is None) != (secret is None) or me not in (None, 1, 2):
            raise InvalidDeck("a player gives both me (1 or 2) and its secret; a verifier neither")
        self.deck = deck
        self.me = me
        self._secret = None if me is None else check_secret(secret, me)
        self._messages: list[DealMessage] = []
        self._opened: dict[int, str] = {}
        self._positions: dict[str, int] = {}
        self._pending: dict[tuple[int, int], int] = {}  # (position, player) -> the checked share
        self._given: list[Share] = []  # every share taken, in the order taken (what the audit checks)

    @property
    def step(self) -> int:
        return len(self._messages)

    @property
    def messages(self) -> tuple[DealMessage, ...]:
        return tuple(self._messages)

    @property
    def due(self) -> int | None:
        """The player whose deal message comes next, or None once the deck is dealt."""
        return SENDER.get(self.step + 1)

    @property
    def shares(self) -> tuple[Share, ...]:
        """Every share taken so far, as signed, in the order taken: also those of a card that
        then opened to nothing (only the audit can say whose fault that was)."""
        return tuple(self._given)

    @property
    def opened(self) -> Mapping[int, str]:
        """Position -> label of every position opened so far."""
        return MappingProxyType(self._opened)

    def make(self) -> DeckStep:
        """Write this player's next deal message (recorded here as sent) and return its value to sign and send."""
        msg = self.remake()
        self._messages.append(msg)
        return msg.to_value()

    def remake(self) -> DealMessage:
        """This player's next deal message, made from its secret but not recorded: a side rebuilt
        from its replay checks its own recorded step against it (then :meth:`take_own`)."""
        if self.me is None or self.due != self.me:
            raise OutOfOrder(f"it is not player {self.me}'s turn to deal deck {self.deck.deck_id!r}")
        assert self._secret is not None
        if not self._messages:
            return shuffle(self._secret, self.deck)
        return (key if self.step + 1 == KEY else rekey)(self._secret, self.deck, self._messages[-1])

    def take_own(self, msg: DealMessage) -> None:
        """Record our own next message, as :meth:`remake` gave it."""
        if msg.step != self.step + 1 or msg.sender != self.me or msg.deck_id != self.deck.deck_id:
            raise OutOfOrder(f"not our next deal message for deck {self.deck.deck_id!r}")
        self._messages.append(msg)

    def check(self, value: object) -> DealMessage:
        """Check the other side's next deal message (every one, for a verifier); changes nothing."""
        step = self.step + 1
        if step not in SENDER:
            raise OutOfOrder(f"deck {self.deck.deck_id!r} is dealt already", None)
        if SENDER[step] == self.me:
            raise OutOfOrder(f"the {STEP_NAMES[step]} message of deck {self.deck.deck_id!r} is ours to make",
                             3 - SENDER[step])
        return parse_message(self.deck, step, value, self._messages[-1] if self._messages else None)

    def receive(self, value: object, checked: DealMessage | None = None) -> DealMessage:
        """Check the other side's next deal message and record it; ``checked``: what :meth:`check`
        returned for it (a deal step of several decks is checked whole before any is recorded)."""
        msg = checked if checked is not None else self.check(value)
        self._messages.append(msg)
        return msg

    def my_share(self, position: int) -> bytes:
        """This player's share for ``position`` (refused before the deck is dealt, so keys stay secret)."""
        if self.me is None or self._secret is None:
            raise OutOfOrder("a verifier has no share")
        self._need_dealt()
        return share(self._secret, self.me, self.deck, position)

    def check_share(self, player: int, position: int, value: object) -> int:
        """Check one player's share for ``position`` and return it as a scalar; changes nothing.

        Against its commitment (:class:`FalseShare` blames its sender at once,
        without waiting for the other share); our own share against our secret.
        """
        self._need_dealt()
        if player not in (1, 2):
            raise InvalidDeck(f"player {player!r} is not 1 or 2")
        _check_position(self.deck, position)
        self._need_closed(position)
        if (position, player) in self._pending:
            raise OutOfOrder(f"player {player} already gave its share for position {position}", player)
        if player == self.me:
            # Our own share is what our secret gives.
            if value != self.my_share(position):
                raise FalseShare(f"our own share for position {position} of deck {self.deck.deck_id!r} is not "
                                 "the one our secret gives", player)
            return parse_share(value, player)
        keyed = self._messages[KEY - 1] if player == 2 else self._messages[REKEY - 1]
        return check_share(self.deck, keyed, position, value, player)

    def add_share(self, player: int, position: int, value: object, checked: int | None = None) -> str | None:
        """Take one player's share for ``position``; return the label once both are in, else None.

        The share is checked first (:meth:`check_share`), unless ``checked`` is
        what that check returned for it.  Opening can still fail with
        :class:`NotACard` or :class:`CardOpenedTwice`, which no share alone
        explains: the shares are kept, and only the audit can say who cheated.
        """
        s = checked if checked is not None else self.check_share(player, position, value)
        assert isinstance(value, bytes)  # check_share refuses anything else
        self._given.append(Share(player, position, value))
        other = self._pending.get((position, 3 - player))
        if other is None:
            self._pending[(position, player)] = s
            return None
        shares = {player: s, 3 - player: other}
        label = self._open(position, shares[1], shares[2])
        self._pending.pop((position, 3 - player))
        return label

    def open(self, position: int, share_p1: bytes, share_p2: bytes) -> str:
        """Open ``position`` with both shares; the label, or :class:`DealError` naming the failed check."""
        self._need_dealt()
        _check_position(self.deck, position)
        self._need_closed(position)
        return self._open(position, check_share(self.deck, self._messages[REKEY - 1], position, share_p1, 1),
                          check_share(self.deck, self._messages[KEY - 1], position, share_p2, 2))

    def _open(self, position: int, s1: int, s2: int) -> str:
        label = open_checked(self.deck, self._messages[REKEY - 1], position, s1, s2)
        if label in self._positions:
            raise CardOpenedTwice(f"position {position} of deck {self.deck.deck_id!r} opens to {label!r}, "
                                  f"as position {self._positions[label]} did")
        self._opened[position] = label
        self._positions[label] = position
        return label

    def _need_dealt(self) -> None:
        if self.step != REKEY:
            raise OutOfOrder(f"deck {self.deck.deck_id!r} is not dealt yet (step {self.step} of 3)")

    def _need_closed(self, position: int) -> None:
        if position in self._opened:
            raise OutOfOrder(f"position {position} of deck {self.deck.deck_id!r} is open already")
