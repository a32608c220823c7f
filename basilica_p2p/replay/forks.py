"""Cross-checking replays of one game: where two files part, and who signed both histories.

Two honest replays of a game hold one chain: they are equal, or one is a
prefix of the other (a side that crashed, or that never received the last
message).  Files that *part* at some record hold two histories.  Every key
that signed a record on each branch after that point endorsed both: an
honest client never does (it appends to its own replay only), so it is proof
of cheating, e.g. a loser who cut its copy of a finished game and appended a
forfeit claim, having signed later moves in the real game.  When no key
signed both (two claims of forfeit made while the sides were apart), the
files disagree but nobody is proven to have cheated.

Only envelopes that passed every check of :func:`verify_file` are compared,
so the signatures are already known to be good; this costs one pass over
bytes already in memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from ..identity import fingerprint
from .evidence import encode_evidence
from .verify import Verdict


@dataclass(frozen=True)
class Signed:
    """A key that signed records on both branches: its first record on each."""

    key: bytes
    seat: int | None  # 0 or 1 from the header, None if it is not a player's key
    name: str
    a: int  # index into the chain (= seq) of its first record on branch a, at or after the parting
    b: int


@dataclass(frozen=True)
class Fork:
    a: Verdict
    b: Verdict
    seq: int  # the first sequence number at which the two files hold different messages
    signed_both: tuple[Signed, ...]

    def line(self) -> str:
        where = f"{self.a.path} and {self.b.path} part at record {self.seq + 1} (seq {self.seq})"
        if not self.signed_both:
            return (f"{where}: they hold two histories of one game, but no key signed both (e.g. two forfeit "
                    "claims made while the sides were apart), so neither player is proven to have cheated")
        parts = []
        for s in self.signed_both:
            who = f"player {s.seat + 1} ({s.name})" if s.seat is not None else "a key that is not a player's"
            parts.append(f"{who}, key {fingerprint(s.key)}, signed both histories: record {s.a + 1} of "
                         f"{self.a.path} ({_type(self.a, s.a)}) and record {s.b + 1} of {self.b.path} "
                         f"({_type(self.b, s.b)}): proof of cheating")
        return f"{where}; " + "; ".join(parts)

    def to_json(self) -> dict[str, object]:
        return {
            "a": self.a.path, "b": self.b.path, "record": self.seq + 1, "seq": self.seq,
            "signed_both": [{"player": s.seat + 1 if s.seat is not None else None, "name": s.name,
                             "key": s.key.hex(), "fingerprint": fingerprint(s.key),
                             "record_a": s.a + 1, "record_b": s.b + 1} for s in self.signed_both],
        }

    def evidence(self) -> bytes:
        """A self-contained proof against the first key that signed both (``verify --evidence``).
        Where the key's signature on a branch is a message a fault cites, that message stands in
        the run for the fault's record (same place: same seq and prev)."""
        s = self.signed_both[0]
        a, b = _run(self.a, self.seq, s.a, s.key), _run(self.b, self.seq, s.b, s.key)
        hello = None
        if s.seat is not None and s.seat < len(self.a.chain) and self.a.signers[s.seat] == s.key:
            hello = self.a.chain[s.seat]  # seq 0 is player 1's hello, seq 1 player 2's
        return encode_evidence(list(a), list(b), hello)


def _type(v: Verdict, seq: int) -> str:
    from ..wire import open_envelope

    kind = open_envelope(v.chain[seq]).type
    cited = dict(v.cited).get(seq)
    return f"the {open_envelope(cited).type} its fault cites" if cited is not None and kind == "fault" else kind


def _run(v: Verdict, start: int, end: int, key: bytes) -> list[bytes]:
    from ..wire import open_envelope

    run = list(v.chain[start:end + 1])
    cited = dict(v.cited).get(end)
    if cited is not None and open_envelope(run[-1]).sender != key:
        run[-1] = cited
    return run


def _parting(a: tuple[bytes, ...], b: tuple[bytes, ...]) -> int | None:
    """The first index where the chains differ; None if one is a prefix of the other."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None


def _first_by(v: Verdict, start: int) -> dict[bytes, int]:
    """Each key's first record at or after ``start``, counting a message a fault cites as signed at
    the fault's place by its own signer."""
    from ..wire import open_envelope

    cited = {seq: open_envelope(raw).sender for seq, raw in v.cited}
    first: dict[bytes, int] = {}
    for i in range(start, len(v.signers)):
        if i in cited:
            first.setdefault(cited[i], i)
        first.setdefault(v.signers[i], i)
    return first


def _pairs_of_one_game(verdicts: list[Verdict]) -> list[tuple[Verdict, Verdict]]:
    games: dict[bytes, list[Verdict]] = {}
    for v in verdicts:
        if v.game and v.chain:
            games.setdefault(v.game, []).append(v)
    return [pair for group in games.values() for pair in combinations(group, 2)]


@dataclass(frozen=True)
class Agreement:
    """Both sides' files of one game, compared record by record (the line the demo and verify print)."""

    a: Verdict
    b: Verdict

    @property
    def same(self) -> bool:
        return self.a.chain == self.b.chain

    def line(self) -> str:
        if self.same:
            return "both sides hold the same records: yes"
        seq = _parting(self.a.chain, self.b.chain)
        if seq is not None:
            return f"both sides hold the same records: NO (they part at record {seq + 1})"
        short, full = (self.a, self.b) if len(self.a.chain) < len(self.b.chain) else (self.b, self.a)
        return (f"both sides hold the same records: NO ({short.path} holds the first {len(short.chain)} "
                f"of {len(full.chain)})")


def agreements(verdicts: list[Verdict]) -> list[Agreement]:
    """Every pair of files of one game whose valid records do not part (equal, or one a prefix);
    the pairs that part are :func:`find_forks`'s."""
    return [Agreement(a, b) for a, b in _pairs_of_one_game(verdicts) if _parting(a.chain, b.chain) is None]


def find_forks(verdicts: list[Verdict]) -> list[Fork]:
    """Every pair of files of one game id whose valid records part, with the keys that signed both."""
    forks = []
    for a, b in _pairs_of_one_game(verdicts):
        seq = _parting(a.chain, b.chain)
        if seq is None:
            continue
        on_a, on_b = _first_by(a, seq), _first_by(b, seq)
        both = []
        for key in sorted(on_a.keys() & on_b.keys()):
            seat = a.keys.index(key) if key in a.keys else None
            name = a.names[seat] if seat is not None else ""
            both.append(Signed(key, seat, name, on_a[key], on_b[key]))
        forks.append(Fork(a, b, seq, tuple(both)))
    return forks
