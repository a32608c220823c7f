"""Evidence of equivocation: one key signed two different messages for one sequence number.

A peer that does this is trying to show the two sides different games.
The honest side writes both envelopes to an evidence file::

    canonical msgpack {"format": "basilica-evidence/1", "a": bin, "b": bin}

and anyone can check it offline: both signatures are valid, by the same
key, for the same game and sequence number, and the messages differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..identity import fingerprint
from ..wire import ProtocolError, decode, open_envelope

FORMAT = "basilica-evidence/1"


@dataclass(frozen=True)
class EvidenceVerdict:
    path: str
    ok: bool
    message: str

    def line(self) -> str:
        return f"{self.path}: {'confirmed' if self.ok else 'NOT confirmed'}: {self.message}"


def check_evidence(path: Path) -> EvidenceVerdict:
    name = str(path)
    try:
        raw = path.read_bytes()
        if raw[:8] == b"BASILREP":
            return EvidenceVerdict(name, False, "this is a replay file, not an evidence file (verify it without --evidence)")
        try:
            data = decode(raw, max_size=3 * 65536)
        except ProtocolError:
            raise ProtocolError(f"not a {FORMAT} file") from None
        if not isinstance(data, dict) or tuple(data) != ("format", "a", "b") or data["format"] != FORMAT:
            raise ProtocolError(f"not a {FORMAT} file")
        if not isinstance(data["a"], bytes) or not isinstance(data["b"], bytes):
            raise ProtocolError("a and b must be envelopes")
        a, b = open_envelope(data["a"]), open_envelope(data["b"])
    except OSError as e:
        return EvidenceVerdict(name, False, f"cannot read: {e.strerror}")
    except ProtocolError as e:
        return EvidenceVerdict(name, False, str(e))
    if a.raw == b.raw:
        return EvidenceVerdict(name, False, "the two messages are the same")
    if a.sender != b.sender:
        return EvidenceVerdict(name, False, "the two messages are signed by different keys")
    if a.game != b.game or a.seq != b.seq:
        return EvidenceVerdict(name, False, "the two messages are for different games or sequence numbers")
    return EvidenceVerdict(name, True, f"key {fingerprint(a.sender)} signed two different messages "
                           f"({a.type} and {b.type}) for seq {a.seq} of game {a.game.hex()[:16]}")
