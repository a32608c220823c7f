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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..bots import Bot
from ..engine import Event, Game, Manifest, Options, format_action, observe
from ..identity import Identity
from ..wire import Envelope, SHUFFLE_SCHEME, commitment, game_seed, jester_commitment, new_nonce, seal
from ..wire.envelope import PROTOCOL_VERSION
from ..referee import GENESIS
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


def hello_body(ident: Identity, options: Options, manifest: Manifest, shuffle: str = SHUFFLE_SCHEME) -> dict[str, Any]:
    return {
        "protocol": PROTOCOL_VERSION, "software": f"basilica-p2p {__version__}", "ruleset": options.ruleset.value,
        "festum": options.festum, "removal": options.festum_removal, "manifest": bytes.fromhex(manifest.hash),
        "name": ident.name, "shuffle": shuffle,
    }


def make_header(game: bytes, players: tuple[Identity, Identity], options: Options, manifest: Manifest,
                shuffle: str = SHUFFLE_SCHEME) -> Header:
    return Header(options.ruleset.value, options.festum, options.festum_removal, bytes.fromhex(manifest.hash), game,
                  ((players[0].public, players[0].name), (players[1].public, players[1].name)), shuffle=shuffle)


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
) -> Game:
    """Play one bot-vs-bot game and write its replay to ``path``; returns the final game.

    ``nonces``, ``game_id`` and ``deal_secrets`` default to fresh randomness
    from the operating system; fixed values are for test vectors only.
    ``shuffle="sra-p256-v1"`` deals the stack face down (:func:`play_hidden`).
    """
    if shuffle != SHUFFLE_SCHEME:
        return play_hidden(path, manifest, options, players, bots, nonces, game_id, salts, on_action,
                           deal_secrets)
    game = game_id if game_id is not None else os.urandom(32)
    header = make_header(game, players, options, manifest)
    chain = Chain(game, GENESIS)
    n1, n2 = nonces if nonces is not None else (new_nonce(), new_nonce())
    with ReplayWriter.create(path, header) as out:

        def send(who: int, type_: str, body: dict[str, Any]) -> None:
            out.append(chain.seal(players[who], type_, body).raw)

        send(0, "hello", hello_body(players[0], options, manifest))
        send(1, "hello", hello_body(players[1], options, manifest))
        send(0, "commit", {"commitment": commitment(game, players[0].public, n1)})
        send(1, "commit", {"commitment": commitment(game, players[1].public, n2)})
        send(0, "reveal", {"nonce": n1})
        send(1, "reveal", {"nonce": n2})
        g = Game.new(manifest, options, game_seed(game, n1, n2))

        def play_one(who: int, text: str, type_: str = "action", salt: bytes = b"") -> None:
            ply = len(g.history)
            turn = g.turn
            events = g.apply(_parse(text))
            body: dict[str, Any] = {"ply": ply, "action": text}
            if type_ == "jreveal":
                body["salt"] = salt
            send(who, type_, body)
            send(1 - who, "ack", {"ply": ply, "state": bytes.fromhex(g.state_hash())})
            if on_action is not None:
                on_action(g, turn, who, text, events)

        while not g.over:
            p = g.to_move
            assert p is not None
            if g.secret_jester_round():
                # Both own Jesters: each chooses without seeing the other's colours (D24).
                first_text = format_action(bots[p].choose(observe(g, p), g.legal_actions()))
                peek = g.clone()
                peek.apply(_parse(first_text))
                second_text = format_action(bots[1 - p].choose(observe(peek, 1 - p), peek.legal_actions()))
                ply = len(g.history)
                salt1, salt2 = salts(), salts()
                send(p, "jcommit", {"ply": ply, "commitment": jester_commitment(
                    game, players[p].public, ply, first_text, salt1)})
                send(1 - p, "jcommit", {"ply": ply + 1, "commitment": jester_commitment(
                    game, players[1 - p].public, ply + 1, second_text, salt2)})
                play_one(p, first_text, "jreveal", salt1)
                play_one(1 - p, second_text, "jreveal", salt2)
                continue
            play_one(p, format_action(bots[p].choose(observe(g, p), g.legal_actions())))
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

