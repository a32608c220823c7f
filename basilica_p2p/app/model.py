"""What the app shows, as values: the log, the scorings, a decision, and how a choice is built.

Everything here is made from a player's :class:`Observation` and the public
scoring results, so nothing hidden can reach the screen.  The functions
that narrow the legal actions down as a person clicks or types work on
notation strings (docs/notation.md): a choice is a prefix of one.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..describe import ORDER_TITLE, describe_action, describe_scoring
from ..engine import Action, Manifest, Observation, OrderFace, observe, parse_cell
from ..engine import actions as A

# A cell as the next part of a choice: after a market space ("V2:" + "b3"), a MOVE's
# origin ("O1:c2" + "-c3"), or on its own for a builder, a payment or a Jester.
_NEXT_CELL = re.compile(r"(B:|J:|\$|:|-|,)?([a-e][0-9]+)")


@dataclass(frozen=True)
class Entry:
    """One line of the move log."""

    text: str
    kind: str  # "you", "them", "note", "scoring", "detail", "result"
    turn: int
    ply: int  # moves applied when it was told: a take-back drops the entries past it


@dataclass(frozen=True)
class Scoring:
    number: int
    turn: int
    lines: tuple[str, ...]  # describe_scoring: the headline, then area by area


@dataclass(frozen=True)
class Snapshot:
    """Everything one screen needs, made in the game's thread and handed to the app's."""

    names: tuple[str, str]
    seat: int | None
    view: Observation | None
    entries: tuple[Entry, ...]
    scorings: tuple[Scoring, ...]
    legal: tuple[str, ...] = ()  # our decision's legal actions in notation; empty: not ours to decide
    notes: tuple[str, ...] = ()  # what taking a vault changed in the market this turn
    waiting: str = ""
    result: str = ""
    can_undo: bool = False
    away: str = ""  # a network game whose other side has gone: the wait, counted down
    chat: bool = False  # a network game with chat open: the chat box is shown
    again: str = ""  # after a network game: the series so far, while another game is asked for

    @property
    def deciding(self) -> bool:
        return bool(self.legal)


def candidates(legal: Sequence[str], prefix: str) -> list[str]:
    return [t for t in legal if t.startswith(prefix)]


def next_cells(legal: Sequence[str], prefix: str) -> dict[int, str]:
    """The cells that may come next after ``prefix``, each with the prefix it makes."""
    out: dict[int, str] = {}
    for t in candidates(legal, prefix):
        m = _NEXT_CELL.match(t, len(prefix))
        if m is None or (m.group(1) in ("B:", "J:", "$") and prefix):
            continue
        nxt = t[: m.end()]
        if m.end() < len(t) and t[m.end()].isdigit():
            continue  # the regex stopped inside a row number
        out.setdefault(parse_cell(m.group(2)), nxt)
    return out


def space_prefix(kind: str, space: int) -> str:
    return f"{kind}{space}:"


# The first verb of a move told in the past ("You placed ..."), told as what would happen.
_PRESENT = {
    "You placed": "You place", "You took": "You take", "You put": "You put", "You paid": "You pay",
    "You declined": "You decline", "You moved": "You move", "You chose": "You choose", "You found": "You find",
    "You had": "You have", "turned over": "turns over", "was refilled": "is refilled", ": moved ": ": move ",
    ": sent ": ": send ", "was destroyed and discarded": "is destroyed and discarded",
}


def option_words(obs: Observation, text: str, names: Sequence[str]) -> str:
    """A legal action in short words, for the list under the box: what a newcomer reads
    instead of the notation (``place the red vault of V2 on b3``)."""
    from ..engine import parse_action

    said = describe_action(parse_action(text), obs.player, obs, None, names, reader=obs.player)
    for old, new in _PRESENT.items():
        said = said.replace(old, new)
    said = said.split("; ")[0].rstrip(".")
    return said[4:] if said.startswith("You ") else said


def preview(obs: Observation, action: Action, names: Sequence[str], manifest: Manifest | None) -> list[str]:
    """What ``action`` will do, told before it is confirmed: the move in words, what it uses up
    in the market, and whether it moves the pawn onto a crown space (a scoring) or ends the turn.

    The move is tried on a game sampled from the observation: what follows from it
    (the pawn, a scoring's points) depends on public facts only, which the sample
    shares with the real game; refills, which are hidden, are not told."""
    after: Observation | None = None
    sampled = None
    if manifest is not None:
        from ..bots import sample_game

        try:
            g = sample_game(obs, manifest, random.Random(0))
            scored = len(g.scoring_log)
            g.apply(action)
            after = observe(g, obs.player)
            sampled = g.scoring_log[scored:]
        except Exception:  # only the preview is at stake; the engine checks the move itself
            after = None
    text = describe_action(action, obs.player, obs, after, names, reader=obs.player)
    for old, new in _PRESENT.items():
        text = text.replace(old, new)
    lines = [text]
    face = obs.orders[action.space - 1] if action.kind == A.VAULT and 1 <= action.space <= 3 else None
    if isinstance(face, OrderFace):
        # One line at 80 columns: the move's own sentence above already says how the order turns over.
        lines.append(f"Taking V{action.space} uses up O{action.space}'s {ORDER_TITLE[face.order]}: that order is "
                     "gone for this turn.")
    if sampled:
        for k, result in enumerate(sampled, start=obs.scorings + 1):
            lines.append(describe_scoring(result, k, names)[0] + " (a scoring follows this move).")
    elif after is not None and after.pawn != obs.pawn and after.pawn in obs.crown_spaces:
        lines.append(f"The pawn reaches crown space {after.pawn}: a scoring follows.")
    if after is not None and not after.over and after.active != obs.active and obs.active == obs.player:
        lines.append("This ends your turn.")
    return lines


def pairing_warning(obs: Observation, prefix: str) -> str:
    """Said as soon as a vault space is picked: the order above it goes with it."""
    m = re.match(r"V([1-3])", prefix)
    if m is None:
        return ""
    k = int(m.group(1))
    face = obs.orders[k - 1]
    if not isinstance(face, OrderFace):
        return ""
    return f"V{k} goes with O{k}: taking it uses up O{k}'s {ORDER_TITLE[face.order]}."
