"""The hidden deal at the table: the messages of ``sra-p256-v1`` inside a game (PROTOCOL.md §5b).

The referee of a game dealt by ``sra-p256-v1`` owns one :class:`DealTable`.  It
keeps one :class:`~basilica_p2p.deal.DeckDeal` per deck (a player's, with its
secret, on a live side; a verifier's in ``basilica verify``), the
:class:`~basilica_p2p.dealer.Dealer` that turns the hidden engine's reveals
into cards, and what the audit needs at the end.  Three message bodies
belong to it:

* ``deal``: ``{"decks": [value, ...]}``, one deal step for every deck being
  dealt, in the dealer's order (player 1, player 2, player 1);
* ``shares``: ``{"shares": [[deck, position, share], ...]}``, the sender's
  shares for exactly the cards of the current round, in card order;
* ``secret``: ``{"secret": bin32}``, published at the end for the audit.

Sans-IO, like the referee: every method checks before it changes anything
and raises :class:`~basilica_p2p.wire.ProtocolError` with one line.
"""

from __future__ import annotations

from .deal import DealError, DealRecord, Deck, DeckDeal, audit, hash_deck
from .dealer import Card, Dealer
from .engine import Manifest, Options
from .wire import DealBody, ProtocolError, SharesBody


class DealTable:
    def __init__(self, game: bytes, manifest: Manifest, options: Options,
                 me: int | None = None, secret: bytes | None = None) -> None:
        """``me`` (0 or 1) and ``secret`` for a live side; neither for a verifier."""
        self.game = game
        self.dealer = Dealer(manifest, options)
        self.me = me
        self._secret = secret
        self.machines: dict[str, DeckDeal] = {}
        self.dealing: list[str] = []  # the decks of the deal under way
        self.step = 0  # the deal step of ``dealing`` done (3: dealt)
        self.round: list[Card] = []  # the cards whose shares are being given
        self.given: list[int] = []  # who gave theirs this round, in order
        self.secrets: dict[int, bytes] = {}
        self.broken = ""  # why the deal cannot go on (a card that opened to nothing), if it cannot

    # --- dealing -------------------------------------------------------------

    def begin_deal(self, decks: tuple[Deck, ...]) -> None:
        for deck in decks:
            hashed = hash_deck(self.game, deck)
            if self.me is None:
                self.machines[deck.deck_id] = DeckDeal(hashed)
            else:
                self.machines[deck.deck_id] = DeckDeal(hashed, me=self.me + 1, secret=self._secret)
        self.dealing = [d.deck_id for d in decks]
        self.step = 0

    def dealer_due(self) -> int:
        """Who sends the next deal step: player 1 (0), then 2 (1), then 1."""
        return 1 if self.step == 1 else 0

    def make_deal(self) -> DealBody:
        """Our next deal step's body (a live side only)."""
        return {"decks": [self.machines[d].make() for d in self.dealing]}

    def take_deal(self, sender: int, body: DealBody, where: str) -> bool:
        """Check a deal step; True once the deal is complete."""
        values = body["decks"]
        if len(values) != len(self.dealing):
            raise ProtocolError(f"{where}: a deal step for {len(values)} decks, expected {len(self.dealing)}")
        if sender != self.me:  # our own steps were recorded when made
            # Every deck's value is checked before any is recorded: a refused step leaves the
            # deal as it was (PROTOCOL.md §6), also for the decks before the one that failed.
            checked = []
            for deck_id, value in zip(self.dealing, values):
                machine = self.machines[deck_id]
                try:
                    checked.append((machine, machine.check(value)))
                except DealError as e:
                    raise ProtocolError(f"{where}: player {sender + 1}'s deal of deck {deck_id!r}: {e}") from None
            for machine, msg in checked:
                machine.receive(msg.to_value(), msg)
        else:
            # A side rebuilt from its replay (basilica resume) did not make this step in this
            # process: it remakes it now from its secret (deterministic) and checks it is the one
            # recorded.  Nothing changes unless every deck's step matches.
            remade = []
            for deck_id, value in zip(self.dealing, values):
                machine = self.machines[deck_id]
                ours = machine.remake() if machine.step == self.step else machine.messages[-1]
                if ours.to_value() != value:
                    raise ProtocolError(f"{where}: our own deal step is not the one we made")
                if machine.step == self.step:
                    remade.append((machine, ours))
            for machine, ours in remade:
                machine.take_own(ours)
        self.step += 1
        return self.step == 3

    def dealt(self, deck_id: str) -> bool:
        return deck_id in self.machines and self.machines[deck_id].step == 3

    # --- opening cards -------------------------------------------------------

    def begin_round(self, cards: list[Card]) -> None:
        self.round = cards
        self.given = []

    def make_shares(self) -> SharesBody:
        """Our shares for the cards of this round (a live side only)."""
        return {"shares": [[c.deck, c.position, self.machines[c.deck].my_share(c.position)] for c in self.round]}

    def take_shares(self, sender: int, body: SharesBody, where: str) -> bool:
        """Check one player's shares for this round; True once both gave theirs (the cards are open,
        or :attr:`broken` says why they could not all open)."""
        items = body["shares"]
        wanted = [[c.deck, c.position] for c in self.round]
        if [item[:2] for item in items] != wanted:
            raise ProtocolError(f"{where}: player {sender + 1}'s shares are not for the cards due "
                                f"({len(wanted)} cards, in order)")
        # Every share is checked before any is taken: a false one is blamed on its sender at
        # once, and the state stays as it was.
        checked = []
        for card, item in zip(self.round, items):
            try:
                checked.append(self.machines[card.deck].check_share(sender + 1, card.position, item[2]))
            except DealError as e:
                raise ProtocolError(f"{where}: {e}") from None
        for card, item, s in zip(self.round, items, checked):
            try:
                label = self.machines[card.deck].add_share(sender + 1, card.position, item[2], s)
            except DealError as e:
                # Both shares match their commitments, yet the card is not a card of its deck (or
                # was opened before): a false deal step, whose author only the audit can name.
                self.broken = self.broken or f"card {card.position} of deck {card.deck!r}: {e}"
                continue
            if label is not None:
                self.dealer.record(card, label)
        self.given.append(sender)
        return len(self.given) == 2

    # --- the audit -----------------------------------------------------------

    def take_secret(self, sender: int, secret: bytes) -> None:
        self.secrets[sender] = secret

    def audit(self, sender: int, secret: bytes) -> bool:
        """Whether ``secret`` reproduces every deal step and share that ``sender`` (0 or 1) signed.

        Each secret is checked when it arrives, against its own sender only, so the
        blame falls on the message that proves it; a live side does not check its own.
        """
        if sender == self.me:
            return True
        records = [DealRecord(m.deck, m.messages, m.shares, dict(m.opened))
                   for m in self.machines.values()]
        # The other secret, where known (ours on a live side; player 1's when a verifier audits
        # player 2), spares the audit the arithmetic of every position that opened as dealt.
        known = {**self.secrets, sender: secret}
        if self.me is not None and self._secret is not None:
            known[self.me] = self._secret
        return audit((known.get(0), known.get(1)), records, (sender + 1,)) is None
