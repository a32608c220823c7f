"""The three deal messages, shares and opening: pure functions over a :class:`HashedDeck`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

from ._curve import N, inverse, key_commitment, load, multiply, private
from ._deck import HashedDeck
from ._errors import FalseShare, InvalidDeck, MalformedValue, NotACard, NotOnCurve, RepeatedCard, WrongCardCount
from ._keys import card_key, deck_key, permutation

SHUFFLE, KEY, REKEY = 1, 2, 3
STEP_NAMES = {SHUFFLE: "shuffle", KEY: "key", REKEY: "rekey"}
SENDER = {SHUFFLE: 1, KEY: 2, REKEY: 1}
FIELDS = {SHUFFLE: ("deck", "cards"), KEY: ("deck", "cards", "keys"), REKEY: ("deck", "cards", "keys")}


class _DeckStepFields(TypedDict):
    deck: str
    cards: list[bytes]


# Not NotRequired[...]: under `from __future__ import annotations` Python 3.11 counts such a
# field as required at run time; a total=False subclass says it either way.
class DeckStep(_DeckStepFields, total=False):
    """A deal message as it travels, one deck's entry of a ``deal`` body (DEAL-FORMAT.md §6)."""

    keys: list[bytes]  # steps 2 and 3 only


@dataclass(frozen=True)
class DealMessage:
    """One deal message: ``step`` 1 (player 1's shuffle), 2 (player 2's key) or 3 (player 1's re-key).

    ``cards`` are 32-byte x-coordinates; ``keys`` (steps 2 and 3) the
    sender's per-card key commitments (:func:`key_commitment`), 32 bytes each.
    """

    step: int
    deck_id: str
    cards: tuple[bytes, ...]
    keys: tuple[bytes, ...] = ()
    # The loaded points of ``cards`` when a parse has already loaded them, so no card is decompressed twice.
    _points: tuple[Any, ...] = field(default=(), repr=False, compare=False)

    @property
    def sender(self) -> int:
        return SENDER[self.step]

    def to_value(self) -> DeckStep:
        """The msgpack-able body: ``{"deck": str, "cards": [bin32...]}`` plus ``"keys": [bin32...]`` after step 1."""
        value = DeckStep(deck=self.deck_id, cards=list(self.cards))
        if self.step != SHUFFLE:
            value["keys"] = list(self.keys)
        return value

    def point(self, i: int) -> Any:
        p = self._points[i] if self._points else load(self.cards[i])
        if p is None:  # pragma: no cover - messages come from parse_message or from our own arithmetic
            raise NotOnCurve(f"card {i} of the {STEP_NAMES[self.step]} message is not on the curve", self.sender)
        return p


def check_secret(secret: object, player: int) -> bytes:
    if not isinstance(secret, bytes) or len(secret) != 32:
        raise MalformedValue(f"player {player}'s deal secret is not 32 bytes", player)
    return secret


def shuffle(secret: bytes, deck: HashedDeck) -> DealMessage:
    """Player 1's message: D1[j] = x(a · C[σ[j]]), one deck key a and its permutation σ."""
    secret = check_secret(secret, 1)
    a = private(deck_key(secret, 1, deck.game, deck.deck_id))
    sigma = permutation(secret, 1, deck.game, deck.deck_id, len(deck))
    return DealMessage(SHUFFLE, deck.deck_id, tuple(multiply(a, deck._points[j]) for j in sigma))


def key(secret: bytes, deck: HashedDeck, shuffled: DealMessage) -> DealMessage:
    """Player 2's message: D2[i] = x(b_i · D1[τ[i]]), with a commitment to each b_i."""
    secret = check_secret(secret, 2)
    tau = permutation(secret, 2, deck.game, deck.deck_id, len(deck))
    cards, keys = [], []
    for i, j in enumerate(tau):
        b = card_key(secret, 2, deck.game, deck.deck_id, i)
        cards.append(multiply(private(b), shuffled.point(j)))
        keys.append(key_commitment(deck.game, deck.deck_id, 2, i, b))
    return DealMessage(KEY, deck.deck_id, tuple(cards), tuple(keys))


def rekey(secret: bytes, deck: HashedDeck, keyed: DealMessage) -> DealMessage:
    """Player 1's last message: D3[i] = x(a_i · a⁻¹ · D2[i]), with a commitment to each a_i."""
    secret = check_secret(secret, 1)
    a_inv = inverse(deck_key(secret, 1, deck.game, deck.deck_id))
    cards, keys = [], []
    for i in range(len(deck)):
        a_i = card_key(secret, 1, deck.game, deck.deck_id, i)
        keys.append(key_commitment(deck.game, deck.deck_id, 1, i, a_i))
        cards.append(multiply(private(a_i * a_inv % N), keyed.point(i)))
    return DealMessage(REKEY, deck.deck_id, tuple(cards), tuple(keys))


def share(secret: bytes, player: int, deck: HashedDeck, position: int) -> bytes:
    """Player ``player``'s share for ``position``: its per-card key, 32 bytes big-endian."""
    if player not in (1, 2):
        raise InvalidDeck(f"player {player!r} is not 1 or 2")
    _check_position(deck, position)
    return card_key(check_secret(secret, player), player, deck.game, deck.deck_id, position).to_bytes(32, "big")


def _check_position(deck: HashedDeck, position: object) -> int:
    if not isinstance(position, int) or isinstance(position, bool) or not 0 <= position < len(deck):
        raise InvalidDeck(f"position {position!r} is not one of deck {deck.deck_id!r}'s 0..{len(deck) - 1}")
    return position


def parse_share(value: object, player: int) -> int:
    """A share from the network: 32 bytes holding 1 ≤ s < n."""
    if not isinstance(value, bytes) or len(value) != 32:
        raise MalformedValue(f"player {player}'s share is not 32 bytes", player)
    s = int.from_bytes(value, "big")
    if not 1 <= s < N:
        raise MalformedValue(f"player {player}'s share is not a scalar 1..n-1", player)
    return s


def check_share(deck: HashedDeck, keyed: DealMessage, position: int, value: object, player: int) -> int:
    """Parse a share and check it against the sender's commitment for ``position``."""
    s = parse_share(value, player)
    if key_commitment(deck.game, deck.deck_id, player, position, s) != keyed.keys[position]:
        raise FalseShare(f"player {player}'s share for position {position} of deck {keyed.deck_id!r} "
                         "does not match its key commitment", player)
    return s


def open_card(deck: HashedDeck, keyed: DealMessage, rekeyed: DealMessage, position: int,
              share_p1: bytes, share_p2: bytes) -> str:
    """The label at ``position`` of the dealt deck: x((a_i·b_i)⁻¹ · D3[i]) looked up among the deck's cards.

    ``keyed``/``rekeyed`` are the step 2 and 3 messages.  A share that fails
    its commitment raises :class:`FalseShare` blaming its sender; a value
    that is no card raises :class:`NotACard` (only the audit can blame).
    """
    _check_position(deck, position)
    return open_checked(deck, rekeyed, position, check_share(deck, rekeyed, position, share_p1, 1),
                        check_share(deck, keyed, position, share_p2, 2))


def open_checked(deck: HashedDeck, rekeyed: DealMessage, position: int, s1: int, s2: int) -> str:
    """:func:`open_card` with both shares already checked against their commitments."""
    x = multiply(private(inverse(s1 * s2 % N)), rekeyed.point(position))
    label = deck.label_of(x)
    if label is None:
        raise NotACard(f"position {position} of deck {deck.deck_id!r} opens to no card of the deck")
    return label


def parse_message(deck: HashedDeck, step: int, value: object, previous: DealMessage | None) -> DealMessage:
    """Check a deal message from the network; ``previous`` is the message of step - 1 (None for step 1).

    Checks, in order, each failure blaming the sender: the shape (a map with
    exactly the step's keys, in order), the deck id, the card count, every
    card a valid x-coordinate (0 < x < p, on the curve), no card repeated
    within the message or carried over unkeyed from the step before (or,
    for step 1, a bare card point).  A key commitment is any 32 bytes: one
    that no key gives fails the first share checked against it.
    """
    if step not in SENDER:
        raise InvalidDeck(f"deal step {step!r} is not 1, 2 or 3")
    if (previous is None) != (step == SHUFFLE) or (previous is not None and previous.step != step - 1):
        raise InvalidDeck(f"the {STEP_NAMES[step]} message is checked against the message before it")
    sender, name, m = SENDER[step], STEP_NAMES[step], len(deck)
    if not isinstance(value, dict) or list(value) != list(FIELDS[step]):
        raise MalformedValue(f"the {name} message is not a map with keys {', '.join(FIELDS[step])}", sender)
    if value["deck"] != deck.deck_id:
        raise MalformedValue(f"the {name} message is for deck {str(value['deck'])[:70]!r}, "
                             f"not {deck.deck_id!r}", sender)
    cards, keys = value["cards"], value.get("keys", [])
    for what, items, size in (("cards", cards, 32), ("keys", keys, 32)):
        if not isinstance(items, list):
            raise MalformedValue(f"{what} of the {name} message is not an array", sender)
        if what == "cards" or step != SHUFFLE:
            if len(items) != m:
                raise WrongCardCount(f"the {name} message has {len(items)} {what}, deck {deck.deck_id!r} "
                                     f"has {m} cards", sender)
        for i, item in enumerate(items):
            if not isinstance(item, bytes) or len(item) != size:
                raise MalformedValue(f"{what}[{i}] of the {name} message is not {size} bytes", sender)
    points = tuple(load(c) for c in cards)
    for i, p in enumerate(points):
        if p is None:
            raise NotOnCurve(f"card {i} of the {name} message is not the x of a P-256 point", sender)
    seen: dict[bytes, int] = {}
    before = set(deck.cards if previous is None else previous.cards)
    for i, c in enumerate(cards):
        if c in seen:
            raise RepeatedCard(f"card {i} of the {name} message repeats card {seen[c]}", sender)
        if c in before:
            raise RepeatedCard(f"card {i} of the {name} message is not keyed: the step before holds it", sender)
        seen[c] = i
    return DealMessage(step, deck.deck_id, tuple(cards), tuple(keys), points)
