"""Headless matches between bots on one machine (``basilica match``).

Every game's seed is derived from the match seed text and the game number,
and every bot's generator from the game seed and its seat, so the same
arguments give the same games on every machine.

A bot that fails (raises, answers an illegal action, or, for a ``cmd:`` bot,
crashes, hangs past its time or breaks protocol/BOTS.md) loses that game by
forfeit; the match goes on with the next game and fresh bots.

With ``shuffle="sra-p256-v1"`` every game is dealt face down by the two seats'
referees exactly as between two peers (:func:`play_face_down`); without a
replay folder its nonces and deal secrets come from the game seed too, so the
same arguments still give the same games.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from .agent import HearsResults
from .bots import Bot, BotFailed, bot_rng_seed, checked_choose, close_bot, make_bot
from .identity import Identity
from .engine import (
    END_STACK,
    END_LAST_SCORING,
    Event,
    Game,
    Manifest,
    Options,
    Ruleset,
    default_manifest,
    format_action,
    observe,
)
from .schemes import COMMIT_REVEAL, HIDDEN_DEAL
from .replay import Forfeit
from .seat import SeatSecrets

PROGRESS_AFTER_SECONDS = 0.5  # a bar for anything longer than a moment, nothing for quick runs
FORFEIT = "forfeit"  # the end of a game that a bot's failure decided: "forfeit: <why>"


@dataclass(frozen=True)
class MatchConfig:
    p1: str
    p2: str
    games: int = 1
    seed: str = "0"
    ruleset: Ruleset = Ruleset.PORTAL2022
    festum: bool = False
    festum_removal: bool = False
    shuffle: str = COMMIT_REVEAL

    def options(self) -> Options:
        return Options(self.ruleset, self.festum, self.festum_removal)


@dataclass(frozen=True)
class GameRecord:
    number: int
    seed: str  # hex
    scores: tuple[int, int]
    winner: int | None  # 1 or 2, None for a shared victory
    turns: int
    decisions: int
    scorings: int
    end: str  # END_LAST_SCORING, END_STACK, or "forfeit: <why>" when a bot failed (FORFEIT)
    state_hash: str
    moves: tuple[str, ...] = ()  # in notation, kept only when asked for


def match_game_seed(match_seed: str, number: int) -> bytes:
    """The engine seed of game ``number`` of a local match or tournament seeded ``match_seed`` (a
    network game's seed is :func:`~basilica_p2p.wire.game_seed`, from both sides' nonces)."""
    return hashlib.sha256(b"basilica-p2p/match/v1\x00" + match_seed.encode() + b"\x00" + number.to_bytes(8, "big")).digest()


def _derived(seed: bytes, what: bytes) -> bytes:
    return hashlib.sha256(b"basilica-p2p/match/deal/v1\x00" + seed + b"\x00" + what).digest()


# The two seats of a face-down game played without a replay folder: the keys only sign
# messages nobody keeps, so fixed ones do (and keep the games the same from run to run).
LOCAL_SEATS = (
    Identity("player 1", Ed25519PrivateKey.from_private_bytes(_derived(b"", b"seat 1"))),
    Identity("player 2", Ed25519PrivateKey.from_private_bytes(_derived(b"", b"seat 2"))),
)


# Told each move of a game a match shows (--log): turn, player (0 or 1), notation, what the rules did.
MoveLog = Callable[[int, int, str, "list[Event]"], None]


def play_face_down(manifest: Manifest, options: Options, seed: bytes, bots: tuple[Bot, Bot],
                   log: MoveLog | None = None) -> tuple[Game, Forfeit | None]:
    """:func:`play_game` with the stack dealt face down by ``sra-p256-v1``.

    The hidden deal exists only as the protocol between two seats, so the game
    is played by :func:`play_protocol` into a temporary file that is deleted
    afterwards.  Its game id, nonces, deal secrets and Jester salts are derived
    from ``seed``: the same seed gives the same game.
    """
    secrets = (SeatSecrets(_derived(seed, b"nonce 1"), None, _derived(seed, b"secret 1")),
               SeatSecrets(_derived(seed, b"nonce 2"), None, _derived(seed, b"secret 2")))
    salts = (_derived(seed, b"salt %d" % n) for n in range(1_000_000))
    with tempfile.TemporaryDirectory(prefix="basilica-deal-") as tmp:
        return play_protocol(Path(tmp) / "game.replay", manifest, options, LOCAL_SEATS, bots, HIDDEN_DEAL, log,
                             game_id=_derived(seed, b"game"), secrets=secrets, salts=lambda: next(salts))


def play_protocol(path: Path, manifest: Manifest, options: Options, identities: tuple[Identity, Identity],
                  bots: tuple[Bot, Bot], shuffle: str, log: MoveLog | None = None, **fixed: Any,
                  ) -> tuple[Game, Forfeit | None]:
    """One game with the whole protocol between two local seats, recorded at ``path``; a bot that
    fails resigns, signed, so the replay is a finished game either way.  ``fixed``: the game id,
    secrets and salts of a game that must come out the same every time."""
    from .replay import play_both_seats
    from .seat import MoveApplied, SeatEvent

    def watch(event: SeatEvent) -> None:
        if log is not None and isinstance(event, MoveApplied):
            log(event.turn, event.mover, format_action(event.action), list(event.events))

    played = play_both_seats(path, manifest, options, identities, bots, shuffle=shuffle, watch=watch, **fixed)
    return played.game, played.forfeit


def play_game(
    manifest: Manifest,
    options: Options,
    seed: bytes,
    bots: tuple[Bot, Bot],
    on_action: Callable[[Game, int, int, str, list[Event]], None] | None = None,
) -> Game:
    """Play one game to its end; each bot sees only its observation and the legal actions.

    A bot that raises or answers an illegal action raises :class:`BotFailed`,
    whose ``player`` loses and whose ``game`` is the game as it stood.
    """
    g = Game.new(manifest, options, seed)
    while not g.over:
        p = g.to_move
        assert p is not None
        legal = g.legal_actions()
        try:
            action = checked_choose(bots[p], observe(g, p), legal)
        except BotFailed as e:
            e.game = g
            raise
        turn = g.turn
        events = g.apply(action)
        if on_action is not None:
            on_action(g, turn, p, format_action(action), events)
    return g


def play_engine_game(manifest: Manifest, options: Options, seed: bytes, bots: tuple[Bot, Bot],
                     log: MoveLog | None = None) -> tuple[Game, Forfeit | None]:
    """:func:`play_game`, a bot's failure a :class:`Forfeit` (the game as it stood then)."""
    try:
        return play_game(manifest, options, seed, bots, None if log is None else
                         (lambda g, turn, p, text, events: log(turn, p, text, events))), None
    except BotFailed as e:
        assert e.player is not None
        return e.game, Forfeit(e.player, e.reason, str(e))


def outcome(g: Game, failure: Forfeit | None = None) -> tuple[int | None, str]:
    """(winner 0 or 1 or None, end) of a game that ended on the board or by a bot's failure."""
    if failure is not None:
        return 1 - failure.player, f"{FORFEIT}: {failure.reason}"
    return g.winner(), g.end_reason


def finish_bots(bots: tuple[Bot, Bot], g: Game | None, failure: Forfeit | None = None, told: bool = False) -> None:
    """Tell the bots that want it how the game ended (unless the game's seats ``told`` them), then
    stop any bot programs."""
    try:
        if not told and g is not None and (g.over or failure is not None):
            winner, end = outcome(g, failure)
            for b in bots:
                if isinstance(b, HearsResults):
                    try:
                        b.game_over((g.scores[0], g.scores[1]), winner, end)
                    except Exception:
                        pass  # only news for the bot
    finally:
        for b in bots:
            close_bot(b)


def record(number: int, seed: bytes, g: Game, keep_moves: bool = False, failure: Forfeit | None = None) -> GameRecord:
    w, end = outcome(g, failure)
    return GameRecord(
        number=number,
        seed=seed.hex(),
        scores=(g.scores[0], g.scores[1]),
        winner=None if w is None else w + 1,
        turns=g.turn,
        decisions=len(g.history),
        scorings=g.scorings,
        end=end,
        state_hash=g.state_hash(),
        moves=tuple(format_action(a) for a in g.history) if keep_moves else (),
    )


@dataclass
class MatchSummary:
    config: MatchConfig
    manifest_hash: str
    last_scoring: int = 3  # how many scorings end a game with this manifest
    manifest_name: str = ""
    games: list[GameRecord] = field(default_factory=list)
    interrupted: bool = False
    replays: list[str] = field(default_factory=list)

    def wins(self, player: int) -> int:
        return sum(1 for r in self.games if r.winner == player)

    @property
    def draws(self) -> int:
        return sum(1 for r in self.games if r.winner is None)

    @property
    def forfeits(self) -> int:
        return sum(1 for r in self.games if r.end.startswith(FORFEIT))

    def score_stats(self, player: int) -> tuple[float, float]:
        xs = [r.scores[player - 1] for r in self.games]
        if not xs:
            return 0.0, 0.0
        return statistics.fmean(xs), statistics.pstdev(xs) if len(xs) > 1 else 0.0

    def to_json(self) -> dict[str, Any]:
        turns = [r.turns for r in self.games]
        return {
            "p1": self.config.p1,
            "p2": self.config.p2,
            "games": len(self.games),
            "seed": self.config.seed,
            "ruleset": self.config.ruleset.value,
            "festum": self.config.festum,
            "festum_removal": self.config.festum_removal,
            "shuffle": self.config.shuffle,
            "manifest": self.manifest_hash,
            "wins": [self.wins(1), self.wins(2)],
            "draws": self.draws,
            "score_mean": [round(self.score_stats(p)[0], 3) for p in (1, 2)],
            "score_stdev": [round(self.score_stats(p)[1], 3) for p in (1, 2)],
            "turns_mean": round(statistics.fmean(turns), 3) if turns else None,
            "turns_median": statistics.median(turns) if turns else None,
            "ended_third_scoring": sum(1 for r in self.games if r.end == END_LAST_SCORING),
            "ended_stack": sum(1 for r in self.games if r.end == END_STACK),
            "forfeits": self.forfeits,
            "interrupted": self.interrupted,
            "replays": self.replays,
            "results": [self._result_json(r) for r in self.games],
        }

    @staticmethod
    def _result_json(r: GameRecord) -> dict[str, Any]:
        d = asdict(r)
        if not r.moves:
            del d["moves"]
        return d

    def render(self, console: Console) -> None:
        c = self.config
        n = len(self.games)
        extras = (" + festum" if c.festum else "") + (" (6 tiles removed)" if c.festum_removal else "")
        box = f", manifest {self.manifest_name!r}" if self.manifest_name else ""
        stop = " (interrupted)" if self.interrupted else ""
        # With replays the seeds come from a real commit-reveal, not from --seed.
        seed = "seeds by commit-reveal" if self.replays else f"seed {c.seed!r}"
        console.print(f"{n} game{'s' if n != 1 else ''} of {c.ruleset.value}{extras}, {seed}, dealt by {c.shuffle}"
                      f"{box}{stop}")
        if n == 0:
            return
        table = Table(show_edge=False)
        for col in ("", "bot", "wins", "draws", "losses", "mean score", "spread (sd)"):
            table.add_column(col, justify="left" if col in ("", "bot") else "right")
        for p, name in ((1, c.p1), (2, c.p2)):
            mean, sd = self.score_stats(p)
            table.add_row(f"P{p}", name, str(self.wins(p)), str(self.draws), str(self.wins(3 - p)),
                          f"{mean:.1f}", f"{sd:.1f}")
        console.print(table)
        turns = [r.turns for r in self.games]
        third = sum(1 for r in self.games if r.end == END_LAST_SCORING)
        stack = sum(1 for r in self.games if r.end == END_STACK)
        lost = f", by forfeit: {self.forfeits}" if self.forfeits else ""
        console.print(f"mean turns {statistics.fmean(turns):.1f} (median {statistics.median(turns):.1f}); "
                      f"ended at the {ordinal(self.last_scoring)} scoring: {third}, on the stack: {stack}{lost}")
        for r in self.games:
            if r.end.startswith(FORFEIT):
                console.print(f"game {r.number}: player {r.winner} won by {r.end}", markup=False, soft_wrap=True)
        if self.replays:
            console.print(f"replays: {', '.join(self.replays)}")
        if n == 1:
            r = self.games[0]
            console.print(f"final score {r.scores[0]} - {r.scores[1]}; state hash {r.state_hash[:16]}")


def ordinal(n: int) -> str:
    return {1: "first", 2: "second", 3: "third"}.get(n, f"{n}th")


def run_match(
    config: MatchConfig,
    manifest: Manifest,
    progress: bool = True,
    log: bool = False,
    keep_moves: bool = False,
    replay_dir: Path | None = None,
    identities: tuple[Identity, Identity] | None = None,
) -> MatchSummary:
    """Play ``config.games`` games; show a progress bar on stderr once it takes a while.

    With ``replay_dir``, every game runs the full protocol between the two
    local ``identities`` and writes a verifiable replay; its seed then comes
    from a real commit-reveal, so such games differ from run to run.
    ``config.shuffle`` names the scheme that deals every game (see :func:`play_face_down`).
    Ctrl-C stops after the games already finished, which are kept and summarised.
    """
    options = config.options()
    default = manifest.hash == default_manifest().hash
    summary = MatchSummary(config, manifest.hash, len(manifest.crown_spaces), "" if default else manifest.name or "custom")
    out = Console(highlight=False)
    bar: Progress | None = None
    task = None
    started = time.monotonic()

    def show(turn: int, player: int, text: str, events: list[Event]) -> None:
        out.print(f"  turn {turn:>2}  P{player + 1}  {text}", markup=False)
        for e in events:
            out.print(f"           {e.detail}", markup=False)

    try:
        for i in range(config.games):
            seed = match_game_seed(config.seed, i)
            bots = (make_bot(config.p1, manifest, bot_rng_seed(seed, 0)), make_bot(config.p2, manifest, bot_rng_seed(seed, 1)))
            if log:
                out.print(f"game {i + 1}: {config.p1} (P1) vs {config.p2} (P2)")
            g: Game | None = None
            failure: Forfeit | None = None
            seated = replay_dir is not None or config.shuffle != COMMIT_REVEAL  # the seats tell the bots the end
            try:
                if replay_dir is not None:
                    assert identities is not None
                    path = replay_dir / f"match-{i + 1:04d}-{os.urandom(4).hex()}.replay"
                    g, failure = play_protocol(path, manifest, options, identities, bots, config.shuffle,
                                               show if log else None)
                    summary.replays.append(str(path))
                    seed = g.seed or seed  # a hidden deal has no seed: its bots' seeds come from ours
                else:
                    play = play_engine_game if config.shuffle == COMMIT_REVEAL else play_face_down
                    g, failure = play(manifest, options, seed, bots, show if log else None)
            finally:
                finish_bots(bots, g, failure, told=seated and g is not None)
            assert g is not None
            if failure is not None:
                winner = 1 - failure.player
                console = bar.console if bar is not None else Console(stderr=True, highlight=False)
                console.print(f"game {i + 1}: {failure.summary}; player {winner + 1} wins by forfeit", markup=False,
                              soft_wrap=True)
            summary.games.append(record(i + 1, seed, g, keep_moves, failure))
            if progress and bar is None and i + 1 < config.games and time.monotonic() - started > PROGRESS_AFTER_SECONDS:
                bar = Progress(TextColumn("games"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                               console=Console(stderr=True), transient=True)
                bar.start()
                task = bar.add_task("games", total=config.games, completed=i + 1)
            elif bar is not None and task is not None:
                bar.update(task, completed=i + 1)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        if bar is not None:
            bar.stop()
    return summary
