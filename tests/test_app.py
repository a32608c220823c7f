"""The full-screen app (basilica_p2p/app), driven by Textual's own test pilot.

Local games run as `basilica play` runs them (lineclient.local.play_local, signed
replay and all) in the game's own thread (app/bridge.py GameBridge); the fixed positions come from
basilica_p2p.app.screenshot.scripted_game.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Static

from basilica_p2p.app import AppPlayer, BasilicaApp
from basilica_p2p.app.model import next_cells, preview
from basilica_p2p.app.screenshot import NAMES, scripted_game
from basilica_p2p.app.widgets import Cathedral, MarketSlot, Question, ScoringScreen
from basilica_p2p.agent import Resign, TakeBack
from basilica_p2p.bots import RandomBot
from basilica_p2p.engine import (
    Game, Options, default_manifest, determinize, format_action, observe, parse_action, parse_manifest,
)
from basilica_p2p.engine import actions as A
from basilica_p2p.engine.observation import OrderFace
from basilica_p2p.identity import Identity
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.seat import ClocksChanged, GameOver
from basilica_p2p.lineclient import play_local
from support.replay_builders import key
from support.seat_events import Told, ask_for

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = default_manifest()
ME = Identity("ada", key(11))
BOT = Identity("random", key(12))
SIZE = (100, 32)


def short_manifest():  # type: ignore[no-untyped-def]
    """Two scorings after ten crowned vaults: a whole game in a few turns."""
    data = json.loads((ROOT / "protocol" / "manifest.json").read_text())
    data["name"] = "short test game"
    data["crown_spaces"] = [5, 10]
    return parse_manifest(json.dumps(data).encode())


async def until(pilot: Any, ready: Callable[[], bool], what: str, limit: float = 20.0) -> None:
    for _ in range(int(limit / 0.01)):
        if ready():
            return
        await pilot.pause(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def deciding(app: BasilicaApp) -> bool:
    return app.snap is not None and app.snap.deciding and not isinstance(app.screen, (ScoringScreen, Question))


def local_app(tmp_path: Path, manifest=MANIFEST, undo: bool = True):  # type: ignore[no-untyped-def]
    person = AppPlayer("ada", manifest, undo=undo)
    app = BasilicaApp(person, lambda: play_local(person, RandomBot(3), (ME, BOT), 0, manifest, Options(),  # type: ignore[arg-type]
                                                 tmp_path))
    return person, app


def test_a_whole_local_game_by_keyboard_with_every_scoring_kept_until_dismissed(tmp_path: Path) -> None:
    manifest = short_manifest()

    async def run() -> None:
        person, app = local_app(tmp_path, manifest)
        scorings_seen = 0
        async with app.run_test(size=SIZE) as pilot:
            for _ in range(300):
                await until(pilot, lambda: app.finished or deciding(app) or isinstance(app.screen, ScoringScreen),
                            "a decision, a scoring or the end")
                if isinstance(app.screen, ScoringScreen):
                    scorings_seen += 1
                    title = str(app.screen.query_one("#scoring-title").render())
                    assert re.match(rf"Scoring {len(app.snap.scorings)}: ada \+\d+, random \+\d+", title), title
                    await pilot.press("down", "x")  # other keys leave it open: only closing closes it
                    await pilot.pause(0.05)
                    assert isinstance(app.screen, ScoringScreen)
                    await pilot.press("escape")
                    continue
                if app.finished:
                    break
                await pilot.press("down", "enter")  # the first legal action: its preview, then played
            assert app.finished and app.error is None
            result = app.result
            assert result.game.over and result.forfeit is None
            assert scorings_seen >= 1
            decision = str(app.query_one("#decision").render())
            assert "Game over" in decision and "ada" in decision
            # After the game every scoring can be read again, the last one first.
            await pilot.press("s")
            assert isinstance(app.screen, ScoringScreen)
            assert app.screen.index == len(app.snap.scorings) - 1
            await pilot.press("left")
            assert app.screen.index == max(0, len(app.snap.scorings) - 2)
            await pilot.press("escape", "q")
        assert verify_file(result.replay, {manifest.hash: manifest}).ok

    asyncio.run(run())


def v_with_order(app: BasilicaApp) -> int:
    """A vault space whose order space above holds an order, with a legal placement."""
    snap = app.snap
    assert snap is not None and snap.view is not None
    for k in (1, 2, 3):
        if isinstance(snap.view.orders[k - 1], OrderFace) and any(t.startswith(f"V{k}:") for t in snap.legal):
            return k
    raise AssertionError("no vault space with an order above it")


def test_the_mouse_path_market_space_then_a_lit_cell_then_the_same_cell_again(tmp_path: Path) -> None:
    async def run() -> None:
        person, app = local_app(tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: deciding(app), "the first decision")
            k = v_with_order(app)
            order = app.snap.view.orders[k - 1]
            await pilot.click(f"#slot{k}", offset=(1, 3))  # the V line of the slot
            await pilot.pause()
            assert app.query_one("#notation").value == f"V{k}:"
            slot = app.query_one(f"#slot{k}", MarketSlot)
            assert f"goes w/ V{k}" in slot.render().plain  # the order above is marked as going with it
            cathedral = app.query_one(Cathedral)
            lit = sorted(cathedral.targets)
            assert lit and lit == sorted(next_cells(app.snap.legal, f"V{k}:"))
            cell = lit[0]
            await pilot.click(Cathedral, offset=cathedral.offset_of(cell))
            await pilot.pause()
            text = app.query_one("#notation").value
            assert text in app.snap.legal and parse_action(text).cell == cell
            shown = str(app.query_one("#preview").render())
            assert f"uses up O{k}'s" in shown and "You place" in shown
            plies = len(app.snap.view.history)
            await pilot.click(Cathedral, offset=cathedral.offset_of(cell))  # again: played
            await until(pilot, lambda: app.snap is not None and app.snap.view is not None
                        and len(app.snap.view.history) > plies, "the move to be played")
            entries = [e.text for e in app.snap.entries]
            assert any(e.startswith("You placed") and f"from V{k}" in e for e in entries)
            # The order that went with the vault is said where the next decision is made.
            assert any(f"O{k} is now" in e and "turned over" in e for e in entries), entries
            assert order is not None
            person.abandon()

    asyncio.run(run())


def test_the_preview_tells_the_move_the_pairing_and_a_scoring_before_it_is_played() -> None:
    g = Game.new(MANIFEST, Options(), bytes(32))
    obs = observe(g, g.to_move or 0)
    legal = g.legal_actions()
    vault = next(a for a in legal if a.kind == A.VAULT and isinstance(obs.orders[a.space - 1], OrderFace))
    said = preview(obs, vault, ["ada", "bob"], MANIFEST)
    face = obs.orders[vault.space - 1]
    assert said[0].startswith("You place a ") and f"from V{vault.space} on " in said[0]
    assert "placed" not in said[0]
    assert any(f"uses up O{vault.space}'s" in line and face.order.value.split("_")[0] in line for line in said)


def test_leaving_asks_first_and_is_a_forfeit(tmp_path: Path) -> None:
    async def run() -> None:
        person, app = local_app(tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: deciding(app), "the first decision")
            await pilot.press("q")
            assert isinstance(app.screen, Question) and "forfeit" in str(app.screen.query_one("Static").render())
            await pilot.press("n")
            assert not isinstance(app.screen, Question) and not app.finished
            await pilot.press("ctrl+c", "ctrl+c")  # a second Ctrl-C answers yes, as at the prompt
            await until(pilot, lambda: app.finished, "the forfeit")
        assert app.result.forfeit is not None and app.result.forfeit.reason == "left the game"
        assert app.result.forfeit.player == 0
        assert verify_file(app.result.replay, {MANIFEST.hash: MANIFEST}).ok

    asyncio.run(run())


def test_undo_raises_takeback_from_choose_and_the_log_goes_back(tmp_path: Path) -> None:
    """'u' at a later decision: choose answers TakeBack(1); told the earlier position again, the app
    forgets the moves after it."""
    person = AppPlayer("ada", MANIFEST, undo=True)
    raised: list[Any] = []
    g = Game.new(MANIFEST, Options(), bytes(32))
    told = Told(person, g, 0, NAMES)

    def work() -> None:
        while g.to_move != 0:
            told.apply(g.legal_actions()[0])
        first = len(g.history)
        told.apply(person.choose(told.ask()))  # type: ignore[arg-type]
        answer = person.choose(told.ask())
        if isinstance(answer, TakeBack):
            raised.append(answer)
            back = Game.new(MANIFEST, Options(), bytes(32))
            for old in g.history[:first]:
                back.apply(old)
            told.took_back(back, 0)
            person.choose(told.ask())

    async def run() -> None:
        app = BasilicaApp(person, work)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: deciding(app), "the first decision")
            assert not app.snap.can_undo  # nothing of ours to take back yet
            await pilot.press("u")
            await pilot.press("down", "enter")
            await until(pilot, lambda: deciding(app) and app.snap.can_undo, "the second decision")
            told = len(app.snap.entries)
            await pilot.press("u")
            await until(pilot, lambda: app.finished or (deciding(app) and not app.snap.can_undo), "the take-back")
            assert raised and isinstance(raised[0], TakeBack) and raised[0].moves == 1
            assert len(app.snap.entries) < told
            assert not any(e.text.startswith("You placed") or e.text.startswith("You took")
                           for e in app.snap.entries)
            person.abandon()

    asyncio.run(run())


def test_undo_is_not_offered_where_the_game_cannot_take_back(tmp_path: Path) -> None:
    async def run() -> None:
        person = AppPlayer("ada", MANIFEST, undo=False, network=True)
        app = BasilicaApp(person, lambda: scripted_game(person, 20))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.snap is not None and app.snap.deciding, "the decision")
            assert app.check_action("undo", ()) is False
            assert " u " not in str(app.query_one("#keys").render())
            person.abandon()

    asyncio.run(run())


def screen_text(app: BasilicaApp) -> str:
    svg = app.export_screenshot()
    return re.sub(r"terminal-\d+", "terminal", svg)


@pytest.mark.parametrize("viewer", ["player", "watcher"])
def test_nothing_hidden_is_drawn_two_games_alike_in_public_draw_alike(tmp_path: Path, viewer: str) -> None:
    """The same public position with another stack order and other crowns under the order faces:
    the screen must not change (it is drawn from the observation only), for a player at its
    decision and for someone watching (basilica watch)."""
    g = Game.new(MANIFEST, Options(), bytes(32))
    from basilica_p2p.bots import GreedyBot

    bots = (GreedyBot(MANIFEST, 1), GreedyBot(MANIFEST, 2))
    moves: list[tuple[int, int, str]] = []
    while len(moves) < 30 or g.to_move != 0:
        p = g.to_move or 0
        a = bots[p].choose(observe(g, p), g.legal_actions())
        moves.append((g.turn, p, format_action(a)))
        g.apply(a)
    import random

    rng = random.Random(5)

    def shuffle(items: list[int]) -> list[int]:
        out = list(items)
        rng.shuffle(out)
        return out

    other = determinize(observe(g, 0), MANIFEST, shuffle, bytes(range(32)))
    assert other.stack != g.stack  # the hidden part differs
    assert observe(other, 0) == observe(g, 0)

    async def draw(game: Game) -> str:
        return await (draw_for_player if viewer == "player" else draw_for_watcher)(game)

    async def draw_for_watcher(game: Game) -> str:
        from types import SimpleNamespace

        from basilica_p2p.seat import GameStarted

        watcher = AppPlayer("carol", watching=True)
        release = threading.Event()

        def work() -> None:
            tell = watcher.watch_game(SimpleNamespace(players=[[b"", NAMES[0]], [b"", NAMES[1]]]))
            tell(GameStarted(NAMES, 0, observe(game, 0), resumed=True))
            release.wait(20)

        app = BasilicaApp(watcher, work)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.snap is not None and app.snap.view is not None, "the first screen")
            await pilot.pause(0.05)
            text = screen_text(app)
            assert f"stack {len(game.stack)} top" in str(app.query_one("#players").render())
            release.set()
        return text

    async def draw_for_player(game: Game) -> str:
        person = AppPlayer("ada", MANIFEST)
        Told(person, game, 0, NAMES)

        def work() -> None:
            person.choose(ask_for(game, 0))

        app = BasilicaApp(person, work)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.snap is not None and app.snap.deciding, "the decision")
            app.query_one("#notation").cursor_blink = False  # the same picture whatever the timing
            await pilot.press("v", "1")
            await pilot.pause(0.05)
            text = screen_text(app)
            assert f"stack {len(game.stack)} top" in str(app.query_one("#players").render())
            person.abandon()
        return text

    async def run() -> None:
        one, two = await draw(g), await draw(other)
        assert one == two

    asyncio.run(run())


def test_undo_in_a_local_game_goes_back_and_the_replay_still_verifies(tmp_path: Path) -> None:
    async def run() -> None:
        person, app = local_app(tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: deciding(app), "the first decision")
            first = len(app.snap.view.history)
            await pilot.press("down", "enter")
            await until(pilot, lambda: deciding(app) and len(app.snap.view.history) > first, "the next decision")
            assert app.snap.can_undo and " u " in str(app.query_one("#keys").render())
            await pilot.press("u")
            await until(pilot, lambda: deciding(app) and len(app.snap.view.history) == first, "the take-back")
            assert any(e.text.startswith("Taken back to your decision in turn") for e in app.snap.entries)
            assert not any(e.ply > first and e.kind == "you" for e in app.snap.entries)
            await pilot.press("q", "y")
            await until(pilot, lambda: app.finished, "the forfeit")
        assert verify_file(app.result.replay, {MANIFEST.hash: MANIFEST}).ok

    asyncio.run(run())


def test_both_clocks_are_shown_and_the_running_one_counts_down(tmp_path: Path) -> None:
    from basilica_p2p.app.widgets import Clocks
    from basilica_p2p.clock import ClockView, TimeControl

    async def run() -> None:
        person = AppPlayer("ada", MANIFEST)
        app = BasilicaApp(person, lambda: scripted_game(person, 10))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.snap is not None and app.snap.deciding, "the decision")
            person.observe(ClocksChanged(ClockView(TimeControl(15, 10), (900.0, 12.5), running=1, names=NAMES, me=0)))
            await pilot.pause(0.05)
            shown = str(app.query_one(Clocks).render())
            assert "ada (you) 15:00" in shown and "greedy 0:12" in shown
            await pilot.pause(1.2)
            later = str(app.query_one(Clocks).render())
            assert "ada (you) 15:00" in later and "greedy 0:11" in later  # only the running clock moves
            person.abandon()

    asyncio.run(run())


def test_the_flag_falls_at_the_prompt_when_our_clock_runs_out() -> None:
    """A person who lets their clock run out at the prompt is not left at a dead prompt: the
    decision is answered at 0:00 and the local loop records the loss on time (a new player
    waited half a minute at 0:00.0 before this)."""
    import threading
    import time

    from basilica_p2p.clock import ClockView, TimeControl

    g = Game.new(MANIFEST, Options(), bytes(32))
    person = AppPlayer("ada", MANIFEST)
    seat = g.to_move
    assert seat is not None
    person.begin(seat, NAMES, MANIFEST)
    left = [60.0, 60.0]
    left[seat] = 0.3
    person.observe(ClocksChanged(ClockView(TimeControl(1, 0), (left[0], left[1]), running=seat, names=NAMES, me=seat)))
    legal = g.legal_actions()
    got: list[Any] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: got.append(person.choose(ask_for(g, seat))), daemon=True)
    worker.start()
    worker.join(10)
    assert got == [legal[0]] and time.monotonic() - started >= 0.3


def test_clocks_told_before_the_app_was_there_are_shown_when_it_starts(tmp_path: Path) -> None:
    from basilica_p2p.app.widgets import Clocks
    from basilica_p2p.clock import ClockView, TimeControl

    async def run() -> None:
        person = AppPlayer("ada", MANIFEST)
        person.observe(ClocksChanged(ClockView(TimeControl(15, 10), (900.0, 900.0), running=None, names=NAMES, me=0)))
        app = BasilicaApp(person, lambda: scripted_game(person, 10))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "15:00" in str(app.query_one(Clocks).render()), "the clocks on the first screen")
            person.abandon()

    asyncio.run(run())


def test_up_and_down_browse_the_whole_list_of_actions(tmp_path: Path) -> None:
    """The arrows once put the first action in the box, which cut the list to that one."""
    from textual.widgets import OptionList

    async def run() -> None:
        person, app = local_app(tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: deciding(app), "the first decision")
            listed = app.query_one("#choices", OptionList).option_count
            assert listed > 3
            for _ in range(3):
                await pilot.press("down")
            await pilot.pause(0.05)
            choices = app.query_one("#choices", OptionList)
            assert choices.option_count == listed and choices.highlighted == 2
            assert app._prefix() == choices.get_option_at_index(2).id
            await pilot.press("up")
            await pilot.pause(0.05)
            assert app._prefix() == choices.get_option_at_index(1).id and choices.option_count == listed
            person.abandon()

    asyncio.run(run())


def test_leaving_a_network_game_while_the_session_prints_shows_no_traceback() -> None:
    """Leaving a network game at our decision: the session says so through click (typer.echo to
    stderr), which Textual's print capture hands on as bytes; the app must take them as text."""
    import threading

    import typer

    stopped = threading.Event()
    g = Game.new(MANIFEST, Options(), bytes(32))
    seat = g.to_move
    assert seat is not None
    person = AppPlayer("ada", MANIFEST, network=True)
    person.stopper = stopped.set

    def work() -> None:
        person.begin(seat, NAMES, MANIFEST)
        answer = person.choose(ask_for(g, seat))
        if isinstance(answer, Resign):
            typer.echo(f"{answer.told}: we forfeit this game", err=True)  # as the session's log does

    class Nowhere:
        """Where a terminal app's captured prints go besides its widgets: a headless app writes them
        to the real stderr too, which refuses click's probe with bytes and so hid the fault."""

        def write(self, data: str | bytes) -> None:
            pass

        def flush(self) -> None:
            pass

    async def run() -> None:
        app = BasilicaApp(person, work)
        app._original_stderr = Nowhere()  # type: ignore[assignment]
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: deciding(app), "the decision")
            await pilot.press("q", "y")
            await until(pilot, lambda: app.finished, "the end of the game's thread")
            assert app.error is None
            told = "".join(line.text for line in app.query_one("#log").lines)  # the wrapped lines, joined
            assert "ada (player 1) left the game: we forfeit this game" in told, told

    asyncio.run(run())


def test_the_board_and_whose_turn_show_from_the_beginning_when_the_other_side_moves_first() -> None:
    """A network session begins the game with the board as it stands: the host's screen showed
    'waiting for the game to start' and an empty market until the other side's first move."""
    import threading

    g = Game.new(MANIFEST, Options(), bytes(32))
    other = g.to_move
    assert other is not None
    seat = 1 - other
    person = AppPlayer("ada", MANIFEST, network=True)
    release = threading.Event()

    def work() -> None:
        Told(person, g, seat, ("ada", "greedy") if seat == 0 else ("greedy", "ada"))
        release.wait(20)  # the other side thinks

    async def run() -> None:
        app = BasilicaApp(person, work)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.snap is not None and app.snap.view is not None, "the first screen")
            await pilot.pause(0.05)
            status = str(app.query_one("#status-text").render())
            assert "waiting for the game to start" not in status and "greedy" in status, status
            assert str(app.query_one("#decision").render()) == "Waiting for greedy..."
            assert "(the cathedral appears" not in app.query_one(Cathedral).render().plain
            slot = app.query_one("#slot1", MarketSlot).render().plain
            assert slot.splitlines()[-1].strip() != "V1"  # the vault on V1 is drawn
            release.set()

    asyncio.run(run())


def promote_game(person: AppPlayer | None = None) -> tuple[Game, str]:
    """A game (two random bots, fixed seeds) up to player 1's decision where a PROMOTE order may
    give a builder any of the four ranks, after a vault taken earlier in that turn (its note is
    shown too); and that order's target, as notation.  Every move is told to ``person``."""
    g = Game.new(MANIFEST, Options(), bytes([1]) * 32)
    bots = (RandomBot(1), RandomBot(101))
    told = Told(person, g, 0, NAMES) if person is not None else None
    while not g.over:
        p = g.to_move or 0
        texts = [format_action(a) for a in g.legal_actions()]
        ranked = [t for t in texts if re.match(r"O[1-3]:[a-e][0-9]+=", t)]
        for head in dict.fromkeys(t.split("=")[0] for t in ranked):
            if p == 0 and len([t for t in ranked if t.startswith(head + "=")]) == 4:
                return g, head
        action = bots[p].choose(observe(g, p), g.legal_actions())
        if told is not None:
            told.apply(action)
        else:
            g.apply(action)
    raise AssertionError("no PROMOTE with four ranks in this game")


def shown_whole(app: BasilicaApp, selector: str) -> bool:
    """Whether the widget is drawn whole on the screen: not cut by its panel or the screen's edge."""
    widget = app.query_one(selector)
    region = widget.region
    return region.height > 0 and app.screen.region.contains_region(region) and all(
        ancestor.region.contains_region(region) for ancestor in widget.ancestors[:-2] if ancestor.region.height)


def test_every_rank_of_a_promote_is_in_sight_or_a_scroll_away() -> None:
    """PROMOTE listed =A, =M and =S; =J was cut off below the panel, with no scroll bar."""
    from textual.widgets import OptionList

    _, head = promote_game()
    person = AppPlayer("ada", MANIFEST)

    def work() -> None:
        g, _ = promote_game(person)
        person.choose(ask_for(g, 0))

    async def run() -> None:
        app = BasilicaApp(person, work)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: deciding(app), "the decision")
            app.query_one("#notation").value = head + "="
            await pilot.pause(0.1)
            choices = app.query_one("#choices", OptionList)
            assert [choices.get_option_at_index(i).id for i in range(choices.option_count)] == \
                [f"{head}={r}" for r in "AMSJ"]
            assert app.snap.notes  # what the vault taken this turn changed: a line more above the list
            assert shown_whole(app, "#choices")
            # Every option in sight, or a scroll bar that says there is more.
            assert choices.scrollable_content_region.height >= choices.option_count or \
                choices.show_vertical_scrollbar
            person.abandon()

    asyncio.run(run())


SMALL = (80, 24)


def scripted(plies: int = 40) -> tuple[AppPlayer, BasilicaApp]:
    person = AppPlayer(NAMES[0], MANIFEST, undo=True)
    return person, BasilicaApp(person, lambda: scripted_game(person, plies))


async def at_the_decision(pilot: Any, app: BasilicaApp) -> None:
    """Until the scripted game's decision, past the scoring panel it opens first."""
    await until(pilot, lambda: app.snap is not None and app.snap.deciding, "the decision")
    await pilot.press("escape")


def test_at_80x24_lit_cells_leave_both_supplies_and_the_stack_in_view() -> None:
    """When a vault space was picked the board gained a row and pushed the other player's
    supply line and the stack line out of view."""
    from basilica_p2p.app.widgets import Players

    async def run() -> None:
        person, app = scripted()
        async with app.run_test(size=SMALL) as pilot:
            await at_the_decision(pilot, app)
            lit = False
            for keys in ([], ["v", "2"], ["c", "2"]):  # nothing picked, cells lit, a whole action
                await pilot.press(*keys)
                await pilot.pause(0.1)
                lit = lit or bool(app.query_one(Cathedral).targets)
                players = app.query_one(Players)
                text = str(players.render())
                assert text.count("coins") == 2 and "stack" in text
                assert players.region.height == len(text.splitlines())
                for part in ("#players", "#track", "#confirm", "#notation", "#choices"):
                    assert shown_whole(app, part), (keys, part)
            assert lit
            person.abandon()

    asyncio.run(run())


def test_at_80x24_confirm_plays_the_action_the_preview_shows() -> None:
    """A click meant for Confirm landed on text: the box and Confirm keep their place and stay in view."""
    async def run() -> None:
        person, app = scripted()
        async with app.run_test(size=SMALL) as pilot:
            await at_the_decision(pilot, app)
            confirm_at = app.query_one("#confirm").region
            action = next(t for t in app.snap.legal if t.startswith("V"))
            app.query_one("#notation").value = action
            await pilot.pause(0.1)
            assert "You place" in str(app.query_one("#preview").render())
            assert app.query_one("#confirm").region == confirm_at  # the preview grew; Confirm did not move
            await pilot.click("#confirm")
            await until(pilot, lambda: app.finished, "the action to be played")
            assert app.result == parse_action(action)  # what the scripted game's decision returned

    asyncio.run(run())


def test_at_80x24_the_keys_line_is_whole_with_undo_offered(tmp_path: Path) -> None:
    async def run() -> None:
        person, app = local_app(tmp_path)
        async with app.run_test(size=SMALL) as pilot:
            await until(pilot, lambda: deciding(app), "the first decision")
            first = len(app.snap.view.history)
            await pilot.press("down", "enter")
            await until(pilot, lambda: deciding(app) and len(app.snap.view.history) > first, "the next decision")
            await pilot.pause(0.05)
            keys = app.query_one("#keys").render()
            assert "start over" in keys.plain and " u " in keys.plain, keys.plain
            assert len(keys.plain) <= SMALL[0], keys.plain
            person.abandon()

    asyncio.run(run())


def test_the_help_wraps_each_line_under_its_own_text_and_says_esc_closes_it() -> None:
    from basilica_p2p.app.app import KEYS
    from basilica_p2p.app.widgets import Page, TextScreen

    async def run() -> None:
        person, app = scripted()
        async with app.run_test(size=SMALL) as pilot:
            await at_the_decision(pilot, app)
            await pilot.press("question_mark")
            await pilot.pause(0.1)
            assert isinstance(app.screen, TextScreen)
            page = app.screen.query_one(Page)
            shown = page.render().plain.splitlines()
            source = page.text.plain.splitlines()
            assert max(len(line) for line in shown) <= page.size.width
            assert len(shown) > len(source)  # some lines were wrapped at this width
            for line in shown:  # a line at column 0 is one that starts there in the text
                if line and not line.startswith(" "):
                    assert any(s.startswith(line.rstrip()) for s in source), line
            first = KEYS.splitlines()[1]  # "  click V1-V3      place that vault (then click ...)"
            at = next(i for i, line in enumerate(shown) if line.startswith(first[:18]))
            assert shown[at + 1].startswith(" " * first.index("place")), shown[at:at + 2]
            said = " ".join(str(w.render()) for w in app.screen.query(Static))
            assert "Esc" in said and "closes" in said
            await pilot.press("escape")
            await pilot.press("l")
            await pilot.pause(0.05)
            assert isinstance(app.screen, TextScreen)
            said = " ".join(str(w.render()) for w in app.screen.query(Static))
            assert "Esc" in said and "closes" in said
            person.abandon()

    asyncio.run(run())


def test_a_local_game_begins_once_the_app_is_there_so_no_clock_runs_before(tmp_path: Path) -> None:
    """A 1-minute game showed 0:56 on its first screen: the game, and the first decision's
    clock, ran while the app was starting.  Four seconds pass (on the game's clock) before
    the app is shown; the person's first decision must still leave the whole minute."""
    from basilica_p2p.app import run_in_app
    from basilica_p2p.clock import TimeControl
    from basilica_p2p.replay.file import read_replay
    from basilica_p2p.wire import open_envelope

    now = [0.0]
    person = AppPlayer("ada", MANIFEST, undo=True)
    seen: dict[str, bool] = {}

    def work() -> Any:
        return play_local(person, RandomBot(3), (ME, BOT), 0, MANIFEST, Options(), tmp_path,  # type: ignore[arg-type]
                          clock=TimeControl(1, 0), now=lambda: now[0])

    def show(app: BasilicaApp) -> None:
        seen["begun before the app"] = person.begun.is_set()
        now[0] += 4.0  # the app takes its time to start

        async def drive() -> None:
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: deciding(app), "the first decision")
                ours = len([e for e in app.snap.entries if e.kind == "you"])
                await pilot.press("down", "enter")
                await until(pilot, lambda: len([e for e in app.snap.entries if e.kind == "you"]) > ours,
                            "our first move told")
                await pilot.press("q", "y")
                await until(pilot, lambda: app.finished, "the forfeit")

        asyncio.run(drive())

    result = run_in_app(person, work, show)
    assert seen["begun before the app"] is False
    replay = read_replay(result.replay)
    ours = next(e for e in map(open_envelope, replay.records) if e.type == "action" and e.sender == ME.public)
    assert ours.body["clock"] == 60_000  # the whole minute left after a decision that took no time


def test_clocks_handed_on_late_count_from_when_the_game_showed_them(tmp_path: Path) -> None:
    """The clocks told before the app was there were counted down from when the app got them,
    so a running clock showed more time than it had."""
    import time

    from basilica_p2p.app.widgets import Clocks
    from basilica_p2p.clock import ClockView, TimeControl

    async def run() -> None:
        person = AppPlayer("ada", MANIFEST)
        person.observe(ClocksChanged(ClockView(TimeControl(1, 0), (30.0, 60.0), running=0, names=NAMES, me=0)))
        person._clocks_at = time.monotonic() - 10.0  # shown by the game ten seconds before the app
        app = BasilicaApp(person, lambda: scripted_game(person, 10))
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "greedy 1:00" in str(app.query_one(Clocks).render()), "the clocks")
            shown = str(app.query_one(Clocks).render())
            m = re.search(r"ada \(you\) 0:(\d+)", shown)
            assert m is not None and int(m.group(1)) <= 20, shown  # not the 0:30 it had ten seconds before
            person.abandon()

    asyncio.run(run())


def test_after_a_loss_on_time_the_box_says_the_game_is_over_and_the_notice_hides_nothing_needed() -> None:
    """The box still said 'click a market space' after the game, and the 'Game over' notice
    covered the status line."""
    from textual.widgets._toast import Toast

    from basilica_p2p.clock import TimeClaim
    from basilica_p2p.referee import Outcome

    g = Game.new(MANIFEST, Options(), bytes(32))

    async def run(size: tuple[int, int]) -> None:
        person = AppPlayer("ada", MANIFEST)

        def work() -> Any:
            Told(person, g, 0, NAMES)
            claim = TimeClaim(0, 60_000, 60_000, 60_500)
            person.observe(GameOver(Outcome((0, 0), 1, "time", 0, claimed_by=1, time=claim)))

        app = BasilicaApp(person, work)
        async with app.run_test(size=size, notifications=True) as pilot:
            await until(pilot, lambda: app.finished and bool(app.screen.query(Toast)), "the notice")
            await pilot.pause(0.2)
            box = app.query_one("#notation")
            assert "game is over" in box.placeholder and "market" not in box.placeholder
            decision = str(app.query_one("#decision").render())
            assert decision.startswith("Your clock ran out. greedy wins on time."), decision
            assert str(app.query_one("#preview").render()).startswith("(greedy measured 1:00 left")
            told = [e.text for e in app.snap.entries]
            assert told[-2:] == ["Your clock ran out. greedy wins on time.",
                                 "(greedy measured 1:00 left and waited 1:00; ada's own last signed figure "
                                 "was 1:00)"], told
            toast = app.screen.query_one(Toast)
            for needed in ("#status", "#decision", "#market", "#notation", "#board"):
                assert not toast.region.overlaps(app.query_one(needed).region), (size, needed)

    for size in (SIZE, SMALL):
        asyncio.run(run(size))


def test_the_box_says_q_leaves_only_once_the_session_is_over() -> None:
    """A network game's end takes a moment (the last messages, the question of another game on
    its way; longer through a relay): the box said 'q leaves' from the game's end, and q then
    asked whether to stop the session for 'basilica resume', of a game that was over."""
    from basilica_p2p.referee import Outcome

    g = Game.new(MANIFEST, Options(), bytes(32))
    person = AppPlayer("ada", MANIFEST, network=True)
    ending = threading.Event()

    def work() -> None:
        Told(person, g, 0, NAMES)
        person.observe(GameOver(Outcome((3, 5), 1, "last-scoring", 40)))
        ending.wait(20)  # the session's last messages

    async def run() -> None:
        app = BasilicaApp(person, work)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.snap is not None and bool(app.snap.result), "the result")
            await pilot.pause(0.1)
            box = app.query_one("#notation", Input)
            assert "game is over" in box.placeholder and "q leaves" not in box.placeholder, box.placeholder
            ending.set()
            await until(pilot, lambda: app.finished, "the session's end")
            await pilot.pause(0.1)
            assert box.placeholder.startswith("the game is over: q leaves"), box.placeholder
            await pilot.press("q")  # now it leaves, asking nothing
            assert not isinstance(app.screen, Question)
            await until(pilot, lambda: not app.is_running, "the app's end")

    asyncio.run(run())


def test_an_app_that_fails_still_leaves_the_game_a_finished_forfeit(tmp_path: Path) -> None:
    """The app's end by an error (its terminal or page gone) skipped the forfeit: the replay was
    left unfinished.  An app that closes before the game began leaves no game at all."""
    import pytest

    from basilica_p2p.app import run_in_app

    person = AppPlayer("ada", MANIFEST, undo=True)

    def work() -> Any:
        return play_local(person, RandomBot(3), (ME, BOT), 0, MANIFEST, Options(), tmp_path / "a")  # type: ignore[arg-type]

    def fails(app: BasilicaApp) -> None:
        async def drive() -> None:
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: deciding(app), "the first decision")
            raise BrokenPipeError("the page went away")

        asyncio.run(drive())

    with pytest.raises(BrokenPipeError):
        run_in_app(person, work, fails)
    files = list((tmp_path / "a").glob("*.replay"))
    assert len(files) == 1 and verify_file(files[0], {MANIFEST.hash: MANIFEST}).ok
    assert "resigned: closed the game window" in verify_file(files[0], {MANIFEST.hash: MANIFEST}).line()

    never = AppPlayer("ada", MANIFEST, undo=True)
    assert run_in_app(never, lambda: play_local(never, RandomBot(3), (ME, BOT), 0, MANIFEST, Options(),  # type: ignore[arg-type]
                                                tmp_path / "b"), lambda app: None) is None
    assert not (tmp_path / "b").exists()


def test_the_app_counts_down_a_peer_that_went_away_while_the_person_still_decides() -> None:
    """Issue 20: the other side of a network game went away during our decision: the status bar
    counts down its window, a notice says it once, the decision stays open, and its return puts
    the board's status back."""
    from textual.widgets._toast import Toast

    from basilica_p2p.seat import PeerAway, PeerBack

    g = Game.new(MANIFEST, Options(), bytes(32))
    person = AppPlayer("ada", MANIFEST, network=True)
    seat = g.to_move or 0

    def work() -> Any:
        Told(person, g, seat, NAMES)
        return person.choose(ask_for(g, seat))

    async def run() -> None:
        app = BasilicaApp(person, work)
        async with app.run_test(size=SIZE, notifications=True) as pilot:
            await until(pilot, lambda: deciding(app), "the decision")
            # As the session's watcher tells it, from the game's thread, while the person thinks.
            person.observe(PeerAway("greedy", 120.0, first=True, why="the connection ended"))
            person.observe(PeerAway("greedy", 110.0))
            await until(pilot, lambda: app.snap is not None and "110 s left" in app.snap.away, "the countdown")
            await pilot.pause(0.1)
            assert str(app.query_one("#status-text").render()) == "Waiting for greedy to come back: 110 s left."
            toasts = app.screen.query(Toast)
            assert len(toasts) == 1 and "has gone" in str(toasts.first().render())
            assert deciding(app)  # the decision is still open
            person.observe(PeerBack("greedy"))
            await until(pilot, lambda: app.snap is not None and not app.snap.away, "the return")
            await pilot.pause(0.1)
            assert "Waiting for greedy" not in str(app.query_one("#status-text").render())
            assert deciding(app)
            assert [e.text for e in app.snap.entries if "greedy" in e.text][-1] == "greedy is back: the game goes on."
            person.abandon()

    asyncio.run(run())


def test_chat_in_the_app_t_writes_a_line_enter_sends_it_and_m_hides_the_other_players() -> None:
    from basilica_p2p.seat import ChatSaid

    g = Game.new(MANIFEST, Options(), bytes(32))
    seat = g.to_move
    assert seat is not None
    person = AppPlayer("ada", MANIFEST, network=True)
    sent: list[str] = []
    release = threading.Event()

    def say(text: str) -> str | None:
        sent.append(text)
        return None if len(sent) == 1 else "bob's side takes no chat"

    def work() -> None:
        person.begin(seat, ("ada", "bob") if seat == 0 else ("bob", "ada"), MANIFEST)
        person.open_chat(say)
        person.observe(ChatSaid(1 - seat, "hello ada", 2, 0))
        release.wait(20)
        person.observe(ChatSaid(1 - seat, "a muted line", 2, 1))
        release.clear()
        release.wait(20)

    def log_text(app: BasilicaApp) -> str:
        return "".join(line.text for line in app.query_one("#log").lines)

    async def run() -> None:
        app = BasilicaApp(person, work)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "bob: hello ada" in log_text(app), "the other player's line")
            assert app.query_one("#chat").display
            await pilot.press("t")
            assert app.focused is app.query_one("#chat")
            await pilot.press(*"gl hf", "enter")
            await until(pilot, lambda: sent == ["gl hf"], "the line sent")
            assert app.focused is app.query_one("#notation")  # back to the game
            await pilot.press("t", *"more", "enter")
            await until(pilot, lambda: any("takes no chat" in str(n.message) for n in app._notifications),
                        "why the second line was not sent")
            await pilot.press("m")
            release.set()
            await until(pilot, lambda: not release.is_set(), "the muted line told")
            await pilot.pause(0.1)
            assert "a muted line" not in log_text(app) and "a muted line" in "".join(
                e.text for e in person.snapshot().entries)  # hidden, still kept
            release.set()

    asyncio.run(run())


def test_a_local_game_has_no_chat_box_and_t_says_why() -> None:
    g = Game.new(MANIFEST, Options(), bytes(32))
    seat = g.to_move
    assert seat is not None
    person = AppPlayer("ada", MANIFEST)
    release = threading.Event()

    def work() -> None:
        person.begin(seat, NAMES, MANIFEST)
        release.wait(20)

    async def run() -> None:
        app = BasilicaApp(person, work)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.snap is not None, "the first screen")
            assert not app.query_one("#chat").display
            await pilot.press("t")
            await until(pilot, lambda: any("Chat is for network games" in str(n.message) for n in app._notifications),
                        "the note")
            release.set()

    asyncio.run(run())
