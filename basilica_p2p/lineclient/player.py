"""A person playing at a terminal: the screen, the prompt, and every move told in words.

:class:`TerminalPlayer` is an agent (basilica_p2p/agent.py), so the same
object plays a local game (``basilica play --plain``) or a network game
(``basilica host`` / ``join`` without ``--bot``).  It is told the seat's
events, which the shared narration (basilica_p2p/narration.py) turns into
the log it prints, and keeps only the public views they carry.
"""

from __future__ import annotations

import difflib
import math
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import TextIO

from rich.console import Console
from rich.text import Text

from ..agent import AgentBase, Decision, Resign, TakeBack, Traits
from ..clock import ClockView
from ..describe import ORDER_TITLE, describe_scoring
from ..engine import (
    Action,
    EngineError,
    IllegalAction,
    Manifest,
    NotationError,
    Observation,
    OrderFace,
    ScoringResult,
    format_action,
    parse_action,
)
from ..engine import actions as A
from ..narration import Line, LineKind, Narrator, names_shown
from ..seat import AgainOffered, Ask, ClocksChanged, GameOver, GameStarted, MoveApplied, Scored, SeatEvent, Series, TakenBack
from ..typed import read
from ..drawing import WIDTH_COLS, board_lines, decision_line
from ..rules_help import NOTATION, rules_text
from .help import COMMANDS

SCREEN_LINES = 24
RECENT = 4  # moves told again on the screen of our next decision
DETAIL = "detail"  # log lines left out of that recap (a scoring's areas, the clean-up)
COMMAND_WORDS = ("help", "list", "board", "log", "score", "scorings", "scoring", "rules", "clock", "undo", "say",
                 "unwatch", "quit")
# How each kind of line of the narration is printed.
STYLE = {LineKind.YOU: "dim", LineKind.THEM: "bold", LineKind.NOTE: "bold", LineKind.SCORING: "bold",
         LineKind.DETAIL: "", LineKind.RESULT: "bold", LineKind.CHAT: "italic"}


class TerminalPlayer(AgentBase):
    """Asks a person for every decision of their side; tells them every move."""

    def __init__(
        self,
        name: str = "you",
        console: Console | None = None,
        inp: TextIO | None = None,
        clear: bool | None = None,
        manifest: Manifest | None = None,
    ) -> None:
        self.name = name
        self.console = console or Console(highlight=False, width=min(WIDTH_COLS, _terminal_width()))
        self.inp = inp  # None: the real terminal, with line editing and Tab completion
        self.clear = self.console.is_terminal if clear is None else clear
        self.seat: int | None = None
        self.names: list[str] = ["player 1", "player 2"]
        self.view: Observation | None = None
        self.log: list[str] = []
        self._kinds: list[str] = []
        self._turns: list[int] = []  # the turn of each log line, for 'log'
        self.scorings: list[ScoringResult] = []
        self._scoring_turns: list[int] = []
        self.height = _terminal_height() if self.console.is_terminal else SCREEN_LINES  # long texts are paged to it
        self._waiting = False  # "Waiting for ..." said since our last decision
        self.manifest = manifest  # to say which rule a refused action breaks
        self._completions: list[str] = []
        self._partial = ""  # the start of an action typed on its own, which a cell typed next completes
        self._slots: dict[int, str] = {}  # market slot -> what taking its V changed there, this turn
        self._slots_turn = -1
        self.takebacks = False  # 'undo' works: set by a local game against a bot (docs/playing.md)
        self.clocks: ClockView | None = None  # the latest clocks the game showed us
        self._clocks_at = 0.0  # when (time.monotonic) they came, to count the running one down
        self._narrator = Narrator(0, ("player 1", "player 2"))
        # Chat in a network game: how to send a line, and the thread that reads every line typed
        # (a person may chat while the other side decides, when no prompt of ours is asking).
        self._chat: Callable[[str], str | None] | None = None
        self._unwatch: Callable[[], str | None] | None = None  # sends every watcher away (net/watch.py)
        self._lines: queue.Queue[str | None] | None = None
        self._asking: str | None = None  # the prompt waiting for the pump's next line, if one is
        self._choosing = threading.Event()
        # Lines are read while the other side decides too: at a terminal, not from a script's pipe
        # (whose lines are answers to our prompts, read when asked, as without chat).
        self.chat_anytime = inp is None and sys.stdin.isatty()

    @property
    def traits(self) -> Traits:  # type: ignore[override]  # read-only here, where AgentBase has a plain attribute
        # A person: asked in a worker thread, never ahead of time; undo in a local game only.
        return Traits(blocking=True, takes_back=self.takebacks, chats=True)

    def open_chat(self, say: Callable[[str], str | None]) -> None:
        self._chat = say
        if self._lines is None and self.chat_anytime:
            self._lines = queue.Queue()
            threading.Thread(target=self._pump, name="line-client-input", daemon=True).start()

    def open_watching(self, close: Callable[[], str | None]) -> None:
        self._unwatch = close

    def _send_watchers_away(self) -> None:
        if self._unwatch is None:
            self._say("nobody can watch this game", "red")
            return
        why = self._unwatch()
        self._say(f"not done: {why}" if why is not None else "Watching is closed for this session.",
                  "red" if why is not None else "bold")

    def _pump(self) -> None:
        """Every line typed, for the game's whole life: to our prompt while one asks, else a line of
        chat ('say TEXT'), or a word on why nothing else can be done now."""
        assert self._lines is not None
        while True:
            line = self._read_line("")
            if self._choosing.is_set() or line is None:
                self._lines.put(line)
                if line is None:
                    return
                continue
            text = line.strip()
            word, _, arg = text.partition(" ")
            if word.lower() == "say":
                self._send_chat(arg)
            elif word.lower() == "unwatch":
                self._send_watchers_away()
            elif text:
                self._say("It is not your decision: 'say TEXT' sends a line of chat meanwhile.", "dim")

    def _send_chat(self, text: str) -> None:
        if self._chat is None:
            self._say("chat is for network games: there is nobody to read it here", "red")
            return
        if not text.strip():
            self._say("say what? 'say TEXT' sends TEXT to the other player", "red")
            return
        why = self._chat(text)
        if why is not None:
            self._say(f"not sent: {why}", "red")

    # --- told by the game ---------------------------------------------------------

    def begin(self, seat: int, names: tuple[str, str], manifest: Manifest) -> None:
        self.seat = seat
        self.manifest = manifest
        self.names = list(names_shown(names))
        self.view, self.log, self._kinds, self.scorings, self._scoring_turns = None, [], [], [], []
        self._turns = []
        self._narrator = Narrator(seat, names)
        self._tell(self._narrator.begin())
        self._say("Waiting for the game to start...", "dim")

    def observe(self, event: SeatEvent) -> None:
        if isinstance(event, AgainOffered) and not event.yes and self._lines is not None and self._choosing.is_set():
            self._lines.put("no")  # our question is moot: the asking is over
        if isinstance(event, ClocksChanged):
            self.clocks, self._clocks_at = event.view, time.monotonic()
            return
        if isinstance(event, MoveApplied) and event.turn != self._slots_turn:
            self._slots, self._slots_turn = {}, event.turn
        lines = self._narrator.tell(event)
        if isinstance(event, Scored):
            self.scorings.append(event.result)
            self._scoring_turns.append(event.turn)
            if not event.last:  # the line client's own commands to see it again
                lines[0] = Line(lines[0].text + " (type 'score' to see it again, 'scorings' for all)",
                                lines[0].kind, lines[0].turn, lines[0].ply)
        elif isinstance(event, TakenBack) and event.view is not None:
            # Scorings after the decision taken back did not happen.
            del self.scorings[event.view.scorings:]
            del self._scoring_turns[event.view.scorings:]
        self._tell(lines)
        view = event.after if isinstance(event, MoveApplied) else \
            event.view if isinstance(event, (GameStarted, TakenBack)) else None
        if view is not None:
            self.view = view
            if not view.over:
                self._wait_on(view)
        if isinstance(event, GameOver) and self.clear and self.view is not None and self.view.over:
            # The final position, then the last scoring whole and the result, last.
            self._draw(self.view, None, waiting="The game is over.", recap=False)
            if self.scorings:
                for line in describe_scoring(self.scorings[-1], len(self.scorings), self.names):
                    self._say(line)
            self._say(self.log[-1], "bold")

    def _tell(self, lines: list[Line]) -> None:
        asking = self._asking
        if asking is not None and lines:
            self.console.print()  # off the prompt's line, where the person may have begun to type
        for line in lines:
            if line.slot:
                self._slots[line.slot] = line.text
            self._add(line.text, DETAIL if line.kind is LineKind.DETAIL else STYLE[line.kind] or line.kind.value,
                      line.turn)
        if asking is not None and lines:
            # Told while our prompt waits (a line of chat, someone watching): the prompt again,
            # under them, or the person is left with no prompt to answer.
            self._show_prompt(asking)

    def _wait_on(self, view: Observation) -> None:
        """While the other side decides: the board as it now is, and whom we wait for."""
        if view.pending is None or view.pending.player == view.player:
            return
        waiting = f"Waiting for {self.names[view.pending.player]}..." + \
            (" ('say TEXT' to chat)" if self._chat is not None else "")
        if self.clear:
            self._draw(view, None, waiting=waiting)
        elif not self._waiting:
            self._say(waiting, "dim")
        self._waiting = True

    def clock_line(self) -> str | None:
        """Both clocks now, the running one counted down since the game showed them."""
        v = self.clocks
        if v is None:
            return None
        if v.running is not None:
            left = list(v.remaining)
            left[v.running] = max(0.0, left[v.running] - (time.monotonic() - self._clocks_at))
            v = ClockView(v.control, (left[0], left[1]), v.running, (self.names[0], self.names[1]), v.me, v.flagged)
        else:
            v = ClockView(v.control, v.remaining, None, (self.names[0], self.names[1]), v.me, v.flagged)
        return v.line()

    # --- asked by the game ---------------------------------------------------------

    def choose(self, ask: Ask) -> Decision:
        obs, legal = ask.view, list(ask.legal)
        if self.seat is None:
            self.seat = obs.player
        if obs.turn != self._slots_turn:
            self._slots, self._slots_turn = {}, obs.turn
        self.view = obs
        self._waiting = False
        texts = [format_action(a) for a in legal]
        self._completions = texts
        self._partial = ""
        self._draw(obs, texts)
        me = f"{self.names[obs.player]} (player {obs.player + 1})"
        self._choosing.set()
        try:
            return self._prompt(obs, legal, texts, me)
        finally:
            self._choosing.clear()

    def again(self, series: Series) -> bool:
        """After a network game both sides may play again: 'again' offers (or accepts) another."""
        self._say(f"Series: {series.line()}.", "bold")
        self._choosing.set()
        try:
            while True:
                line = self._read("Another game? 'again' offers one (or accepts it), 'no' leaves: ")
                if line is None:
                    return False
                word, _, arg = line.strip().partition(" ")
                word = word.lower()
                if word in ("again", "a", "yes", "y", "rematch", "r"):
                    return True
                if word in ("no", "n", "quit", "q", "exit"):
                    return False
                if word == "say":
                    self._send_chat(arg)
                elif word:
                    self._say("type 'again' for another game, 'no' to leave, or 'say TEXT'", "red")
        finally:
            self._choosing.clear()

    def _prompt(self, obs: Observation, legal: list[Action], texts: list[str], me: str) -> Decision:
        while True:
            line = self._read("> ")
            if line is None:
                # End of input (Ctrl-D): a person at a terminal is asked first, as for 'quit'
                # (a second Ctrl-D answers yes); a script's pipe at its end leaves at once.
                if self._interactive():
                    answer = self._read("End of input: leave the game? Leaving is a forfeit: you lose this game. [y/N] ")
                    if answer is not None and answer.strip().lower() not in ("y", "yes"):
                        self._say("Go on, then.")
                        continue
                return Resign("left the game (input closed)", summary=f"{me} left the game (input closed)")
            text = line.strip()
            if not text:
                continue
            word, _, arg = text.partition(" ")
            cmd = word.lower()
            if cmd in ("help", "?", "h"):
                self._say(COMMANDS)
                self._say(NOTATION, "dim")
                continue
            if cmd in ("list", "ls", "l"):
                self._list(texts, full=True)
                continue
            if cmd in ("board", "b") and not arg and text.lower() in ("board", "b"):
                self._draw(obs, texts)
                continue
            if cmd == "log":
                self._log(arg.strip().lower())
                continue
            if cmd in ("score", "scores"):
                self._score(obs)
                continue
            if cmd == "scorings":
                self._scorings(obs)
                continue
            if cmd == "scoring":
                self._scoring(arg.strip(), obs)
                continue
            if cmd == "rules":
                self._say(rules_text(arg))
                continue
            if cmd in ("clock", "clocks"):
                self._say(self.clock_line() or "This game has no clock.")
                continue
            if cmd == "say":
                self._send_chat(arg)
                continue
            if cmd == "unwatch":
                self._send_watchers_away()
                continue
            if cmd in ("undo", "takeback"):
                if not self.takebacks:
                    self._say("undo works only in a game against a bot on this machine ('basilica play'): "
                              "over the network the same tiles would come again, seen", "red")
                    continue
                return TakeBack(1)
            if cmd in ("quit", "exit", "resign"):
                answer = self._read("Quit now? Leaving is a forfeit: you lose this game. [y/N] ")
                if answer is not None and answer.strip().lower() in ("y", "yes"):
                    return Resign("quit at the prompt", summary=f"{me} quit at the prompt")
                self._say("Go on, then.")
                continue
            if text.isdigit():
                n = int(text)
                if 1 <= n <= len(legal):
                    return legal[n - 1]
                self._say(f"there is no action {n}: choose 1 to {len(legal)} ('list' shows them)", "red")
                continue
            if text.isalpha() and text.lower() not in ("pass", "none"):
                near = difflib.get_close_matches(cmd, COMMAND_WORDS, n=1)
                self._say(f"unknown command {text!r}" + (f"; did you mean {near[0]}?" if near else "")
                          + " ('help' lists the commands and the notation)", "red")
                continue
            chosen = self._match(text, legal, texts)
            if chosen is not None:
                face = obs.orders[chosen.space - 1] if chosen.kind == A.VAULT and chosen.space >= 1 else None
                if isinstance(face, OrderFace):  # the order above goes with it: say so before it happens
                    self._say(f"Taking V{chosen.space} uses up O{chosen.space}'s {ORDER_TITLE[face.order]}: it turns "
                              f"over into the new V{chosen.space} and O{chosen.space} is refilled from the stack.",
                              "bold")
                return chosen

    # --- the screen ------------------------------------------------------------------

    def _draw(self, obs: Observation, texts: list[str] | None, waiting: str = "", recap: bool = True) -> None:
        """One screen that fits 24 rows: the board, the latest moves, the decision and its
        actions (or, between our decisions, who we are waiting for)."""
        if self.clear:
            self.console.clear()
        # On a cleared screen the latest moves are told again; otherwise they are just above.
        noted = set(self._slots.values()) if texts else set()  # shown under the decision instead
        told = [e for e, kind in zip(self.log, self._kinds) if kind != DETAIL and e not in noted]
        # Whole moves, wrapped, never cut: a move that does not fit is left out whole.
        entries = [_wrap(e) for e in told[-RECENT:]] if self.clear and recap else []
        bottom = [Text(waiting, style="dim")] if waiting else [
            Text(w, style="bold") for w in _wrap(decision_line(obs, self.names).plain)]
        clocks = self.clock_line()
        if clocks is not None:  # both clocks, at every decision
            bottom = [Text(clocks, style="bold")] + bottom
        if texts and obs.pending is not None and obs.pending.player == obs.player:
            bottom = [Text(w, style="bold reverse") for note in self._slots.values() for w in _wrap(note)] + bottom
        rows = 10
        lines = board_lines(obs, self.names, max_rows=rows)
        screen = max(SCREEN_LINES, min(self.height, 60))

        def room() -> int:
            return screen - 1 - len(lines) - sum(map(len, entries)) - len(bottom)

        menu = self._menu(texts, room()) if texts else []
        # Too tall: fewer recent moves first (the latest one last), then fewer cathedral rows
        # (its top rows stay, where it grows), and the actions as counts; never past the screen.
        while len(menu) > room() and (len(entries) > 1 or rows > 4 or entries):
            if len(entries) > 1 or (entries and rows <= 4):
                entries = entries[1:]
            else:
                rows -= 1
                lines = board_lines(obs, self.names, max_rows=rows)
            if texts:
                menu = self._menu(texts, room())
        recent = [w for e in entries for w in e]
        for line in lines:
            self.console.print(line, overflow="crop", no_wrap=True)
        for entry in recent:
            self.console.print(Text(entry), overflow="crop", no_wrap=True)
        for line in bottom + menu:
            self.console.print(line, overflow="crop", no_wrap=True)

    def _menu(self, texts: list[str], room: int) -> list[Text]:
        """The legal actions in at most ``room`` lines (at least two): numbered if they fit,
        else grouped by what comes before the target, else counted per group."""
        room = max(2, room)
        numbered = self._numbered(texts)
        if len(numbered) <= room:
            return numbered
        groups: dict[str, list[str]] = {}
        for t in texts:
            head, sep, tail = t.partition(":")
            groups.setdefault(head + sep if sep else "", []).append(tail if sep else t)
        note = Text(f"{len(texts)} legal actions: type one, or 'list' to number them all", style="dim")
        if len(groups) + 1 <= room:
            out = []
            for head, tails in groups.items():  # every group: no action may go unseen
                line = f"{head} " if head else ""
                for i, tail in enumerate(tails):
                    more = f"+{len(tails) - i} more"
                    if len(line) + len(tail) + 1 + (len(more) + 1 if i < len(tails) - 1 else 0) > WIDTH_COLS - 1:
                        line += more
                        break
                    line += tail + " "
                out.append(Text(line.rstrip()))
            return out + [note]
        counts = "  ".join(f"{head or 'other'} {len(tails)}" for head, tails in groups.items())
        return [Text(w) for w in _wrap(f"{len(texts)} legal actions, by kind: {counts}")] + [
            Text("type one (Tab completes; V2: lists those), or 'list' to number them all", style="dim")]

    def _numbered(self, texts: list[str]) -> list[Text]:
        entries = [f"{i:>2}. {t}" for i, t in enumerate(texts, start=1)]
        width = max(len(e) for e in entries) + 2
        cols = max(1, (WIDTH_COLS - 1) // width)
        rows = math.ceil(len(entries) / cols)
        return [Text("".join(entries[r + c * rows].ljust(width) for c in range(cols)
                             if r + c * rows < len(entries)).rstrip()) for r in range(rows)]

    def _list(self, texts: list[str], full: bool, room: int = 1000) -> None:
        for line in self._numbered(texts) if full else self._menu(texts, room):
            self.console.print(line, overflow="crop", no_wrap=True)

    def _score(self, obs: Observation) -> None:
        if not self.scorings:
            self._say(f"No scoring yet. Scores now: {self.names[0]} {obs.scores[0]}, {self.names[1]} {obs.scores[1]}.")
            return
        self._scoring(str(len(self.scorings)), obs)

    def _scorings(self, obs: Observation) -> None:
        """One line per scoring so far; 'scoring N' shows one whole."""
        if not self.scorings:
            self._score(obs)
            return
        lines = [describe_scoring(r, n, self.names)[0] + f" (turn {t})"
                 for n, (r, t) in enumerate(zip(self.scorings, self._scoring_turns), start=1)]
        self._page(lines + ["'scoring N' shows scoring N area by area."])

    def _scoring(self, arg: str, obs: Observation) -> None:
        if not self.scorings:
            self._score(obs)
            return
        n = int(arg) if arg.isdigit() else len(self.scorings) if not arg else 0
        if not 1 <= n <= len(self.scorings):
            self._say(f"there is no scoring {arg}: choose 1 to {len(self.scorings)} ('scorings' lists them)", "red")
            return
        self._page(describe_scoring(self.scorings[n - 1], n, self.names))

    def _log(self, arg: str) -> None:
        """'log': the latest moves, a screenful; 'log all': every move; 'log N': from turn N."""
        blocks: list[list[str]] = []  # one per log entry, its turn heading first when the turn changes
        shown = None
        start = int(arg) if arg.isdigit() else 0
        for entry, turn in zip(self.log, self._turns):
            if turn < start:
                continue
            block = []
            if turn != shown and turn > 0:
                block.append(f"-- turn {turn}")
                shown = turn
            blocks.append(block + [entry])
        if arg and arg != "all" and not arg.isdigit():
            self._say(f"log takes 'all' or a turn number, not {arg!r}", "red")
            return
        if not blocks:
            self._say("Nothing in the log" + (f" from turn {start}." if start else " yet."))
            return
        if arg:
            self._page([line for b in blocks for line in b])
            return
        room = max(4, self.height - 2)  # the hint and the prompt under it
        last: list[list[str]] = []
        while blocks and sum(len(_wrap(x)) for b in last + blocks[-1:] for x in b) <= room - 1:
            last.insert(0, blocks.pop())
        if not last:  # one entry longer than the screen: it is shown whole anyway
            last = [blocks.pop()]
        for b in last:
            for x in b:
                self._say(x, "dim" if x.startswith("-- turn") else "")
        if blocks:
            self._say(f"({len(blocks)} earlier entries: 'log all' pages the whole game, 'log N' from turn N)", "dim")

    def _page(self, lines: Sequence[str]) -> None:
        """Lines a screenful at a time, when a person reads at a terminal; at once otherwise."""
        wrapped = [w for line in lines for w in _wrap(line)]
        room = max(3, self.height - 2)
        if len(wrapped) <= room + 1 or not self._interactive():
            for w in wrapped:
                self.console.print(Text(w), overflow="fold")
            return
        for i in range(0, len(wrapped), room):
            for w in wrapped[i:i + room]:
                self.console.print(Text(w), overflow="fold")
            if i + room < len(wrapped):
                answer = self._read(f"-- more ({i + room} of {len(wrapped)} lines): Enter for the next page, q to stop -- ")
                if answer is None or answer.strip().lower().startswith("q"):
                    return

    def _interactive(self) -> bool:
        """Whether a person reads and types at a terminal (not a script through a pipe)."""
        try:
            if self.inp is not None:
                return bool(getattr(self.inp, "isatty", lambda: False)())
            return sys.stdin.isatty()
        except (OSError, ValueError):
            return False

    def _match(self, text: str, legal: Sequence[Action], texts: list[str]) -> Action | None:
        # Read as the app's box reads what is typed into it; a part that listed what it could
        # be ('V2') is kept, so that a cell typed next completes it.
        reading = read(text, texts, self._partial)
        candidate = reading.text
        self._partial = ""
        if reading.settled:
            return legal[texts.index(candidate)]
        could_be = "could be: " + "  ".join(reading.candidates[:24]) + ("  ..." if len(reading.candidates) > 24 else "")
        try:
            action = parse_action(candidate)
        except NotationError as e:
            if reading.candidates:
                self._say(could_be)
                self._partial = candidate
            else:
                near = difflib.get_close_matches(candidate, texts, n=6, cutoff=0.5)
                self._say(f"{e}" + (f"; did you mean {', '.join(near)}?" if near else "; 'help' explains"), "red")
            return None
        if action in legal:  # written otherwise than the canonical text (Jester colours in another order)
            return action
        if reading.candidates and not any(t.startswith(candidate) for t in reading.candidates):
            self._say(could_be)  # a target that several actions end on
            return None
        near = list(reading.candidates) or difflib.get_close_matches(candidate, texts, n=6, cutoff=0.5)
        why = self._why_illegal(action)
        if action.kind == A.ORDER and action.space in self._slots:  # the order the player meant has gone
            why = (why + ". " if why else "") + self._slots[action.space].rstrip(".")
        self._say(f"{candidate} is not legal now" + (f": {why}" if why else "")
                  + (f". Legal ones like it: {', '.join(near[:12])}" if near else ". 'list' shows what is"), "red")
        return None

    def _why_illegal(self, action: Action) -> str:
        """The rule an action breaks, from a game sampled from our view (legality never
        depends on what is hidden), so the reason is the engine's own."""
        if self.manifest is None or self.view is None:
            return ""
        import random

        from ..bots import sample_game

        try:
            g = sample_game(self.view, self.manifest, random.Random(0))
            g.apply(action)
        except IllegalAction as e:
            return e.reason  # in words: the rule's code (a section or decision id) is for developers
        except EngineError as e:
            return str(e)
        except Exception:  # only the explanation is at stake
            return ""
        return ""

    # --- text in and out ---------------------------------------------------------------

    def _say(self, text: str, style: str = "") -> None:
        for line in text.splitlines() or [""]:
            for part in _wrap(line):
                self.console.print(Text(part, style=style), overflow="fold")

    def _add(self, entry: str, style: str, turn: int) -> None:
        self.log.append(entry)
        self._kinds.append(style)
        self._turns.append(turn)
        self._say(entry, "" if style == DETAIL else style)

    def _read(self, prompt: str) -> str | None:
        if self._lines is not None:  # the pump reads (network games with chat)
            self._show_prompt(prompt)
            self._asking = prompt
            try:
                return self._lines.get()
            finally:
                self._asking = None
        return self._read_line(prompt)

    def _show_prompt(self, prompt: str) -> None:
        self.console.file.write(prompt)  # as input() would: never cut to the console's width
        self.console.file.flush()

    def _read_line(self, prompt: str) -> str | None:
        if self.inp is not None:
            self.console.print(prompt, end="")
            self.console.file.flush()
            line = self.inp.readline()
            self.console.print(line.rstrip("\n"), markup=False, highlight=False)  # a transcript reads like a session
            return line if line else None
        _enable_completion(self)
        if self._lines is None:  # (with chat, what is typed while waiting may be a line of chat)
            _forget_typed_ahead()  # keys pressed while waiting were for a screen not yet shown
        try:
            return input(prompt)
        except EOFError:
            return None
        except KeyboardInterrupt:  # Ctrl-C at the prompt means "quit", which asks first
            self.console.print()
            return "quit" if not prompt.startswith("Quit") else "y"

    def complete(self, text: str, state: int) -> str | None:
        """readline's completer: the legal actions and commands that start with ``text``."""
        words = self._completions + list(COMMAND_WORDS)
        matches = [w for w in words if w.startswith(text)]
        return matches[state] if state < len(matches) else None


def _wrap(line: str) -> list[str]:
    """At most 80 columns, continuation lines indented under the text."""
    import textwrap

    indent = " " * (len(line) - len(line.lstrip(" ")) + 4)
    return textwrap.wrap(line, WIDTH_COLS - 1, subsequent_indent=indent, break_on_hyphens=False) or [""]


def _forget_typed_ahead() -> None:
    try:
        import termios

        if sys.stdin.isatty():
            termios.tcflush(sys.stdin, termios.TCIFLUSH)
    except (ImportError, OSError, ValueError):
        pass  # not a terminal, or not POSIX: nothing to forget


def _terminal_height() -> int:
    try:
        return max(10, os.get_terminal_size(sys.stdout.fileno()).lines)
    except (OSError, ValueError):
        return SCREEN_LINES


def _terminal_width() -> int:
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        return WIDTH_COLS


def _enable_completion(player: TerminalPlayer) -> None:
    try:
        import readline
    except ImportError:  # not on every platform; typing still works
        return
    readline.set_completer_delims(" \t")
    readline.set_completer(player.complete)
    readline.parse_and_bind("tab: complete")


__all__ = ["TerminalPlayer"]
