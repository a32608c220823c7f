"""``basilica replay analyse``: the search bot's view of every decision of a finished game.

For each decision of the player(s) asked for, the ``mcts`` bot searches the
position *as that player saw it*: its :class:`~basilica_p2p.engine.Observation`
and the legal actions, the hidden part sampled afresh in every playout
(:func:`~basilica_p2p.bots.base.sample_game`), exactly as when the bot plays.
Nothing else of the replay reaches the search: not the stack order, not a
crown face down, not the other's secret Jester colours, not what came later.
It gives the value of its own choice and of the action played, as expected
score differences in points (:meth:`~basilica_p2p.bots.mcts.MctsBot.estimate`);
their difference is the loss, marked an inaccuracy or a blunder past a threshold.

The replay is read through the seat walker (replay/walk.py) and must be a
finished, valid game: the analysis never runs on a game still being played.
The results are saved beside the replay (``GAME.analysis.json``) with the
replay's hash and the search budget, and reused when asked again with the same
budget (a decision analysed once is not searched again; another ``--seat``
adds the missing ones).  Decisions are independent jobs, so they run on any
:class:`~basilica_p2p.executor.Executor`: ``--jobs`` processes or ``--ray``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..engine import Action, Game, Manifest, Observation, format_action, observe
from ..seat import Accepted, MoveApplied, Seat, TakenBack
from .file import ReplayError, read_replay
from .walk import Visitor, seat_for, walk

ANALYSIS_FORMAT = "basilica-analysis/1"
SUFFIX = ".analysis.json"
DEFAULT_TIME = 0.5
INACCURACY = 3.0  # points given away against the search's choice
BLUNDER = 8.0


class AnalysisError(Exception):
    """The replay cannot be analysed (not a finished, valid game); the message is one line."""


@dataclass(frozen=True)
class Budget:
    """The search per decision: ``time`` seconds (0.5 when neither is given), or ``playouts`` (reproducible)."""

    time: float | None = None
    playouts: int | None = None

    def __post_init__(self) -> None:
        if self.time is not None and self.playouts is not None:
            raise ValueError("a search budget is a time or a number of playouts, not both")
        if self.time is None and self.playouts is None:
            object.__setattr__(self, "time", DEFAULT_TIME)

    def words(self) -> str:
        return f"{self.playouts} playouts" if self.playouts is not None else f"{self.time:g} s"


@dataclass(frozen=True)
class Decision:
    """One decision to analyse: the position as its player saw it, and what was played."""

    move: int  # 1-based, as `replay show` numbers the moves (taken-back ones included)
    ply: int
    turn: int
    player: int  # 0 or 1
    view: Observation
    legal: tuple[Action, ...]
    played: Action
    manifest: Manifest
    budget: Budget
    seed: int


@dataclass(frozen=True)
class Judged:
    """The search's verdict on one decision (values in points, from the decider's side)."""

    move: int
    ply: int
    turn: int
    player: int
    played: str
    best: str
    played_value: float
    best_value: float
    loss: float
    legal: int
    playouts: int

    @property
    def mark(self) -> str:
        """``blunder``, ``inaccuracy`` or empty."""
        return "blunder" if self.loss >= BLUNDER else "inaccuracy" if self.loss >= INACCURACY else ""

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "player": self.player + 1, "mark": self.mark or None}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Judged:
        fields = {k: d[k] for k in cls.__dataclass_fields__}
        return cls(**{**fields, "player": int(d["player"]) - 1})


def judge(d: Decision) -> Judged:
    """Search one decision (runs in a worker process or a Ray task)."""
    from ..bots import MctsBot

    bot = MctsBot(d.manifest, d.seed, time=d.budget.time, playouts=d.budget.playouts)
    e = bot.estimate(d.view, d.legal, d.played)
    return Judged(d.move, d.ply, d.turn, d.player, format_action(d.played), format_action(e.best),
                  round(e.played_value, 2), round(e.best_value, 2), round(e.loss, 2), len(d.legal), e.playouts)


class _Positions(Visitor):
    """Every decision of the game with the position it was made from (what the walk's seat holds
    before the move; a hidden deal's move waits for its reveals, so the last position that waited
    for none is the one it was made from)."""

    def __init__(self) -> None:
        self.ready: dict[int, Game] = {}  # by the number of decisions made
        self.moves: list[tuple[MoveApplied, Game]] = []

    def taken(self, number: int, got: Accepted, seat: Seat) -> None:
        for e in got.events:
            if isinstance(e, MoveApplied):
                self.moves.append((e, self.ready[e.ply]))
            elif isinstance(e, TakenBack):
                self.ready = {k: v for k, v in self.ready.items() if k <= e.to}
        g = seat.game
        if g is not None and not g.needed_reveals() and not g.over:
            plies = len(g.history)
            if plies not in self.ready or self.ready[plies].state_hash() != g.state_hash():
                self.ready[plies] = g.clone()


@dataclass(frozen=True)
class ReplayDecisions:
    """What the analysis needs of a replay: its names, its decisions, the hash that identifies it."""

    names: tuple[str, str]
    decisions: list[Decision]
    digest: str


def decisions_of(path: Path, manifests: dict[str, Manifest], seats: Sequence[int], budget: Budget) -> ReplayDecisions:
    """Every decision of ``seats`` (0, 1) with two or more legal actions; AnalysisError unless the
    replay is a finished, valid game."""
    try:
        replay = read_replay(path)
        seat = seat_for(replay, manifests, views=False)
    except ReplayError as e:
        raise AnalysisError(str(e)) from None
    except OSError as e:
        raise AnalysisError(f"cannot read it: {e.strerror or e}") from None
    positions = _Positions()
    refused = walk(replay, seat, positions)
    if refused is not None:
        raise AnalysisError(f"the replay does not verify: {refused.reason}")
    if seat.outcome is None:
        raise AnalysisError("the game is not finished: only a finished game is analysed")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest = seat.spec.manifest
    out = []
    for number, (m, before) in enumerate(positions.moves, start=1):
        legal = tuple(before.legal_actions())
        if m.mover not in seats or len(legal) < 2:
            continue
        seed = int.from_bytes(hashlib.sha256(f"{digest}/{m.ply}/{number}".encode()).digest()[:8], "big")
        out.append(Decision(number, m.ply, m.turn, m.mover, observe(before, m.mover), legal, m.action, manifest,
                            budget, seed))
    return ReplayDecisions(seat.spec.names, out, digest)


def saved_path(replay: Path) -> Path:
    return replay.with_name(replay.name + SUFFIX)


def load_saved(replay: Path, digest: str | None = None) -> dict[str, Any] | None:
    """The analysis saved beside ``replay`` (of this very file when ``digest`` is given), or None."""
    try:
        data = json.loads(saved_path(replay).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != ANALYSIS_FORMAT:
        return None
    if digest is not None and data.get("replay_sha256") != digest:
        return None
    return data


def _budget_json(b: Budget) -> dict[str, Any]:
    return {"bot": "mcts", "time": b.time if b.playouts is None else None, "playouts": b.playouts}


@dataclass(frozen=True)
class Analysis:
    names: tuple[str, str]
    budget: Budget
    judged: list[Judged]  # by move number
    reused: int  # how many came from the saved file
    saved: Path | None
    save_error: str = ""

    def summary(self, player: int) -> tuple[int, float, int, int]:
        """Decisions analysed, mean loss, inaccuracies, blunders of ``player``."""
        mine = [j for j in self.judged if j.player == player]
        mean = sum(j.loss for j in mine) / len(mine) if mine else 0.0
        return (len(mine), mean, sum(1 for j in mine if j.mark == "inaccuracy"),
                sum(1 for j in mine if j.mark == "blunder"))


def analyse(path: Path, manifests: dict[str, Manifest], seats: Sequence[int], budget: Budget,
            run: Callable[[Callable[[Decision], Judged], list[Decision], Callable[[Judged], None]], bool],
            on_start: Callable[[int], None] = lambda total: None) -> tuple[Analysis, bool]:
    """Analyse (or reuse) every decision of ``seats``; ``run(judge, decisions, on_result)`` plays the
    jobs somewhere (it returns True if Ctrl-C stopped it).  Saves what was found, also when stopped."""
    game = decisions_of(path, manifests, seats, budget)
    saved = load_saved(path, game.digest)
    known: dict[int, Judged] = {}
    if saved is not None and saved.get("search") == _budget_json(budget):
        known = {int(d["move"]): Judged.from_json(d) for d in saved.get("decisions", [])}
    reused = sum(1 for d in game.decisions if d.move in known)
    todo = [d for d in game.decisions if d.move not in known]
    on_start(len(todo))
    found: dict[int, Judged] = {}
    interrupted = run(judge, todo, lambda j: found.__setitem__(j.move, j)) if todo else False
    everything = {**known, **found}
    wanted = {d.move for d in game.decisions}
    data = {
        "format": ANALYSIS_FORMAT, "replay": path.name, "replay_sha256": game.digest, "players": list(game.names),
        "search": _budget_json(budget), "thresholds": {"inaccuracy": INACCURACY, "blunder": BLUNDER},
        "decisions": [everything[k].to_json() for k in sorted(everything)],
    }
    target = saved_path(path) if known else None
    error = ""
    if found:
        from ..safefile import write_atomically

        try:
            write_atomically(saved_path(path), json.dumps(data, indent=1) + "\n")
            target = saved_path(path)
        except OSError as e:
            target, error = None, f"cannot save the analysis beside the replay: {e.strerror or e}"
    shown = [everything[k] for k in sorted(everything) if k in wanted]
    return Analysis(game.names, budget, shown, reused, target, error), interrupted


def evaluation_series(replay: Path) -> dict[str, Any] | None:
    """The saved analysis of ``replay`` as the viewer page draws it (None if there is none for this
    very file): every analysed decision's move number, player and values, and the thresholds."""
    try:
        digest = hashlib.sha256(replay.read_bytes()).hexdigest()
    except OSError:
        return None
    data = load_saved(replay, digest)
    if data is None:
        return None
    keep = ("move", "player", "played", "best", "played_value", "best_value", "loss", "mark")
    return {"search": data["search"], "thresholds": data["thresholds"],
            "decisions": [{k: d[k] for k in keep} for d in data["decisions"]]}


__all__ = ["ANALYSIS_FORMAT", "BLUNDER", "INACCURACY", "Analysis", "AnalysisError", "Budget", "Decision", "Judged",
           "analyse", "decisions_of", "evaluation_series", "judge", "load_saved", "saved_path"]
