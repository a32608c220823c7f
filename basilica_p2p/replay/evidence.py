"""Evidence that a key signed two histories of one game: proof of cheating, checkable offline.

A game is one hash chain: every envelope names the one before it.  An
honest client appends to its own replay only, so it signs messages of one
history.  A key that signed a message on each of two branches of a game
(two different messages at one sequence number, and anything that descends
from them) tried to show two different games: say, the moves it played in
the real game and a forfeit claim appended to a cut copy of it.

Format ``basilica-evidence/2`` (canonical msgpack)::

    {"format": "basilica-evidence/2", "a": [envelope, ...], "b": [envelope, ...], "hello": envelope or nil}

``a`` and ``b`` are runs of a chain: each starts at the same sequence
number with a different message (where the two histories part) and each
envelope after the first names the one before it (``prev``).  The last
envelope of each run is signed by the same key: the accused.  ``hello`` is
the accused's signed hello for the game, which gives its seat and name.
Everything else is checked: every signature, one game id throughout.

The older ``basilica-evidence/1`` (``{"format", "a": envelope, "b": envelope}``:
one key, one sequence number, two different messages) is the special case of
runs one message long; files in that format are still confirmed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..identity import fingerprint
from ..safefile import create_new, open_regular
from ..wire import Envelope, ProtocolError, decode, encode, open_envelope

FORMAT_V1 = "basilica-evidence/1"
FORMAT = "basilica-evidence/2"
# A run is never longer than a game; the whole file stays small enough to read at once.
MAX_RUN = 10_000
MAX_FILE = 64 * 1024 * 1024


class EvidenceError(Exception):
    """A file that is not a valid proof; ``str(e)`` is one line."""


@dataclass(frozen=True)
class Proof:
    """What a confirmed evidence file proves."""

    key: bytes  # who signed both histories
    game: bytes
    seq: int  # where the histories part
    a: Envelope  # the accused's message on each branch
    b: Envelope
    name: str = ""  # from its hello, if the file holds one
    seat: int | None = None  # 0 or 1

    def line(self) -> str:
        who = f"key {fingerprint(self.key)}"
        if self.seat is not None:
            who = f"player {self.seat + 1} ({self.name}), {who},"
        if self.a.seq == self.b.seq == self.seq:
            what = f"two different messages ({self.a.type} and {self.b.type}) for seq {self.seq}"
        else:
            what = (f"two histories that part at seq {self.seq}: {self.a.type} at seq {self.a.seq} "
                    f"on one and {self.b.type} at seq {self.b.seq} on the other")
        return f"{who} signed {what} of game {self.game.hex()[:16]}"


@dataclass(frozen=True)
class EvidenceVerdict:
    path: str
    ok: bool
    message: str

    def line(self) -> str:
        return f"{self.path}: {'confirmed' if self.ok else 'NOT confirmed'}: {self.message}"


def encode_evidence(a: list[bytes], b: list[bytes], hello: bytes | None) -> bytes:
    """The evidence file's bytes for two runs (see the module docstring) and the accused's hello."""
    return encode({"format": FORMAT, "a": list(a), "b": list(b), "hello": hello})


def write_evidence(path: Path, a: list[bytes], b: list[bytes], hello: bytes | None) -> None:
    """Create the evidence file; it must not exist yet (nor a link planted in its place)."""
    create_new(path, encode_evidence(a, b, hello))


def _run(value: Any, side: str) -> list[Envelope]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_RUN or not all(isinstance(x, bytes) for x in value):
        raise EvidenceError(f"{side} must be a list of 1 to {MAX_RUN} envelopes")
    run = [open_envelope(x) for x in value]
    for before, env in zip(run, run[1:]):
        if env.seq != before.seq + 1 or env.prev != before.hash:
            raise EvidenceError(f"{side}: seq {env.seq} does not follow seq {before.seq} (the chain is broken)")
    return run


def prove(data: Any) -> Proof:
    """Check decoded evidence; :class:`EvidenceError` or :class:`ProtocolError` says what is wrong."""
    if not isinstance(data, dict) or "format" not in data:
        raise EvidenceError(f"not a {FORMAT} file")
    if data["format"] == FORMAT_V1 and tuple(data) == ("format", "a", "b"):
        if not isinstance(data["a"], bytes) or not isinstance(data["b"], bytes):
            raise EvidenceError("a and b must be envelopes")
        data = {"format": FORMAT, "a": [data["a"]], "b": [data["b"]], "hello": None}
    elif data["format"] != FORMAT or tuple(data) != ("format", "a", "b", "hello"):
        raise EvidenceError(f"not a {FORMAT} file")
    a, b = _run(data["a"], "a"), _run(data["b"], "b")
    game = a[0].game
    if any(env.game != game for env in a + b):
        raise EvidenceError("the messages are of different games")
    if a[0].seq != b[0].seq:
        raise EvidenceError("the two runs do not start at the same sequence number")
    if a[0].raw == b[0].raw:
        raise EvidenceError("the two histories do not part: both runs start with the same message")
    key = a[-1].sender
    if b[-1].sender != key:
        raise EvidenceError("the last messages of the two runs are signed by different keys")
    name, seat = "", None
    if data["hello"] is not None:
        if not isinstance(data["hello"], bytes):
            raise EvidenceError("hello must be an envelope")
        hello = open_envelope(data["hello"])
        if hello.type != "hello" or hello.game != game or hello.sender != key or hello.seq not in (0, 1):
            raise EvidenceError("hello is not the accused's hello for this game")
        name, seat = hello.body["name"], hello.seq
    return Proof(key, game, a[0].seq, a[-1], b[-1], name, seat)


def check_evidence(path: Path) -> EvidenceVerdict:
    name = str(path)
    try:
        with open_regular(path) as f:
            raw = f.read(MAX_FILE + 1)
        if raw[:8] == b"BASILREP":
            return EvidenceVerdict(name, False, "this is a replay file, not an evidence file (verify it without --evidence)")
        if len(raw) > MAX_FILE:
            raise EvidenceError(f"over {MAX_FILE} bytes: not an evidence file")
        try:
            data = decode(raw, max_size=MAX_FILE)
        except ProtocolError:
            raise EvidenceError(f"not a {FORMAT} file") from None
        proof = prove(data)
    except OSError as e:
        return EvidenceVerdict(name, False, f"cannot read: {e.strerror}")
    except (EvidenceError, ProtocolError) as e:
        return EvidenceVerdict(name, False, str(e))
    return EvidenceVerdict(name, True, proof.line())


def is_evidence_file(path: Path) -> bool:
    """Whether ``path`` looks like an evidence file (a msgpack map naming an evidence format)."""
    try:
        with open_regular(path) as f:
            head = f.read(64)
    except OSError:
        return False
    return head[:1] in (b"\x83", b"\x84") and b"basilica-evidence/" in head


__all__ = ["FORMAT", "FORMAT_V1", "EvidenceError", "EvidenceVerdict", "Proof", "check_evidence",
           "encode_evidence", "is_evidence_file", "prove", "write_evidence"]
