"""What one side of a network game keeps beside its seat: the replay, the session file, and where
the conversation stands; and how a side is rebuilt from them after a crash (``basilica resume``).

The session file (``.GAME-pN.replay.session`` next to the replay, owner-only)
holds the side's secrets and how to reconnect; it is written before any
message that commits to a secret, and before the replay holds anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import trio

from .. import safefile
from ..agent import Decision
from ..engine import Manifest
from ..identity import Identity
from ..schemes import HIDDEN_DEAL
from ..replay import ReplayWriter
from ..seat import Refused as SeatRefused
from ..seat import Seat, SeatSecrets
from .connection import Refused

T = TypeVar("T")


@dataclass
class Side:
    """What one side of a game keeps beside its seat: the replay, the session file, and the
    state of the conversation (a decision chosen ahead, messages being sent back after a resume)."""

    seat: Seat
    writer: ReplayWriter
    sidecar: Path | None = None  # where the secrets and how to reconnect are kept (resume)
    info: dict[str, Any] = field(default_factory=dict)
    prefetch: Prefetch | None = None  # our next decision, being chosen while the peer acknowledges
    resent: int = 0  # after a resume: how many messages the peer is sending back from its file
    # The message due now (its seq) and since when, by the driver's clock: a decision's limit and
    # a claim count from there, whatever breaks meanwhile.
    due: tuple[int, float] | None = None
    # The seq due when the peer was last away, and for how long in all: one message's wait gets
    # one window, however often the peer goes and comes back.
    away: tuple[int, float] | None = None
    waiting_for_return: trio.Event | None = None  # set while the peer is away during our decision
    tap: Callable[[bytes], None] | None = None  # told each record once written (the watchers' hub)

    @property
    def records(self) -> list[bytes]:
        return self.seat.records

    def record(self, raw: bytes, sync: bool = True) -> None:
        """Append one record to the replay, safe from Ctrl-C (the seat holds it already)."""
        protected(self.writer.append, raw, sync)
        if self.tap is not None:
            self.tap(raw)

    @trio.lowlevel.enable_ki_protection  # never half-written by Ctrl-C (atomic anyway: a rename)
    def save(self) -> None:
        """Write the sidecar durably: called before any envelope that commits to a secret."""
        if self.sidecar is None:
            return
        s = self.seat.secrets
        data = dict(self.info, format="basilica-session/1", nonce=s.nonce.hex() or None,
                    jester=[s.jester[0], s.jester[1].hex()] if s.jester else None,
                    deal_secret=s.deal.hex() or None)
        write_private_json(self.sidecar, data)


@dataclass(frozen=True)
class Prefetch:
    """Our next decision, chosen while the peer checks and acknowledges our last action
    (the acknowledgement changes nothing in the game, so the choice stays valid).  It
    overlaps our thinking with the peer's work."""

    ply: int  # the decision it is for; only an acknowledgement comes before it
    decision: Decision


@trio.lowlevel.enable_ki_protection
def protected(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` with Ctrl-C held back until the next checkpoint (trio delivers it
    there): a record or the sidecar is never left half-written by an interrupt."""
    return fn(*args)


def write_private_json(path: Path, data: dict[str, Any]) -> None:
    """Atomically replace ``path`` with ``data``, readable by the owner only (it holds secrets)."""
    import json

    safefile.write_atomically(path, json.dumps(data), 0o600)


def sidecar_path(replay: Path) -> Path:
    """A hidden file next to the replay: `basilica verify DIR/*` does not pick it up."""
    return replay.with_name("." + replay.name + ".session")


def forget_session(sidecar: Path | None) -> None:
    """Delete a finished game's session file once both sides hold the result: it exists only
    for ``basilica resume``, and a finished game has nothing left to resume."""
    if sidecar is None:
        return
    try:
        sidecar.unlink()
    except FileNotFoundError:
        return
    safefile.sync_directory(sidecar.parent)


def side_from_replay(path: Path, manifests: dict[str, Manifest], me: Identity) -> tuple[Side, int]:
    """Rebuild a side from its replay (a torn tail is cut off first) and its sidecar.

    The replay is walked into a live seat with our secrets from the sidecar: for a
    hidden deal, fed the replay, it remakes our own deal steps and checks they are
    the recorded ones, and can make the next ones exactly as before the break.
    """
    import json

    from ..replay import ReplayError
    from ..replay import seat_for, spec_from_replay
    from ..replay.walk import walk

    writer, replay = ReplayWriter.open_append(path)
    sidecar = sidecar_path(path)
    try:
        data = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    try:
        spec = spec_from_replay(replay, manifests)
        if spec.player_of(me.public) is None:
            writer.close()
            raise Refused(f"{path} is not a game of this identity ({me.name})")
        secrets = _secrets_of(data)
        if spec.shuffle == HIDDEN_DEAL and not secrets.deal:
            # Without our deal secret the seat could not remake our deal steps: the file is
            # checked as a verifier would, and only a finished game can be taken as it is.
            verifier = seat_for(replay, manifests, views=False)
            refused = walk(replay, verifier)
            if refused is not None:
                raise _record_error(replay, verifier, refused)
            if not verifier.finished:
                writer.close()
                raise Refused(f"{sidecar} holds no deal secret for this game dealt by {HIDDEN_DEAL}: without it "
                              "our next deal step, share or secret cannot be made, so the game cannot go on")
            secrets = SeatSecrets(secrets.nonce, secrets.jester, b"")
        ours = seat_for(replay, manifests, me, secrets)
        refused = walk(replay, ours)
        if refused is not None:
            raise _record_error(replay, ours, refused)
    except ReplayError:
        writer.close()
        raise
    if ours.clocks is not None:
        # After a break each clock goes on from its owner's last signed figure: the time
        # the break took is nobody's thinking (docs/clocks.md).
        ours.clocks.left = list(ours.referee.signed)
    side = Side(ours, writer, sidecar)
    side.info = {k: v for k, v in data.items() if k not in ("format", "nonce", "jester", "deal_secret")}
    assert ours.me is not None
    return side, ours.me


def _secrets_of(data: dict[str, Any]) -> SeatSecrets:
    """Our secrets as the sidecar keeps them; what is missing or malformed is left out."""
    def hexed(value: object, size: int | None = None) -> bytes:
        try:
            raw = bytes.fromhex(value) if isinstance(value, str) else b""
        except ValueError:
            return b""
        return raw if size is None or len(raw) == size else b""

    j = data.get("jester")
    jester = (j[0], hexed(j[1])) if isinstance(j, list) and len(j) == 2 and isinstance(j[0], str) else None
    return SeatSecrets(hexed(data.get("nonce")), jester, hexed(data.get("deal_secret"), 32))


def _record_error(replay: Any, seat: Seat, refused: SeatRefused) -> Exception:
    from ..replay import ReplayError

    number = len(seat.records) + 1
    return ReplayError(number, replay.offsets[number], refused.detail)
