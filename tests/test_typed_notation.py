"""What a person types is read alike by both clients: the app's box and the line client's prompt.

The same inputs go to both (basilica_p2p.typed is their one reader): case, spaces, a missing
colon, a market space typed before its cell, and a cell alone where the legal actions make it
plain (after placing a vault, ``d1`` is ``B:d1``, as the app's hint 'type it' promises).
"""

from __future__ import annotations

import asyncio
import io
from typing import Any

import pytest
from rich.console import Console

from basilica_p2p.app import AppPlayer, BasilicaApp
from basilica_p2p.engine import Action, Game, Options, default_manifest, format_action
from basilica_p2p.engine import actions as A
from basilica_p2p.engine.cells import format_cell
from basilica_p2p.lineclient import TerminalPlayer
from basilica_p2p.typed import read, tidy
from support.seat_events import ask_for

MANIFEST = default_manifest()
NAMES = ("ada", "bob")


def first_decision() -> tuple[Game, Action]:
    """A new game and a vault action of its first decision whose cell other vaults may take too."""
    g = Game.new(MANIFEST, Options(), bytes(32))
    legal = g.legal_actions()
    for a in legal:
        if a.kind == A.VAULT and sum(b.kind == A.VAULT and b.cell == a.cell for b in legal) > 1:
            return g, a
    raise AssertionError("no cell that two vault spaces can take")


def after_the_vault() -> tuple[Game, Action]:
    """The decision after placing that vault: a builder on it, among other things."""
    g, vault = first_decision()
    g.apply(vault)
    builder = next(a for a in g.legal_actions() if a.kind == A.BUILDER)
    return g, builder


def typings() -> list[tuple[str, Any, tuple[str, ...]]]:
    """(what, position, what is typed, one entry after another)."""
    _, vault = first_decision()
    k, cell = vault.space, format_cell(vault.cell)
    _, builder = after_the_vault()
    b = format_cell(builder.cell)
    return [
        ("vault, no colon", first_decision, (f"v{k}{cell}",)),
        ("vault, case and a space", first_decision, (f"V{k} {cell.upper()}",)),
        ("vault, colon and capitals", first_decision, (f"v{k}:{cell.upper()}",)),
        ("the space, then its cell", first_decision, (f"v{k}", cell)),
        ("builder, its cell alone", after_the_vault, (b,)),
        ("builder, cell in capitals", after_the_vault, (b.upper(),)),
        ("builder, no colon", after_the_vault, (f"b{b}",)),
        ("builder, a space after the colon", after_the_vault, (f"B: {b}",)),
    ]


CASES = typings()


def test_the_reader_forgives_case_spaces_and_the_colon() -> None:
    assert tidy("v2B3") == "V2:b3" and tidy("o1:C2=m") == "O1:c2=M" and tidy("PASS") == "pass"
    assert tidy("V2 b3") == "V2:b3" and tidy("bd1") == "B:d1" and tidy("j:c2=g,d3=r") == "J:c2=G,d3=R"
    assert tidy("b1") == "b1" and tidy("$c4=s") == "$c4=S" and tidy("v*") == "V*"
    legal = ["V1:d1", "V2:d1", "V2:b3", "O1:c2=M"]
    assert read("d1", legal).candidates == ("V1:d1", "V2:d1") and not read("d1", legal).settled
    assert read("d1", ["B:d1", "pass"]).text == "B:d1"
    assert read("c2", ["$c2", "pass"]).candidates == ()  # a payment is never guessed


def line_client(g: Game, typed: tuple[str, ...]) -> tuple[Action | None, str]:
    seat = g.to_move
    assert seat is not None
    out = io.StringIO()
    person = TerminalPlayer("ada", console=Console(width=80, file=out, no_color=True, highlight=False),
                            inp=io.StringIO("".join(t + "\n" for t in typed)))
    person.begin(seat, NAMES, MANIFEST)
    decision = person.choose(ask_for(g, seat))
    # The input running out is leaving the game: nothing was chosen.
    return (decision if isinstance(decision, Action) else None), out.getvalue()


def app_client(g: Game, typed: tuple[str, ...]) -> tuple[Action | None, list[str]]:
    """Types each entry into the box (as the keys do: one after another, the box keeping what
    came before), then Enter; the action played, or None, and the list under the box."""
    from textual.widgets import OptionList

    seat = g.to_move
    assert seat is not None
    person = AppPlayer("ada", MANIFEST)
    got: list[Action] = []

    def work() -> None:
        person.begin(seat, NAMES, MANIFEST)
        decision = person.choose(ask_for(g, seat))
        if isinstance(decision, Action):
            got.append(decision)

    listed: list[str] = []

    async def run() -> None:
        app = BasilicaApp(person, work)
        async with app.run_test(size=(100, 32)) as pilot:
            for _ in range(2000):
                if app.snap is not None and app.snap.deciding:
                    break
                await pilot.pause(0.01)
            box = app.query_one("#notation")
            for entry in typed:
                box.value += entry
                await pilot.pause()
            choices = app.query_one("#choices", OptionList)
            listed.extend(choices.get_option_at_index(i).id or "" for i in range(choices.option_count))
            await pilot.press("enter")
            for _ in range(100):
                if got:
                    break
                await pilot.pause(0.01)
            if not got:
                person.abandon()

    asyncio.run(run())
    return (got[0] if got else None), listed


@pytest.mark.parametrize(("what", "position", "typed"), CASES, ids=[c[0] for c in CASES])
def test_both_clients_take_the_same_typing_for_the_same_action(what: str, position: Any, typed: tuple[str, ...]
                                                               ) -> None:
    g, meant = position()
    chosen, said = line_client(g.clone(), typed)
    assert chosen == meant, f"line client: {typed} gave {chosen}:\n{said}"
    played, _ = app_client(g.clone(), typed)
    assert played == meant, f"app: {typed} gave {played}"


def test_a_cell_that_several_vaults_can_take_is_listed_in_both_clients() -> None:
    g, vault = first_decision()
    cell = format_cell(vault.cell)
    ending = [format_action(a) for a in g.legal_actions() if a.kind == A.VAULT and a.cell == vault.cell]
    chosen, said = line_client(g.clone(), (cell,))
    assert chosen is None and "could be: " + "  ".join(ending) in said, said
    played, listed = app_client(g.clone(), (cell,))
    assert played is None and listed == ending
