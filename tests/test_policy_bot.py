"""A trained policy at the table (bots/policy.py): module:function and policy:PATH bots.

The MaskablePPO model is trained by the shipped example (examples/train_maskable_ppo.py)
for a few hundred steps: too few to play well, enough to be a real saved model that
every table must take as it is.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from basilica_p2p.app import AppPlayer, BasilicaApp
from basilica_p2p.app.widgets import ScoringScreen
from basilica_p2p.bots import BotSpecError, make_bot
from basilica_p2p.bots.policy import PolicyBot
from basilica_p2p.engine import Options, default_manifest
from basilica_p2p.env import GymEnv
from basilica_p2p.match import MatchConfig, run_match
from basilica_p2p.replay.show import walk
from basilica_p2p.replay.verify import known_manifests, verify_file
from basilica_p2p.lineclient import play_local
from test_app import BOT, ME, SIZE, deciding, until
from test_tournament import run_bounded

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = default_manifest()

POLICIES = """
    import numpy as np


    def first_legal(observation, mask):
        return int(np.flatnonzero(mask)[0])


    def most_coins(observation, mask):
        # Any function of the encoded view will do: here, a fixed preference over the indices.
        legal = np.flatnonzero(mask)
        return int(legal[int(observation.sum() * 1000) % len(legal)])


    def illegal(observation, mask):
        return int(np.flatnonzero(mask == 0)[0])
"""


@pytest.fixture
def policies(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    (tmp_path / "my_policies.py").write_text(textwrap.dedent(POLICIES))
    monkeypatch.syspath_prepend(str(tmp_path))
    return {**os.environ, "PYTHONPATH": str(tmp_path)}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    folder = tmp_path_factory.mktemp("ppo")
    r = subprocess.run([sys.executable, str(ROOT / "examples" / "train_maskable_ppo.py"), "--steps", "256",
                        "--eval", "0", "--out", "model.zip"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "saved model.zip: play it with --bots policy:model.zip" in r.stdout, r.stdout
    yield folder / "model.zip"


def test_a_function_of_the_observation_and_mask_is_a_bot_in_a_tournament_with_two_workers(
        tmp_path: Path, policies: dict[str, str]) -> None:
    bot = make_bot("my_policies:first_legal", MANIFEST, 0)
    assert isinstance(bot, PolicyBot) and bot.name == "first_legal"
    r = run_bounded(["tournament", "--bots", "my_policies:first_legal,my_policies:most_coins,random", "--games", "2",
                     "--jobs", "2", "--out", str(tmp_path / "out")], policies, tmp_path, 240)
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert len(data["games"]) == 6 and data["forfeits"] == 0


def test_a_policy_that_answers_an_illegal_index_loses_by_forfeit(policies: dict[str, str]) -> None:
    summary = run_match(MatchConfig(p1="my_policies:illegal", p2="random", games=1, seed="illegal"), MANIFEST,
                        progress=False)
    (game,) = summary.games
    assert game.end.startswith("forfeit") and "not a legal action now" in game.end, game.end


def test_a_maskable_ppo_model_from_the_example_plays_a_tournament_with_two_workers(model: Path,
                                                                                   tmp_path: Path) -> None:
    # A path relative to the current folder, as a user would type it.
    r = run_bounded(["tournament", "--bots", "policy:model.zip,random,greedy", "--games", "2", "--jobs", "2",
                     "--out", str(tmp_path / "out")], dict(os.environ), model.parent, 240)
    assert r.returncode == 0, r.stderr[-3000:]
    data = json.loads((tmp_path / "out" / "tournament.json").read_text())
    assert len(data["games"]) == 6 and data["forfeits"] == 0
    assert "policy:model.zip" in {s["bot"] for s in data["standings"]}


def test_the_model_is_the_gym_opponent_for_self_play(model: Path) -> None:
    env = GymEnv(opponent=f"policy:{model}")
    obs, _ = env.reset(seed=5)
    done = False
    while not done:
        obs, reward, done, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
    assert reward in (-1.0, 0.0, 1.0) and "illegal" not in info


def test_the_model_plays_against_a_person_in_the_app(model: Path, tmp_path: Path) -> None:
    bot = make_bot(f"policy:{model}", MANIFEST, 0)
    person = AppPlayer("ada", MANIFEST)
    app = BasilicaApp(person, lambda: play_local(person, bot, (ME, BOT), 0, MANIFEST, Options(),  # type: ignore[arg-type]
                                                 tmp_path))

    async def run() -> None:
        async with app.run_test(size=SIZE) as pilot:
            played = 0
            while played < 12:  # a dozen of the person's decisions: the model answers in between
                await until(pilot, lambda: deciding(app) or isinstance(app.screen, ScoringScreen), "a decision")
                if isinstance(app.screen, ScoringScreen):
                    await pilot.press("escape")
                    continue
                await pilot.press("down", "enter")
                played += 1
            await until(pilot, lambda: deciding(app) or isinstance(app.screen, ScoringScreen), "a decision")
            await pilot.press("escape", "q", "ctrl+c", "ctrl+c")  # leaving is a forfeit: the game ends here
            await until(pilot, lambda: app.finished, "the forfeit")

    asyncio.run(run())
    assert verify_file(app.result.replay, known_manifests()).ok
    moves = walk(app.result.replay, known_manifests()).moves
    assert sum(1 for m in moves if m.player == 1) >= 6  # the model's own moves, in a verified replay


def test_play_vs_policy_names_the_bot_after_the_model(model: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    r = subprocess.run([str(Path(sys.executable).parent / "basilica"), "play", "--plain", "--vs", "policy:model.zip",
                        "--home", str(home)], cwd=model.parent, input="1\n" * 6 + "quit\nyes\n",
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert "policy-model" in r.stdout and ": ok:" in r.stdout, r.stdout[-2000:]


def test_a_file_that_is_not_a_model_is_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    for spec, words in ((f"policy:{tmp_path / 'none.zip'}", "no such file"),
                        (f"policy:{tmp_path / 'junk.zip'}", "not a MaskablePPO model")):
        with pytest.raises(BotSpecError, match=words):
            make_bot(spec, MANIFEST, 0)
    r = subprocess.run([str(Path(sys.executable).parent / "basilica"), "tournament", "--bots",
                        f"policy:{tmp_path / 'junk.zip'},random"], capture_output=True, text=True, timeout=120)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and "not a MaskablePPO model" in errors[0], r.stderr
    assert "Traceback" not in r.stderr
