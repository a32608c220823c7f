"""The wire layer: canonical msgpack, signed envelopes, message schemas and their body types, commit-reveal."""

from .canonical import MAX_MESSAGE, decode, encode
from .bodies import (AckBody, ActionBody, ChatBody, CommitBody, DealBody, FaultBody, ForfeitBody, HelloBody, JesterCommitBody,
                     JesterRevealBody, ResultBody, RevealBody, SecretBody, SharesBody, TakebackBody, TimeoutBody, body_of)
from .commit import commitment, game_seed, jester_commitment, new_nonce
from .envelope import PROTOCOL_VERSION, Envelope, open_envelope, public_bytes, seal
from .errors import ProtocolError
from .messages import CHAT_TEXT, SCHEMAS, SHUFFLE_SCHEME, check_body
from .text import as_text

__all__ = [
    "AckBody", "ActionBody", "ChatBody", "CommitBody", "DealBody", "FaultBody", "ForfeitBody", "HelloBody", "JesterCommitBody",
    "JesterRevealBody", "ResultBody", "RevealBody", "SecretBody", "SharesBody", "TakebackBody", "TimeoutBody", "body_of",
    "CHAT_TEXT", "MAX_MESSAGE", "PROTOCOL_VERSION", "SCHEMAS", "SHUFFLE_SCHEME", "Envelope", "ProtocolError", "check_body",
    "commitment", "decode", "encode", "game_seed", "jester_commitment", "new_nonce", "open_envelope",
    "as_text", "public_bytes", "seal",
]
