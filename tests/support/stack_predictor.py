"""The attack issue 10 is about: predict every draw of a game from the first records of its replay.

With ``commit-reveal-v1`` the hellos, commitments and reveals (records 1-6) give
the seed, and the seed gives the whole stack.  ``predicted_draws`` does only
that; ``seen_draws`` lists the tiles as they really appeared face up in the
order row and the market, move by move.  A hidden deal must make the two
disagree.
"""

from __future__ import annotations

from pathlib import Path

from basilica_p2p.engine import Game, Manifest, Options
from basilica_p2p.replay.file import read_replay
from basilica_p2p.replay.show import walk
from basilica_p2p.wire import game_seed, open_envelope


def predicted_draws(path: Path, manifest: Manifest) -> list[int]:
    """The tiles in the order they will be drawn, from records 1-6 alone (hellos, commits, reveals)."""
    replay = read_replay(path)
    envs = [open_envelope(raw) for raw in replay.records[:6]]
    reveals = [e.body["nonce"] for e in envs if e.type == "reveal"]
    assert len(reveals) == 2, "the first six records hold both reveals"
    h = replay.header
    seed = game_seed(h.game, reveals[0], reveals[1])
    g = Game.new(manifest, Options(h.ruleset, h.festum, h.removal), seed)  # type: ignore[arg-type]
    dealt = [t for t in g.orders + g.market if t is not None]
    return dealt + g.stack[::-1]  # the internal stack's top is its end


def seen_draws(path: Path, manifest: Manifest) -> list[int]:
    """Every tile as it first appeared face up in O1-O3 or V1-V3, in the order of the game."""
    w = walk(path, {manifest.hash: manifest})
    assert w.start is not None
    seen: list[int] = []
    states = [w.start] + [m.game for m in w.moves]
    for g in states:
        for t in g.orders + g.market:
            if t is not None and not isinstance(t, int):  # a hidden game's position: its tile, once known
                known = g.known(t)
                t = getattr(known, "id", None)
            if t is not None and t not in seen:
                seen.append(t)
    return seen
