"""The person's agent on the game's side: it keeps the public view and hands it to the app.

:class:`AppPlayer` is an agent (basilica_p2p/agent.py), so one object plays a
local game or a network game.  The game runs in a thread of its own (trio or the
synchronous local loop; :class:`GameBridge` says why not a Textual worker) and the
Textual app in the main thread: every change
goes to the app as a message (``post_message`` is thread-safe), and a
decision waits on a queue that the app answers with an action, a
:class:`~basilica_p2p.agent.Resign` or a :class:`~basilica_p2p.agent.TakeBack`.
What the log says comes from the shared narration (basilica_p2p/narration.py).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from textual.message import Message

from ..agent import AgentBase, Decision, Resign, TakeBack, Traits
from ..engine import Manifest, Observation, format_action
from ..narration import CLEAN_UP as CLEAN_UP_TEXT
from ..narration import LineKind, Narrator, names_shown
from ..seat import (
    AgainOffered, Ask, ClocksChanged as SeatClocks, GameStarted, GameOver, MoveApplied, PeerAway, PeerBack, Scored,
    SeatEvent, Series, TakenBack,
)
from .model import Entry, Scoring, Snapshot


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


class GameBridge:
    """The game, played by ``work`` in a thread of its own, handed to the app that shows it:
    the app is told when it ends (:class:`GameEnded`), and its result or what it raised is kept
    for the caller, which reports it once the app has given the terminal back.

    Not a Textual worker (``run_worker(work, thread=True)``), for two reasons:

    - a network game starts before the app exists (app/run.py ``run_in_app``): it prints where
      it listens and its invite, and reads a pasted reply, on the terminal, and the app takes
      the terminal only once the game has begun.  A worker belongs to a running app.
    - a thread worker runs in the executor of the app's asyncio loop, and ``App.run`` (through
      ``asyncio.run``) waits for that executor's threads before it returns.  When the app closes
      while the game still waits for a decision (the window or the page went away, the person
      left a network game), ``App.run`` would wait for a game that waits for the app; run_in_app
      needs it back to record the forfeit or stop the session (``AppPlayer.abandon``, ``stopper``)
      and then gives the game a bounded time to finish.  This thread is a daemon, joined with a
      timeout.
    """

    def __init__(self, work: Callable[[], Any]) -> None:
        self.work = work
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._app: Any = None
        self._thread = threading.Thread(target=self._run, name="basilica-game", daemon=True)

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def start(self) -> None:
        if not self.started:
            self._thread.start()

    def join(self, timeout: float) -> None:
        if self._thread.ident is not None:
            self._thread.join(timeout)

    def tell(self, app: Any) -> None:
        """Tell ``app`` (now running) when the game ends; at once if it has ended already."""
        self._app = app
        if self.done.is_set():  # it ended before the app was there to be told
            app.post_message(GameEnded(self.error))

    def _run(self) -> None:
        try:
            self.result = self.work()
        except BaseException as e:  # handed to the main thread, which raises it after the app closes
            self.error = e
        self.done.set()
        app = self._app
        if app is not None:
            app.post_message(GameEnded(self.error))  # thread-safe; the app minds a second telling


class AppPlayer(AgentBase):
    """Asks a person for every decision of their side in the full-screen app; tells every move."""

    def __init__(self, name: str = "you", manifest: Manifest | None = None, undo: bool = False,
                 network: bool = False, watching: bool = False) -> None:
        self.name = name
        self.watching = watching  # someone watching a network game (basilica watch): never asked
        self.manifest = manifest
        self.undo = undo  # a local game against a bot: 'u' takes back to our previous decision
        self.network = network or watching  # leaving while the other side decides stops without a forfeit
        self.traits = Traits(blocking=True, takes_back=undo, chats=network)
        self._chat: Callable[[str], str | None] | None = None  # sends a line (a network game with chat)
        self._unwatch: Callable[[], str | None] | None = None  # sends every watcher away
        self._again = ""  # the question after a network game, while it is asked
        self._again_answers: queue.Queue[bool] = queue.Queue()
        self.console = Console(quiet=True)  # lineclient.local's "thinking" spinner: the app says who decides instead
        self.app: Any = None
        self.seat: int | None = None
        self.names: tuple[str, str] = ("player 1", "player 2")
        self.view: Observation | None = None
        self._narrator = Narrator(0, self.names)
        self._entries: list[Entry] = []
        self._scorings: list[tuple[Scoring, int]] = []  # with the ply it was told at
        self._decided: list[int] = []  # plies at which we decided (what 'u' can go back to)
        self._notes: dict[int, str] = {}
        self._notes_turn = -1
        self._answers: queue.Queue[Decision] = queue.Queue()
        self._lock = threading.Lock()
        self.resign_pending = False  # the person left while the other side decided
        self.stopper: Any = None  # set by a network game: stops it without a forfeit
        self.begun = threading.Event()  # a game has begun: the app may take the terminal
        self._asking: Sequence[str] = ()  # the decision waiting for an answer, if any
        self._away = ""  # while the other side of a network game is away: the latest word of the wait
        self._clocks: Any = None  # the last ClockView, and when it came (time.monotonic())
        self._clocks_at = 0.0

    # --- the app's side ---------------------------------------------------------------

    def attach(self, app: Any) -> None:
        """Tell ``app`` (now running) everything from here on, starting with where the game is."""
        self.app = app
        self._post(self._asking)
        if self._clocks is not None:  # the first decision's clocks came before the app was there
            self.app.post_message(ClocksChanged(self._clocks, self._clocks_at))

    def say(self, text: str) -> str | None:
        """A line of chat from the app (call it off the app's thread): None when sent, else why not."""
        chat = self._chat
        return "this game has no chat" if chat is None else chat(text)

    def again(self, series: Series) -> bool:
        """After a network game both sides may play again: 'r' in the app offers (or accepts)."""
        while not self._again_answers.empty():
            self._again_answers.get_nowait()
        self._again = f"Series: {series.line()}."
        self._post()
        try:
            return self._again_answers.get()
        finally:
            self._again = ""
            self._post()

    def answer_again(self, yes: bool) -> None:
        """The person's answer to :meth:`again` (from the app's thread)."""
        self._again_answers.put(yes)

    def open_watching(self, close: Callable[[], str | None]) -> None:
        self._unwatch = close

    def send_watchers_away(self) -> str | None:
        """Every watcher sent away (call it off the app's thread): None when done, else why not."""
        close = self._unwatch
        return "nobody can watch this game" if close is None else close()

    def open_chat(self, say: Callable[[str], str | None]) -> None:
        self._chat = say
        self._post(self._asking)

    def answer(self, reply: Decision) -> None:
        """The person's decision (from the app's thread)."""
        self._answers.put(reply)

    def snapshot(self, legal: Sequence[str] = ()) -> Snapshot:
        with self._lock:
            view = self.view
            waiting = ""
            if view is not None and not view.over and view.pending is not None and not legal:
                p = view.pending.player
                waiting = f"Waiting for {self.names[p]}..." if p != self.seat else "Your decision is coming..."
            result = next((e.text for e in reversed(self._entries) if e.kind == LineKind.RESULT), "")
            ply = len(view.history) if view is not None else 0
            return Snapshot(self.names, self.seat, view, tuple(self._entries), tuple(s for s, _ in self._scorings),
                            tuple(legal), tuple(self._notes.values()) if legal else (), waiting, result,
                            bool(legal) and self.undo and any(p < ply for p in self._decided), self._away,
                            self._chat is not None, self._again)

    def _post(self, legal: Sequence[str] = ()) -> None:
        if self.app is not None:
            self.app.post_message(GameChanged(self.snapshot(legal)))

    # --- told by the game ----------------------------------------------------------------

    def begin(self, seat: int, names: tuple[str, str], manifest: Manifest) -> None:
        with self._lock:
            self.seat = seat
            self.manifest = manifest
            self.names = names_shown(names)
            self.view, self._entries, self._scorings, self._decided = None, [], [], []
            self._narrator = Narrator(seat, names)
            self._add(self._narrator.begin())

    def watch_game(self, header: Any) -> Callable[[SeatEvent], None]:
        """Someone watching: a game begins (its replay header, net/watch.py); its events are told
        to the function returned.  Told as the players' own screens tell it, to an onlooker."""
        names = (header.players[0][1], header.players[1][1])
        with self._lock:
            self.seat = None
            self.names = names_shown(names)
            self.view, self._entries, self._scorings, self._decided = None, [], [], []
            self._narrator = Narrator(None, names)
            self._add(self._narrator.begin())
        self._post()
        return self.observe

    def observe(self, event: SeatEvent) -> None:
        if isinstance(event, SeatClocks):
            self._clocks, self._clocks_at = event.view, time.monotonic()
            if self.app is not None:
                self.app.post_message(ClocksChanged(event.view, self._clocks_at))
            return
        with self._lock:
            if isinstance(event, TakenBack):
                self._roll_back(event.to)
            if isinstance(event, MoveApplied) and event.turn != self._notes_turn:
                self._notes, self._notes_turn = {}, event.turn
            lines = self._narrator.tell(event)
            if isinstance(event, PeerAway):
                self._away = lines[-1].text if lines else ""
            elif isinstance(event, (PeerBack, GameOver)):
                self._away = ""
            elif isinstance(event, AgainOffered) and not event.yes:
                self._again_answers.put(False)  # our question is moot: the asking is over
            if isinstance(event, Scored):
                # Scoring results are public: kept, to be read again (s, and the panel).
                self._scorings.append((Scoring(event.number, event.turn, tuple(line.text for line in lines
                                                                               if line.text != CLEAN_UP_TEXT)),
                                       event.ply + 1))
            self._add(lines)
            view = event.after if isinstance(event, MoveApplied) else \
                event.view if isinstance(event, (GameStarted, TakenBack)) else None
            if view is not None:
                self.view = view
        if isinstance(event, GameStarted):
            self.begun.set()  # set up: the app may take the terminal and show the board
        self._post(self._asking)  # told while we decide (the other side went away): still deciding

    def _time_left(self) -> float | None:
        """Seconds our running clock has left, by this machine's clock; None without one running."""
        view = self._clocks
        if view is None or self.seat is None or view.running != self.seat:
            return None
        return float(view.remaining[self.seat]) - (time.monotonic() - self._clocks_at)

    # --- asked by the game ------------------------------------------------------------------

    def choose(self, ask: Ask) -> Decision:
        obs, legal = ask.view, ask.legal
        me = f"{self.names[obs.player]} (player {obs.player + 1})"
        if self.resign_pending:
            return Resign("left the game", summary=f"{me} left the game")
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
        if isinstance(reply, Resign) and not reply.summary:
            reply = Resign(reply.reason, reply.public_reason, f"{me} {reply.reason}")
        if not isinstance(reply, (Resign, TakeBack)):
            with self._lock:
                self._decided.append(len(obs.history))
        self._post()
        return reply

    def abandon(self) -> None:
        """The app is gone: a decision still waited for is a forfeit."""
        self.resign_pending = True
        self._answers.put(Resign("closed the game window"))

    # --- the log ------------------------------------------------------------------------

    def _roll_back(self, ply: int) -> None:
        """After a take-back the game tells moves again from an earlier ply: forget those past it."""
        if any(e.ply > ply for e in self._entries):
            self._entries = [e for e in self._entries if e.ply <= ply]
            self._scorings = [(s, p) for s, p in self._scorings if p <= ply]
            self._decided = [p for p in self._decided if p < ply]

    def _add(self, lines: list[Any]) -> None:
        for line in lines:
            if line.slot:
                self._notes[line.slot] = line.text
            self._entries.append(Entry(line.text, line.kind, line.turn, line.ply))


__all__ = ["AppPlayer", "ClocksChanged", "GameChanged", "GameEnded"]
