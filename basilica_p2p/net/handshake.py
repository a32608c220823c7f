"""The start of a network game: both signed hellos, the checks on the peer, and the side it makes.

Player 1 (the host in the first game) speaks first: it sends its hello
before it knows who will answer, so a hello is built from the settings
alone (:func:`hello_body`).  Both hellos must agree (:func:`differences`);
the peer's key must be the pinned one, not ours, and known under its name;
our key never signs two hellos for one game id (net/ledger.py).  Then the
game's spec exists: its replay is created, its session file written, and
its :class:`~basilica_p2p.seat.Seat` takes both hellos.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import trio

from ..clock import Limits, TimeControl, TimeControlError
from ..engine import Manifest, Options
from ..identity import Identity, fingerprint
from ..names import quoted_name
from ..referee import GENESIS, GameSpec
from ..schemes import HIDDEN_DEAL
from ..replay import Header, ReplayWriter
from ..seat import Refused as SeatRefused
from ..printable import printable
from ..seat import Seat, SeatSecrets
from ..seat import hello_body as seat_hello_body
from ..wire import Envelope, HelloBody, ProtocolError, body_of, open_envelope, seal
from .chat import is_chat
from .connection import (
    BadHello,
    Connection,
    NoGameStarted,
    PeerGone,
    PeerMisbehaved,
    PeerRefused,
    Refused,
    SessionError,
)
from .framing import PeerBye, PeerClosed, PeerTimeout
from .ledger import GameLedger, LedgerError
from ..known_peers import KnownPeers, PeerKeyMismatch
from .side import Side, protected, sidecar_path


@dataclass(frozen=True)
class Settings:
    options: Options
    manifest: Manifest
    # Between strangers the stack must stay face down: the hidden deal is the network default,
    # and commit-reveal-v1 is played only when both sides ask for it (a hello field).
    shuffle: str = HIDDEN_DEAL
    clock: TimeControl | None = None  # both sides must ask for the same one (protocol 2)
    # The window to come back and the time per decision (protocol 3); None: the defaults for
    # player 1, the host's for player 2, which takes them as it takes the clock.
    limits: Limits | None = None

    def agreed_limits(self) -> Limits:
        """The limits this side's hello names: its own (or the defaults), as its clock plays them."""
        return (self.limits or Limits()).for_clock(self.clock)


def hello_body(me: Identity, settings: Settings) -> HelloBody:
    return seat_hello_body(me.name, settings.options, settings.manifest, settings.shuffle, settings.clock,
                           settings.agreed_limits())


def differences(ours: HelloBody, theirs: HelloBody) -> list[str]:
    """What must agree between two hellos and does not, in words that read the same on both sides."""
    def show(v: Any) -> str:
        if isinstance(v, bool):
            return "yes" if v else "no"
        if isinstance(v, bytes):
            return v.hex()[:16]
        return str(v)

    out = []
    clocks = ("clock", "clock (--clock)")
    limits = ("limits", "limits (--window, --move-time)")
    # The fields as compared and shown: a clock or limits that differ, in words.
    mine_shown: dict[str, object] = dict(ours)
    theirs_shown: dict[str, object] = dict(theirs)
    if ours.get("clock") != theirs.get("clock"):
        # A hello with a clock is protocol 2: say what differs, not the version it implies.
        mine_shown, theirs_shown = ({**h, "protocol": 0, "clock": _clock_words(h.get("clock"))}
                                    for h in (mine_shown, theirs_shown))
    if ours.get("limits") != theirs.get("limits"):
        mine_shown, theirs_shown = ({**h, "limits": _limits_words(h.get("limits"))}
                                    for h in (mine_shown, theirs_shown))
    for key, label in (("protocol", "protocol version"), ("ruleset", "ruleset"), ("festum", "festum expansion"),
                       ("removal", "festum removal of 6 tiles"), ("manifest", "manifest"),
                       ("shuffle", "shuffle scheme"), clocks, limits):
        a, b = mine_shown.get(key), theirs_shown.get(key)
        if a != b:
            out.append(f"{label}: {printable(ours['name'], 64)} has {show(a)}, "
                       f"{printable(theirs['name'], 64)} has {show(b)}")
    return out


def _limits_words(limits: Any) -> str:
    if isinstance(limits, list) and len(limits) == 2:
        return f"{limits[0]} s to come back and {limits[1] or 'the clock'}{' s' if limits[1] else ''} per decision"
    return "none (an older client)"


def _clock_words(clock: Any) -> str:
    if isinstance(clock, list) and len(clock) == 2:
        return f"{clock[0]}+{clock[1]}"
    return "none"


async def _hello(conn: Connection, deadline: float) -> bytes:
    """The next envelope that is not a line of chat: a line said after the game before, as both
    players agreed to play again, comes too late for that game's replay and is let go."""
    while True:
        raw = await conn.receive_envelope(deadline)
        if not is_chat(raw):
            return raw


async def handshake(
    conn: Connection, me: Identity, seat: int, settings: Settings, replay_dir: Path,
    peers: KnownPeers | None, log: Callable[[str], None], ledger: GameLedger | None = None,
    resume_info: dict[str, Any] | None = None, pinned: bytes | None = None,
) -> tuple[Side, str]:
    mine = hello_body(me, settings)
    deadline = trio.current_time() + conn.timeouts.handshake
    try:
        if seat == 0:
            game = os.urandom(32)
            await _claim_game_id(conn, ledger, me, game)
            first = seal(me.key, game, 0, GENESIS, "hello", mine)
            await conn.send_envelope(first.raw)
            second = open_envelope(await _hello(conn, deadline))
            _check_hello(second, game, 1, first.hash)
            theirs = body_of(second, "hello")
        else:
            first = open_envelope(await _hello(conn, deadline))
            _check_hello(first, first.game, 0, GENESIS)
            theirs = body_of(first, "hello")
            game = first.game
            took = await _take_hosts_settings(conn, settings, theirs)
            if took != settings:
                settings, mine = took, hello_body(me, took)
                if took.clock is not None:
                    log(f"clocks: {took.clock} (minutes each, plus seconds per decision), as the host set them")
    except PeerTimeout:
        raise PeerGone(f"no hello within {conn.timeouts.handshake:g} s") from None
    except PeerMisbehaved as e:
        raise BadHello(f"{e} (instead of its hello: is the other side a basilica client?)") from None
    except (PeerBye, PeerRefused):
        raise  # a goodbye, or a peer that told us why it stopped: nothing to wait for
    except PeerGone as e:
        raise NoGameStarted(str(e)) from None
    except PeerClosed as e:
        raise NoGameStarted(f"the connection ended before the game began: {e}") from None
    diff = differences(mine, theirs)
    if diff:
        reason = "settings differ: " + "; ".join(diff)
        await conn.tell_error(reason)
        raise Refused(reason)
    peer_key = second.sender if seat == 0 else first.sender
    if pinned is not None and peer_key != pinned:
        reason = (f"the hello is signed by {fingerprint(peer_key)}, not by the invite's {fingerprint(pinned)}: "
                  "a possible man in the middle")
        await conn.tell_error(reason)
        raise Refused(reason)
    if peer_key == me.public:
        reason = "both sides use the same identity; give one of them its own --home or BASILICA_HOME"
        await conn.tell_error(reason)
        raise Refused(reason)
    if theirs["software"] != mine["software"]:
        log(f"note: the peer runs {theirs['software']}, we run {mine['software']}")
    if peers is not None:
        try:
            check = peers.check(theirs["name"], peer_key)
        except PeerKeyMismatch as e:
            if e.known_name is None or e.known_key is None:  # our known_peers.json is damaged: not the peer's fault
                await conn.tell_error("the other side cannot check keys: its list of known peers is damaged")
            else:
                await conn.tell_error(
                    f"your key ({fingerprint(peer_key)}) is not the one known here for the name "
                    f"{printable(e.known_name, 64)!r} ({fingerprint(e.known_key)}); if your key "
                    "changed, the other player can accept it with 'basilica peers trust', else play under "
                    "another name ('basilica id rename NAME')")
            raise Refused(str(e)) from None
        if check.new:
            log(f"first contact with {quoted_name(theirs['name'])}: key {check.fingerprint} remembered")
    if seat == 1:
        await _claim_game_id(conn, ledger, me, game)
        second = seal(me.key, game, 1, first.hash, "hello", mine)
    names = (first.body["name"], second.body["name"])
    spec = GameSpec(game, (first.sender, second.sender), names, settings.options, settings.manifest,
                    settings.shuffle, settings.clock, settings.agreed_limits())
    # A hidden deal's secret is drawn now, by the seat, and written to the session file below
    # before the replay holds anything: every deal step and share of ours is a function of it,
    # so a resume must find the same one.
    secrets = SeatSecrets(deal=os.urandom(32)) if settings.shuffle == HIDDEN_DEAL else SeatSecrets()
    ours = Seat(spec, me, entropy=os.urandom, secrets=secrets)
    header = Header.of(spec)
    path = replay_dir / f"{game.hex()[:16]}-{'p1' if seat == 0 else 'p2'}.replay"
    if path.exists():
        await conn.tell_error("that game id is already taken")
        raise Refused(f"the peer reuses the id of a game we already hold ({path})")
    try:
        writer = protected(ReplayWriter.create, path, header)
    except OSError as e:
        await conn.tell_error("the other side cannot record the game")
        raise SessionError(f"cannot create {path}: {e.strerror}") from None
    side = Side(ours, writer)
    if resume_info is not None:
        # Written before anything is recorded in the replay: a replay never exists without
        # the file that says how to resume it (a kill in between left one unresumable).
        side.sidecar = sidecar_path(path)
        side.info = dict(resume_info, peer=theirs["name"])
        side.save()
    for env in (first, second):
        got = ours.receive(env, known=True)
        if isinstance(got, SeatRefused):  # the spec is made of these very hellos
            raise ProtocolError(got.detail)
        side.record(env.raw)
    if seat == 1:
        await conn.send_envelope(second.raw)  # recorded (and fsynced) before it is sent
    log(f"game {game.hex()[:16]}: {names[0]} (player 1) vs {names[1]} (player 2); {spec.limits}; replay {path}")
    return side, theirs["name"]


async def _take_hosts_settings(conn: Connection, settings: Settings, theirs: HelloBody) -> Settings:
    """Player 2 takes the host's clock (--clock) and limits (--window, --move-time) when it asked for none."""
    what = "an impossible clock"
    try:
        if settings.clock is None and "clock" in theirs:
            settings = replace(settings, clock=TimeControl.from_wire(theirs["clock"]))
        what = "impossible limits"
        if settings.limits is None and "limits" in theirs:
            settings = replace(settings, limits=Limits.from_wire(theirs["limits"]))
    except TimeControlError as e:
        await conn.tell_error(f"bad hello: {what}: {e}")
        raise BadHello(f"the peer's hello asks for {what}: {e}") from None
    return settings


async def _claim_game_id(conn: Connection, ledger: GameLedger | None, me: Identity, game: bytes) -> None:
    """Never sign two hellos for one game id (net/ledger.py says why)."""
    if ledger is None:
        return
    try:
        fresh = ledger.claim(me.public, game)
    except LedgerError as e:
        await conn.tell_error("the other side cannot record the game")
        raise SessionError(str(e)) from None
    if not fresh:
        await conn.tell_error("that game id was used before: start a new game")
        raise Refused(f"the peer starts a game with the id of one we already played ({game.hex()[:16]}); "
                      "signing it again would make our key sign two histories of one game")


def _check_hello(env: Envelope, game: bytes, seq: int, prev: bytes) -> None:
    if env.type != "hello" or env.seq != seq or env.prev != prev or env.game != game:
        raise ProtocolError(f"expected the hello as message {seq}, got {env.type} {env.seq}")


