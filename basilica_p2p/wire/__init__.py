"""The wire layer: canonical msgpack, signed envelopes, message schemas and their body types, commit-reveal."""

from .canonical import MAX_MESSAGE, decode, encode
from .bodies import (AckBody, ActionBody, Body, ChatBody, CommitBody, DealBody, FaultBody, ForfeitBody, HelloBody, JesterCommitBody,
                     JesterRevealBody, ResultBody, RevealBody, SecretBody, SharesBody, TakebackBody, TimeoutBody, body_of)
from .commit import commitment, game_seed, jester_commitment, new_nonce
from .envelope import PROTOCOL_VERSION, Envelope, open_envelope, public_bytes, seal, signed_by
from .errors import ProtocolError
from .messages import CHAT_TEXT, MAX_DECKS, SCHEMAS, check_body
from .text import as_text, is_text

__all__ = [
    "AckBody", "ActionBody", "Body", "ChatBody", "CommitBody", "DealBody", "FaultBody", "ForfeitBody", "HelloBody",
    "JesterCommitBody", "JesterRevealBody", "ResultBody", "RevealBody", "SecretBody", "SharesBody", "TakebackBody",
    "TimeoutBody", "body_of",
    "CHAT_TEXT", "MAX_DECKS", "MAX_MESSAGE", "PROTOCOL_VERSION", "SCHEMAS", "Envelope", "ProtocolError",
    "as_text", "check_body", "commitment", "decode", "encode", "game_seed", "is_text", "jester_commitment", "new_nonce",
    "open_envelope", "public_bytes", "seal", "signed_by",
]
