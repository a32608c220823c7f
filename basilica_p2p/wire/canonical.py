"""Canonical msgpack: one value, exactly one byte string.

Allowed values: nil, booleans, integers (-2**63 .. 2**64-1), binary
strings, UTF-8 strings, arrays and maps with string keys.  Floats and
extension types are refused.  The encoding is the one ``msgpack.packb``
writes with ``use_bin_type=True`` (always the smallest form), maps in the
order their keys are given.  :func:`decode` accepts bytes only if encoding
the decoded value gives back exactly the same bytes; that one check refuses
non-minimal integers and lengths, duplicate map keys, the old raw string
type, and trailing bytes.
"""

from __future__ import annotations

from typing import Any

import msgpack

from .errors import ProtocolError

MAX_MESSAGE = 64 * 1024  # the cap on one encoded message
MAX_DEPTH = 16

_INT_MIN = -(2**63)
_INT_MAX = 2**64 - 1


def _check(value: Any, depth: int = 0) -> None:
    if depth > MAX_DEPTH:
        raise ProtocolError("value nested too deeply")
    if value is None or isinstance(value, (bool, bytes, str)):
        return
    if isinstance(value, float):
        raise ProtocolError("floats are not allowed")
    if isinstance(value, int):
        if not _INT_MIN <= value <= _INT_MAX:
            raise ProtocolError("integer out of range")
        return
    if isinstance(value, list):
        for v in value:
            _check(v, depth + 1)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ProtocolError("map keys must be strings")
            _check(v, depth + 1)
        return
    raise ProtocolError(f"type {type(value).__name__} is not allowed in a message")


def encode(value: Any) -> bytes:
    """The canonical bytes of ``value`` (raises ProtocolError for a value outside the schema)."""
    _check(value)
    try:
        packed: bytes = msgpack.packb(value, use_bin_type=True)  # msgpack is untyped: its result is Any
        return packed
    except UnicodeEncodeError:
        raise ProtocolError("text that is not valid Unicode (a lone surrogate)") from None


def _no_ext(code: int, data: bytes) -> Any:
    raise ProtocolError("extension types are not allowed")


def decode(data: bytes, max_size: int = MAX_MESSAGE) -> Any:
    """Decode canonical bytes; anything else raises :class:`ProtocolError`."""
    if not isinstance(data, (bytes, bytearray)):
        raise ProtocolError("a message is bytes")
    if len(data) > max_size:
        raise ProtocolError(f"message of {len(data)} bytes is over the {max_size}-byte cap")
    if not data:
        raise ProtocolError("empty message")
    n = len(data)
    try:
        value = msgpack.unpackb(
            bytes(data), raw=False, use_list=True, strict_map_key=True, ext_hook=_no_ext,
            max_str_len=n, max_bin_len=n, max_array_len=n, max_map_len=n, max_ext_len=0,
        )
    except ProtocolError:
        raise
    except msgpack.ExtraData:
        raise ProtocolError("trailing bytes after the message") from None
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError, UnicodeDecodeError, OverflowError) as e:
        raise ProtocolError(f"not valid msgpack ({type(e).__name__})") from None
    _check(value)  # refuses floats and every other type outside the schema
    # Decoded text is valid UTF-8, so packing cannot fail here; the comparison
    # refuses every non-minimal or duplicate-key encoding at once.
    if msgpack.packb(value, use_bin_type=True) != bytes(data):
        raise ProtocolError("not the canonical encoding (non-minimal form, duplicate key or wrong string type)")
    return value
