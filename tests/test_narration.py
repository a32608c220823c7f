"""One narration for both screens (basilica_p2p/narration.py): what a seat's events say to a person."""

from __future__ import annotations

import io

from rich.console import Console

from basilica_p2p.app import AppPlayer
from basilica_p2p.bots import GreedyBot
from basilica_p2p.clock import TimeClaim
from basilica_p2p.engine import Game, Options, default_manifest, observe
from basilica_p2p.narration import LineKind, Narrator
from basilica_p2p.referee import Outcome
from basilica_p2p.seat import GameOver, GameStarted
from basilica_p2p.lineclient import TerminalPlayer
from support.seat_events import Told

MANIFEST = default_manifest()
NAMES = ("ada", "greedy")


def over(outcome: Outcome, seat: int = 0) -> list[tuple[str, LineKind]]:
    return [(line.text, line.kind) for line in Narrator(seat, NAMES).tell(GameOver(outcome))]


def test_a_loss_on_time_is_said_as_a_person_would_the_figures_apart() -> None:
    """It read 'greedy wins on time: root's clock ran out (greedy measured 1:00 left and ...)'."""
    claim = TimeClaim(0, 60_000, 60_000, 60_500)
    outcome = Outcome((3, 4), 1, "time", 20, claimed_by=1, time=claim)
    assert over(outcome, 0) == [
        ("Your clock ran out. greedy wins on time.", LineKind.RESULT),
        ("(greedy measured 1:00 left and waited 1:00; ada's own last signed figure was 1:00)", LineKind.DETAIL)]
    assert over(outcome, 1)[0] == ("ada's clock ran out. You win on time.", LineKind.RESULT)


def test_a_forfeit_says_who_gave_up_and_why() -> None:
    resigned = Outcome((0, 0), 1, "forfeit", 4, "left the game", claimed_by=0)
    assert over(resigned, 0) == [("Game over: You resigned (left the game): greedy wins by forfeit.", LineKind.RESULT)]
    claimed = Outcome((0, 0), 0, "forfeit", 4, "did not come back within 120 s", claimed_by=0)
    assert over(claimed, 0) == [("Game over: greedy forfeited (did not come back within 120 s): you win by "
                                 "forfeit.", LineKind.RESULT)]


def test_the_end_on_the_board_names_the_winner_and_the_reader() -> None:
    assert over(Outcome((12, 8), 0, "last-scoring", 60), 1) == [
        ("Game over after the last scoring: ada 12, greedy (you) 8: ada wins.", LineKind.RESULT)]
    assert over(Outcome((5, 5), None, "stack", 60), 0)[0][0] == \
        "Game over (the stack ran out twice): ada (you) 5, greedy 5: a shared victory."


def test_who_moves_first_is_said_once_and_not_when_a_game_is_resumed() -> None:
    g = Game.new(MANIFEST, Options(), bytes(32))
    first = g.to_move
    assert first is not None
    n = Narrator(first, NAMES)
    assert [line.text for line in n.tell(GameStarted(NAMES, first, observe(g, first)))] == ["You move first."]
    n = Narrator(1 - first, NAMES)
    assert [line.text for line in n.tell(GameStarted(NAMES, first, observe(g, 1 - first)))] == \
        [f"{NAMES[first]} moves first."]
    assert "moves first" not in n.tell(GameStarted(NAMES, first, observe(g, 1 - first), resumed=True))[0].text


def test_both_screens_tell_a_game_in_the_same_words() -> None:
    """The app and the line client had drifted apart (the first mover, the result line)."""
    app = AppPlayer("ada", MANIFEST)
    line = TerminalPlayer("ada", console=Console(width=80, file=io.StringIO(), no_color=True), inp=io.StringIO())
    games = [Game.new(MANIFEST, Options(), bytes(32)) for _ in range(2)]
    bots = (GreedyBot(MANIFEST, 1), GreedyBot(MANIFEST, 2))
    tellers = [Told(agent, g, 0, NAMES) for agent, g in zip((app, line), games)]
    while not games[0].over:
        p = games[0].to_move
        assert p is not None
        action = bots[p].choose(observe(games[0], p), games[0].legal_actions())
        for teller in tellers:
            teller.apply(action)
    app_said = [e.text for e in app.snapshot().entries]
    # The line client adds its own hint to a scoring's headline ('score' shows it again).
    line_said = [t.replace(" (type 'score' to see it again, 'scorings' for all)", "") for t in line.log]
    assert app_said == line_said and len(app_said) > 60
    assert app_said[-1].startswith("Game over after the last scoring: ada (you) ")


def test_a_peer_that_went_away_is_counted_down_and_its_return_said_on_both_screens() -> None:
    """Issue 20: both screens tell the wait for a peer that went away, the countdown, its return,
    and a decision's time running short, in the same words."""
    from basilica_p2p.seat import PeerAway, PeerBack, TimeWarning

    events = [PeerAway("greedy", 120.0, first=True, why="the connection ended"), PeerAway("greedy", 110.0),
              PeerAway("greedy", 10.0), PeerBack("greedy"), TimeWarning(0, 60.0), TimeWarning(1, 60.0)]
    app = AppPlayer("ada", MANIFEST)
    line = TerminalPlayer("ada", console=Console(width=80, file=io.StringIO(), no_color=True), inp=io.StringIO())
    for agent in (app, line):
        agent.begin(0, NAMES, MANIFEST)
        for event in events:
            agent.observe(event)
    expected = [
        "greedy has gone (the connection ended). Waiting up to 120 s for them to come back (they run 'basilica "
        "resume' if their program stopped); after that the game is yours.",
        "Waiting for greedy to come back: 110 s left.",
        "Waiting for greedy to come back: 10 s left.",
        "greedy is back: the game goes on.",
        "You have 60 s left for this decision; after that the game is lost.",
        "greedy has 60 s left for this decision; after that the game is yours.",
    ]
    assert [e.text for e in app.snapshot().entries][-6:] == expected
    assert line.log[-6:] == expected
