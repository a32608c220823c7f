"""Known peers: which key goes with which name, remembered on first contact.

Like ssh's known_hosts: the first time a name is seen its key is stored
and its fingerprint shown; if the name later comes with another key the
client refuses until the user says ``basilica peers trust`` or ``forget``.

Names are compared as a person reads them (``names.look_alike``): a name that
looks like a known one is that name, so ``аlice`` (Cyrillic а) with another
key is refused exactly like ``alice`` with another key.  A look-alike with the
*same* key is the same person and is accepted; the stored name is kept as it
was first seen, since it is the one the user checked, and the spelling a
person chooses today does not change who they are.

The file is ``{"name": "64 hex digits of the public key", ...}``, mode 0600.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from .fingerprint_words import key_for_people
from .identity import write_private
from .names import look_alike, quoted_name

FILE = "known_peers.json"


class PeerKeyMismatch(Exception):
    """A known name (or one that looks like it) presented a different key, or the
    file of known peers is damaged (then ``known_name`` is None)."""

    def __init__(self, message: str, known_name: str | None = None, known_key: bytes | None = None) -> None:
        super().__init__(message)
        self.known_name = known_name
        self.known_key = known_key


@dataclass(frozen=True)
class Check:
    new: bool  # first contact: the key was stored
    fingerprint: str  # both forms a person compares (SHA256 and words)
    known_as: str  # the name stored for this key: the one presented, or a look-alike first seen


def _is_key(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


class KnownPeers:
    def __init__(self, home: Path) -> None:
        self.path = home / FILE

    def load(self) -> dict[str, str]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            raise PeerKeyMismatch(f"{self.path} is damaged; fix or remove it") from None
        if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) and _is_key(v)
                                                 for k, v in data.items()):
            raise PeerKeyMismatch(f"{self.path} is damaged; fix or remove it")
        return data

    def _save(self, data: dict[str, str]) -> None:
        write_private(self.path, (json.dumps(data, indent=1, sort_keys=True) + "\n").encode("utf-8"))

    def look_alikes(self, name: str) -> dict[str, str]:
        """The stored entries whose name looks like ``name`` (its own entry first, if any)."""
        data = self.load()
        found = {name: data[name]} if name in data else {}
        found.update((known, key) for known, key in data.items() if known != name and look_alike(known, name))
        return found

    def check(self, name: str, key: bytes) -> Check:
        """Accept a peer: store it on first contact, refuse a known name, or a look-alike, with another key."""
        found = self.look_alikes(name)
        if not found:
            data = self.load()
            data[name] = key.hex()
            self._save(data)
            return Check(True, key_for_people(key), name)
        for known, hexkey in found.items():
            if hexkey != key.hex():
                raise PeerKeyMismatch(self._refusal(name, key, known, bytes.fromhex(hexkey)),
                                      known, bytes.fromhex(hexkey))
        return Check(False, key_for_people(key), next(iter(found)))

    @staticmethod
    def _refusal(name: str, key: bytes, known: str, known_key: bytes) -> str:
        which = f"{quoted_name(known)}" if known == name else f"{quoted_name(known)}, a name that looks the same,"
        # The name is the peer's own text: quoted for a shell, so that pasting the command
        # can never run anything the peer chose.
        return (f"peer {quoted_name(name)} presented key {key_for_people(key)}, but {which} is known with key "
                f"{key_for_people(known_key)}; if that is expected run: "
                f"basilica peers trust {shlex.quote(name)} {key.hex()} (else do not play)")

    def trust(self, name: str, key: bytes) -> list[str]:
        """Store ``name`` with ``key``, in place of every entry that looks like it; returns the names replaced."""
        data = self.load()
        gone = [known for known in self.look_alikes(name) if known != name]
        for known in gone:
            del data[known]
        data[name] = key.hex()
        self._save(data)
        return gone

    def forget(self, name: str) -> list[str]:
        """Forget ``name`` and every name that looks like it; returns the names forgotten."""
        data = self.load()
        gone = list(self.look_alikes(name))
        for known in gone:
            del data[known]
        if gone:
            self._save(data)
        return gone
