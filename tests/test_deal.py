"""The hidden deal (basilica_p2p/deal, scheme sra-p256-v1): honest deals open right, every cheat is
caught and blamed, hostile input gives a DealError, and protocol/vectors/deal.json is what the
generator builds and what plain integer arithmetic re-derives."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basilica_p2p.deal import (
    CardOpenedTwice, DealError, DealMessage, DealRecord, Deck, DeckDeal, FalseShare, HashedDeck, InvalidDeck,
    MalformedValue, NotACard, NotOnCurve, OutOfOrder, RepeatedCard, Share, WrongCardCount, audit, deck_keys,
    hash_deck, key, layout, open_card, parse_message, rekey, share, shuffle,
)
from basilica_p2p.deal import _curve
from basilica_p2p.vectors.deal import build_vectors
from basilica_p2p.wire import decode, encode

VECTORS = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
GAME = hashlib.sha256(b"test-deal game").digest()
S1 = hashlib.sha256(b"test-deal secret 1").digest()
S2 = hashlib.sha256(b"test-deal secret 2").digest()
LABELS_98 = tuple(f"card {i}" for i in range(98))
SMALL = tuple(f"s{i}" for i in range(8))


@pytest.fixture(scope="module")
def big() -> HashedDeck:
    return hash_deck(GAME, Deck("faces", LABELS_98))


@pytest.fixture(scope="module")
def small() -> HashedDeck:
    return hash_deck(GAME, Deck("small", SMALL))


def messages(deck: HashedDeck, s1: bytes = S1, s2: bytes = S2) -> tuple[DealMessage, DealMessage, DealMessage]:
    m1 = shuffle(s1, deck)
    m2 = key(s2, deck, m1)
    return m1, m2, rekey(s1, deck, m2)


def expected_labels(deck: HashedDeck, s1: bytes = S1, s2: bytes = S2) -> list[str]:
    """Final position i holds C[σ[τ[i]]]: worked out from the permutations alone, no curve arithmetic."""
    sigma = deck_keys(s1, 1, deck.game, deck.deck_id, len(deck)).permutation
    tau = deck_keys(s2, 2, deck.game, deck.deck_id, len(deck)).permutation
    return [deck.deck.labels[sigma[tau[i]]] for i in range(len(deck))]


def verifier(deck: HashedDeck, msgs: tuple[DealMessage, ...]) -> DeckDeal:
    v = DeckDeal(deck)
    for m in msgs:
        v.receive(m.to_value())
    return v


def shares(deck: HashedDeck, i: int, s1: bytes = S1, s2: bytes = S2) -> tuple[bytes, bytes]:
    return share(s1, 1, deck, i), share(s2, 2, deck, i)


def foreign_card(deck: HashedDeck, what: str = "foreign") -> bytes:
    """A valid curve x that is no card of ``deck``: the point of a label the deck does not have."""
    return _curve.hash_to_card(deck.game, deck.deck_id, what)[0]


def off_curve() -> bytes:
    """A 32-byte x in range whose x^3 - 3x + b is not a square mod p."""
    x = 5
    while _curve.load(x.to_bytes(32, "big")) is not None:
        x += 1
    return x.to_bytes(32, "big")


def rebuilt(msg: DealMessage, cards: list[bytes] | None = None, keys: list[bytes] | None = None) -> DealMessage:
    return DealMessage(msg.step, msg.deck_id, tuple(msg.cards if cards is None else cards),
                       tuple(msg.keys if keys is None else keys))


def keyed_by(deck: HashedDeck, src: DealMessage, order: list[int], scalars: list[int],
             commits: list[int] | None = None) -> DealMessage:
    """Player 2's message made by hand: card i = x(scalars[i] · src[order[i]]), commitments to ``commits``."""
    cards = [_curve.multiply(_curve.private(k), src.point(j)) for j, k in zip(order, scalars)]
    keys = [_curve.key_commitment(deck.game, deck.deck_id, 2, i, k) for i, k in enumerate(commits or scalars)]
    return DealMessage(2, deck.deck_id, tuple(cards), tuple(keys))


def p2_keys(deck: HashedDeck) -> tuple[list[int], list[int]]:
    k = deck_keys(S2, 2, deck.game, deck.deck_id, len(deck))
    return list(k.permutation), list(k.cards)


# --- honest deals -----------------------------------------------------------------


@pytest.mark.parametrize("positions", ["ascending", "descending"])
@pytest.mark.parametrize("first", [1, 2])
def test_honest_deal_of_98_opens_every_position_for_all_three_observers(big: HashedDeck, positions: str,
                                                                        first: int) -> None:
    p1, p2, v = DeckDeal(big, 1, S1), DeckDeal(big, 2, S2), DeckDeal(big)
    for maker, others in ((p1, (p2, v)), (p2, (p1, v)), (p1, (p2, v))):
        value = encode(maker.make())  # through canonical msgpack, as it travels
        for o in others:
            o.receive(decode(value))
    assert p1.due is None and p2.due is None and v.step == 3
    want = expected_labels(big)
    order = range(98) if positions == "ascending" else range(97, -1, -1)
    for i in order:
        mine = {1: p1.my_share(i), 2: p2.my_share(i)}
        for observer in (p1, p2, v):
            assert observer.add_share(first, i, mine[first]) is None
            assert observer.add_share(3 - first, i, mine[3 - first]) == want[i]
    assert sorted(v.opened.values()) == sorted(LABELS_98)
    assert dict(p1.opened) == dict(p2.opened) == dict(v.opened)


def test_the_two_permutations_both_matter(small: HashedDeck) -> None:
    """Another secret on either side gives another order (so neither side alone fixes it)."""
    base = expected_labels(small)
    other = hashlib.sha256(b"other").digest()
    assert expected_labels(small, s1=other) != base
    assert expected_labels(small, s2=other) != base
    v = verifier(small, messages(small, s1=other))
    assert [v.open(i, *shares(small, i, s1=other)) for i in range(8)] == expected_labels(small, s1=other)


def test_every_position_of_every_message_is_keyed_differently(big: HashedDeck) -> None:
    m1, m2, m3 = messages(big)
    values = set(big.cards) | set(m1.cards) | set(m2.cards) | set(m3.cards)
    assert len(values) == 4 * 98
    assert len(set(m2.keys) | set(m3.keys)) == 2 * 98


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 7), s1=st.binary(min_size=32, max_size=32), s2=st.binary(min_size=32, max_size=32),
       game=st.binary(min_size=32, max_size=32))
def test_property_any_secrets_deal_a_permutation(n: int, s1: bytes, s2: bytes, game: bytes) -> None:
    deck = hash_deck(game, Deck("d", tuple(f"L{i}" for i in range(n))))
    msgs = messages(deck, s1, s2)
    v = verifier(deck, msgs)
    got = [v.open(i, *shares(deck, i, s1, s2)) for i in range(n)]
    assert got == expected_labels(deck, s1, s2)
    assert sorted(got) == sorted(deck.deck.labels)
    assert audit((s1, s2), [DealRecord(deck, msgs)]) is None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(step=st.integers(1, 3), field=st.sampled_from(["cards", "keys"]), index=st.integers(0, 4),
       byte=st.integers(0, 32), bit=st.integers(0, 7))
def test_property_a_flipped_bit_is_refused_or_blamed_on_its_sender(small: HashedDeck, step: int, field: str,
                                                                   index: int, byte: int, bit: int) -> None:
    """Any one bit flipped in any signed deal message is either refused on receipt or blamed by the audit."""
    msgs = list(messages(small))
    target = msgs[step - 1]
    items = [bytearray(x) for x in (target.cards if field == "cards" or step == 1 else target.keys)]
    item = items[index]
    item[byte % len(item)] ^= 1 << bit
    value = target.to_value()
    value["cards" if field == "cards" or step == 1 else "keys"] = [bytes(x) for x in items]
    sender = 2 if step == 2 else 1
    try:
        msgs[step - 1] = parse_message(small, step, value, msgs[step - 2] if step > 1 else None)
    except DealError as e:
        assert e.player == sender
        return
    # Accepted: the later messages are made honestly from it, so only the tamperer's data is false.
    if step == 1:
        msgs[1] = key(S2, small, msgs[0])
    if step <= 2:
        msgs[2] = rekey(S1, small, msgs[1])
    assert audit((S1, S2), [DealRecord(small, (msgs[0], msgs[1], msgs[2]))]) == sender


# --- cheats caught on receipt ------------------------------------------------------


def receive_tampered(deck: HashedDeck, step: int, edit: Callable[[dict[str, Any]], None]) -> DealError:
    msgs = messages(deck)
    value = msgs[step - 1].to_value()
    edit(value)
    v = verifier(deck, msgs[: step - 1])
    with pytest.raises(DealError) as info:
        v.receive(value)
    assert v.step == step - 1  # refused without a change
    return info.value


def _set(field: str, i: int, x: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    def edit(value: dict[str, Any]) -> None:
        value[field][i] = x(value)
    return edit


@pytest.mark.parametrize("step", [1, 2, 3])
def test_a_repeated_card_is_refused_and_blamed(small: HashedDeck, step: int) -> None:
    e = receive_tampered(small, step, _set("cards", 3, lambda v: v["cards"][5]))
    assert isinstance(e, RepeatedCard) and e.player == (2 if step == 2 else 1) and "repeats card" in str(e)


@pytest.mark.parametrize("step", [1, 2, 3])
def test_a_card_carried_over_unkeyed_is_refused(small: HashedDeck, step: int) -> None:
    before = small.cards if step == 1 else messages(small)[step - 2].cards
    e = receive_tampered(small, step, _set("cards", 2, lambda v: before[4]))
    assert isinstance(e, RepeatedCard) and e.player == (2 if step == 2 else 1) and "not keyed" in str(e)


@pytest.mark.parametrize("bad", ["off-curve", "zero", "p", "all-ones"])
@pytest.mark.parametrize("step", [1, 2, 3])
def test_a_card_that_is_no_curve_point_is_refused(small: HashedDeck, step: int, bad: str) -> None:
    x = {"off-curve": off_curve(), "zero": bytes(32), "p": _curve.P.to_bytes(32, "big"),
         "all-ones": b"\xff" * 32}[bad]
    e = receive_tampered(small, step, _set("cards", 1, lambda v: x))
    assert isinstance(e, NotOnCurve) and e.player == (2 if step == 2 else 1)


@pytest.mark.parametrize("step", [2, 3])
def test_a_key_commitment_no_key_gives_blames_its_maker_at_the_first_share(small: HashedDeck, step: int) -> None:
    """A commitment is any 32 bytes on receipt; the true share then fails it, blaming the commitment's maker."""
    m1, m2, m3 = messages(small)
    if step == 2:
        m2 = rebuilt(m2, keys=[bytes(32), *m2.keys[1:]])
    else:
        m3 = rebuilt(m3, keys=[bytes(32), *m3.keys[1:]])
    v = verifier(small, (m1, m2, m3))
    maker = 2 if step == 2 else 1
    with pytest.raises(FalseShare) as info:
        v.check_share(maker, 0, share(S1 if maker == 1 else S2, maker, small, 0))
    assert info.value.player == maker
    assert audit((S1, S2), [DealRecord(small, (m1, m2, m3))]) == maker


@pytest.mark.parametrize("field", ["cards", "keys"])
@pytest.mark.parametrize("change", [-1, +1])
@pytest.mark.parametrize("step", [1, 2, 3])
def test_a_wrong_number_of_cards_is_refused(small: HashedDeck, step: int, change: int, field: str) -> None:
    if step == 1 and field == "keys":
        return

    def edit(value: dict[str, Any]) -> None:
        items = value[field]
        if change < 0:
            items.pop()
        else:
            items.append(foreign_card(small) if field == "cards" else items[0])
    e = receive_tampered(small, step, edit)
    assert isinstance(e, WrongCardCount) and e.player == (2 if step == 2 else 1)


MALFORMED: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("not a map", lambda v: [v["deck"], v["cards"]]),
    ("no cards", lambda v: {"deck": v["deck"]}),
    ("an extra key", lambda v: {**v, "extra": 1}),
    ("keys out of order", lambda v: {"cards": v["cards"], "deck": v["deck"], **({"keys": v["keys"]} if "keys" in v else {})}),
    ("another deck", lambda v: {**v, "deck": "tiles/other"}),
    ("deck id not text", lambda v: {**v, "deck": 7}),
    ("cards not an array", lambda v: {**v, "cards": b"".join(v["cards"])}),
    ("a card as text", lambda v: {**v, "cards": [c.hex() for c in v["cards"]]}),
    ("a card of 31 bytes", lambda v: {**v, "cards": [v["cards"][0][:31], *v["cards"][1:]]}),
    ("a card of 33 bytes", lambda v: {**v, "cards": [b"\x02" + v["cards"][0], *v["cards"][1:]]}),
    ("a card as an integer", lambda v: {**v, "cards": [int.from_bytes(v["cards"][0], "big"), *v["cards"][1:]]}),
    ("a card as None", lambda v: {**v, "cards": [None, *v["cards"][1:]]}),
]


@pytest.mark.parametrize("step", [1, 2, 3])
@pytest.mark.parametrize("name,make", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_messages_are_a_deal_error_blaming_the_sender(small: HashedDeck, step: int, name: str,
                                                                make: Callable[[dict[str, Any]], Any]) -> None:
    msgs = messages(small)
    v = verifier(small, msgs[: step - 1])
    with pytest.raises(MalformedValue) as info:
        v.receive(make(msgs[step - 1].to_value()))
    assert info.value.player == (2 if step == 2 else 1)
    assert "\n" not in str(info.value) and v.step == step - 1


@pytest.mark.parametrize("value", [None, 3, "x", b"x", {}, {"deck": "small", "cards": None, "keys": []}])
def test_garbage_in_place_of_a_message_is_malformed(small: HashedDeck, value: Any) -> None:
    with pytest.raises(MalformedValue):
        DeckDeal(small).receive(value)


@pytest.mark.parametrize("step", [2, 3])
def test_a_key_commitment_of_the_wrong_size_is_malformed(small: HashedDeck, step: int) -> None:
    e = receive_tampered(small, step, _set("keys", 0, lambda v: v["keys"][0][:31]))
    assert isinstance(e, MalformedValue) and e.player == (2 if step == 2 else 1)


# --- cheats caught at the reveal ---------------------------------------------------


def test_a_foreign_point_opens_to_nothing_and_the_audit_blames_its_dealer(small: HashedDeck) -> None:
    """Player 1 puts a valid point that is no card of the deck in its shuffle: caught when it opens."""
    m1, _, _ = messages(small)
    j = 5
    a = _curve.private(deck_keys(S1, 1, small.game, small.deck_id, 8).deck)
    cards = list(m1.cards)
    cards[j] = _curve.multiply(a, _curve.load(foreign_card(small)))
    v = DeckDeal(small)
    v.receive(rebuilt(m1, cards).to_value())
    v.receive(key(S2, small, v.messages[0]).to_value())
    v.receive(rekey(S1, small, v.messages[1]).to_value())
    tau, _ = p2_keys(small)
    bad = tau.index(j)
    for i in range(8):
        if i == bad:
            with pytest.raises(NotACard) as info:
                v.open(i, *shares(small, i))
            assert info.value.player is None and "opens to no card" in str(info.value)
        else:
            v.open(i, *shares(small, i))
    assert bad not in v.opened and len(v.opened) == 7
    assert audit((S1, S2), [DealRecord(small, v.messages)]) == 1


def test_a_copied_card_opens_twice_and_the_audit_blames_player_2(small: HashedDeck) -> None:
    """Player 2 keys one card of the shuffle twice (into positions 0 and 1) and drops another."""
    m1, _, _ = messages(small)
    tau, b = p2_keys(small)
    order = list(tau)
    order[1] = order[0]
    v = DeckDeal(small)
    v.receive(m1.to_value())
    v.receive(keyed_by(small, m1, order, b).to_value())  # distinct values: each copy has its own key
    v.receive(rekey(S1, small, v.messages[1]).to_value())
    first = v.open(0, *shares(small, 0))
    with pytest.raises(CardOpenedTwice) as info:
        v.open(1, *shares(small, 1))
    assert first in str(info.value) and 1 not in v.opened
    assert audit((S1, S2), [DealRecord(small, v.messages)]) == 2


@pytest.mark.parametrize("player", [1, 2])
def test_a_false_share_is_blamed_at_once(small: HashedDeck, player: int) -> None:
    v = verifier(small, messages(small))
    wrong = share(S1 if player == 1 else S2, player, small, 4)  # a true share, but for position 4
    with pytest.raises(FalseShare) as info:
        v.add_share(player, 3, wrong)  # the other player's share has not come: no need to wait for it
    assert info.value.player == player and "position 3" in str(info.value)
    honest = shares(small, 3)
    assert v.add_share(player, 3, honest[player - 1]) is None  # state unchanged: the true share is still taken
    assert v.add_share(3 - player, 3, honest[2 - player]) == expected_labels(small)[3]


@pytest.mark.parametrize("player", [1, 2])
def test_open_card_checks_both_shares(small: HashedDeck, player: int) -> None:
    m1, m2, m3 = messages(small)
    s = list(shares(small, 2))
    s[player - 1] = (int.from_bytes(s[player - 1], "big") + 1).to_bytes(32, "big")
    with pytest.raises(FalseShare) as info:
        open_card(small, m2, m3, 2, s[0], s[1])
    assert info.value.player == player


@pytest.mark.parametrize("value,why", [(None, "not 32"), ("ab" * 16, "not 32"), (b"\x01" * 31, "not 32"),
                                       (bytes(32), "scalar"), (_curve.N.to_bytes(32, "big"), "scalar"),
                                       (b"\xff" * 32, "scalar")])
@pytest.mark.parametrize("player", [1, 2])
def test_malformed_shares_are_a_deal_error(small: HashedDeck, player: int, value: Any, why: str) -> None:
    v = verifier(small, messages(small))
    with pytest.raises(MalformedValue) as info:
        v.add_share(player, 0, value)
    assert info.value.player == player and why in str(info.value)


# --- cheats caught at the audit ----------------------------------------------------


def test_a_false_permutation_of_player_1_opens_fine_but_the_audit_blames_player_1(small: HashedDeck) -> None:
    m1, _, _ = messages(small)
    cards = list(m1.cards)
    cards[0], cards[1] = cards[1], cards[0]
    v = DeckDeal(small)
    v.receive(rebuilt(m1, cards).to_value())
    v.receive(key(S2, small, v.messages[0]).to_value())
    v.receive(rekey(S1, small, v.messages[1]).to_value())
    got = [v.open(i, *shares(small, i)) for i in range(8)]
    assert sorted(got) == sorted(SMALL) and got != expected_labels(small)  # a real, but steered, order
    assert audit((S1, S2), [DealRecord(small, v.messages)]) == 1
    assert audit((S1, S2), [DealRecord(small, v.messages)], check=(2,)) is None


def test_a_false_permutation_of_player_2_is_blamed_on_player_2(small: HashedDeck) -> None:
    m1, _, _ = messages(small)
    tau, b = p2_keys(small)
    order = tau[1:] + tau[:1]
    msgs = (m1, keyed_by(small, m1, order, b), None)
    v = verifier(small, msgs[:2])
    v.receive(rekey(S1, small, v.messages[1]).to_value())
    assert sorted(v.open(i, *shares(small, i)) for i in range(8)) == sorted(SMALL)
    for opened in ({}, v.opened):  # every position opened, none where the secrets put it
        assert audit((S1, S2), [DealRecord(small, v.messages, opened=opened)]) == 2
        assert audit((S1, S2), [DealRecord(small, v.messages, opened=opened)], check=(1,)) is None


def test_a_false_per_card_key_of_player_2_with_its_commitment_is_blamed_at_the_audit(small: HashedDeck) -> None:
    """Player 2 keys card 6 with a key of its choosing, commits to it and shares it: every reveal works."""
    m1, _, _ = messages(small)
    tau, b = p2_keys(small)
    b[6] = 12345
    v = verifier(small, (m1, keyed_by(small, m1, tau, b)))
    v.receive(rekey(S1, small, v.messages[1]).to_value())
    s1 = share(S1, 1, small, 6)
    assert v.open(6, s1, (12345).to_bytes(32, "big")) == expected_labels(small)[6]
    given = (Share(1, 6, s1), Share(2, 6, (12345).to_bytes(32, "big")))
    for opened in ({}, v.opened):  # position 6 opened as dealt: its commitment still gives it away
        assert audit((S1, S2), [DealRecord(small, v.messages, given, opened)]) == 2
        assert audit((S1, None), [DealRecord(small, v.messages, given, opened)], check=(1,)) is None


def test_a_deck_key_not_from_the_secret_is_blamed_though_every_card_opens_as_dealt(small: HashedDeck) -> None:
    """Player 1 deals with a deck key of its choosing and undoes it in its re-key: the final deck is
    the one the secrets give and every position opens right, but the shuffle is not its secret's."""
    a_false = 424242
    a = _curve.private(a_false)
    sigma = deck_keys(S1, 1, small.game, small.deck_id, 8).permutation
    m1 = DealMessage(1, small.deck_id, tuple(_curve.multiply(a, small._points[j]) for j in sigma))
    m2 = key(S2, small, m1)
    k1 = deck_keys(S1, 1, small.game, small.deck_id, 8)
    m3 = DealMessage(3, small.deck_id,
                     tuple(_curve.multiply(_curve.private(k1.cards[i] * pow(a_false, -1, _curve.N) % _curve.N),
                                           m2.point(i)) for i in range(8)),
                     rekey(S1, small, m2).keys)
    v = verifier(small, (m1, m2, m3))
    assert [v.open(i, *shares(small, i)) for i in range(8)] == expected_labels(small)
    given = tuple(Share(p, i, share(S1 if p == 1 else S2, p, small, i)) for i in range(8) for p in (1, 2))
    assert audit((S1, S2), [DealRecord(small, v.messages, given, v.opened)]) == 1


def test_positions_opened_as_dealt_need_no_card_arithmetic_at_the_audit(small: HashedDeck,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """DEAL-FORMAT.md §8: with both secrets, only the shuffle (8 cards) and the positions not opened are
    multiplied; the same audit without the openings multiplies all 24 values."""
    v = verifier(small, messages(small))
    for i in range(5):
        v.open(i, *shares(small, i))
    from basilica_p2p.deal import _audit
    calls = []
    real = _audit.multiply
    monkeypatch.setattr(_audit, "multiply", lambda k, p: calls.append(1) or real(k, p))
    counted = []
    real_shuffle = _audit.shuffle
    monkeypatch.setattr(_audit, "shuffle", lambda s, d: counted.append(len(d)) or real_shuffle(s, d))
    assert audit((S1, S2), [DealRecord(small, v.messages, opened=v.opened)]) is None
    assert (len(calls), counted) == (2 * 3, [8])
    calls.clear()
    assert audit((S1, S2), [DealRecord(small, v.messages)]) is None
    assert len(calls) == 2 * 8


def test_a_per_card_key_not_matching_its_commitment_opens_to_nothing(small: HashedDeck) -> None:
    """Player 2 keys card 6 with one key and commits to the true one: the true share opens no card."""
    m1, _, _ = messages(small)
    tau, b = p2_keys(small)
    wrong = list(b)
    wrong[6] = 777
    v = verifier(small, (m1, keyed_by(small, m1, tau, wrong, commits=b)))
    v.receive(rekey(S1, small, v.messages[1]).to_value())
    with pytest.raises(NotACard):
        v.open(6, *shares(small, 6))
    assert audit((S1, S2), [DealRecord(small, v.messages)]) == 2


def test_a_false_per_card_key_of_player_1_is_blamed_on_player_1(small: HashedDeck) -> None:
    m1, m2, m3 = messages(small)
    cards = list(m3.cards)
    cards[2] = _curve.multiply(_curve.private(99), m2.point(2))
    v = verifier(small, (m1, m2, rebuilt(m3, cards)))
    with pytest.raises(NotACard):
        v.open(2, *shares(small, 2))
    assert audit((S1, S2), [DealRecord(small, v.messages)]) == 1


def test_the_audit_blames_a_false_signed_share_and_a_bad_secret(small: HashedDeck) -> None:
    msgs = messages(small)
    honest = DealRecord(small, msgs, (Share(1, 0, share(S1, 1, small, 0)), Share(2, 0, share(S2, 2, small, 0))))
    assert audit((S1, S2), [honest]) is None
    assert audit((S1, S2), [DealRecord(small, msgs, (Share(2, 1, share(S2, 2, small, 0)),))]) == 2
    assert audit((S1, S2), [DealRecord(small, msgs, (Share(1, 99, bytes(32)),))]) == 1
    assert audit((S1[:31], S2), [honest]) == 1
    assert audit((S1, "secret"), [honest]) == 2
    # The other secret does not reproduce a player's messages: the audit cannot be fooled by a swap.
    assert audit((S2, S1), [honest]) == 1


def test_the_audit_blames_player_1_first_whatever_the_order_of_the_decks(small: HashedDeck, big: HashedDeck) -> None:
    # One blame order (DEAL-FORMAT.md §8), the game's: player 1's secret is published and audited
    # first, so when both cheated player 1 is named, even for a later deck than player 2's cheat.
    good = DealRecord(big, messages(big))
    m1, m2, _ = messages(small)
    swapped = rebuilt(m2, list(reversed(m2.cards)))
    bad_p2 = DealRecord(small, (m1, swapped, rekey(S1, small, swapped)))  # player 1 re-keys what it got
    bad_p1 = DealRecord(big, (rebuilt(good.messages[0], list(reversed(good.messages[0].cards))),
                              *good.messages[1:]))  # type: ignore[arg-type]
    assert audit((S1, S2), [good, bad_p2]) == 2
    assert audit((S1, S2), [good, bad_p2, bad_p1]) == 1
    assert audit((S1, S2), [bad_p1, bad_p2]) == 1
    assert audit((S1, S2), [good, bad_p2, bad_p1], check=(2,)) == 2
    # A malformed secret of player 2 is not reached while player 1's data already fails.
    assert audit((S1, b"short"), [bad_p1]) == 1 and audit((S1, b"short"), [good]) == 2


# --- the machine's order, and the caller's mistakes ----------------------------------


def test_out_of_order_use_is_refused(small: HashedDeck) -> None:
    p1, p2 = DeckDeal(small, 1, S1), DeckDeal(small, 2, S2)
    with pytest.raises(OutOfOrder):
        p2.make()  # player 1 shuffles first
    with pytest.raises(OutOfOrder):
        p1.my_share(0)  # no share before the deck is dealt: the keys would leak early
    with pytest.raises(OutOfOrder):
        p1.receive(shuffle(S1, small).to_value())  # the shuffle is player 1's own to make
    m = p1.make()
    with pytest.raises(MalformedValue):
        p1.receive(m)  # made, it is recorded: player 2's keyed deck is due, and this is no such thing
    p2.receive(m)
    p1.receive(p2.make())
    p2.receive(p1.make())
    with pytest.raises(OutOfOrder):
        p2.receive(p1.messages[2].to_value())
    with pytest.raises(OutOfOrder):
        p1.make()
    p1.open(0, p1.my_share(0), p2.my_share(0))
    with pytest.raises(OutOfOrder):
        p1.open(0, p1.my_share(0), p2.my_share(0))
    p1.add_share(2, 1, p2.my_share(1))
    with pytest.raises(OutOfOrder):
        p1.add_share(2, 1, p2.my_share(1))
    for position in (-1, 8, True, "1"):
        with pytest.raises(InvalidDeck):
            p1.open(position, p1.my_share(0), p2.my_share(0))  # type: ignore[arg-type]


def test_early_open_is_refused(small: HashedDeck) -> None:
    v = verifier(small, messages(small)[:2])
    with pytest.raises(OutOfOrder):
        v.add_share(1, 0, share(S1, 1, small, 0))


@pytest.mark.parametrize("deck_id,labels", [("", ("a",)), ("d", ()), ("d", ("a", "a")), ("d", ("a\n",)),
                                            ("d", ("x" * 65,)), ("d", tuple(str(i) for i in range(513))),
                                            ("d", ["a", "b"]), ("d\t", ("a",))])
def test_invalid_decks(deck_id: str, labels: Any) -> None:
    with pytest.raises(InvalidDeck):
        Deck(deck_id, labels)


def test_bad_secrets_and_game_ids_are_refused(small: HashedDeck) -> None:
    with pytest.raises(MalformedValue):
        shuffle(b"short", small)
    with pytest.raises(InvalidDeck):
        hash_deck(b"\x00" * 31, Deck("d", ("a",)))
    with pytest.raises(InvalidDeck):
        DeckDeal(small, 1, None)


def test_keys_are_nonzero_scalars_and_the_permutation_is_one(big: HashedDeck) -> None:
    for player in (1, 2):
        k = deck_keys(S1, player, GAME, "faces", 98)
        assert sorted(k.permutation) == list(range(98))
        assert all(1 <= c < _curve.N for c in k.cards) and len(set(k.cards)) == 98
    assert 1 <= deck_keys(S1, 1, GAME, "faces", 98).deck < _curve.N
    # Bound to the player, the game and the deck:
    assert deck_keys(S1, 1, GAME, "faces", 98).cards != deck_keys(S1, 2, GAME, "faces", 98).cards
    assert deck_keys(S1, 1, GAME, "faces", 98).cards != deck_keys(S1, 1, GAME, "tiles/x", 98).cards
    assert deck_keys(S1, 1, GAME, "faces", 98).cards != deck_keys(S1, 1, bytes(32), "faces", 98).cards


def test_permutations_are_uniform_on_three_cards() -> None:
    counts: dict[tuple[int, ...], int] = {}
    for i in range(1200):
        p = deck_keys(hashlib.sha256(b"%d" % i).digest(), 2, GAME, "d", 3).permutation
        counts[p] = counts.get(p, 0) + 1
    assert len(counts) == 6 and all(150 <= c <= 250 for c in counts.values())  # 200 expected each


def test_layout_builds_face_cards_and_subdecks() -> None:
    lay = layout([("MOVE-B", ["11"]), ("PROMOTE-Y", ["12", "13"]), ("R", ["14", "15", "16"])])
    assert lay.main == Deck("faces", ("MOVE-B#0", "PROMOTE-Y#0", "PROMOTE-Y#1", "R#0", "R#1", "R#2"))
    assert [d.deck_id for d in lay.decks] == ["faces", "tiles/PROMOTE-Y", "tiles/R"]
    assert lay.known_tile("MOVE-B#0") == "11" and lay.known_tile("R#2") is None
    assert lay.subdeck_position("R#2") == (Deck("tiles/R", ("14", "15", "16")), 2)
    assert lay.subdeck_position("MOVE-B#0") is None
    with pytest.raises(InvalidDeck):
        lay.face_of("R#3")
    for bad in ([("a#b", ["1"])], [("a", ["1"]), ("a", ["2"])], [("a", ["1"]), ("b", ["1"])], [("a", [])]):
        with pytest.raises(InvalidDeck):
            layout(bad)


# --- vectors ------------------------------------------------------------------------


def test_vectors_are_what_the_generator_builds() -> None:
    for name, data in build_vectors().items():
        assert (VECTORS / name).read_bytes() == data, "regenerate: python -m basilica_p2p.vectors.deal --write protocol/vectors"


# Plain integer P-256 (affine coordinates), independent of cryptography and of basilica_p2p.deal.
P = 2**256 - 2**224 + 2**192 + 2**96 - 1
B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
     0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)
Point = tuple[int, int] | None


def rhs(x: int) -> int:
    return (x * x * x - 3 * x + B) % P


def add(p: Point, q: Point) -> Point:
    if p is None:
        return q
    if q is None:
        return p
    if p[0] == q[0] and (p[1] + q[1]) % P == 0:
        return None
    if p == q:
        m = (3 * p[0] * p[0] - 3) * pow(2 * p[1], -1, P) % P
    else:
        m = (q[1] - p[1]) * pow(q[0] - p[0], -1, P) % P
    x = (m * m - p[0] - q[0]) % P
    return x, (m * (p[0] - x) - p[1]) % P


def mul(k: int, p: Point) -> Point:
    out: Point = None
    while k:
        if k & 1:
            out = add(out, p)
        p = add(p, p)
        k >>= 1
    return out


def lift(xb: bytes) -> Point:
    x = int.from_bytes(xb, "big")
    y = pow(rhs(x), (P + 1) // 4, P)
    assert 0 < x < P and y * y % P == rhs(x), "not on the curve"
    return x, y


def xb(p: Point) -> bytes:
    assert p is not None
    return p[0].to_bytes(32, "big")


def tagged(tag: str, *fields: bytes) -> bytes:
    data = tag.encode() + b"\x00" + b"".join(len(f).to_bytes(4, "big") + f for f in fields)
    return hashlib.sha256(data).digest()


def test_vectors_from_scratch() -> None:
    """deal.json re-derived as DEAL-FORMAT.md says, with hashlib and integer arithmetic only."""
    data = json.loads((VECTORS / "deal.json").read_text(encoding="utf-8"))
    game = bytes.fromhex(data["inputs"]["game"])
    s1, s2 = (bytes.fromhex(s) for s in data["inputs"]["secrets"])
    assert mul(N, G) is None and G[1] ** 2 % P == rhs(G[0])  # the constants are P-256's

    def scalar(secret: bytes, player: int, deck: str, kind: bytes, index: int) -> int:
        for counter in range(10):
            k = int.from_bytes(tagged("basilica-p2p/deal/sra-p256-v1/key", secret, bytes([player]), game,
                                      deck.encode(), kind, index.to_bytes(4, "big"), counter.to_bytes(4, "big")), "big")
            if 1 <= k < N:
                return k
        raise AssertionError("no key")

    def permutation(secret: bytes, player: int, deck: str, m: int) -> list[int]:
        stream = b"".join(tagged("basilica-p2p/deal/sra-p256-v1/perm", secret, bytes([player]), game, deck.encode(),
                                 i.to_bytes(4, "big")) for i in range(64))
        draws = iter(int.from_bytes(stream[i:i + 4], "big") for i in range(0, len(stream), 4))
        perm = list(range(m))
        for i in range(m - 1, 0, -1):
            r = next(draws)
            while r >= 2**32 - 2**32 % (i + 1):
                r = next(draws)
            j = r % (i + 1)
            perm[i], perm[j] = perm[j], perm[i]
        return perm

    faces = [f"{face}#{j}" for face, tiles in data["inputs"]["classes"] for j in range(len(tiles))]
    assert data["decks"][0]["labels"] == faces
    for d in data["decks"]:
        deck, labels, m = d["deck"], d["labels"], len(d["labels"])
        cards = []
        for card in d["cards"]:
            for counter in range(card["counter"] + 1):
                x = tagged("basilica-p2p/deal/sra-p256-v1/card", game, deck.encode(), card["label"].encode(),
                           counter.to_bytes(4, "big"))
                v = int.from_bytes(x, "big")
                square = 0 < v < P and pow(rhs(v), (P - 1) // 2, P) == 1  # Euler's criterion
                assert square == (counter == card["counter"])
            assert x.hex() == card["x"]
            cards.append(lift(x))
        a = scalar(s1, 1, deck, b"deck", 0)
        a_i = [scalar(s1, 1, deck, b"card", i) for i in range(m)]
        b_i = [scalar(s2, 2, deck, b"card", i) for i in range(m)]
        sigma, tau = permutation(s1, 1, deck, m), permutation(s2, 2, deck, m)
        assert d["keys"]["p1_permutation"] == sigma and d["keys"]["p2_permutation"] == tau
        assert d["keys"]["p1_card_keys"] == [k.to_bytes(32, "big").hex() for k in a_i]
        d1 = [xb(mul(a, cards[sigma[j]])) for j in range(m)]
        d2 = [xb(mul(b_i[i], lift(d1[tau[i]]))) for i in range(m)]
        d3 = [xb(mul(a_i[i] * pow(a, -1, N) % N, lift(d2[i]))) for i in range(m)]
        assert d["shuffle"]["cards"] == [c.hex() for c in d1]
        assert d["key"]["cards"] == [c.hex() for c in d2]
        def commits(player: int, keys: list[int]) -> list[str]:
            return [tagged("basilica-p2p/deal/sra-p256-v1/key-commitment", game, deck.encode(), bytes([player]),
                           i.to_bytes(4, "big"), k.to_bytes(32, "big")).hex() for i, k in enumerate(keys)]

        assert d["key"]["keys"] == commits(2, b_i)
        assert d["rekey"]["cards"] == [c.hex() for c in d3]
        assert d["rekey"]["keys"] == commits(1, a_i)
        for step, name in ((1, "shuffle"), (2, "key"), (3, "rekey")):
            value = {"deck": deck, "cards": [bytes.fromhex(c) for c in d[name]["cards"]]}
            if step > 1:
                value["keys"] = [bytes.fromhex(k) for k in d[name]["keys"]]
            assert encode(value).hex() == d[name]["msgpack"]
        for i, sh in enumerate(d["shares"]):
            assert (sh["p1"], sh["p2"]) == (a_i[i].to_bytes(32, "big").hex(), b_i[i].to_bytes(32, "big").hex())
            opened = mul(pow(a_i[i] * b_i[i], -1, N), lift(d3[i]))
            assert d["opened"][i] == labels[[c[0] for c in cards].index(opened[0])]  # type: ignore[index]
        assert sorted(d["opened"]) == sorted(labels)
    assert data["audit"] == {"honest": None, "p2_swaps_cards_0_and_1_of_its_key_message_in_deck_faces": 2}
