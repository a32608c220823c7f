"""The wormhole's cryptography, byte for byte as magic-wormhole does it (src/wormhole/_key.py).

- ``pake`` phase: JSON ``{"pake_v1": hex(SPAKE2 message)}``, from SPAKE2 in its symmetric
  form over Ed25519, the code as password and the appid as identity.
- The shared key's uses: ``HKDF-SHA256(key, salt=None, info=purpose)``. The verifier is
  purpose ``wormhole:verifier``; each message is sealed under purpose
  ``wormhole:phase:`` + SHA256(sender's side) + SHA256(phase).
- Sealing: NaCl SecretBox (XSalsa20-Poly1305), body = 24-byte random nonce + ciphertext.
"""

from __future__ import annotations

import json
import unicodedata
from hashlib import sha256

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from nacl.exceptions import CryptoError
from nacl.secret import SecretBox
from nacl.utils import random as nacl_random
from spake2 import SPAKE2_Symmetric
from spake2.ed25519_basic import NotOnCurve
from spake2.spake2 import SPAKEError

from ._json import NotJson, parse_json
from .errors import ProtocolViolation

KEY_SIZE = SecretBox.KEY_SIZE  # 32
VERIFIER_PURPOSE = b"wormhole:verifier"
_PAKE_MESSAGE_SIZE = 33  # b"S" (the symmetric side) and an Ed25519 point
_PAKE_BODY_SIZE = 1024  # {"pake_v1": "<66 hex digits>"}, with room for whitespace and more keys


def text_bytes(text: str) -> bytes:
    """How magic-wormhole turns the appid (and a str purpose) into bytes: NFC, then UTF-8."""
    return unicodedata.normalize("NFC", text).encode("utf-8")


class Pake:
    """Our half of SPAKE2: ``body`` goes in the ``pake`` phase, ``finish`` takes the peer's."""

    def __init__(self, password: bytes, appid: str) -> None:
        self._spake = SPAKE2_Symmetric(password, idSymmetric=text_bytes(appid))
        self.body = json.dumps({"pake_v1": self._spake.start().hex()}).encode("utf-8")

    def finish(self, peer_body: bytes) -> bytes:
        """The shared key (right only if both sides used the same code); `ProtocolViolation`
        if the body is not a SPAKE2 message at all."""
        body = parse_json(peer_body, _PAKE_BODY_SIZE)
        pake = body.get("pake_v1") if isinstance(body, dict) else None
        try:
            message = bytes.fromhex(pake) if isinstance(pake, str) else None
        except ValueError:
            message = None
        if message is None:
            why = f" ({body.why})" if isinstance(body, NotJson) else ""
            raise ProtocolViolation(f"the peer's pake message is not JSON holding a hex pake_v1{why}")
        if len(message) != _PAKE_MESSAGE_SIZE:
            raise ProtocolViolation(f"the peer's SPAKE2 message has {len(message)} bytes, not {_PAKE_MESSAGE_SIZE}")
        try:
            key: bytes = self._spake.finish(message)
        # spake2 refuses a bad point with these (a reflected message is a SPAKEError).
        except (SPAKEError, NotOnCurve, ValueError, AssertionError) as e:
            raise ProtocolViolation(f"the peer's SPAKE2 message is invalid ({type(e).__name__})") from None
        return key


def derive_key(key: bytes, purpose: bytes, length: int = KEY_SIZE) -> bytes:
    """magic-wormhole's ``derive_key``: HKDF-SHA256 without salt, ``purpose`` as its info."""
    return HKDF(hashes.SHA256(), length, None, purpose).derive(key)


def _phase_key(key: bytes, side: str, phase: str) -> bytes:
    purpose = b"wormhole:phase:" + sha256(side.encode("ascii")).digest() + sha256(phase.encode("ascii")).digest()
    return derive_key(key, purpose)


def seal(key: bytes, side: str, phase: str, plaintext: bytes) -> bytes:
    """``plaintext`` encrypted for the mailbox as ``side``'s message in ``phase``."""
    box = SecretBox(_phase_key(key, side, phase))
    return bytes(box.encrypt(plaintext, nacl_random(SecretBox.NONCE_SIZE)))


def unseal(key: bytes, side: str, phase: str, body: bytes) -> bytes | None:
    """The plaintext of ``side``'s message in ``phase``, or None if it does not decrypt."""
    try:
        return SecretBox(_phase_key(key, side, phase)).decrypt(body)
    except CryptoError:  # also raised for a body shorter than a nonce
        return None
