"""A Monte Carlo tree search bot that sees only its observation.

Determinized UCT with a fresh determinization per iteration (single-observer
information-set MCTS): every iteration samples the hidden part of the game
(the stack below its top tile, hidden crowns, festum tiles removed unseen,
the other player's secret Jester colours) with
:func:`~basilica_p2p.engine.determinize`, walks down one shared tree whose
edges are actions, and backs the result up.  Because a child may be legal
in one sample and not in another, selection counts how often each child was
available (UCB1 over availability counts).

Each node ranks its actions once by a one-ply look (the
:func:`~basilica_p2p.bots.greedy.evaluate` heuristic of the player to move)
and is widened progressively in that order, so the search spends its
playouts on plausible lines of both players.  A leaf is valued by the same
heuristic from the searching player's side, squashed to -1..1; there is no
random rollout, so one "playout" is one iteration: sample, select, add one
node, back up.  The answer is the most visited action at the root.

Budget: ``time`` seconds per decision (``time.perf_counter``; only the bot
reads the clock, never the engine) or ``playouts`` iterations per decision
(reproducible for a seed).
"""

from __future__ import annotations

import math
import random
import time as _time
from collections.abc import Sequence
from dataclasses import dataclass

from ..engine import Action, Game, Manifest, Observation
from .base import sample_game
from .greedy import evaluate

DEFAULT_TIME = 0.5
MAX_TIME = 60.0
MAX_PLAYOUTS = 1_000_000


class _Node:
    __slots__ = ("children", "visits", "value", "avail", "prior")

    def __init__(self) -> None:
        self.children: dict[Action, _Node] = {}
        self.visits = 0
        self.value = 0.0  # summed rewards, from the side of the player who moved into this node
        self.avail = 0  # how often this node's action was available when its parent was visited
        self.prior: dict[Action, float] = {}  # one-ply value of each action for the player to move


@dataclass(frozen=True)
class Estimate:
    """What a search found at one decision: its choice, and the values (expected score difference
    from the decider's side, in points) of its choice and of the action played."""

    best: Action
    best_value: float
    played_value: float
    playouts: int

    @property
    def loss(self) -> float:
        """Points the action played gave away against the search's choice (never below 0)."""
        return max(0.0, self.best_value - self.played_value)


class MctsBot:
    name = "mcts"
    blocking = True  # thinks for a while: the network session asks it in a worker thread

    def __init__(
        self,
        manifest: Manifest,
        seed: int = 0,
        *,
        time: float | None = None,
        playouts: int | None = None,
        c: float = 0.35,
        widen: float = 2.0,
        alpha: float = 0.5,
        scale: float = 8.0,
    ) -> None:
        if time is not None and playouts is not None:
            raise ValueError("give a time or a playout budget, not both")
        if time is None and playouts is None:
            time = DEFAULT_TIME
        if time is not None and not (0 < time <= MAX_TIME):
            raise ValueError(f"time must be > 0 and <= {MAX_TIME:g} seconds")
        if playouts is not None and not (1 <= playouts <= MAX_PLAYOUTS):
            raise ValueError(f"playouts must be 1..{MAX_PLAYOUTS}")
        self._manifest = manifest
        self._rng = random.Random(seed)
        self.time = time
        self.playouts = playouts
        self.c = c
        self.widen = widen
        self.alpha = alpha
        self.scale = scale
        self.last_iterations = 0

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        root = _Node()
        self.last_iterations = self._search(root, obs, set(legal), self.time, self.playouts)
        best = self._most_visited(root, legal)
        if best is None:  # pragma: no cover - only if ``legal`` and the rules disagree
            return legal[self._rng.randrange(len(legal))]
        return best

    def estimate(self, obs: Observation, legal: Sequence[Action], played: Action) -> Estimate:
        """The search's values of its own choice and of ``played`` at this decision, in points.

        The search runs as for :meth:`choose`; then, if ``played`` is not its choice, a
        quarter of that budget again goes to ``played`` alone, so that both values rest
        on enough playouts (a move the search disliked is otherwise barely visited).
        A value is the mean of the squashed leaf values below the action, turned back
        into a score difference from ``obs.player``'s side.
        """
        if played not in legal:
            raise ValueError(f"{played} is not among the legal actions")
        root = _Node()
        n = self._search(root, obs, set(legal), self.time, self.playouts)
        best = self._most_visited(root, legal) or played
        if best != played:
            n += self._search(root, obs, {played}, None if self.time is None else self.time / 4,
                              None if self.playouts is None else max(1, self.playouts // 4))
        self.last_iterations = n
        return Estimate(best, self._points(root.children[best]), self._points(root.children[played]), n)

    def _points(self, node: _Node) -> float:
        mean = node.value / node.visits if node.visits else 0.0
        return self.scale * math.atanh(max(-0.999, min(0.999, mean)))

    def _search(self, root: _Node, obs: Observation, allowed: set[Action], seconds: float | None,
                playouts: int | None) -> int:
        """Playouts from ``root`` within ``seconds`` or ``playouts`` (at least one), the root's
        actions limited to ``allowed``; returns how many ran."""
        deadline = math.inf if seconds is None else _time.perf_counter() + seconds  # else playouts bound it
        n = 0
        while True:
            if playouts is not None:
                if n >= playouts:
                    break
            elif n > 0 and _time.perf_counter() >= deadline:
                break
            g = sample_game(obs, self._manifest, self._rng)
            self._iterate(root, g, obs.player, allowed)
            n += 1
        return n

    @staticmethod
    def _most_visited(root: _Node, legal: Sequence[Action]) -> Action | None:
        best = None
        best_key = None
        for a in legal:
            child = root.children.get(a)
            if child is None:
                continue
            key = (child.visits, child.value / child.visits if child.visits else 0.0, root.prior.get(a, 0.0))
            if best_key is None or key > best_key:
                best, best_key = a, key
        return best

    # --- one iteration --------------------------------------------------------

    def _reward(self, g: Game, me: int) -> float:
        return math.tanh(evaluate(g, me) / self.scale)

    def _ranked(self, node: _Node, g: Game, legal: list[Action]) -> list[Action]:
        """``legal`` sorted best first by the one-ply value for the player to move."""
        prior = node.prior
        p = g.to_move
        assert p is not None
        for a in legal:
            if a not in prior:
                h = g.clone()
                h.apply(a)
                prior[a] = evaluate(h, p) + 1e-6 * self._rng.random()  # random tie-break
        return sorted(legal, key=prior.__getitem__, reverse=True)

    def _iterate(self, root: _Node, g: Game, me: int, allowed: set[Action]) -> None:
        """Select, expand one node, value it, back the value up (one playout)."""
        path: list[tuple[_Node, int]] = []  # (node, the player who moved into it)
        node = root
        while True:
            if g.over:
                reward = self._reward(g, me)
                break
            legal = g.legal_actions()
            if node is root:
                legal = [a for a in legal if a in allowed]  # the caller's list has the last word
                if not legal:  # pragma: no cover - the sample and the real game always agree here
                    return
            p = g.to_move
            assert p is not None
            if len(legal) == 1:
                a = legal[0]
                child = node.children.get(a)
                if child is None:
                    child = node.children[a] = _Node()
                child.avail += 1
                g.apply(a)
                node = child
                path.append((node, p))
                continue
            ranked = self._ranked(node, g, legal)
            width = min(len(ranked), max(1, int(self.widen * (node.visits + 1) ** self.alpha)))
            cands = ranked[:width]
            pick = None
            for a in cands:
                if a not in node.children:
                    pick = a
                    break
            if pick is not None:
                node.children[pick] = _Node()
                for a in cands:
                    ch = node.children.get(a)
                    if ch is not None:
                        ch.avail += 1
                child = node.children[pick]
                g.apply(pick)
                path.append((child, p))
                reward = self._reward(g, me)
                break
            best_u = -math.inf
            chosen = cands[0]
            for a in cands:
                ch = node.children[a]
                ch.avail += 1
            for a in cands:
                ch = node.children[a]
                if ch.visits == 0:
                    u = math.inf
                else:
                    u = ch.value / ch.visits + self.c * math.sqrt(math.log(ch.avail) / ch.visits)
                if u > best_u:
                    best_u, chosen = u, a
            g.apply(chosen)
            node = node.children[chosen]
            path.append((node, p))
        root.visits += 1
        for n, mover in path:
            n.visits += 1
            n.value += reward if mover == me else -reward


# --- the command-line name ----------------------------------------------------

_FLOAT_OPTIONS = {"time": "time", "c": "c", "widen": "widen", "alpha": "alpha", "scale": "scale"}


def parse_options(spec: str) -> dict[str, float | int]:
    """``mcts``, ``mcts:time=0.5`` or ``mcts:playouts=400,c=0.3`` -> keyword arguments of MctsBot.

    Raises ValueError with a one-line message naming the problem.
    """
    head, _, rest = spec.strip().partition(":")
    if head.strip().lower() != "mcts":
        raise ValueError(f"not an mcts bot name: {spec!r}")
    out: dict[str, float | int] = {}
    if not rest.strip():
        if ":" in spec:
            raise ValueError("empty option list after 'mcts:' (try mcts:time=0.5 or mcts:playouts=400)")
        return out
    for part in rest.split(","):
        key, eq, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not key or not value:
            raise ValueError(f"mcts option {part.strip()!r} is not key=value (e.g. time=0.5 or playouts=400)")
        if key in out:
            raise ValueError(f"mcts option {key!r} given twice")
        if key == "playouts":
            try:
                n = int(value)
            except ValueError:
                raise ValueError(f"mcts playouts must be a whole number, not {value!r}") from None
            if not 1 <= n <= MAX_PLAYOUTS:
                raise ValueError(f"mcts playouts must be 1..{MAX_PLAYOUTS}, not {n}")
            out["playouts"] = n
        elif key in _FLOAT_OPTIONS:
            try:
                x = float(value)
            except ValueError:
                raise ValueError(f"mcts {key} must be a number, not {value!r}") from None
            if not math.isfinite(x) or x <= 0:
                raise ValueError(f"mcts {key} must be a positive number, not {value!r}")
            if key == "time" and x > MAX_TIME:
                raise ValueError(f"mcts time must be at most {MAX_TIME:g} seconds per decision, not {value!r}")
            out[_FLOAT_OPTIONS[key]] = x
        else:
            known = ", ".join(["time", "playouts", *[k for k in _FLOAT_OPTIONS if k != "time"]])
            raise ValueError(f"unknown mcts option {key!r} (known: {known})")
    if "time" in out and "playouts" in out:
        raise ValueError("mcts takes a time or a playouts budget, not both")
    return out


def mcts_from_spec(spec: str, manifest: Manifest, seed: int) -> MctsBot:
    """Build the bot from its command-line name; a bad option is a BotSpecError."""
    from .base import BotSpecError

    try:
        options = parse_options(spec)
    except ValueError as e:
        raise BotSpecError(str(e)) from None
    playouts = options.pop("playouts", None)  # the one whole number: the rest are floats
    return MctsBot(manifest, seed, playouts=None if playouts is None else int(playouts), **options)
