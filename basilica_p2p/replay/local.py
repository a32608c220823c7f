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


def hello_body(ident: Identity, options: Options, manifest: Manifest) -> dict[str, Any]:
    return {
        "protocol": PROTOCOL_VERSION, "software": f"basilica-p2p {__version__}", "ruleset": options.ruleset.value,
        "festum": options.festum, "removal": options.festum_removal, "manifest": bytes.fromhex(manifest.hash),
        "name": ident.name, "shuffle": SHUFFLE_SCHEME,
    }


def make_header(game: bytes, players: tuple[Identity, Identity], options: Options, manifest: Manifest) -> Header:
    return Header(options.ruleset.value, options.festum, options.festum_removal, bytes.fromhex(manifest.hash), game,
                  ((players[0].public, players[0].name), (players[1].public, players[1].name)))


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
) -> Game:
    """Play one bot-vs-bot game and write its replay to ``path``; returns the final game.

    ``nonces`` and ``game_id`` default to fresh randomness from the operating
    system; fixed values are for test vectors only.
    """
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
