"""Test harness for the network layer: an honest side against a scripted peer.

The honest side is the real code (``play_one_game``, or ``play_games`` with
its keepalives) on one end of a stream pair: ``trio.testing.memory_stream_pair``
or a real loopback TCP connection.  On the other end a :class:`ScriptedPeer`
writes raw frames.  It keeps its own :class:`~basilica_p2p.referee.Referee`, so
it can play honestly for as long as a test wants (with its own seeded bot)
and then misbehave: forge envelopes with ``seal``, break the framing, send
garbage, stall, trickle, ...

Typical use::

    async def script(p: ScriptedPeer) -> None:
        await p.hello()
        await p.play(stop=at_step("ack"))
        await p.send_env(p.forge("ack", {"ply": p.ref.ack_ply, "state": bytes(32)}))
        await p.drain()

    run = await run_against(script, tmp_path, honest_seat=0)
    assert isinstance(run.error, PeerMisbehaved)

Also here: loopback TCP pairs, a fault-injecting proxy (drop, delay,
truncate, corrupt, duplicate) and helpers for two honest peers through
``net.peer.host`` / ``join``.
"""

from __future__ import annotations

import itertools
import hashlib
import inspect
import os
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trio
import trio.testing
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from basilica_p2p.agent import AgentBase, Traits
from basilica_p2p.bots import GreedyBot, RandomBot
from basilica_p2p.engine import Game, Options, Ruleset, default_manifest, format_action, observe, parse_action
from basilica_p2p.identity import Identity
from basilica_p2p.net.framing import CONTROL, ENVELOPE, MAX_FRAME, FramedStream, Frame, PeerClosed
from basilica_p2p.net.peer import PeerConfig
from basilica_p2p.known_peers import KnownPeers
from basilica_p2p.net.rejoin import prove
from basilica_p2p.net.session import (
    Connection,
    GameReport,
    Presence,
    Settings,
    Side,
    Timeouts,
    hello_body,
    play_one_game,
)
from basilica_p2p.referee import GENESIS, GameSpec, Referee
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.verify import Verdict, verify_file
from basilica_p2p.wire import Envelope, commitment, decode, jester_commitment, new_nonce, open_envelope, seal
from basilica_p2p.schemes import COMMIT_REVEAL

_U32 = struct.Struct(">I")

# --- identities and settings ---------------------------------------------------------


def ident(i: int, name: str) -> Identity:
    return Identity(name, Ed25519PrivateKey.from_private_bytes(bytes([i]) * 32))


ALICE = ident(1, "alice")
BOB = ident(2, "bob")
MALLORY = ident(3, "mallory")
BOB_IMPOSTOR = ident(4, "bob")  # the name "bob" with another key


def settings(ruleset: str = "portal2022", festum: bool = False, removal: bool = False,
             manifest: Any = None, shuffle: str = COMMIT_REVEAL) -> Settings:
    """Commit-reveal unless asked: the tests of the lockstep, framing and timeouts count
    records of that scheme (tests/test_net_hidden.py plays the hidden deal)."""
    return Settings(Options(Ruleset(ruleset), festum, removal), manifest or default_manifest(), shuffle)


DEFAULT = settings()

# Small deadlines for tests on real sockets: a hang shows up in seconds.
FAST = Timeouts(handshake=5.0, ping_interval=0.2, idle=3.0, frame=2.0)


def frame_bytes(kind: int, body: bytes) -> bytes:
    """A frame exactly as framing.py writes it (no checks: tests forge bad ones too)."""
    return _U32.pack(len(body) + 1) + bytes([kind]) + body


# --- streams ---------------------------------------------------------------------------


async def tcp_pair() -> tuple[trio.SocketStream, trio.SocketStream]:
    """Two ends of one real loopback TCP connection."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    try:
        port = listeners[0].socket.getsockname()[1]
        client = await trio.open_tcp_stream("127.0.0.1", port)
        server = await listeners[0].accept()
    finally:
        for listener in listeners:
            await listener.aclose()
    return server, client


async def stream_pair(tcp: bool, lockstep: bool = False) -> tuple[trio.abc.Stream, trio.abc.Stream]:
    """TCP loopback, or memory streams: unbuffered (``lockstep``: a send waits until the other
    end reads it, like a full TCP buffer) or with unbounded buffers."""
    if tcp:
        return await tcp_pair()
    if lockstep:
        return trio.testing.lockstep_stream_pair()
    return trio.testing.memory_stream_pair()


async def ticker(step: float) -> None:
    """Keep a timer always due soon (a heartbeat)."""
    while True:
        await trio.sleep(step)


def inline_threads(monkeypatch: Any) -> None:
    """For MockClock tests: run ``trio.to_thread.run_sync`` work (the bots' decisions)
    inline instead of in a worker thread.  An autojumping clock sees a task waiting
    for a thread as idle and would jump virtual time forward while a bot thinks for
    a few real microseconds; bots are instant, so running them inline keeps virtual
    time exact and the tests deterministic."""

    async def run_sync(fn: Callable[..., Any], *args: Any, abandon_on_cancel: bool = False, **kw: Any) -> Any:
        await trio.lowlevel.checkpoint()
        return fn(*args)

    monkeypatch.setattr(trio.to_thread, "run_sync", run_sync)


class Thinker(AgentBase):
    """A person (a blocking agent) whose every decision takes ``seconds(view)`` of virtual time,
    under :func:`thinking_in_virtual_time`."""

    traits = Traits(blocking=True)

    def seconds(self, view: Any) -> float:
        return 0.0


def thinking_in_virtual_time(monkeypatch: Any) -> None:
    """:func:`inline_threads`, where a :class:`Thinker`'s decision first sleeps its seconds of
    virtual time (cancellable, as a person at the prompt is when a clock or a limit runs out)."""

    async def run_sync(fn: Callable[..., Any], *args: Any, abandon_on_cancel: bool = False, **kw: Any) -> Any:
        agent = fn.__self__ if inspect.ismethod(fn) else None
        if isinstance(agent, Thinker):
            await trio.sleep(agent.seconds(args[0].view))
        else:
            await trio.lowlevel.checkpoint()
        return fn(*args)

    monkeypatch.setattr(trio.to_thread, "run_sync", run_sync)


# --- the scripted peer -------------------------------------------------------------------


class HungUp(Exception):
    """The honest side stopped talking to the scripted peer (error notice, bye or close)."""


def at_step(*steps: str, after: int = 0) -> Callable[[ScriptedPeer, str], bool]:
    """Stop predicate for :meth:`ScriptedPeer.play`: our turn to send one of ``steps``,
    once at least ``after`` envelopes are in the chain."""
    return lambda p, step: step in steps and p.ref is not None and p.ref.seq >= after


class ScriptedPeer:
    """The far end of a connection, driven by a test, frame by frame."""

    def __init__(self, stream: trio.abc.Stream, me: Identity, seat: int, settings: Settings = DEFAULT,
                 bot: Any = None, frame_timeout: float = 60.0) -> None:
        self.framed = FramedStream(stream, frame_timeout)
        self.me = me
        self.seat = seat
        self.settings = settings
        self.bot = bot if bot is not None else RandomBot(4242 + seat)
        self.ref: Referee | None = None
        self.records: list[bytes] = []  # the chain, as this side holds it
        self.controls: list[dict[str, Any]] = []  # control messages the honest side sent us
        self.bad: list[bytes] = []  # raw bytes of everything sent on purpose as misbehaviour
        self.nonce = b""
        self.jester: tuple[str, bytes] | None = None
        self.answer_pings = True
        self.pings = 0
        self.marks: dict[str, float] = {}
        self.late: list[bytes] = []  # envelopes read by drain()
        self.deal_secret = os.urandom(32)  # used only in a game dealt by sra-p256-v1
        self.doorway: Doorway | None = None  # how this peer comes back after a break (run_against)

    # -- plumbing --

    def mark(self, name: str) -> None:
        self.marks[name] = trio.current_time()

    @property
    def errors(self) -> list[str]:
        """The reasons of the error notices the honest side sent us."""
        return [str(c.get("reason")) for c in self.controls if c.get("t") == "error"]

    async def send_bytes(self, data: bytes) -> None:
        await self.framed.stream.send_all(data)

    async def send_frame(self, kind: int, body: bytes) -> None:
        await self.send_bytes(frame_bytes(kind, body))

    async def send_control(self, t: str, **fields: Any) -> None:
        await self.framed.send_control(t, **fields)

    async def ping(self) -> None:
        self.pings += 1
        await self.send_control("ping", n=self.pings)

    async def send_env(self, env: Envelope | bytes, bad: bool = False) -> None:
        raw = env.raw if isinstance(env, Envelope) else env
        if bad:
            self.bad.append(raw)
        await self.framed.send(ENVELOPE, raw)

    async def next_frame(self) -> Frame:
        try:
            frame = await self.framed.receive()
        except PeerClosed as e:
            raise HungUp(f"closed: {e}") from None
        if frame.kind == CONTROL:
            msg = decode(frame.body)
            self.controls.append(msg)
            if msg.get("t") == "ping" and self.answer_pings:
                try:
                    await self.send_control("pong", n=msg["n"])
                except PeerClosed as e:
                    raise HungUp(f"closed: {e}") from None
        return frame

    async def next_envelope(self) -> bytes:
        while True:
            frame = await self.next_frame()
            if frame.kind == ENVELOPE:
                return frame.body
            t = self.controls[-1].get("t")
            if t in ("error", "bye"):
                raise HungUp(f"{t}: {self.controls[-1]}")

    async def receive(self) -> Envelope:
        """The honest side's next envelope, checked by our referee and kept."""
        assert self.ref is not None
        env = open_envelope(await self.next_envelope())
        self.ref.feed(env)
        self.records.append(env.raw)
        return env

    async def drain(self) -> list[str]:
        """Read (answering pings) until the honest side closes; the error reasons it gave.
        Envelopes that still come are kept in ``late``."""
        while True:
            try:
                frame = await self.next_frame()
                if frame.kind == ENVELOPE:
                    self.late.append(frame.body)
            except (HungUp, trio.BrokenResourceError, trio.ClosedResourceError):
                return self.errors
            except Exception:  # garbage would be the honest side's bug; the test looks at the honest side
                return self.errors

    async def aclose(self) -> None:
        await self.framed.aclose()

    async def linger(self, seconds: float, ping_every: float | None = None, envelopes_ok: bool = False) -> None:
        """Stay connected for ``seconds`` without sending anything of the game: read
        frames (answering pings if ``answer_pings``) and, with ``ping_every``, send pings.
        An envelope or an error notice from the honest side meanwhile raises HungUp."""

        async def pinger() -> None:
            assert ping_every is not None
            while True:
                await trio.sleep(ping_every)
                try:
                    await self.ping()
                except (PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError):
                    return

        why: list[str] = []

        async def reader(scope: trio.CancelScope) -> None:
            while True:
                try:
                    frame = await self.next_frame()
                except HungUp as e:
                    why.append(str(e))
                    scope.cancel()
                    return
                if frame.kind == ENVELOPE:
                    self.late.append(frame.body)
                    if envelopes_ok:
                        continue
                    why.append("an envelope while we lingered")
                    scope.cancel()
                    return
                if self.controls[-1].get("t") in ("error", "bye"):
                    why.append(f"{self.controls[-1]}")
                    scope.cancel()
                    return

        with trio.move_on_after(seconds):
            async with trio.open_nursery() as nursery:
                if ping_every is not None:
                    nursery.start_soon(pinger)
                nursery.start_soon(reader, nursery.cancel_scope)
        if why:
            raise HungUp(why[0])

    # -- coming back after a break --

    async def come_back(self, *, key: Identity | None = None, have: int | None = None) -> bool:
        """Open a new stream to the honest side through the doorway, prove who we are (as ``key``,
        ours by default) and say where we stand (``have`` messages: ours by default, a lie
        otherwise); then read back what the honest side holds that we lack.  False if the honest
        side did not take our proof."""
        assert self.doorway is not None and self.ref is not None
        mine, theirs = trio.testing.memory_stream_pair()
        await self.doorway.streams.send(theirs)
        self.framed = FramedStream(mine, 60.0)
        honest_key = self.ref.spec.players[1 - self.seat]
        if not await prove(self.framed, key or self.me, honest_key, self.game_id, trio.current_time() + 10):
            return False
        tip = hashlib.sha256(self.records[-1]).digest()
        count = len(self.records) if have is None else have
        try:
            await self.send_control("resume", game=self.game_id, have=count, tip=tip)
            while True:
                frame = await self.next_frame()
                if frame.kind == CONTROL and self.controls[-1].get("t") == "resume":
                    theirs_have = self.controls[-1]["have"]
                    break
        except (HungUp, PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError):
            return False  # it did not take our proof, and hung up
        for _ in range(max(0, theirs_have - len(self.records))):
            await self.receive()
        return True

    async def stranger_knocks(self, data: bytes) -> None:
        """A stranger's connection to the waiting honest side: ``data`` sent, then closed."""
        assert self.doorway is not None
        mine, theirs = trio.testing.memory_stream_pair()
        await self.doorway.streams.send(theirs)
        with trio.move_on_after(1):
            try:
                await mine.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
        await mine.aclose()

    # -- the game --

    def hello_for(self, **overrides: Any) -> dict[str, Any]:
        """Our honest hello with ``overrides``; the fields after the schema's stay in their order."""
        body = hello_body(self.me, self.settings)
        body.update(overrides)
        tail = [k for k in ("clock", "limits") if k in body]
        return {**{k: v for k, v in body.items() if k not in tail}, **{k: body[k] for k in tail}}

    async def hello(self, game: bytes | None = None, **overrides: Any) -> None:
        """The handshake, honestly (``overrides`` change fields of our hello)."""
        mine = self.hello_for(**overrides)
        if self.seat == 0:
            game = game if game is not None else os.urandom(32)
            first = seal(self.me.key, game, 0, GENESIS, "hello", mine)
            await self.send_env(first)
            second = open_envelope(await self.next_envelope())
        else:
            first = open_envelope(await self.next_envelope())
            game = first.game
            second = seal(self.me.key, game, 1, first.hash, "hello", mine)
        names = (first.body["name"], second.body["name"])
        spec = GameSpec(game, (first.sender, second.sender), names, self.settings.options, self.settings.manifest,
                        self.settings.shuffle, self.settings.clock, self.settings.agreed_limits())
        hidden = self.settings.shuffle != COMMIT_REVEAL
        self.ref = Referee(spec, self.seat, self.deal_secret) if hidden else Referee(spec)
        for env in (first, second):
            self.ref.feed(env)
            self.records.append(env.raw)
        if self.seat == 1:
            await self.send_env(second)

    @property
    def game(self) -> Game | None:
        assert self.ref is not None
        return self.ref.game

    @property
    def game_id(self) -> bytes:
        assert self.ref is not None
        return self.ref.spec.game

    def forge(self, type_: str, body: dict[str, Any], *, seq: int | None = None, prev: bytes | None = None,
              game: bytes | None = None, key: Ed25519PrivateKey | None = None) -> Envelope:
        """A signed envelope for the current position of the chain, any field overridden."""
        assert self.ref is not None
        return seal(key or self.me.key, self.game_id if game is None else game,
                    self.ref.seq if seq is None else seq, self.ref.prev if prev is None else prev, type_, body)

    def choose(self, g: Game) -> str:
        legal = g.legal_actions()
        return format_action(self.bot.choose(observe(g, self.seat), legal))

    def honest_body(self, step: str) -> dict[str, Any]:
        """What an honest client sends for ``step`` now.

        Written here independently of :class:`basilica_p2p.seat.Seat` on purpose: a scripted
        peer that reused the seat could not catch a mistake the seat makes.
        """
        ref = self.ref
        assert ref is not None
        g = ref.game
        if step == "commit":
            self.nonce = new_nonce()
            return {"commitment": commitment(self.game_id, self.me.public, self.nonce)}
        if step == "reveal":
            return {"nonce": self.nonce}
        if step == "action":
            assert g is not None
            return {"ply": len(g.history), "action": self.choose(g), **self.clock_figure()}
        if step == "ack":
            assert g is not None and ref.ack_ply is not None
            return {"ply": ref.ack_ply, "state": bytes.fromhex(g.state_hash())}
        if step == "jcommit":
            assert g is not None
            view = g
            if g.to_move != self.seat:
                view = g.clone()
                view.apply(view.legal_actions()[0])
            text = self.choose(view)
            salt = new_nonce()
            self.jester = (text, salt)
            ply = ref.jester_ply(self.seat)
            return {"ply": ply, "commitment": jester_commitment(self.game_id, self.me.public, ply, text, salt),
                    **self.clock_figure()}
        if step == "jreveal":
            assert self.jester is not None
            text, salt = self.jester
            return {"ply": ref.jester_ply(self.seat), "action": text, "salt": salt}
        if step == "result":
            assert g is not None
            return {"scores": list(g.scores), "state": bytes.fromhex(g.state_hash()), "end": g.end_reason}
        if step == "forfeit":
            return {"loser": 2 - self.seat, "reason": "the other side's reveal did not match"}
        if step == "deal":
            assert ref.deal_table is not None
            return ref.deal_table.make_deal()
        if step == "shares":
            assert ref.deal_table is not None
            return ref.deal_table.make_shares()
        if step == "secret":
            return {"secret": self.deal_secret}
        raise AssertionError(step)

    def clock_figure(self) -> dict[str, int]:
        """A game with a clock: the remaining time a decision carries (this peer says it used none)."""
        if self.settings.clock is None or self.ref is None:
            return {}
        return {"clock": self.ref.signed[self.seat]}

    async def send_honest(self, step: str) -> Envelope:
        assert self.ref is not None
        env = self.forge(step, self.honest_body(step))
        self.ref.feed(env)
        self.records.append(env.raw)
        await self.send_env(env)
        return env

    async def play(self, stop: Callable[[ScriptedPeer, str], bool] | None = None, think: float = 0.0) -> str | None:
        """Play honestly; return the step at which ``stop`` said so (our turn, nothing
        sent yet), or None once the game is over.  ``think``: seconds (of the test's clock)
        before each message of ours, so that the honest side's keepalives run meanwhile."""
        assert self.ref is not None
        while not self.ref.finished:
            step, who = self.ref.waiting_for()
            if who == self.seat:
                if stop is not None and stop(self, step):
                    return step
                if think:
                    await trio.sleep(think)
                await self.send_honest(step)
            else:
                await self.receive()
        return None

    def illegal_action(self) -> str:
        """An action in canonical notation that is not legal now (for the player to move)."""
        g = self.game
        assert g is not None
        legal = {format_action(a) for a in g.legal_actions()}
        for text in ("V1:a99", "B:a99", "V2:e50", "O1:a99", "none", "pass", "V*", "a99", "$", "B:a1", "V1:a1"):
            try:
                if format_action(parse_action(text)) != text:
                    continue
            except Exception:
                continue
            if text not in legal:
                return text
        raise AssertionError("no illegal action found")


# --- running the honest side against a script ----------------------------------------------


class Doorway:
    """Where a scripted peer that went away comes back: each stream it opens is handed to the
    honest side's presence, which proves itself on it and checks the peer's proof (net/rejoin.py),
    exactly as after a real reconnection; a stream that fails is dropped and the next awaited."""

    def __init__(self, window: float | None = None) -> None:
        self.streams, self._incoming = trio.open_memory_channel[trio.abc.Stream](16)
        self.window = window
        self.tried = 0  # streams the honest side examined
        self.refused = 0  # of them, those that did not prove to be the peer

    def presence(self, honest: Identity) -> Callable[[Side], Presence]:
        def make(side: Side) -> Presence:
            seat = side.seat
            assert seat.me is not None
            peer, game = seat.spec.players[1 - seat.me], seat.spec.game

            async def reach(until: float) -> FramedStream | None:
                with trio.move_on_at(until):
                    while True:
                        stream = await self._incoming.receive()
                        self.tried += 1
                        framed = FramedStream(stream, 10.0)
                        if await prove(framed, honest, peer, game, min(until, trio.current_time() + 10)):
                            return framed
                        self.refused += 1
                        await framed.aclose()
                return None

            return Presence(reach, self.window)
        return make


# --- running the honest side against a script ----------------------------------------------


@dataclass
class Run:
    report: GameReport | None
    error: BaseException | None
    replay_dir: Path
    peer: ScriptedPeer
    script_error: BaseException | None = None
    started: float = 0.0
    ended: float = 0.0  # when the honest side returned or raised (trio clock)

    @property
    def replays(self) -> list[Path]:
        return sorted(self.replay_dir.glob("*.replay"))

    @property
    def replay(self) -> Path:
        files = self.replays
        assert len(files) == 1, files
        return files[0]

    @property
    def evidence(self) -> list[Path]:
        return sorted(self.replay_dir.glob("*.evidence"))

    def verdict(self) -> Verdict:
        return verify_file(self.replay)


async def run_against(
    script: Callable[[ScriptedPeer], Awaitable[None]],
    replay_dir: Path,
    *,
    honest_seat: int = 0,
    honest: Identity = ALICE,
    peer_id: Identity = BOB,
    honest_settings: Settings = DEFAULT,
    peer_settings: Settings | None = None,
    timeouts: Timeouts = Timeouts(),
    agent: Any = None,
    peer_bot: Any = None,
    tcp: bool = False,
    lockstep: bool = False,
    keepalive: bool = False,
    limit: float = 20.0,
    tick: float | None = None,
    grace: float = 5.0,
    ledger: Any = None,
    watch: Any = None,
    doorway: Doorway | None = None,
    chat: bool = False,
    log: Callable[[str], None] = lambda s: None,
) -> Run:
    """Run the honest side (``play_one_game``) and ``script`` on two ends of a stream pair.

    The honest side closes its end when it returns or raises (as ``play_games``
    does); its exception is kept in ``Run.error``, never raised here.  With
    ``keepalive`` the honest side also sends pings every ``timeouts.ping_interval``.
    With ``tick`` a heartbeat task runs beside (a timer always due within ``tick``).
    With a ``doorway`` the honest side waits for a peer that goes away (issue 20's presence),
    and the script comes back through it (:meth:`ScriptedPeer.come_back`); ``watch`` is told
    every event of the honest side.  With ``chat`` the honest side takes lines of chat; ``log``
    is told its log lines.
    """
    ours, theirs = await stream_pair(tcp, lockstep)
    conn = Connection(ours, timeouts)
    conn.chat = chat
    peer = ScriptedPeer(theirs, peer_id, 1 - honest_seat, peer_settings or honest_settings, bot=peer_bot)
    peer.doorway = doorway
    run = Run(None, None, replay_dir, peer, started=trio.current_time())
    agent = agent if agent is not None else RandomBot(7 + honest_seat)

    honest_done = trio.Event()
    script_done = trio.Event()

    async def honest_side(cancel_scope: trio.CancelScope) -> None:
        try:
            async with trio.open_nursery() as inner:
                if keepalive:
                    inner.start_soon(conn.keepalive)
                try:
                    presence = doorway.presence(honest) if doorway is not None else (lambda side: None)
                    run.report = await play_one_game(conn, honest, honest_seat, honest_settings, agent, replay_dir,
                                                     log=log, ledger=ledger, watch=watch, presence=presence)
                except Exception as e:
                    run.error = e
                run.ended = trio.current_time()
                inner.cancel_scope.cancel()
        finally:
            await conn.framed.aclose()
            honest_done.set()

    async def reaper(cancel_scope: trio.CancelScope) -> None:
        """Once the honest side is done, the script gets a grace period to notice, then is cancelled."""
        await honest_done.wait()
        with trio.move_on_after(grace):
            await script_done.wait()
        cancel_scope.cancel()

    async def script_side() -> None:
        try:
            await script(peer)
        except (HungUp, PeerClosed, trio.BrokenResourceError, trio.ClosedResourceError) as e:
            run.script_error = e
        except Exception as e:
            run.script_error = e
            raise
        finally:
            script_done.set()
            await peer.aclose()

    with trio.move_on_after(limit) as overall:
        async with trio.open_nursery() as nursery:
            if tick is not None:
                nursery.start_soon(ticker, tick)
            async with trio.open_nursery() as pair:
                pair.start_soon(honest_side, pair.cancel_scope)
                pair.start_soon(script_side)
                pair.start_soon(reaper, pair.cancel_scope)
            nursery.cancel_scope.cancel()
    if overall.cancelled_caught and not honest_done.is_set():
        raise AssertionError(f"hang: after {limit:g} s the honest side had neither returned nor raised "
                             f"(error so far: {run.error!r})")
    return run


def faulted(run: Run, *words: str) -> str:
    """The honest side ended the game with a fault citing the peer's last bad message: it won,
    its replay verifies and names the rule broken, and the peer was told."""
    assert run.error is None, f"expected a finished game, got {run.error!r}"
    assert run.report is not None and run.report.outcome.end == "fault"
    assert run.report.outcome.winner == 1 - run.peer.seat
    v = verify_file(run.replay)
    assert v.ok, v.error
    summary = v.summary()
    assert "signed a message that breaks the rules at record" in summary, summary
    for w in words:
        assert w in summary, f"{w!r} not in {summary!r}"
    last = open_envelope(read_replay(run.replay).records[-1])
    assert last.type == "fault" and last.body["message"] == run.peer.bad[-1]
    assert any("recorded as your loss" in e for e in run.peer.errors), run.peer.errors
    return summary


def claimed(run: Run, *words: str) -> str:
    """The honest side ended the game with its own claim that the peer stopped playing by the
    rules (a signed message the peer may not send, which no fault can cite): it won, its replay
    verifies and names what the peer did, and holds none of the refused messages."""
    assert run.error is None, f"expected a finished game, got {run.error!r}"
    assert run.report is not None
    o = run.report.outcome
    honest = 1 - run.peer.seat
    assert o.end == "forfeit" and o.winner == honest and o.claimed_by == honest, o
    assert o.reason.startswith("stopped playing by the rules: "), o.reason
    for w in words:
        assert w in o.reason, f"{w!r} not in {o.reason!r}"
    v = verify_file(run.replay)
    assert v.ok and f"forfeited as claimed by player {honest + 1}" in v.line(), v.line()
    holds_none_of(run.replay, run.peer.bad)
    assert run.peer.errors, "the honest side did not tell the peer why"
    return o.reason


def valid_prefix(run: Run, records: int | None = None) -> Verdict:
    """Check that the honest side's replay is a valid but unfinished game (and return the verdict)."""
    v = run.verdict()
    assert not v.ok, v.line()
    assert "incomplete game" in v.error, v.error
    if records is not None:
        assert f"valid through record {records};" in v.error, v.error
    return v


def holds_none_of(path: Path, blobs: list[bytes]) -> None:
    data = path.read_bytes()
    for b in blobs:
        assert b not in data, "the replay recorded a message the honest side refused"


# --- a fault-injecting proxy ----------------------------------------------------------------------


@dataclass
class Fault:
    """What the proxy does to the bytes going one way (``direction`` 0: client (joiner) to
    server (host), 1: back, None: both ways)."""

    direction: int | None = 0
    drop_after: int | None = None  # close both connections after this many bytes went this way
    truncate_after: int | None = None  # forward only this many bytes this way, then...
    truncate_then: str = "close"  # ... "close" both connections, or "stall" (keep them open, forward nothing)
    corrupt_at: int | None = None  # flip the bits of the byte at this offset of the stream (this way)
    corrupt_envelope: tuple[int, int] | None = None  # (n, offset): flip the byte at offset of envelope frame n
    #   (offset counts from the frame's first byte: 0-3 the length, 4 the kind, 5... the body)
    duplicate_envelope: int | None = None  # send envelope frame n twice
    delay: float = 0.0  # sleep this long before forwarding each chunk
    delay_every: int = 1  # ... only every n-th chunk


@dataclass
class ProxyLog:
    bytes: list[int] = field(default_factory=lambda: [0, 0])
    envelopes: list[int] = field(default_factory=lambda: [0, 0])
    events: list[str] = field(default_factory=list)


class _FrameSplitter:
    """Splits a byte stream into frames (as far as they are well formed)."""

    def __init__(self) -> None:
        self.buf = bytearray()
        self.broken = False

    def feed(self, data: bytes) -> list[bytes]:
        if self.broken:
            return [bytes(data)]
        self.buf += data
        out: list[bytes] = []
        while len(self.buf) >= 4:
            (length,) = _U32.unpack_from(self.buf, 0)
            if length == 0 or length > MAX_FRAME:
                self.broken = True
                out.append(bytes(self.buf))
                self.buf.clear()
                return out
            if len(self.buf) < 4 + length:
                break
            out.append(bytes(self.buf[: 4 + length]))
            del self.buf[: 4 + length]
        return out


async def _relay(src: trio.abc.Stream, dst: trio.abc.Stream, fault: Fault | None, direction: int,
                 log: ProxyLog, stop: trio.CancelScope, stall: trio.Event) -> None:
    f = fault if fault is not None and fault.direction in (None, direction) else None
    frame_level = f is not None and (f.corrupt_envelope is not None or f.duplicate_envelope is not None)
    splitter = _FrameSplitter()
    sent = 0
    chunks = 0
    while True:
        try:
            data = await src.receive_some(65536)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            data = b""
        if not data:
            # The end of this direction: pass it on (everything before it was delivered);
            # the other direction, which reads from ``dst``, ends in turn.
            log.events.append(f"eof {direction}")
            await _close(dst)
            return
        chunks += 1
        if f is not None and f.delay and chunks % f.delay_every == 0:
            await trio.sleep(f.delay)
        pieces = splitter.feed(data) if frame_level else [data]
        for piece in pieces:
            if frame_level and f is not None and len(piece) > 5 and piece[4] == ENVELOPE:
                n = log.envelopes[direction]
                log.envelopes[direction] += 1
                if f.corrupt_envelope is not None and f.corrupt_envelope[0] == n:
                    b = bytearray(piece)
                    b[f.corrupt_envelope[1] % len(piece)] ^= 0xFF
                    piece = bytes(b)
                    log.events.append(f"corrupted envelope {n}")
                if f.duplicate_envelope == n:
                    piece = piece + piece
                    log.events.append(f"duplicated envelope {n}")
            if f is not None and f.corrupt_at is not None and sent <= f.corrupt_at < sent + len(piece):
                b = bytearray(piece)
                b[f.corrupt_at - sent] ^= 0xFF
                piece = bytes(b)
                log.events.append(f"corrupted byte {f.corrupt_at}")
            limit = None
            if f is not None and f.drop_after is not None:
                limit = f.drop_after
            if f is not None and f.truncate_after is not None:
                limit = f.truncate_after
            if limit is not None and sent + len(piece) >= limit:
                piece = piece[: limit - sent]
                if piece:
                    try:
                        await dst.send_all(piece)
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        pass
                sent += len(piece)
                log.bytes[direction] = sent
                if f is not None and f.truncate_after is not None and f.truncate_then == "stall":
                    log.events.append(f"stalled {direction} after {sent} bytes")
                    stall.set()
                    await _swallow(src)
                    await _close(dst)
                    return
                log.events.append(f"dropped after {sent} bytes {direction}")
                stop.cancel()
                return
            try:
                await dst.send_all(piece)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                # The receiving end is gone (as a TCP peer that closed): drop what comes
                # this way; what is in flight the other way is still delivered, then EOF.
                log.events.append(f"broken {direction}")
                await _swallow(src)
                return
            sent += len(piece)
            log.bytes[direction] = sent


async def _swallow(src: trio.abc.Stream) -> None:
    """Read and drop everything until ``src`` ends."""
    while True:
        try:
            if not await src.receive_some(65536):
                return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return


async def _close(stream: trio.abc.Stream) -> None:
    with trio.move_on_after(1) as scope:
        scope.shield = True
        try:
            await stream.aclose()
        except Exception:
            pass


async def run_proxy(client: trio.abc.Stream, server: trio.abc.Stream, fault: Fault | None, log: ProxyLog) -> None:
    """Relay between ``client`` and ``server`` until either side ends, injecting ``fault``;
    then close both."""
    stall = trio.Event()
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_relay, client, server, fault, 0, log, nursery.cancel_scope, stall)
            nursery.start_soon(_relay, server, client, fault, 1, log, nursery.cancel_scope, stall)
    finally:
        for s in (client, server):
            await _close(s)


async def proxied_listener(target_port: int, fault: Fault | None, log: ProxyLog,
                           task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Listen on a free loopback port; relay the first connection to ``target_port``."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    try:
        client = await listeners[0].accept()
    finally:
        for listener in listeners:
            await listener.aclose()
    server = await trio.open_tcp_stream("127.0.0.1", target_port)
    await run_proxy(client, server, fault, log)


async def relaying_listener(target_port: int, faults: list[Fault | None], log: ProxyLog,
                            task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Listen on a free loopback port and relay every connection to ``target_port``, the n-th
    with ``faults[n]`` (none past the list): a path that is still there when the peers reconnect."""
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    task_status.started(listeners[0].socket.getsockname()[1])
    async with trio.open_nursery() as nursery:
        for n in itertools.count():
            client = await listeners[0].accept()
            while True:  # the host listens again a moment after the joiner dialled
                try:
                    server = await trio.open_tcp_stream("127.0.0.1", target_port)
                    break
                except OSError:
                    await trio.sleep(0.05)
            nursery.start_soon(run_proxy, client, server, faults[n] if n < len(faults) else None, log)


# --- two honest peers through net.peer.host / join ------------------------------------------------


@dataclass
class PairResult:
    host: list[GameReport] | BaseException
    join: list[GameReport] | BaseException
    elapsed: float = 0.0


def config(me: Identity, s: Settings, replay_dir: Path, *, home: Path | None = None, games: int = 1,
           greedy: bool = False, seed: int = 0) -> PeerConfig:
    """A side of :func:`host_and_join`: seeded random (or greedy) bots, short deadlines, known
    peers kept under ``home`` if given, ``games`` played if it hosts."""
    def agent_for(k: int):  # type: ignore[no-untyped-def]
        if greedy:
            return GreedyBot(s.manifest, seed + k)
        return RandomBot(seed + k)

    return PeerConfig(me, s, agent_for, replay_dir, KnownPeers(home) if home is not None else None, FAST, games)


def with_resume(cfg: PeerConfig, role: str) -> PeerConfig:
    """As the CLI does: a sidecar next to each replay, so that the game could be resumed."""
    cfg.resume_info = {"role": role, "identity": "user", "address": "127.0.0.1", "port": 0}
    return cfg


def reports(result: list[GameReport] | BaseException) -> list[GameReport]:
    """A side's reports, or a failure that names what it got instead."""
    assert isinstance(result, list), f"expected the reports, got {result!r}"
    return result


async def host_and_join(host_config: Any, join_config: Any, *, fault: Fault | None = None,
                        proxy_log: ProxyLog | None = None, limit: float = 30.0,
                        direct: bool | None = None) -> PairResult:
    """``net.peer.host`` on a free port and ``net.peer.join`` to it, over loopback TCP
    (through the fault proxy when ``fault`` or ``proxy_log`` is given).  Each side's
    exception is returned, not raised."""
    from basilica_p2p.net.peer import host, join

    results: dict[str, Any] = {}
    use_proxy = fault is not None or proxy_log is not None if direct is None else not direct
    log = proxy_log if proxy_log is not None else ProxyLog()
    start = trio.current_time()
    with trio.fail_after(limit):
        async with trio.open_nursery() as nursery:
            send, receive = trio.open_memory_channel[int](1)

            async def run_host() -> None:
                try:
                    results["host"] = await host("127.0.0.1", 0, host_config, lambda a, p: send.send_nowait(p))
                except Exception as e:
                    results["host"] = e

            async def run_join() -> None:
                port = await receive.receive()
                if join_config.resume_info is not None:
                    # As the CLI keeps it: where to dial again after a break (the host itself).
                    join_config.resume_info.update(address="127.0.0.1", port=port)
                if use_proxy:
                    port = await nursery.start(proxied_listener, port, fault, log)
                try:
                    results["join"] = await join("127.0.0.1", port, join_config)
                except Exception as e:
                    results["join"] = e

            nursery.start_soon(run_host)
            nursery.start_soon(run_join)
    return PairResult(results["host"], results["join"], trio.current_time() - start)
