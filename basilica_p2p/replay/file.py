"""Replay files: an append-only sequence of framed records.

Layout (protocol/PROTOCOL.md §9)::

    file   = MAGIC record*
    record = length: u32 big-endian | data: length bytes | crc32(data): u32 big-endian

Record 0 is the header (a canonical msgpack map); every later record is one
signed envelope, exactly as sent, in the order the game happened, from
both sides.  A record is written and flushed before the message it holds is
sent; our own chosen messages are fsynced first, while acknowledgements and
received records are made durable by the next fsync (docs/network.md says
why that is safe).  After a crash the file can end inside its last record
(a torn tail): reading reports it, and opening for append
truncates it.  Damage anywhere else is refused with the record number and
byte offset.
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..clock import Limits, TimeControl, TimeControlError
from ..safefile import NotRegularFile, open_regular, sync_directory
from ..wire import MAX_MESSAGE, ProtocolError, decode, encode, is_text
from ..schemes import COMMIT_REVEAL

if TYPE_CHECKING:
    from ..referee import GameSpec

MAGIC = b"BASILREP"
FORMAT_VERSION = 1
MAX_RECORD = MAX_MESSAGE
HEADER_FIELDS = ("format", "protocol", "ruleset", "festum", "removal", "manifest", "shuffle", "game", "players")
_U32 = struct.Struct(">I")
# fdatasync suffices for appends: POSIX has it flush the metadata needed to read
# the data back (the file size), and it skips the rest (timestamps).
_sync = getattr(os, "fdatasync", os.fsync)


class ReplayError(Exception):
    """A replay file that cannot be read; names the record and byte offset."""

    def __init__(self, record: int, offset: int, reason: str) -> None:
        super().__init__(f"record {record} (byte {offset}): {reason}")
        self.record = record
        self.offset = offset
        self.reason = reason


@dataclass(frozen=True)
class Header:
    ruleset: str
    festum: bool
    removal: bool
    manifest: bytes  # 32-byte manifest hash
    game: bytes  # 32-byte game id
    players: tuple[tuple[bytes, str], tuple[bytes, str]]  # (public key, name) of player 1 and 2
    protocol: int = 1
    shuffle: str = COMMIT_REVEAL
    clock: TimeControl | None = None  # protocol 2 (or 3): the game's time control, as both hellos say
    limits: Limits | None = None  # protocol 3: a network game's agreed limits, as both hellos say

    @classmethod
    def of(cls, spec: GameSpec) -> Header:
        """The header of a game: its spec, field by field (the protocol follows from its settings)."""
        o = spec.options
        return cls(o.ruleset.value, o.festum, o.festum_removal, bytes.fromhex(spec.manifest.hash), spec.game,
                   ((spec.players[0], spec.names[0]), (spec.players[1], spec.names[1])), spec.protocol,
                   spec.shuffle, spec.clock, spec.limits)

    def to_map(self) -> dict[str, Any]:
        out = {
            "format": FORMAT_VERSION, "protocol": self.protocol, "ruleset": self.ruleset, "festum": self.festum,
            "removal": self.removal, "manifest": self.manifest, "shuffle": self.shuffle, "game": self.game,
            "players": [[k, n] for k, n in self.players],
        }
        if self.clock is not None:
            out["clock"] = self.clock.to_wire()
        if self.limits is not None:
            out["limits"] = self.limits.to_wire()
        return out

    def encode(self) -> bytes:
        return encode(self.to_map())

    @classmethod
    def decode(cls, data: bytes) -> Header:
        m = decode(data)
        tails = ((), ("clock",), ("limits",), ("clock", "limits"))
        if not isinstance(m, dict) or tuple(m) not in tuple(HEADER_FIELDS + t for t in tails):
            raise ProtocolError("the header does not have the fields " + ", ".join(HEADER_FIELDS) + " in order")
        if type(m["format"]) is not int or m["format"] != FORMAT_VERSION:
            raise ProtocolError(f"replay format {m['format']!r} is not supported (this client reads {FORMAT_VERSION})")
        ok = (
            isinstance(m["protocol"], int) and not isinstance(m["protocol"], bool)
            and isinstance(m["ruleset"], str) and isinstance(m["festum"], bool) and isinstance(m["removal"], bool)
            and isinstance(m["manifest"], bytes) and len(m["manifest"]) == 32
            and isinstance(m["shuffle"], str) and isinstance(m["game"], bytes) and len(m["game"]) == 32
            and isinstance(m["players"], list) and len(m["players"]) == 2
            and all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], bytes) and len(p[0]) == 32
                    and is_text(p[1], 64)
                    for p in m["players"])
        )
        if not ok:
            raise ProtocolError("the header has a field of the wrong type")
        # Protocol 2 is a game with a clock, protocol 3 a network game, with or without one;
        # only their headers name a clock, and only protocol 3's names limits (PROTOCOL.md §9).
        if "limits" in m and m["protocol"] != 3 or "limits" not in m and m["protocol"] == 3:
            raise ProtocolError("the header's limits field goes with protocol 3, and only with it")
        if "clock" in m and m["protocol"] == 1 or "clock" not in m and m["protocol"] == 2:
            raise ProtocolError("the header's clock field goes with protocol 2 or 3, and only with them")
        clock = limits = None
        if "clock" in m:
            try:
                clock = TimeControl.from_wire(m["clock"])
            except TimeControlError as e:
                raise ProtocolError(f"the header's clock: {e}") from None
        if "limits" in m:
            try:
                limits = Limits.from_wire(m["limits"])
            except TimeControlError as e:
                raise ProtocolError(f"the header's limits: {e}") from None
        players = ((m["players"][0][0], m["players"][0][1]), (m["players"][1][0], m["players"][1][1]))
        return cls(m["ruleset"], m["festum"], m["removal"], m["manifest"], m["game"], players, m["protocol"],
                   m["shuffle"], clock, limits)


@dataclass(frozen=True)
class TornTail:
    record: int  # number of the incomplete record
    offset: int  # where it starts (the file is valid up to here)
    size: int  # bytes that would be cut


@dataclass(frozen=True)
class ReplayFile:
    header: Header
    header_bytes: bytes
    records: list[bytes]  # envelope bytes, record 1 onwards
    offsets: list[int]  # byte offset of each record (0 = the header)
    torn: TornTail | None


def frame(data: bytes) -> bytes:
    return _U32.pack(len(data)) + data + _U32.pack(zlib.crc32(data))


@dataclass(frozen=True)
class Record:
    number: int  # 0 is the header, 1 the first envelope
    offset: int  # byte offset of its length field
    data: bytes


def _scan(f: BinaryIO) -> Iterator[Record | TornTail]:
    """The records of a replay as they are read from ``f``: each is checked (length, checksum)
    before the next is read, and only one is held at a time.  Ends with a :class:`TornTail`
    when the file ends inside a record; :class:`ReplayError` at the first damage."""
    if f.read(len(MAGIC)) != MAGIC:
        raise ReplayError(0, 0, "not a basilica replay file (bad magic bytes)")
    pos = len(MAGIC)
    n = 0
    while True:
        head = f.read(4)
        if not head:
            return
        if len(head) < 4:
            yield TornTail(n, pos, len(head))
            return
        (length,) = _U32.unpack(head)
        if length == 0 or length > MAX_RECORD:  # checked before anything that long is read
            raise ReplayError(n, pos, f"record length {length} is out of range")
        rest = f.read(length + 4)
        if len(rest) < length + 4:
            yield TornTail(n, pos, 4 + len(rest))
            return
        blob = rest[:length]
        if _U32.unpack_from(rest, length)[0] != zlib.crc32(blob):
            raise ReplayError(n, pos, "checksum mismatch (the record is damaged)")
        yield Record(n, pos, blob)
        n += 1
        pos += 8 + length


def _open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading if it is a regular file; :class:`ReplayError` (one line) if not."""
    try:
        return open_regular(path)
    except IsADirectoryError:
        raise ReplayError(0, 0, "is a directory, not a replay file") from None
    except NotRegularFile as e:
        tail = "" if e.kind == "a directory" else ": only a regular file is read"
        raise ReplayError(0, 0, f"is {e.kind}, not a replay file{tail}") from None
    except OSError as e:
        raise ReplayError(0, 0, f"cannot read: {e.strerror}") from None


def iter_records(path: Path) -> Iterator[Record | TornTail]:
    """The records of the replay at ``path`` as they are read, the header (record 0) first,
    then a :class:`TornTail` if the file ends inside a record.

    Each record's length and checksum are checked before the next one is read, so a file that
    is no replay (a large one, or one that never ends) is refused at its first bytes, and the
    memory used is that of one record.  Raises :class:`ReplayError` (one line, with the record
    number and byte offset) at the first damage, and for anything but a regular file."""
    with _open_regular(path) as f:
        n, pos = 0, 0
        try:
            for item in _scan(f):
                if isinstance(item, Record):
                    n, pos = item.number + 1, item.offset + 8 + len(item.data)
                yield item
        except OSError as e:
            raise ReplayError(n, pos, f"cannot read: {e.strerror}") from None


def _collect(items: Iterable[Record | TornTail]) -> ReplayFile:
    blobs: list[bytes] = []
    offsets: list[int] = []
    torn = None
    for item in items:
        if isinstance(item, TornTail):
            torn = item
            if not blobs:
                raise ReplayError(0, item.offset, "the header record is incomplete")
            break
        if not blobs:  # the header is checked before the rest is read
            try:
                header = Header.decode(item.data)
            except ProtocolError as e:
                raise ReplayError(0, item.offset, f"bad header: {e}") from None
        blobs.append(item.data)
        offsets.append(item.offset)
    if not blobs:
        raise ReplayError(0, len(MAGIC), "the file has no header record")
    return ReplayFile(header, blobs[0], blobs[1:], offsets, torn)


def parse(data: bytes) -> ReplayFile:
    """Split a replay file's bytes into records; raises :class:`ReplayError` on damage."""
    return _collect(_scan(io.BytesIO(data)))


def read_replay(path: Path) -> ReplayFile:
    """The whole replay at ``path``, read as :func:`iter_records` reads it (so refused as early)."""
    return _collect(iter_records(path))


class ReplayWriter:
    """Appends records durably: each one is flushed and fsynced before append() returns."""

    def __init__(self, path: Path, f: Any, count: int) -> None:
        self.path = path
        self._f = f
        self.count = count  # records in the file, the header included

    @classmethod
    def create(cls, path: Path, header: Header) -> ReplayWriter:
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(path, "xb")  # never overwrite an existing replay
        w = cls(path, f, 0)
        w._write(MAGIC + frame(header.encode()))
        sync_directory(path.parent)  # so that the new file's name survives a power loss too
        w.count = 1
        return w

    @classmethod
    def open_append(cls, path: Path) -> tuple[ReplayWriter, ReplayFile]:
        """Open an existing replay to go on writing; a torn tail is cut off first."""
        replay = read_replay(path)
        f = open(path, "r+b")
        if replay.torn is not None:
            f.truncate(replay.torn.offset)
            f.flush()
            os.fsync(f.fileno())
        f.seek(0, os.SEEK_END)
        return cls(path, f, 1 + len(replay.records)), replay

    def _write(self, data: bytes, sync: bool = True) -> None:
        self._f.write(data)
        self._f.flush()
        if sync:
            _sync(self._f.fileno())  # also makes every earlier unsynced record durable

    def append(self, record: bytes, sync: bool = True) -> None:
        """Append one record; with ``sync`` it (and all before it) is on disk when this returns.

        A peer's message, or our acknowledgement, may be appended without
        ``sync``: the next fsync covers it, and if a crash takes it first, the
        peer still holds it and resends it on resume (docs/network.md).
        """
        if not 0 < len(record) <= MAX_RECORD:
            raise ValueError("record size out of range")
        self._write(frame(record), sync)
        self.count += 1

    def close(self) -> None:
        if not self._f.closed:
            self._f.flush()
            _sync(self._f.fileno())
        self._f.close()

    def __enter__(self) -> ReplayWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
