"""Write the sample replays of ``replays/`` (the tests verify every one).

    python -m basilica_p2p.replay.samples replays/

Each sample is searched for over fixed game ids, nonces, bot seeds and, for
the games dealt face down by sra-p256-v1, fixed deal secrets, so running
this again writes the same files byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..bots import GreedyBot, RandomBot
from ..engine import END_STACK, Game, Manifest, Options, Ruleset, default_manifest
from ..identity import Identity
from ..schemes import COMMIT_REVEAL, HIDDEN_DEAL
from ..wire import open_envelope
from .file import read_replay
from .local import play_recorded


def _h(*parts: bytes) -> bytes:
    return hashlib.sha256(b"basilica-p2p/samples\x00" + b"\x00".join(parts)).digest()


PLAYERS = (
    Identity("alice", Ed25519PrivateKey.from_private_bytes(_h(b"alice"))),
    Identity("bob", Ed25519PrivateKey.from_private_bytes(_h(b"bob"))),
)


def _has_secret_jester_round(path: Path) -> bool:
    return any(open_envelope(r).type == "jcommit" for r in read_replay(path).records)


@dataclass(frozen=True)
class Sample:
    name: str
    options: Options
    bots: str  # "greedy-random", "greedy-greedy" or "random-random"
    wanted: Callable[[Game, Path], bool]
    description: str
    shuffle: str = COMMIT_REVEAL


SAMPLES = (
    Sample("portal2022-greedy-vs-random.replay", Options(Ruleset.PORTAL2022), "greedy-random",
           lambda g, p: g.end_reason != END_STACK, "portal2022, ended at the third scoring"),
    Sample("classic-greedy-vs-greedy.replay", Options(Ruleset.CLASSIC), "greedy-greedy",
           lambda g, p: g.end_reason != END_STACK, "classic (2010), ended at the third scoring"),
    Sample("festum-removal-greedy-vs-greedy.replay", Options(Ruleset.PORTAL2022, True, True), "greedy-greedy",
           lambda g, p: any(v in g.altars for v in g.vaults) or g.altar_supply < 14,
           "portal2022 + festum with 6 tiles removed, altars played"),
    Sample("stack-ended-greedy-vs-greedy.replay", Options(Ruleset.PORTAL2022), "greedy-greedy",
           lambda g, p: g.end_reason == END_STACK, "ended when the stack ran out a second time (D25)"),
    Sample("secret-jesters-random-vs-random.replay", Options(Ruleset.PORTAL2022), "random-random",
           lambda g, p: _has_secret_jester_round(p), "both players own Jesters at a scoring: colours by "
           "commit-reveal (D24)"),
    Sample("hidden-reshuffle-greedy-vs-greedy.replay", Options(Ruleset.PORTAL2022), "greedy-greedy",
           lambda g, p: g.reshuffles > 0, "dealt face down (sra-p256-v1), the discard pile reshuffled into a new "
           "hidden deal (D11), deal audited", HIDDEN_DEAL),
    Sample("hidden-festum-removal-greedy-vs-random.replay", Options(Ruleset.PORTAL2022, True, True), "greedy-random",
           lambda g, p: any(v in g.altars for v in g.vaults) and g.end_reason != END_STACK,
           "dealt face down (sra-p256-v1), portal2022 + festum with 6 tiles removed unseen, altars played, "
           "deal audited", HIDDEN_DEAL),
)


def write_sample(sample: Sample, out: Path, manifest: Manifest, attempts: int = 400) -> tuple[Path, int]:
    path = out / sample.name
    for i in range(attempts):
        tag = sample.name.encode() + b"%d" % i
        seed = int.from_bytes(_h(tag, b"bots")[:8], "big")
        kinds = sample.bots.split("-")
        first, second = (GreedyBot(manifest, seed + k) if kind == "greedy" else RandomBot(seed + k)
                         for k, kind in enumerate(kinds))
        salts = iter(_h(tag, b"salt", b"%d" % n) for n in range(10_000))
        tmp = path.with_suffix(".tmp")
        tmp.unlink(missing_ok=True)
        hidden = sample.shuffle == HIDDEN_DEAL
        g = play_recorded(tmp, manifest, sample.options, PLAYERS, (first, second),
                          nonces=(_h(tag, b"n1"), _h(tag, b"n2")), game_id=_h(tag, b"game"),
                          salts=lambda: next(salts), shuffle=sample.shuffle,
                          deal_secrets=(_h(tag, b"secret1"), _h(tag, b"secret2")) if hidden else None)
        if sample.wanted(g, tmp):
            tmp.replace(path)
            return path, i
        tmp.unlink()
    raise SystemExit(f"no game for {sample.name} in {attempts} attempts")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path, help="directory to write the samples to")
    ns = ap.parse_args(argv)
    ns.out.mkdir(parents=True, exist_ok=True)
    manifest = default_manifest()
    for sample in SAMPLES:
        path, tries = write_sample(sample, ns.out, manifest)
        print(f"{path}: {sample.description} (attempt {tries})")


if __name__ == "__main__":
    main()
