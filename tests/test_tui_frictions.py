"""The frictions of a first game at the terminal prompt (issue 13, items 1, 2, 3 and 9)."""

from __future__ import annotations

import io
import re

from rich.console import Console

from basilica_p2p.engine import Game, Options, default_manifest, format_action, observe
from basilica_p2p.engine import actions as A
from basilica_p2p.engine.observation import OrderFace
from basilica_p2p.tui import TerminalPlayer
from basilica_p2p.tui.screen import board_lines
from test_tui import played, text_of

MANIFEST = default_manifest()


def _person(lines: list[str], clear: bool = False, height: int = 24) -> tuple[TerminalPlayer, io.StringIO]:
    out = io.StringIO()
    console = Console(width=80, file=out, no_color=True, highlight=False)
    person = TerminalPlayer("ada", console=console, inp=io.StringIO("".join(x + "\n" for x in lines)), clear=clear)
    person.height = height
    return person, out


def _plain(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


# --- item 1: O k and V k go together ------------------------------------------------------------


def test_the_market_shows_each_order_beside_the_vault_that_takes_it() -> None:
    for plies in (0, 40):
        obs = observe(played(plies), 0)
        out = text_of(board_lines(obs, ["ada", "bob"]))
        for k in (1, 2, 3):  # one line per slot: O k and V k side by side
            assert re.search(rf"\| O{k} .* V{k} ", out), out
        assert all(len(line) <= 80 for line in out.splitlines())


def test_after_taking_v_k_the_screen_says_which_order_now_sits_at_o_k() -> None:
    g = played(0)
    me = g.to_move
    assert me is not None
    obs = observe(g, me)
    legal = g.legal_actions()
    take = next(a for a in legal if a.kind == A.VAULT and a.space == 2)
    was = obs.orders[1]
    assert isinstance(was, OrderFace)
    person, out = _person([format_action(take), f"O2:{format_action(take)[3:]}", "1"], clear=True)
    person.begin_game(me, ["ada", "bob"], MANIFEST)
    assert person.choose(obs, legal) == take
    said = out.getvalue()
    assert re.search(r"Taking V2 uses up O2's [A-Z ]+: it turns over into the new V2", said), said
    turn = g.turn
    g.apply(take)
    person.notify(g, turn, me, format_action(take))
    now = observe(g, me).orders[1]
    assert isinstance(now, OrderFace)
    out.seek(0)
    out.truncate()
    person.choose(observe(g, me), g.legal_actions())
    screen = _plain(out.getvalue())
    notice = re.search(r"O2 is now ([A-Z ]+) \(was ([A-Z ]+), turned over into V2\)", screen)
    assert notice is not None, screen
    assert notice.group(1) == now.order.value.replace("_", " ") and notice.group(2) == was.order.value.replace("_", " ")
    # The order the player may still have planned on O2 is refused with the same reminder.
    refusal = " ".join(screen.split("> O2:", 1)[1].split("> ", 1)[0].split())
    assert "is not legal now" in refusal and "O2 is now" in refusal, refusal
