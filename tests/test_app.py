"""The full-screen app (basilica_p2p/app), driven by Textual's own test pilot.

Local games run as `basilica play` runs them (tui.local.play_local, signed
replay and all) in the app's worker thread; the fixed positions come from
basilica_p2p.app.screenshot.scripted_game.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any


from basilica_p2p.app import AppPlayer, BasilicaApp
from basilica_p2p.app.model import next_cells, preview
from basilica_p2p.app.screenshot import NAMES, scripted_game
from basilica_p2p.app.widgets import Cathedral, MarketSlot, Question, ScoringScreen
from basilica_p2p.bots import RandomBot, TakeBack
from basilica_p2p.engine import (
    Game, Options, default_manifest, determinize, format_action, observe, parse_action, parse_manifest,
)
from basilica_p2p.engine import actions as A
from basilica_p2p.engine.observation import OrderFace
from basilica_p2p.identity import Identity
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.tui import Resign, play_local
from replay_builders import key

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
        assert isinstance(app.result.forfeit, Resign)
        assert app.result.forfeit.player == 0
        assert verify_file(app.result.replay, {MANIFEST.hash: MANIFEST}).ok

    asyncio.run(run())


def test_undo_raises_takeback_from_choose_and_the_log_goes_back(tmp_path: Path) -> None:
    """'u' at a later decision: choose raises TakeBack(1); told the earlier position again, the app
    forgets the moves after it."""
    person = AppPlayer("ada", MANIFEST, undo=True)
    raised: list[BaseException] = []
    g = Game.new(MANIFEST, Options(), bytes(32))
    person.begin_game(0, NAMES, MANIFEST)

    def work() -> None:
        while g.to_move != 0:
            p = g.to_move or 0
            a = g.legal_actions()[0]
            turn = g.turn
            g.apply(a)
            person.notify(g, turn, p, format_action(a))
        first = len(g.history)
        a = person.choose(observe(g, 0), g.legal_actions())
        turn = g.turn
        g.apply(a)
        person.notify(g, turn, 0, format_action(a))
        try:
            person.choose(observe(g, 0), g.legal_actions())
        except TakeBack as e:
            raised.append(e)
            back = Game.new(MANIFEST, Options(), bytes(32))
            for old in g.history[:first]:
                back.apply(old)
            person.took_back(back)
            person.choose(observe(back, 0), back.legal_actions())

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


def test_nothing_hidden_is_drawn_two_games_alike_in_public_draw_alike(tmp_path: Path) -> None:
    """The same public position with another stack order and other crowns under the order faces:
    the screen must not change (it is drawn from the observation only)."""
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
        person = AppPlayer("ada", MANIFEST)
        person.begin_game(0, NAMES, MANIFEST)
        person.view = observe(game, 0)

        def work() -> None:
            person.choose(observe(game, 0), game.legal_actions())

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
            assert any(e.text == "Taken back to your previous decision." for e in app.snap.entries)
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
            person.show_clocks(ClockView(TimeControl(15, 10), (900.0, 12.5), running=1, names=NAMES, me=0))
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
    person.begin_game(g.to_move, NAMES, MANIFEST)  # type: ignore[arg-type]
    seat = g.to_move
    assert seat is not None
    left = [60.0, 60.0]
    left[seat] = 0.3
    person.show_clocks(ClockView(TimeControl(1, 0), (left[0], left[1]), running=seat, names=NAMES, me=seat))
    legal = g.legal_actions()
    got: list[Any] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: got.append(person.choose(observe(g, seat), legal)), daemon=True)
    worker.start()
    worker.join(10)
    assert got == [legal[0]] and time.monotonic() - started >= 0.3


def test_a_game_that_ends_without_a_last_move_says_how_it_ended() -> None:
    from types import SimpleNamespace

    from basilica_p2p.app.app import ending_words
    from basilica_p2p.clock import TimeClaim

    claim = TimeClaim(0, 0, 44_000, 1_000)
    assert ending_words(SimpleNamespace(on_time=claim, forfeit=None), ("ada", "greedy")).startswith(
        "Game over: greedy wins on time: ada's clock ran out")
    gone = Resign("ada", 0, "left the game")
    assert ending_words(SimpleNamespace(on_time=None, forfeit=gone), ("ada", "greedy")) == \
        "Game over: greedy wins by forfeit (left the game)"
    outcome = SimpleNamespace(end="time", winner=0)
    assert ending_words([SimpleNamespace(outcome=outcome)], ("ada", "bob")) == \
        "Game over: ada wins on time: bob's clock ran out"
    assert ending_words(SimpleNamespace(on_time=None, forfeit=None), ("ada", "bob")) == ""


def test_clocks_told_before_the_app_was_there_are_shown_when_it_starts(tmp_path: Path) -> None:
    from basilica_p2p.app.widgets import Clocks
    from basilica_p2p.clock import ClockView, TimeControl

    async def run() -> None:
        person = AppPlayer("ada", MANIFEST)
        person.show_clocks(ClockView(TimeControl(15, 10), (900.0, 900.0), running=None, names=NAMES, me=0))
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
        person.begin_game(seat, NAMES, MANIFEST)
        try:
            person.choose(observe(g, seat), g.legal_actions())
        except Resign as e:
            typer.echo(f"{e}: we forfeit this game", err=True)  # as the session's log does

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
        person.begin_game(seat, ("ada", "greedy") if seat == 0 else ("greedy", "ada"), MANIFEST, observe(g, seat))
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
