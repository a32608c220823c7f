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
from typing import Any

from .. import safefile
from ..describe import ORDER_TITLE, describe_action, describe_shuffle
from ..engine import (Action, Event, FaceClass, Game, Level, Manifest, Position, Ruleset, TileSpec, format_cell,
                      observe, parse_action)
from ..engine.components import COLOR_LETTER, COLOR_NAME, RANK_LETTER, RANK_NAME, color_count, format_colors
from ..engine.game import describe_pending
from ..engine.observation import Observation, OrderFace, VaultFace
from ..engine.scoring import ScoringResult
from ..referee import END_TIME, rewind
from ..wire import open_envelope
from .analysis import evaluation_series
from .file import ReplayError
from .show import walk
from .verify import known_manifests, verify_file

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


def _cathedral(obs: Observation) -> dict[str, Any]:
    builders = {c: (p, r) for c, p, r in obs.builders}
    glass = set(obs.glass)
    altars = set(obs.altars)
    cells = []
    for c, f in obs.vaults:
        b = builders.get(c)
        cells.append({
            "cell": format_cell(c), **_colors(f.colors), "crown": f.crown,
            "builder": None if b is None else {"player": b[0] + 1, "rank": RANK_LETTER.get(b[1], ""),
                                                "rank_name": RANK_NAME[b[1]]},
            "glass": c in glass, "altar": c in altars,
        })
    occupied = [c for c, _ in obs.vaults] + list(obs.scaffold)
    return {
        "cells": cells,
        "scaffold": [format_cell(c) for c in obs.scaffold],
        "rows": max(occupied) // 5 + 1 if occupied else 0,
    }


def public_state(g: Game) -> dict[str, Any]:
    """Everything a spectator sees of ``g``: built from an observation, so nothing hidden leaks."""
    obs = observe(g, 0)
    return {
        "cathedral": _cathedral(obs),
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


def _scoring(result: ScoringResult, number: int, board: Game) -> dict[str, Any]:
    areas = []
    for a in result.areas:
        areas.append({
            "color": COLOR_LETTER[a.color], "color_name": COLOR_NAME[a.color],
            "cells": [format_cell(c) for c in a.cells], "strength": list(a.strength),
            "majority": None if a.majority is None else a.majority + 1, "reason": a.reason,
            "architect": a.architect, "glass": a.glass, "points": list(a.points),
        })
    cathedral = _cathedral(observe(board, 0))
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


def _tapped(g: Game, boards: list[Game]) -> Game:
    """``g``, changed so that each scoring leaves in ``boards`` the cathedral as it was scored.

    The engine's clean-up (D21) runs inside the same decision as the scoring;
    the picture is taken just before it, so the page can show what was scored.
    """

    class Tapped(Game):
        __slots__ = ()

        def _clean_up(self) -> None:
            boards.append(self.clone())
            super()._clean_up()

    g.__class__ = Tapped
    return g


def _apply(g: Game, action: Action, facts: dict[Position, FaceClass | TileSpec], boards: list[Game]) -> list[Event]:
    """``g.apply(action)``; a hidden deal's game is given what the action turns over, as the
    players' reveals opened it, at exactly the level asked, so the state hash stays theirs."""
    shown = g.manifest.order_faces_show_crown
    boards.clear()
    mark = len(g.events)
    g.apply(action)
    while g.needed_reveals():
        for r in g.needed_reveals():
            known = facts.get(r.position)
            if known is None:  # pragma: no cover - walk saw every reveal the referee made
                raise ViewerError(f"the replay never opens {r.position}") from None
            if r.level is Level.TILE:
                assert isinstance(known, TileSpec)
                g.reveal(r.position, known.id)
            else:
                g.reveal(r.position, known.face_class(shown) if isinstance(known, TileSpec) else known)
    return g.events[mark:]


def _names_from_hellos(records: list[bytes], header_names: tuple[str, str]) -> tuple[str, str]:
    names = list(header_names)
    for raw in records[:2]:
        env = open_envelope(raw)
        if env.type == "hello":
            names[0 if env.seq == 0 else 1] = env.body["name"]
    return names[0], names[1]


def _result_text(outcome: Any, names: tuple[str, str]) -> str:
    s = f"{outcome.scores[0]}-{outcome.scores[1]}"
    if outcome.end == END_TIME and outcome.time is not None:
        winner = 1 - outcome.time.loser
        # Signed by the winner alone, with its own figures and the loser's last signed one.
        return f"{names[winner]} claims a win on time, signed by {names[winner]}: {outcome.time.words(names)}; {s}"
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


def build_viewer_data(path: Path, manifests: dict[str, Manifest] | None = None) -> dict[str, Any]:
    """Verify the replay at ``path`` and describe every step; :class:`ViewerError` if it does not verify."""
    manifests = manifests if manifests is not None else known_manifests()
    verdict = verify_file(path, manifests)
    if not verdict.ok:
        raise ViewerError(verdict.error)
    try:
        w = walk(path, manifests)
    except ReplayError as e:
        raise ViewerError(str(e)) from None
    if w.error or w.outcome is None or w.outcome != verdict.outcome:
        raise ViewerError("the file changed while it was read")
    h = w.replay.header
    names = _names_from_hellos(w.replay.records, (h.players[0][1], h.players[1][1]))
    pawn = Ruleset(h.ruleset).pawn
    steps: list[dict[str, Any]] = []
    g: Game | None = None
    boards: list[Game] = []
    if w.start is not None:
        g = _tapped(w.start.clone(), boards)
        first = names[g.active]
        steps.append({
            "step": 0, "move": None, "words": f"the start: the tiles are dealt and {first} "
            f"(player {g.active + 1}) takes the first turn", "turn": g.turn, "player": None,
            "active": g.active + 1, "action": None, "decision": None, "events": [], "scoring": [],
            "next": _next(g, names), **public_state(g),
        })
    backs = {t.index: t for t in w.takebacks}
    for i, m in enumerate(w.moves):
        assert g is not None
        if i in backs:  # both signed a takeback: the board as it was at that decision
            t = backs[i]
            g = _tapped(rewind(g, t.to), boards)
            steps.append({
                "step": len(steps), "move": None, "words": f"{names[t.player]} took back to their decision in "
                f"turn {t.turn}: the moves after it are undone (both players signed the takeback)",
                "turn": g.turn, "player": t.player + 1, "active": g.active + 1, "action": None,
                "decision": "takeback", "events": [], "scoring": [], "next": _next(g, names), **public_state(g),
            })
        before = g.clone()
        action = parse_action(m.action)
        kind = before.pending.kind
        events = _apply(g, action, w.facts, boards)
        if g.state_hash() != m.state_hash:  # pragma: no cover - the referee checked every hash
            raise ViewerError(f"move {m.ply + 1} ({m.action}) does not replay to the acknowledged state")
        scoring = []
        done = g.scorings - sum(1 for e in events if e.kind == "scoring")
        for e in events:
            if e.kind == "scoring":
                done += 1
                board = boards.pop(0) if boards else g  # the last scoring has no clean-up (D26)
                scoring.append(_scoring(g.scoring_log[done - 1], done, board))
        steps.append({
            "step": len(steps), "move": m.action, "words": describe_action(action, m.player, observe(before, 0), observe(g, 0), names),
            "turn": m.turn, "player": m.player + 1, "active": before.active + 1,
            "action": None if kind == "jester" else before.actions + 1, "decision": kind,
            "events": [e.detail for e in events if e.kind != "scoring"], "scoring": scoring,
            "next": _next(g, names), **public_state(g),
        })
    o = w.outcome
    if steps and o.end in ("forfeit", END_TIME):
        steps[-1]["next"] = f"the game ends here: {_result_text(o, names)}"
    return {
        "format": VIEWER_FORMAT,
        "players": list(names),
        "ruleset": h.ruleset, "festum": h.festum, "removal": h.removal,
        "shuffle": h.shuffle, "shuffle_text": "stack " + describe_shuffle(h.shuffle),
        "game": h.game.hex(),
        "pawn": pawn,
        "crown_spaces": list(manifests[h.manifest.hex()].crown_spaces),
        "rows": max([3] + [s["cathedral"]["rows"] + 1 for s in steps]
                    + [sc["cathedral"]["rows"] + 1 for s in steps for sc in s["scoring"]]),
        "result": {"scores": list(o.scores), "winner": None if o.winner is None else o.winner + 1, "end": o.end,
                   "moves": o.moves, "reason": o.reason or None, "text": _result_text(o, names),
                   "on_time": None if o.time is None else {"loser": o.time.loser + 1, "signed_ms": o.time.signed,
                                                           "left_ms": o.time.left, "waited_ms": o.time.waited}},
        "clock": None if h.clock is None else str(h.clock),
        "takebacks": list(o.takebacks),
        "steps": steps,
        "analysis": evaluation_series(path),  # basilica replay analyse's results, if saved beside the replay
    }


def _next(g: Game, names: tuple[str, str]) -> str:
    if g.over:
        return "the game is over"
    p = g.to_move
    assert p is not None
    return f"next: {names[p]} (player {p + 1}) decides {describe_pending(g.pending)}"


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
