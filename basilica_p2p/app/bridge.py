"""The person's agent on the game's side: it keeps the public view and hands it to the app.

:class:`AppPlayer` has the methods the local game loop and the network
session call on any agent (``begin_game``, ``notify``, ``choose``,
``show_clocks``), so one object plays both kinds of game.  The game runs in
a worker thread (trio or the synchronous local loop) and the Textual app in
the main thread: every change goes to the app as a message
(``post_message`` is thread-safe), and a decision waits on a queue that the
app answers with an action, a :class:`Resign` or a :class:`TakeBack`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from textual.message import Message

from ..bots import TakeBack
from ..describe import describe_action, describe_scoring
from ..engine import Action, Game, Manifest, Observation, format_action, observe, parse_action
from ..tui.player import END_WORDS, Resign, _slot_change, _view_before_last
from .model import Entry, Scoring, Snapshot

CLEAN_UP = ("Clean-up: every builder and rank token goes home, scaffolding is removed, rows 1-2 are discarded "
            "and the rest of the cathedral moves down to row 1.")


class GameChanged(Message):
    def __init__(self, snapshot: Snapshot) -> None:
        super().__init__()
        self.snapshot = snapshot


class ClocksChanged(Message):
    """The clocks as the game showed them at ``at`` (time.monotonic()): a view handed on late
    (the app started after it) still counts the running clock down from then."""

    def __init__(self, view: Any, at: float) -> None:
        super().__init__()
        self.view, self.at = view, at


class GameEnded(Message):
    """The game's thread is done: ``error`` is what it raised, if anything."""

    def __init__(self, error: BaseException | None) -> None:
        super().__init__()
        self.error = error


class AppPlayer:
    """Asks a person for every decision of their side in the full-screen app; tells every move."""

    blocking = True  # waits for a person: asked in a worker thread, never ahead of time

    def __init__(self, name: str = "you", manifest: Manifest | None = None, undo: bool = False,
                 network: bool = False) -> None:
        self.name = name
        self.manifest = manifest
        self.undo = undo  # a local game against a bot: 'u' takes back to our previous decision
        self.network = network  # leaving while the other side decides stops without a forfeit
        self.console = Console(quiet=True)  # tui.local's "thinking" spinner: the app says who decides instead
        self.app: Any = None
        self.seat: int | None = None
        self.names: tuple[str, str] = ("player 1", "player 2")
        self.view: Observation | None = None
        self._entries: list[Entry] = []
        self._scorings: list[tuple[Scoring, int]] = []  # with the ply it was told at
        self._decided: list[int] = []  # plies at which we decided (what 'u' can go back to)
        self._notes: dict[int, str] = {}
        self._notes_turn = -1
        self._turn = 0
        self._answers: queue.Queue[Action | BaseException] = queue.Queue()
        self._lock = threading.Lock()
        self.resign_pending = False  # the person left while the other side decided
        self.stopper: Any = None  # set by a network game: stops it without a forfeit
        self.begun = threading.Event()  # a game has begun: the app may take the terminal
        self._asking: Sequence[str] = ()  # the decision waiting for an answer, if any
        self._clocks: Any = None  # the last ClockView, and when it came (time.monotonic())
        self._clocks_at = 0.0

    # --- the app's side ---------------------------------------------------------------

    def attach(self, app: Any) -> None:
        """Tell ``app`` (now running) everything from here on, starting with where the game is."""
        self.app = app
        self._post(self._asking)
        if self._clocks is not None:  # the first decision's clocks came before the app was there
            self.app.post_message(ClocksChanged(self._clocks, self._clocks_at))

    def answer(self, reply: Action | BaseException) -> None:
        """The person's decision (from the app's thread)."""
        self._answers.put(reply)

    def snapshot(self, legal: Sequence[str] = ()) -> Snapshot:
        with self._lock:
            view = self.view
            waiting = ""
            if view is not None and not view.over and view.pending is not None and not legal:
                p = view.pending.player
                waiting = f"Waiting for {self.names[p]}..." if p != self.seat else "Your decision is coming..."
            result = next((e.text for e in reversed(self._entries) if e.kind == "result"), "")
            ply = len(view.history) if view is not None else 0
            return Snapshot(self.names, self.seat, view, tuple(self._entries), tuple(s for s, _ in self._scorings),
                            tuple(legal), tuple(self._notes.values()) if legal else (), waiting, result,
                            bool(legal) and self.undo and any(p < ply for p in self._decided))

    def _post(self, legal: Sequence[str] = ()) -> None:
        if self.app is not None:
            self.app.post_message(GameChanged(self.snapshot(legal)))

    # --- told by the game loop ----------------------------------------------------------

    def begin_game(self, seat: int, names: Sequence[str], manifest: Manifest | None = None,
                   view: Observation | None = None) -> None:
        """A game begins: ``view`` is the board as it stands, when the game is already set up
        (a network session's, or a resumed game's), so that the screen shows it at once."""
        with self._lock:
            self.seat = seat
            if manifest is not None:
                self.manifest = manifest
            a, b = (str(n) for n in names)
            self.names = (f"{a} (P1)", f"{b} (P2)") if a == b else (a, b)
            self.view, self._entries, self._scorings, self._decided = view, [], [], []
            self._turn = 0
            self._add(f"You are {self.names[seat]} against {self.names[1 - seat]} (seat {seat + 1}); who moves "
                      "first is drawn at random.", "note", 0)
            self._turn = view.turn if view is not None else 0
        self.begun.set()
        self._post()

    def notify(self, g: Game, turn: int, who: int, text: str, *_: Any) -> None:
        """A move was applied: tell it in words.  Only the public view of ``g`` is kept."""
        seat = self.seat if self.seat is not None else 1 - who
        ply = len(g.history)
        after = observe(g, seat)
        action = parse_action(text)
        with self._lock:
            self._roll_back(ply - 1)
            before = self.view
            if before is None and not g.setup.hidden:  # a hidden deal cannot be played again from its seed
                before = _view_before_last(g, seat)
            # Who moved is who was to decide: a network session may tell a move at the step of
            # the other side's message (a hidden deal's shares), with that side as ``who``.
            if before is not None and before.pending is not None:
                who = before.pending.player
            elif ply == 1 and g.turn == 1:
                who = g.active  # the first action of the game cannot have ended the first turn
            if ply == 1:
                self._add("You move first." if who == seat else f"{self.names[who]} moves first.", "note", 0)
            self._turn = turn
            if turn != self._notes_turn:
                self._notes, self._notes_turn = {}, turn
            self._add(describe_action(action, who, before, after, self.names, reader=seat),
                      "you" if who == seat else "them", ply)
            slot = _slot_change(action, before, after)
            if slot is not None:
                self._notes[action.space] = slot
                self._add(slot, "note", ply)
            for k in range(len(self._scorings), len(g.scoring_log)):  # scoring results are public
                lines = tuple(describe_scoring(g.scoring_log[k], k + 1, self.names))
                self._scorings.append((Scoring(k + 1, turn, lines), ply))
                self._add(lines[0], "scoring", ply)
                for line in lines[1:]:
                    self._add(line, "detail", ply)
                if not after.over:
                    self._add(CLEAN_UP, "detail", ply)
            if before is not None and after.reshuffles > before.reshuffles:
                self._add("The stack ran out: the discard pile was shuffled into a new stack.", "note", ply)
            if after.over:
                self._add(self._result_line(after), "result", ply)
            self.view = after
        self._post()

    def show_clocks(self, view: Any) -> None:
        self._clocks, self._clocks_at = view, time.monotonic()
        if self.app is not None:
            self.app.post_message(ClocksChanged(view, self._clocks_at))

    def _time_left(self) -> float | None:
        """Seconds our running clock has left, by this machine's clock; None without one running."""
        view = self._clocks
        if view is None or self.seat is None or view.running != self.seat:
            return None
        return view.remaining[self.seat] - (time.monotonic() - self._clocks_at)

    def end(self, text: str, detail: str = "") -> None:
        """The game ended without a last move to tell (a claim on time, a forfeit): say how, and
        on a line below the figures behind it, if any."""
        with self._lock:
            if any(e.kind == "result" for e in self._entries):
                return
            ply = len(self.view.history) if self.view is not None else 0
            self._add(text, "result", ply)
            if detail:
                self._add(detail, "detail", ply)
        self._post()

    # --- asked by the game loop ---------------------------------------------------------

    def choose(self, obs: Observation, legal: Sequence[Action]) -> Action:
        if self.resign_pending:
            raise Resign(self.names[obs.player], obs.player, "left the game")
        with self._lock:
            if self.seat is None:
                self.seat = obs.player
            self._roll_back(len(obs.history))
            if obs.turn != self._notes_turn:
                self._notes, self._notes_turn = {}, obs.turn
            self.view = obs
        texts = [format_action(a) for a in legal]
        while not self._answers.empty():  # an answer meant for a screen already gone
            self._answers.get_nowait()
        self._asking = texts
        self._post(texts)
        try:
            # When our clock runs out at the prompt the flag falls: a local game's loop takes
            # any answer made now as too late and records the loss on time (a network session
            # has stopped waiting for us already, and the other side claims).
            left = self._time_left()
            reply = self._answers.get(timeout=None if left is None else max(0.0, left) + 0.05)
        except queue.Empty:
            reply = legal[0]
        self._asking = ()
        if isinstance(reply, BaseException):
            self._post()
            if isinstance(reply, Resign):
                reply.player = obs.player
            raise reply
        with self._lock:
            self._decided.append(len(obs.history))
        self._post()
        return reply

    def took_back(self, game: Game | None) -> None:
        """The local loop took our moves back to ``game`` (None: there was nothing to take back)."""
        with self._lock:
            if game is None:
                self._add("Nothing to take back yet.", "note", len(self.view.history) if self.view else 0)
            else:
                self._roll_back(len(game.history))
                self.view = observe(game, self.seat if self.seat is not None else 0)
                self._add("Taken back to your previous decision.", "note", len(game.history))
        self._post()

    def abandon(self) -> None:
        """The app is gone: a decision still waited for is a forfeit."""
        self.resign_pending = True
        self._answers.put(Resign(self.name, self.seat, "closed the game window"))

    # --- the log ------------------------------------------------------------------------

    def _roll_back(self, ply: int) -> None:
        """After a take-back the loop tells moves again from an earlier ply: forget those past it."""
        if any(e.ply > ply for e in self._entries):
            self._entries = [e for e in self._entries if e.ply <= ply]
            self._scorings = [(s, p) for s, p in self._scorings if p <= ply]
            self._decided = [p for p in self._decided if p < ply]

    def _add(self, text: str, kind: str, ply: int) -> None:
        self._entries.append(Entry(text, kind, self._turn, ply))

    def _result_line(self, obs: Observation) -> str:
        a, b = obs.scores
        how = END_WORDS.get(obs.end_reason, obs.end_reason)
        you = [" (you)" if p == self.seat else "" for p in (0, 1)]
        who = "a shared victory" if a == b else f"{self.names[0 if a > b else 1]} wins"
        return f"Game over {how}: {self.names[0]}{you[0]} {a}, {self.names[1]}{you[1]} {b}: {who}."


__all__ = ["AppPlayer", "ClocksChanged", "GameChanged", "GameEnded", "TakeBack"]
