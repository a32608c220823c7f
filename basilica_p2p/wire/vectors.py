"""Test vectors for other implementations (protocol/PROTOCOL.md, protocol/vectors/).

Everything here comes from fixed inputs: two Ed25519 keys from fixed 32-byte
seeds, a fixed game id and fixed nonces, the default manifest, fixed Jester
salts and two seeded random bots.  Ed25519 signatures are deterministic, so
the same code always writes the same bytes; tests/test_vectors.py checks the
committed files against a fresh build.  Regenerate with::

    python -m basilica_p2p.wire.vectors --write protocol/vectors

The replay's hellos carry ``software = "basilica-p2p <version>"``, so a
version bump changes small.replay and envelope.json: regenerate then.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..bots.random_bot import RandomBot
from ..engine import Game, Options, default_manifest, format_action, observe
from ..engine.rng import FESTUM_REMOVAL, FIRST_PLAYER, SHUFFLE, SeedStream, first_player, reshuffle_label, shuffled
from ..identity import Identity
from ..replay.file import parse
from ..replay.local import play_recorded
from .commit import commitment, game_seed, jester_commitment
from .envelope import PROTOCOL_VERSION, TAG, open_envelope

KEY_SEEDS = (bytes([1]) * 32, bytes([2]) * 32)
NAMES = ("alice", "bob")
GAME_ID = bytes(range(32))
NONCES = (bytes([0xA1]) * 32, bytes([0xB2]) * 32)
# Bot seeds picked by search: a 54-decision game that includes a secret
# Jester round (jcommit/jreveal), so the replay exercises every message type
# of a normal game except forfeit.
BOT_SEEDS = (1927, 1928)
# An example Jester commitment (not from the game): player 1, ply 7.
JESTER_PLY, JESTER_ACTION, JESTER_SALT = 7, "J:c2=G", bytes([0xC3]) * 32
STATE_PLIES = 5

FILES = ("commit-reveal.json", "envelope.json", "state-hash.json", "small.replay")


def identities() -> tuple[Identity, Identity]:
    return (Identity(NAMES[0], Ed25519PrivateKey.from_private_bytes(KEY_SEEDS[0])),
            Identity(NAMES[1], Ed25519PrivateKey.from_private_bytes(KEY_SEEDS[1])))


def counter_salts() -> Callable[[], bytes]:
    """Jester salts 1, 2, 3, ... as 32-byte big-endian numbers (fixed, unlike real play)."""
    n = 0

    def salt() -> bytes:
        nonlocal n
        n += 1
        return n.to_bytes(32, "big")

    return salt


def bots() -> tuple[RandomBot, RandomBot]:
    return RandomBot(BOT_SEEDS[0]), RandomBot(BOT_SEEDS[1])


def seed() -> bytes:
    return game_seed(GAME_ID, NONCES[0], NONCES[1])


def _below(label: bytes, count: int = 8, n: int = 1000) -> list[int]:
    stream = SeedStream(seed(), label)
    return [stream.below(n) for _ in range(count)]


def commit_reveal() -> dict[str, Any]:
    ids = identities()
    m = default_manifest()
    s = seed()
    order = shuffled(sorted(t.id for t in m.tiles), s, SHUFFLE)
    # The festum-with-removal setup, step by step as Game.new does it.
    forder = shuffled(sorted(t.id for t in m.tiles + m.festum_tiles), s, SHUFFLE)
    rest = list(forder)
    removal = SeedStream(s, FESTUM_REMOVAL)
    removed = [rest.pop(removal.below(len(rest))) for _ in range(6)]
    return {
        "description": "Commit-reveal and the seed stream (PROTOCOL.md sections 5 and 7). Binary values are hex.",
        "inputs": {
            "private_key_seeds": [k.hex() for k in KEY_SEEDS],
            "game": GAME_ID.hex(),
            "nonces": [n.hex() for n in NONCES],
            "manifest": m.hash,
            "options": {"ruleset": "portal2022", "festum": False, "removal": False},
        },
        "public_keys": [i.public.hex() for i in ids],
        "commitments": [commitment(GAME_ID, i.public, n).hex() for i, n in zip(ids, NONCES)],
        "seed": s.hex(),
        "first_player": first_player(s),
        "shuffle": order,
        "deal": {"orders": order[0:3], "market": order[3:6], "stack": order[6:]},
        "below_1000": _below(SHUFFLE),
        "below_1000_by_label": {
            label.decode(): _below(label) for label in (SHUFFLE, reshuffle_label(1), FIRST_PLAYER, FESTUM_REMOVAL)
        },
        "festum_removal": {
            "options": {"ruleset": "portal2022", "festum": True, "removal": True},
            "shuffle": forder,
            "removed": removed,
            "out": sorted(removed),
            "after_removal": rest,
        },
        "jester_commitment": {
            "player": 1, "ply": JESTER_PLY, "action": JESTER_ACTION, "salt": JESTER_SALT.hex(),
            "commitment": jester_commitment(GAME_ID, ids[0].public, JESTER_PLY, JESTER_ACTION, JESTER_SALT).hex(),
        },
    }


def _hex_map(m: dict[str, Any]) -> dict[str, Any]:
    return {k: (v.hex() if isinstance(v, bytes) else _hex_map(v) if isinstance(v, dict) else v) for k, v in m.items()}


def envelope(replay: bytes) -> dict[str, Any]:
    """Player 1's hello: record 1 of small.replay, taken from the file so the two always agree."""
    parsed = parse(replay)
    env = open_envelope(parsed.records[0])
    payload = {"tag": TAG, "v": PROTOCOL_VERSION, "game": env.game, "seq": env.seq, "prev": env.prev,
               "from": env.sender, "type": env.type, "body": env.body}
    return {
        "description": "Player 1's signed hello, seq 0 (PROTOCOL.md section 3); it is record 1 of small.replay. "
                       "Binary values are hex.",
        "payload_fields": _hex_map(payload),
        "payload": env.payload.hex(),
        "signature": env.signature.hex(),
        "envelope": env.raw.hex(),
        "hash": env.hash.hex(),
    }


def state_hash() -> dict[str, Any]:
    g = Game.new(default_manifest(), Options(), seed())
    setup_bytes = msgpack.packb(g.canonical(), use_bin_type=True)
    setup = g.state_hash()
    players = bots()
    plies = []
    for ply in range(STATE_PLIES):
        p = g.to_move
        # The bots must see what play_recorded shows them, so that these are small.replay's moves.
        assert p is not None and not g.secret_jester_round()
        action = players[p].choose(observe(g, p), g.legal_actions())
        g.apply(action)
        plies.append({"ply": ply, "player": p + 1, "action": format_action(action), "state": g.state_hash()})
    return {
        "description": "State hashes (PROTOCOL.md section 8) of the game from commit-reveal.json's seed with "
                       "the default manifest and options: right after setup (with the msgpack bytes that are "
                       f"hashed) and after each of the first {STATE_PLIES} decisions of small.replay's game.",
        "setup_canonical": setup_bytes.hex(),
        "setup": setup,
        "plies": plies,
    }


def small_replay() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "small.replay"
        play_recorded(path, default_manifest(), Options(), identities(), bots(), NONCES, GAME_ID, counter_salts())
        return path.read_bytes()


def _json(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode("utf-8")


def build_vectors() -> dict[str, bytes]:
    """File name -> exact file contents of every generated vector."""
    replay = small_replay()
    return {
        "commit-reveal.json": _json(commit_reveal()),
        "envelope.json": _json(envelope(replay)),
        "state-hash.json": _json(state_hash()),
        "small.replay": replay,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the protocol test vectors.")
    parser.add_argument("--write", type=Path, metavar="DIR", help="write the files into DIR (e.g. protocol/vectors)")
    args = parser.parse_args(argv)
    vectors = build_vectors()
    for name, data in vectors.items():
        if args.write is not None:
            args.write.mkdir(parents=True, exist_ok=True)
            (args.write / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
