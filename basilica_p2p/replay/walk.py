"""One walk through a replay file, for everyone who reads one.

A replay's records go, in order, into a :class:`~basilica_p2p.seat.Seat`
(a verifier's, or a live side's being resumed), and a :class:`Visitor` is
told each record taken, with what it set off, and the first one refused.
``basilica verify``, ``replay show``, ``replay export``, ``replay html``
and ``basilica resume`` are each one visitor (python-chess reads PGN the
same way: one reader, many visitors)::

    seat = seat_for(replay, manifests)
    walk(replay, seat, visitor)
"""

from __future__ import annotations

import os

from ..engine import EngineError, Manifest, Options, Ruleset, default_manifest
from ..identity import Identity
from ..referee import CLOCK_PROTOCOL, LIMITS_PROTOCOL, GameSpec
from ..schemes import SCHEMES
from ..seat import Accepted, Refused, Seat, SeatSecrets
from ..wire import PROTOCOL_VERSION, ProtocolError
from .file import Header, ReplayError, ReplayFile


class Visitor:
    """What a walk tells; every method does nothing unless overridden."""

    def taken(self, number: int, got: Accepted, seat: Seat) -> None:
        """Record ``number`` (1 is the first envelope) passed every check; ``got.events`` is what it set off."""

    def refused(self, number: int, offset: int, got: Refused, seat: Seat) -> None:
        """Record ``number``, at byte ``offset``, failed a check: the walk stops there."""


def known_manifests(extra: list[Manifest] | None = None) -> dict[str, Manifest]:
    """The manifests a replay may name: the default one and any the user passed."""
    return {m.hash: m for m in [default_manifest(), *(extra or [])]}


def spec_from_replay(replay: ReplayFile, manifests: dict[str, Manifest]) -> GameSpec:
    """The game a replay's header describes; :class:`ReplayError` (record 0) if no game can be."""
    spec = spec_of(replay.header, manifests)
    if isinstance(spec, str):
        raise ReplayError(0, replay.offsets[0], spec)
    return spec


def spec_of(h: Header, manifests: dict[str, Manifest]) -> GameSpec | str:
    """The game a replay header describes (a file's, or one a host sends its watchers), or why
    no game can be played under it, in one line."""
    if h.protocol not in (PROTOCOL_VERSION, CLOCK_PROTOCOL, LIMITS_PROTOCOL):
        return (f"protocol version {h.protocol} is not supported "
                f"(this client speaks {PROTOCOL_VERSION} to {LIMITS_PROTOCOL})")
    if h.shuffle not in SCHEMES:
        return f"shuffle scheme {h.shuffle!r} is not supported (this client knows {', '.join(SCHEMES)})"
    manifest = manifests.get(h.manifest.hex())
    if manifest is None:
        return (f"the game uses manifest {h.manifest.hex()[:16]}..., which is not the default one: "
                "pass it with --manifest")
    try:
        options = Options(Ruleset(h.ruleset), h.festum, h.removal)
    except (EngineError, ValueError) as e:
        return f"bad header: {e}"
    return GameSpec(h.game, (h.players[0][0], h.players[1][0]), (h.players[0][1], h.players[1][1]), options,
                    manifest, h.shuffle, h.clock, h.limits)


def seat_for(replay: ReplayFile, manifests: dict[str, Manifest], me: Identity | None = None,
             secrets: SeatSecrets = SeatSecrets(), views: bool = True) -> Seat:
    """The seat a replay is walked into: a verifier's, or ``me``'s with its ``secrets`` (resume).
    :class:`ReplayError` (record 0) for a header no game can be played under."""
    spec = spec_from_replay(replay, manifests)
    try:
        if me is None:
            return Seat(spec, views=views)
        # A resumed seat draws nothing until its next secret is due, and then it is a live
        # side again: the operating system's randomness, as at the start of a game.
        return Seat(spec, me, entropy=os.urandom, secrets=secrets, views=views)
    except ProtocolError as e:
        raise ReplayError(0, replay.offsets[0], str(e)) from None


def walk(replay: ReplayFile, seat: Seat, *visitors: Visitor) -> Refused | None:
    """Every record of ``replay`` into ``seat``, in order, each visitor told of each; the first
    refusal, or None if all were taken."""
    for number, raw in enumerate(replay.records, start=1):
        got = seat.receive(raw, known=True)
        if isinstance(got, Refused):
            for visitor in visitors:
                visitor.refused(number, replay.offsets[number], got, seat)
            return got
        for visitor in visitors:
            visitor.taken(number, got, seat)
    return None
