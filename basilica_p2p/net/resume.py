"""``basilica resume REPLAY``: reconnect after a crash or a dropped connection and finish the game.

The host listens again on its port, the joiner dials again (net/rejoin.py:
each proves to the other who it is before anything is said), both say how
many messages they hold and the one that holds more resends the rest from
its file; then play goes on from the last message both hold: no move lost,
none applied twice.  A peer that does not come back within the window loses
by forfeit, signed and recorded by the side that waited.

The time this side was away (since its replay was last written) counts
against whoever was to decide, and a side that was away longer than the
window a network game agreed claims nothing: the other side, which stayed,
has had the right to claim the game since (issue 20).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import trio

from ..clock import DEFAULT_WINDOW
from ..engine import Game, Manifest
from ..identity import Identity
from ..wire import open_envelope
from .framing import PeerClosed
from .rejoin import Rendezvous, reach
from .presence import Presence, claim_absence, resume_exchange
from .session import Connection, GameReport, PeerGone, Side, Timeouts, Watch, continue_game, forget_session, side_from_replay

__all__ = ["Rendezvous", "resume"]


async def resume(
    path: Path,
    me: Identity,
    manifests: dict[str, Manifest],
    agent: object,
    where: Rendezvous,
    timeouts: Timeouts = Timeouts(),
    window: float | None = None,
    log: Callable[[str], None] = lambda s: None,
    watch: Watch | None = None,
    keep_session: bool = False,
    chat: bool = False,
) -> GameReport:
    """Finish the game of ``path``; ``window``: seconds to wait for the peer in a game of protocol
    1 or 2 (a network game of protocol 3 waits the window it agreed); ``chat``: we take lines of
    chat (a person's side, net/chat.py)."""
    try:
        away = max(0.0, time.time() - path.stat().st_mtime)  # since this side last wrote: how long it was gone
    except OSError:
        away = 0.0
    side, seat = side_from_replay(path, manifests, me)
    ours = side.seat
    spec = ours.spec
    peer_name = spec.names[1 - seat]
    wait = float(spec.limits.window) if spec.limits is not None else (window or float(DEFAULT_WINDOW))
    keep = keep_session or bool(side.info.get("keep_session"))
    ours_last = open_envelope(side.records[-1]).sender == me.public
    if ours.finished and not (ours_last and side.sidecar is not None and side.sidecar.exists()):
        side.writer.close()
        log(f"{path}: the game is already finished")
        if not ours_last and not keep:
            forget_session(side.sidecar)  # its last message is the peer's: both hold everything
        return _report(path, side, seat, peer_name, not ours_last)
    if ours.finished:
        # Finished here, but our last message may never have reached the peer (its replay
        # would then stay one message short): meet once more so that it can fetch it.
        log(f"{path}: the game is finished here; {peer_name} may lack our last message")
    late = spec.limits is not None and away > wait and not ours.finished
    if late:
        log(f"this side was away {away:.0f} s, longer than the agreed {wait:g} s: {peer_name} may have recorded "
            "the game as won by our absence; waiting for it all the same, and claiming nothing")
    # The time away counts against whoever was to decide, as far as this side can tell.
    side.due = (ours.referee.seq, trio.current_time() - away)
    meet = reach(where, me, spec.players[1 - seat], spec.game, timeouts.frame, log)
    log(f"{path}: {len(side.records)} messages held; {where} for up to {wait:g} s")
    framed = await meet(trio.current_time() + wait)
    if framed is None:
        try:
            if late:
                raise PeerGone(f"{peer_name} did not come back either; this side was away past the agreed window, "
                               "so it claims nothing and the game stays unfinished here")
            if not ours.finished:
                await claim_absence(side, wait, peer_name, log)
        finally:
            side.writer.close()
        return _report(path, side, seat, peer_name, False)
    conn = Connection(framed, timeouts)
    conn.chat = chat

    async def finish() -> GameReport:
        await resume_exchange(conn, side, log)
        report = await continue_game(conn, agent, side, peer_name, log, watch, Presence(meet, wait))
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


def _report(path: Path, side: Side, seat: int, peer_name: str, delivered: bool) -> GameReport:
    ours = side.seat
    assert ours.outcome is not None
    game = ours.game or Game.new(ours.spec.manifest, ours.spec.options, bytes(32))
    return GameReport(path, seat, peer_name, ours.outcome, game, side.sidecar, delivered)
