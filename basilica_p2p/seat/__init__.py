"""A player's seat at a game: the protocol, written once, with no I/O (protocol/PROTOCOL.md §4-§6).

    from basilica_p2p.seat import Seat, StepKind
    seat = Seat(spec, me=identity, entropy=os.urandom)   # a live side
    verifier = Seat(spec, views=False)                    # basilica verify

:class:`Seat` owns the referee, the side's secrets, the clocks and the
making of messages; its drivers (the network session, the in-process
table of local games, the replay walker) move bytes and time.  What it
hands back are typed values: :class:`Step`, :class:`Ask`,
:class:`Outgoing`, :class:`Accepted` / :class:`Refused`, and the events
of ``_events`` (a move applied, a scoring, the clocks, the end).
"""

from ._events import (
    AgainOffered,
    ChatSaid,
    ClocksChanged,
    GameOver,
    GameStarted,
    MoveApplied,
    NothingToTakeBack,
    PeerAway,
    PeerBack,
    Scored,
    SeatEvent,
    Series,
    TakenBack,
    TimeWarning,
    Watching,
)
from ._seat import BAD_REVEAL, OwnMessageRefused, Seat, hello_body
from ._told import Told, ask_for, outcome_of
from ._steps import (
    DECISIONS,
    Accepted,
    Ask,
    Late,
    Outgoing,
    Received,
    Refusal,
    Refused,
    SeatSecrets,
    Step,
    StepKind,
)

__all__ = [
    "Accepted", "AgainOffered", "Ask", "BAD_REVEAL", "ChatSaid", "ClocksChanged", "DECISIONS", "GameOver", "GameStarted", "Late",
    "MoveApplied", "NothingToTakeBack", "Outgoing", "OwnMessageRefused", "PeerAway", "PeerBack", "Received", "Refusal",
    "Refused", "Scored", "Seat", "Series", "SeatEvent", "SeatSecrets", "Step", "StepKind", "TakenBack", "TimeWarning", "Told", "Watching", "ask_for", "hello_body", "outcome_of",
]
