"""The typed bodies of envelopes: one fixed schema per message type.

Each body is a msgpack map whose keys come in exactly the order listed
here; protocol/PROTOCOL.md §4 is the same table in prose.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .canonical import MAX_MESSAGE
from .errors import ProtocolError
from .text import is_text

Checker = Callable[[Any], bool]


def _uint(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**32


def _bin32(v: Any) -> bool:
    return isinstance(v, bytes) and len(v) == 32


def _text(limit: int) -> Checker:
    # Not str.isprintable(): its answer follows the running Python's Unicode version.
    return lambda v: is_text(v, limit)


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _player(v: Any) -> bool:
    return v in (1, 2) and not isinstance(v, bool)


def _ms(v: Any) -> bool:
    # Milliseconds on a clock: a uint, so at most 49 days; the referee bounds it further.
    return _uint(v)


def _clock(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_uint(x) for x in v)


def _limits(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_uint(x) for x in v)


def _envelope(v: Any) -> bool:
    # The envelope a fault cites, whole; it is opened and checked by the referee.
    return isinstance(v, bytes) and 0 < len(v) <= MAX_MESSAGE


def _scores(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_uint(x) for x in v)


CHAT_TEXT = 500  # code points in one line of chat
MAX_DECKS = 64  # decks dealt in one step: the box's face cards and its sub-decks
MAX_SHARES = 512  # cards opened in one round


def _decks(v: Any) -> bool:
    # Each deck's value is checked in full by the deal package (basilica_p2p/deal).
    return isinstance(v, list) and 0 < len(v) <= MAX_DECKS and all(isinstance(x, dict) for x in v)


def _shares(v: Any) -> bool:
    return (isinstance(v, list) and 0 < len(v) <= MAX_SHARES
            and all(isinstance(x, list) and len(x) == 3 and is_text(x[0], 64) and _uint(x[1]) and _bin32(x[2])
                    for x in v))


SCHEMAS: dict[str, tuple[tuple[str, Checker], ...]] = {
    # The handshake: what both peers must agree on before the shuffle.
    "hello": (
        ("protocol", _uint), ("software", _text(64)), ("ruleset", _text(32)), ("festum", _bool),
        ("removal", _bool), ("manifest", _bin32), ("name", _text(64)), ("shuffle", _text(32)),
    ),
    # Commit-reveal of the seed (protocol/PROTOCOL.md §5).
    "commit": (("commitment", _bin32),),
    "reveal": (("nonce", _bin32),),
    # Lockstep play: a decision in notation, and the other side's acknowledgement.
    "action": (("ply", _uint), ("action", _text(200))),
    "ack": (("ply", _uint), ("state", _bin32)),
    # Jester colours when both players own Jesters (D24): commit, then reveal.
    "jcommit": (("ply", _uint), ("commitment", _bin32)),
    "jreveal": (("ply", _uint), ("action", _text(200)), ("salt", _bin32)),
    # The end: each side signs the result; or one side records the other's forfeit.
    "result": (("scores", _scores), ("state", _bin32), ("end", _text(32))),
    "forfeit": (("loser", _player), ("reason", _text(200))),
    # The hidden deal, sra-p256-v1 only (protocol/PROTOCOL.md §5b): deal steps, shares that
    # open cards, and each side's secret at the end for the audit.
    "deal": (("decks", _decks),),
    "shares": (("shares", _shares),),
    "secret": (("secret", _bin32),),
    # Protocol 2, games with a clock (protocol/PROTOCOL.md §4a): a claim that the other
    # side's time ran out, with the claimant's own figures.
    "timeout": (("loser", _player), ("left", _ms), ("waited", _ms)),
    # A takeback (local games only, §4b): the asker names the ply to go back to, the
    # other side signs the same message as its consent.
    "takeback": (("to", _uint),),
    # Protocol 3 (§4c): the other side signed a message that breaks the rules; this ends the
    # game with that message, whole, as the proof.
    "fault": (("loser", _player), ("message", _envelope)),
    # Protocol 3: a line of chat, outside the game's chain, state and rules (§4d): its sender's
    # running number and the text.
    "chat": (("n", _uint), ("text", _text(CHAT_TEXT))),
}

# Fields a body may carry after its schema's own, each present or not but always in this
# order: protocol 2's time control in the hello and the mover's own remaining time in a
# decision (a game with a clock), protocol 3's limits in the hello (a network game).  Which
# a game must have is the referee's to check; a game of protocol 1 sends the bodies above
# unchanged, so its bytes are those of version 1.
EXTENSIONS: dict[str, tuple[tuple[str, Checker], ...]] = {
    "hello": (("clock", _clock), ("limits", _limits)),
    "action": (("clock", _ms),),
    "jcommit": (("clock", _ms),),
}


def check_body(type_: str, body: Any) -> None:
    """Raise :class:`ProtocolError` unless ``body`` fits the schema of ``type_`` exactly."""
    schema = SCHEMAS.get(type_) if isinstance(type_, str) else None
    if schema is None:
        raise ProtocolError(f"unknown message type {str(type_)[:40]!r}")
    if not isinstance(body, dict):
        raise ProtocolError(f"{type_} body must be a map")
    names = tuple(name for name, _ in schema)
    keys = tuple(body)
    if keys[:len(names)] == names and len(keys) > len(names):
        tail = [field for field in EXTENSIONS.get(type_, ()) if field[0] in keys[len(names):]]
        if tuple(name for name, _ in tail) == keys[len(names):]:  # known extensions, in their order
            schema = schema + tuple(tail)
            names = keys
    if tuple(body) != names:
        for name in names:
            if name not in body:
                raise ProtocolError(f"{type_} body: field {name!r} missing")
        known = names + tuple(name for name, _ in EXTENSIONS.get(type_, ()))
        for name in body:
            if name not in known:
                raise ProtocolError(f"{type_} body: unknown field {str(name)[:40]!r}")
        raise ProtocolError(f"{type_} body: fields out of order")
    for name, ok in schema:
        if not ok(body[name]):
            raise ProtocolError(f"{type_} body: bad value for {name!r}")
