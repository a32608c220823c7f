"""What a seat may be asked to do next, and what it hands back."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..engine import Action, Observation
    from ..wire import Envelope
    from ._events import SeatEvent


class StepKind(StrEnum):
    """The message that comes next, named as on the wire (PROTOCOL.md §6)."""

    HELLO = "hello"
    COMMIT = "commit"
    REVEAL = "reveal"
    DEAL = "deal"
    SHARES = "shares"
    ACTION = "action"
    ACK = "ack"
    JCOMMIT = "jcommit"
    JREVEAL = "jreveal"
    SECRET = "secret"
    RESULT = "result"
    FORFEIT = "forfeit"
    TIMEOUT = "timeout"
    TAKEBACK = "takeback"
    FAULT = "fault"
    CHAT = "chat"  # never due: a line either side may say at any time (protocol 3)
    DONE = "done"


# The steps that wait for someone's thinking: a clock runs, an agent is asked.
DECISIONS = frozenset({StepKind.ACTION, StepKind.JCOMMIT})


@dataclass(frozen=True)
class Step:
    """The message due next and the seat (0 or 1) that sends it; ``DONE`` once the game is over."""

    kind: StepKind
    who: int

    @property
    def decision(self) -> bool:
        return self.kind in DECISIONS


@dataclass(frozen=True)
class Ask:
    """A decision put to an agent: what it sees, and every legal answer.

    For the second chooser of a secret Jester round (D24) ``view`` is built
    without the first chooser's colours, which it must not see.
    """

    kind: StepKind
    view: Observation
    legal: tuple[Action, ...]
    ply: int


@dataclass(frozen=True)
class SeatSecrets:
    """What one side alone knows and must keep across a crash (``basilica resume``).

    ``nonce``: the commit-reveal nonce; ``jester``: our secret Jester choice
    (notation) and its salt; ``deal``: the sra-p256-v1 deal secret, from
    which every deal step and share of ours follows.
    """

    nonce: bytes = b""
    jester: tuple[str, bytes] | None = None
    deal: bytes = b""


@dataclass(frozen=True)
class Outgoing:
    """A message this seat made, already checked and taken into its own state.

    ``secrets`` is set when the message commits to a secret of ours: those
    secrets must be durable before the message is recorded or sent.  A
    driver records ``envelope.raw``, sends it, and tells ``events`` on.
    """

    envelope: Envelope
    events: tuple[SeatEvent, ...] = ()
    secrets: SeatSecrets | None = None


@dataclass(frozen=True)
class Late:
    """Our decision came after our clock ran out: it is not sent, the other side claims the game.

    ``left`` and ``waited`` are the milliseconds this seat measured (what was
    left when the decision became due, and what it took)."""

    loser: int
    left: int
    waited: int
    events: tuple[SeatEvent, ...] = ()


class Refusal(StrEnum):
    """Why a message from the other side was not taken."""

    INVALID = "invalid"  # not a well-formed, well-signed envelope
    EQUIVOCATION = "equivocation"  # a second, different message for a sequence number its signer used
    CROSSED = "crossed"  # the peer's forfeit or claim crossed our message in flight: the records part
    OUT_OF_TURN = "out-of-turn"  # a message for a sequence number that was ours
    NOT_PEER = "not-peer"  # signed by a key that is not the other player's
    TAKEBACK = "takeback"  # a takeback where takebacks are not played
    FORFEIT_NAMES_US = "forfeit-names-us"  # a forfeit declaring that we lost
    RULES = "rules"  # the referee refused it (PROTOCOL.md §6 and the rules)
    CHAT = "chat"  # a line of chat that is not where it says it was said, or out of order (§4d)


@dataclass(frozen=True)
class Accepted:
    """A message taken: its envelope and what it set off."""

    envelope: Envelope
    events: tuple[SeatEvent, ...] = ()


@dataclass(frozen=True)
class Refused:
    """A message not taken; the seat's state is as before it.

    ``reason`` is one line for us; ``notice`` one line for the sender;
    ``evidence`` the two envelopes one key signed for one sequence number
    (``EQUIVOCATION``), the one we held first.
    """

    kind: Refusal
    reason: str
    notice: str
    evidence: tuple[bytes, bytes] | None = None
    detail: str = ""  # the check's own words (what ``basilica verify`` prints for a record)
    # A message of the other side, due at this very place, that breaks the rules: in a game of
    # protocol 3 the seat may end the game with it as proof (Seat.claim_fault).
    citable: bytes = b""


Received = Accepted | Refused
