"""The mcts bot: legal in every kind of decision, reproducible, blind to hidden facts, strong."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from basilica_p2p.bots import BOT_NAMES, BotSpecError, GreedyBot, MctsBot, RandomBot, make_bot
from basilica_p2p.bots.mcts import DEFAULT_TIME, parse_options
from basilica_p2p.engine import Game, Options, default_manifest, determinize, observe
from basilica_p2p.match import MatchConfig, play_game, run_match

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = default_manifest()
KINDS = ("main", "after-redeal", "second-scaffold", "second-altar", "paid", "confuse-pay", "confuse-move", "jester")


def _seed(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _positions_of_every_kind(per_kind: int = 2) -> dict[str, list[Game]]:
    """Positions met in random play (festum every other game), a few of each decision kind."""
    found: dict[str, list[Game]] = {k: [] for k in KINDS}
    for i in range(60):
        options = Options("portal2022", festum=True) if i % 2 else Options()
        g = Game.new(MANIFEST, options, _seed(f"mcts-kinds {i}"))
        rng = random.Random(i)
        while not g.over:
            legal = g.legal_actions()
            got = found[g.pending.kind]
            if len(legal) > 1 and len(got) < per_kind:
                got.append(g.clone())
            g.apply(legal[rng.randrange(len(legal))])
        if all(len(v) >= per_kind for v in found.values()):
            break
    return found


def test_legal_in_every_decision_kind() -> None:
    found = _positions_of_every_kind()
    assert {k for k, v in found.items() if v} == set(KINDS), {k: len(v) for k, v in found.items()}
    for kind, games in found.items():
        for k, g in enumerate(games):
            p = g.to_move
            assert p is not None
            legal = g.legal_actions()
            bot = MctsBot(MANIFEST, k, playouts=25)
            action = bot.choose(observe(g, p), legal)
            assert action in legal, (kind, action)
            assert bot.last_iterations == 25
            g.apply(action)  # raises if the engine disagrees


@pytest.mark.parametrize("options", [Options(), Options("classic"), Options("portal2022", festum=True, festum_removal=True)],
                         ids=["portal2022", "classic", "festum"])
def test_full_games_against_random(options: Options) -> None:
    for seat in (0, 1):
        bots = [RandomBot(7), RandomBot(8)]
        bots[seat] = MctsBot(MANIFEST, 3, playouts=12)  # type: ignore[call-overload]
        g = play_game(MANIFEST, options, _seed(f"mcts-full {options} {seat}"), (bots[0], bots[1]))
        assert g.over  # play_game's apply() raises on an illegal choice
        assert g.scores[seat] > g.scores[1 - seat], g.scores


def test_single_legal_action_returns_at_once() -> None:
    g = Game.new(MANIFEST, Options(), _seed("single"))
    legal = g.legal_actions()[:1]
    bot = MctsBot(MANIFEST, 0, time=30.0)
    start = time.perf_counter()
    assert bot.choose(observe(g, g.to_move), legal) == legal[0]
    assert time.perf_counter() - start < 0.5


def _midgame(seed: str, plies: int) -> Game:
    g = Game.new(MANIFEST, Options(), _seed(seed))
    bots = (GreedyBot(MANIFEST, 1), GreedyBot(MANIFEST, 2))
    for _ in range(plies):
        p = g.to_move
        g.apply(bots[p].choose(observe(g, p), g.legal_actions()))
    return g


def test_reproducible_with_a_playout_budget() -> None:
    for plies in (0, 17, 40):
        g = _midgame("repro", plies)
        obs, legal = observe(g, g.to_move), g.legal_actions()
        a = [MctsBot(MANIFEST, 11, playouts=60).choose(obs, legal) for _ in range(2)]
        assert a[0] == a[1]
    # A whole game, too: same seeds, same moves.
    runs = [play_game(MANIFEST, Options(), _seed("repro-game"), (MctsBot(MANIFEST, 1, playouts=8), RandomBot(2)))
            for _ in range(2)]
    assert runs[0].history == runs[1].history


def test_reproducible_across_processes() -> None:
    # Action values hold strings, whose hashes differ between processes: the
    # choice must not depend on set or dict iteration order.
    code = (
        "import hashlib\n"
        "from basilica_p2p.bots.mcts import MctsBot\n"
        "from basilica_p2p.bots import GreedyBot\n"
        "from basilica_p2p.engine import Game, Options, default_manifest, observe, format_action\n"
        "m = default_manifest()\n"
        "g = Game.new(m, Options(), hashlib.sha256(b'xproc').digest())\n"
        "out = []\n"
        "for _ in range(12):\n"
        "    p = g.to_move\n"
        "    a = MctsBot(m, 5, playouts=40).choose(observe(g, p), g.legal_actions())\n"
        "    out.append(format_action(a))\n"
        "    g.apply(a)\n"
        "print(' '.join(out))\n"
    )
    outs = []
    for hash_seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert outs[0] == outs[1]
    assert len(outs[0].split()) == 12


def test_depends_only_on_the_observation() -> None:
    # Two full games built from one observation with different hidden parts
    # (stack order, hidden crowns) look the same to the bot: same choice.
    for plies in (5, 30, 55):
        real = _midgame("hidden", plies)
        p = real.to_move
        obs = observe(real, p)
        samples = []
        for k in range(2):
            rng = random.Random(100 + k)

            def shuffle(items: list[int]) -> list[int]:
                out = list(items)
                rng.shuffle(out)
                return out

            samples.append(determinize(obs, MANIFEST, shuffle, bytes([k]) * 32))
        a, b = samples
        assert a.stack != b.stack
        assert observe(a, p) == observe(b, p) == obs
        legal = a.legal_actions()
        assert legal == b.legal_actions() == real.legal_actions()
        ca = MctsBot(MANIFEST, 9, playouts=50).choose(observe(a, p), legal)
        cb = MctsBot(MANIFEST, 9, playouts=50).choose(observe(b, p), legal)
        assert ca == cb


def test_time_budget_is_kept() -> None:
    g = _midgame("clock", 20)
    bot = MctsBot(MANIFEST, 0, time=0.1)
    start = time.perf_counter()
    action = bot.choose(observe(g, g.to_move), g.legal_actions())
    elapsed = time.perf_counter() - start
    assert action in g.legal_actions()
    assert 0.1 <= elapsed < 0.6, elapsed
    assert bot.last_iterations > 1


def test_names_and_options() -> None:
    assert "mcts" in BOT_NAMES
    bot = make_bot("mcts", MANIFEST, 0)
    assert isinstance(bot, MctsBot) and bot.name == "mcts" and bot.blocking
    assert bot.time == DEFAULT_TIME <= 1.0 and bot.playouts is None
    bot = make_bot(" MCTS:time=0.25 ", MANIFEST, 0)
    assert isinstance(bot, MctsBot) and bot.time == 0.25 and bot.playouts is None
    bot = make_bot("mcts:playouts=400", MANIFEST, 0)
    assert isinstance(bot, MctsBot) and bot.playouts == 400 and bot.time is None
    assert parse_options("mcts:playouts=10, c=0.5") == {"playouts": 10, "c": 0.5}


@pytest.mark.parametrize("spec, words", [
    ("mcts:", "empty option list"),
    ("mcts:time=0", "time must be a positive"),
    ("mcts:time=-1", "time must be a positive"),
    ("mcts:time=1e9", "at most"),
    ("mcts:time=fast", "time must be a number"),
    ("mcts:time=nan", "positive"),
    ("mcts:playouts=0", "playouts must be 1.."),
    ("mcts:playouts=2.5", "whole number"),
    ("mcts:time=0.5,playouts=10", "not both"),
    ("mcts:depth=3", "unknown mcts option 'depth'"),
    ("mcts:time", "not key=value"),
    ("mcts:time=1,time=2", "given twice"),
])
def test_bad_options_are_refused(spec: str, words: str) -> None:
    with pytest.raises(BotSpecError) as e:
        make_bot(spec, MANIFEST, 0)
    message = str(e.value)
    assert words in message and "\n" not in message


def test_other_names_with_a_colon_still_load_classes() -> None:
    # Only a name whose part before ':' is mcts is read as options.
    bot = make_bot("basilica_p2p.bots.mcts:MctsBot", MANIFEST, 3)
    assert isinstance(bot, MctsBot)
    with pytest.raises(BotSpecError, match="no 'Nope'"):
        make_bot("basilica_p2p.bots.mcts:Nope", MANIFEST, 0)


def test_beats_random() -> None:
    s = run_match(MatchConfig("mcts:playouts=15", "random", games=4, seed="mcts-vs-random"), MANIFEST, progress=False)
    t = run_match(MatchConfig("random", "mcts:playouts=15", games=4, seed="mcts-vs-random-2"), MANIFEST, progress=False)
    assert s.wins(1) == 4 and t.wins(2) == 4, (s.to_json()["results"], t.to_json()["results"])


@pytest.mark.slow
def test_beats_greedy() -> None:
    s = run_match(MatchConfig("mcts:playouts=300", "greedy", games=6, seed="mcts-vs-greedy"), MANIFEST, progress=False)
    t = run_match(MatchConfig("greedy", "mcts:playouts=300", games=6, seed="mcts-vs-greedy-2"), MANIFEST, progress=False)
    assert s.wins(1) + t.wins(2) >= 9, (s.to_json()["results"], t.to_json()["results"])


@pytest.mark.trio
async def test_plays_a_network_game_in_a_worker_thread(tmp_path: Path) -> None:
    # blocking = True: the session asks it through trio.to_thread, keepalives flow meanwhile.
    import threading

    from basilica_p2p.net.peer import PeerConfig
    from basilica_p2p.replay.verify import verify_file

    from support.net_harness import ALICE, BOB, FAST, host_and_join, settings

    s = settings()
    threads: set[str] = set()

    class Watched(MctsBot):
        def choose(self, obs, legal):  # type: ignore[no-untyped-def]
            threads.add(threading.current_thread().name)
            return super().choose(obs, legal)

    host = PeerConfig(BOB, s, lambda k: Watched(s.manifest, k, playouts=8), tmp_path / "h", None, FAST, 1)
    join = PeerConfig(ALICE, s, lambda k: RandomBot(k), tmp_path / "j", None, FAST, 1)
    pair = await host_and_join(host, join, limit=60)
    assert isinstance(pair.host, list) and isinstance(pair.join, list), (pair.host, pair.join)
    (h,), (j,) = pair.host, pair.join
    assert h.game.over and h.game.state_hash() == j.game.state_hash()
    assert verify_file(h.replay).ok
    assert threads and threading.main_thread().name not in threads


def test_bench_mode(capsys: pytest.CaptureFixture[str]) -> None:
    from basilica_p2p import bench

    bench.main(["mcts", "--games", "2", "--bot-spec", "mcts:playouts=4", "--opponent", "random", "--seed", "t"])
    out = capsys.readouterr().out
    assert "2 games of mcts:playouts=4 (4 playouts per decision) against random" in out
    assert "2 wins, 0 draws, 0 losses" in out
    assert "95% Wilson interval" in out and "median" in out and "p99" in out and "machine:" in out
    with pytest.raises(SystemExit, match="unknown mcts option"):
        bench.main(["mcts", "--bot-spec", "mcts:depth=2"])
