"""Invite and reply codes: the line ``basilica host`` prints and the other player pastes.

An invite ``bas1:...`` carries the host's Ed25519 key, a 16-byte single-use
secret, an expiry and up to 16 candidate addresses.  When no candidate
connects, the joiner prints a reply ``bas1r:...`` (its key, its own
candidates and a MAC proving it holds the invite) for the host to paste back.
On the connection itself the joiner proves it holds the invite with
:func:`knock_mac` over a fresh challenge from the host.

The format, byte by byte, is protocol/INVITE-FORMAT.md; test vectors are
protocol/vectors/invite.json (``python -m basilica_p2p.vectors.invite``).
This module is pure: no clock (the caller passes ``now``), no randomness
(the caller draws the secret), no sockets.  Every failure to read a code is
an :class:`InviteError` whose message is one line a person can act on.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from ipaddress import IPv4Address, IPv6Address, ip_address
from typing import Any

from ..wire import ProtocolError, decode, encode

KINDS = ("lan", "ipv6", "pcp", "natpmp", "upnp", "stun", "public")  # where a candidate came from
INVITE_PREFIX = "bas1"
REPLY_PREFIX = "bas1r"
WATCH_PREFIX = "bas1w"  # a watch code: the invite's fields, for watching only (net/watch.py)
KEY_SIZE = 32
SECRET_SIZE = 16
MAC_SIZE = 32
CHALLENGE_SIZE = 32
CHECKSUM_SIZE = 4
MAX_CANDIDATES = 16
MAX_CODE = 1024  # characters of text given to a parser, whitespace included
MAX_EXPIRES = 2**64 - 1  # the largest msgpack integer

# Domain tags: each hash or MAC input starts with its own, so no value made for
# one purpose is ever valid for another.
INVITE_TAG = b"basilica-p2p/invite/v1\x00"
REPLY_TAG = b"basilica-p2p/reply/v1\x00"
KNOCK_TAG = b"basilica-p2p/knock/v1\x00"
REPLY_MAC_TAG = b"basilica-p2p/reply-mac/v1\x00"
INVITE_ID_TAG = b"basilica-p2p/invite-id/v1\x00"
WATCH_TAG = b"basilica-p2p/watch/v1\x00"
WATCH_KNOCK_TAG = b"basilica-p2p/watch-knock/v1\x00"

_BASE32 = frozenset("abcdefghijklmnopqrstuvwxyz234567")
_HEAD = re.compile(r"bas([1-9][0-9]{0,5})([rw]?)")
_BROADCAST = IPv4Address("255.255.255.255")


# --- errors -----------------------------------------------------------------


class InviteError(ValueError):
    """A code or a value that cannot be used; ``str(e)`` is one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(" ".join(reason.split()))
        self.reason = str(self)


class MalformedCode(InviteError):
    """Not a code: bad characters, bad length, bad structure, or fields out of bounds."""


class ChecksumError(InviteError):
    """The text is shaped like a code but its checksum does not match: a typo or a cut."""

    def __init__(self) -> None:
        super().__init__("the code has a typo or is cut short: its checksum does not match; copy it again")


class UnknownVersion(InviteError):
    """A code from a newer version of the format (``bas2:`` ...)."""

    def __init__(self, version: str) -> None:
        super().__init__(f"this code is for a newer version of basilica ({version}); upgrade basilica to use it")
        self.version = version


class ExpiredInvite(InviteError):
    """An invite whose expiry is not after ``now``."""

    def __init__(self, expires: int, now: int) -> None:
        super().__init__(f"this invite expired {_ago(now - expires)} ({_utc(expires)}); ask the host for a new one")
        self.expires = expires
        self.now = now


class WrongCodeKind(InviteError):
    """A reply where an invite is expected, or the reverse."""

    def __init__(self, found: str, want: str = INVITE_PREFIX) -> None:
        if found == WATCH_PREFIX:
            reason = (f"this is a watch code ({WATCH_PREFIX}:), which lets you watch, not play: "
                      "open it with 'basilica watch CODE'")
        elif want == WATCH_PREFIX:
            reason = ("this code is for a player's seat, not for watching: ask the host for its watch code "
                      f"({WATCH_PREFIX}:...)")
        elif found == REPLY_PREFIX:
            reason = (f"this is a reply code ({REPLY_PREFIX}:), not an invite: "
                      "paste it into the host's 'basilica host', which is waiting for it")
        else:
            reason = (f"this is an invite code ({INVITE_PREFIX}:), not a reply: "
                      "it goes to 'basilica join' on the other player's machine")
        super().__init__(reason)
        self.found = found


class InvalidValue(InviteError):
    """A value that cannot go into a code (a bad candidate, a key of the wrong size): a caller's mistake."""


def _ago(seconds: int) -> str:
    if seconds <= 0:
        return "just now"
    for unit, size in (("day", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if unit == 'day' and n > 1 else ''} ago"
    return f"{seconds} s ago"


def _utc(when: int) -> str:
    try:
        return "at " + datetime.fromtimestamp(when, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):  # outside what datetime can show
        return f"at unix time {when}"


# --- values -----------------------------------------------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_bytes(name: str, value: Any, size: int) -> None:
    if not isinstance(value, bytes) or len(value) != size:
        raise InvalidValue(f"the {name} must be {size} bytes")


def _address(host: Any, kind: str) -> IPv4Address | IPv6Address:
    if not isinstance(host, str):
        raise InvalidValue("a candidate host is IP address text")
    try:
        ip = ip_address(host)
    except ValueError:
        raise InvalidValue(f"candidate host {host[:60]!r} is not an IPv4 or IPv6 address") from None
    if isinstance(ip, IPv6Address):
        if ip.scope_id is not None:
            raise InvalidValue(f"candidate {host} has a zone id, which means nothing on another machine")
        if ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped  # one address, one spelling: the IPv4 form
        elif ip.is_link_local:
            raise InvalidValue(f"candidate {ip} is IPv6 link-local: it needs a zone id and does not reach other machines")
    if ip.is_unspecified or ip.is_multicast or ip == _BROADCAST:
        raise InvalidValue(f"candidate {ip} cannot be connected to (unspecified, multicast or broadcast)")
    if kind == "ipv6" and ip.version != 6:
        raise InvalidValue(f"candidate {ip} of kind ipv6 is not an IPv6 address")
    return ip


@dataclass(frozen=True)
class Candidate:
    """An address where a peer may be reached; ``host`` is normalised (``str(ipaddress.ip_address(...))``)."""

    kind: str
    host: str
    port: int

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or self.kind not in KINDS:
            raise InvalidValue(f"candidate kind {self.kind!r} is not one of {', '.join(KINDS)}")
        object.__setattr__(self, "host", str(_address(self.host, self.kind)))
        if not _is_int(self.port) or not 1 <= self.port <= 65535:
            raise InvalidValue(f"candidate port {self.port!r} is not in 1..65535")

    @property
    def address(self) -> IPv4Address | IPv6Address:
        return ip_address(self.host)


def _candidates(value: Any) -> tuple[Candidate, ...]:
    if not isinstance(value, (tuple, list)):
        raise InvalidValue("candidates are a tuple of Candidate")
    if len(value) > MAX_CANDIDATES:
        raise InvalidValue(f"{len(value)} candidates: at most {MAX_CANDIDATES} fit in a code")
    if not all(isinstance(c, Candidate) for c in value):
        raise InvalidValue("candidates are a tuple of Candidate")
    return tuple(value)


@dataclass(frozen=True)
class Invite:
    """What ``bas1:`` carries.  The secret is left out of ``repr`` so a logged invite gives no seat away."""

    key: bytes
    secret: bytes = field(repr=False)
    expires: int
    candidates: tuple[Candidate, ...]

    def __post_init__(self) -> None:
        _check_bytes("host key", self.key, KEY_SIZE)
        _check_bytes("invite secret", self.secret, SECRET_SIZE)
        if not _is_int(self.expires) or not 0 <= self.expires <= MAX_EXPIRES:
            raise InvalidValue(f"the expiry {self.expires!r} is not an unsigned 64-bit number of unix seconds")
        object.__setattr__(self, "candidates", _candidates(self.candidates))


@dataclass(frozen=True)
class Reply:
    """What ``bas1r:`` carries: the joiner's key, its proof (:func:`reply_mac`) and its candidates."""

    key: bytes
    mac: bytes
    candidates: tuple[Candidate, ...]

    def __post_init__(self) -> None:
        _check_bytes("joiner key", self.key, KEY_SIZE)
        _check_bytes("reply MAC", self.mac, MAC_SIZE)
        object.__setattr__(self, "candidates", _candidates(self.candidates))


# --- MACs and ids -----------------------------------------------------------


def _field(data: bytes) -> bytes:
    return len(data).to_bytes(2, "big") + data


def knock_mac(secret: bytes, challenge: bytes, host_key: bytes, joiner_key: bytes) -> bytes:
    """The joiner's proof on a connection: HMAC-SHA256 over the host's fresh challenge and both keys."""
    return _proof(KNOCK_TAG, ("invite secret", secret), challenge, host_key, ("joiner key", joiner_key))


def _proof(tag: bytes, secret: tuple[str, bytes], challenge: bytes, host_key: bytes, other: tuple[str, bytes]) -> bytes:
    _check_bytes(secret[0], secret[1], SECRET_SIZE)
    _check_bytes("challenge", challenge, CHALLENGE_SIZE)
    _check_bytes("host key", host_key, KEY_SIZE)
    _check_bytes(other[0], other[1], KEY_SIZE)
    message = tag + _field(challenge) + _field(host_key) + _field(other[1])
    return hmac.new(secret[1], message, hashlib.sha256).digest()


def check_knock(inv: Invite, challenge: bytes, joiner_key: bytes, mac: bytes) -> bool:
    """Whether ``mac`` is :func:`knock_mac` for this invite, compared in constant time."""
    return hmac.compare_digest(knock_mac(inv.secret, challenge, inv.key, joiner_key), mac)


def _candidates_value(candidates: tuple[Candidate, ...]) -> list[list[Any]]:
    return [[KINDS.index(c.kind), c.address.packed, c.port] for c in candidates]


def reply_mac(secret: bytes, host_key: bytes, joiner_key: bytes, candidates: tuple[Candidate, ...]) -> bytes:
    """HMAC-SHA256 binding a reply's key and candidates to the invite it answers."""
    _check_bytes("invite secret", secret, SECRET_SIZE)
    _check_bytes("host key", host_key, KEY_SIZE)
    _check_bytes("joiner key", joiner_key, KEY_SIZE)
    listed = encode(_candidates_value(_candidates(candidates)))
    message = REPLY_MAC_TAG + _field(host_key) + _field(joiner_key) + _field(listed)
    return hmac.new(secret, message, hashlib.sha256).digest()


def make_reply(inv: Invite, joiner_key: bytes, candidates: Iterable[Candidate]) -> Reply:
    """The reply a joiner with ``joiner_key``, reachable at ``candidates``, sends back to the host."""
    listed = tuple(candidates)
    return Reply(joiner_key, reply_mac(inv.secret, inv.key, joiner_key, listed), listed)


def check_reply(inv: Invite, r: Reply) -> bool:
    """Whether ``r`` was made by someone holding ``inv`` (constant-time compare)."""
    return hmac.compare_digest(reply_mac(inv.secret, inv.key, r.key, r.candidates), r.mac)


def invite_id(inv: Invite) -> str:
    """16 hex digits naming the invite in logs and in the host's list of used codes; it reveals nothing of the secret."""
    return hashlib.sha256(INVITE_ID_TAG + inv.key + inv.secret).digest()[:8].hex()


# --- text -------------------------------------------------------------------


def _checksum(tag: bytes, payload: bytes) -> bytes:
    return hashlib.sha256(tag + payload).digest()[:CHECKSUM_SIZE]


def _base32(data: bytes) -> str:
    return base64.b32encode(data).decode("ascii").rstrip("=").lower()


def _code(prefix: str, tag: bytes, payload: bytes) -> str:
    return f"{prefix}:{_base32(payload + _checksum(tag, payload))}"


def _invite_payload(inv: Invite) -> bytes:
    return encode([inv.key, inv.secret, inv.expires, _candidates_value(inv.candidates)])


def _reply_payload(r: Reply) -> bytes:
    return encode([r.key, r.mac, _candidates_value(r.candidates)])


def format_invite(inv: Invite) -> str:
    """``bas1:`` and the invite in lowercase base32."""
    return _code(INVITE_PREFIX, INVITE_TAG, _invite_payload(inv))


def format_reply(r: Reply) -> str:
    """``bas1r:`` and the reply in lowercase base32."""
    return _code(REPLY_PREFIX, REPLY_TAG, _reply_payload(r))


def _body(text: Any, want: str) -> str:
    """The base32 part of a code of kind ``want``, lowercase; the prefix, version and characters checked."""
    if not isinstance(text, str):
        raise MalformedCode("a code is text")
    if len(text) > MAX_CODE:
        raise MalformedCode(f"the text is {len(text)} characters, over the {MAX_CODE} a code may have: paste only the code")
    code = "".join(text.split())  # a terminal or a chat may have wrapped it
    if not code:
        raise MalformedCode(f"the code is empty: paste the code that starts with {want}:")
    if not code.isascii():
        raise MalformedCode("the code has characters no code has: copy it again")
    head, colon, body = code.lower().partition(":")
    match = _HEAD.fullmatch(head) if colon else None
    if match is None:
        raise MalformedCode(f"this is not a basilica code: it should start with {want}:")
    version = match.group(1)
    if version != "1":
        raise UnknownVersion(f"bas{version}")
    if head != want:
        raise WrongCodeKind(head, want)
    bad = next((c for c in body if c not in _BASE32), None)
    if bad is not None:
        raise MalformedCode(f"the code has a character no code has ({bad!r}): copy it again")
    return body


def _open(text: Any, want: str, tag: bytes) -> tuple[Any, bytes]:
    """The decoded payload of a code and its bytes, once the checksum matches."""
    body = _body(text, want)
    if len(body) % 8 in (1, 3, 6):  # lengths base32 without padding never has
        raise MalformedCode("the code is cut short or has a character too many: copy it again")
    data = base64.b32decode(body.upper() + "=" * (-len(body) % 8))
    if _base32(data) != body:  # the last character sets bits past the data: one code, one spelling
        raise MalformedCode("the code is cut short or its end is mistyped: copy all of it again")
    if len(data) <= CHECKSUM_SIZE:
        raise MalformedCode("the code is cut short: copy all of it again")
    payload, check = data[:-CHECKSUM_SIZE], data[-CHECKSUM_SIZE:]
    if check != _checksum(tag, payload):
        raise ChecksumError()
    try:
        return decode(payload, max_size=len(payload)), payload
    except ProtocolError as e:
        raise MalformedCode(f"the code is damaged ({e}): ask for a new one") from None


def _damaged(what: str, why: str) -> MalformedCode:
    # The checksum matched, so no typo: whatever wrote the code is broken.
    return MalformedCode(f"the {what} code is damaged ({why}): ask for a new one")


def _fields(value: Any, what: str, n: int) -> list[Any]:
    if not isinstance(value, list) or len(value) != n:
        raise _damaged(what, f"not an array of {n} fields")
    return value


def _read_candidates(value: Any, what: str) -> tuple[Candidate, ...]:
    if not isinstance(value, list):
        raise _damaged(what, "the candidates are not an array")
    if len(value) > MAX_CANDIDATES:
        raise _damaged(what, f"{len(value)} candidates, over {MAX_CANDIDATES}")
    out = []
    for i, item in enumerate(value, 1):
        if not isinstance(item, list) or len(item) != 3:
            raise _damaged(what, f"candidate {i} is not [kind, address, port]")
        kind, packed, port = item
        if not _is_int(kind) or not 0 <= kind < len(KINDS):
            raise _damaged(what, f"candidate {i} has an unknown kind")
        if not isinstance(packed, bytes) or len(packed) not in (4, 16):
            raise _damaged(what, f"candidate {i}'s address is not 4 or 16 bytes")
        try:
            out.append(Candidate(KINDS[kind], str(ip_address(packed)), port))
        except InvalidValue as e:
            raise _damaged(what, e.reason) from None
    return tuple(out)


def _canonical(payload: bytes, again: bytes, what: str) -> None:
    # Decoding is strict field by field; this catches what normalising changed
    # (an IPv4 address sent as IPv4-mapped IPv6), so each value has one code.
    if again != payload:
        raise _damaged(what, "not the canonical encoding")


def parse_invite(text: str, now: int) -> Invite:
    """The invite in ``text`` (whitespace and letter case ignored), refused if it expired by ``now``."""
    return _read_invite(text, now, INVITE_PREFIX, INVITE_TAG, "invite")


def _read_invite(text: str, now: int, prefix: str, tag: bytes, what: str) -> Invite:
    """An invite's fields under ``prefix`` (an invite, a watch code), checked and unexpired."""
    value, payload = _open(text, prefix, tag)
    key, secret, expires, candidates = _fields(value, what, 4)
    try:
        inv = Invite(key, secret, expires, _read_candidates(candidates, what))
    except InvalidValue as e:
        raise _damaged(what, e.reason) from None
    _canonical(payload, _invite_payload(inv), what)
    if now >= inv.expires:
        raise ExpiredInvite(inv.expires, now)
    return inv


@dataclass(frozen=True)
class WatchCode:
    """What ``bas1w:`` carries: an invite's fields (the host's key, a secret of its own, an
    expiry, the watch listener's candidates) and, if the host waits for watchers on one, a
    transit relay (its IP address and port)."""

    key: bytes
    secret: bytes = field(repr=False)
    expires: int
    candidates: tuple[Candidate, ...]
    relay: tuple[str, int] | None = None

    def __post_init__(self) -> None:
        Invite(self.key, self.secret, self.expires, self.candidates)  # the same checks
        if self.relay is not None:
            Candidate("public", self.relay[0], self.relay[1])  # an address and a port, as a candidate's
            object.__setattr__(self, "relay", (str(ip_address(self.relay[0])), self.relay[1]))


def _watch_payload(code: WatchCode) -> bytes:
    relay = None if code.relay is None else [ip_address(code.relay[0]).packed, code.relay[1]]
    return encode([code.key, code.secret, code.expires, _candidates_value(code.candidates), relay])


def format_watch(code: WatchCode) -> str:
    """``bas1w:`` and a watch code in lowercase base32, for watching only."""
    return _code(WATCH_PREFIX, WATCH_TAG, _watch_payload(code))


def parse_watch(text: str, now: int) -> WatchCode:
    """The watch code in ``text``; an invite or reply given instead says what it is."""
    value, payload = _open(text, WATCH_PREFIX, WATCH_TAG)
    key, secret, expires, candidates, relay = _fields(value, "watch", 5)
    if relay is not None and not (isinstance(relay, list) and len(relay) == 2 and isinstance(relay[0], bytes)
                                  and len(relay[0]) in (4, 16)):
        raise _damaged("watch", "the relay is not [address, port]")
    try:
        code = WatchCode(key, secret, expires, _read_candidates(candidates, "watch"),
                         None if relay is None else (str(ip_address(relay[0])), relay[1]))
    except InvalidValue as e:
        raise _damaged("watch", e.reason) from None
    _canonical(payload, _watch_payload(code), "watch")
    if now >= code.expires:
        raise ExpiredInvite(code.expires, now)
    return code


def watch_mac(secret: bytes, challenge: bytes, host_key: bytes, watcher_key: bytes) -> bytes:
    """A watcher's proof that it holds the watch code: as :func:`knock_mac`, under its own tag."""
    return _proof(WATCH_KNOCK_TAG, ("watch secret", secret), challenge, host_key, ("watcher key", watcher_key))


def parse_reply(text: str) -> Reply:
    """The reply in ``text`` (whitespace and letter case ignored); check it with :func:`check_reply`."""
    value, payload = _open(text, REPLY_PREFIX, REPLY_TAG)
    key, mac, candidates = _fields(value, "reply", 3)
    try:
        r = Reply(key, mac, _read_candidates(candidates, "reply"))
    except InvalidValue as e:
        raise _damaged("reply", e.reason) from None
    _canonical(payload, _reply_payload(r), "reply")
    return r
