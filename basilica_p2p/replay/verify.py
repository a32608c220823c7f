"""``basilica verify``: check a replay file end to end, offline, with no private key."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import Manifest
from ..narration import fault_words
from ..referee import END_FAULT, END_TIME, Outcome, Referee
from ..seat import Accepted, Refused, Seat
from .file import ReplayError, ReplayFile, TornTail, read_replay
from .walk import Visitor, known_manifests, seat_for, walk


@dataclass(frozen=True)
class Verdict:
    path: str
    ok: bool
    error: str = ""  # the first failing record and the reason
    names: tuple[str, str] = ("", "")
    ruleset: str = ""
    festum: bool = False
    clock: str = ""  # the time control of a game with clocks ("15+10")
    outcome: Outcome | None = None
    records: int = 0
    torn: TornTail | None = None
    # For cross-checking files of one game (replay/forks.py): the game id, the players'
    # keys, and the envelopes that passed every check, with who signed each.
    game: bytes = field(default=b"", repr=False, compare=False)
    keys: tuple[bytes, bytes] = field(default=(b"", b""), repr=False, compare=False)
    chain: tuple[bytes, ...] = field(default=(), repr=False, compare=False)
    signers: tuple[bytes, ...] = field(default=(), repr=False, compare=False)
    # A fault's record stands where the message it cites was: (seq, that message), which its signer
    # signed for that place too (replay/forks.py counts it).
    cited: tuple[tuple[int, bytes], ...] = field(default=(), repr=False, compare=False)
    chat: int = 0  # lines of chat in the file (protocol 3), each checked

    def line(self) -> str:
        if not self.ok:
            return f"{self.path}: FAILED: {self.error}"
        return f"{self.path}: ok: {self.summary()}"

    def summary(self) -> str:
        """A valid game in one line: players, rules, result, score, moves, how it ended, the deal."""
        o = self.outcome
        assert o is not None
        if o.end == END_TIME and o.time is not None:
            winner = 1 - o.time.loser
            result = f"player {winner + 1} ({self.names[winner]}) won on time: {o.time.words(self.names)}"
        elif o.end == "forfeit":
            loser = 1 - (o.winner or 0)
            how = "resigned" if o.claimed_by == loser else f"forfeited as claimed by player {1 - loser + 1}"
            result = f"player {loser + 1} ({self.names[loser]}) {how}: {o.reason}"
        elif o.end == END_FAULT:
            result = fault_words(o, self.names)
        elif o.winner is None:
            result = "shared victory"
        else:
            result = f"player {o.winner + 1} ({self.names[o.winner]}) won"
        ruleset = self.ruleset + (" + festum" if self.festum else "") + (f", clock {self.clock}" if self.clock else "")
        deal = ""
        if o.audited is not None:
            deal = ", deal audited" if o.audited else f", deal not audited: {o.audit_note}"
        takebacks = "".join(f", {n} takeback{'' if n == 1 else 's'} by {self.names[seat]}"
                            for seat, n in enumerate(o.takebacks) if n)
        chat = f", {self.chat} line{'' if self.chat == 1 else 's'} of chat" if self.chat else ""
        return (f"{self.names[0]} vs {self.names[1]}, {ruleset}, {result}, "
                f"{o.scores[0]}-{o.scores[1]}, {o.moves} move{'' if o.moves == 1 else 's'} ({o.end}){deal}"
                f"{takebacks}{chat}")

    def to_json(self) -> dict[str, Any]:
        o = self.outcome
        return {
            "path": self.path, "ok": self.ok, "error": self.error or None, "players": list(self.names),
            "ruleset": self.ruleset, "festum": self.festum, "clock": self.clock or None, "records": self.records,
            "scores": list(o.scores) if o else None, "winner": (o.winner + 1 if o.winner is not None else None) if o else None,
            "end": o.end if o else None, "moves": o.moves if o else None,
            "forfeit_claimed_by": (o.claimed_by + 1 if o and o.claimed_by is not None else None),
            "deal_audited": o.audited if o else None,
            "on_time": ({"loser": o.time.loser + 1, "signed_ms": o.time.signed, "left_ms": o.time.left,
                         "waited_ms": o.time.waited} if o and o.time else None),
            "takebacks": list(o.takebacks) if o else None,
            "fault": ({"loser": 2 - (o.winner or 0), "record": o.fault + 1, "why": o.reason}
                      if o and o.fault is not None else None),
            "chat": self.chat,
            "torn_tail": {"record": self.torn.record, "offset": self.torn.offset} if self.torn else None,
        }


def referee_for(replay: ReplayFile, manifests: dict[str, Manifest]) -> Referee:
    """A verifier's referee for ``replay``'s game, to feed its records one by one (a test that
    builds records); :class:`ReplayError` for a header no game can be played under."""
    return seat_for(replay, manifests, views=False).referee


class Verifier(Visitor):
    """What a walk shows of a file's validity: the envelopes taken and who signed each, and the
    first record refused, in ``basilica verify``'s words."""

    def __init__(self) -> None:
        self.chain: list[bytes] = []  # the game's chain (a network game's chat lines stand beside it)
        self.signers: list[bytes] = []
        self.cited: list[tuple[int, bytes]] = []
        self.chat = 0
        self.error = ""

    def taken(self, number: int, got: Accepted, seat: Seat) -> None:
        env = got.envelope
        if env.type == "chat":
            self.chat += 1
            return
        self.chain.append(env.raw)
        self.signers.append(env.sender)
        if env.type == "fault":
            self.cited.append((env.seq, env.body["message"]))

    def refused(self, number: int, offset: int, got: Refused, seat: Seat) -> None:
        self.error = f"record {number} (byte {offset}): {got.detail}"


def verify_file(path: Path, manifests: dict[str, Manifest] | None = None, *visitors: Visitor) -> Verdict:
    """Check every record; the verdict names the first failing one.  ``visitors`` walk the file too
    (``replay show`` and ``replay html`` read it once, beside the check); with any, the seat's
    events carry the public views."""
    manifests = manifests if manifests is not None else known_manifests()
    name = str(path)
    try:
        replay = read_replay(path)
        seat = seat_for(replay, manifests, views=bool(visitors))
    except ReplayError as e:
        return Verdict(name, False, str(e))
    h = replay.header
    checks = Verifier()
    walk(replay, seat, checks, *visitors)
    signers = checks.signers
    base: dict[str, Any] = dict(path=name, names=(h.players[0][1], h.players[1][1]), ruleset=h.ruleset, festum=h.festum,
                clock=str(h.clock) if h.clock is not None else "",
                records=1 + len(replay.records), torn=replay.torn, game=h.game,
                keys=(h.players[0][0], h.players[1][0]), chain=tuple(checks.chain),
                signers=tuple(signers), cited=tuple(checks.cited), chat=checks.chat)
    if checks.error:
        return Verdict(ok=False, error=checks.error, **base)
    if not seat.finished:
        where = f"valid through record {len(replay.records)}"
        if replay.torn is not None:
            t = replay.torn
            where += f"; record {t.record} at byte {t.offset} is torn ({t.size} bytes, a crash mid-write)"
        return Verdict(ok=False, error=f"incomplete game: {where}; expected {seat.referee.expected()} next",
                       **base)
    if replay.torn is not None:
        t = replay.torn
        return Verdict(ok=False, error=f"record {t.record} (byte {t.offset}): bytes after the end of the game",
                       **base)
    return Verdict(ok=True, outcome=seat.outcome, **base)
