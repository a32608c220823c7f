"""Helpers for the replay and wire tests: fixed identities, short recorded
games, and tools to take a replay apart and put (possibly malicious) files
back together: re-framing, re-signing and re-chaining envelopes.

Nothing here fixes a bot seed by hand: the short games are found by a small
deterministic search with the engine alone, so they stay short (and keep a
secret Jester round) when the rules engine changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache, cache
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from basilica_p2p.bots import RandomBot
from basilica_p2p.clock import Limits
from basilica_p2p.engine import Game, Manifest, Options, Ruleset, default_manifest, observe
from basilica_p2p.identity import Identity
from basilica_p2p.referee import GameSpec
from basilica_p2p.replay.file import MAGIC, ReplayFile, frame, read_replay
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.verify import Verdict, verify_file
from basilica_p2p.wire import Envelope, game_seed, open_envelope, seal


def key(i: int) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(bytes([i]) * 32)


ALICE = Identity("alice", key(1))
BOB = Identity("bob", key(2))
MALLORY = Identity("mallory", key(9))
PLAYERS = (ALICE, BOB)
GAME_ID = bytes([5]) * 32
NONCE1 = bytes([3]) * 32
GENESIS = bytes(32)  # prev of the first envelope (referee.GENESIS)


@lru_cache(maxsize=1)
def manifest() -> Manifest:
    return default_manifest()


def manifests() -> dict[str, Manifest]:
    """Passed to verify_file so that it does not re-read the default manifest for every call."""
    m = manifest()
    return {m.hash: m}


def network_spec(limits: Limits | None = Limits()) -> GameSpec:
    """Alice against Bob, Portal 2022, commit-reveal: a game of protocol 3 (a network game's,
    with its limits), or of protocol 1 with ``limits=None``."""
    return GameSpec(GAME_ID, (ALICE.public, BOB.public), ("alice", "bob"), Options(Ruleset.PORTAL2022), manifest(),
                    limits=limits)


def fixed_nonces(n: int) -> bytes:
    """A seat's entropy for tests: the same bytes every game."""
    return bytes([n]) * n


@dataclass(frozen=True)
class GameChoice:
    nonce2: bytes
    bot_seed: int
    plies: int


def _bots(seed: int) -> tuple[RandomBot, RandomBot]:
    return RandomBot(seed), RandomBot(seed + 1000)


def _candidates() -> Iterator[tuple[bytes, int]]:
    for nb in range(4, 60):
        for s in range(40):
            yield bytes([nb]) * 32, s


def _simulate(nonce2: bytes, seed: int, max_plies: int) -> tuple[int, bool] | None:
    """(plies, has a secret Jester round) of the game play_recorded would play; None if too long."""
    g = Game.new(manifest(), Options(), game_seed(GAME_ID, NONCE1, nonce2))
    bots = _bots(seed)
    jester = False
    while not g.over:
        if len(g.history) > max_plies:
            return None
        if g.secret_jester_round():
            jester = True
        p = g.to_move
        assert p is not None
        g.apply(bots[p].choose(observe(g, p), g.legal_actions()))
    return len(g.history), jester


@cache
def find_game(jester: bool, max_plies: int) -> GameChoice:
    """The first game (in a fixed order) of at most ``max_plies`` decisions, with a secret Jester round if asked."""
    for nonce2, seed in _candidates():
        r = _simulate(nonce2, seed, max_plies)
        if r is not None and (r[1] or not jester):
            return GameChoice(nonce2, seed, r[0])
    raise AssertionError("no short game found")  # pragma: no cover


def salts() -> Any:
    n = iter(range(1, 1_000_000))
    return lambda: bytes([7]) * 28 + next(n).to_bytes(4, "big")


def record_game(path: Path, choice: GameChoice) -> Game:
    return play_recorded(path, manifest(), Options(), PLAYERS, _bots(choice.bot_seed),
                         nonces=(NONCE1, choice.nonce2), game_id=GAME_ID, salts=salts())


# --- taking files apart and putting them together ---------------------------


def load(path: Path) -> tuple[ReplayFile, list[Envelope]]:
    replay = read_replay(path)
    return replay, [open_envelope(r) for r in replay.records]


def assemble(header_bytes: bytes, raws: list[bytes], tail: bytes = b"") -> bytes:
    return MAGIC + frame(header_bytes) + b"".join(frame(r) for r in raws) + tail


def write(path: Path, header_bytes: bytes, raws: list[bytes], tail: bytes = b"") -> Path:
    path.write_bytes(assemble(header_bytes, raws, tail))
    return path


def verify(path: Path) -> Verdict:
    return verify_file(path, manifests())


def verify_records(tmp: Path, header_bytes: bytes, raws: list[bytes], name: str = "x.replay") -> Verdict:
    return verify(write(tmp / name, header_bytes, raws))


def ident_of(env_sender: bytes) -> Identity:
    for ident in (ALICE, BOB, MALLORY):
        if ident.public == env_sender:
            return ident
    raise KeyError(env_sender.hex())


def reseal(env: Envelope, signer: Identity | None = None, *, type_: str | None = None,
           body: dict[str, Any] | None = None, seq: int | None = None, prev: bytes | None = None,
           game: bytes | None = None) -> Envelope:
    """The same envelope (same seq and prev unless given) signed again, possibly by someone else or with changes."""
    who = signer if signer is not None else ident_of(env.sender)
    return seal(who.key, env.game if game is None else game, env.seq if seq is None else seq,
                env.prev if prev is None else prev, env.type if type_ is None else type_,
                dict(env.body) if body is None else body)


def rechain(items: list[tuple[Identity, str, dict[str, Any]]], game: bytes = GAME_ID) -> list[Envelope]:
    """Seal messages one after another with correct sequence numbers and hash chain."""
    out: list[Envelope] = []
    prev = GENESIS
    for seq, (who, type_, body) in enumerate(items):
        env = seal(who.key, game, seq, prev, type_, body)
        out.append(env)
        prev = env.hash
    return out


def as_items(envs: list[Envelope]) -> list[tuple[Identity, str, dict[str, Any]]]:
    return [(ident_of(e.sender), e.type, dict(e.body)) for e in envs]


def raws(envs: list[Envelope]) -> list[bytes]:
    return [e.raw for e in envs]


_RECORD = re.compile(r"\brecord (\d+)\b")


def records_named(error: str) -> list[int]:
    return [int(x) for x in _RECORD.findall(error)]


def names_record(error: str, n: int) -> bool:
    return n in records_named(error)


def first_record(error: str) -> int | None:
    found = records_named(error)
    return found[0] if found else None
