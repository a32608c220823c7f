"""Local games that write verifiable replays: both seats of a game, in one process.

Both sides of the protocol run here in turn, exactly as two peers would over
the network, because each is a :class:`~basilica_p2p.seat.Seat` of its own:
signed hellos, a real commit-reveal, every decision as a signed action and
the other side's signed acknowledgement, secret Jester colours by
commit-reveal, a hidden deal's steps and shares, and both signed results.
Every envelope is taken by both seats and appended (fsynced) to the replay
before the next one is made.  ``basilica play``, ``basilica match``, the
tournaments, the sample replays and the test vectors all play through here.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..agent import Agent, Resign, TakeBack, as_agent
from ..clock import Limits, TimeClaim, TimeControl
from ..engine import Game, Manifest, Options
from ..identity import Identity
from ..referee import GameSpec, Outcome
from ..schemes import COMMIT_REVEAL, HIDDEN_DEAL
from ..seat import (
    ClocksChanged,
    Late,
    NothingToTakeBack,
    Outgoing,
    Refused,
    Seat,
    SeatEvent,
    SeatSecrets,
    StepKind,
)
from ..wire import new_nonce
from .file import Header, ReplayWriter

@dataclass(frozen=True)
class Forfeit:
    """A side that gave the game up (a person who left, a bot that failed): its seat (0 or 1), the
    reason recorded in its signed forfeit, and one line for the terminal."""

    player: int
    reason: str
    summary: str

    def __str__(self) -> str:
        return self.summary

    @classmethod
    def of(cls, player: int, why: Resign) -> Forfeit:
        return cls(player, why.reason, why.told)


@dataclass(frozen=True)
class Played:
    """How a local game ended: the final game (player 1's seat's, common knowledge), its outcome,
    and who resigned or lost on time, if anyone did."""

    game: Game
    outcome: Outcome
    forfeit: Forfeit | None = None
    on_time: TimeClaim | None = None


def play_both_seats(
    path: Path,
    manifest: Manifest,
    options: Options,
    players: tuple[Identity, Identity],
    agents: tuple[object, object],
    *,
    shuffle: str = COMMIT_REVEAL,
    clock: TimeControl | None = None,
    limits: Limits | None = None,
    now: Callable[[], float] = time.monotonic,
    game_id: bytes | None = None,
    secrets: tuple[SeatSecrets, SeatSecrets] | None = None,
    salts: Callable[[], bytes] = new_nonce,
    watch: Callable[[SeatEvent], None] | None = None,
    interrupted: tuple[int, str] | None = None,
) -> Played:
    """Play one game between ``agents`` (agents, or bots made agents) and write its replay to ``path``.

    ``game_id`` and the seats' ``secrets`` (commit nonces, deal secrets) default
    to fresh randomness from the operating system, and each secret Jester
    choice draws its salt from ``salts``; fixed values are for test vectors and
    for matches that must give the same games every time.  ``watch`` is told
    player 1's seat's events (a match's log).  ``interrupted``: the seat that
    resigns, and why, when Ctrl-C stops the game (a person's, in ``basilica
    play``); the replay then still ends as a finished game.

    ``limits`` make it a game of protocol 3, as a network game is (the vectors' fault.replay).
    With a ``clock`` each side's thinking is timed by ``now`` (seconds); a side
    whose decision came after its clock ran out loses on time, the other side
    signing the claim.  An agent may answer a :class:`~basilica_p2p.agent.TakeBack`:
    both sides sign it and the game goes back to that agent's earlier decision
    (seeded: the same tiles come again); takebacks need the seeded stack of
    commit-reveal, and with it they are for local games only (docs/playing.md).
    An agent's :class:`~basilica_p2p.agent.Resign` is its side's signed forfeit.
    """
    if shuffle != COMMIT_REVEAL and clock is not None:
        # A local game of people is seeded (takebacks need it): no clocks with the hidden deal here.
        raise ValueError(f"a local game with a clock is dealt by {COMMIT_REVEAL}, not {shuffle}")
    game = game_id if game_id is not None else os.urandom(32)
    spec = GameSpec(game, (players[0].public, players[1].public), (players[0].name, players[1].name), options,
                    manifest, shuffle, clock, limits)
    chosen = secrets if secrets is not None else (SeatSecrets(), SeatSecrets())
    # A seat draws its commit nonce and deal secret from the operating system unless they are
    # given; the salts of secret Jester choices come from ``salts``, in the order they are made.
    seats = tuple(Seat(spec, players[i], entropy=_entropy(salts), secrets=_filled(chosen[i], shuffle),
                       takebacks=shuffle == COMMIT_REVEAL) for i in (0, 1))
    table = _Table(seats, (as_agent(agents[0]), as_agent(agents[1])), now if clock is not None else None, watch)
    try:
        with ReplayWriter.create(path, Header.of(spec)) as out:
            table.writer = out
            return table.play(manifest)
    except KeyboardInterrupt:
        if interrupted is None:
            raise
        seat, why = interrupted
        return resign_in_file(path, players[seat], seats[seat].secrets, Resign(why), manifest)


def resign_in_file(path: Path, player: Identity, secrets: SeatSecrets, why: Resign, manifest: Manifest) -> Played:
    """End the game recorded at ``path`` with ``player``'s signed resignation: the file is read back
    (a record torn by the interruption cut off), walked into ``player``'s seat, and the forfeit
    appended, so the replay is a finished game."""
    from .walk import seat_for, walk

    writer, replay = ReplayWriter.open_append(path)
    with writer:
        seat = seat_for(replay, {manifest.hash: manifest}, player, secrets)
        refused = walk(replay, seat)
        assert refused is None, refused
        if not seat.finished:
            writer.append(seat.resign(why.reason).envelope.raw)
    g, outcome = seat.game, seat.outcome
    assert outcome is not None and seat.me is not None
    if g is None:
        g = Game.new(manifest, seat.spec.options, bytes(32))
    return Played(g, outcome, Forfeit.of(seat.me, why) if outcome.claimed_by == seat.me else None, outcome.time)


def _entropy(salts: Callable[[], bytes]) -> Callable[[int], bytes]:
    def draw(n: int) -> bytes:
        value = salts()
        assert len(value) == n
        return value

    return draw


def _filled(secrets: SeatSecrets, shuffle: str) -> SeatSecrets:
    nonce = secrets.nonce or new_nonce()
    deal = secrets.deal or (new_nonce() if shuffle == HIDDEN_DEAL else b"")
    return SeatSecrets(nonce, secrets.jester, deal)


class _Table:
    """The loop of one local game: both seats, both agents, one writer."""

    def __init__(self, seats: tuple[Seat, ...], agents: tuple[Agent, ...], now: Callable[[], float] | None,
                 watch: Callable[[SeatEvent], None] | None) -> None:
        self.seats, self.agents, self.now, self.watch = seats, agents, now, watch
        self.writer: ReplayWriter | None = None
        self.forfeit: Forfeit | None = None

    def play(self, manifest: Manifest) -> Played:
        seats = self.seats
        names = seats[0].spec.names
        for i, agent in enumerate(self.agents):
            agent.begin(i, names, manifest)
        try:
            while not seats[0].finished:
                step = seats[0].due()
                if step.decision:
                    self._decide(step.who)
                else:
                    self._send(step.who, seats[step.who].make())
        finally:
            for agent in self.agents:
                agent.close()
        g, outcome = seats[0].game, seats[0].outcome
        assert outcome is not None
        if g is None:  # a forfeit before the setup: no game was dealt
            g = Game.new(seats[0].spec.manifest, seats[0].spec.options, bytes(32))
        return Played(g, outcome, self.forfeit, outcome.time)

    def _decide(self, who: int) -> None:
        seat, agent = self.seats[who], self.agents[who]
        if self.now is not None:
            start = self.now()
            for s in self.seats:
                self._tell_seat(s, s.begin(start))
            # The clocks as they stand when the agent is asked.
            self._tell_clocks(self.now())
        ask = seat.ask()
        assert ask is not None
        answer = agent.choose(ask)
        at = self.now() if self.now is not None else 0.0
        if isinstance(answer, Resign):
            self.forfeit = Forfeit.of(who, answer)
            self._send(who, seat.resign(answer.reason))
        elif isinstance(answer, TakeBack):
            self._take_back(who, answer, at)
        else:
            made = seat.make(answer, at)
            if isinstance(made, Late):
                # The other side signs the claim, with the figures it measured (PROTOCOL.md §4a).
                self._tell_seat(seat, made.events)
                self._send(1 - who, self.seats[1 - who].claim_on_time(at), at)
            else:
                self._send(who, made, at)
        if self.now is not None:
            self._tell_clocks(self.now())

    def _take_back(self, who: int, answer: TakeBack, at: float) -> None:
        asked = self.seats[who].ask_takeback(answer.moves, at)
        if asked is None:
            self.agents[who].observe(NothingToTakeBack(who))
            return
        self._send(who, asked, at)
        other = self.seats[1 - who]
        assert other.due().kind is StepKind.TAKEBACK
        self._send(1 - who, other.make())

    def _send(self, who: int, out: Outgoing | Late, at: float = 0.0) -> None:
        assert isinstance(out, Outgoing) and self.writer is not None
        self.writer.append(out.envelope.raw)
        self._tell_seat(self.seats[who], out.events)
        got = self.seats[1 - who].receive(out.envelope, now=at)
        if isinstance(got, Refused):  # pragma: no cover - both seats run the same checks
            raise AssertionError(f"seat {2 - who} refused seat {who + 1}'s message: {got.reason}")
        self._tell_seat(self.seats[1 - who], got.events)

    def _tell_seat(self, seat: Seat, events: tuple[SeatEvent, ...]) -> None:
        me = seat.me
        assert me is not None
        for event in events:
            if isinstance(event, ClocksChanged):
                continue  # told to both agents at once, by _tell_clocks
            self.agents[me].observe(event)
            if me == 0 and self.watch is not None:
                self.watch(event)

    def _tell_clocks(self, at: float) -> None:
        for seat, agent in zip(self.seats, self.agents):
            if seat.clocks is not None:
                agent.observe(ClocksChanged(seat.clocks.view(at, me=seat.me)))


def play_recorded(
    path: Path,
    manifest: Manifest,
    options: Options,
    players: tuple[Identity, Identity],
    bots: tuple[object, object],
    nonces: tuple[bytes, bytes] | None = None,
    game_id: bytes | None = None,
    salts: Callable[[], bytes] = new_nonce,
    shuffle: str = COMMIT_REVEAL,
    deal_secrets: tuple[bytes, bytes] | None = None,
    clock: TimeControl | None = None,
    now: Callable[[], float] = time.monotonic,
    limits: Limits | None = None,
) -> Game:
    """:func:`play_both_seats` for bots and fixed secrets, as tests, samples and vectors use it:
    returns the final game."""
    secrets = (SeatSecrets(nonces[0] if nonces else b"", None, deal_secrets[0] if deal_secrets else b""),
               SeatSecrets(nonces[1] if nonces else b"", None, deal_secrets[1] if deal_secrets else b""))
    return play_both_seats(path, manifest, options, players, bots, shuffle=shuffle, clock=clock, limits=limits,
                           now=now, game_id=game_id, secrets=secrets, salts=salts).game


__all__ = ["Forfeit", "Played", "play_both_seats", "play_recorded", "resign_in_file"]
