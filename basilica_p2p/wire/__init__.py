"""The wire layer: canonical msgpack, signed envelopes, message schemas, commit-reveal."""

from .canonical import MAX_MESSAGE, decode, encode
from .commit import commitment, game_seed, jester_commitment, new_nonce
from .envelope import PROTOCOL_VERSION, Envelope, open_envelope, public_bytes, seal, signed_by
from .errors import ProtocolError
from .messages import MAX_DECKS, SCHEMAS, SHUFFLE_SCHEME, check_body
from .text import is_text

__all__ = [
    "MAX_DECKS", "MAX_MESSAGE", "PROTOCOL_VERSION", "SCHEMAS", "SHUFFLE_SCHEME", "Envelope", "ProtocolError",
    "check_body", "commitment", "decode", "encode", "game_seed", "is_text", "jester_commitment", "new_nonce",
    "open_envelope", "public_bytes", "seal", "signed_by",
]
