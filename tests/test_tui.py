"""The terminal client: screens, descriptions, the prompt, and `basilica play`."""

from __future__ import annotations

import io
import random
import re
import threading
from pathlib import Path

import pytest
import trio
from rich.console import Console

from basilica_p2p.bots import GreedyBot, RandomBot
from basilica_p2p.engine import Game, Options, Ruleset, default_manifest, determinize, format_action, observe
from basilica_p2p.engine import actions as A
from basilica_p2p.identity import Identity
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.agent import AgentBase, Decision, Traits
from basilica_p2p.seat import Ask, ChatSaid, GameStarted, MoveApplied, SeatEvent
from support.seat_events import ask_for
from basilica_p2p.lineclient import TerminalPlayer, play_local
from basilica_p2p.describe import describe_action
from basilica_p2p.drawing import board_lines
from basilica_p2p.rules_help import RULES, rules_text
from support.replay_builders import key

MANIFEST = default_manifest()
ME = Identity("ada", key(11))
BOT = Identity("greedy", key(12))


def text_of(lines) -> str:  # type: ignore[no-untyped-def]
    console = Console(width=80, file=io.StringIO(), no_color=True, highlight=False)
    for line in lines:
        console.print(line, overflow="crop", no_wrap=True)
    return console.file.getvalue()  # type: ignore[attr-defined]


def played(n: int, seed: bytes = bytes(32), options: Options = Options()) -> Game:
    g = Game.new(MANIFEST, options, seed)
    bots = (GreedyBot(MANIFEST, 1), GreedyBot(MANIFEST, 2))
    for _ in range(n):
        if g.over:
            break
        p = g.to_move
        assert p is not None
        g.apply(bots[p].choose(observe(g, p), g.legal_actions()))
    return g


@pytest.mark.parametrize("plies", [0, 7, 40, 90])
def test_the_screen_fits_80_columns_and_shows_what_the_observation_holds(plies: int) -> None:
    g = played(plies)
    obs = observe(g, 0)
    out = text_of(board_lines(obs, ["ada", "bob"]))
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert len(lines) <= 17
    assert f"turn {g.turn}" in lines[0]
    for k, face in enumerate(obs.orders, start=1):  # the market: O1-O3 and V1-V3
        assert face is None or re.search(rf"O{k} \S", out)
    assert "V1 " in out and "V2 " in out and "V3 " in out
    assert f"stack {len(g.stack)}" in out and f"discard {len(g.discard)}" in out
    assert f"score {g.scores[0]:>3}" in out and f"coins {g.coins[1]}" in out
    for _, p, r in obs.builders:  # every builder, with its owner (and rank letter)
        assert re.search(rf"{p + 1}{'AMSJ'[r - 1] if r else ''}", out)
    assert out.count("^") >= sum(1 for _, f in obs.vaults if f.crown)


def test_the_screen_never_depends_on_hidden_information() -> None:
    # Two games that differ only in what is hidden (the stack order) draw the same screen.
    g = played(30)
    obs = observe(g, 1)
    rng = random.Random(5)
    other = determinize(obs, MANIFEST, lambda xs: rng.sample(xs, len(xs)), bytes([9]) * 32)
    assert [t for t in other.stack] != [t for t in g.stack]
    assert text_of(board_lines(observe(other, 1), ["a", "b"])) == text_of(board_lines(obs, ["a", "b"]))


def test_every_move_of_many_games_is_told_in_words() -> None:
    kinds: set[str] = set()
    for seed in range(6):
        g = Game.new(MANIFEST, Options(Ruleset.PORTAL2022, festum=seed % 2 == 1), bytes([seed]) * 32)
        bots = (RandomBot(seed), GreedyBot(MANIFEST, seed))
        before = observe(g, 0)
        while not g.over:
            p = g.to_move
            assert p is not None
            action = bots[p].choose(observe(g, p), g.legal_actions())
            g.apply(action)
            after = observe(g, 0)
            text = describe_action(action, p, before, after, ["ada", "bob"], reader=0)
            kinds.add(action.kind)
            assert text.startswith("You " if p == 0 else "bob ") and text.endswith("."), text
            assert p == 1 or "their" not in text, text  # "You took PROMOTE ...: your builder ..."
            assert "an order" not in text and "with target" not in text  # the order was named
            if action.kind == A.VAULT:
                assert "vault" in text and A.format_action(action)[3:] in text
            before = after
    assert {A.VAULT, A.BUILDER, A.ORDER}.issubset(kinds)


def test_rules_help_knows_every_order() -> None:
    from basilica_p2p.engine.components import Order

    for order in Order:
        assert rules_text(order.value.lower()) == RULES[order.value]
    assert "no rule called" in rules_text("teleport")
    assert "move" in rules_text("")


def _person(lines: list[str]) -> tuple[TerminalPlayer, io.StringIO]:
    out = io.StringIO()
    console = Console(width=80, file=out, no_color=True, highlight=False)
    return TerminalPlayer("ada", console=console, inp=io.StringIO("".join(x + "\n" for x in lines))), out


def test_a_whole_game_at_the_prompt_writes_a_verifiable_replay(tmp_path: Path) -> None:
    # Answers: commands first, then a mix of numbers and typed notation until the game ends.
    person, out = _person(["help", "rules glass", "log", "score", "list", "99", "V9:z9", "v1:", "board"]
                          + ["1"] * 400)
    result = play_local(person, RandomBot(3), (ME, BOT), 0, MANIFEST, Options(), tmp_path)
    text = out.getvalue()
    assert result.forfeit is None and result.game.over
    assert verify_file(result.replay).ok
    assert "You are ada against greedy (seat 1); who moves first is drawn at random." in text
    # Who moves first is said, whatever the seat.
    assert ("You move first." in text) != ("greedy moves first." in text), text
    assert "every legal action, numbered" in text  # help
    assert "STAINED GLASS" in text  # rules glass
    assert "No scoring yet" in text  # score before any scoring
    assert "there is no action 99" in text
    assert "market space must be 1, 2 or 3" in text  # a typo gets the notation error
    assert "Game over" in text and "Scoring 1:" in text
    assert re.search(r"greedy (placed|took|put|paid|declined|moved|chose|found)", text)  # the bot's moves, told
    assert all(len(line) <= 80 for line in text.splitlines() if not line.startswith(("greedy ", "You ", "  ")))


def test_typed_notation_is_forgiven_its_case_and_suggested_when_partial() -> None:
    g = played(0)
    obs = observe(g, g.to_move)  # type: ignore[arg-type]
    legal = g.legal_actions()
    target = next(a for a in legal if a.kind == A.VAULT)
    typed = format_action(target).lower().replace("v", "v", 1)
    person, out = _person(["V" + format_action(target)[1:3], typed])
    person.seat = obs.player
    assert person.choose(ask_for(g, obs.player)) == target
    assert "could be:" in out.getvalue()


def test_quit_asks_first_and_then_forfeits_in_the_replay(tmp_path: Path) -> None:
    person, out = _person(["quit", "n", "quit", "yes"])
    result = play_local(person, RandomBot(3), (ME, BOT), 1, MANIFEST, Options(), tmp_path)
    assert "Go on, then." in out.getvalue()
    assert result.forfeit is not None and result.forfeit.player == 1 and result.forfeit.reason == "quit at the prompt"
    v = verify_file(result.replay)
    assert v.ok and v.outcome is not None and v.outcome.end == "forfeit" and v.outcome.winner == 0


def test_end_of_input_is_leaving_the_game(tmp_path: Path) -> None:
    person, _ = _person(["1", "1"])
    result = play_local(person, RandomBot(3), (ME, BOT), 0, MANIFEST, Options(), tmp_path)
    assert result.forfeit is not None and result.forfeit.player == 0 and "input closed" in result.forfeit.reason
    assert verify_file(result.replay).ok


class _CtrlD:
    """A terminal where the person presses Ctrl-D (an empty read) at the given answers."""

    def __init__(self, answers: list[str | None]) -> None:
        self.answers = list(answers)

    def isatty(self) -> bool:
        return True

    def readline(self) -> str:
        if not self.answers:
            return ""
        answer = self.answers.pop(0)
        return "" if answer is None else answer + "\n"


def test_end_of_input_at_a_terminal_asks_before_forfeiting(tmp_path: Path) -> None:
    g = played(0)
    me = g.to_move
    assert me is not None
    person, out = _person([])
    person.inp = _CtrlD([None, "n", "1"])  # type: ignore[assignment]
    person.seat = me
    assert person.choose(ask_for(g, me)) == g.legal_actions()[0]  # not gone: it asked
    assert "leave the game?" in out.getvalue() and "Go on, then." in out.getvalue()
    # Yes, or a second Ctrl-D, leaves: a forfeit recorded in the replay.
    for answers in ([None, "y"], [None, None]):
        person, out = _person([])
        person.inp = _CtrlD(answers)  # type: ignore[assignment]
        result = play_local(person, RandomBot(3), (ME, BOT), 0, MANIFEST, Options(), tmp_path)
        assert result.forfeit is not None and "input closed" in result.forfeit.reason
        assert "leave the game?" in out.getvalue() and verify_file(result.replay).ok


# --- a person over the network ----------------------------------------------------------------


def _net_person(tmp: Path, answers: list[str], shuffle: str = "commit-reveal-v1"):  # type: ignore[no-untyped-def]
    from basilica_p2p.net.peer import PeerConfig
    from support.net_harness import FAST

    person, out = _person(answers)
    cfg = PeerConfig(ME, _settings(shuffle), lambda k: person, tmp / "me", None, FAST, 1)
    return cfg, out


def _settings(shuffle: str = "commit-reveal-v1"):  # type: ignore[no-untyped-def]
    from support.net_harness import settings

    return settings(shuffle=shuffle)


def _bot_config(tmp: Path, shuffle: str = "commit-reveal-v1"):  # type: ignore[no-untyped-def]
    from basilica_p2p.net.peer import PeerConfig
    from support.net_harness import FAST

    return PeerConfig(BOT, _settings(shuffle), lambda k: GreedyBot(MANIFEST, k), tmp / "bot", None, FAST, 1)


@pytest.mark.trio
@pytest.mark.parametrize("shuffle", ["commit-reveal-v1", "sra-p256-v1"])
async def test_a_person_plays_a_whole_network_game_and_sees_every_move(tmp_path: Path, shuffle: str) -> None:
    # With the hidden deal (the default over the network) the person's screen is built from
    # a game that knows tiles only as the rules turn them up (issue 10).
    from support.net_harness import host_and_join

    cfg, out = _net_person(tmp_path, ["1"] * 400, shuffle)
    pair = await host_and_join(_bot_config(tmp_path, shuffle), cfg, direct=True, limit=120)
    assert isinstance(pair.join, list), pair.join
    (report,) = pair.join
    text = out.getvalue()
    assert "You are ada against greedy (seat 2)" in text  # the names come from the signed hellos
    assert "Game over" in text
    assert re.search(r"greedy (placed|took|put|paid|declined|moved|chose|found)", text)
    assert verify_file(report.replay).ok


@pytest.mark.trio
async def test_a_person_who_quits_over_the_network_forfeits_in_both_replays(tmp_path: Path) -> None:
    from support.net_harness import host_and_join

    cfg, _ = _net_person(tmp_path, ["1", "1", "quit", "y"])
    told: list[str] = []
    bot_cfg = _bot_config(tmp_path)
    bot_cfg.watch = lambda event: told.append(format_action(event.action)) if isinstance(event, MoveApplied) else None
    pair = await host_and_join(bot_cfg, cfg, direct=True, limit=60)
    assert isinstance(pair.join, list) and isinstance(pair.host, list), (pair.host, pair.join)
    # The bot's side was told each applied move once, and not its last one again at the forfeit.
    assert told == [format_action(a) for a in pair.host[0].game.history]
    for (report,) in (pair.join, pair.host):
        v = verify_file(report.replay)
        assert v.ok and v.outcome is not None and v.outcome.end == "forfeit" and v.outcome.winner == 0
        assert "quit at the prompt" in v.line()
    assert pair.join[0].replay.read_bytes() == pair.host[0].replay.read_bytes()


@pytest.mark.trio
async def test_each_move_is_told_with_its_mover_also_when_dealt_face_down(tmp_path: Path) -> None:
    """In a hidden deal a move is applied when the other side's share arrives; the mover told
    to the screen must still be who moved (the line client said "You placed" for a bot's move)."""
    from support.net_harness import host_and_join

    told: dict[str, list[tuple[int, int | None]]] = {"host": [], "join": []}

    def recorder(side: str):  # type: ignore[no-untyped-def]
        due: list[int | None] = []  # who was to move after the last move told

        def watch(event: SeatEvent) -> None:
            if isinstance(event, MoveApplied):
                assert event.after is not None
                if due:
                    told[side].append((event.mover, due[-1]))
                due.append(event.after.to_move)
        return watch

    host_cfg, join_cfg = _bot_config(tmp_path / "h", "sra-p256-v1"), _bot_config(tmp_path / "j", "sra-p256-v1")
    join_cfg.me = ME  # two identities, as two machines would have
    host_cfg.watch, join_cfg.watch = recorder("host"), recorder("join")
    pair = await host_and_join(host_cfg, join_cfg, direct=True, limit=120)
    assert isinstance(pair.host, list) and isinstance(pair.join, list), (pair.host, pair.join)
    for side, moves in told.items():
        assert len(moves) == len(pair.host[0].game.history) - 1 > 40, side
        assert [who for who, _ in moves] == [mover for _, mover in moves], side
        assert {who for who, _ in moves} == {0, 1}


def test_the_short_list_never_leaves_a_group_of_actions_out() -> None:
    g = max(tallest_states(7, 12), key=lambda s: len(s.legal_actions()))
    texts = [format_action(a) for a in g.legal_actions()]
    heads = {t.partition(":")[0] + ":" for t in texts if ":" in t}
    assert len(heads) >= 4
    person, _ = _person([])
    room = len(person._numbered(texts)) - 1  # the numbered list does not fit...
    assert len(heads) + 1 <= room  # ...but one line per group does
    grouped = "\n".join(t.plain for t in person._menu(texts, room=room))
    for head in heads:  # one line per group when the groups fit
        assert re.search(rf"^{re.escape(head)} ", grouped, re.M), (head, grouped)
    counted = "\n".join(t.plain for t in person._menu(texts, room=2))
    for head in heads:  # counts per group when even they do not
        assert re.search(rf"{re.escape(head)} \d+", counted), (head, counted)
    for menu in (grouped, counted):
        assert all(len(line) <= 80 for line in menu.splitlines())


def tallest_states(seed: int, n: int = 3) -> list[Game]:
    """The ongoing states of one greedy game with the tallest cathedrals."""
    g = Game.new(MANIFEST, Options(), bytes([seed]) * 32)
    bots = (GreedyBot(MANIFEST, 1), GreedyBot(MANIFEST, 2))
    states = []
    while not g.over:
        states.append(g.clone())
        p = g.to_move
        assert p is not None
        g.apply(bots[p].choose(observe(g, p), g.legal_actions()))
    return sorted(states, key=lambda s: max(list(s.vaults) + [0]))[-n:]


@pytest.mark.parametrize("seed", [7, 8])
def test_every_decision_screen_fits_24_rows(seed: int) -> None:
    for g in tallest_states(seed):
        _fits(g)


def _fits(g: Game) -> None:
    obs = observe(g, g.to_move)  # type: ignore[arg-type]
    out = io.StringIO()
    person = TerminalPlayer("ada", console=Console(width=80, file=out, no_color=True), inp=io.StringIO(), clear=True)
    person.begin(obs.player, ("ada", "bob"), MANIFEST)
    out.seek(0)
    out.truncate()
    for i in range(30):  # many recent moves to tell again
        person.log.append(f"bob placed a wild yellow/blue vault with a crown from V2 on b{i}; the queen moves.")
        person._kinds.append("them")
    person._draw(obs, [format_action(a) for a in g.legal_actions()])
    screen = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.getvalue())  # the clear's escapes
    lines = screen.splitlines()
    assert len(lines) <= 23 and all(len(line) <= 80 for line in lines), "\n".join(lines)
    assert lines[0].startswith("Basilica") and "to decide" in screen


def test_a_refused_action_says_which_rule_it_breaks_and_a_stray_word_is_not_taken_for_a_cell() -> None:
    g = played(0)
    obs = observe(g, g.to_move)  # type: ignore[arg-type]
    legal = g.legal_actions()
    assert all(a.kind != A.REDEAL for a in legal)  # something fits, so V* is refused
    person, out = _person(["V*", "clear", "1"])
    person.manifest = MANIFEST
    person.seat = obs.player
    assert person.choose(ask_for(g, obs.player)) == legal[0]
    text = out.getvalue()
    refusal = next(line for line in text.splitlines() if line.startswith("V* is not legal now"))
    assert refusal.startswith("V* is not legal now: ") and len(refusal) > len("V* is not legal now: ") + 10
    assert "unknown command 'clear'" in text and "not a cell" not in text
    # In words, without the rule's code (§5, D8...), which is for developers.
    assert "illegal action (" not in refusal and "§" not in refusal and not re.search(r"\(D\d+\)", refusal), refusal


def test_rules_turn_explains_the_turn_the_market_and_the_goal() -> None:
    """'rules turn' (also 'rules goal', 'rules market') exists."""
    from basilica_p2p.rules_help import rules_text
    from basilica_p2p.lineclient.help import COMMANDS

    text = rules_text("turn")
    for words in ("the most points", "market", "O1-O3", "V1-V3", "Taking V2 uses up the order O2"):
        assert words in text, text
    assert rules_text("goal") == rules_text("Market") == text
    assert "rules turn" in COMMANDS and "turn" in rules_text("")


def test_rules_turn_says_first_that_a_turn_is_three_actions() -> None:
    """The header counts 'action 1 of 3': the rule's first sentence says why."""
    first_sentence = rules_text("turn").split(". ")[0]
    assert "exactly three actions" in first_sentence, first_sentence


class _SlowPerson(AgentBase):
    """A person who takes their time: blocks in the worker thread until released."""

    traits = Traits(blocking=True)
    name = "slow"

    def __init__(self) -> None:
        import threading

        self.asked = threading.Event()
        self.release = threading.Event()

    def choose(self, ask: Ask) -> Decision:
        self.asked.set()
        self.release.wait(10)
        return ask.legal[0]


@pytest.mark.trio
async def test_a_person_deciding_learns_at_once_that_the_other_side_has_gone(tmp_path: Path) -> None:
    # Nobody reads the socket while a person thinks; the keepalive that fails to go out
    # ends the decision with a clear message instead of leaving them at the prompt.
    person = _SlowPerson()

    async def script(p) -> None:  # type: ignore[no-untyped-def]
        await p.hello()
        while not person.asked.is_set():
            step, who = p.ref.waiting_for()
            if who == p.seat:
                await p.send_honest(step)
            else:
                with trio.move_on_after(0.05):
                    await p.receive()
        # The person is at the prompt: leave without a word.

    from support.net_harness import FAST, run_against

    try:
        run = await run_against(script, tmp_path, agent=person, timeouts=FAST, keepalive=True, tcp=True)
    finally:
        person.release.set()
    from basilica_p2p.net.session import PeerGone

    assert isinstance(run.error, PeerGone) and "has gone" in str(run.error), run.error
    assert person.asked.is_set()


def test_a_game_begun_with_its_board_shows_it_and_whom_we_wait_for() -> None:
    """A network session begins the game once it is set up: the line client draws the board at
    once when the other side moves first, rather than 'Waiting for the game to start...'."""
    g = played(0)
    other = g.to_move
    assert other is not None
    out = io.StringIO()
    person = TerminalPlayer("ada", console=Console(width=80, file=out, no_color=True), inp=io.StringIO(), clear=True)
    names = ("ada", "bob") if other == 1 else ("bob", "ada")
    person.begin(1 - other, names, MANIFEST)
    before = len(out.getvalue())
    person.observe(GameStarted(names, other, observe(g, 1 - other)))
    screen = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.getvalue()[before:])
    assert "Waiting for bob..." in screen and screen.count("board") >= 1 and "queen" in screen, screen


def test_say_at_the_prompt_sends_a_line_and_tells_why_one_was_not_sent() -> None:
    g = played(6)
    seat = g.to_move
    assert seat is not None
    person, out = _person(["say good luck", "say", "say again", "1"])
    sent: list[str] = []

    def say(text: str) -> str | None:
        sent.append(text)
        return None if len(sent) == 1 else "bob's side takes no chat (an older version, a bot, or --no-chat)"

    person.open_chat(say)
    person.begin(seat, ("ada", "bob") if seat == 0 else ("bob", "ada"), MANIFEST)
    answer = person.choose(ask_for(g, seat))
    assert answer == ask_for(g, seat).legal[0]
    assert sent == ["good luck", "again"]
    text = out.getvalue()
    assert "say what?" in text and "not sent: bob's side takes no chat" in text


def at_a_terminal() -> tuple[TerminalPlayer, io.StringIO, int]:
    """A person whose typing is a pipe's (its write end returned), read as at a terminal: every
    line, while the other side decides too."""
    import os

    read_end, write_end = os.pipe()
    out = io.StringIO()
    person = TerminalPlayer("ada", console=Console(width=80, file=out, no_color=True), inp=os.fdopen(read_end))
    person.chat_anytime = True
    return person, out, write_end


def asked_in_a_thread(person: TerminalPlayer) -> tuple[Game, int, list[object], threading.Thread]:
    """A game 6 decisions in, begun for ``person``, and a thread (not started) that asks it the next
    decision, its answer put in the list."""
    g = played(6)
    seat = g.to_move
    assert seat is not None
    person.begin(seat, ("ada", "bob") if seat == 0 else ("bob", "ada"), MANIFEST)
    done: list[object] = []
    return g, seat, done, threading.Thread(target=lambda: done.append(person.choose(ask_for(g, seat))))


def test_while_the_other_side_decides_a_typed_line_is_chat_and_nothing_else_is_taken() -> None:
    import os
    import time

    person, out, write_end = at_a_terminal()
    sent: list[str] = []
    said = threading.Event()

    def say(text: str) -> str | None:
        sent.append(text)
        said.set()
        return None

    person.open_chat(say)
    with os.fdopen(write_end, "w", buffering=1) as typed:
        typed.write("V1:b3\nsay your move\n")
        assert said.wait(10), out.getvalue()
        assert sent == ["your move"]
        deadline = time.monotonic() + 10
        while "It is not your decision" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "It is not your decision: 'say TEXT' sends a line of chat meanwhile." in out.getvalue()
        g, seat, done, chooser = asked_in_a_thread(person)
        chooser.start()
        while not person._choosing.is_set():
            time.sleep(0.01)
        typed.write("1\n")
        chooser.join(10)
    assert done == [ask_for(g, seat).legal[0]]  # the line typed at the prompt was the decision


def test_a_line_of_chat_told_while_our_prompt_waits_is_followed_by_the_prompt_again() -> None:
    import os
    import time

    person, out, write_end = at_a_terminal()
    person.open_chat(lambda text: None)
    g, seat, done, chooser = asked_in_a_thread(person)
    with os.fdopen(write_end, "w", buffering=1) as typed:
        chooser.start()
        deadline = time.monotonic() + 10
        while not out.getvalue().endswith("> ") and time.monotonic() < deadline:
            time.sleep(0.01)
        assert out.getvalue().endswith("> "), out.getvalue()
        person.observe(ChatSaid(1 - seat, "your move, ada", len(g.history) + 2, 1))
        after = out.getvalue().rsplit("your move, ada", 1)
        assert len(after) == 2 and after[1].endswith("\n> "), out.getvalue()[-300:]
        typed.write("1\n")
        chooser.join(10)
    assert done == [ask_for(g, seat).legal[0]]
