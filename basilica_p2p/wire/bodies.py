"""The bodies of envelopes as types: one ``TypedDict`` per message type of :data:`.messages.SCHEMAS`.

A body is still the plain map that msgpack reads and writes (its bytes are what is signed), so
these add nothing at run time: they tell the type checker which fields a body of each type has,
once :func:`.messages.check_body` (which every envelope passes when it is opened or sealed) has
checked it.  :func:`body_of` is that step for the reader of an :class:`.envelope.Envelope`.
Optional fields are the extensions of :data:`.messages.EXTENSIONS` (protocol 2's clock figures,
protocol 3's limits).
"""

# No `from __future__ import annotations`: TypedDict reads NotRequired[...] from real annotations
# only (on Python 3.11, a string annotation's field counts as required at run time).
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict, overload

from .envelope import Envelope


class HelloBody(TypedDict):
    protocol: int
    software: str
    ruleset: str
    festum: bool
    removal: bool
    manifest: bytes
    name: str
    shuffle: str
    clock: NotRequired[list[int]]  # [base minutes, increment seconds] (protocol 2)
    limits: NotRequired[list[int]]  # the agreed limits (protocol 3)


class CommitBody(TypedDict):
    commitment: bytes


class RevealBody(TypedDict):
    nonce: bytes


class ActionBody(TypedDict):
    ply: int
    action: str
    clock: NotRequired[int]  # the mover's own remaining time, ms (protocol 2)


class AckBody(TypedDict):
    ply: int
    state: bytes


class JesterCommitBody(TypedDict):
    ply: int
    commitment: bytes
    clock: NotRequired[int]


class JesterRevealBody(TypedDict):
    ply: int
    action: str
    salt: bytes


class ResultBody(TypedDict):
    scores: list[int]
    state: bytes
    end: str


class ForfeitBody(TypedDict):
    loser: int  # 1 or 2
    reason: str


class DealBody(TypedDict):
    # One deal step a deck (basilica_p2p.deal's DeckStep when made): a map is all check_body
    # knows of a received one; the deal package checks the rest.
    decks: list[Mapping[str, object]]


class SharesBody(TypedDict):
    shares: list[list[Any]]  # [deck id, position, 32-byte share] each


class SecretBody(TypedDict):
    secret: bytes


class TimeoutBody(TypedDict):
    loser: int
    left: int
    waited: int


class TakebackBody(TypedDict):
    to: int


class FaultBody(TypedDict):
    loser: int
    message: bytes  # the cited envelope, whole


class ChatBody(TypedDict):
    n: int  # the sender's running number of its lines
    text: str


# Any message's body, as its maker builds it for :func:`.envelope.seal` (which checks that it is
# the body of the type named).
Body = (HelloBody | CommitBody | RevealBody | ActionBody | AckBody | JesterCommitBody | JesterRevealBody
        | ResultBody | ForfeitBody | DealBody | SharesBody | SecretBody | TimeoutBody | TakebackBody | FaultBody
        | ChatBody)


@overload
def body_of(env: Envelope, type_: Literal["hello"]) -> HelloBody: ...
@overload
def body_of(env: Envelope, type_: Literal["commit"]) -> CommitBody: ...
@overload
def body_of(env: Envelope, type_: Literal["reveal"]) -> RevealBody: ...
@overload
def body_of(env: Envelope, type_: Literal["action"]) -> ActionBody: ...
@overload
def body_of(env: Envelope, type_: Literal["ack"]) -> AckBody: ...
@overload
def body_of(env: Envelope, type_: Literal["jcommit"]) -> JesterCommitBody: ...
@overload
def body_of(env: Envelope, type_: Literal["jreveal"]) -> JesterRevealBody: ...
@overload
def body_of(env: Envelope, type_: Literal["result"]) -> ResultBody: ...
@overload
def body_of(env: Envelope, type_: Literal["forfeit"]) -> ForfeitBody: ...
@overload
def body_of(env: Envelope, type_: Literal["deal"]) -> DealBody: ...
@overload
def body_of(env: Envelope, type_: Literal["shares"]) -> SharesBody: ...
@overload
def body_of(env: Envelope, type_: Literal["secret"]) -> SecretBody: ...
@overload
def body_of(env: Envelope, type_: Literal["timeout"]) -> TimeoutBody: ...
@overload
def body_of(env: Envelope, type_: Literal["takeback"]) -> TakebackBody: ...
@overload
def body_of(env: Envelope, type_: Literal["fault"]) -> FaultBody: ...
@overload
def body_of(env: Envelope, type_: Literal["chat"]) -> ChatBody: ...
def body_of(env: Envelope, type_: str) -> Any:
    """The body of ``env``, an envelope of type ``type_``, typed as that message's body."""
    if env.type != type_:
        raise ValueError(f"a {env.type} envelope read as a {type_}")
    # An Envelope exists only once check_body has passed its body: that is the typing's warrant.
    return env.body
