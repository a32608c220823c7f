"""The app's pieces: the cathedral, the market (each Ok above its Vk), the track, the players,
the clocks, and the screens that sit on top (a scoring, a question, the help).

Every piece draws from an :class:`Observation` (public facts only), through
the same text helpers as the line client (drawing.py), so the two agree
on letters and colours and colour is never needed to read the board.
Their sizes and frames are in app.tcss with the rest of the app's styles.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Input, RichLog, Static

from ..clock import ClockView, format_seconds
from ..engine import COLUMNS, WIDTH, Observation, format_cell
from ..drawing import CELL, PLAYER_STYLE, SHORT_ORDER, colors_text, track_text
from ..drawing import cell_text as _cell, order_face_text as _order_face, vault_face_text as _vault_face
from .model import Scoring

PICKED = "bold black on bright_green"  # a legal target; the cell's name is shown too, so colour is not needed
CHOSEN = "bold reverse"


class Cathedral(Widget):
    """The cathedral, row 1 at the bottom and an empty row on top; legal target cells are marked."""

    class CellClicked(Message):
        def __init__(self, cell: int) -> None:
            super().__init__()
            self.cell = cell

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.obs: Observation | None = None
        self.targets: frozenset[int] = frozenset()
        self.chosen: frozenset[int] = frozenset()

    def show(self, obs: Observation | None, targets: frozenset[int] = frozenset(),
             chosen: frozenset[int] = frozenset()) -> None:
        self.obs, self.targets, self.chosen = obs, targets, chosen
        self.refresh(layout=True)

    def rows(self) -> tuple[int, int]:
        """The top and bottom rows drawn: the tiles and the empty row above them, where the
        cathedral grows (lighting up a target there adds no row: the board keeps its height)."""
        obs = self.obs
        if obs is None:
            return 1, 1
        occupied = [c for c, _ in obs.vaults] + list(obs.scaffold)
        top = max(c // WIDTH + 2 for c in occupied) if occupied else 1
        return max([top] + [c // WIDTH + 1 for c in self.targets]), 1

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        top, bottom = self.rows()
        return top - bottom + 2  # the rows and the column letters

    def render(self) -> Text:
        obs = self.obs
        out = Text()
        if obs is None:
            return Text("(the cathedral appears when the game starts)", style="dim")
        faces = {c: f for c, f in obs.vaults}
        builders = {c: (p, r) for c, p, r in obs.builders}
        top, bottom = self.rows()
        for row in range(top, bottom - 1, -1):
            out.append(f"{row:>3} ", style="dim")
            for col in range(WIDTH):
                c = (row - 1) * WIDTH + col
                cell = _cell(obs, c, faces, builders)
                if c in self.targets:
                    cell = Text(f"[{format_cell(c)}]" if cell.plain == "." else f">{cell.plain}", style=PICKED)
                elif c in self.chosen:
                    cell.stylize(CHOSEN)
                cell.truncate(CELL - 1)
                cell.pad_right(CELL - cell.cell_len)
                out.append_text(cell)
            out.append("\n")
        out.append("    " + "".join(c.ljust(CELL) for c in COLUMNS).rstrip(), style="dim")
        return out

    def cell_at(self, x: int, y: int) -> int | None:
        top, bottom = self.rows()
        col = (x - 4) // CELL
        row = top - y
        if x < 4 or not 0 <= col < WIDTH or not bottom <= row <= top:
            return None
        return (row - 1) * WIDTH + col

    def offset_of(self, cell: int) -> tuple[int, int]:
        """Where ``cell`` is drawn (for a click)."""
        top, _ = self.rows()
        return 4 + (cell % WIDTH) * CELL + 1, top - (cell // WIDTH + 1)

    def on_click(self, event: events.Click) -> None:
        cell = self.cell_at(event.x, event.y)
        if cell is not None:
            self.post_message(self.CellClicked(cell))


class MarketSlot(Widget):
    """Market slot k: the order tile on Ok drawn above the vault on Vk, because taking Vk
    turns that order over into the new Vk: they are one column, and go together."""

    class SpaceClicked(Message):
        def __init__(self, kind: str, space: int) -> None:
            super().__init__()
            self.kind, self.space = kind, space

    def __init__(self, k: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.k = k
        self.obs: Observation | None = None
        self.picked = ""  # "O" or "V" when that space is chosen
        self.usable = (False, False)  # whether O and V have a legal action now

    def show(self, obs: Observation | None, picked: str, usable: tuple[bool, bool]) -> None:
        self.obs, self.picked, self.usable = obs, picked, usable
        self.refresh()

    def render(self) -> Text:
        k, obs = self.k, self.obs
        if obs is None:
            return Text(f"O{k}\n\n\nV{k}")
        face = obs.orders[k - 1]
        used = self.picked == "V" and face is not None
        head = Text(f"O{k}", style=CHOSEN if self.picked == "O" else "bold" if self.usable[0] else "dim")
        name = Text("(empty)", style="dim")
        colours = Text("  ")
        if face is not None:
            head.append(" $" if face.paid else "")
            name = Text(SHORT_ORDER.get(face.order.value, face.order.value), style="strike" if used else "bold")
            colours.append_text(colors_text(face.colors)).append("^" if face.crown else "")
        if used:  # taking Vk turns this order over into the new Vk: it will be gone
            colours = Text(f"goes w/ V{k}", style="bold red")
        vault = Text(f"V{k}", style=CHOSEN if self.picked == "V" else "bold" if self.usable[1] else "dim")
        vault.append(" ").append_text(_vault_face(obs.market[k - 1]))
        return Text("\n").join([head, name, colours, vault])

    def on_click(self, event: events.Click) -> None:
        self.post_message(self.SpaceClicked("O" if event.y <= 2 else "V", self.k))


class MoveLog(RichLog):
    """Every move in words; the latest stays in view when the panel below grows or shrinks."""

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self.scroll_end, animate=False)


class Track(Static):
    def show(self, obs: Observation | None) -> None:
        if obs is not None:
            self.update(track_text(obs, "queen" if obs.ruleset == "portal2022" else "king"))


class Players(Static):
    """Both players' supplies: score, coins, builders and rank tokens not yet used."""

    def show(self, obs: Observation | None, names: Sequence[str]) -> None:
        if obs is None:
            return
        out = Text()
        for p in (0, 1):
            out.append(f"P{p + 1} ")
            out.append(names[p][:18], style=PLAYER_STYLE[p])
            out.append(" (you)" if p == obs.player else "")
            out.append(f"  score {obs.scores[p]}\n", style="bold")
            out.append(f"   coins {obs.coins[p]}  builders {obs.supply[p]}  rank tokens {obs.tokens[p]}\n")
        stack = Text(f"stack {obs.stack_size}")
        if obs.stack_top is not None:
            stack.append(" top ").append_text(_order_face(obs.stack_top))
        stack.append(f"  discard {len(obs.discard)}" + ("  reshuffled" if obs.reshuffles else ""))
        if obs.festum:
            stack.append(f"  altars {obs.altar_supply}")
        out.append_text(stack)
        self.update(out)


class Clocks(Static):
    """Both clocks, once the session shows them; the running one counts down here between views."""

    def on_mount(self) -> None:
        self.view: ClockView | None = None
        self.since = 0.0
        self.set_interval(0.5, self.tick)

    def show(self, view: ClockView, at: float) -> None:
        """``view`` as the game showed it at ``at`` (time.monotonic())."""
        self.view, self.since = view, at
        self.tick()

    def tick(self) -> None:
        view = getattr(self, "view", None)
        if view is None:
            return
        out = Text()
        for seat in (0, 1):
            left = view.remaining[seat]
            if view.running == seat:
                left -= time.monotonic() - self.since
            style = PLAYER_STYLE[seat] + (" reverse" if view.running == seat else "")
            out.append(f" {view.names[seat][:12]}{' (you)' if view.me == seat else ''} {format_seconds(left)}"
                       + (" OUT" if view.flagged == seat else "") + " ", style=style)
        self.update(out)


class NotationInput(Input):
    """The notation box; while it is empty, the app's one-letter keys work in it too."""

    KEYS = {"q": "leave", "u": "undo", "s": "scorings", "?": "help", "h": "help", "l": "log", "t": "chat",
            "m": "mute", "r": "again", "w": "unwatch"}

    async def _on_key(self, event: events.Key) -> None:
        if not self.value and event.character in self.KEYS:
            event.stop()
            event.prevent_default()
            await self.app.run_action(self.KEYS[event.character])
            return
        if event.key in ("up", "down"):  # the list of actions below follows the arrows
            event.stop()
            event.prevent_default()
            await self.app.run_action(f"move_choice({-1 if event.key == 'up' else 1})")
            return
        await super()._on_key(event)


def colour_legend() -> Text:
    t = Text("colours: ")
    for mask in (1, 2, 4, 8):
        t.append_text(colors_text(mask)).append(" ")
    return t


class ScoringScreen(ModalScreen[None]):
    """A scoring, area by area: it stays until dismissed; Left/Right show the other scorings."""

    BINDINGS = [Binding("escape,enter,space,s,q", "close", "Close"), Binding("left", "step(-1)", "Earlier"),
                Binding("right", "step(1)", "Later")]

    def __init__(self, scorings: Sequence[Scoring], index: int = -1, footer: str = "") -> None:
        super().__init__()
        self.scorings = list(scorings)
        self.index = index % len(self.scorings) if self.scorings else 0
        self.footer = footer

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(id="scoring-title")
            with VerticalScroll(id="scoring-body"):
                yield Static(id="scoring-text")
            yield Static(id="scoring-keys")

    def on_mount(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if not self.scorings:
            self.query_one("#scoring-title", Static).update(Text("No scoring yet.", style="bold"))
            self.query_one("#scoring-text", Static).update("")
        else:
            s = self.scorings[self.index]
            self.query_one("#scoring-title", Static).update(
                Text(f"{s.lines[0]} (turn {s.turn})", style="bold"))
            self.query_one("#scoring-text", Static).update(Text("\n".join(s.lines[1:])))
        more = "  Left/Right: the other scorings." if len(self.scorings) > 1 else ""
        self.query_one("#scoring-keys", Static).update(
            Text((self.footer + "\n" if self.footer else "") + "Enter or Esc closes; s opens it again." + more,
                 style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)

    def action_step(self, by: int) -> None:
        if self.scorings:
            self.index = max(0, min(len(self.scorings) - 1, self.index + by))
            self._draw()


class Question(ModalScreen[bool]):
    """A yes/no question (leaving the game); ``again`` keys answer yes when pressed a second time."""

    BINDINGS = [Binding("y", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No"),
                Binding("ctrl+c,ctrl+d", "answer(True)", "Yes", priority=True, show=False)]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        yield Static(Text(self.text + "\n\n[y] yes   [n] no", style="bold"))

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)


def hanging_indent(line: str) -> int:
    """Where a wrapped line's continuation starts: under the description of a table line
    ("  Esc      start over", "Notation:  V2:b3 ..."), else four columns in from the line."""
    lead = len(line) - len(line.lstrip(" "))
    gap = re.search(r"\S {2,}(?=\S)", line[lead:])
    return lead + gap.end() if gap is not None else lead + 4


def wrap_hanging(text: Text, width: int) -> list[Text]:
    """``text`` in lines of at most ``width`` cells, broken between words, every continuation
    indented by :func:`hanging_indent` (Rich wraps a continuation to column 0)."""
    out: list[Text] = []
    for line in text.split("\n", allow_blank=True):
        plain = line.plain
        indent = hanging_indent(plain)
        if indent > width // 2:
            indent = min(4, width // 4)
        start, first = 0, True
        while True:
            room = width - (0 if first else indent)
            rest = plain[start:]
            if len(rest) <= room:
                piece = line[start:]
            else:
                cut = rest.rfind(" ", 1, room + 1)
                cut = cut if cut > 0 else room  # one word longer than the line: cut it
                piece = line[start:start + cut]
            if first:
                out.append(piece)
            else:
                out.append(Text(" " * indent) + piece)
            start += len(piece.plain)
            while start < len(plain) and plain[start] == " ":
                start += 1
            if start >= len(plain):
                break
            first = False
    return out


class Page(Widget):
    """A text to read, wrapped to the width it is given, continuation lines under their text."""

    def __init__(self, text: Text, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.text = text

    def get_content_height(self, container: object, viewport: object, width: int) -> int:
        return len(wrap_hanging(self.text, max(1, width)))

    def render(self) -> Text:
        return Text("\n").join(wrap_hanging(self.text, max(1, self.size.width)))


class TextScreen(ModalScreen[None]):
    """Help, the rules in short, or the whole log: a page to read and close."""

    BINDINGS = [Binding("escape,enter,q,question_mark,h,l", "close", "Close")]
    CLOSING = "Esc (or Enter) closes this; Up/Down and PgUp/PgDn scroll."

    def __init__(self, text: Text) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            with VerticalScroll():
                yield Page(self.text)
            yield Static(Text(self.CLOSING, style="dim"), id="text-keys")

    def action_close(self) -> None:
        self.dismiss(None)
