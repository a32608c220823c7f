"""The joiner's side of an invite: try every way to the host at once, keep the first that proves its key.

The invite (net/invite.py) lists candidate addresses: the host's LAN
addresses, global IPv6 addresses, a port its router mapped, the address a
STUN server saw.  Most of them fail from any one place (a LAN address
from another LAN, IPv6 without IPv6), so they are tried together,
staggered as in "happy eyeballs" (RFC 8305): each attempt starts when the
one before failed or after ``stagger`` seconds.  An attempt succeeds only
when the host's signed challenge (net/gate.py) comes from the key pinned
in the invite; a connection presenting another key is refused as a
possible man in the middle, and said so with both fingerprints.  Rounds
repeat until the deadline, so a host that maps its port a little late, or
a hole punched meanwhile (streams sent on ``extra``), still wins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import trio

from ..identity import Identity, fingerprint
from ..printable import printable
from ..wire import ProtocolError
from .framing import CONTROL, FramedStream, PeerClosed, PeerTimeout
from .gate import challenge_signature_ok, describe_path
from .invite import Candidate, Invite, knock_mac
from .punch import abort
from .hostport import host_port


class NoPath(Exception):
    """No candidate reached the host; ``str(e)`` is one line, ``failures`` says why for each."""

    def __init__(self, message: str, failures: Sequence[tuple[str, str]]) -> None:
        super().__init__(message)
        self.failures = list(failures)


class ManInTheMiddle(NoPath):
    """Something answered for the host with another key (and nothing answered with the pinned one)."""


@dataclass(frozen=True)
class DialTimes:
    stagger: float = 0.25  # RFC 8305's connection attempt delay
    connect: float = 3.0  # seconds for one TCP connect
    challenge: float = 5.0  # seconds for the host's challenge to arrive once connected
    retry: float = 3.0  # seconds between rounds over the candidates
    frame: float = 10.0


@dataclass
class Dialed:
    framed: FramedStream
    via: str  # the candidate kind that won, or "punched"
    address: str
    others: list[tuple[str, str]] = field(default_factory=list)  # (address, why it failed) of the rest
    host_key: bytes = b""  # the key the invite pinned, which the game's hellos must carry
    relayed: dict[str, object] = field(default_factory=dict)  # for a relayed game: how resume meets again

    @property
    def path(self) -> str:
        if self.via == "relayed":
            return f"relayed by {self.address.removeprefix('relay ')}"
        return describe_path(self.via)


@dataclass
class _Race:
    winner: Dialed | None = None
    me: bytes = b""  # our public key, which the knock names
    failures: dict[str, str] = field(default_factory=dict)  # address -> the last reason it failed
    impostors: dict[str, bytes] = field(default_factory=dict)  # address -> the key it presented
    tried: set[str] = field(default_factory=set)
    done: trio.Event = field(default_factory=trio.Event)
    log: Callable[[str], None] = lambda s: None


async def _expect(framed: FramedStream, t: str, address: str, race: _Race, times: DialTimes,
                  late: str) -> dict[str, object] | None:
    """The host's next control message if it is a ``t``; else None, with the reason noted
    (``late`` when nothing came within the challenge time)."""
    try:
        with trio.fail_after(times.challenge):
            frame = await framed.receive()
        if frame.kind != CONTROL:
            raise ProtocolError(f"it sent a game message, not {t} (a host without this invite?)")
        msg = frame.control()
        if msg["t"] == "error":
            raise ProtocolError(f"it said: {printable(msg['reason'], 200)}")
        if msg["t"] != t:
            raise ProtocolError(f"it sent {msg['t']!r}, not {t}")
    except trio.TooSlowError:
        race.failures[address] = late
        return None
    except (ProtocolError, PeerClosed, PeerTimeout) as e:
        race.failures[address] = str(e) or type(e).__name__
        return None
    return msg


async def _challenge(framed: FramedStream, invite: Invite, address: str, race: _Race, times: DialTimes) -> bytes | None:
    """Read the host's challenge; its nonce if it is signed by the invite's key, else None (reason noted)."""
    msg = await _expect(framed, "challenge", address, race, times, f"no challenge within {times.challenge:g} s")
    if msg is None:
        return None
    key, nonce, sig = msg["key"], msg["nonce"], msg["sig"]
    if key != invite.key:
        shown = key if isinstance(key, bytes) and len(key) == 32 else b""
        if address not in race.impostors:
            race.log(f"refused {address}: it answered with the key {fingerprint(shown) if shown else 'garbage'}, "
                     f"not the invite's {fingerprint(invite.key)}; a possible man in the middle (still trying)")
        race.impostors[address] = shown
        race.failures[address] = (f"it presented the key {fingerprint(shown) if shown else 'garbage'}, not the "
                                  f"invite's {fingerprint(invite.key)}: a possible man in the middle")
        return None
    if not isinstance(nonce, bytes) or not challenge_signature_ok(invite.key, nonce, sig):
        race.failures[address] = "its challenge is not signed by the invite's key: a possible man in the middle"
        race.impostors[address] = b""
        return None
    return nonce


async def _attempt(candidate: Candidate, invite: Invite, race: _Race, times: DialTimes, failed: trio.Event) -> None:
    address = host_port(candidate.host, candidate.port)
    race.tried.add(address)
    try:
        try:
            with trio.fail_after(times.connect):
                stream = await trio.open_tcp_stream(candidate.host, candidate.port)
        except trio.TooSlowError:
            race.failures[address] = f"no answer within {times.connect:g} s"
            return
        except OSError as e:
            race.failures[address] = _why(e)
            return
        await _try_stream(stream, candidate.kind, address, invite, race, times)
    finally:
        failed.set()


def _why(e: OSError) -> str:
    """The first operating-system reason under ``e`` (trio wraps failed attempts in a group)."""
    todo: list[BaseException] = [e]
    while todo:
        x = todo.pop(0)
        if isinstance(x, OSError) and x.strerror:
            return x.strerror
        if isinstance(x, BaseExceptionGroup):
            todo.extend(x.exceptions)
        if x.__cause__ is not None:
            todo.append(x.__cause__)
    return str(e)


async def _try_stream(stream: trio.SocketStream, via: str, address: str, invite: Invite, race: _Race,
                      times: DialTimes) -> None:
    framed = FramedStream(stream, times.frame)
    try:
        nonce = await _challenge(framed, invite, address, race, times)
        seated = nonce is not None and race.winner is None and await _knock(framed, nonce, invite, via, address,
                                                                          race, times)
    except BaseException:  # cancelled: another way won, or the time is up
        await abort(stream)
        raise
    if not seated or race.winner is not None:
        await abort(stream)  # the host's trial ends at once, and this port is free for the next punch
        return
    try:
        await framed.send_control("sit")
    except (PeerClosed, PeerTimeout) as e:
        race.failures[address] = f"the host closed the connection as we sat down ({e})"
        await abort(stream)
        return
    race.winner = Dialed(framed, via, address)
    race.done.set()


async def _knock(framed: FramedStream, nonce: bytes, invite: Invite, via: str, address: str, race: _Race,
                 times: DialTimes) -> bool:
    """Knock and wait for the host to say we are seated: a connection counts only once both
    directions have carried a message (a router can lose track of a punched one half-way)."""
    mac = knock_mac(invite.secret, nonce, invite.key, race.me)
    try:
        await framed.send_control("knock-seat", key=race.me, mac=mac, via=via)
    except (PeerClosed, PeerTimeout) as e:
        race.failures[address] = f"the host closed the connection before we could knock ({e})"
        return False
    late = f"the host did not seat us within {times.challenge:g} s of the knock"
    return await _expect(framed, "seated", address, race, times, late) is not None


async def dial(invite: Invite, me: Identity, deadline: float, log: Callable[[str], None] = lambda s: None,
               times: DialTimes = DialTimes(),
               extra: trio.MemoryReceiveChannel[tuple[trio.SocketStream, str]] | None = None) -> Dialed:
    """Reach the host of ``invite`` before ``deadline`` (a trio time) and knock; the winning connection.

    Raises :class:`ManInTheMiddle` if only impostors answered, :class:`NoPath` if nothing did.
    """
    race = _Race(me=me.public, log=log)
    candidates = list(invite.candidates)

    async def rounds(nursery: trio.Nursery) -> None:
        while True:
            for candidate in candidates:
                failed = trio.Event()
                nursery.start_soon(_attempt, candidate, invite, race, times, failed)
                with trio.move_on_after(times.stagger):
                    await failed.wait()
            await trio.sleep(times.retry)

    async def punched(nursery: trio.Nursery) -> None:
        assert extra is not None
        kinds = {host_port(c.host, c.port): c.kind for c in candidates}
        async for stream, address in extra:
            # A punch toward a mapped or public address that connects went through that
            # mapping; only one toward the STUN-seen address is a hole punched.
            kind = "relayed" if address.startswith("relay ") else kinds.get(address, "stun")
            nursery.start_soon(_try_stream, stream, "punched" if kind == "stun" else kind, address, invite, race,
                               times)

    with trio.move_on_at(deadline):
        async with trio.open_nursery() as nursery:
            if candidates:
                nursery.start_soon(rounds, nursery)
            if extra is not None:
                nursery.start_soon(punched, nursery)
            await race.done.wait()
            nursery.cancel_scope.cancel()
    if race.winner is None:
        failures = sorted(race.failures.items())
        if race.impostors:
            address, key = sorted(race.impostors.items())[0]
            shown = fingerprint(key) if key else "a bad signature"
            raise ManInTheMiddle(f"refused {address}: it answered with the key {shown}, not the invite's "
                                 f"{fingerprint(invite.key)}; a possible man in the middle", failures)
        raise NoPath("no way to the host worked", failures)
    winner = race.winner
    winner.host_key = invite.key
    winner.others = sorted((a, race.failures.get(a, "no answer yet when another way connected"))
                           for a in race.tried if a != winner.address)
    log(f"connected: {winner.path}" + ("" if winner.via == "relayed" else f" ({winner.address})"))
    for address, why in winner.others:
        log(f"  not used: {address}: {why}")
    return winner
