"""basilica_p2p.env: the index space, the encoding, PettingZoo, Gymnasium and OpenSpiel (issue 14)."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from basilica_p2p.engine import Action, Game, Options, default_manifest, format_action, observe, parse_action
from basilica_p2p.engine.components import JESTER
from basilica_p2p.env import ActionTable, GymEnv, ObservationEncoder, OutOfTable, aec_env, jester_cells, raw_env
from basilica_p2p.encoding import ROWS

ROOT = Path(__file__).resolve().parent.parent
M = default_manifest()
TABLE = ActionTable(jesters=M.promotion_tokens)
ENCODER = ObservationEncoder(M)
SETTINGS = [
    {"ruleset": "classic"},
    {"ruleset": "portal2022"},
    {"ruleset": "portal2022", "festum": True, "festum_removal": True},
]


def options_of(kw: dict[str, object]) -> Options:
    return Options(kw["ruleset"], bool(kw.get("festum")), bool(kw.get("festum_removal")))  # type: ignore[arg-type]


def jester_first(rng: random.Random) -> Callable[[list[Action]], Action]:
    """A random player that promotes to Jester whenever it can: Jester rounds come early."""
    def pick(legal: list[Action]) -> Action:
        promote = [a for a in legal if a.rank == JESTER]
        return rng.choice(promote or legal)
    return pick


def random_states(n_games: int, kw: dict[str, object], seed: int) -> list[Game]:
    rng = random.Random(seed)
    pick = jester_first(rng) if seed % 2 else (lambda legal: rng.choice(legal))
    out = []
    for i in range(n_games):
        g = Game.new(M, options_of(kw), hashlib.sha256(b"env-test %d %d" % (seed, i)).digest())
        while not g.over:
            out.append(g.clone())
            g.apply(pick(g.legal_actions()))
    return out


# --- the action index space -------------------------------------------------

def test_every_legal_action_has_one_index_that_maps_back_through_the_notation() -> None:
    seen_kinds: set[str] = set()
    jester_sizes: set[int] = set()
    for k, kw in enumerate(SETTINGS):
        for g in random_states(12, kw, k):
            legal = g.legal_actions()
            idx, acts = TABLE.indices(legal)
            assert acts == legal  # nothing here lies beyond the table's rows
            assert len(set(idx)) == len(idx)
            cells = jester_cells(observe(g, g.to_move).builders, g.to_move)  # type: ignore[arg-type]
            for i, a in zip(idx, legal):
                back = TABLE.action(i, cells)
                assert back == a
                assert TABLE.index(parse_action(format_action(back))) == i
                seen_kinds.add(a.kind)
                if a.kind == "jester":
                    jester_sizes.add(len(a.colors))
    # The states above reach every kind of decision random play meets (not V*, which needs a stuck market).
    assert seen_kinds >= {"vault", "builder", "order", "place", "shift", "pay", "decline", "jester"}
    assert 2 in jester_sizes


cell = st.builds(lambda col, row: f"{'abcde'[col]}{row}", st.integers(0, 4), st.integers(1, ROWS))
rank = st.sampled_from("AMSJ")
color = st.sampled_from("YBRG")
space = st.sampled_from("123")


@st.composite
def action_texts(draw: st.DrawFn) -> str:
    c = draw(cell)
    form = draw(st.integers(0, 12))
    if form == 0:
        return draw(st.sampled_from(["V*", "pass", "$", "none"]))
    if form == 1:
        return f"V{draw(space)}:{c}"
    if form == 2:
        return f"B:{c}"
    if form == 3:
        return c
    if form == 4:
        return f"O{draw(space)}:{c}"
    if form == 5:
        return f"O{draw(space)}:{c}={draw(rank)}"
    if form == 6:
        return f"${c}"
    if form == 7:
        return f"${c}={draw(rank)}"
    if form in (8, 9):
        target = draw(st.sampled_from(_neighbours(c)))
        return f"O{draw(space)}:{c}-{target}" if form == 8 else f"{c}-{target}"
    cells = draw(st.lists(cell, min_size=1, max_size=M.promotion_tokens, unique=True))
    return format_action(parse_action("J:" + ",".join(f"{x}={draw(color)}" for x in cells)))


def _neighbours(c: str) -> list[str]:
    col, row = "abcde".index(c[0]), int(c[1:])
    out = [f"{'abcde'[col + d]}{row}" for d in (-1, 1) if 0 <= col + d < 5]
    out += [f"{c[0]}{r}" for r in (row - 1, row + 1) if 1 <= r <= ROWS]
    return out


@settings(max_examples=300, deadline=None)
@given(text=action_texts())
def test_every_text_of_the_notation_on_the_board_round_trips_through_its_index(text: str) -> None:
    a = parse_action(text)
    i = TABLE.index(a)
    assert 0 <= i < TABLE.size
    cells = [c for c, _ in a.colors]
    assert format_action(TABLE.action(i, cells)) == text


def test_indices_are_a_bijection_and_the_rest_is_refused() -> None:
    actions = set()
    for i in range(TABLE.size):
        for k in range(1, TABLE.jesters + 1):  # a Jester index fits one number of Jesters only
            try:
                a = TABLE.action(i, list(range(k)))
            except OutOfTable:
                continue  # not this number of Jesters, or a move off the board (a reserved index)
            assert TABLE.index(a) == i
            actions.add(a)
    assert 0.9 * TABLE.size < len(actions) < TABLE.size
    with pytest.raises(OutOfTable):
        TABLE.index(parse_action(f"V1:a{ROWS + 1}"))
    with pytest.raises(OutOfTable):
        TABLE.action(TABLE.size)


# --- the observation encoding ---------------------------------------------------

def test_observation_tensors_ignore_the_hidden_stack_order_and_crowns() -> None:
    """Two games that differ only in what nobody can see encode alike, move after move."""
    compared = 0
    shown = M.order_faces_show_crown
    for k, kw in enumerate(SETTINGS):
        for g in random_states(2, kw, 10 + k)[::10]:
            if len(g.stack) < 12:
                continue
            twin = g.clone()
            top = twin.stack[-1]
            # The top shows its order face only: a tile with the same face (crown or not) may take its place.
            face = g.specs[top].face_class(shown)
            same = [i for i, t in enumerate(twin.stack[:-6]) if g.specs[t].face_class(shown) == face]
            if same:
                twin.stack[same[0]], twin.stack[-1] = twin.stack[-1], twin.stack[same[0]]
            below = twin.stack[:-6]
            random.Random(k).shuffle(below)  # the next five draws are alike, then the two games part
            if twin.out:  # the festum removal is unseen too
                below[0], twin.out[0] = twin.out[0], below[0]
                twin.out.sort()
            twin.stack[:-6] = below
            assert (twin.stack, twin.out) != (g.stack, g.out)
            tops = {top, twin.stack[-1]}
            rng = random.Random(k)
            # Until a tile that differs is turned vault side up, or drawn from the shuffled part.
            while not g.over and len(g.stack) > len(below) and not tops & (
                    set(g.market) | set(twin.market) | set(g.vaults.values()) | g.discard_up | twin.discard_up):
                for p in (0, 1):
                    assert np.array_equal(ENCODER.encode(observe(g, p)), ENCODER.encode(observe(twin, p)))
                    compared += 1
                a = rng.choice(g.legal_actions())
                g.apply(a)
                twin.apply(a)
    assert compared >= 50


def test_the_other_players_secret_jester_colours_are_not_in_the_tensor() -> None:
    for g in random_states(12, SETTINGS[1], 21):
        if g.secret_jester_round():
            first = g.to_move
            encodings = set()
            for a in g.legal_actions():
                after = g.clone()
                after.apply(a)
                assert after.to_move == 1 - first
                encodings.add(ENCODER.encode(observe(after, 1 - first)).tobytes())
                mine = ENCODER.encode(observe(after, first)).tobytes()
            assert len(g.legal_actions()) >= 2 and len(encodings) == 1
            assert mine not in encodings  # the chooser's own choice is in its view
            return
    raise AssertionError("no secret Jester round met: the test needs one")


# --- PettingZoo -------------------------------------------------------------

@pytest.mark.parametrize("kw", SETTINGS, ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_pettingzoo_api_and_seed_tests_pass(kw: dict[str, object]) -> None:
    from pettingzoo.test import api_test, seed_test

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice to use a Box rather than a Dict space
        api_test(aec_env(**kw), num_cycles=200)
        seed_test(lambda: aec_env(**kw), num_cycles=200)


def test_the_mask_is_exactly_the_legal_actions_and_games_follow_the_seed() -> None:
    def play(seed: int) -> tuple[str, list[int]]:
        e = raw_env(festum=True)
        e.reset(seed=seed)
        rng = np.random.default_rng(0)
        taken = []
        while not all(e.terminations.values()):
            agent = e.agent_selection
            obs = e.observe(agent)
            game = e.table.game
            assert game is not None
            assert int(obs["action_mask"].sum()) == len(game.legal_actions())
            assert ["player_1", "player_2"].index(agent) == game.to_move
            other = e.observe("player_2" if agent == "player_1" else "player_1")
            assert other["action_mask"].sum() == 0
            i = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            taken.append(i)
            e.step(i)
        assert set(e.rewards.values()) <= {-1.0, 0.0, 1.0} and sum(e.rewards.values()) == 0
        assert e.table.game is not None
        return e.table.game.state_hash(), taken

    assert play(3) == play(3)
    assert play(3)[0] != play(4)[0]


def test_resets_without_a_seed_deal_other_games_in_every_copy_and_seeded_ones_stay_fixed() -> None:
    # Gymnasium's vector environments, RLlib's env runners and SuperSuit's copies reset without a
    # seed: each copy must play games of its own, as Gymnasium's convention has it.
    def deals(e: object, resets: int, seed: int | None = None) -> list[str]:
        out = []
        for k in range(resets):
            e.reset(seed=seed if k == 0 else None)  # type: ignore[attr-defined]
            out.append(e.unwrapped.table.game.state_hash())  # type: ignore[attr-defined]
        return out

    a, b = deals(raw_env(), 2), deals(raw_env(), 2)
    assert len(set(a + b)) == 4  # two series, each going on from game to game
    assert deals(raw_env(), 2, seed=5) == deals(raw_env(), 2, seed=5)

    import gymnasium

    vec = gymnasium.vector.SyncVectorEnv([lambda: GymEnv(opponent="random") for _ in range(3)])
    vec.reset()
    assert len({env.table.game.state_hash() for env in vec.envs}) == 3
    assert deals(GymEnv(opponent="random"), 2) != deals(GymEnv(opponent="random"), 2)
    assert deals(GymEnv(opponent="random"), 2, seed=5) == deals(GymEnv(opponent="random"), 2, seed=5)


def test_an_illegal_action_loses_the_wrapped_game_and_raises_in_the_raw_one() -> None:
    e = aec_env()
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    loser = e.agent_selection
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e.step(bad)
    assert e.rewards[loser] == -1 and all(e.terminations.values())
    raw = raw_env()
    raw.reset(seed=1)
    with pytest.raises(ValueError, match="not legal"):
        raw.step(bad)


# --- Gymnasium ---------------------------------------------------------------

def test_gymnasium_check_env_and_a_seeded_game_against_greedy() -> None:
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "not able to test alternative render modes" without a registry spec
        check_env(GymEnv(opponent="greedy", ruleset="classic"))

    def play(seed: int) -> tuple[float, tuple[int, int], int]:
        env = GymEnv(opponent="greedy", seat=None, festum=True)
        obs, info = env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        done, reward, steps = False, 0.0, 0
        while not done:
            assert np.array_equal(obs["action_mask"], info["action_mask"]) and obs["action_mask"].any()
            obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
            steps += 1
        return reward, info["scores"], steps

    first = play(11)
    assert first == play(11)
    assert first[0] in (-1.0, 0.0, 1.0) and first[2] > 10


def test_gymnasium_make_knows_basilica_v0_even_before_the_package_is_imported() -> None:
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    env = gymnasium.make("basilica-v0", opponent="random", ruleset="classic")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(env.unwrapped)
    code = ("import gymnasium\n"
            "e = gymnasium.make('basilica_p2p.env:basilica-v0', opponent='random')\n"
            "obs, info = e.reset(seed=1)\n"
            "print(int(obs['action_mask'].sum()) > 0, e.spec.id)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.stdout.split() == ["True", "basilica-v0"], r.stderr[-2000:]


def test_human_rendering_prints_the_board_after_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    env = GymEnv(opponent="random", render_mode="human")
    obs, _ = env.reset(seed=2)
    assert env.render() is None
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    boards = capsys.readouterr().out
    assert boards.count("score") >= 3, boards  # reset, render(), step
    aec = raw_env(render_mode="human")
    aec.reset(seed=2)
    assert "score" in capsys.readouterr().out
    with pytest.raises(ValueError, match="'ansi' and 'human'"):
        GymEnv(render_mode="rgb_array")


def test_the_pettingzoo_state_is_both_views_side_by_side() -> None:
    e = raw_env()
    e.reset(seed=4)
    for _ in range(30):
        e.step(int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]))
    state = e.state()
    assert e.state_space.contains(state)
    views = [e.observe(a)["observation"] for a in ("player_1", "player_2")]
    assert np.array_equal(state, np.concatenate(views)) and not np.array_equal(*views)


def test_the_learner_plays_both_seats_unless_one_is_asked_for() -> None:
    env = GymEnv(opponent="random")
    seats = set()
    for k in range(12):
        env.reset(seed=k)
        seats.add(env.seat)
    assert seats == {0, 1}
    fixed = GymEnv(opponent="random", seat=1)
    assert {fixed.reset(seed=k)[1]["seat"] for k in range(4)} == {1}


def test_the_flat_layout_goes_through_supersuits_and_gymnasiums_observation_wrappers() -> None:
    # SuperSuit's flatten, dtype and normalize_obs take a Box, not a Dict: the flat layout is the
    # vector alone, and the mask travels in info["action_mask"], where PettingZoo looks for it.
    import gymnasium
    import supersuit as ss
    from gymnasium.utils.env_checker import check_env
    from pettingzoo.test import api_test

    def wrapped() -> object:
        return ss.normalize_obs_v0(ss.dtype_v0(ss.flatten_v0(aec_env(obs_layout="flat")), np.float32))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(wrapped(), num_cycles=100)
    e = wrapped()
    e.reset(seed=3)  # type: ignore[attr-defined]
    rng = np.random.default_rng(3)
    for _ in e.agent_iter():  # type: ignore[attr-defined]
        obs, _, term, trunc, info = e.last()  # type: ignore[attr-defined]
        assert obs.shape == (ENCODER.size,) and 0.0 <= obs.min() and obs.max() <= 1.0
        e.step(None if term or trunc else int(rng.choice(np.flatnonzero(info["action_mask"]))))  # type: ignore[attr-defined]
    game = e.unwrapped.table.game  # type: ignore[attr-defined]
    assert game.over and len(game.history) > 50  # played to the end, never an illegal index

    g = gymnasium.wrappers.NormalizeObservation(GymEnv(opponent="random", obs_layout="flat"))
    obs, info = g.reset(seed=1)
    assert obs.shape == (ENCODER.size,) and np.array_equal(info["action_mask"], g.unwrapped.action_masks())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(GymEnv(opponent="random", obs_layout="flat"))
    with pytest.raises(ValueError, match="'dict', 'rllib', 'flat'"):
        GymEnv(obs_layout="box")


def test_the_rllib_layout_has_the_keys_and_types_of_rllibs_action_masking_module() -> None:
    env = GymEnv(opponent="random", obs_layout="rllib")
    obs, info = env.reset(seed=1)
    assert set(obs) == {"observations", "action_mask"} and env.observation_space.contains(obs)
    assert obs["action_mask"].dtype == np.float32 and np.array_equal(obs["action_mask"], info["action_mask"])


def test_rllib_ppo_trains_on_the_env_with_no_adapter(tmp_path: Path) -> None:
    # The shipped example: RLlib's own action-masking module, the environment by its Gymnasium id.
    # Its home folder is a temporary one: Ray writes nothing into the user's (~/.ray, ~/ray_results).
    env = {**os.environ, "HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "rllib_ppo.py"), "--iterations", "1",
                        "--batch", "200"], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "iteration 1: 200" in r.stdout, r.stdout + r.stderr[-2000:]
    assert not (tmp_path / ".ray").exists()


# --- OpenSpiel ----------------------------------------------------------------

def test_openspiel_random_simulation_test_on_both_rulesets_and_festum() -> None:
    import pyspiel

    import basilica_p2p.env.spiel  # noqa: F401 - registers the game

    for params in ({"ruleset": "classic"}, {"festum": True, "festum_removal": True}):
        game = pyspiel.load_game("python_basilica", params)
        pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
        assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC
        # Every outcome a chance node offers is one the engine accepts, through the D11 reshuffle too.
        rng = random.Random(5)
        reshuffled = False
        for _ in range(6):
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes, probs = zip(*state.chance_outcomes())
                    assert abs(sum(probs) - 1) < 1e-9 and min(probs) > 0
                    for o in rng.sample(outcomes, min(4, len(outcomes))):
                        state.child(o)  # raises RevealError if the engine refuses the fact
                    state.apply_action(rng.choices(outcomes, probs)[0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
            assert state.engine is not None
            if state.engine.reshuffles:
                reshuffled = True
                break
        assert reshuffled


def test_openspiel_chance_draws_faces_and_tiles_as_the_shuffle_would() -> None:
    """At the deal: O1's face in proportion to its copies; then a vault tile of V1, whose class
    is less likely by the copies already seen face up, and whose tile is any of its class."""
    import pyspiel

    import basilica_p2p.env.spiel  # noqa: F401

    game = pyspiel.load_game("python_basilica")
    state = game.new_initial_state()
    assert state.chance_outcomes() == [(0, 0.5), (1, 0.5)]
    state.apply_action(1)
    shown = M.order_faces_show_crown
    classes = [t.face_class(shown) for t in M.tiles]
    n = len(classes)
    first = dict(state.chance_outcomes())
    assert first == pytest.approx({game.faces.index(f): classes.count(f) / n for f in set(classes)})
    rng = random.Random(3)
    seen = []
    while True:
        outcomes = dict(state.chance_outcomes())
        assert sum(outcomes.values()) == pytest.approx(1)
        if max(outcomes) < len(game.faces):  # the order faces of O1-O3 come first
            face = rng.choice(list(outcomes))
            seen.append(game.faces[face])
            state.apply_action(face)
            continue
        for tile in M.tiles:
            f = tile.face_class(shown)
            expected = (classes.count(f) - seen.count(f)) / (n - len(seen)) / classes.count(f)
            assert outcomes.get(len(game.faces) + game.tile_index[tile.id], 0.0) == pytest.approx(expected)
        break
    assert len(seen) == 3


def test_openspiel_ismcts_and_mcts_bots_play_a_whole_game() -> None:
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts

    import basilica_p2p.env.spiel  # noqa: F401

    game = pyspiel.load_game("python_basilica")
    rs = np.random.RandomState(7)
    rollout = mcts.RandomRolloutEvaluator(1, rs)
    bots = [ismcts.ISMCTSBot(game, rollout, 2.0, max_simulations=3, random_state=rs),
            mcts.MCTSBot(game, uct_c=2.0, max_simulations=3, evaluator=rollout, random_state=rs, solve=False)]
    state = game.new_initial_state()
    decisions = [0, 0]
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rs.choice(outcomes, p=probs)))
        else:
            player = state.current_player()
            action = bots[player].step(state)
            assert action in state.legal_actions()
            state.apply_action(action)
            decisions[player] += 1
    assert min(decisions) > 10 and sorted(state.returns()) in ([-1.0, 1.0], [0.0, 0.0])


def test_openspiels_evaluate_bots_plays_a_game_with_the_ismcts_bot_of_this_package() -> None:
    # evaluate_bots calls restart_at first; OpenSpiel's Python ISMCTSBot has none, ours has.
    import pyspiel
    from open_spiel.python.algorithms import mcts
    from open_spiel.python.algorithms.evaluate_bots import evaluate_bots

    from basilica_p2p.env.spiel import ISMCTSBot

    game = pyspiel.load_game("python_basilica")
    rs = np.random.RandomState(8)
    rollout = mcts.RandomRolloutEvaluator(1, rs)
    bots = [ISMCTSBot(game, rollout, 2.0, max_simulations=3, random_state=rs),
            mcts.MCTSBot(game, uct_c=2.0, max_simulations=3, evaluator=rollout, random_state=rs, solve=False)]
    assert sorted(evaluate_bots(game.new_initial_state(), bots, rs)) in ([-1.0, 1.0], [0.0, 0.0])


def test_openspiel_information_states_hide_the_other_players_secret_jester_colours() -> None:
    import pyspiel

    from basilica_p2p.env.spiel import BasilicaState

    game = pyspiel.load_game("python_basilica")
    for k in range(20):
        rng = random.Random(k)
        state: BasilicaState = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                assert abs(sum(probs) - 1) < 1e-9
                state.apply_action(rng.choices(outcomes, probs)[0])
                continue
            g = state.engine
            assert g is not None
            if g.secret_jester_round():
                first = state.current_player()
                views = set()
                for a in state.legal_actions():
                    after = state.child(a)
                    assert after.current_player() == 1 - first
                    views.add((tuple(after.information_state_tensor(1 - first)),
                               after.information_state_string(1 - first), tuple(after.observation_tensor(1 - first))))
                assert len(state.legal_actions()) >= 2 and len(views) == 1
                # ISMCTS's resampling draws the secret choice anew and keeps the second player's view.
                choices = set()
                for _ in range(30):
                    world = after.resample_from_infostate(1 - first, rng.random)
                    assert world.information_state_string(1 - first) == after.information_state_string(1 - first)
                    assert world.engine is not None
                    choices.add(world.engine.jester_choices[first])
                assert len(choices) == len(state.legal_actions())
                return
            legal = {i: game.table.action(i, jester_cells(observe(g, g.to_move).builders, g.to_move))
                     for i in state.legal_actions()}
            promote = [i for i, a in legal.items() if a.rank == JESTER]
            state.apply_action(rng.choice(promote or list(legal)))
    raise AssertionError("no secret Jester round met: the test needs one")


# --- packaging ----------------------------------------------------------------

def test_the_package_works_without_the_rl_extra_and_says_how_to_get_it() -> None:
    code = (
        "import sys\n"
        "sys.modules['numpy'] = None\n"  # as if the [rl] extra were not installed
        "import basilica_p2p, basilica_p2p.engine, basilica_p2p.bots, basilica_p2p.match\n"
        "assert not any(m.startswith('basilica_p2p.env') for m in sys.modules)\n"
        "try:\n"
        "    import basilica_p2p.env\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().count("\n") == 0
    assert "pip install 'basilica-p2p[rl]'" in out.stdout


def test_the_training_example_runs_and_reports_both_policies() -> None:
    example = ROOT / "examples" / "rl_action_prior.py"
    out = subprocess.run([sys.executable, str(example), "--games", "40", "--eval", "10"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "trained on 40 games" in out.stdout
    assert "uniform policy" in out.stdout and "learned prior" in out.stdout
