"""Test vectors for other implementations (protocol/PROTOCOL.md, protocol/vectors/).

Everything here comes from fixed inputs: two Ed25519 keys from fixed 32-byte
seeds, a fixed game id and fixed nonces (_inputs.py, shared with the other
families), the default manifest, fixed Jester salts and two seeded random
bots.  Ed25519 signatures are deterministic, so the same code always writes
the same bytes; tests/test_vectors.py checks the committed files against a
fresh build.  Regenerate with::

    python -m basilica_p2p.vectors.protocol --write protocol/vectors

The replay's hellos carry ``software = "basilica-p2p <version>"``, so a
version bump changes small.replay and envelope.json: regenerate then.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import msgpack

from ..agent import AgentBase, BotAgent, Decision, TakeBack
from ..bots import RandomBot
from ..clock import Limits, TimeControl
from ..engine import Game, Options, default_manifest, format_action, observe, parse_manifest
from ..engine.rng import FESTUM_REMOVAL, FIRST_PLAYER, SHUFFLE, SeedStream, first_player, reshuffle_label, shuffled
from ..referee import GameSpec
from ..replay.file import Header, ReplayWriter, parse, read_replay
from ..replay import play_recorded
from ..seat import Refused, Seat
from ..wire import PROTOCOL_VERSION, commitment, jester_commitment, open_envelope, seal
from ..wire.envelope import TAG
from ..wire.text import BOUNDS, EXCLUDED_CATEGORIES, UNICODE_VERSION, is_text
from ._files import emit, parser
from ._inputs import GAME_ID, KEY_SEEDS, MANIFEST_CASES, NAMES, NONCES, counter_salts, identities, seed
from .hidden import FILES as HIDDEN_FILES
from .hidden import build as build_hidden

# Bot seeds picked by search: a 54-decision game that includes a secret
# Jester round (jcommit/jreveal), so the replay exercises every message type
# of a normal game except forfeit.
BOT_SEEDS = (1927, 1928)
# An example Jester commitment (not from the game): player 1, ply 7.
JESTER_PLY, JESTER_ACTION, JESTER_SALT = 7, "J:c2=G", bytes([0xC3]) * 32
STATE_PLIES = 5

FILES = ("commit-reveal.json", "envelope.json", "state-hash.json", "small.replay", "manifest.json", "text.json",
         "clock.replay", "fault.replay", *HIDDEN_FILES)
# clock.replay (protocol 2): small.replay's inputs with a 1+0 clock read from a counter
# (each read CLOCK_STEP seconds after the one before), player 1 taking back once at its
# TAKEBACK_AT-th decision; the game ends on time.
CLOCK_MINUTES, CLOCK_STEP, TAKEBACK_AT = 1, 1.5, 4
# Its own game id: a key never signs two hellos for one game (PROTOCOL.md §9), and
# 'basilica verify protocol/vectors/*' would rightly call two such histories cheating.
CLOCK_GAME_ID = bytes(range(32, 64))
# fault.replay (protocol 3): small.replay's inputs with the default limits and its own game id;
# player 2 signs an illegal action at its FAULT_AT-th decision, and player 1's fault cites it.
FAULT_GAME_ID = bytes(range(64, 96))
FAULT_AT, FAULT_ACTION = 3, "V1:a99"

# Strings for the text(N) rule (PROTOCOL.md section 4): (text, N, why).
TEXT_CASES: tuple[tuple[str, int, str], ...] = (
    ("alice", 64, "printable ASCII"),
    ("", 64, "empty: at least 1 code point"),
    ("a" * 64, 64, "exactly N code points"),
    ("a" * 65, 64, "N + 1 code points"),
    ("\u00e9" * 64, 64, "N code points in 2N bytes: the limit counts code points, not bytes"),
    (" ", 32, "U+0020 SPACE alone: the one printable Zs"),
    ("alice ", 64, "a trailing space"),
    ("Zo\u00eb \u03a9", 64, "Latin-1 letter and Greek (Ll, Lu)"),
    ("e\u0301", 64, "a combining mark (Mn) is printable"),
    ("\u0301", 64, "a combining mark alone too"),
    ("\U0001f600", 64, "U+1F600 (So), 4 bytes of UTF-8"),
    ("\U0001faf0", 64, "U+1FAF0 (So), assigned in Unicode 14.0"),
    ("\U0001fae8", 64, "U+1FAE8: assigned in Unicode 15.0, so Cn in 14.0.0"),
    ("\u0cf3", 64, "U+0CF3: assigned in Unicode 15.0, so Cn in 14.0.0"),
    ("\u2ffc", 64, "U+2FFC: assigned in Unicode 15.1, so Cn in 14.0.0"),
    ("\U0001fae9", 64, "U+1FAE9: assigned in Unicode 16.0, so Cn in 14.0.0"),
    ("a\u0378", 64, "U+0378 (Cn, unassigned)"),
    ("a\tb", 64, "U+0009 TAB (Cc)"),
    ("a\nb", 64, "U+000A LINE FEED (Cc)"),
    ("\x7f", 64, "U+007F DELETE (Cc)"),
    ("a\x85", 64, "U+0085 NEXT LINE (Cc)"),
    ("a\u00a0b", 64, "U+00A0 NO-BREAK SPACE (Zs)"),
    ("a\u3000b", 64, "U+3000 IDEOGRAPHIC SPACE (Zs)"),
    ("soft\u00adhyphen", 64, "U+00AD SOFT HYPHEN (Cf)"),
    ("a\u200bb", 64, "U+200B ZERO WIDTH SPACE (Cf)"),
    ("\ufeffalice", 64, "U+FEFF BYTE ORDER MARK (Cf)"),
    ("a\u2028b", 64, "U+2028 LINE SEPARATOR (Zl)"),
    ("a\u2029b", 64, "U+2029 PARAGRAPH SEPARATOR (Zp)"),
    ("\ue000", 64, "U+E000 (Co, private use)"),
    ("\U000f0000", 64, "U+F0000 (Co, private use plane)"),
)


def bots() -> tuple[RandomBot, RandomBot]:
    return RandomBot(BOT_SEEDS[0]), RandomBot(BOT_SEEDS[1])


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


class _TakesBackOnce(AgentBase):
    """Player 1's bot, asking once to take back to its previous decision."""

    name = "alice"

    def __init__(self, bot: RandomBot) -> None:
        self.bot, self.asked = BotAgent(bot), 0

    def choose(self, ask: Any) -> Decision:
        self.asked += 1
        if self.asked == TAKEBACK_AT:
            return TakeBack(1)
        return self.bot.choose(ask)


def clock_replay() -> bytes:
    """A protocol-2 replay: clock figures in every decision, a takeback, and a claim on time."""
    reads = iter(range(1, 10**6))
    first, second = bots()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "clock.replay"
        play_recorded(path, default_manifest(), Options(), identities(), (_TakesBackOnce(first), second),
                      NONCES, CLOCK_GAME_ID, counter_salts(), clock=TimeControl(CLOCK_MINUTES, 0),
                      now=lambda: next(reads) * CLOCK_STEP)
        return path.read_bytes()


def fault_replay() -> bytes:
    """A protocol-3 replay: limits in the hellos and the header, and a fault that ends the game,
    citing player 2's signed illegal action whole (PROTOCOL.md §4c)."""
    p1, p2 = identities()
    with tempfile.TemporaryDirectory() as tmp:
        whole, cut_file = Path(tmp) / "whole.replay", Path(tmp) / "fault.replay"
        play_recorded(whole, default_manifest(), Options(), (p1, p2), bots(), NONCES, FAULT_GAME_ID,
                      counter_salts(), limits=Limits())
        replay = read_replay(whole)
        envs = [open_envelope(raw) for raw in replay.records]
        cut = [i for i, e in enumerate(envs) if e.type == "action" and e.sender == p2.public][FAULT_AT - 1]
        h = replay.header
        spec = GameSpec(h.game, (p1.public, p2.public), NAMES, Options(), default_manifest(), h.shuffle, h.clock,
                        h.limits)
        seat = Seat(spec, p1, entropy=bytes)  # it draws nothing: its secrets are in the records it reads
        for env in envs[:cut]:
            seat.receive(env, known=True)
        bad = seal(p2.key, h.game, cut, envs[cut - 1].hash, "action",
                   {"ply": envs[cut].body["ply"], "action": FAULT_ACTION})
        got = seat.receive(bad)
        assert isinstance(got, Refused) and got.citable == bad.raw, got
        seat.claim_fault(got.citable)
        with ReplayWriter.create(cut_file, Header.of(spec)) as w:
            for raw in seat.records:
                w.append(raw)
        return cut_file.read_bytes()


def manifest_hashes() -> dict[str, Any]:
    def entry(m: Any) -> dict[str, Any]:
        canonical = msgpack.packb(m.canonical(), use_bin_type=True)
        return {"canonical": canonical.hex(), "hash": m.hash}

    return {
        "description": "Manifest hashes (MANIFEST.md, Hash): each input JSON text, the msgpack bytes that are "
                       "hashed (defaults filled in) and their SHA-256. Binary values are hex.",
        "cases": [{"name": name, "about": about, "json": text, **entry(parse_manifest(text))}
                  for name, about, text in MANIFEST_CASES],
        "default": {"file": "../manifest.json", **entry(default_manifest())},
    }


def text_rule() -> dict[str, Any]:
    return {
        "description": f"The text(N) rule (PROTOCOL.md section 4) under Unicode {UNICODE_VERSION}: the allowed "
                       "code point ranges (first-last, inclusive, hex) and example strings with their UTF-8 bytes.",
        "unicode_version": UNICODE_VERSION,
        "excluded_categories": sorted(EXCLUDED_CATEGORIES),
        "ranges": " ".join(f"{BOUNDS[i]:04X}-{BOUNDS[i + 1] - 1:04X}" for i in range(0, len(BOUNDS), 2)),
        "cases": [{"n": n, "utf8": text.encode("utf-8").hex(), "code_points": " ".join(f"U+{ord(c):04X}" for c in text),
                   "ok": is_text(text, n), "why": why} for text, n, why in TEXT_CASES],
    }


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
        "manifest.json": _json(manifest_hashes()),
        "text.json": _json(text_rule()),
        "clock.replay": clock_replay(),
        "fault.replay": fault_replay(),
        **build_hidden(),  # the hidden deal in a game: hidden.replay, hidden-six.replay, deal-game.json
    }


def main(argv: list[str] | None = None) -> int:
    emit(build_vectors(), parser("Build the protocol test vectors.").parse_args(argv).write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
