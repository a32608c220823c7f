"""``basilica resume REPLAY``: reconnect after a crash or a dropped connection and finish the game.

The host listens again on its port, the joiner dials again, both say how
many messages they hold and the one that holds more resends the rest from
its file; then play goes on from the last message both hold: no move lost,
none applied twice.  A peer that does not come back within the window loses
by forfeit, signed and recorded by the side that waited.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from ..engine import Game, Manifest
from ..identity import Identity
from ..seat import Late, Step, StepKind
from ..wire import open_envelope
from ..replay.file import ReplayWriter
from .framing import PeerClosed
from .session import (
    Connection,
    GameReport,
    PeerGone,
    Timeouts,
    Watch,
    _Side,
    _record,
    continue_game,
    forget_session,
    resume_exchange,
    side_from_replay,
)

DEFAULT_WINDOW = 120.0


@dataclass(frozen=True)
class Rendezvous:
    """How to meet again: listen (the host) or dial (the joiner); or, for a game that was
    relayed, meet on that relay again under the key both sides kept for it."""

    listen: bool
    address: str
    port: int
    relay: tuple[str, int] | None = None
    relay_key: bytes = b""

    @classmethod
    def from_info(cls, info: dict[str, Any]) -> Rendezvous | None:
        """How a game's session file (or a live game's ``resume_info``) says to meet again; None
        if it cannot say (no role, address or port; a relayed game whose key is damaged)."""
        role, address, port = info.get("role"), info.get("address"), info.get("port")
        if role not in ("host", "join") or not isinstance(address, str):
            return None
        try:
            port = int(port)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return None
        relay = info.get("relay")
        if not (isinstance(relay, list) and len(relay) == 2 and isinstance(relay[0], str)
                and isinstance(relay[1], int)):
            return cls(role == "host", address, port)
        try:
            key = bytes.fromhex(str(info.get("relay_key", "")))
        except ValueError:
            return None
        return cls(role == "host", address, port, (relay[0], relay[1]), key) if len(key) == 32 else None

    def __str__(self) -> str:
        if self.relay is not None:
            return f"meeting on the relay {self.relay[0]}:{self.relay[1]}"
        return f"{'listening on' if self.listen else 'dialling'} {self.address}:{self.port}"


def forfeit_by_absence(side: _Side, window: float) -> None:
    seat = side.seat
    assert seat.me is not None
    if seat.due() == Step(StepKind.ACK, seat.me):
        # Our acknowledgement was lost with its unsynced tail, but the peer may hold it: sign it
        # again (deterministic: the very same bytes) rather than a forfeit at its place, which
        # would be two different messages of ours for one sequence number.
        ack = seat.make()
        assert not isinstance(ack, Late)
        _record(side, ack.envelope.raw)
    _record(side, seat.claim_forfeit(f"did not come back within {window:g} s").envelope.raw)


async def meet_again(where: Rendezvous, window: float) -> trio.abc.Stream | None:
    """A new connection to the peer, met as ``where`` says; None if none came within ``window`` s."""
    if where.relay is not None:
        from .relay import QuickAckStream, RelayError, meet

        try:
            return QuickAckStream(await meet(where.relay, where.relay_key, sender=where.listen, timeout=window))
        except RelayError:
            return None  # the peer did not come (or the relay is gone): the window is over
    with trio.move_on_after(window):
        if where.listen:
            listeners = await trio.open_tcp_listeners(where.port, host=where.address)
            try:
                return await listeners[0].accept()
            finally:
                for listener in listeners:
                    await listener.aclose()
        while True:
            try:
                return await trio.open_tcp_stream(where.address, where.port)
            except OSError:
                await trio.sleep(0.5)  # the host may not be listening again yet
    return None


async def resume(
    path: Path,
    me: Identity,
    manifests: dict[str, Manifest],
    agent: object,
    where: Rendezvous,
    timeouts: Timeouts = Timeouts(),
    window: float = DEFAULT_WINDOW,
    log: Callable[[str], None] = lambda s: None,
    watch: Watch | None = None,
    keep_session: bool = False,
) -> GameReport:
    side, seat = side_from_replay(path, manifests, me)
    ours = side.seat
    peer_name = ours.spec.names[1 - seat]
    keep = keep_session or bool(side.info.get("keep_session"))
    ours_last = open_envelope(side.records[-1]).sender == me.public
    if ours.finished and not (ours_last and side.sidecar is not None and side.sidecar.exists()):
        side.writer.close()
        log(f"{path}: the game is already finished")
        if not ours_last and not keep:
            forget_session(side.sidecar)  # its last message is the peer's: both hold everything
        assert ours.outcome is not None
        game = ours.game or Game.new(ours.spec.manifest, ours.spec.options, bytes(32))
        return GameReport(path, seat, peer_name, ours.outcome, game, side.sidecar, not ours_last)
    if ours.finished:
        # Finished here, but our last message may never have reached the peer (its replay
        # would then stay one message short): meet once more so that it can fetch it.
        log(f"{path}: the game is finished here; {peer_name} may lack our last message")
    log(f"{path}: {len(side.records)} messages held; {where} for up to {window:g} s")
    stream = await meet_again(where, window)
    if stream is None:
        side.writer.close()
        game = ours.game
        if ours.finished:
            pass
        elif game is not None and game.over and ours.due().kind is not StepKind.SECRET:
            # (A hidden deal's missing secret is an absence like any other: claimed below.)
            raise PeerGone(f"{peer_name} did not come back; the game ended on the board but its signed result "
                           "is missing, so the replay stays incomplete")
        else:
            side.writer, _ = ReplayWriter.open_append(path)
            forfeit_by_absence(side, window)
            side.writer.close()
            log(f"{peer_name} did not come back: recorded as a forfeit")
        assert ours.outcome is not None
        game = ours.game or Game.new(ours.spec.manifest, ours.spec.options, bytes(32))
        return GameReport(path, seat, peer_name, ours.outcome, game)
    conn = Connection(stream, timeouts)


    async def finish() -> GameReport:
        await resume_exchange(conn, side, log)
        report = await continue_game(conn, agent, side, peer_name, log, watch)
        await conn.framed.send_control("bye")
        if keep:
            return report
        if report.delivered:
            forget_session(report.sidecar)
        elif await conn.await_goodbye():  # both sides say goodbye after the game
            forget_session(report.sidecar)
        return report

    try:
        return await conn.run(finish)
    except PeerClosed as e:
        raise PeerGone(f"the connection ended: {e}") from None
    finally:
        await conn.framed.aclose()
