"""Snapshot tests of the app (pytest-textual-snapshot): fixed game, fixed size, stored SVGs.

The position is a fixed greedy game (basilica_p2p.app.screenshot.scripted_game);
update the stored pictures with ``python -m pytest tests/test_app_snapshots.py --snapshot-update``
after a deliberate change, and look at them before committing.
"""

from __future__ import annotations

from typing import Any

import pytest

from basilica_p2p.app import AppPlayer, BasilicaApp
from basilica_p2p.app.screenshot import NAMES, SIZE, scripted_game
from basilica_p2p.engine import default_manifest


def scripted_app(plies: int = 40) -> BasilicaApp:
    person = AppPlayer(NAMES[0], default_manifest(), undo=True)
    return BasilicaApp(person, lambda: scripted_game(person, plies))


async def at_decision(pilot: Any) -> None:
    """Until the decision is on screen and the log has settled at its end (it scrolls once its
    lines are wrapped), so that the picture does not depend on timing."""
    from textual.widgets import RichLog

    app = pilot.app
    app.query_one("#notation").cursor_blink = False  # a blinking cursor would be in half the pictures
    settled = 0
    for _ in range(1000):
        log = app.screen_stack[0].query_one(RichLog)  # under a scoring panel too
        ready = app.snap is not None and app.snap.deciding and log.scroll_y == log.max_scroll_y > 0
        settled = settled + 1 if ready else 0
        if settled >= 5:
            return
        await pilot.pause(0.02)
    raise AssertionError(f"the scripted game never came to a settled decision: deciding "
                         f"{app.snap is not None and app.snap.deciding}, log at {log.scroll_y} of {log.max_scroll_y}")


@pytest.mark.parametrize(("keys", "size"), [
    pytest.param([], SIZE, id="scoring-panel"),  # the scorings so far, open until dismissed
    pytest.param(["escape", "v", "2"], SIZE, id="vault-space-picked"),  # targets lit, O2 marked as going with V2
    pytest.param(["escape", "v", "2", "c", "2"], SIZE, id="preview"),  # a whole action: what it will do
    pytest.param(["escape", "question_mark"], SIZE, id="help"),
    pytest.param(["escape"], (80, 24), id="smallest-terminal"),
])
def test_screens(snap_compare: Any, keys: list[str], size: tuple[int, int]) -> None:
    assert snap_compare(scripted_app(), press=keys, terminal_size=size, run_before=at_decision)
