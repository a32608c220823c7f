"""Known peers: which key goes with which name, remembered on first contact.

Like ssh's known_hosts: the first time a name is seen its key is stored
and its fingerprint shown; if the name later comes with another key the
client refuses until the user says ``basilica peers trust`` or ``forget``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..identity import fingerprint

FILE = "known_peers.json"


class PeerKeyMismatch(Exception):
    """A known name presented a different key."""


@dataclass(frozen=True)
class Check:
    new: bool  # first contact: the key was stored
    fingerprint: str


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
        if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            raise PeerKeyMismatch(f"{self.path} is damaged; fix or remove it")
        return data

    def _save(self, data: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)  # never a half-written file

    def check(self, name: str, key: bytes) -> Check:
        """Accept a peer: store it on first contact, refuse a known name with another key."""
        data = self.load()
        known = data.get(name)
        if known is None:
            data[name] = key.hex()
            self._save(data)
            return Check(True, fingerprint(key))
        if known != key.hex():
            raise PeerKeyMismatch(
                f"peer {name!r} presented key {fingerprint(key)}, but {name!r} is known with key "
                f"{fingerprint(bytes.fromhex(known))}; if that is expected run "
                f"'basilica peers trust {name} {key.hex()}', else do not play"
            )
        return Check(False, fingerprint(key))

    def trust(self, name: str, key: bytes) -> None:
        data = self.load()
        data[name] = key.hex()
        self._save(data)

    def forget(self, name: str) -> bool:
        data = self.load()
        if name not in data:
            return False
        del data[name]
        self._save(data)
        return True
