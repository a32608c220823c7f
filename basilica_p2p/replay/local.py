"""Local games that write verifiable replays: two identities, one process.

Both sides of the protocol run here in turn, exactly as two peers would
over the network: signed hellos, a real commit-reveal with nonces from the
operating system, then every decision as a signed action and the other
side's signed acknowledgement with the state hash, secret Jester colours by
commit-reveal, and both signed results.  Every envelope is appended (and
fsynced) to the replay before the next one is made.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..bots import Bot, TakeBack
from ..clock import Clocks, TimeClaim, TimeControl
from ..engine import Event, Game, Manifest, Options, format_action, observe
from ..identity import Identity
from ..wire import Envelope, SHUFFLE_SCHEME, commitment, game_seed, jester_commitment, new_nonce, seal
from ..wire.envelope import PROTOCOL_VERSION
from ..referee import CLOCK_PROTOCOL, GENESIS, rewind
from .file import Header, ReplayWriter


@dataclass
class Chain:
    """Seals envelopes one after another: sequence numbers and the hash chain."""

    game: bytes
    prev: bytes
    seq: int = 0
    sent: list[Envelope] = field(default_factory=list)

    def seal(self, ident: Identity, type_: str, body: dict[str, Any]) -> Envelope:
        env = seal(ident.key, self.game, self.seq, self.prev, type_, body)
        self.seq += 1
        self.prev = env.hash
        return env


def hello_body(ident: Identity, options: Options, manifest: Manifest, shuffle: str = SHUFFLE_SCHEME,
               clock: TimeControl | None = None) -> dict[str, Any]:
    """A hello; with a clock it is protocol 2 and names the time control (PROTOCOL.md §4a)."""
    body = {
        "protocol": PROTOCOL_VERSION if clock is None else CLOCK_PROTOCOL, "software": f"basilica-p2p {__version__}",
        "ruleset": options.ruleset.value, "festum": options.festum, "removal": options.festum_removal,
        "manifest": bytes.fromhex(manifest.hash), "name": ident.name, "shuffle": shuffle,
    }
    if clock is not None:
        body["clock"] = clock.to_wire()
    return body


def make_header(game: bytes, players: tuple[Identity, Identity], options: Options, manifest: Manifest,
                shuffle: str = SHUFFLE_SCHEME, clock: TimeControl | None = None) -> Header:
    return Header(options.ruleset.value, options.festum, options.festum_removal, bytes.fromhex(manifest.hash), game,
                  ((players[0].public, players[0].name), (players[1].public, players[1].name)),
                  protocol=PROTOCOL_VERSION if clock is None else CLOCK_PROTOCOL, shuffle=shuffle, clock=clock)


def show_clocks(agents: Mapping[int, object], clocks: Clocks | None, at: float) -> None:
    """Tell every agent (by seat) that shows clocks, a person's screen, how they stand from its seat."""
    if clocks is None:
        return
    for seat, agent in agents.items():
        show = getattr(agent, "show_clocks", None)
        if callable(show):
            show(clocks.view(at, me=seat))


class _Asked(Exception):
    """A person's agent asked to take back ``moves`` of its decisions."""

    def __init__(self, asker: int, moves: int) -> None:
        super().__init__(asker)
        self.asker, self.moves = asker, moves


class _Flag(Exception):
    """A player's clock ran out during its decision."""

    def __init__(self, loser: int, left: int, waited: int) -> None:
        super().__init__(loser)
        self.loser, self.left, self.waited = loser, left, waited


def play_recorded(
    path: Path,
    manifest: Manifest,
    options: Options,
    players: tuple[Identity, Identity],
    bots: tuple[Bot, Bot],
    nonces: tuple[bytes, bytes] | None = None,
    game_id: bytes | None = None,
    salts: Callable[[], bytes] = new_nonce,
    on_action: Callable[[Game, int, int, str, list[Event]], None] | None = None,
    shuffle: str = SHUFFLE_SCHEME,
    deal_secrets: tuple[bytes, bytes] | None = None,
    clock: TimeControl | None = None,
    now: Callable[[], float] = time.monotonic,
    on_flag: Callable[[TimeClaim], None] | None = None,
) -> Game:
    """Play one bot-vs-bot game and write its replay to ``path``; returns the final game.

    ``nonces``, ``game_id`` and ``deal_secrets`` default to fresh randomness
    from the operating system; fixed values are for test vectors only.
    ``shuffle="sra-p256-v1"`` deals the stack face down (:func:`play_hidden`).

    With a ``clock`` each side's thinking is timed by ``now`` (seconds); a side
    whose decision took longer than its clock had left loses on time, the
    other side signing the claim (``on_flag`` is told of it).  A person's agent may raise
    :class:`~basilica_p2p.bots.TakeBack` from ``choose``: both sides sign the
    takeback and the game goes back to that person's earlier decision (seeded:
    the same tiles come again).  Takebacks need the seeded stack of
    commit-reveal, and with it they are for local games only (docs/playing.md).
    """
    if shuffle != SHUFFLE_SCHEME:
        if clock is not None:  # a local game of people is seeded (takebacks need it): no clocks here
            raise ValueError(f"a local game with a clock is dealt by {SHUFFLE_SCHEME}, not {shuffle}")
        return play_hidden(path, manifest, options, players, bots, nonces, game_id, salts, on_action,
                           deal_secrets)
    game = game_id if game_id is not None else os.urandom(32)
    header = make_header(game, players, options, manifest, clock=clock)
    chain = Chain(game, GENESIS)
    n1, n2 = nonces if nonces is not None else (new_nonce(), new_nonce())
    clocks = Clocks(clock, (players[0].name, players[1].name)) if clock is not None else None
    # Each side's last signed figure (ms), as a claim on time reports it; the start until then.
    signed = list(clocks.left) if clocks is not None else [0, 0]
    with ReplayWriter.create(path, header) as out:

        def send(who: int, type_: str, body: dict[str, Any]) -> None:
            out.append(chain.seal(players[who], type_, body).raw)

        send(0, "hello", hello_body(players[0], options, manifest, clock=clock))
        send(1, "hello", hello_body(players[1], options, manifest, clock=clock))
        send(0, "commit", {"commitment": commitment(game, players[0].public, n1)})
        send(1, "commit", {"commitment": commitment(game, players[1].public, n2)})
        send(0, "reveal", {"nonce": n1})
        send(1, "reveal", {"nonce": n2})
        g = Game.new(manifest, options, game_seed(game, n1, n2))
        # Every decision point so far: its ply and who decided there (a takeback goes back to one).
        points: list[tuple[int, tuple[int, ...]]] = []

        def play_one(who: int, text: str, type_: str = "action", salt: bytes = b"",
                     figure: int | None = None) -> None:
            ply = len(g.history)
            turn = g.turn
            events = g.apply(_parse(text))
            body: dict[str, Any] = {"ply": ply, "action": text}
            if type_ == "jreveal":
                body["salt"] = salt
            elif figure is not None:
                body["clock"] = signed[who] = figure
            send(who, type_, body)
            send(1 - who, "ack", {"ply": ply, "state": bytes.fromhex(g.state_hash())})
            if on_action is not None:
                on_action(g, turn, who, text, events)

        def decide(who: int, view: Game) -> tuple[str, int | None]:
            """A side's decision and, with a clock, its remaining time after it (ms)."""
            if clocks is not None:
                clocks.start(who, now())
                show_clocks(dict(enumerate(bots)), clocks, now())
            try:
                text = format_action(bots[who].choose(observe(view, who), view.legal_actions()))
            except TakeBack as e:
                if clocks is not None:
                    clocks.charge(now())
                    show_clocks(dict(enumerate(bots)), clocks, now())
                raise _Asked(who, e.moves) from None
            if clocks is None:
                return text, None
            before, spent = clocks.stop(now())
            show_clocks(dict(enumerate(bots)), clocks, now())
            if clocks.flagged == who:
                raise _Flag(who, before, spent)
            return text, clocks.left[who]

        def take_back(asker: int, moves: int) -> Game:
            """Both sign the takeback; the game as it stood at the asker's earlier decision."""
            mine = [ply for ply, who in points if asker in who and ply < len(g.history)]
            if not mine:
                told = getattr(bots[asker], "took_back", None)
                if callable(told):
                    told(None)
                return g
            to = mine[-min(max(1, moves), len(mine))]
            send(asker, "takeback", {"to": to})
            send(1 - asker, "takeback", {"to": to})
            del points[[ply for ply, _ in points].index(to):]
            back = rewind(g, to)
            told = getattr(bots[asker], "took_back", None)
            if callable(told):
                told(back)
            return back

        while not g.over:
            p = g.to_move
            assert p is not None
            try:
                if g.secret_jester_round():
                    # Both own Jesters: each chooses without seeing the other's colours (D24).
                    if not points or points[-1][0] != len(g.history):
                        points.append((len(g.history), (p, 1 - p)))
                    first_text, first_clock = decide(p, g)
                    peek = g.clone()
                    peek.apply(_parse(first_text))
                    second_text, second_clock = decide(1 - p, peek)
                    ply = len(g.history)
                    salt1, salt2 = salts(), salts()
                    commits = ((p, ply, first_text, salt1, first_clock),
                               (1 - p, ply + 1, second_text, salt2, second_clock))
                    for who, at, text, salt, figure in commits:
                        body = {"ply": at, "commitment": jester_commitment(game, players[who].public, at, text, salt)}
                        if figure is not None:
                            body["clock"] = signed[who] = figure
                        send(who, "jcommit", body)
                    play_one(p, first_text, "jreveal", salt1)
                    play_one(1 - p, second_text, "jreveal", salt2)
                    continue
                if not points or points[-1][0] != len(g.history):
                    points.append((len(g.history), (p,)))
                text, figure = decide(p, g)
                play_one(p, text, figure=figure)
            except _Asked as e:
                g = take_back(e.asker, e.moves)
            except _Flag as flag:
                # The other side signs the claim, with the figures it measured (PROTOCOL.md §4a).
                send(1 - flag.loser, "timeout", {"loser": flag.loser + 1, "left": flag.left, "waited": flag.waited})
                if on_flag is not None:
                    on_flag(TimeClaim(flag.loser, signed[flag.loser], flag.left, flag.waited))
                return g
        for who in (0, 1):
            send(who, "result", {"scores": list(g.scores), "state": bytes.fromhex(g.state_hash()), "end": g.end_reason})
    return g


def _parse(text: str):  # type: ignore[no-untyped-def]
    from ..engine import parse_action

    return parse_action(text)


def play_hidden(
    path: Path,
    manifest: Manifest,
    options: Options,
    players: tuple[Identity, Identity],
    bots: tuple[Bot, Bot],
    nonces: tuple[bytes, bytes] | None = None,
    game_id: bytes | None = None,
    salts: Callable[[], bytes] = new_nonce,
    on_action: Callable[[Game, int, int, str, list[Event]], None] | None = None,
    deal_secrets: tuple[bytes, bytes] | None = None,
) -> Game:
    """A local game dealt face down by ``sra-p256-v1``: each side is a live referee of its own,
    with its own deal secret, exactly as two peers over the network; every envelope is fed
    to both and recorded.  Returns player 1's view of the final game (common knowledge)."""
    from ..referee import HIDDEN_DEAL, GameSpec, Referee

    game = game_id if game_id is not None else os.urandom(32)
    header = make_header(game, players, options, manifest, HIDDEN_DEAL)
    chain = Chain(game, GENESIS)
    n1, n2 = nonces if nonces is not None else (new_nonce(), new_nonce())
    secrets = deal_secrets if deal_secrets is not None else (new_nonce(), new_nonce())
    spec = GameSpec(game, (players[0].public, players[1].public), (players[0].name, players[1].name), options,
                    manifest, HIDDEN_DEAL)
    refs = (Referee(spec, 0, secrets[0]), Referee(spec, 1, secrets[1]))
    jester: dict[int, tuple[str, bytes]] = {}
    # A decision is told to ``on_action`` once acknowledged: until its cards are open it has
    # not been applied (turn, player, text, and where its events begin).
    told: tuple[int, int, str, int] | None = None
    with ReplayWriter.create(path, header) as out:

        def send(who: int, type_: str, body: dict[str, Any]) -> None:
            env = chain.seal(players[who], type_, body)
            for r in refs:
                r.feed(env)
            out.append(env.raw)

        for who in (0, 1):
            send(who, "hello", hello_body(players[who], options, manifest, HIDDEN_DEAL))
        send(0, "commit", {"commitment": commitment(game, players[0].public, n1)})
        send(1, "commit", {"commitment": commitment(game, players[1].public, n2)})
        send(0, "reveal", {"nonce": n1})
        send(1, "reveal", {"nonce": n2})
        while not refs[0].finished:
            step, who = refs[0].waiting_for()
            ref = refs[who]
            g = ref.game
            assert g is not None and ref.table is not None
            body: dict[str, Any]
            if step == "deal":
                body = ref.table.make_deal()
            elif step == "shares":
                body = ref.table.make_shares()
            elif step == "secret":
                body = {"secret": secrets[who]}
            elif step == "action":
                text = format_action(bots[who].choose(observe(g, who), g.legal_actions()))
                told = (g.turn, who, text, len(g.events))
                body = {"ply": len(g.history), "action": text}
            elif step == "ack":
                assert ref.ack_ply is not None
                send(who, step, {"ply": ref.ack_ply, "state": bytes.fromhex(g.state_hash())})
                if on_action is not None and told is not None:
                    turn, mover, text, mark = told
                    on_action(g, turn, mover, text, g.events[mark:])
                told = None
                continue
            elif step == "jcommit":
                view = g
                if g.to_move != who:  # the second chooser: any stand-in for the first's colours
                    view = g.clone()
                    view.apply(view.legal_actions()[0])
                text = format_action(bots[who].choose(observe(view, who), view.legal_actions()))
                salt = salts()
                jester[who] = (text, salt)
                ply = ref.jester_ply(who)
                body = {"ply": ply, "commitment": jester_commitment(game, players[who].public, ply, text, salt)}
            elif step == "jreveal":
                text, salt = jester[who]
                told = (g.turn, who, text, len(g.events))
                body = {"ply": ref.jester_ply(who), "action": text, "salt": salt}
            elif step == "result":
                body = {"scores": list(g.scores), "state": bytes.fromhex(g.state_hash()), "end": g.end_reason}
            else:  # pragma: no cover - the referee names no other step
                raise AssertionError(step)
            send(who, step, body)
    assert refs[0].game is not None
    return refs[0].game

