"""Walking through a replay: moves in notation, boards, scorings, JSON export."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import Event, Game, Manifest, format_action
from ..seat import Accepted, ChatSaid, GameStarted, MoveApplied, Seat, TakenBack
from .file import ReplayError, ReplayFile, read_replay
from .verify import Verifier
from .walk import Visitor, seat_for
from .walk import walk as walk_into


@dataclass(frozen=True)
class Move:
    ply: int  # 0-based index of the decision
    turn: int
    player: int  # 0 or 1
    action: str
    state_hash: str
    events: tuple[Event, ...]
    game: Game  # the state after the move (a clone)


@dataclass(frozen=True)
class TakeBackNote:
    """A takeback both players signed: before ``Walk.moves[index]``, the game went back to
    its first ``to`` decisions, asked by ``player`` (0 or 1)."""

    index: int
    to: int
    player: int
    turn: int  # the turn of the decision it went back to


@dataclass(frozen=True)
class ChatNote:
    """A line of chat (protocol 3), said by ``player`` (0 or 1) when ``index`` moves of
    ``Walk.moves`` had been played."""

    index: int
    player: int
    text: str


@dataclass
class Walk:
    replay: ReplayFile
    moves: list[Move]
    start: Game | None
    error: str  # the first failing record, if verification stopped early
    outcome: Any
    # Takebacks, in order: ``moves`` holds every decision played, also those taken back.
    takebacks: list[TakeBackNote] = field(default_factory=list)
    chat: list[ChatNote] = field(default_factory=list)


class _Moves(Visitor):
    """Keeps every move of a walk with the game after it, the start, and the takebacks."""

    def __init__(self) -> None:
        self.moves: list[Move] = []
        self.start: Game | None = None
        self.takebacks: list[TakeBackNote] = []
        self.chat: list[ChatNote] = []

    def taken(self, number: int, got: Accepted, seat: Seat) -> None:
        g = seat.game
        for event in got.events:
            if isinstance(event, GameStarted):
                assert g is not None
                self.start = g.clone()
            elif isinstance(event, MoveApplied):
                assert g is not None
                self.moves.append(Move(event.ply, event.turn, event.mover, format_action(event.action),
                                       g.state_hash(), event.events, g.clone()))
            elif isinstance(event, TakenBack):
                assert g is not None
                self.takebacks.append(TakeBackNote(len(self.moves), event.to, event.asker, g.turn))
            elif isinstance(event, ChatSaid):
                self.chat.append(ChatNote(len(self.moves), event.who, event.text))


def walk(path: Path, manifests: dict[str, Manifest]) -> Walk:
    """Re-play a replay through the seat, keeping every move and the state after it (one read of
    the file, checked as ``verify`` checks it); :class:`ReplayError` if it cannot be read."""
    replay = read_replay(path)
    seat = seat_for(replay, manifests, views=False)
    checks, moves = Verifier(), _Moves()
    walk_into(replay, seat, checks, moves)
    return Walk(replay, moves.moves, moves.start, checks.error, seat.outcome, moves.takebacks, moves.chat)


def export_json(w: Walk) -> dict[str, Any]:
    h = w.replay.header
    o = w.outcome
    return {
        "format": "basilica-replay-export/1",
        "header": {
            "ruleset": h.ruleset, "festum": h.festum, "removal": h.removal, "manifest": h.manifest.hex(),
            "game": h.game.hex(), "shuffle": h.shuffle,
            "players": [{"name": n, "public_key": k.hex()} for k, n in h.players],
        },
        "moves": [{"ply": m.ply, "turn": m.turn, "player": m.player + 1, "action": m.action,
                   "state_hash": m.state_hash} for m in w.moves],
        # Every decision played is in "moves"; before moves[before_move] the game went back to ply "to".
        "takebacks": [{"before_move": t.index, "to": t.to, "player": t.player + 1} for t in w.takebacks],
        # Each line of chat was said when "after_move" moves had been played (a signed record too).
        "chat": [{"after_move": c.index, "player": c.player + 1, "text": c.text} for c in w.chat],
        "scorings": [
            {"points": list(s.points), "areas": [
                {"color": a.color, "cells": list(a.cells), "strength": list(a.strength),
                 "majority": None if a.majority is None else a.majority + 1, "points": list(a.points)}
                for a in s.areas]}
            for s in (w.moves[-1].game.scoring_log if w.moves else [])
        ],
        "result": None if o is None else {
            "scores": list(o.scores), "winner": None if o.winner is None else o.winner + 1, "end": o.end,
            "moves": o.moves, "reason": o.reason or None,
        },
        "verified": not w.error and o is not None,
        "error": w.error or None,
    }


__all__ = ["ChatNote", "Move", "TakeBackNote", "Walk", "walk", "export_json", "ReplayError"]
