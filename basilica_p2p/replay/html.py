"""``basilica replay html``: one self-contained HTML page that steps through a verified replay.

The replay is verified first (:func:`.verify.verify_file`: signatures, chain,
commit-reveal, every action, every state hash, the result); a file that does
not verify gives no page at all.  The game is then re-played through the
engine and every step (the start, then one step per decision) is written
into the page as JSON: the move in notation and in words, the cathedral, the
market, the track, the counts, and the breakdown of any scoring.

Only public facts go into the page (RULES.md §9, D18): every step is built
from :func:`..engine.observe` (a spectator sees what either player sees of the
table), never from the hidden stack order or the crowns under order faces.
The page loads nothing: its data, script and style are inline and a
Content-Security-Policy forbids every fetch.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from pathlib import Path
from collections.abc import Iterable, Sequence
from typing import Any

from .. import safefile
from ..describe import ORDER_TITLE, describe_action, describe_shuffle
from ..engine import (COLOR_LETTER, COLOR_NAME, RANK_LETTER, RANK_NAME, Game, Manifest, Observation, OrderFace,
                      ScoredBoard, ScoringResult, TileSpec, VaultFace, color_count, describe_pending, format_action,
                      format_cell, format_colors, observe)
from ..narration import fault_words
from ..referee import END_FAULT, END_TIME, GameSpec
from ..seat import Accepted, ChatSaid, GameStarted, MoveApplied, Scored, Seat, TakenBack
from .analysis import evaluation_series
from .verify import verify_file
from .walk import Visitor, known_manifests

VIEWER_FORMAT = "basilica-replay-viewer/1"
TEMPLATE = "viewer.html"


class ViewerError(Exception):
    """The file is not a valid, finished replay, so there is no page; the message is one line."""


class OutputError(ViewerError):
    """The page could not be written; the message is one line."""


# --- one step's public state -------------------------------------------------------------


def _colors(mask: int) -> dict[str, Any]:
    return {"colors": format_colors(mask), "wild": color_count(mask) >= 2}


def _vault_face(f: VaultFace | None) -> dict[str, Any] | None:
    if f is None:
        return None
    return {**_colors(f.colors), "crown": f.crown}


def _order_face(f: OrderFace | None) -> dict[str, Any] | None:
    if f is None:
        return None
    # ``crown`` is None unless the box prints crowns on order faces (D18): hidden, never guessed.
    # ``order`` names it for scripts, ``title`` for people, in the words every other view uses.
    return {"order": f.order.value, "title": ORDER_TITLE[f.order], **_colors(f.colors), "paid": f.paid,
            "crown": f.crown}


def _cathedral(vaults: Iterable[tuple[int, int, bool]], builders: Iterable[tuple[int, int, int]],
               glass: Iterable[int], altars: Iterable[int], scaffold: Sequence[int]) -> dict[str, Any]:
    """The cathedral's cells: each vault as (cell, colours, crown), the builders (cell, player, rank)."""
    by_cell = {c: (p, r) for c, p, r in builders}
    glass, altars = set(glass), set(altars)
    cells = []
    occupied = list(scaffold)
    for c, colors, crown in vaults:
        b = by_cell.get(c)
        occupied.append(c)
        cells.append({
            "cell": format_cell(c), **_colors(colors), "crown": crown,
            "builder": None if b is None else {"player": b[0] + 1, "rank": RANK_LETTER.get(b[1], ""),
                                                "rank_name": RANK_NAME[b[1]]},
            "glass": c in glass, "altar": c in altars,
        })
    return {
        "cells": cells,
        "scaffold": [format_cell(c) for c in scaffold],
        "rows": max(occupied) // 5 + 1 if occupied else 0,
    }


def _cathedral_seen(obs: Observation) -> dict[str, Any]:
    return _cathedral(((c, f.colors, f.crown) for c, f in obs.vaults), obs.builders, obs.glass, obs.altars,
                      obs.scaffold)


def public_state(g: Game) -> dict[str, Any]:
    """Everything a spectator sees of ``g``: built from an observation, so nothing hidden leaks."""
    return view_state(observe(g, 0))


def view_state(obs: Observation) -> dict[str, Any]:
    """Everything a spectator sees in a player's view (a seat's, or :func:`public_state`'s)."""
    return {
        "cathedral": _cathedral_seen(obs),
        "orders": [_order_face(f) for f in obs.orders],
        "vaults": [_vault_face(f) for f in obs.market],
        "in_hand": None if obs.in_hand is None else {"space": obs.in_hand[0], **(_order_face(obs.in_hand[1]) or {})},
        "pawn": obs.pawn,
        "scorings": obs.scorings,
        "scores": list(obs.scores),
        "coins": list(obs.coins),
        "supply": list(obs.supply),
        "tokens": list(obs.tokens),
        "altar_supply": obs.altar_supply,
        "stack": obs.stack_size,
        "stack_top": _order_face(obs.stack_top),
        "discard": len(obs.discard),
        "reshuffles": obs.reshuffles,
        "over": obs.over,
    }


def _scoring(result: ScoringResult, number: int, board: ScoredBoard, tiles: dict[int, TileSpec]) -> dict[str, Any]:
    areas = []
    for a in result.areas:
        areas.append({
            "color": COLOR_LETTER[a.color], "color_name": COLOR_NAME[a.color],
            "cells": [format_cell(c) for c in a.cells], "strength": list(a.strength),
            "majority": None if a.majority is None else a.majority + 1, "reason": a.reason,
            "architect": a.architect, "glass": a.glass, "points": list(a.points),
        })
    cathedral = _cathedral(((c, tiles[t].colors, tiles[t].crown) for c, t in board.vaults), board.builders,
                           board.glass, board.altars, board.scaffold)
    extra = {format_cell(c): COLOR_LETTER[col] for c, col in result.jester_colors}
    for cell in cathedral["cells"]:
        if cell["cell"] in extra:
            cell["jester"] = extra[cell["cell"]]  # the Jester's extra colour for this scoring (D24)
    return {
        "number": number, "points": list(result.points), "areas": areas,
        "jester": [{"cell": format_cell(c), "color": COLOR_LETTER[col], "color_name": COLOR_NAME[col]}
                   for c, col in result.jester_colors],
        # The cathedral as it was scored, before the clean-up of D21 removed rows 1-2.
        "cathedral": cathedral,
    }


# --- the whole game ------------------------------------------------------------------------


def _result_text(outcome: Any, names: tuple[str, str]) -> str:
    s = f"{outcome.scores[0]}-{outcome.scores[1]}"
    if outcome.end == END_TIME and outcome.time is not None:
        winner = 1 - outcome.time.loser
        # Signed by the winner alone, with its own figures and the loser's last signed one.
        return f"{names[winner]} claims a win on time, signed by {names[winner]}: {outcome.time.words(names)}; {s}"
    if outcome.end == END_FAULT:
        return f"{fault_words(outcome, names)}; {s}"
    if outcome.end == "forfeit":
        loser = 1 - (outcome.winner or 0)
        if outcome.claimed_by == loser:
            return f"{names[loser]} resigned ({outcome.reason}); {names[1 - loser]} wins, {s}"
        # Signed by the winner alone: a claim (e.g. the other side did not come back), as verify says.
        return (f"{names[1 - loser]} claims a win by forfeit ({outcome.reason}), signed by "
                f"{names[1 - loser]} alone; {s}")
    if outcome.winner is None:
        return f"shared victory, {s}"
    end = "the stack ran out" if outcome.end == "stack" else "last scoring"
    return f"{names[outcome.winner]} won {s} ({end})"


class _Steps(Visitor):
    """The page's steps, one per decision (and one for the start, one per takeback), built as the
    file is walked: from the events' public views, never from the engine's state."""

    def __init__(self) -> None:
        self.spec: GameSpec | None = None
        self.names: tuple[str, str] = ("", "")
        self.tiles: dict[int, TileSpec] = {}
        self.steps: list[dict[str, Any]] = []
        self._said: list[dict[str, Any]] = []  # chat said before the first step

    def taken(self, number: int, got: Accepted, seat: Seat) -> None:
        if self.spec is None:
            self.spec = spec = seat.spec
            self.names = spec.names  # the header's, which the signed hellos confirm
            self.tiles = {t.id: t for t in (*spec.manifest.tiles, *spec.manifest.festum_tiles)}
        names = self.names
        scored = [e for e in got.events if isinstance(e, Scored)]
        for event in got.events:
            if isinstance(event, ChatSaid):  # shown with the step it was said after
                line = {"player": event.who + 1, "text": event.text}
                (self.steps[-1]["chat"] if self.steps else self._said).append(line)
            elif isinstance(event, GameStarted) and event.view is not None:
                v = event.view
                self._add(None, f"the start: the tiles are dealt and {names[v.active]} (player {v.active + 1}) "
                          "takes the first turn", v.turn, None, v.active, None, None, (), [], v)
            elif isinstance(event, TakenBack) and event.view is not None:
                v = event.view
                self._add(None, f"{names[event.asker]} took back to their decision in turn {v.turn}: the moves "
                          "after it are undone (both players signed the takeback)", v.turn, event.asker + 1,
                          v.active, None, "takeback", (), [], v)
            elif isinstance(event, MoveApplied) and event.before is not None and event.after is not None:
                before, after = event.before, event.after
                assert before.pending is not None
                kind = before.pending.kind
                # Each scoring's board is the engine's event's (the cathedral before its clean-up).
                boards = [e.board for e in event.events if e.kind == "scoring" and e.board is not None]
                scoring = [_scoring(s.result, s.number, board, self.tiles) for s, board in zip(scored, boards)]
                self._add(format_action(event.action),
                          describe_action(event.action, event.mover, before, after, names), event.turn,
                          event.mover + 1, before.active, None if kind == "jester" else before.actions_taken + 1,
                          kind, tuple(e.detail for e in event.events if e.kind != "scoring"), scoring, after)

    def _add(self, move: str | None, words: str, turn: int, player: int | None, active: int, action: int | None,
             decision: str | None, events: tuple[str, ...], scoring: list[dict[str, Any]], view: Observation) -> None:
        self.steps.append({
            "step": len(self.steps), "move": move, "words": words, "turn": turn, "player": player,
            "active": active + 1, "action": action, "decision": decision, "events": list(events),
            "scoring": scoring, "next": _next(view, self.names), "chat": self._said, **view_state(view),
        })
        self._said = []


def build_viewer_data(path: Path, manifests: dict[str, Manifest] | None = None) -> dict[str, Any]:
    """Verify the replay at ``path`` and describe every step, in one read of the file;
    :class:`ViewerError` if it does not verify."""
    manifests = manifests if manifests is not None else known_manifests()
    steps = _Steps()
    verdict = verify_file(path, manifests, steps)
    if not verdict.ok or verdict.outcome is None or steps.spec is None:
        raise ViewerError(verdict.error)
    spec, o, names = steps.spec, verdict.outcome, steps.names
    options = spec.options
    steps_data = steps.steps
    if steps_data and o.end in ("forfeit", END_TIME, END_FAULT):
        steps_data[-1]["next"] = f"the game ends here: {_result_text(o, names)}"
    return {
        "format": VIEWER_FORMAT,
        "players": list(names),
        "ruleset": options.ruleset.value, "festum": options.festum, "removal": options.festum_removal,
        "shuffle": spec.shuffle, "shuffle_text": "stack " + describe_shuffle(spec.shuffle),
        "game": spec.game.hex(),
        "pawn": options.ruleset.pawn,
        "crown_spaces": list(spec.manifest.crown_spaces),
        "rows": max([3] + [s["cathedral"]["rows"] + 1 for s in steps_data]
                    + [sc["cathedral"]["rows"] + 1 for s in steps_data for sc in s["scoring"]]),
        "result": {"scores": list(o.scores), "winner": None if o.winner is None else o.winner + 1, "end": o.end,
                   "moves": o.moves, "reason": o.reason or None, "text": _result_text(o, names),
                   "on_time": None if o.time is None else {"loser": o.time.loser + 1, "signed_ms": o.time.signed,
                                                           "left_ms": o.time.left, "waited_ms": o.time.waited}},
        "clock": None if spec.clock is None else str(spec.clock),
        "takebacks": list(o.takebacks),
        "steps": steps_data,
        "analysis": evaluation_series(path),  # basilica replay analyse's results, if saved beside the replay
    }


def _next(view: Observation, names: tuple[str, str]) -> str:
    if view.over or view.pending is None:
        return "the game is over"
    p = view.pending.player
    return f"next: {names[p]} (player {p + 1}) decides {describe_pending(view.pending)}"


# --- the page ---------------------------------------------------------------------------------


def script_json(data: Any) -> str:
    """JSON that is safe inside a <script> element: no '<', '>' or '&' (so no '</script>' or '<!--')."""
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def page_title(data: dict[str, Any]) -> str:
    p1, p2 = data["players"]
    return f"{p1} vs {p2}: {data['result']['text']} - Basilica replay"


def render_html(data: dict[str, Any]) -> str:
    template = resources.files("basilica_p2p.data").joinpath(TEMPLATE).read_text(encoding="utf-8")
    values = {"TITLE": html.escape(page_title(data)), "DATA": script_json(data)}
    # One pass, so that a player's name can never bring in another placeholder.
    return re.sub(r"@@(TITLE|DATA)@@", lambda m: values[m.group(1)], template)


def write_atomically(out: Path, text: str) -> None:
    """Write ``out`` whole or not at all (see :mod:`basilica_p2p.safefile`)."""
    try:
        safefile.write_atomically(out, text)
    except OSError as e:
        raise OutputError(f"cannot write {out}: {e.strerror}") from None


def write_viewer(path: Path, out: Path, manifests: dict[str, Manifest] | None = None) -> dict[str, Any]:
    """Verify ``path`` and write its viewer page to ``out``; returns the page's data."""
    data = build_viewer_data(path, manifests)
    write_atomically(out, render_html(data))
    return data


__all__ = ["VIEWER_FORMAT", "OutputError", "ViewerError", "build_viewer_data", "public_state", "render_html",
           "script_json", "write_viewer"]
