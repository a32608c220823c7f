"""Walking through a replay: moves in notation, boards, scorings, JSON export."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import Event, FaceClass, Game, Manifest, Position, TileSpec, format_action
from ..wire import ProtocolError, open_envelope
from .file import ReplayError, ReplayFile, read_replay
from .verify import referee_for


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


@dataclass
class Walk:
    replay: ReplayFile
    moves: list[Move]
    start: Game | None
    error: str  # the first failing record, if verification stopped early
    outcome: Any
    # What a hidden deal opened of each position (empty for a seeded game), so that a
    # viewer can replay the moves from ``start`` with the very reveals the players made.
    facts: dict[Position, FaceClass | TileSpec] = field(default_factory=dict)
    # Takebacks, in order: ``moves`` holds every decision played, also those taken back.
    takebacks: list[TakeBackNote] = field(default_factory=list)


def walk(path: Path, manifests: dict[str, Manifest]) -> Walk:
    """Re-play a replay through the referee, keeping every move and the state after it."""
    replay = read_replay(path)
    ref = referee_for(replay, manifests)
    moves: list[Move] = []
    start: Game | None = None
    error = ""
    facts: dict[Position, FaceClass | TileSpec] = {}
    takebacks: list[TakeBackNote] = []
    mark = 0  # where the events of the next move begin: a hidden deal's move waits for its reveals
    for i, raw in enumerate(replay.records, start=1):
        g = ref.game
        before = len(g.history) if g else 0
        turn = g.turn if g else 0
        mover = g.to_move if g else None
        if g is not None and not g.needed_reveals():
            mark = len(g.events)
        try:
            env = open_envelope(raw)
            ref.feed(env)
        except ProtocolError as e:
            error = f"record {i} (byte {replay.offsets[i]}): {e}"
            break
        g = ref.game
        if g is None:
            continue
        if env.type == "takeback" and len(g.history) < before:  # the consent: the game went back
            asker = 1 - (ref.spec.player_of(env.sender) or 0)
            takebacks.append(TakeBackNote(len(moves), len(g.history), asker, g.turn))
            continue
        if g.setup.hidden:
            # Positions are never reused (a reshuffle deals new ones), so the union is exact;
            # it is taken after every record because a reshuffle forgets the old positions.
            facts.update(g.specs)
        if start is None and not g.needed_reveals():  # a hidden deal starts once its market is open
            start = g.clone()
        if len(g.history) > before:
            assert mover is not None
            moves.append(Move(before, turn, mover, format_action(g.history[-1]), g.state_hash(),
                              tuple(g.events[mark:]), g.clone()))
    return Walk(replay, moves, start, error, ref.outcome, facts, takebacks)


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


__all__ = ["Move", "TakeBackNote", "Walk", "walk", "export_json", "ReplayError"]
