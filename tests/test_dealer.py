"""The dealer joins the hidden engine to the hidden deal: a whole game in one process, every
tile opened by both players' shares, nothing known before the rules show it (issue 10)."""

from __future__ import annotations

import os
import random

import pytest

from basilica_p2p.bots import RandomBot
from basilica_p2p.deal import DeckDeal, DealRecord, Share, audit, hash_deck
from basilica_p2p.dealer import MAIN_DECK, Card, Dealer, box_layout, deal_id, face_label
from basilica_p2p.engine import Game, Options, TileSpec, default_manifest, observe


class Table:
    """Both players' sides of a hidden deal, in one process (as a local match would run it)."""

    def __init__(self, options: Options, game_id: bytes, secrets: tuple[bytes, bytes], first: int) -> None:
        self.manifest = default_manifest()
        self.dealer = Dealer(self.manifest, options)
        self.game = Game.new_hidden(self.manifest, options, first)
        self.deals: dict[str, tuple[DeckDeal, DeckDeal]] = {}
        self.shares: dict[str, list[Share]] = {}
        self.game_id, self.secrets = game_id, secrets
        for deck in self.dealer.decks:
            self._deal(deck)
        self.opened = 0

    def _deal(self, deck) -> None:  # type: ignore[no-untyped-def]
        hashed = hash_deck(self.game_id, deck)
        p1, p2 = DeckDeal(hashed, me=1, secret=self.secrets[0]), DeckDeal(hashed, me=2, secret=self.secrets[1])
        p2.receive(p1.make())
        p1.receive(p2.make())
        p2.receive(p1.make())
        self.deals[deck.deck_id] = (p1, p2)
        self.shares[deck.deck_id] = []

    def open(self, card: Card) -> str:
        p1, p2 = self.deals[card.deck]
        s1, s2 = p1.my_share(card.position), p2.my_share(card.position)
        self.shares[card.deck] += [Share(1, card.position, s1), Share(2, card.position, s2)]
        # Each side takes the other's share first, then adds its own: both open the same label.
        assert p1.add_share(2, card.position, s2) is None and p2.add_share(1, card.position, s1) is None
        label = p1.add_share(1, card.position, s1)
        assert label is not None and p2.add_share(2, card.position, s2) == label
        self.dealer.record(card, label)
        self.opened += 1
        return label

    def deal_later(self, reveals) -> None:  # type: ignore[no-untyped-def]
        """Deal any later deck (the D11 reshuffle) that the reveals name before it is dealt."""
        for r in reveals:
            d = r.position.deal
            if d and deal_id(d) not in self.deals:
                for deck in self.dealer.add_deal(d, self.game.deal(d).sources):
                    self._deal(deck)

    def settle(self, reveals) -> None:  # type: ignore[no-untyped-def]
        """Open cards until every reveal is a fact the engine has taken."""
        while reveals:
            self.deal_later(reveals)
            for card in self.dealer.cards_for(reveals):
                self.open(card)
            facts = self.dealer.facts(reveals)
            assert facts, "cards opened but no fact came of them"
            for position, fact in facts:
                self.game.reveal(position, fact)
            reveals = self.game.needed_reveals()

    def apply(self, action) -> None:  # type: ignore[no-untyped-def]
        self.game.apply(action)
        self.settle(self.game.needed_reveals())


def play(options: Options, seed: int) -> Table:
    rng = random.Random(seed)
    table = Table(options, rng.randbytes(32), (rng.randbytes(32), rng.randbytes(32)), seed % 2)
    table.settle(table.game.needed_reveals())
    bots = (RandomBot(seed), RandomBot(seed + 1))
    while not table.game.over:
        g = table.game
        p = g.to_move
        assert p is not None
        table.apply(bots[p].choose(observe(g, p), g.legal_actions()))
        table.settle(table.game.needed_reveals())
    return table


SEEDS = range(8)


@pytest.fixture(scope="module")
def games() -> dict[int, Table]:
    return {seed: play(Options(festum=seed % 3 == 2, festum_removal=seed % 3 == 2), seed) for seed in SEEDS}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_whole_hidden_game_opens_every_tile_by_shares_and_the_audit_is_clean(games: dict[int, Table],
                                                                               seed: int) -> None:
    table = games[seed]
    g = table.game
    assert g.over and g.end_reason
    # Every tile in the cathedral was opened as a tile, through the deal.
    placed = list(g.vaults.values())
    assert placed and all(isinstance(g.known(p), TileSpec) for p in placed)
    records = [DealRecord(p1.deck, tuple(p1.messages), tuple(table.shares[d]))  # type: ignore[arg-type]
               for d, (p1, _) in table.deals.items()]
    assert audit(table.secrets, records) is None
    # A share signed by player 2 that its secret does not give is found by the audit.
    d, (p1, _) = next(iter(table.deals.items()))
    bad = [Share(s.player, s.position, bytes(32) if s.player == 2 else s.value) for s in table.shares[d]]
    assert audit(table.secrets, [DealRecord(p1.deck, tuple(p1.messages), tuple(bad))]) == 2  # type: ignore[arg-type]


def test_the_games_reach_a_reshuffle_and_festum_with_its_removal(games: dict[int, Table]) -> None:
    # The reshuffle is a later deal of the positions in the discard pile; the removal, the
    # main deck's last six cards, is never opened.
    assert any(any(e.kind == "reshuffle" for e in t.game.events) for t in games.values())
    assert any(deal_id(1) in t.deals and t.deals[deal_id(1)][0].opened for t in games.values())
    removal = [t for t in games.values() if t.game.options.festum_removal]
    assert removal
    for t in removal:
        main = t.deals[MAIN_DECK][0]
        n = len(main.deck)
        assert not any(i in main.opened for i in range(n - 6, n))


def test_only_what_the_rules_show_is_opened(games: dict[int, Table]) -> None:
    # No card of a deal opens unless the engine asked for a fact it needs: a game that ends
    # before its stack runs out leaves the cards below the stack top shut.
    for t in games.values():
        g = t.game
        if any(e.kind == "reshuffle" for e in g.events):
            continue
        main = t.deals[MAIN_DECK][0]
        below_top = {p.index for p in g.stack[:-1]}  # the internal stack's top is its end
        assert below_top and not below_top & set(main.opened)
        return
    raise AssertionError("every game reshuffled: no game to check the shut stack on")


def test_face_labels_are_distinct_per_class_and_free_of_the_copy_separator() -> None:
    manifest = default_manifest()
    lay, faces = box_layout(manifest, Options(festum=True))
    assert len(faces) == len({face_label(f) for f in faces.values()})
    assert all("#" not in label for label in faces)
    assert len(lay.main.labels) == len(manifest.tiles) + len(manifest.festum_tiles)
    # Sub-decks exist for exactly the classes of two or more tiles.
    sizes = {face: len(tiles) for face, tiles in lay.classes}
    assert {d.deck_id for d in lay.subdecks} == {f"tiles/{f}" for f, n in sizes.items() if n >= 2}


def test_a_card_that_opens_to_a_label_of_the_wrong_class_is_refused_by_the_engine() -> None:
    # The dealer passes on what opened; the engine still checks it against what it knows.
    from basilica_p2p.engine import RevealError

    table = Table(Options(), os.urandom(32), (os.urandom(32), os.urandom(32)), 0)
    first = table.game.needed_reveals()[0]
    table.settle(table.game.needed_reveals())
    known = table.game.known(first.position)
    other = next(f for f in box_layout(table.manifest, Options())[1].values() if f != known)
    with pytest.raises(RevealError):
        table.game.reveal(first.position, other)
