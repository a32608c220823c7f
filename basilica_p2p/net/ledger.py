"""The games each of our keys signed a hello for: a key never signs two hellos for one game id.

Player 1 alone chooses a game's id.  A hostile player 1 could start a
second game with the id of an earlier one; if we signed a hello (and a
commitment, and moves) in it too, our key would have signed two histories of
one game id, which ``basilica verify`` rightly reads as proof of cheating
(protocol/PROTOCOL.md §9) against *us*.  Refusing an id only when its replay
is still in the replay folder is not enough (another ``--replay-dir``, a
deleted file), so every id a key signs a hello for is written here first,
under the home directory, and never signed again.

File ``games_signed`` (mode 0600): one line per hello, ``KEYHEX GAMEHEX``.
"""

from __future__ import annotations

import os
from pathlib import Path

FILE = "games_signed"
_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class LedgerError(Exception):
    """The ledger cannot be read or written; ``str(e)`` is one line."""


class GameLedger:
    """Pairs (key, id) signed once each; ``file`` names the list (also ``invites_used``, net/invite_meeting.py)."""

    def __init__(self, home: Path, file: str = FILE) -> None:
        self.path = home / file

    def signed(self, key: bytes, game: bytes) -> bool:
        """Whether ``key`` already signed a hello for ``game``."""
        line = f"{key.hex()} {game.hex()}"
        try:
            with open(self.path, encoding="ascii", errors="replace") as f:
                return any(entry.rstrip("\n") == line for entry in f)
        except FileNotFoundError:
            return False
        except OSError as e:
            raise LedgerError(f"cannot read {self.path}: {e.strerror}") from None

    def claim(self, key: bytes, game: bytes) -> bool:
        """Record, durably, that ``key`` signs a hello for ``game``; False if it already did."""
        if self.signed(key, game):
            return False
        from ..identity import make_home

        try:
            make_home(self.path.parent)
            fd = os.open(self.path, _FLAGS, 0o600)
            try:
                os.write(fd, f"{key.hex()} {game.hex()}\n".encode("ascii"))  # one write: appends never interleave
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as e:
            raise LedgerError(f"cannot write {self.path}: {e.strerror}") from None
        return True
