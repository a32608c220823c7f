"""The hidden deal's CPU per peer per game, on its own and inside recorded games."""

from __future__ import annotations

import hashlib
import statistics
import time
from pathlib import Path

from ..engine import Options, default_manifest
from ..schemes import HIDDEN_DEAL


def bench_deal(games: int) -> None:
    """CPU per peer for one game's hidden deal (sra-p256-v1): the default manifest with festum.

    Per game: the main deck of face cards and the sub-decks of the classes
    of 2+ tiles, 60 reveals (face cards in stack order, each face with a
    sub-deck also turned vault side up), a 50-card reshuffle deal, and each
    peer's audit of the other.  Each peer hashes its own decks.  The best of
    ``games`` games is printed.
    """
    from ..deal import DealRecord, Deck, DeckDeal, Share, audit, hash_deck, layout
    from ..wire import encode

    manifest = default_manifest()
    classes: dict[str, list[str]] = {}
    for t in manifest.tiles + manifest.festum_tiles:
        classes.setdefault(f"{t.order.name}-{t.colors}-{'paid' if t.paid else 'free'}", []).append(str(t.id))
    lay = layout(list(classes.items()))
    secrets = (hashlib.sha256(b"bench-deal 1").digest(), hashlib.sha256(b"bench-deal 2").digest())
    best: dict[str, list[float]] | None = None
    sizes: dict[str, int] = {}
    for g in range(games):
        game = hashlib.sha256(b"bench-deal game %d" % g).digest()
        cpu: dict[str, list[float]] = {k: [0.0, 0.0] for k in ("hash", "deal", "reveal", "reshuffle", "audit")}

        def timed(part: str, player: int, fn, *args):
            start = time.process_time()
            out = fn(*args)
            cpu[part][player - 1] += time.process_time() - start
            return out

        def deal(decks: list[Deck], part: str) -> list[tuple[DeckDeal, DeckDeal]]:
            pairs = []
            for d in decks:
                peers = (DeckDeal(timed("hash", 1, hash_deck, game, d), 1, secrets[0]),
                         DeckDeal(timed("hash", 2, hash_deck, game, d), 2, secrets[1]))
                for step, maker in enumerate((1, 2, 1), 1):
                    value = timed(part, maker, peers[maker - 1].make)
                    sizes[f"{part} {step}"] = sizes.get(f"{part} {step}", 0) + len(encode(value)) * (g == 0)
                    timed(part, 3 - maker, peers[2 - maker].receive, value)
                pairs.append(peers)
            return pairs

        dealt = deal(list(lay.decks), "deal")
        by_id = {pair[0].deck.deck_id: pair for pair in dealt}
        shares: dict[str, list[Share]] = {d.deck_id: [] for d in lay.decks}

        def reveal(pair: tuple[DeckDeal, DeckDeal], position: int) -> str:
            mine = [timed("reveal", p, pair[p - 1].my_share, position) for p in (1, 2)]
            for p in (1, 2):
                for giver in (p, 3 - p):
                    label = timed("reveal", p, pair[p - 1].add_share, giver, position, mine[giver - 1])
            shares[pair[0].deck.deck_id] += [Share(1, position, mine[0]), Share(2, position, mine[1])]
            return label

        reveals, faces, position = 0, [], 0
        while reveals < 60:
            face = reveal(dealt[0], position)
            faces.append(face)
            position, reveals = position + 1, reveals + 1
            sub = lay.subdeck_position(face)
            if sub is not None and reveals < 60:
                reveal(by_id[sub[0].deck_id], sub[1])
                reveals += 1
        reshuffle = deal([Deck("reshuffle/1", tuple(faces[:50]))], "reshuffle")
        for p in (1, 2):
            records = [DealRecord(pair[p - 1].deck, pair[p - 1].messages, tuple(shares.get(pair[0].deck.deck_id, ())))
                       for pair in dealt + reshuffle]
            if timed("audit", p, audit, secrets, records, (3 - p,)) is not None:
                raise SystemExit("bench deal: an honest deal failed its audit")
        if best is None or sum(map(sum, cpu.values())) < sum(map(sum, best.values())):
            best = cpu
    assert best is not None
    cards = sum(len(d) for d in lay.decks)
    print(f"deal ({HIDDEN_DEAL}): default manifest with festum, {len(lay.main)} face cards + {len(lay.subdecks)} "
          f"sub-decks = {cards} cards, 60 reveals, a 50-card reshuffle deal, each peer auditing the other; "
          f"CPU time, best of {games} games")
    for p in (1, 2):
        parts = ", ".join(f"{k} {v[p - 1] * 1000:.1f}" for k, v in best.items())
        print(f"  player {p}: {sum(v[p - 1] for v in best.values()) * 1000:.1f} ms per game ({parts} ms)")
    print("  message sizes (canonical msgpack bodies, all decks of the step): " +
          ", ".join(f"{k} {v / 1024:.1f} KiB" for k, v in sizes.items()) +
          f"; a share is 34 bytes; {sum(sizes.values()) / 1024:.1f} KiB of deal messages per game")


# Every call by which a side's DealTable deals, shares, opens and audits (its crypto and bookkeeping).
_TABLE_WORK = ("__init__", "begin_deal", "make_deal", "take_deal", "begin_round", "make_shares", "take_shares",
               "take_secret", "audit")


def bench_deal_played(games: int) -> None:
    """The deal's CPU per peer inside real recorded games (``play_recorded``, sra-p256-v1).

    Greedy against greedy with the default manifest and festum; each side's
    :class:`~basilica_p2p.deal_table.DealTable` (its deal steps, shares, reveals and the
    audit) is timed where the game calls it, and the whole recorded game is
    timed beside the same bots and seeds dealt by commit-reveal-v1.
    """
    import tempfile

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from ..bots import GreedyBot
    from ..identity import Identity
    from ..schemes import COMMIT_REVEAL
    from ..replay import play_recorded
    from ..deal_table import DealTable

    manifest = default_manifest()
    options = Options(festum=True)
    ids = (Identity("bench-1", Ed25519PrivateKey.generate()), Identity("bench-2", Ed25519PrivateKey.generate()))
    spent: dict[int | None, float] = {}  # CPU seconds by seat, this game
    depth = [0]  # only the outermost DealTable call is timed: they call each other

    def timed(real):
        def wrapper(self: DealTable, *args, **kwargs):
            depth[0] += 1
            start = time.process_time()
            try:
                return real(self, *args, **kwargs)
            finally:
                depth[0] -= 1
                if depth[0] == 0:  # self.me is set by now, even for __init__
                    spent[self.me] = spent.get(self.me, 0.0) + time.process_time() - start
        return wrapper

    # The class's own functions, which are patched and put back (not looked up through instances).
    originals = {name: vars(DealTable)[name] for name in _TABLE_WORK}
    per_peer: list[float] = []
    whole = {COMMIT_REVEAL: [], HIDDEN_DEAL: []}  # type: dict[str, list[float]]
    reshuffled = 0
    try:
        for name, real in originals.items():
            setattr(DealTable, name, timed(real))
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(games):
                for shuffle in (COMMIT_REVEAL, HIDDEN_DEAL):
                    spent.clear()
                    start = time.process_time()
                    g = play_recorded(Path(tmp) / f"{shuffle}-{i}.replay", manifest, options, ids,
                                      (GreedyBot(manifest, 2 * i), GreedyBot(manifest, 2 * i + 1)), shuffle=shuffle)
                    whole[shuffle].append(time.process_time() - start)
                if g.reshuffles:
                    reshuffled += 1
                per_peer += [spent.get(0, 0.0), spent.get(1, 0.0)]
    finally:
        for name, real in originals.items():
            setattr(DealTable, name, real)
    print(f"deal in recorded games: {games} greedy-vs-greedy games with festum, dealt face down by {HIDDEN_DEAL} "
          f"({reshuffled} with a D11 reshuffle); CPU time")
    print(f"  deal + shares + reveals + audit, per peer per game: median {statistics.median(per_peer) * 1000:.1f} ms, "
          f"max {max(per_peer) * 1000:.1f} ms")
    cr, hd = statistics.median(whole[COMMIT_REVEAL]), statistics.median(whole[HIDDEN_DEAL])
    print(f"  a whole recorded game, both sides in one process: median {hd * 1000:.0f} ms dealt face down "
          f"(two live referees), {cr * 1000:.0f} ms by commit-reveal (same bots and seeds)")
