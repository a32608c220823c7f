"""The full-screen app: the board, the market, the log, and a choice made by click or keys.

A choice is built as notation (docs/notation.md) in the box at the bottom:
clicking a market space writes ``V2:``, a highlighted cell adds ``b3``,
typing does the same.  The list under the box holds the legal actions that
start with what is there; once the box holds a whole legal action, the
preview says what it will do, and Enter (or Confirm, or a second click)
plays it.  Nothing is sent before that.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.geometry import Region
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, OptionList, RichLog, Static
from textual.widgets.option_list import Option

from ..agent import Resign, TakeBack
from ..engine import format_cell, parse_action, parse_cell
from ..wire import CHAT_TEXT
from ..drawing import decision_line, status_line
from ..rules_help import NOTATION, rules_text
from .bridge import AppPlayer, ClocksChanged, GameBridge, GameChanged, GameEnded
from ..typed import Reading, read
from .model import Entry, Snapshot, next_cells, option_words, pairing_warning, preview
from .widgets import (
    Cathedral, Clocks, MarketSlot, MoveLog, NotationInput, Players, Question, ScoringScreen, TextScreen, Track,
    colour_legend,
)

MAX_CHOICES = 300  # listed under the box; more are reached by typing
LOG_STYLE = {"you": "", "them": "bold", "note": "italic", "scoring": "bold yellow", "detail": "dim",
             "result": "bold reverse", "chat": "cyan"}

KEYS = """\
Keys and mouse
  click V1-V3      place that vault (then click a highlighted cell)
  click O1-O3      carry out that order (then its highlighted cells)
  click a cell     pick a highlighted target; click it again to play it
  type notation    V2:b3, O1:c2-c3, B:b3, pass ... (the box at the bottom)
  Up/Down          move in the list of legal actions; Enter picks one
  Enter, Confirm   play the action once the preview shows it
  Esc              start the choice over
  s                every scoring, area by area (Left/Right between them)
  l                the whole log;   ? this help
  u                undo: back to your previous decision (a local game against a bot)
  t                talk: write a line to the other player (a network game); Enter
                   sends it, Esc goes back to the game
  m                mute the other player's chat (m again shows it)
  r                after a network game: offer another game, or accept the offer
  w                send away everyone watching (a network game)
  q, Ctrl-C, Ctrl-D  leave the game (asks first: leaving is a forfeit)
(one-letter keys work while the box is empty)"""


class BasilicaApp(App[None]):
    """One person's game; ``work`` plays it in a thread of its own (a :class:`GameBridge`)
    and returns its result."""

    TITLE = "Basilica"
    ENABLE_COMMAND_PALETTE = False
    CSS_PATH = "app.tcss"  # every style of the app and its pieces, and why the panels are as they are
    VERTICAL_BREAKPOINTS = [(0, "-short"), (28, "-tall")]
    BINDINGS = [
        Binding("q", "leave", "Leave"),
        Binding("ctrl+c", "leave", "Leave", priority=True, show=False),
        Binding("ctrl+d", "leave", "Leave", priority=True, show=False),
        Binding("u", "undo", "Undo"),
        Binding("s", "scorings", "Scorings"),
        Binding("l", "log", "Log"),
        Binding("question_mark", "help", "Help"),
        Binding("escape", "clear", "Start over"),
    ]

    def __init__(self, player: AppPlayer, work: Callable[[], Any] | GameBridge | None = None,
                 driver_class: type[Driver] | None = None) -> None:
        super().__init__(driver_class=driver_class)
        self.player = player
        self.game = work if isinstance(work, GameBridge) or work is None else GameBridge(work)
        self.snap: Snapshot | None = None
        self.finished = False  # the game's thread is done
        self.leaving = False
        self._shown: tuple[Entry, ...] = ()
        self._scorings_seen = 0
        self._browse_from: str | None = None  # what the box held when the arrows began to browse
        self._browsed_to = ""  # the action the arrows last put in the box
        self.muted = False  # the other player's chat is not shown ('m')

    @property
    def result(self) -> Any:
        return self.game.result if self.game is not None else None

    @property
    def error(self) -> BaseException | None:
        return self.game.error if self.game is not None else None

    # --- building the screen ------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="status"):
            yield Static("Basilica: waiting for the game to start...", id="status-text")
            yield Clocks(id="clocks")
        with Horizontal(id="main"):
            with Vertical(id="board"):
                with VerticalScroll(id="cathedral-view"):
                    yield Cathedral(id="cathedral")
                yield Track(id="track")
                yield Players(id="players")
            with Vertical(id="side"):
                with Horizontal(id="market"):
                    for k in (1, 2, 3):
                        yield MarketSlot(k, id=f"slot{k}")
                yield MoveLog(id="log", wrap=True, markup=False, auto_scroll=True, min_width=20)
                yield Input(id="chat", placeholder="chat: a line to the other player, Enter sends, Esc back",
                            max_length=CHAT_TEXT)
        with Vertical(id="decide"):
            yield Static(id="decision")
            yield Static(id="notes")
            yield Static(id="preview")
            with Horizontal(id="entry"):
                yield Label("> ")
                yield NotationInput(id="notation", placeholder="click a market space, or type notation (? help)")
                yield Button("Confirm", id="confirm", compact=True)
            yield OptionList(id="choices")
        yield Static(id="keys")

    def on_mount(self) -> None:
        self.begin_capture_print(self)  # the session's messages (an invite, a reconnection) go to the log
        self.query_one("#notation").focus()
        self.player.attach(self)
        if self.game is not None:
            self.game.tell(self)
            self.game.start()

    # --- told by the game -----------------------------------------------------------------

    def on_game_changed(self, message: GameChanged) -> None:
        old = self.snap
        self.snap = snap = message.snapshot
        if snap.deciding and not (old is not None and old.deciding and old.legal == snap.legal):
            for box in self.query(NotationInput):  # a new decision starts with an empty box
                box.value = ""
        self._draw()
        if snap.result and not (old is not None and old.result):  # how the game ended, once
            self.notify(snap.result, title="Game over", timeout=30)
        if snap.away and not (old is not None and old.away):  # the other side went away, once a time
            self.notify(snap.away, title="The other side has gone", timeout=10)
        if len(snap.scorings) > self._scorings_seen:  # a new scoring: shown until dismissed
            self._scorings_seen = len(snap.scorings)
            self._open_scorings()
        self._scorings_seen = len(snap.scorings)  # fewer after a take-back

    def on_clocks_changed(self, message: ClocksChanged) -> None:
        for clocks in self.query(Clocks):  # none while the app closes
            clocks.show(message.view, message.at)

    def on_game_ended(self, message: GameEnded) -> None:
        if self.finished:
            return
        self.finished = True
        if self.leaving or message.error is not None:
            self.exit()
            return
        self._draw()

    def on_print(self, event: events.Print) -> None:
        # click (typer.echo) probes the captured stream with bytes and, finding them accepted,
        # writes its text encoded: a print may come as bytes although Textual says str.
        raw: str | bytes = event.text
        text = (raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw).rstrip("\n")
        for log in self.query(RichLog) if text.strip() else ():
            log.write(Text(text, style="italic"))

    # --- drawing ----------------------------------------------------------------------------

    def _prefix(self) -> str:
        return self._reading().text

    def _reading(self, typed: str | None = None) -> Reading:
        """What the box holds (or ``typed``), read as the line client reads the prompt."""
        legal = self.snap.legal if self.snap is not None else ()
        return read(self.query_one("#notation", NotationInput).value if typed is None else typed, legal)

    def _draw(self) -> None:
        try:
            self._draw_all()
        except NoMatches:
            pass  # told while the app closes: its widgets are gone, and nobody is looking

    def _draw_all(self) -> None:
        snap = self.snap
        if snap is None:
            return
        obs = snap.view
        if obs is not None:
            line = snap.away or status_line(obs, snap.names)
            self.query_one("#status-text", Static).update(line)
            self.query_one(Track).show(obs)
            self.query_one(Players).show(obs, snap.names)
        self.query_one("#chat", Input).set_class(snap.chat, "-open")
        self._draw_log(snap)
        self._draw_choice()
        self._draw_keys()
        # The latest move in view, once the new lines are wrapped and the panel below has its height.
        self.call_after_refresh(self.query_one(RichLog).scroll_end, animate=False)

    def _show_cells(self, cells: frozenset[int]) -> None:
        """Scroll a cathedral taller than its room so that the lit cells are in view."""
        cathedral = self.query_one(Cathedral)
        lines = sorted(cathedral.offset_of(c)[1] for c in cells)
        self.query_one("#cathedral-view", VerticalScroll).scroll_to_region(
            Region(0, lines[0], cathedral.size.width, lines[-1] - lines[0] + 1), animate=False)

    def _draw_keys(self) -> None:
        """The keys, always in view (a footer would hide the one-letter keys while the box has focus)."""
        keys = [("q", "leave")]
        if self.player.undo and self.snap is not None and self.snap.can_undo:
            keys.append(("u", "undo"))
        keys += [("s", "scorings"), ("l", "log")]
        if self.snap is not None and self.snap.chat:
            keys += [("t", "chat"), ("m", "unmute" if self.muted else "mute")]
        keys.append(("?", "help"))
        if self.snap is not None and self.snap.deciding:
            keys += [("Enter", "play"), ("Esc", "start over")]
        if self.snap is not None and self.snap.again:
            keys = [("r", "play again"), ("q", "leave")] + keys[1:]
        width = self.size.width
        for gap in ("  ", " ", ""):  # closer together rather than cut at the edge (80 columns)
            line = Text()
            for k, what in keys:
                line.append(f" {k} ", style="bold reverse").append(f" {what}{gap}")
            if line.cell_len <= width:
                break
        self.query_one("#keys", Static).update(line)

    def on_resize(self, event: events.Resize) -> None:
        try:
            self._draw_keys()
        except NoMatches:
            pass  # not composed yet

    def _draw_log(self, snap: Snapshot) -> None:
        log = self.query_one(RichLog)
        shown = self._shown
        if snap.entries[: len(shown)] != shown:  # a take-back: the log is told again from the start
            log.clear()
            shown = ()
        turn = shown[-1].turn if shown else -1
        for e in snap.entries[len(shown):]:
            if self.muted and e.kind == "chat" and not e.text.startswith("You: "):
                continue
            if e.turn != turn and e.turn > 0:
                log.write(Text(f"-- turn {e.turn}", style="dim"))
                turn = e.turn
            log.write(Text(("  " if e.kind == "detail" else "") + e.text, style=LOG_STYLE.get(e.kind, "")))
        self._shown = snap.entries

    def _draw_choice(self) -> None:
        """The highlights, the list of actions and the preview, for what the box holds now."""
        snap = self.snap
        if snap is None:
            return
        obs = snap.view
        prefix = self._prefix() if snap.deciding else ""
        legal = snap.legal
        cells = next_cells(legal, prefix) if snap.deciding else {}
        chosen = {parse_cell(m.group(0)) for m in re.finditer(r"[a-e][0-9]+", prefix.partition(":")[2] or prefix)}
        self.query_one(Cathedral).show(obs, frozenset(cells), frozenset(chosen))
        if cells:
            self.call_after_refresh(self._show_cells, frozenset(cells))
        for k in (1, 2, 3):
            picked = prefix[:1] if prefix[:2] in (f"V{k}", f"O{k}") else ""
            usable = (any(t.startswith(f"O{k}:") for t in legal), any(t.startswith(f"V{k}:") for t in legal))
            self.query_one(f"#slot{k}", MarketSlot).show(obs, picked, usable)
        decision = self.query_one("#decision", Static)
        notes = self.query_one("#notes", Static)
        choices = self.query_one("#choices", OptionList)
        if obs is None:
            return
        if snap.again:
            decision.update(Text(f"{snap.result}  {snap.again} Another game? r offers one (or accepts the "
                                 "offer), q leaves.", style="bold"))
        elif snap.result:
            decision.update(Text(snap.result + ("  (q leaves; s: scorings; l: log)"
                                                if self.finished else ""), style="bold"))
        elif snap.deciding:
            decision.update(decision_line(obs, snap.names))
        else:
            decision.update(Text(snap.waiting or "", style="dim"))
        self.query_one("#notation", NotationInput).placeholder = self._placeholder(snap)
        notes.update(Text("\n".join(snap.notes), style="bold reverse") if snap.notes else "")
        notes.display = bool(snap.notes)
        browsing = self._browse_from is not None and prefix == self._browsed_to
        cands = list(self._reading(self._browse_from if browsing else None).candidates)
        choices.clear_options()
        choices.add_options([Option(self._label(obs, snap, t), id=t) for t in cands[:MAX_CHOICES]])
        if prefix in legal:
            choices.highlighted = cands.index(prefix)
        self.query_one("#preview", Static).update(self._preview(snap, prefix, cells, cands))

    def _placeholder(self, snap: Snapshot) -> str:
        """What the empty box says: how to choose now, or that there is nothing to choose."""
        if snap.result or (snap.view is not None and snap.view.over):
            # q leaves once the game's thread is done; until then (a network game's last messages,
            # the question of another game on its way) it asks whether to stop, as during a game.
            return "the game is over: " + ("q leaves, " if self.finished else "") + "s shows the scorings, l the log"
        if not snap.deciding:
            return "nothing to choose now (? help)"
        if _from_the_market(snap.legal):
            return "click a market space, or type notation (? help)"
        return "pick from the list below, or type notation (? help)"

    def _label(self, obs: Any, snap: Snapshot, text: str) -> Text:
        label = Text(f"{text:<9} ", style="bold")
        label.append(option_words(obs, text, snap.names), style="dim")
        label.no_wrap, label.overflow = True, "ellipsis"
        return label

    def _preview(self, snap: Snapshot, prefix: str, cells: dict[int, str], cands: list[str]) -> Text:
        obs = snap.view
        if snap.result:  # under the result, the figures behind it (a claim on time's), if any
            after = [e.kind for e in snap.entries].index("result") + 1
            return Text("\n".join(e.text for e in snap.entries[after:] if e.kind == "detail"), style="dim")
        if obs is None or not snap.deciding:
            return Text("")
        lines: list[tuple[str, str]] = []
        if prefix in snap.legal:
            said = preview(obs, parse_action(prefix), snap.names, self.player.manifest)
            lines += [(said[0], "bold"), *((s, "bold red" if s.startswith("Taking V") else "") for s in said[1:])]
            lines.append(("Enter (or Confirm, or the same cell again) plays it; Esc starts over.", "dim"))
            return Text("\n").join(Text(t, style=s) for t, s in lines)
        if not cands:
            return Text(f"No legal action starts with {prefix!r}: Esc starts over (? for help).", style="red")
        warning = pairing_warning(obs, prefix)
        if warning:
            lines.append((warning, "bold red"))
        if cells:
            lines.append((f"Pick a highlighted cell ({' '.join(sorted(_name(c) for c in cells))}), or type it.", ""))
        elif not prefix and _from_the_market(snap.legal):
            lines.append(("Your turn: click a market space (V1-V3 places that vault, O1-O3 carries out that "
                          "order), then a highlighted cell. ? explains the rules.", ""))
        else:
            lines.append(("Choose one of the actions listed below (Up/Down and Enter, or a click).", ""))
        m = re.match(r"O([1-3])", prefix)
        face = obs.orders[int(m.group(1)) - 1] if m else None
        if face is not None:  # last: what the panel cuts first when the terminal is short ('?' has it too)
            lines.append((rules_text(face.order.value), "dim"))
        return Text("\n").join(Text(t, style=s) for t, s in lines)

    # --- choosing ------------------------------------------------------------------------------

    def on_input_changed(self, message: Input.Changed) -> None:
        if message.input.id == "chat":
            return
        if message.value != self._browsed_to:  # typed: the list follows the box again
            self._browse_from = None
        self._draw_choice()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id == "chat":
            self._send_chat(message.value)
            return
        self.action_confirm()

    def on_button_pressed(self, message: Button.Pressed) -> None:
        if message.button.id == "confirm":
            self.action_confirm()

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        text = message.option.id or ""
        if text == self._prefix():
            self.action_confirm()
        else:
            self._set(text)

    def on_cathedral_cell_clicked(self, message: Cathedral.CellClicked) -> None:
        snap = self.snap
        if snap is None or not snap.deciding:
            return
        prefix = self._prefix()
        cells = next_cells(snap.legal, prefix)
        if message.cell in cells:
            self._set(cells[message.cell])
        elif prefix in snap.legal and re.search(_name(message.cell) + r"(?![0-9])", prefix):
            self.action_confirm()  # the same cell again: play it
        else:
            self.bell()
            hint = ("pick a market space first (V1-V3 or O1-O3), then one of its lit cells" if not prefix else
                    f"{_name(message.cell)} is not a target of {prefix}: pick a lit cell, or Esc to start over")
            self.query_one("#preview", Static).update(Text(hint[0].upper() + hint[1:] + ".", style="red"))

    def on_market_slot_space_clicked(self, message: MarketSlot.SpaceClicked) -> None:
        snap = self.snap
        if snap is None or not snap.deciding:
            return
        head = f"{message.kind}{message.space}"
        if self._prefix().startswith(head):
            self._set("")
        elif not any(t.startswith(head + ":") for t in snap.legal):
            self.query_one("#preview", Static).update(Text(
                f"{head} cannot be taken now" + (": an order needs a target it can act on (its highlighted cells)"
                                                 if message.kind == "O" else "") + ".", style="red"))
        else:
            self._set(head + ":")

    def _set(self, text: str) -> None:
        box = self.query_one("#notation", NotationInput)
        box.value = text
        box.cursor_position = len(text)
        box.focus()

    def action_move_choice(self, by: int) -> None:
        choices = self.query_one("#choices", OptionList)
        if choices.option_count:
            now = choices.highlighted
            choices.highlighted = 0 if now is None else max(0, min(choices.option_count - 1, now + by))
            option = choices.get_option_at_index(choices.highlighted)
            # The list stays the one being browsed: filtered by what was typed before the
            # arrows, not by the action an arrow put in the box (that left a list of one).
            if self._browse_from is None:
                self._browse_from = self._prefix()
            self._browsed_to = option.id or ""
            self._set(self._browsed_to)

    def action_confirm(self) -> None:
        snap = self.snap
        if snap is None or not snap.deciding:
            return
        prefix = self._prefix()
        if prefix in snap.legal:
            self.snap = Snapshot(snap.names, snap.seat, snap.view, snap.entries, snap.scorings)  # answered
            self._set("")
            self.player.answer(parse_action(prefix))
            return
        cands = self._reading().candidates
        if len(cands) == 1:
            self._set(cands[0])
        else:
            choices = self.query_one("#choices", OptionList)
            if choices.highlighted is not None and choices.option_count:
                self._set(choices.get_option_at_index(choices.highlighted).id or "")

    def action_clear(self) -> None:
        self._set("")

    # --- chat ----------------------------------------------------------------------------------

    def action_chat(self) -> None:
        if self.snap is None or not self.snap.chat:
            self.notify("Chat is for network games whose other side takes it.", timeout=5)
            return
        self.query_one("#chat", Input).focus()

    def action_again(self) -> None:
        if self.snap is None or not self.snap.again:
            return
        self.player.answer_again(True)

    def action_unwatch(self) -> None:
        def send() -> None:
            why = self.player.send_watchers_away()  # off the app's thread: it waits for the game's
            self.call_from_thread(self.notify, f"Not done: {why}" if why is not None else
                                  "Watching is closed for this session.", timeout=6)

        self.run_worker(send, thread=True, group="watching")

    def action_mute(self) -> None:
        if self.snap is None or not self.snap.chat:
            return
        self.muted = not self.muted
        self.notify("The other player's chat is hidden ('m' shows it again; the replay keeps it)." if self.muted
                    else "The other player's chat is shown again.", timeout=5)
        self._draw_keys()

    def _send_chat(self, typed: str) -> None:
        box = self.query_one("#chat", Input)
        box.value = ""
        self.query_one("#notation", NotationInput).focus()
        if not typed.strip():
            return

        def send() -> None:
            why = self.player.say(typed)  # off the app's thread: it waits for the game's
            if why is not None:
                self.call_from_thread(self.notify, f"Not sent: {why}", severity="warning", timeout=8)

        self.run_worker(send, thread=True, group="chat")

    # --- the other keys ----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "undo":
            if not self.player.undo:
                return False  # only offered in a local game against a bot
            return True if self.snap is not None and self.snap.can_undo else None
        return True

    def action_undo(self) -> None:
        snap = self.snap
        if snap is not None and snap.can_undo:
            self.snap = Snapshot(snap.names, snap.seat, snap.view, snap.entries, snap.scorings)
            self.player.answer(TakeBack(1))

    def _open_scorings(self) -> None:
        snap = self.snap
        scorings = snap.scorings if snap is not None else ()
        footer = snap.result if snap is not None else ""
        if isinstance(self.screen, ScoringScreen):
            self.screen.dismiss(None)
        self.push_screen(ScoringScreen(scorings, -1, footer))

    def action_scorings(self) -> None:
        self._open_scorings()

    def action_log(self) -> None:
        snap = self.snap
        text = Text()
        turn = -1
        for e in snap.entries if snap is not None else ():
            if e.turn != turn and e.turn > 0:
                text.append(f"-- turn {e.turn}\n", style="dim")
                turn = e.turn
            text.append(("  " if e.kind == "detail" else "") + e.text + "\n", style=LOG_STYLE.get(e.kind, ""))
        self.push_screen(TextScreen(text or Text("Nothing in the log yet.")))

    def action_help(self) -> None:
        text = Text(KEYS + "\n\n", style="")
        text.append(rules_text("turn") + "\n\n" + rules_text("scoring") + "\n\n" + rules_text("ranks") + "\n\n")
        text.append(NOTATION + "\n")
        text.append_text(colour_legend())
        self.push_screen(TextScreen(text))

    def action_leave(self) -> None:
        if self.finished:
            self.exit()
            return
        if self.snap is not None and self.snap.again:  # no other game: the session ends, and the app
            self.leaving = True
            self.player.answer_again(False)
            return
        if isinstance(self.screen, Question):
            self.screen.dismiss(True)  # asked twice (a second Ctrl-C or Ctrl-D): yes, as at the prompt
            return
        snap = self.snap
        deciding = snap is not None and snap.deciding
        if self.player.watching:
            question = "Stop watching? The game goes on without you."
        elif self.player.network and not deciding:
            question = ("Stop now? The game stops here without a forfeit: 'basilica resume' on both sides goes "
                        "on with it later.")
        else:
            question = "Leave the game? Leaving is a forfeit: you lose this game."
        self.push_screen(Question(question), self._left)

    def _left(self, yes: bool | None) -> None:
        if not yes:
            return
        self.leaving = True
        snap = self.snap
        if snap is not None and snap.deciding:
            self.snap = Snapshot(snap.names, snap.seat, snap.view, snap.entries, snap.scorings)
            self.player.answer(Resign("left the game"))
        elif self.player.network:
            self.exit()  # the caller stops the session: no forfeit, the game can be resumed
        else:
            self.player.resign_pending = True
            self.query_one("#decision", Static).update(Text("Leaving at your next decision...", style="bold"))


def _from_the_market(legal: tuple[str, ...]) -> bool:
    """Whether some legal action takes a market space (V1-V3, O1-O3): a click there starts it."""
    return any(t[:1] in "VO" and t[1:2].isdigit() for t in legal)


def _name(cell: int) -> str:
    return format_cell(cell)
