"""The referee: checks the envelopes of one game, in order, against everything.

It is fed every envelope of a game in chain order (from a replay file, or
live from both sides of a connection) and checks, for each: the game id,
the sequence number and hash chain, the sender and its signature (already
checked by :func:`~basilica_p2p.wire.open_envelope`), that the message is
the one the protocol expects now (protocol/PROTOCOL.md §6), the
commitments and reveals, the legality of every action in the rules
engine, every acknowledged state hash, and the final result.  The first
problem raises :class:`ProtocolError`; every step checks before it changes
anything (the engine's apply is itself all-or-nothing), so the referee's
state is then left as it was before that envelope.

It is one module, longer than most, because it is one state machine: the
handshake, the moves, the clocks, takebacks, the hidden deal's rounds and
secrets, forfeits and faults all read and move the same "what comes next"
(``_step``, ``_who``); split apart, each part would reach into the others'.
"""

from __future__ import annotations

from dataclasses import dataclass

from .clock import Limits, TimeClaim, TimeControl
from .engine import EngineError, Game, Manifest, Options, first_player, format_action, parse_action
from .engine import actions as A
from .wire import PROTOCOL_VERSION, Envelope, ProtocolError, commitment, game_seed, jester_commitment, open_envelope
from .schemes import COMMIT_REVEAL, HIDDEN_DEAL, SCHEMES
from .wire import (AckBody, ActionBody, DealBody, HelloBody, JesterCommitBody, JesterRevealBody, ResultBody, RevealBody,
                   SecretBody, SharesBody, TakebackBody, TimeoutBody, body_of)
from .dealer import deal_id, deal_problem
from .deal_table import DealTable

END_FORFEIT = "forfeit"
END_TIME = "time"  # won on time: a signed claim that the other side's clock ran out
END_FAULT = "fault"  # won by proof: the other side signed a message that breaks the rules

# Protocol 2 is protocol 1 plus a clock: the hellos and the header name the time
# control, every decision carries its mover's remaining time, and a claim on time may
# end the game (PROTOCOL.md §4a).  A game without a clock is protocol 1, byte for byte.
CLOCK_PROTOCOL = 2
# Protocol 3 is a network game: the hellos and the header name the limits both sides agreed
# on for absences (a window to come back, a time per decision), with or without a clock, and
# a side that receives a message breaking the rules may end the game with it as proof, a
# `fault` (PROTOCOL.md §4c).  Games played in one process stay protocol 1 or 2.
LIMITS_PROTOCOL = 3


def protocol_of(clock: TimeControl | None, limits: Limits | None) -> int:
    """The protocol version of a game with these settings."""
    if limits is not None:
        return LIMITS_PROTOCOL
    return CLOCK_PROTOCOL if clock is not None else PROTOCOL_VERSION

# The ``prev`` of a game's first envelope.  The chain cannot start at the
# replay header: the host sends its hello before it knows the joiner's key,
# which the header holds.  The header is authenticated instead by the
# signed hellos, which must agree with it field by field.
GENESIS = bytes(32)


@dataclass(frozen=True)
class GameSpec:
    """What both sides agreed on: the identity of a game."""

    game: bytes
    players: tuple[bytes, bytes]  # public keys of player 1 and player 2
    names: tuple[str, str]
    options: Options
    manifest: Manifest
    shuffle: str = COMMIT_REVEAL
    clock: TimeControl | None = None
    limits: Limits | None = None  # protocol 3: a network game's agreed limits

    @property
    def protocol(self) -> int:
        return protocol_of(self.clock, self.limits)

    def player_of(self, key: bytes) -> int | None:
        if key == self.players[0]:
            return 0
        if key == self.players[1]:
            return 1
        return None


@dataclass(frozen=True)
class Outcome:
    scores: tuple[int, int]
    winner: int | None  # 0 or 1; None for a shared victory
    end: str  # "last-scoring", "stack" or "forfeit"
    moves: int  # decisions played
    reason: str = ""  # why, for a forfeit
    claimed_by: int | None = None  # who signed the forfeit: the loser (resigned) or the winner (a claim)
    audited: bool | None = None  # a hidden deal: whether both secrets were published and checked
    audit_note: str = ""  # why not, in words
    time: TimeClaim | None = None  # a game won on time: the claim's figures
    takebacks: tuple[int, int] = (0, 0)  # takebacks each player asked for (and the other signed)
    fault: int | None = None  # a game won by proof: the seq of the message that broke the rules


class Referee:
    def __init__(self, spec: GameSpec, me: int | None = None, deal_secret: bytes | None = None) -> None:
        """``me`` (0 or 1) and ``deal_secret``: a live side of a hidden deal, which makes its own
        deal messages and shares through :attr:`table`; a verifier gives neither."""
        if spec.players[0] == spec.players[1]:
            raise ProtocolError("both players have the same key")
        if spec.shuffle not in SCHEMES:
            raise ProtocolError(f"shuffle scheme {spec.shuffle!r} is not supported (this client knows "
                                f"{', '.join(SCHEMES)})")
        if spec.limits is not None and (spec.clock is None) == (spec.limits.decision == 0):
            raise ProtocolError("the limits' time per decision must be 0 with a clock, and only with one")
        if spec.shuffle == HIDDEN_DEAL:
            problem = deal_problem(spec.manifest, spec.options)
            if problem is not None:  # before any message: no deal of this box could be sent (§5b)
                raise ProtocolError(problem)
        self.spec = spec
        self._me = me
        self._deal_secret = deal_secret
        self.deal_table: DealTable | None = None
        self._pending: tuple[int, int] | None = None  # a decision waiting for its reveals: sender, ply
        self._before_pending: Game | None = None  # the game before that decision, should its cards never open
        self.seq = 0
        self.prev = GENESIS
        self.game: Game | None = None
        self.outcome: Outcome | None = None
        self._step = "hello"  # what comes next; see _expect
        self._who = 0  # whose turn it is to send it
        self._commits: list[bytes] = []
        self._nonces: list[bytes] = []
        self._awaiting_ack: int | None = None  # ply waiting for its acknowledgement
        self._jester: dict[int, tuple[int, bytes]] = {}  # player -> (ply, commitment) in a secret round
        self._jester_order: list[int] = []  # who commits (and reveals) first, second
        self._revealed: set[int] = set()
        self._results = 0
        self._bad_reveal: int | None = None
        # Clocks (protocol 2): each player's own last signed remaining time, in ms.
        base = spec.clock.base_seconds * 1000 if spec.clock is not None else 0
        self.signed: list[int] = [base, base]
        # Takebacks: every decision point so far (its ply and who decided there), a takeback
        # asked and waiting for the other's signature (asker, ply), and the counts.
        self._points: list[tuple[int, frozenset[int]]] = []
        self._takeback: tuple[int, int] | None = None
        self._takebacks = [0, 0]
        # Every envelope taken, in order (protocol 3 only): a fault's proof is checked by
        # feeding them again to a fresh referee, then the message it cites.
        self._chain: list[Envelope] | None = [] if spec.limits is not None else None

    # --- reading the state -------------------------------------------------

    @property
    def finished(self) -> bool:
        return self.outcome is not None

    def waiting_for(self) -> tuple[str, int]:
        """The message type that must come next and the player (0 or 1) who sends it."""
        if self._bad_reveal is not None:
            return "forfeit", 1 - self._bad_reveal
        return self._step, self._who

    @property
    def ack_ply(self) -> int | None:
        """The ply whose acknowledgement is awaited, if any."""
        return self._awaiting_ack

    def jester_ply(self, player: int) -> int:
        """The ply of ``player``'s decision in the current secret Jester round."""
        assert self.game is not None
        if player in self._jester:
            return self._jester[player][0]
        return len(self.game.history) + self._jester_order.index(player)

    @property
    def takeback_asked(self) -> tuple[int, int] | None:
        """A takeback asked and not yet signed by the other player: (asker, ply to go back to)."""
        return self._takeback

    def takeback_target(self, asker: int, moves: int) -> int | None:
        """The ply ``asker`` (0 or 1) would go back to, undoing ``moves`` of its own decisions
        (at least one, at most all); None when it has made none yet."""
        g = self.game
        mine = [ply for ply, who in self._points if asker in who and g is not None and ply < len(g.history)]
        if not mine:
            return None
        return mine[-min(max(1, moves), len(mine))]

    def expected(self) -> str:
        """What the referee waits for next, in words."""
        if self.outcome is not None:
            return "nothing (the game is over)"
        who = f"player {self._who + 1}"
        if self._bad_reveal is not None:
            return f"a forfeit of player {self._bad_reveal + 1} (their reveal did not match)"
        return {
            "hello": f"the hello of {who}",
            "commit": f"the commitment of {who}",
            "reveal": f"the reveal of {who}",
            "action": f"an action of {who}",
            "ack": f"the acknowledgement of {who}",
            "jcommit": f"the Jester commitment of {who}",
            "jreveal": f"the Jester reveal of {who}",
            "result": f"the signed result of {who}",
            "deal": f"a deal step of {who}",
            "shares": f"the shares of {who}",
            "secret": f"the deal secret of {who}",
            "takeback": f"the takeback consent of {who}",
        }[self._step]

    # --- feeding -------------------------------------------------------------

    def feed(self, env: Envelope) -> None:
        """Check one envelope and advance; raises :class:`ProtocolError` (state unchanged)."""
        if self.outcome is not None:
            raise ProtocolError(f"seq {env.seq}: a {env.type} message after the end of the game")
        if env.game != self.spec.game:
            raise ProtocolError(f"seq {env.seq}: wrong game id")
        if env.seq != self.seq:
            raise ProtocolError(f"wrong sequence number {env.seq} (expected {self.seq})")
        if env.prev != self.prev:
            raise ProtocolError(f"seq {env.seq}: the hash chain is broken (prev does not name the previous message)")
        sender = self.spec.player_of(env.sender)
        if sender is None:
            raise ProtocolError(f"seq {env.seq}: signed by a key that is not a player of this game")
        self._dispatch(env, sender)
        self.seq += 1
        self.prev = env.hash
        if self._chain is not None:
            self._chain.append(env)

    def _dispatch(self, env: Envelope, sender: int) -> None:
        where = f"seq {env.seq}"
        if env.type == "forfeit":
            self._forfeit(env, sender, where)
            return
        if env.type == "timeout":
            self._timeout(body_of(env, "timeout"), sender, where)
            return
        if env.type == "fault":
            self._fault(env, sender, where)
            return
        if env.type == "takeback" and self._step != "takeback":
            self._ask_takeback(body_of(env, "takeback"), sender, where)
            return
        if self._bad_reveal is not None:
            raise ProtocolError(f"{where}: expected {self.expected()}, got {env.type}")
        if env.type == self._step == "action" and sender != self._who:
            raise ProtocolError(f"{where}: player {sender + 1} acted out of turn (expected {self.expected()})")
        if env.type != self._step or sender != self._who:
            raise ProtocolError(f"{where}: expected {self.expected()}, got {env.type} from player {sender + 1}")
        signed = self._clock_field(env, sender, where)
        if env.type == "hello":
            self._hello(body_of(env, "hello"), sender, where)
        elif env.type == "commit":
            commitment = body_of(env, "commit")["commitment"]
            if sender == 1 and commitment == self._commits[0]:
                raise ProtocolError(f"{where}: player 2 copied player 1's commitment")
            self._commits.append(commitment)
            self._next("commit", "reveal")
        elif env.type == "reveal":
            self._reveal(body_of(env, "reveal"), sender, env.sender, where)
        elif env.type == "action":
            self._action(body_of(env, "action"), sender, where)
        elif env.type == "ack":
            self._ack(body_of(env, "ack"), where)
        elif env.type == "jcommit":
            self._jcommit(body_of(env, "jcommit"), sender, where)
        elif env.type == "jreveal":
            self._jreveal(body_of(env, "jreveal"), sender, env.sender, where)
        elif env.type == "result":
            self._result(body_of(env, "result"), sender, where)
        elif env.type == "deal":
            self._deal(body_of(env, "deal"), sender, where)
        elif env.type == "shares":
            self._shares(body_of(env, "shares"), sender, where)
        elif env.type == "secret":
            self._secret(body_of(env, "secret"), sender, where)
        elif env.type == "takeback":
            self._consent(body_of(env, "takeback"), sender, where)
        if signed is not None:
            self.signed[sender] = signed

    def _next(self, step: str, then: str) -> None:
        """Player 1 then player 2 send ``step``; after both comes ``then``."""
        if self._who == 0:
            self._who = 1
        else:
            self._who = 0
            self._step = then

    def _hello(self, b: HelloBody, sender: int, where: str) -> None:
        spec = self.spec
        problems = [
            ("protocol", b["protocol"], spec.protocol),
            ("ruleset", b["ruleset"], spec.options.ruleset.value),
            ("festum", b["festum"], spec.options.festum),
            ("removal", b["removal"], spec.options.festum_removal),
            ("manifest", b["manifest"].hex()[:16], spec.manifest.hash[:16]),
            ("shuffle", b["shuffle"], spec.shuffle),
            ("name", b["name"], spec.names[sender]),
        ]
        for name, got, want in problems:
            if got != want:
                raise ProtocolError(f"{where}: player {sender + 1}'s hello says {name} {got!r}, the game has {want!r}")
        if b["manifest"] != bytes.fromhex(spec.manifest.hash):
            raise ProtocolError(f"{where}: player {sender + 1}'s hello names another manifest")
        if b["protocol"] != spec.protocol:
            raise ProtocolError(f"{where}: player {sender + 1}'s hello says protocol {b['protocol']!r}, "
                                f"the game has {spec.protocol!r}")
        clock = b.get("clock")
        if clock != (spec.clock.to_wire() if spec.clock is not None else None):
            show = "none" if clock is None else f"{clock[0]}+{clock[1]}"
            raise ProtocolError(f"{where}: player {sender + 1}'s hello says clock {show}, "
                                f"the game has {spec.clock or 'none'}")
        limits = b.get("limits")
        if limits != (spec.limits.to_wire() if spec.limits is not None else None):
            show = "none" if limits is None else f"{limits[0]} s to come back, {limits[1]} s per decision"
            raise ProtocolError(f"{where}: player {sender + 1}'s hello says limits {show}, "
                                f"the game has {spec.limits or 'none'}")
        self._next("hello", "commit")

    def _reveal(self, b: RevealBody, sender: int, key: bytes, where: str) -> None:
        nonce = b["nonce"]
        if commitment(self.spec.game, key, nonce) != self._commits[sender]:
            # A recorded forfeit, never a re-roll: the other side must now record it.
            self._bad_reveal = sender
            return
        if sender == 1:
            seed = game_seed(self.spec.game, self._nonces[0], nonce)
            try:
                if self.spec.shuffle == HIDDEN_DEAL:
                    # The seed only picks the first player; the stack is dealt face down (§5b).
                    self.game = Game.new_hidden(self.spec.manifest, self.spec.options, first_player(seed))
                else:
                    self.game = Game.new(self.spec.manifest, self.spec.options, seed)
            except EngineError as e:
                raise ProtocolError(f"{where}: cannot set up the game: {e}") from None
        self._nonces.append(nonce)
        self._next("reveal", "action")
        if self.game is not None and self.spec.shuffle == HIDDEN_DEAL:
            self.deal_table = DealTable(self.spec.game, self.spec.manifest, self.spec.options, self._me, self._deal_secret)
            self.deal_table.begin_deal(self.deal_table.dealer.decks)
            self._step, self._who = "deal", 0
        elif self.game is not None:
            self._to_next_decision()

    def _to_next_decision(self) -> None:
        g = self.game
        assert g is not None
        if g.over and self.deal_table is not None and len(self.deal_table.secrets) < 2:
            # The board has decided, but a hidden deal is trusted only once audited: both
            # secrets come before the results (a secret withheld is an absence, §5b).
            self._step, self._who = "secret", len(self.deal_table.secrets)
        elif g.over:
            self._step, self._who = "result", 0
        elif g.secret_jester_round():
            first = g.to_move
            assert first is not None
            self._jester_order = [first, 1 - first]
            self._step, self._who = "jcommit", first
        else:
            assert g.to_move is not None  # the game is not over
            self._step, self._who = "action", g.to_move
        if self._step in ("action", "jcommit"):
            deciders = frozenset(self._jester_order) if self._step == "jcommit" else frozenset({self._who})
            self._points.append((len(g.history), deciders))

    def _apply(self, text: str, sender: int, ply: int, where: str) -> None:
        g = self.game
        assert g is not None
        if ply != len(g.history):
            raise ProtocolError(f"{where}: action for ply {ply}, but the game is at ply {len(g.history)}")
        if g.to_move != sender:
            raise ProtocolError(f"{where}: player {sender + 1} acted out of turn")
        before = g.clone() if g.hidden else None
        try:
            action = parse_action(text)
            if format_action(action) != text:
                # one decision, one spelling: otherwise a move could be signed as different bytes
                raise ProtocolError(f"{where}: {text!r} is not in canonical notation ({format_action(action)!r})")
            g.apply(action)
        except EngineError as e:
            raise ProtocolError(f"{where}: {text!r} is not legal: {e}") from None
        if g.needed_reveals():
            # Legal, but it turned tiles nobody has seen: they are opened first (§5b).
            self._pending, self._before_pending = (sender, ply), before
            self._advance(where)
            return
        self._awaiting_ack = ply
        self._step, self._who = "ack", 1 - sender

    # --- the hidden deal (sra-p256-v1) -----------------------------------------

    def _deal(self, b: DealBody, sender: int, where: str) -> None:
        assert self.deal_table is not None
        if self.deal_table.take_deal(sender, b, where):
            self._advance(where)
        else:
            self._who = self.deal_table.dealer_due()

    def _shares(self, b: SharesBody, sender: int, where: str) -> None:
        assert self.deal_table is not None
        if not self.deal_table.take_shares(sender, b, where):
            self._who = 1 - sender
        elif self.deal_table.broken:
            self._audit_now()
        else:
            self._advance(where)

    def _audit_now(self) -> None:
        """A card opened to nothing, or twice, or to a tile the game cannot hold: no share
        explains it, so the game goes straight to the secrets, and the audit names the cheater."""
        assert self.deal_table is not None
        if self._before_pending is not None:
            # The decision whose cards did not open never happened: the game stands as before it.
            self.game = self._before_pending
        self._pending, self._before_pending = None, None
        self._step, self._who = "secret", len(self.deal_table.secrets)

    def _secret(self, b: SecretBody, sender: int, where: str) -> None:
        assert self.deal_table is not None and self.game is not None
        if not self.deal_table.audit(sender, b["secret"]):
            raise ProtocolError(f"{where}: the audit of the deal: player {sender + 1}'s signed deal data is not "
                                "what its own published secret gives (a false shuffle, key or share)")
        if self.deal_table.broken and len(self.deal_table.secrets) == 1:
            # Both secrets reproduce everything both signed: then no card can open to nothing.  Refused
            # before the secret is kept, like every refusal (PROTOCOL.md §6).
            raise ProtocolError(f"{where}: the deal broke ({self.deal_table.broken}), yet the audit blames no one")
        self.deal_table.take_secret(sender, b["secret"])
        if len(self.deal_table.secrets) < 2:
            self._who = 1
        else:
            self._to_next_decision()

    def _advance(self, where: str) -> None:
        """Open what the hidden game waits for, then go on: the pending decision, or the first one.

        Whatever cards must open next are asked of both players in a round
        (the player whose decision is pending first, else player 1); a deal
        that only the pending decision began (the D11 reshuffle) is dealt first.
        """
        g, table = self.game, self.deal_table
        assert g is not None and table is not None
        while True:
            reveals = g.needed_reveals()
            if not reveals and self._pending is not None:
                sender, ply = self._pending
                self._pending, self._before_pending = None, None
                self._awaiting_ack = ply
                self._step, self._who = "ack", 1 - sender
                return
            if not reveals:
                self._to_next_decision()
                return
            for deal in sorted({r.position.deal for r in reveals if r.position.deal}):
                deck = deal_id(deal)
                if deck not in table.machines:
                    table.begin_deal(table.dealer.add_deal(deal, g.deal(deal).sources))
                    self._step, self._who = "deal", 0
                    return
            cards = table.dealer.cards_for(reveals)
            if cards:
                table.begin_round(cards)
                self._step, self._who = "shares", self._pending[0] if self._pending is not None else 0
                return
            facts = table.dealer.facts(reveals)
            if not facts:  # pragma: no cover - cards_for and facts agree on what is open
                raise ProtocolError(f"{where}: the deal cannot answer what the game waits for")
            for position, fact in facts:
                try:
                    g.reveal(position, fact)
                except EngineError as e:
                    # A card opened to a tile the game cannot hold (a false deal step): only
                    # the audit can say whose.
                    table.broken = f"a card opened to a tile that cannot be there: {e}"
                    self._audit_now()
                    return

    def _action(self, b: ActionBody, sender: int, where: str) -> None:
        self._apply(b["action"], sender, b["ply"], where)

    def _ack(self, b: AckBody, where: str) -> None:
        g = self.game
        assert g is not None and self._awaiting_ack is not None
        if b["ply"] != self._awaiting_ack:
            raise ProtocolError(f"{where}: acknowledges ply {b['ply']}, expected ply {self._awaiting_ack}")
        if b["state"].hex() != g.state_hash():
            raise ProtocolError(f"{where}: acknowledged state hash differs after ply {self._awaiting_ack} (divergence)")
        self._awaiting_ack = None
        unrevealed = [p for p in self._jester_order if p not in self._revealed]
        if unrevealed:  # a secret Jester round goes on with the next reveal
            self._step, self._who = "jreveal", unrevealed[0]
            return
        self._jester_order, self._jester, self._revealed = [], {}, set()
        self._to_next_decision()

    def _jcommit(self, b: JesterCommitBody, sender: int, where: str) -> None:
        g = self.game
        assert g is not None
        ply = len(g.history) + self._jester_order.index(sender)
        if b["ply"] != ply:
            raise ProtocolError(f"{where}: Jester commitment for ply {b['ply']}, expected ply {ply}")
        self._jester[sender] = (ply, b["commitment"])
        if sender == self._jester_order[0]:
            self._who = self._jester_order[1]
        else:
            self._step, self._who = "jreveal", self._jester_order[0]

    def _jreveal(self, b: JesterRevealBody, sender: int, key: bytes, where: str) -> None:
        ply, commit = self._jester[sender]
        if b["ply"] != ply:
            raise ProtocolError(f"{where}: Jester reveal for ply {b['ply']}, expected ply {ply}")
        if jester_commitment(self.spec.game, key, ply, b["action"], b["salt"]) != commit:
            raise ProtocolError(f"{where}: player {sender + 1}'s Jester reveal does not match the commitment")
        try:
            kind = parse_action(b["action"]).kind
        except EngineError as e:
            raise ProtocolError(f"{where}: {e}") from None
        if kind != A.JESTER:
            raise ProtocolError(f"{where}: a Jester reveal must hold Jester colours")
        self._apply(b["action"], sender, ply, where)
        self._revealed.add(sender)

    def _result(self, b: ResultBody, sender: int, where: str) -> None:
        g = self.game
        assert g is not None
        if b["scores"] != g.scores or b["state"].hex() != g.state_hash() or b["end"] != g.end_reason:
            raise ProtocolError(f"{where}: player {sender + 1}'s signed result differs from the game's")
        self._next("result", "done")
        self._results += 1
        if self._results == 2:
            audited = None if self.deal_table is None else True  # the results follow the audit (§5b)
            self.outcome = Outcome((g.scores[0], g.scores[1]), g.winner(), g.end_reason, len(g.history),
                                   audited=audited, takebacks=(self._takebacks[0], self._takebacks[1]))

    def _forfeit(self, env: Envelope, sender: int, where: str) -> None:
        if self._step == "hello":
            # Until both signed hellos are in, the header's players and settings are not
            # authenticated: there is no game yet for anyone to forfeit.
            raise ProtocolError(f"{where}: a forfeit before both hellos")
        b = body_of(env, "forfeit")
        loser = b["loser"] - 1
        if self._bad_reveal is not None and (loser != self._bad_reveal or sender == loser):
            raise ProtocolError(f"{where}: expected {self.expected()}")
        g = self.game
        if g is not None and g.over and self._step != "secret":
            # The board has decided; only the two signed results may follow.  (While a hidden
            # deal's secrets are due, a withheld one is an absence like any other.)
            raise ProtocolError(f"{where}: a forfeit after the game ended on the board")
        scores = (g.scores[0], g.scores[1]) if g else (0, 0)
        moves = len(g.history) if g else 0
        audited = None if self.spec.shuffle != HIDDEN_DEAL else False
        self.outcome = Outcome(scores, 1 - loser, END_FORFEIT, moves, b["reason"], claimed_by=sender,
                               audited=audited, audit_note=self._unaudited("forfeit") if audited is False else "",
                               takebacks=(self._takebacks[0], self._takebacks[1]))

    def _unaudited(self, how: str) -> str:
        """Why a hidden deal was not audited, and, when its deal broke and one secret came and
        reproduced everything its player signed, whose data was false: the other's, by elimination
        (a card can open to nothing only if one player's signed data is not what its secret gives)."""
        table = self.deal_table
        note = f"the game ended by {how} before both deal secrets were published"
        if table is not None and table.broken and len(table.secrets) == 1:
            (clean,) = table.secrets
            note += (f"; the deal broke ({table.broken}) and player {clean + 1}'s secret reproduces all it "
                     f"signed, so player {2 - clean} dealt falsely (by elimination)")
        return note

    # --- faults (protocol 3) ---------------------------------------------------

    def _fault(self, env: Envelope, sender: int, where: str) -> None:
        """The other player signed the message due here, and it breaks the rules: the cited
        envelope is the proof, checked by feeding it, after everything before it, to a fresh
        referee that must refuse it.  The fault takes that message's place and ends the game."""
        spec = self.spec
        if self._chain is None:
            raise ProtocolError(f"{where}: a fault in a game of protocol {spec.protocol} (only protocol 3 has them)")
        if self._step == "hello":
            raise ProtocolError(f"{where}: a fault before both hellos")
        b = body_of(env, "fault")
        loser = b["loser"] - 1
        if loser == sender:
            raise ProtocolError(f"{where}: a fault must name the other player")
        try:
            cited = open_envelope(b["message"])
        except ProtocolError as e:
            raise ProtocolError(f"{where}: the message the fault cites is not a valid envelope: {e}") from None
        if cited.sender != spec.players[loser]:
            raise ProtocolError(f"{where}: the message the fault cites is not signed by player {loser + 1}")
        if cited.game != spec.game or cited.seq != env.seq or cited.prev != env.prev:
            raise ProtocolError(f"{where}: the message the fault cites is not one for this place in the game")
        if cited.type == "fault":
            raise ProtocolError(f"{where}: a fault cannot cite a fault")
        broken = self._breaks_rules(cited)
        if broken is None:
            raise ProtocolError(f"{where}: the message the fault cites breaks no rule")
        g = self.game
        self.outcome = Outcome((g.scores[0], g.scores[1]) if g else (0, 0), sender, END_FAULT,
                               len(g.history) if g else 0, broken, claimed_by=sender,
                               audited=None if self.deal_table is None else False,
                               audit_note=self._unaudited("a fault") if self.deal_table is not None else "",
                               takebacks=(self._takebacks[0], self._takebacks[1]), fault=env.seq)

    def _breaks_rules(self, cited: Envelope) -> str | None:
        """Why a fresh referee, fed this game so far, refuses ``cited``; None if it takes it."""
        assert self._chain is not None
        trial = Referee(self.spec)
        for env in self._chain:
            trial.feed(env)
        try:
            trial.feed(cited)
        except ProtocolError as e:
            return str(e)
        return None

    # --- clocks (protocol 2) ---------------------------------------------------

    def _clock_field(self, env: Envelope, sender: int, where: str) -> int | None:
        """The mover's own remaining time in a decision, checked but not yet kept (the
        envelope may still be refused); None for a message that carries none."""
        if env.type not in ("action", "jcommit"):
            return None
        body = body_of(env, "action") if env.type == "action" else body_of(env, "jcommit")
        clock = self.spec.clock
        if clock is None:
            if "clock" in body:
                raise ProtocolError(f"{where}: a clock figure in a game without a clock")
            return None
        if "clock" not in body:
            raise ProtocolError(f"{where}: player {sender + 1}'s {env.type} lacks its clock figure")
        ms = body["clock"]
        # A mover may under-report its thinking (docs/clocks.md), but never gain more than
        # the increment: its new figure is at most the last one plus the increment.
        most = self.signed[sender] + clock.increment * 1000
        if ms > most:
            raise ProtocolError(f"{where}: player {sender + 1} signed {ms} ms left, more than the {most} ms "
                                "its last figure and the increment allow")
        return ms

    def _timeout(self, b: TimeoutBody, sender: int, where: str) -> None:
        """A claim that the other player's clock ran out while its decision was due."""
        if self.spec.clock is None:
            raise ProtocolError(f"{where}: a claim on time in a game without a clock")
        loser = b["loser"] - 1
        if loser == sender:
            raise ProtocolError(f"{where}: a claim on time must name the other player")
        if self._bad_reveal is not None or self._step not in ("action", "jcommit") or self._who != loser:
            raise ProtocolError(f"{where}: a claim on time against player {loser + 1}, whose decision is not "
                                f"due (expected {self.expected()})")
        if b["waited"] < b["left"]:
            raise ProtocolError(f"{where}: a claim on time before the time is up by the claimant's own figures "
                                f"({b['waited']} ms waited of {b['left']} ms left)")
        g = self.game
        assert g is not None
        claim = TimeClaim(loser, self.signed[loser], b["left"], b["waited"])
        self.outcome = Outcome((g.scores[0], g.scores[1]), sender, END_TIME, len(g.history),
                               claim.words(self.spec.names), claimed_by=sender,
                               audited=None if self.deal_table is None else False,
                               audit_note=self._unaudited("a claim on time") if self.deal_table is not None else "",
                               time=claim,
                               takebacks=(self._takebacks[0], self._takebacks[1]))

    # --- takebacks (local games only) ------------------------------------------

    def _ask_takeback(self, b: TakebackBody, sender: int, where: str) -> None:
        """A player asks to go back to its own earlier decision at ply ``to``; the other's
        signature on the same message is its consent (:meth:`_consent`)."""
        g = self.game
        if self.spec.shuffle != COMMIT_REVEAL:
            # Cards opened by a hidden deal cannot be closed again (docs/playing.md).
            raise ProtocolError(f"{where}: a takeback in a game dealt by {self.spec.shuffle}")
        if g is None or self._bad_reveal is not None or self._step not in ("action", "jcommit") or self._jester:
            raise ProtocolError(f"{where}: a takeback asked when no decision is due (expected {self.expected()})")
        to = b["to"]
        if not any(ply == to and sender in who for ply, who in self._points) or to >= len(g.history):
            raise ProtocolError(f"{where}: player {sender + 1} asks to take back to ply {to}, which was not "
                                "an earlier decision of its own")
        self._takeback = (sender, to)
        self._step, self._who = "takeback", 1 - sender

    def _consent(self, b: TakebackBody, sender: int, where: str) -> None:
        assert self._takeback is not None and self.game is not None
        asker, to = self._takeback
        if b["to"] != to:
            raise ProtocolError(f"{where}: the consent names ply {b['to']}, the takeback asked for ply {to}")
        self.game = rewind(self.game, to)
        self._points = [(ply, who) for ply, who in self._points if ply < to]
        self._takeback = None
        self._takebacks[asker] += 1
        self._jester_order = []
        self._to_next_decision()


def rewind(game: Game, to: int) -> Game:
    """``game`` as it stood after its first ``to`` decisions: set up again from its seed and
    played again, so the same stack comes (a seeded game only; pure, like the engine)."""
    g = Game.new(game.manifest, game.options, game.seed)
    for action in game.history[:to]:
        g.apply(action)
    return g


