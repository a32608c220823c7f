"""Every move told in words, from public facts only.

A description is made from the action, the view of the player who reads it
just before the move (what was on offer, whose builder stood where) and the
view just after (the tile now on a cell).  Views are observations, so a
description can never reveal anything hidden.
"""

from __future__ import annotations

from collections.abc import Sequence

from .engine import (AFTER_REDEAL, COLOR_NAME, CONFUSE_MOVE, CONFUSE_PAY, PAID, RANK_NAME, SECOND_ALTAR,
                     SECOND_SCAFFOLD, Action, Observation, Order, OrderFace, ScoringResult, color_count, colors_of,
                     format_cell)
from .engine import actions as A
from .schemes import COMMIT_REVEAL, HIDDEN_DEAL

ORDER_TITLE = {
    Order.PROMOTE: "PROMOTE",
    Order.MOVE: "MOVE",
    Order.RECRUIT: "RECRUIT",
    Order.CONFUSE: "CONFUSE",
    Order.STAINED_GLASS: "STAINED GLASS",
    Order.SCAFFOLDING: "SCAFFOLDING",
    Order.DISASTER: "DISASTER",
    Order.ALTAR: "ALTAR",
}


# What an order did, in words ({cell}, {dest} and {rank} from the action).
ORDER_SENTENCE = {
    Order.PROMOTE: "{their} builder on {cell} becomes {rank}.",
    Order.MOVE: "moved {their} builder from {cell} to {dest}.",
    Order.RECRUIT: "a builder from {their} supply onto {cell}.",
    Order.CONFUSE: "sent {their} own builder on {cell} home; a builder of the other side will be moved.",
    Order.STAINED_GLASS: "stained glass on {cell}.",
    Order.SCAFFOLDING: "scaffolding on {cell}.",
    Order.DISASTER: "the vault on {cell} was destroyed and discarded.",
    Order.ALTAR: "an altar on {cell}.",
}


def rank_name(rank: int) -> str:
    return {1: "Architect", 2: "Master Mason", 3: "Strongman", 4: "Jester"}.get(rank, RANK_NAME.get(rank, "builder"))


def vault_words(colors: int, crown: bool) -> str:
    """``a red vault``, ``a wild yellow/blue vault with a crown``."""
    names = "/".join(COLOR_NAME[c] for c in colors_of(colors))
    return f"a {'wild ' if color_count(colors) > 1 else ''}{names} vault{' with a crown' if crown else ''}"


def _placed_vault(before: Observation | None, after: Observation | None, action: Action) -> str:
    # The face was on offer before the move (after it, a scoring may already have cleared the cell).
    face = before.market[action.space - 1] if before is not None else None
    if face is None and after is not None:
        face = next((f for c, f in after.vaults if c == action.cell), None)
    return vault_words(face.colors, face.crown) if face is not None else "a vault"


def _builder_owner(view: Observation | None, cell: int) -> int | None:
    if view is not None:
        for c, p, _ in view.builders:
            if c == cell:
                return p
    return None


def describe_action(
    action: Action, actor: int, before: Observation | None, after: Observation | None, names: Sequence[str],
    reader: int | None = None,
) -> str:
    """One sentence: what player ``actor`` (0 or 1) did, told to player ``reader`` ("you"), or
    to a spectator when ``reader`` is None.  ``before``/``after`` are public views around the move."""
    k = action.kind
    who = "You" if actor == reader else names[actor]
    their = "your" if actor == reader else "their"
    you_pay = before is not None and reader is not None and before.active == reader
    cell = format_cell(action.cell) if action.cell >= 0 else ""
    dest = format_cell(action.dest) if action.dest >= 0 else ""
    pending = before.pending.kind if before is not None and before.pending is not None else ""
    if k == A.VAULT:
        again = " (after the redeal)" if pending == AFTER_REDEAL else ""
        text = f"{who} placed {_placed_vault(before, after, action)} from V{action.space} on {cell}{again}"
        if before is not None and after is not None and after.pawn != before.pawn:
            pawn = "queen" if after.ruleset == "portal2022" else "king"
            text += f"; the {pawn} moves to space {after.pawn}"
        slid = before.orders[action.space - 1] if before is not None and pending != AFTER_REDEAL else None
        if isinstance(slid, OrderFace) and after is not None and not after.over:
            # The market refills a vault space from the order space above it (RULES.md §4).
            text += (f"; O{action.space}'s {ORDER_TITLE.get(slid.order, 'order')} turned over into the new "
                     f"V{action.space} and O{action.space} was refilled from the stack")
        return text + "."
    if k == A.REDEAL:
        return f"{who} found that no vault of V1-V3 fits: the three were discarded and new ones dealt."
    if k == A.BUILDER:
        return f"{who} put a builder on {cell}, the vault just placed."
    if k == A.ORDER:
        face = before.orders[action.space - 1] if before is not None else None
        order = face.order if isinstance(face, OrderFace) else None
        title = ORDER_TITLE.get(order, "an order") if order is not None else "an order"
        head = f"{who} took {title} from O{action.space}"
        sentence = ORDER_SENTENCE.get(order) if order is not None else None
        if sentence is not None:
            return f"{head}: " + sentence.format(cell=cell, dest=dest, rank=rank_name(action.rank), their=their)
        return f"{head} with target {A.format_action(action)[3:]}."
    if k == A.PLACE:
        what = "scaffolding" if pending == SECOND_SCAFFOLD else "altar" if pending == SECOND_ALTAR else "tile"
        return f"{who} put the second {what} on {cell}."
    if k == A.SHIFT:
        owner = _builder_owner(before, action.cell)
        whose = f"{names[owner]}'s" if owner is not None else "a"
        if owner is not None and owner == reader:
            whose = "your"
        paid = pending == CONFUSE_MOVE and before is not None and before.pending is not None and before.pending.paid
        how = f", a move {'you' if actor == reader else 'they'} paid to choose" if paid else ""
        return f"{who} moved {whose} builder from {cell} to {dest} (CONFUSE{how})."
    active = "you" if you_pay else names[before.active] if before is not None else "the player on turn"
    if k == A.PAY:
        if action.cell < 0:
            return f"{who} paid {active} a coin to choose the CONFUSE move."
        if action.rank:
            return (f"{who} paid {active} a coin for the paid PROMOTE: {their} builder on {cell} becomes "
                    f"{rank_name(action.rank)}.")
        return f"{who} paid {active} a coin for the paid RECRUIT: a builder onto {cell}."
    if k == A.DECLINE:
        if pending == CONFUSE_PAY:
            return f"{who} declined to pay to choose the CONFUSE move."
        order = before.pending.order if before is not None and before.pending is not None else None
        return f"{who} declined to pay for the paid {ORDER_TITLE.get(order, 'order') if order else 'order'}."
    if k == A.JESTER:
        pairs = ", ".join(f"{format_cell(c)} adds {COLOR_NAME[col]}" for c, col in action.colors)
        return f"{who} chose {their} Jester colours: {pairs}."
    if k == A.NONE:
        return f"{who} had no legal action; the turn ends."
    return f"{who}: {A.format_action(action)}"


def describe_answer(action: Action, actor: int, before: Observation | None, names: Sequence[str]) -> str | None:
    """A decision the player not on turn makes about the paid option of the other's order (D27, D20),
    told as an answer to that order: ``answers bob's RECRUIT: $e1 (pays a coin: a builder of theirs
    onto e1)``; None for any other decision."""
    pending = before.pending if before is not None else None
    if before is None or pending is None or actor == before.active:
        return None
    cell = format_cell(action.cell) if action.cell >= 0 else ""
    if pending.kind == PAID and pending.order is not None:
        order = pending.order
        if action.kind != A.PAY:
            words = "declines, pays nothing"
        elif action.rank:
            words = f"pays a coin: their builder on {cell} becomes {rank_name(action.rank)}"
        else:
            words = f"pays a coin: a builder of theirs onto {cell}"
    elif pending.kind == CONFUSE_PAY:
        order = Order.CONFUSE
        words = ("pays a coin to choose the move" if action.kind == A.PAY else
                 f"declines, pays nothing: {names[before.active]} chooses the move")
    elif pending.kind == CONFUSE_MOVE and pending.paid:
        order = Order.CONFUSE
        words = f"the move they paid to choose: the builder on {cell} to {format_cell(action.dest)}"
    else:
        return None
    return f"answers {names[before.active]}'s {ORDER_TITLE[order]}: {A.format_action(action)} ({words})"


def describe_scoring(result: ScoringResult, number: int, names: Sequence[str]) -> list[str]:
    """The breakdown of one scoring, one line per area that scored."""
    lines = [f"Scoring {number}: {names[0]} +{result.points[0]}, {names[1]} +{result.points[1]}"]
    if result.jester_colors:
        lines.append("  Jester colours: " + ", ".join(f"{format_cell(c)} {COLOR_NAME[col]}"
                                                      for c, col in result.jester_colors))
    for a in result.areas:
        cells = " ".join(format_cell(c) for c in a.cells)
        if a.majority is None:
            who = "tie: no majority"
        else:
            who = f"{names[a.majority]} holds it" + (" (Strongman)" if a.reason == "strongman" else "")
            if a.architect:
                who += ", Architect x2"
            if a.glass:
                who += f", glass +{a.glass}"
        # Points first and the cells last, so that a long area wraps only its list of cells.
        lines.append(f"  {COLOR_NAME[a.color]:<6} {a.points[0]:>2}-{a.points[1]:<2} {who}; strength "
                     f"{a.strength[0]}-{a.strength[1]}; {len(a.cells)} tile{'s' if len(a.cells) != 1 else ''} {cells}")
    if not result.areas:
        lines.append("  no area had a builder: nothing scored")
    return lines


# What each shuffle scheme means for the players, said where a game is shown
# (replay show, the viewer): which scheme dealt the game matters to whoever
# judges it, since only a hidden deal keeps the stack secret from both sides.
_SHUFFLES = {
    COMMIT_REVEAL: f"shuffled by {COMMIT_REVEAL} (unbiased, but either side could compute the stack)",
    HIDDEN_DEAL: f"dealt face down by {HIDDEN_DEAL} (the stack hidden from both sides)",
}


def describe_shuffle(scheme: str) -> str:
    """How the stack of a game was shuffled, in words, from its header's ``shuffle`` field."""
    return _SHUFFLES.get(scheme, f"shuffled by {scheme}")

