"""What a person reads at the terminal prompt, and how: the market slot by slot (O k beside V k,
and what a taken vault turned over), every scoring listed and read again, long texts paged at a
terminal, and only whole sentences on a crowded screen."""

from __future__ import annotations

import io
import re

from rich.console import Console

from basilica_p2p.engine import Game, Options, default_manifest, format_action, observe
from basilica_p2p.engine import actions as A
from basilica_p2p.engine.components import Order
from basilica_p2p.engine.observation import OrderFace
from basilica_p2p.lineclient import TerminalPlayer
from basilica_p2p.drawing import board_lines
from support.seat_events import Told, ask_for
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


# --- the market: O k and V k go together ---------------------------------------------------------


def test_the_market_shows_each_order_beside_the_vault_that_takes_it() -> None:
    for plies in (0, 40):
        obs = observe(played(plies), 0)
        out = text_of(board_lines(obs, ["ada", "bob"]))
        for k in (1, 2, 3):  # one line per slot: O k and V k side by side
            assert re.search(rf"\| O{k} .* V{k} ", out), out
        assert all(len(line) <= 80 for line in out.splitlines())
    # The widest order beside an empty vault space still fits, whole.
    import dataclasses

    obs = observe(played(40), 0)
    wide = OrderFace(Order.SCAFFOLDING, 0b0011, True, True)
    out = text_of(board_lines(dataclasses.replace(obs, orders=(wide, wide, wide), market=(None, None, None)),
                              ["ada", "bob"]))
    assert out.count("V3 empty\n") == 1 and all(len(line) <= 80 for line in out.splitlines()), out


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
    told = Told(person, g, me, ("ada", "bob"))
    assert person.choose(told.ask()) == take
    said = out.getvalue()
    assert re.search(r"Taking V2 uses up O2's [A-Z ]+: it turns over into the new V2", said), said
    told.apply(take)
    now = observe(g, me).orders[1]
    assert isinstance(now, OrderFace)
    out.seek(0)
    out.truncate()
    person.choose(told.ask())
    screen = _plain(out.getvalue())
    notice = re.search(r"O2 is now ([A-Z ]+) \(was ([A-Z ]+), turned over into V2\)", screen)
    assert notice is not None, screen
    assert notice.group(1) == now.order.value.replace("_", " ") and notice.group(2) == was.order.value.replace("_", " ")
    # The order the player may still have planned on O2 is refused with the same reminder.
    refusal = " ".join(screen.split("> O2:", 1)[1].split("> ", 1)[0].split())
    assert "is not legal now" in refusal and "O2 is now" in refusal, refusal


# --- every scoring can be read again; the final one is shown last ----------------------------


class _Terminal(io.StringIO):
    """Typed answers, as read from a terminal (so long texts are paged and Ctrl-D asks first)."""

    def isatty(self) -> bool:
        return True


def _tty_person(lines: list[str], height: int = 24) -> tuple[TerminalPlayer, io.StringIO]:
    person, out = _person([], height=height)
    person.inp = _Terminal("".join(x + "\n" for x in lines))
    return person, out


def _greedy_until(person: TerminalPlayer, seat: int, done) -> Game:  # type: ignore[no-untyped-def]
    """A greedy game told to ``person`` move by move until ``done(g)``."""
    from basilica_p2p.bots import GreedyBot

    g = Game.new(MANIFEST, Options(), bytes(32))
    bots = (GreedyBot(MANIFEST, 1), GreedyBot(MANIFEST, 2))
    told = Told(person, g, seat, ("ada", "bob"))
    while not g.over and not done(g):
        p = g.to_move
        assert p is not None
        told.apply(bots[p].choose(observe(g, p), g.legal_actions()))
    return g


def test_every_scoring_can_be_listed_and_read_again_from_the_prompt() -> None:
    person, out = _person(["scorings", "scoring 1", "scoring 9", "1"])
    g = _greedy_until(person, 0, lambda g: len(g.scoring_log) >= 2 and g.to_move == 0)
    assert not g.over
    out.seek(0)
    out.truncate()
    person.choose(ask_for(g, 0))
    text = out.getvalue()
    listed = re.findall(r"^Scoring (\d): ada \+\d+, bob \+\d+ \(turn \d+\)$", text, re.M)
    assert listed == ["1", "2"], text
    first = g.scoring_log[0]
    assert len(re.findall(r"^Scoring 1: ", text, re.M)) == 2  # in the list, then whole
    assert sum(1 for line in text.splitlines() if re.match(r"  (yellow|blue|red|green) ", line)) >= len(first.areas)
    assert "there is no scoring 9: choose 1 to 2" in text


def test_a_long_breakdown_is_paged_at_a_terminal() -> None:
    person, out = _tty_person(["scoring 2", "", "1"], height=5)
    g = _greedy_until(person, 0, lambda g: len(g.scoring_log) >= 2 and g.to_move == 0)
    lines = 1 + len(g.scoring_log[1].areas) + (1 if g.scoring_log[1].jester_colors else 0)
    assert lines > 4, lines  # longer than this screen
    out.seek(0)
    out.truncate()
    person.choose(ask_for(g, 0))
    text = out.getvalue()
    assert f"-- more (3 of {lines} lines)" in text, text


def test_the_final_breakdown_is_shown_last_and_whole_without_a_score_hint(tmp_path) -> None:  # type: ignore[no-untyped-def]
    person, out = _person([], clear=True)
    g = _greedy_until(person, 0, lambda g: False)
    assert g.over
    final = _plain(out.getvalue()).split("The game is over.", 1)[-1]
    last = g.scoring_log[-1]
    body = final.strip().splitlines()
    assert body[0].startswith(f"Scoring {len(g.scoring_log)}: ada +{last.points[0]}, bob +{last.points[1]}"), final
    assert body[-1].startswith("Game over"), final
    assert "type 'score'" not in final and "type 'score'" not in person.log[-len(last.areas) - 3]


# --- whole sentences on screen, a paged log --------------------------------------------------


def test_moves_told_again_on_a_crowded_screen_are_whole_or_left_out() -> None:
    from test_tui import tallest_states

    checked = 0
    for seed in (7, 8):
        for g in tallest_states(seed, 40):
            obs = observe(g, g.to_move)  # type: ignore[arg-type]
            person, out = _person([], clear=True)
            person.begin(obs.player, ("ada", "bob"), MANIFEST)
            for i in range(6):
                person.log.append(f"bob move {i} placed a wild yellow/blue vault with a crown from V2 on b{i}; "
                                  f"the queen moves to space {i}; O2's SCAFFOLDING turned over into the new V2 and O2 "
                                  f"was refilled from the stack, and this sentence goes on to end {i}.")
                person._kinds.append("them")
            out.seek(0)
            out.truncate()
            person._draw(obs, [format_action(a) for a in g.legal_actions()])
            screen = _plain(out.getvalue())
            assert len(screen.splitlines()) <= 23
            for i in range(6):  # the start of a sentence is on screen exactly when its end is
                assert (f"bob move {i} " in screen) == (f"end {i}." in screen), screen
                checked += f"end {i}." in screen
    assert checked


def test_log_shows_the_last_screenful_and_pages_the_rest() -> None:
    person, out = _tty_person(["log", "log all", "", "q", "log 3", "q", "log nonsense", "1"], height=12)
    g = _greedy_until(person, 0, lambda g: g.turn >= 8 and g.to_move == 0)
    assert len(person.log) > 30
    out.seek(0)
    out.truncate()
    person.choose(ask_for(g, 0))
    text = out.getvalue()
    first = text.split("> log\n", 1)[1].split("> log all", 1)[0].splitlines()
    assert len(first) <= 11 and "'log all' pages the whole game" in first[-1], first
    assert person.log[-1].split()[0] in "\n".join(first)
    paged = text.split("> log all\n", 1)[1].split("> log 3", 1)[0]
    assert paged.count("-- more (") == 2 and "-- turn 1" in paged  # two pages read, then q
    from_three = text.split("> log 3\n", 1)[1].split("> log nonsense", 1)[0]
    assert from_three.startswith("-- turn 3") and "-- turn 2" not in from_three
    assert "log takes 'all' or a turn number" in text

