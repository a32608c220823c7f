"""The game as one terminal screen (rich), drawn from a player's observation.

The line client prints these lines; the full-screen app builds its widgets from the
same pieces (a cell, an order or vault face, the track, the status and decision
lines), and render.py turns them into plain text for replays and logs.

Everything here is built from an :class:`Observation`, which holds public
facts only, so the screen cannot show the stack order or a crown hidden under
an order face.  The layout fits 80 columns: the cathedral on the left, the
market and the track on the right, the players below.  Colour helps but is
never needed: every colour is also a letter (``NO_COLOR`` is honoured by rich).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from .engine import (COLOR_LETTER, COLUMNS, CONFUSE_MOVE, CONFUSE_PAY, JESTER_COLORS, PAID, RANK_LETTER, WIDTH,
                     Observation, OrderFace, VaultFace, colors_of, describe_pending)

WIDTH_COLS = 80
CELL = 9  # characters per cathedral cell
LEFT = 4 + CELL * WIDTH  # the cathedral block
ORDER_COL = 18  # "O1 SCAFFOLD $ Y/B^": the market's order column, its vault column beside it
COLOR_STYLE = {"Y": "bold yellow", "B": "bold blue", "R": "bold red", "G": "bold green"}
PLAYER_STYLE = ("bold magenta", "bold cyan")
SHORT_ORDER = {
    "PROMOTE": "PROMOTE", "MOVE": "MOVE", "RECRUIT": "RECRUIT", "CONFUSE": "CONFUSE",
    "STAINED_GLASS": "GLASS", "SCAFFOLDING": "SCAFFOLD", "DISASTER": "DISASTER", "ALTAR": "ALTAR",
}


def colors_text(mask: int) -> Text:
    t = Text()
    for i, c in enumerate(colors_of(mask)):
        if i:
            t.append("/")
        letter = COLOR_LETTER[c]
        t.append(letter, style=COLOR_STYLE[letter])
    return t


def cell_text(obs: Observation, c: int, faces: dict[int, VaultFace], builders: dict[int, tuple[int, int]]) -> Text:
    if c in obs.scaffold:
        return Text("###", style="dim")
    face = faces.get(c)
    if face is None:
        return Text(".", style="dim")
    t = colors_text(face.colors)
    if face.crown:
        t.append("^", style="bold")
    b = builders.get(c)
    if b is not None:
        t.append(" ")
        t.append(f"{b[0] + 1}{RANK_LETTER.get(b[1], '')}", style=PLAYER_STYLE[b[0]])
    if c in obs.glass:
        t.append("*", style="bold")
    if c in obs.altars:
        t.append("+", style="bold")
    return t


def cathedral_lines(obs: Observation, max_rows: int = 12) -> list[Text]:
    """Row 1 (next to the board) at the bottom, one empty row on top to build on."""
    faces = {c: f for c, f in obs.vaults}
    builders = {c: (p, r) for c, p, r in obs.builders}
    occupied = list(faces) + list(obs.scaffold)
    top = (max(occupied) // WIDTH + 2) if occupied else 1
    bottom = max(1, top - max_rows + 1)  # a very tall cathedral shows its top rows
    lines: list[Text] = []
    for row in range(top, bottom - 1, -1):
        line = Text(f"{row:>3} ")
        for col in range(WIDTH):
            cell = cell_text(obs, (row - 1) * WIDTH + col, faces, builders)
            cell.pad_right(CELL - cell.cell_len)
            line.append_text(cell)
        line.rstrip()
        lines.append(line)
    lines.append(Text("    " + "".join(c.ljust(CELL) for c in COLUMNS).rstrip(), style="dim"))
    lines.append(Text("    " + "=" * (CELL * WIDTH - 9) + " board", style="dim"))
    return lines


def order_face_text(face: OrderFace | None) -> Text:
    if face is None:
        return Text("(empty)", style="dim")
    t = Text(SHORT_ORDER.get(face.order.value, face.order.value), style="bold")
    t.append(" $" if face.paid else "  ")
    t.append(" ")
    t.append_text(colors_text(face.colors))
    if face.crown:
        t.append("^")
    return t


def vault_face_text(face: VaultFace | None) -> Text:
    if face is None:
        return Text("empty", style="dim")  # beside the widest order, within the 80 columns
    t = colors_text(face.colors)
    if face.crown:
        t.append("^", style="bold")
    return t


def track_text(obs: Observation, pawn_name: str) -> Text:
    """The king/queen track: where the pawn stands and the crown spaces (``C``) ahead."""
    spaces = obs.crown_spaces
    last = max(spaces) if spaces else obs.pawn
    line = Text(f"{pawn_name:<6}", style="bold")
    if last <= 40:
        for i in range(0, last + 1):
            if i == obs.pawn:
                line.append("@", style="bold reverse")
            elif i in spaces:
                line.append("C" if i > obs.pawn else "c", style="bold yellow" if i > obs.pawn else "dim")
            else:
                line.append("-" if i > obs.pawn else ".", style="dim")
        line.append(" ")
    line.append(f"at {obs.pawn}, scorings done {obs.scorings} of {len(spaces)}")
    ahead = [s for s in spaces if s > obs.pawn]
    if ahead and not obs.over:
        line.append(f", next at {ahead[0]}")
    line.truncate(WIDTH_COLS)
    return line


def market_lines(obs: Observation) -> list[Text]:
    """One line per market slot k: the order on O*k* beside the vault on V*k*, because taking
    V*k* turns the order of O*k* over into the new V*k* (and refills O*k*): they go together."""
    lines = [Text("market", style="underline").append(": taking Vk uses Ok", style="dim")]
    for k in range(3):
        t = Text(f"O{k + 1} ")
        t.append_text(order_face_text(obs.orders[k]))
        t.pad_right(max(0, ORDER_COL - t.cell_len))
        t.append(f" V{k + 1} ")
        t.append_text(vault_face_text(obs.market[k]))
        lines.append(t)
    if obs.in_hand is not None:
        space, face = obs.in_hand
        t = Text(f"in hand (from O{space}): ")
        t.append_text(order_face_text(face))
        lines.append(t)
    top = obs.stack_top
    st = Text(f"stack {obs.stack_size}")
    if top is not None:
        st.append(" top ")
        st.append_text(order_face_text(top))
    lines.append(st)
    lines.append(Text(f"discard {len(obs.discard)}" + (f"  out {obs.out_count}" if obs.out_count else "")
                      + ("  reshuffled" if obs.reshuffles else "")))
    if obs.festum:
        lines.append(Text(f"altars in supply {obs.altar_supply}"))
    return lines


def player_lines(obs: Observation, names: Sequence[str], you: bool = True) -> list[Text]:
    out = []
    for p in (0, 1):
        t = Text(f"P{p + 1} ")
        t.append(f"{names[p][:16]:<16}", style=PLAYER_STYLE[p])
        t.append(" (you)" if you and p == obs.player else "      ")
        t.append(f"  score {obs.scores[p]:>3}  coins {obs.coins[p]}  builders {obs.supply[p]}  "
                 f"rank tokens {obs.tokens[p]}")
        out.append(t)
    return out


def status_line(obs: Observation, names: Sequence[str], you: bool = True) -> Text:
    t = Text("Basilica", style="bold")
    t.append(f" · {obs.ruleset}{' + festum' if obs.festum else ''} · turn {obs.turn} · ")
    if obs.over:
        t.append("game over", style="bold")
        return t
    if you and obs.active == obs.player:
        t.append("your turn", style=PLAYER_STYLE[obs.active])
    else:
        t.append(f"{names[obs.active][:16]}'s turn", style=PLAYER_STYLE[obs.active])
    t.append(f", action {min(obs.actions_taken + 1, 3)} of 3")
    return t


def pending_words(obs: Observation, names: Sequence[str]) -> str:
    """What is being decided, said to the player whose screen this is."""
    pend = obs.pending
    assert pend is not None
    mine = pend.player == obs.player
    active = "you" if obs.active == obs.player else names[obs.active]
    order = pend.order.value.replace("_", " ") if pend.order is not None else "order"
    if pend.kind == PAID:
        return (f"pay one coin to {active} for the paid {order}? (pass, or $cell"
                + ("=rank" if order == "PROMOTE" else "") + ")")
    if pend.kind == CONFUSE_PAY:
        return f"pay one coin to {active} to choose the CONFUSE move yourself? ($ or pass)"
    if pend.kind == CONFUSE_MOVE:
        if pend.paid:  # the opponent of the player on turn paid: it moves one of its own builders
            return "which of your builders the CONFUSE moves, and where (c2-c3)" if mine else \
                f"which of {names[pend.player]}'s builders the CONFUSE moves, and where"
        victim = "your" if obs.player != pend.player else f"{names[1 - pend.player]}'s"
        return f"which of {victim} builders the CONFUSE moves, and where (c2-c3)" if mine else \
            "which of your builders the CONFUSE moves, and where"
    if pend.kind == JESTER_COLORS:
        return ("the extra colour of each of your Jesters for this scoring (J:cell=colour)" if mine
                else "the extra colour of each of their Jesters")
    return describe_pending(pend)


def decision_line(obs: Observation, names: Sequence[str]) -> Text:
    if obs.over or obs.pending is None:
        return Text("")
    p = obs.pending.player
    who = "You" if p == obs.player else names[p]
    t = Text(f"{who} to decide: ", style="bold")
    t.append(pending_words(obs, names))
    return t


def side_by_side(left: list[Text], right: list[Text], left_width: int = LEFT + 1) -> list[Text]:
    n = max(len(left), len(right))
    out = []
    for i in range(n):
        line = left[i].copy() if i < len(left) else Text("")
        if i < len(right):
            line.pad_right(max(0, left_width - line.cell_len))
            line.append("| ", style="dim")
            line.append_text(right[i])
        line.truncate(WIDTH_COLS)
        out.append(line)
    return out


def board_lines(obs: Observation, names: Sequence[str], max_rows: int = 10, you: bool = True) -> list[Text]:
    """Status, cathedral beside the market, the track and the two players
    (``you=False`` for a spectator: the public facts are the same in either view)."""
    lines = [status_line(obs, names, you)]
    lines.extend(side_by_side(cathedral_lines(obs, max_rows), market_lines(obs)))
    lines.append(track_text(obs, "queen" if obs.ruleset == "portal2022" else "king"))
    lines.extend(player_lines(obs, names, you))
    return lines
