"""A corpus of replays, honest and tampered, and `verify`'s verdict on each: a refactoring of
the referee, the seat or the replay walker must give the same verdict on every file.

    python benchmarks/verify_corpus.py generate DIR [--games 120] [--seed corpus-1]
    python benchmarks/verify_corpus.py verdicts DIR > verdicts.jsonl
    python benchmarks/verify_corpus.py compare before.jsonl after.jsonl

`generate` plays games of both schemes (commit-reveal-v1 and sra-p256-v1, with and without
festum, some with a bot that fails and so a signed resignation), each with two fixed local
identities, then writes tampered copies of each: a flipped byte, a cut tail, a record dropped
and the rest signed again, an action swapped for another legal one and signed again, and, in
face-down games, a false share and a false deal secret, signed again.  The corpus is made
once, before a change, and kept outside the repository (it is some tens of megabytes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from basilica_p2p.bots import RandomBot
from basilica_p2p.clock import TimeControl
from basilica_p2p.engine import Options, Ruleset, default_manifest
from basilica_p2p.identity import Identity
from basilica_p2p.replay.file import MAGIC, frame, read_replay
from basilica_p2p.replay.local import play_recorded
from basilica_p2p.replay.verify import known_manifests, verify_file
from basilica_p2p.schemes import SCHEMES
from basilica_p2p.wire import Envelope, open_envelope, seal

PLAYERS = tuple(Identity(name, Ed25519PrivateKey.from_private_bytes(hashlib.sha256(name.encode()).digest()))
                for name in ("corpus-1", "corpus-2"))


def _derived(seed: str, *what: object) -> bytes:
    return hashlib.sha256("\x00".join([seed, *map(str, what)]).encode()).digest()


class _FailingBot:
    """A random bot that raises at its n-th decision: the game ends by its signed resignation."""

    def __init__(self, seed: int, at: int) -> None:
        self.bot, self.at, self.name = RandomBot(seed), at, "failing"

    def choose(self, obs: Any, legal: Any) -> Any:
        self.at -= 1
        if self.at <= 0:
            raise RuntimeError("gave up")
        return self.bot.choose(obs, legal)


def _games(count: int, seed: str) -> Iterator[tuple[str, Options, str, bool, int]]:
    """Name, options, scheme, whether player 2's bot fails, and at which decision (or, in the
    commit-reveal games that do not fail, a clock: see :func:`generate`)."""
    rng = random.Random(seed)
    for n in range(count):
        scheme = SCHEMES[n % 2]
        ruleset = rng.choice(list(Ruleset))
        festum = ruleset is Ruleset.PORTAL2022 and rng.random() < 0.5  # the expansion is the 2022 box's
        options = Options(ruleset, festum, festum and rng.random() < 0.5)
        yield f"g{n:04d}", options, scheme, rng.random() < 0.1, rng.randrange(10, 120)


def generate(folder: Path, count: int, seed: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    manifest = default_manifest()
    made = 0
    for name, options, scheme, failing, fail_at in _games(count, seed):
        path = folder / f"{name}-{scheme}.replay"
        bots: list[Any] = [RandomBot(int.from_bytes(_derived(seed, name, s)[:8], "big")) for s in (0, 1)]
        if failing:
            bots[1] = _FailingBot(int.from_bytes(_derived(seed, name, "f")[:8], "big"), fail_at)
        salt = iter(range(1, 10**9))
        # One commit-reveal game in four has a 1+0 clock read from a fake time source that a
        # decision moves on by up to 3 s: some end on time, all carry signed clock figures.
        clocked = scheme == SCHEMES[0] and not failing and fail_at % 4 == 0
        ticks = random.Random(_derived(seed, name, "time"))
        clock_now = iter(float(t) for t in _accumulate(ticks))
        # A bot that fails resigns, signed by its side (agent.BotAgent): the replay ends with it.
        play_recorded(path, manifest, options, PLAYERS, (bots[0], bots[1]),
                      nonces=(_derived(seed, name, "n1"), _derived(seed, name, "n2")),
                      game_id=_derived(seed, name, "game"),
                      salts=lambda: _derived(seed, name, "salt", next(salt)), shuffle=scheme,
                      deal_secrets=None if clocked else (_derived(seed, name, "s1"), _derived(seed, name, "s2")),
                      clock=TimeControl(1, 0) if clocked else None, now=lambda: next(clock_now))
        made += 1 + _tamper(path, random.Random(_derived(seed, name, "tamper")))
        print(f"\r{made} files", end="", file=sys.stderr)
    print(file=sys.stderr)


def _accumulate(rng: random.Random) -> Iterator[float]:
    t = 0.0
    while True:
        yield t
        t += rng.random() * 4.5


def _ident(key: bytes) -> Identity:
    return next(p for p in PLAYERS if p.public == key)


def _write(path: Path, header: bytes, raws: list[bytes], tail: bytes = b"") -> None:
    path.write_bytes(MAGIC + frame(header) + b"".join(frame(r) for r in raws) + tail)


def _resigned(envs: list[Envelope], start: int, changes: dict[int, dict[str, Any]],
              drop: int | None = None) -> list[bytes]:
    """The records from ``start`` on signed again by their own senders, with ``changes`` to
    some bodies and record ``drop`` left out: a chain that holds together, whose content lies."""
    out = [e.raw for e in envs[:start]]
    prev = envs[start - 1].hash if start else bytes(32)
    seq = start
    for i, e in enumerate(envs[start:], start=start):
        if i == drop:
            continue
        body = changes.get(i, e.body)
        new = seal(_ident(e.sender).key, e.game, seq, prev, e.type, dict(body))
        out.append(new.raw)
        prev, seq = new.hash, seq + 1
    return out


def _tamper(path: Path, rng: random.Random) -> int:
    replay = read_replay(path)
    header = replay.header.encode()
    envs = [open_envelope(r) for r in replay.records]
    stem = path.with_suffix("")
    data = path.read_bytes()
    made = 0

    # A flipped bit inside a record whose checksum is made anew: the signature must catch it.
    k = rng.randrange(len(envs))
    flipped = bytearray(envs[k].raw)
    flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
    _write(stem.with_name(stem.name + "-flip.replay"), header,
           [e.raw for e in envs[:k]] + [bytes(flipped)] + [e.raw for e in envs[k + 1:]])
    stem.with_name(stem.name + "-cut.replay").write_bytes(data[:rng.randrange(len(MAGIC), len(data))])
    made += 2

    drop = rng.randrange(2, len(envs))
    _write(stem.with_name(stem.name + "-drop.replay"), header, _resigned(envs, drop, {}, drop=drop))
    made += 1

    actions = [i for i, e in enumerate(envs) if e.type == "action"]
    if actions:
        # Another legal action in its place, signed again: the acknowledged state hash parts.
        i = rng.choice(actions)
        other = _another_legal(replay, envs, i, rng)
        if other is not None:
            body = dict(envs[i].body, action=other)
            _write(stem.with_name(stem.name + "-action.replay"), header, _resigned(envs, i, {i: body}))
            made += 1

    shares = [i for i, e in enumerate(envs) if e.type == "shares"]
    if shares:
        i = rng.choice(shares)
        body = {"shares": [list(s) for s in envs[i].body["shares"]]}
        k = rng.randrange(len(body["shares"]))
        body["shares"][k][2] = envs[rng.choice(shares)].body["shares"][0][2]
        _write(stem.with_name(stem.name + "-share.replay"), header, _resigned(envs, i, {i: body}))
        made += 1
    secrets = [i for i, e in enumerate(envs) if e.type == "secret"]
    if secrets:
        i = rng.choice(secrets)
        _write(stem.with_name(stem.name + "-secret.replay"), header,
               _resigned(envs, i, {i: {"secret": bytes(rng.randrange(256) for _ in range(32))}}))
        made += 1
    return made


def _another_legal(replay: Any, envs: list[Envelope], i: int, rng: random.Random) -> str | None:
    from basilica_p2p.engine import format_action
    from basilica_p2p.replay.verify import referee_for

    ref = referee_for(replay, known_manifests())
    for e in envs[:i]:
        ref.feed(e)
    assert ref.game is not None
    legal = [format_action(a) for a in ref.game.legal_actions()]
    others = [t for t in legal if t != envs[i].body["action"]]
    return rng.choice(others) if others else None


def verdicts(folder: Path) -> None:
    manifests = known_manifests()
    for path in sorted(folder.glob("*.replay")):
        v = verify_file(path, manifests)
        print(json.dumps({"file": path.name, "ok": v.ok, "line": v.line().removeprefix(f"{path}: ")}))


def compare(before: Path, after: Path) -> int:
    old = {d["file"]: d for d in map(json.loads, before.read_text().splitlines())}
    new = {d["file"]: d for d in map(json.loads, after.read_text().splitlines())}
    differ = [f for f in sorted(old.keys() | new.keys()) if old.get(f) != new.get(f)]
    for f in differ[:20]:
        print(f"{f}:\n  before: {old.get(f, {}).get('line')}\n  after:  {new.get(f, {}).get('line')}")
    ok = sum(1 for d in old.values() if d["ok"])
    print(f"{len(old)} files ({ok} verify, {len(old) - ok} fail): {len(differ)} verdicts differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate")
    g.add_argument("folder", type=Path)
    g.add_argument("--games", type=int, default=120)
    g.add_argument("--seed", default="corpus-1")
    v = sub.add_parser("verdicts")
    v.add_argument("folder", type=Path)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.folder, args.games, args.seed)
        return 0
    if args.command == "verdicts":
        verdicts(args.folder)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
