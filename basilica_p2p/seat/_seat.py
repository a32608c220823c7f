"""One player's seat at a game: the protocol written once (protocol/PROTOCOL.md §4-§6).

A :class:`Seat` owns the referee of its game, the secrets of its side (the
commit nonce, the Jester choices and their salts, the deal secret), both
clocks as this side measures them, the chain of records so far, and the
making of every message its side sends.  It does no I/O and reads no clock:
its driver hands it the time (``now``, in any unit of seconds the driver
keeps) and, once, a source of randomness (``entropy``, as ``os.urandom``).

Three drivers use it: the network session (net/session.py), the in-process
table that plays both seats of a local game (replay/local.py), and the
replay walker that verifies, shows and resumes files (replay/walk.py).  A
seat made without an identity is a verifier: it takes every message of
both sides and makes none.

Each loop of a driver::

    step = seat.due()
    if step.who == seat.me:                  # ours to make
        answer = agent.choose(seat.ask()) if step.decision else None
        out = seat.make(answer, now=now)     # an Outgoing (or Late: our flag fell)
        record(out.envelope.raw); send(out.envelope.raw); tell(out.events)
    else:
        got = seat.receive(raw, now=now)     # Accepted, or Refused with why
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import replace

from .. import __version__
from ..clock import Clocks, Limits, TimeControl
from ..engine import Action, Game, Manifest, Observation, Options, format_action, observe
from ..identity import Identity
from ..printable import printable
from ..referee import GameSpec, Outcome, Referee, protocol_of
from ..schemes import HIDDEN_DEAL
from ..wire import (
    CHAT_TEXT,
    AckBody,
    ActionBody,
    Body,
    ChatBody,
    CommitBody,
    Envelope,
    FaultBody,
    ForfeitBody,
    HelloBody,
    JesterCommitBody,
    JesterRevealBody,
    ProtocolError,
    ResultBody,
    RevealBody,
    SecretBody,
    TakebackBody,
    TimeoutBody,
    as_text,
    commitment,
    jester_commitment,
    open_envelope,
    seal,
)
from ._events import ChatSaid, ClocksChanged, GameOver, GameStarted, MoveApplied, Scored, SeatEvent, TakenBack
from ._steps import (
    DECISIONS,
    Accepted,
    Ask,
    Late,
    Outgoing,
    Received,
    Refusal,
    Refused,
    SeatSecrets,
    Step,
    StepKind,
)

Entropy = Callable[[int], bytes]

# What a forfeit says when the protocol obliges it: the other side's seed reveal did not match.
BAD_REVEAL = "the reveal did not match the commitment"


class OwnMessageRefused(Exception):
    """A message this seat made was refused by its own referee: a fault of this program, never
    of the other side.  ``str(e)`` is one line."""


def hello_body(name: str, options: Options, manifest: Manifest, shuffle: str,
               clock: TimeControl | None = None, limits: Limits | None = None) -> HelloBody:
    """A hello (PROTOCOL.md §4); with a clock it names the time control (§4a), with limits (a
    network game, protocol 3) the agreed window and time per decision (§4c).  A host sends its
    hello before the game's spec exists, so this takes the settings alone."""
    body = HelloBody(
        protocol=protocol_of(clock, limits),
        software=f"basilica-p2p {__version__}",
        ruleset=options.ruleset.value, festum=options.festum, removal=options.festum_removal,
        manifest=bytes.fromhex(manifest.hash), name=name, shuffle=shuffle,
    )
    if clock is not None:
        body["clock"] = clock.to_wire()
    if limits is not None:
        body["limits"] = limits.to_wire()
    return body


def _article(word: str) -> str:
    return ("an " if word[:1] in "aeiou" else "a ") + word


class Seat:
    def __init__(self, spec: GameSpec, me: Identity | None = None, *, entropy: Entropy | None = None,
                 secrets: SeatSecrets = SeatSecrets(), takebacks: bool = False, views: bool = True) -> None:
        """``me``: the identity of one of ``spec``'s players, for a live seat (with ``entropy``);
        none for a verifier.  ``secrets``: what the driver drew (the deal secret of a hidden deal,
        fixed nonces for test vectors), or a resumed side's from its session file; a nonce or
        salt not given is drawn from ``entropy`` when due.
        ``takebacks``: a local game, where a takeback both sign is allowed (docs/playing.md).
        ``views``: events carry observations (a verifier that only checks needs none).
        Raises :class:`ProtocolError` for a spec no game can be played under."""
        self.spec = spec
        self.me: int | None = None
        self._identity = me
        if me is not None:
            self.me = spec.player_of(me.public)
            if self.me is None:
                raise ProtocolError(f"{me.name} is not a player of this game")
            if entropy is None:
                raise ValueError("a live seat needs a source of randomness")
        self._entropy = entropy
        self.secrets = secrets
        # A hidden deal is dealt by a seat that holds its deal secret (drawn by its driver, kept
        # in the session file); without one, as after its loss, the seat only checks the deal.
        live_deal = self.me is not None and spec.shuffle == HIDDEN_DEAL and bool(secrets.deal)
        self.referee = Referee(spec, self.me, secrets.deal) if live_deal else Referee(spec)
        self.takebacks = takebacks
        self.records: list[bytes] = []
        self.clocks = Clocks(spec.clock, spec.names, self.me) if spec.clock is not None else None
        self._views = views
        self._reader = self.me if self.me is not None else 0
        self._view: Observation | None = None
        # Where the next move began: its engine events and scorings so far, its turn, its mover.
        self._mark = (0, 0, 0, 0)
        self._first: int | None = None  # who moved first, once the game has started
        # Lines of chat taken (protocol 3), in the order taken, and each player's last number.
        self.chat: list[Envelope] = []
        self._chat_n: list[int] = [-1, -1]

    # --- reading ---------------------------------------------------------------

    @property
    def finished(self) -> bool:
        return self.referee.finished

    @property
    def identity(self) -> Identity | None:
        """Whose seat this is (None for a verifier's)."""
        return self._identity

    @property
    def outcome(self) -> Outcome | None:
        return self.referee.outcome

    @property
    def game(self) -> Game | None:
        """The referee's game.  In a seeded game it holds the whole stack: never hand it to an
        agent or a screen (they get :meth:`ask` and the events' views)."""
        return self.referee.game

    def due(self) -> Step:
        """The message that must come next and the seat that sends it."""
        if self.referee.finished:
            return Step(StepKind.DONE, 0)
        kind, who = self.referee.waiting_for()
        return Step(StepKind(kind), who)

    def view(self) -> Observation | None:
        """The reader's view of the game as it stands between moves (None before the setup is done)."""
        return self._view

    def resumed(self) -> tuple[SeatEvent, ...]:
        """For an agent that joins a game under way (``basilica resume``): where it stands."""
        if self._first is None:
            return ()
        return (GameStarted(self.spec.names, self._first, self._view, resumed=True),)

    def ask(self) -> Ask | None:
        """The decision this seat must make now, if one is due."""
        step = self.due()
        g = self.referee.game
        if self.me is None or step.who != self.me or not step.decision or g is None:
            return None
        view = g
        ply = len(g.history)
        if step.kind is StepKind.JCOMMIT:
            ply = self.referee.jester_ply(self.me)
            if g.to_move != self.me:
                # We choose second, without knowing the first colours: any stand-in for them
                # gives us the same observation and options (D24).
                view = g.clone()
                view.apply(view.legal_actions()[0])
        return Ask(step.kind, observe(view, self.me), tuple(view.legal_actions()), ply)

    def ask_ahead(self) -> Ask | None:
        """Our next decision, when it is certain before the awaited acknowledgement of our own
        last action comes (the acknowledgement changes nothing in the game): a seeded game
        whose next decision is ours again, outside a secret Jester round."""
        g, ref = self.referee.game, self.referee
        if self.me is None or g is None or ref.deal_table is not None or self.due() != Step(StepKind.ACK, 1 - self.me):
            return None
        if g.over or g.to_move != self.me or g.secret_jester_round():
            return None
        return Ask(StepKind.ACTION, observe(g, self.me), tuple(g.legal_actions()), len(g.history))

    # --- clocks ----------------------------------------------------------------

    def begin(self, now: float) -> tuple[SeatEvent, ...]:
        """The due step is waited for from ``now``: a decision's clock starts (once)."""
        c = self.clocks
        step = self.due()
        if c is None or not step.decision or c.running is not None:
            return ()
        c.start(step.who, now)
        return (self._clock_event(now),)

    def own_deadline(self) -> float | None:
        """When our running clock reaches 0, in the driver's time."""
        c = self.clocks
        return c.deadline() if c is not None and self.me is not None and c.running == self.me else None

    def peer_deadline(self, lag: float = 0.0) -> float | None:
        """When the other side's running clock reaches 0, ``lag`` seconds allowed."""
        c = self.clocks
        return c.deadline(lag) if c is not None and c.running is not None and c.running != self.me else None

    def stop_own_clock(self, now: float) -> tuple[SeatEvent, ...]:
        """Our flag fell at the prompt: the time is all used, no decision is made."""
        c = self.clocks
        if c is None or c.running != self.me:
            return ()
        c.stop(now)
        return (self._clock_event(now),)

    def _clock_event(self, now: float) -> ClocksChanged:
        assert self.clocks is not None
        return ClocksChanged(self.clocks.view(now, me=self.me))

    # --- making ----------------------------------------------------------------

    def make(self, decision: Action | None = None, now: float = 0.0) -> Outgoing | Late:
        """Our due message, made, checked by our referee and taken.  A decision (an action, or a
        secret Jester choice) is the agent's answer to :meth:`ask`; with a clock, ``now`` is when
        it was made, and a decision after our clock ran out comes back :class:`Late`, unsent."""
        step = self.due()
        me, ref, g = self._own(), self.referee, self.referee.game
        ident = self._identity
        assert ident is not None and step.who == me and step.kind is not StepKind.DONE
        spec, game_id = self.spec, self.spec.game
        secrets: SeatSecrets | None = None
        events: tuple[SeatEvent, ...] = ()
        kind = step.kind
        body: Body
        left: int | None = None  # our own remaining time, ms, for a decision's body (a game with a clock)
        if kind in DECISIONS:
            if decision is None:
                raise ValueError(f"{kind.value} needs a decision")
            left, events, late = self._stop_clock(now)
            if late is not None:
                return late
        if kind is StepKind.HELLO:
            body = hello_body(ident.name, spec.options, spec.manifest, spec.shuffle, spec.clock, spec.limits)
        elif kind is StepKind.COMMIT:
            # Drawn now unless given (a resumed side's, or a test vector's).
            secrets = replace(self.secrets, nonce=self.secrets.nonce or self._random(32))
            body = CommitBody(commitment=commitment(game_id, ident.public, secrets.nonce))
        elif kind is StepKind.REVEAL:
            body = RevealBody(nonce=self.secrets.nonce)
        elif kind is StepKind.ACTION:
            assert g is not None and decision is not None
            action = ActionBody(ply=len(g.history), action=format_action(decision))
            if left is not None:
                action["clock"] = left
            body = action
        elif kind is StepKind.ACK:
            assert g is not None and ref.ack_ply is not None
            body = AckBody(ply=ref.ack_ply, state=bytes.fromhex(g.state_hash()))
        elif kind is StepKind.JCOMMIT:
            assert decision is not None
            text = format_action(decision)
            secrets = replace(self.secrets, jester=(text, self._random(32)))
            ply = ref.jester_ply(me)
            assert secrets.jester is not None
            jcommit = JesterCommitBody(ply=ply, commitment=jester_commitment(game_id, ident.public, ply, text,
                                                                             secrets.jester[1]))
            if left is not None:
                jcommit["clock"] = left
            body = jcommit
        elif kind is StepKind.JREVEAL:
            assert self.secrets.jester is not None
            text, salt = self.secrets.jester
            body = JesterRevealBody(ply=ref.jester_ply(me), action=text, salt=salt)
        elif kind is StepKind.RESULT:
            assert g is not None
            body = ResultBody(scores=list(g.scores), state=bytes.fromhex(g.state_hash()), end=g.end_reason)
        elif kind is StepKind.DEAL:
            assert ref.deal_table is not None
            body = ref.deal_table.make_deal()
        elif kind is StepKind.SHARES:
            assert ref.deal_table is not None
            body = ref.deal_table.make_shares()
        elif kind is StepKind.SECRET:
            body = SecretBody(secret=self.secrets.deal)
        elif kind is StepKind.FORFEIT:
            # The other side's reveal did not match its commitment: a recorded forfeit, never a re-roll.
            body = ForfeitBody(loser=2 - me, reason=BAD_REVEAL)
        elif kind is StepKind.TAKEBACK:
            asked = ref.takeback_asked
            assert asked is not None
            body = TakebackBody(to=asked[1])  # our signature on the same message is our consent
        else:  # pragma: no cover - the referee names no other step
            raise AssertionError(kind)
        return self._sign(kind, body, secrets, events)

    def resign(self, reason: str) -> Outgoing:
        """Our own signed forfeit: a person left, our bot failed."""
        return self._sign(StepKind.FORFEIT, ForfeitBody(loser=self._own() + 1, reason=reason))

    def claim_forfeit(self, reason: str) -> Outgoing:
        """A forfeit of the other side, signed by us alone: it did not come back, or did not decide
        in time (a claim, which the other side never countersigns)."""
        return self._sign(StepKind.FORFEIT, ForfeitBody(loser=2 - self._own(), reason=reason))

    def say(self, typed: str) -> Outgoing | None:
        """A line of chat (protocol 3, PROTOCOL.md §4d): what was typed made into the text rule's
        text (:func:`~basilica_p2p.wire.as_text`, at most ``CHAT_TEXT`` code points), signed,
        numbered after our last, and tied to where the game stands (``seq`` = the messages held,
        ``prev`` = the last one's hash); outside the chain, its state and its rules.  None when
        nothing printable was typed.  ValueError where no chat can be (a game of protocol 1 or 2,
        before both hellos)."""
        me = self._own()
        ident = self._identity
        assert ident is not None
        if self.spec.limits is None or len(self.records) < 2:
            raise ValueError("chat is for network games, after both hellos")
        text = as_text(typed, CHAT_TEXT)
        if not text:
            return None
        env = seal(ident.key, self.spec.game, len(self.records), self.referee.prev, StepKind.CHAT.value,
                   ChatBody(n=self._chat_n[me] + 1, text=text))
        got = self._chat_line(env)
        assert not isinstance(got, Refused), got
        return Outgoing(env, got.events)

    def claim_fault(self, cited: bytes) -> Outgoing:
        """End the game with the other side's message that broke the rules, whole, as the proof
        (a ``fault``, protocol 3): ``cited`` is a refusal's :attr:`Refused.citable`."""
        return self._sign(StepKind.FAULT, FaultBody(loser=2 - self._own(), message=cited))

    def claim_on_time(self, now: float, lag: float = 0.0) -> Outgoing:
        """The other side's clock ran out by ours, ``lag`` allowed: the claim with our own figures."""
        c = self.clocks
        assert c is not None and c.running is not None and c.running != self.me
        loser = c.running
        left = c.left[loser]
        waited = c.used(now, lag)
        c.stop(now, lag)
        # Rounded to the millisecond at the deadline, ``waited`` is ``left``; never below, or our
        # own claim would be refused as early.
        return self._sign(StepKind.TIMEOUT, TimeoutBody(loser=loser + 1, left=left, waited=max(left, waited)),
                          events=(self._clock_event(now),))

    def ask_takeback(self, moves: int, now: float = 0.0) -> Outgoing | None:
        """Ask to go back ``moves`` of our own decisions (a local game); None when we have made
        none yet.  The other seat's due step is then its consent (``make``)."""
        me = self._own()
        to = self.referee.takeback_target(me, moves)
        if to is None:
            return None
        events: tuple[SeatEvent, ...] = ()
        if self.clocks is not None and self.clocks.running is not None:
            self.clocks.charge(now)  # the time is spent, though no decision was made
            events = (self._clock_event(now),)
        return self._sign(StepKind.TAKEBACK, TakebackBody(to=to), events=events)

    def _own(self) -> int:
        if self.me is None:
            raise ValueError("a verifier's seat makes no messages")
        return self.me

    def _random(self, n: int) -> bytes:
        assert self._entropy is not None
        return self._entropy(n)

    def _stop_clock(self, now: float) -> tuple[int | None, tuple[SeatEvent, ...], Late | None]:
        """Our decision is made: stop our clock; our remaining time for the body (ms; None without
        a clock), or Late."""
        c = self.clocks
        if c is None:
            return None, (), None
        me = self._own()
        before, spent = c.stop(now)
        events = (self._clock_event(now),)
        if c.flagged == me:
            return None, events, Late(me, before, spent, events)
        return c.left[me], events, None

    def _sign(self, kind: StepKind, body: Body, secrets: SeatSecrets | None = None,
              events: tuple[SeatEvent, ...] = ()) -> Outgoing:
        ident = self._identity
        assert ident is not None
        ref = self.referee
        env = seal(ident.key, self.spec.game, ref.seq, ref.prev, kind.value, body)
        try:
            news = self._take(env)
        except ProtocolError as e:
            raise OwnMessageRefused(f"our own next message was refused: {e}") from None
        if secrets is not None:
            self.secrets = secrets
        return Outgoing(env, events + news, secrets)

    # --- receiving -------------------------------------------------------------

    def receive(self, raw: bytes | Envelope, now: float = 0.0, lag: float = 0.0, *, ours_ok: bool = False,
                known: bool = False) -> Received:
        """Check the other side's message and take it, or refuse it with why (nothing changes then).

        ``ours_ok``: after a resume the other side may send back messages of ours that our file
        lost; only we can have signed them, and they are checked like any other.  ``known``:
        a message this side holds already, ours or the peer's, taken in chain order (a replay
        read back to resume it, the hellos of the handshake): the live rules about who may
        send what do not apply to it; a verifier's seat never applies them.  ``now`` and ``lag``
        stop the other side's running clock at a decision (``lag`` seconds taken off)."""
        ref = self.referee
        if isinstance(raw, Envelope):
            env = raw
        else:
            try:
                env = open_envelope(raw)
            except ProtocolError as e:
                return Refused(Refusal.INVALID, f"the peer sent an invalid message: {e}",
                               f"rejected message {ref.seq}: {e}", detail=str(e))
        if env.type == StepKind.CHAT:
            return self._chat_line(env, live=self.me is not None and not known)
        if self.me is not None and not known:
            refused = self._live_checks(env, ours_ok, now)
            if refused is not None:
                return refused
        c = self.clocks
        mover = c is not None and c.running is not None and ref.spec.player_of(env.sender) == c.running
        decided = mover and env.type in (StepKind.ACTION, StepKind.JCOMMIT)
        # A takeback asked while its asker's clock runs: the time is spent, with no decision made.
        asked_back = mover and env.type == StepKind.TAKEBACK and ref.takeback_asked is None
        try:
            news = self._take(env)
        except ProtocolError as e:
            return Refused(Refusal.RULES, f"the peer broke the protocol: {e}", f"rejected: {e}", detail=str(e),
                           citable=env.raw if self._citable(env) else b"")
        if c is not None and (decided or asked_back):
            if decided:
                c.stop(now, lag)
            else:
                c.charge(now)
            news = (self._clock_event(now), *news)
        return Accepted(env, news)

    def _chat_line(self, env: Envelope, live: bool = False) -> Accepted | Refused:
        """Take a line of chat: a player's signature, this game, a place the chain has reached
        (``seq``, and ``prev`` the hash of the message before it), numbered after its sender's
        last.  Live, only the other side's (our own lines are made by :meth:`say`)."""
        spec = self.spec
        who = spec.player_of(env.sender)

        def refused(why: str) -> Refused:
            return Refused(Refusal.CHAT, f"a line of chat was refused: {why}", f"your chat was refused: {why}",
                           detail=f"seq {env.seq}: a line of chat {why}")

        if spec.limits is None:
            return refused(f"in a game of protocol {spec.protocol} (only protocol 3 has chat)")
        if who is None or (live and who == self.me):
            return refused("not signed by the other player")
        if env.game != spec.game:
            return refused("for another game")
        if not 2 <= env.seq <= len(self.records) or env.prev != hashlib.sha256(self.records[env.seq - 1]).digest():
            return refused("said at a place this game has not reached")
        if env.body["n"] <= self._chat_n[who]:
            return refused(f"numbered {env.body['n']}, not after its sender's line {self._chat_n[who]}")
        self._chat_n[who] = env.body["n"]
        self.chat.append(env)
        return Accepted(env, (ChatSaid(who, env.body["text"], env.seq, env.body["n"]),))

    def _citable(self, env: Envelope) -> bool:
        """Whether a refused message may be cited in a fault: a game of protocol 3, the other
        side's signature, and the very place in the chain that is due (PROTOCOL.md §4c)."""
        ref, me = self.referee, self.me
        return (me is not None and self.spec.limits is not None and ref.seq > 1 and not ref.finished
                and env.sender == self.spec.players[1 - me] and env.game == self.spec.game
                and env.seq == ref.seq and env.prev == ref.prev and env.type != StepKind.FAULT)

    def _live_checks(self, env: Envelope, ours_ok: bool, now: float) -> Refused | None:
        """What a live side refuses that a verifier would not see: equivocation, messages out of
        turn, takebacks between peers, a stranger's signature, a forfeit declaring that we lost."""
        ref, me = self.referee, self.me
        assert me is not None
        players = self.spec.players
        if env.seq < ref.seq and env.game == self.spec.game and env.raw != self.records[env.seq]:
            held = open_envelope(self.records[env.seq])
            if held.type == StepKind.FAULT and held.sender == players[me]:
                # Our fault stands where the peer's message that broke the rules was: that
                # message, not our fault, is what the peer signed for this place.
                held = open_envelope(held.body["message"])
            if held.sender == env.sender:
                return Refused(Refusal.EQUIVOCATION, f"the peer signed two different messages for seq {env.seq}",
                               f"you signed two different messages for seq {env.seq}",
                               evidence=(held.raw, env.raw))
            if held.sender == players[me] and env.sender == players[1 - me]:
                if env.type in (StepKind.FORFEIT, StepKind.TIMEOUT):
                    # A resignation or claim of the peer's crossed our message in flight (both were
                    # due at once): no one misbehaved, but the two records part here for good.
                    what = (f"forfeit ({printable(env.body['reason'], 200)})" if env.type == StepKind.FORFEIT
                            else "claim on time")
                    return Refused(Refusal.CROSSED,
                                   f"the peer's {what} crossed our {held.type} at message {env.seq}: the two "
                                   "records part there and cannot be joined; ours stays valid up to the message "
                                   "before",
                                   f"your {what} crossed our {held.type}: our records part at message {env.seq}")
                return Refused(Refusal.OUT_OF_TURN,
                               f"the peer sent {_article(env.type)} out of turn: message {env.seq} was ours "
                               f"({held.type}), not the peer's",
                               f"your {env.type} came out of turn: message {env.seq} was ours ({held.type})")
        if env.type == StepKind.TAKEBACK and not self.takebacks:
            # Takebacks are for local games (docs/playing.md): after one the same tiles come
            # again, so a side that asks would learn what the other cannot.
            return Refused(Refusal.TAKEBACK, "the peer asked for a takeback: takebacks are for local games only",
                           "takebacks are for local games only")
        if env.sender != players[1 - me] and not (ours_ok and env.sender == players[me]):
            return Refused(Refusal.NOT_PEER, f"message {env.seq} is not signed by the peer's key",
                           f"message {env.seq} is not signed by you")
        if env.sender != players[me] and env.body.get("loser") == me + 1 and (
                env.type == StepKind.FAULT or env.type == StepKind.TIMEOUT and not self._flag_fell(now)):
            # A claim against us, which the rules do not oblige us to accept: a fault we did not
            # see ourselves commit, or a claim on time while our own clock says our time is not
            # up (at a resume, too).  We never countersign it by recording it.
            return Refused(Refusal.FORFEIT_NAMES_US,
                           f"the peer signed a {env.type} claiming that we lost: refused, a side never records "
                           "a claim made against it",
                           f"refused: your {env.type} names us as the loser")
        if env.type == StepKind.FORFEIT and env.sender != players[me] and self._names_us(env):
            # A peer may resign; it may not declare that we did.  A claim that we forfeit is
            # made by the side that waited, in its own replay: we never countersign it by
            # recording it (docs/network.md, "Who may sign a forfeit").
            reason = printable(env.body.get("reason", ""), 200) if isinstance(env.body, dict) else ""
            return Refused(Refusal.FORFEIT_NAMES_US,
                           f"the peer signed a forfeit naming us as the loser ({reason}): refused, a side "
                           "accepts only the other's own resignation",
                           "refused: your forfeit names us as the loser; only your own resignation is accepted")
        return None

    def _flag_fell(self, now: float) -> bool:
        """Our own clock ran out by ``now``, by our own measure (a resumed side charges its time
        away to it): the peer's claim on time is then ours too."""
        c = self.clocks
        if c is None:
            return False
        return c.flagged == self.me or c.running == self.me and now >= c.deadline()

    def _names_us(self, env: Envelope) -> bool:
        """A forfeit naming us as loser that the rules do not oblige us to accept.  The one
        exception: our own reveal did not match our commitment, and this forfeit is the
        one the protocol then requires of the peer (PROTOCOL.md §5)."""
        me = self.me
        assert me is not None
        if env.body.get("loser") != me + 1:
            return False
        return self.referee.waiting_for() != ("forfeit", 1 - me)

    # --- taking a message, and what it set off ----------------------------------------

    def _take(self, env: Envelope) -> tuple[SeatEvent, ...]:
        """Feed ``env`` to the referee (ProtocolError: nothing changed), keep it, and say what happened."""
        ref = self.referee
        g = ref.game
        plies = len(g.history) if g is not None else 0
        if g is not None and not g.needed_reveals():
            # A move of a hidden deal is applied when its last card opens, messages later: its
            # events, scorings, turn and mover are those from where it began.
            self._mark = (len(g.events), len(g.scoring_log), g.turn, g.to_move if g.to_move is not None else 0)
        ref.feed(env)
        self.records.append(env.raw)
        return self._news(plies, env)

    def _news(self, plies: int, env: Envelope) -> tuple[SeatEvent, ...]:
        ref, g = self.referee, self.referee.game
        out: list[SeatEvent] = []
        if g is not None and not g.needed_reveals():
            if env.type == StepKind.TAKEBACK and len(g.history) < plies:  # the consent: the game went back
                asked_by = self.spec.player_of(env.sender)
                self._view = self._observe(g)
                out.append(TakenBack(1 - (asked_by or 0), len(g.history), self._view))
            elif len(g.history) > plies:
                events, scorings, turn, mover = self._mark
                before, self._view = self._view, self._observe(g)
                out.append(MoveApplied(plies, turn, mover, g.history[-1], tuple(g.events[events:]), before,
                                       self._view))
                for k in range(scorings, len(g.scoring_log)):
                    out.append(Scored(k + 1, turn, plies, g.scoring_log[k], g.over and k == len(g.scoring_log) - 1))
            if self._first is None and (g.over or self.due().decision):
                self._first = g.to_move if g.to_move is not None else 0
                self._view = self._observe(g)
                out.insert(0, GameStarted(self.spec.names, self._first, self._view))
        if ref.outcome is not None:
            out.append(GameOver(ref.outcome))
        return tuple(out)

    def _observe(self, g: Game) -> Observation | None:
        return observe(g, self._reader) if self._views else None
