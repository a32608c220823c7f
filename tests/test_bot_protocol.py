"""Bots in any language: the line protocol of protocol/BOTS.md (``--bot cmd:PROGRAM``).

Covers: the transcript of a decision, line by line; whole games of the example
bots (Python and POSIX shell, neither importing the package) in ``match``, in
``tournament`` and over the network; every way a bot program can fail (crash,
hang, illegal answer, garbage, exiting at once, silence at the handshake, an
overlong line, giving up), each losing the game with a one-line reason while
the match goes on; that no bot process, nor a process it started, outlives its
game; that the action history never shows the other player's secret Jester
colours; and that built-in and module bots that fail lose the same way.
"""

from __future__ import annotations

import json
import os
import random
import shlex
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from basilica_p2p.bots import BotFailed, BotSpecError, ExternalBot, RandomBot, checked_choose, close_bot, make_bot
from basilica_p2p.bots.process import live_children
from basilica_p2p.cli import app
from basilica_p2p.clock import Limits
from basilica_p2p.engine import Game, Options, default_manifest, determinize, format_action, observe, parse_action
from basilica_p2p.identity import Identity
from basilica_p2p.match import FORFEIT, MatchConfig, match_game_seed, play_game, run_match
from basilica_p2p.net.peer import PeerConfig
from basilica_p2p.net.session import GameReport, Settings, Timeouts
from basilica_p2p.replay.verify import verify_file
from basilica_p2p.tournament import run_tournament, standings

from support.helpers import Tiles, build, play
from support.net_harness import ALICE, BOB, FAST, host_and_join, settings

runner = CliRunner()
M = default_manifest()
ROOT = Path(__file__).resolve().parent.parent
PY = shlex.quote(sys.executable)
LINE_BOT = f"cmd:{PY} {shlex.quote(str(ROOT / 'examples' / 'line_bot.py'))}"
SH_BOT = f"cmd:sh {shlex.quote(str(ROOT / 'examples' / 'line_bot.sh'))}"


# --- bot programs for the tests -------------------------------------------------------------------

TEMPLATE = '''\
import os, sys, time
def out(s):
    sys.stdout.write(s + "\\n"); sys.stdout.flush()
n = 0
legal = []
LOG = {log!r}
for line in sys.stdin:
    if LOG:
        with open(LOG, "a") as f:
            f.write(line)
    w = line.split()
    if not w:
        continue
    if w[0] == "basilica-bot":
{handshake}
    elif w[0] == "newgame":
        out("ready")
    elif w[0] == "legal":
        legal = w[2:]
    elif w[0] == "go":
        n += 1
{go}
    elif w[0] == "quit":
        break
'''


def program(tmp_path: Path, name: str, go: str = 'out("action " + legal[0])',
            handshake: str = 'out("ok basilica-bot 1 name=" + ' + repr("t") + ')', log: str = "") -> str:
    """A Python bot program in tmp_path; returns its cmd: spec."""
    def indent(code: str) -> str:
        return "\n".join("        " + line for line in code.splitlines())

    path = tmp_path / f"{name}.py"
    path.write_text(TEMPLATE.format(handshake=indent(handshake), go=indent(go), log=log))
    return f"cmd:{PY} {shlex.quote(str(path))}"


def gone(pid: int) -> bool:
    """The process is not running (reaped, or a zombie whose parent is init)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


@pytest.fixture(autouse=True)
def no_leftover_processes():  # type: ignore[no-untyped-def]
    yield
    deadline = time.monotonic() + 5
    while live_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert live_children() == [], "a bot program outlived its test"


def one_match(spec1: str, spec2: str, games: int = 1, seed: str = "0") -> dict:
    summary = run_match(MatchConfig(spec1, spec2, games=games, seed=seed), M, progress=False)
    return summary.to_json()


# --- the transcript --------------------------------------------------------------------------------


def test_transcript_of_a_decision_line_by_line(tmp_path: Path) -> None:
    log = tmp_path / "heard.txt"
    spec = program(tmp_path, "echo", go='out("action " + legal[-1])', log=str(log))
    g = Game.new(M, Options(), match_game_seed("transcript", 0))
    bot = make_bot(spec, M, 777)
    assert isinstance(bot, ExternalBot) and bot.pid is None  # nothing runs before the first decision
    try:
        for _ in range(2):
            p = g.to_move
            assert p is not None
            legal = g.legal_actions()
            action = bot.choose(observe(g, p), legal) if p == 0 else legal[0]
            if p == 0:
                assert action == legal[-1]
            g.apply(action)
        while g.to_move != 0:
            g.apply(g.legal_actions()[0])
        before = [format_action(a) for a in g.history]
        legal = g.legal_actions()
        assert bot.choose(observe(g, 0), legal) == legal[-1]
        assert bot.name == "t"  # the name from the handshake
    finally:
        bot.close()
    assert bot.pid is not None and gone(bot.pid)
    lines = log.read_text().splitlines()
    assert lines[0] == "basilica-bot 1"
    assert lines[1] == (f"newgame ruleset=portal2022 festum=no removal=no seat=1 manifest={M.hash} seed=777 "
                        f"time=10000")
    # every decision: position, state, legal, go
    decisions = [i for i, line in enumerate(lines) if line.startswith("go ")]
    assert len(decisions) >= 2
    last = decisions[-1]
    assert lines[last - 3] == f"position {len(before)} " + " ".join(before)
    state = json.loads(lines[last - 2].removeprefix("state "))
    assert state["player"] == 1 and state["to_move"] == 1 and state["pending"]["kind"] == "main"
    assert state["stack_size"] == len(g.stack) and "stack" not in state  # a count, never the order
    words = lines[last - 1].split()
    assert words[0] == "legal" and int(words[1]) == len(legal) == len(words) - 2
    assert [parse_action(w) for w in words[2:]] == legal
    assert lines[last].startswith("go time=10000 decision=main turn=")
    assert lines[-1] == "quit"  # close() says quit before it stops the program


def test_the_example_bot_speaks_the_protocol_by_hand(tmp_path: Path) -> None:
    """The example program answers a hand-written transcript exactly as BOTS.md shows."""
    import subprocess

    g = Game.new(M, Options(), match_game_seed("by-hand", 0))
    obs = observe(g, g.to_move or 0)
    legal = [format_action(a) for a in g.legal_actions()]
    script = "\n".join([
        "basilica-bot 1",
        f"newgame ruleset=portal2022 festum=no removal=no seat={obs.player + 1} manifest={M.hash} seed=5 time=10000",
        "position 0",
        "state " + json.dumps(obs.describe()),
        f"legal {len(legal)} " + " ".join(legal),
        "go time=10000 decision=main turn=1",
        "gameover winner=none scores=0,0 end=stack",
        "quit",
    ]) + "\n"
    for cmd in ([sys.executable, str(ROOT / "examples" / "line_bot.py")], ["sh", str(ROOT / "examples" / "line_bot.sh")]):
        done = subprocess.run(cmd, input=script, capture_output=True, text=True, timeout=20)
        assert done.returncode == 0, done.stderr
        out = done.stdout.splitlines()
        assert out[0].startswith("ok basilica-bot 1 name=") and out[1] == "ready" and len(out) == 3
        assert out[2].startswith("action ") and out[2].split(" ", 1)[1] in legal


def test_the_example_bot_does_not_import_the_package() -> None:
    import ast

    tree = ast.parse((ROOT / "examples" / "line_bot.py").read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported and imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
    assert os.access(ROOT / "examples" / "line_bot.py", os.X_OK)


# --- whole games -------------------------------------------------------------------------------------


@pytest.mark.parametrize("seat", [1, 2])
def test_match_example_bot_against_random_in_both_seats(seat: int) -> None:
    specs = (LINE_BOT, "random") if seat == 1 else ("random", LINE_BOT)
    data = one_match(*specs, games=4, seed=f"seat{seat}")
    assert data["games"] == 4 and data["forfeits"] == 0
    for r in data["results"]:
        assert r["end"] in ("last-scoring", "stack")
    # the example bot plays sensibly: it wins most of its games against random
    assert data["wins"][seat - 1] >= 3
    # reproducible: the bot's generator is seeded through newgame
    again = one_match(*specs, games=4, seed=f"seat{seat}")
    assert [r["state_hash"] for r in again["results"]] == [r["state_hash"] for r in data["results"]]


def test_match_cli_with_the_shell_bot_and_replays(tmp_path: Path) -> None:
    r = runner.invoke(app, ["--home", str(tmp_path / "home"), "match", "--p1", SH_BOT, "--p2", "random", "--games",
                            "2", "--json", "--replay-dir", str(tmp_path / "out")], env={"BASILICA_HOME": None})
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["games"] == 2 and data["forfeits"] == 0
    for path in data["replays"]:
        v = verify_file(Path(path))
        assert v.ok, v.line()


def test_tournament_cli_with_bots_in_other_languages(tmp_path: Path) -> None:
    # The done-when of the issue: a bot written in another language enters a tournament.
    bots = f"{SH_BOT},{LINE_BOT},random"
    r = runner.invoke(app, ["tournament", "--bots", bots, "--games", "2", "--jobs", "1", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    data = json.loads((tmp_path / "tournament.json").read_text())
    assert data["bots"] == [SH_BOT, LINE_BOT, "random"]
    assert len(data["games"]) == 6 and data["forfeits"] == 0
    rows = {s["bot"]: s for s in data["standings"]}
    assert set(rows) == {SH_BOT, LINE_BOT, "random"}
    assert all(s["games"] == 4 and s["forfeits"] == 0 for s in rows.values())
    assert all(g["end"] in ("last-scoring", "stack") for g in data["games"])


def test_tournament_in_worker_processes_with_a_failing_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crash = program(tmp_path, "crash", go="sys.exit(3) if n == 2 else out('action ' + legal[0])")
    label = make_bot(crash, M, 0).spec  # type: ignore[attr-defined]
    heard: list[str] = []
    results = run_tournament([crash, "random"], 2, "t", Options(), jobs=2, on_forfeit=lambda r: heard.append(r.end))
    assert len(results) == 2 and len(heard) == 2
    for r in results:
        assert r.winner == "random"
        assert r.end.startswith(f"{FORFEIT}: bot {label}") and r.end.endswith("crashed with exit code 3 before "
                                                                              "answering its decision")
    (first, second) = standings([crash, "random"], results)
    assert (first.bot, first.wins) == ("random", 2)
    assert (second.bot, second.losses, second.forfeits) == (crash, 2, 2)


# --- failures: each loses the game, with a clear reason --------------------------------------------

FAILURES = {
    "crash": (dict(go="sys.exit(3) if n == 3 else out('action ' + legal[0])"), "crashed with exit code 3"),
    "killed": (dict(go="os.kill(os.getpid(), 9) if n == 2 else out('action ' + legal[0])"), "was killed by SIGKILL"),
    "hang": (dict(go="time.sleep(1000) if n == 2 else out('action ' + legal[0])"),
             "did not answer its decision within 0.5 s"),
    "illegal": (dict(go="out('action V3:e9')"), "answered illegal action 'V3:e9'"),
    "not notation": (dict(go="out('action castle')"), "answered 'castle', which is not an action"),
    "garbage": (dict(go="out('hello world')"), "broke the protocol: expected 'action <notation>', got 'hello world'"),
    "extra line": (dict(go="out('action ' + legal[0]); out('hello')"), "broke the protocol"),
    "gives up": (dict(go="out('error no idea')"), "gave up: 'no idea'"),
    "long line": (dict(go="out('action ' + 'x' * 5000)"), "a line longer than 4096 bytes"),
    "4097 bytes": (dict(go="out('action ' + 'x' * 4090)"), "a line longer than 4096 bytes"),
    "no newline": (dict(go="sys.stdout.write('action ' + legal[0]); sys.stdout.flush(); sys.exit(0)"),
                   "exited (code 0) before answering its decision"),
    "not utf-8": (dict(go="sys.stdout.buffer.write(b'action \\xff\\n'); sys.stdout.flush()"),
                  "a line that is not UTF-8"),
    "bad handshake": (dict(handshake="out('ok chess 2')"), "expected 'ok basilica-bot 1', got 'ok chess 2'"),
    "silent handshake": (dict(handshake="time.sleep(1000)"), "did not answer the handshake within 0.5 s"),
}


@pytest.mark.parametrize("case,seat", [(case, 0) for case in sorted(FAILURES)]
                         + [(case, 1) for case in ("crash", "hang", "illegal", "garbage")])
def test_a_failing_bot_loses_the_game_and_the_match_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str, seat: int,
) -> None:
    kwargs, why = FAILURES[case]
    monkeypatch.setenv("BASILICA_BOT_TIME", "0.5")
    monkeypatch.setenv("BASILICA_BOT_HANDSHAKE_TIME", "0.5")
    bad = program(tmp_path, "bad", **kwargs)
    label = make_bot(bad, M, 0).spec  # type: ignore[attr-defined]
    specs = (bad, "random") if seat == 0 else ("random", bad)
    started = time.monotonic()
    data = one_match(*specs, games=2)
    assert time.monotonic() - started < 15
    assert data["games"] == 2 and data["forfeits"] == 2  # a fresh bot for the second game, which fails too
    for r in data["results"]:
        assert r["winner"] == 2 - seat  # the other side wins
        # A long label (the temporary path) is shortened in its middle; what happened stays whole.
        assert r["end"].startswith(f"forfeit: bot {label[:20]}") and f"bad.py (player {seat + 1}) " in r["end"]
        assert why in r["end"], r["end"]
    err = capsys.readouterr().err
    assert f"game 1: bot {label} (player {seat + 1})" in err and f"player {2 - seat} wins by forfeit" in err


def test_the_engine_tells_a_failed_bot_why_then_quit(tmp_path: Path) -> None:
    log = tmp_path / "heard.txt"
    bad = program(tmp_path, "illegal", go="out('action V3:e9')", log=str(log))
    bot = make_bot(bad, M, 0)
    g = Game.new(M, Options(), match_game_seed("why", 0))
    p = g.to_move or 0
    with pytest.raises(BotFailed, match="answered illegal action 'V3:e9'"):
        bot.choose(observe(g, p), g.legal_actions())
    with pytest.raises(BotFailed, match="failed before: answered illegal action"):  # it stays failed
        bot.choose(observe(g, p), g.legal_actions())
    close_bot(bot)
    assert log.read_text().splitlines()[-2:] == ["error answered illegal action 'V3:e9'", "quit"]


def test_a_bot_that_exits_at_once() -> None:
    data = one_match("cmd:true", "random")
    (r,) = data["results"]
    assert r["winner"] == 2 and r["end"] == "forfeit: bot cmd:true (player 1) exited (code 0) before answering " \
                                            "the handshake"


def test_a_program_that_cannot_start_is_refused_by_name() -> None:
    for spec, why in [("cmd:", "needs a program"), ("cmd:/nonexistent/bot", "no program"),
                      ("cmd:no-such-program-here", "on PATH"), ("cmd:python3 'unclosed", "cannot split"),
                      (f"cmd:{ROOT / 'README.md'}", "not executable")]:
        with pytest.raises(BotSpecError, match=why):
            make_bot(spec, M, 0)
    r = runner.invoke(app, ["tournament", "--bots", "cmd:/nonexistent/bot,random"])
    assert r.exit_code == 2 and "no program" in r.output and "Traceback" not in r.output


def test_the_whole_process_group_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hung bot that started a process of its own: both are gone after the game."""
    pidfile = tmp_path / "child.pid"
    go = ("import subprocess\n"
          f"p = subprocess.Popen(['sleep', '1000']); open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
          "time.sleep(1000)")
    monkeypatch.setenv("BASILICA_BOT_TIME", "0.5")
    bad = program(tmp_path, "spawner", go=go)
    bots = (make_bot(bad, M, 1), RandomBot(2))
    with pytest.raises(BotFailed, match="did not answer its decision within 0.5 s") as e:
        play_game(M, Options(), match_game_seed("pg", 0), bots)
    assert e.value.player == 0 and isinstance(e.value.game, Game) and not e.value.game.over
    close_bot(bots[0])
    assert gone(bots[0].pid)  # type: ignore[attr-defined]
    deadline = time.monotonic() + 5
    while not gone(int(pidfile.read_text())) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(int(pidfile.read_text())), "the bot's own child survived"


def test_closing_a_bot_that_ignores_quit_kills_it(tmp_path: Path) -> None:
    stubborn = program(tmp_path, "stubborn")
    path = tmp_path / "stubborn.py"
    # it neither leaves on quit nor at the end of its input
    path.write_text(path.read_text().replace("        break", "        pass") + "time.sleep(1000)\n")
    bot = make_bot(stubborn, M, 0)
    g = Game.new(M, Options(), match_game_seed("stubborn", 0))
    p = g.to_move or 0
    bot.choose(observe(g, p), g.legal_actions())
    started = time.monotonic()
    close_bot(bot)
    assert time.monotonic() - started < 3
    assert gone(bot.pid)  # type: ignore[attr-defined]


# --- built-in and module bots fail the same way -----------------------------------------------------


class Raises:
    name = "raises"

    def choose(self, obs, legal):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("oops")


class Illegal:
    name = "illegal"

    def choose(self, obs, legal):  # type: ignore[no-untyped-def]
        return parse_action("V3:e9")


@pytest.mark.parametrize("bot,why", [(Raises(), "bot raises (player 2) raised ZeroDivisionError: oops"),
                                     (Illegal(), "bot illegal (player 2) answered illegal action 'V3:e9'")])
def test_a_python_bot_that_fails_loses_the_same_way(bot: object, why: str) -> None:
    with pytest.raises(BotFailed) as e:
        play_game(M, Options(), match_game_seed("py", 0), (RandomBot(1), bot))  # type: ignore[arg-type]
    assert str(e.value) == why and e.value.player == 1


def test_a_module_bot_that_fails_in_a_match() -> None:
    data = one_match("random", f"{__name__}:Raises")
    (r,) = data["results"]
    assert r["winner"] == 1 and r["end"] == "forfeit: bot raises (player 2) raised ZeroDivisionError: oops"


# --- the action history and the secret Jester colours ------------------------------------------------


def secret_round() -> Game:
    """Both players own a Jester and a scoring is due: player 1 chooses first, then player 2."""
    T = Tiles()
    crown = T.take("G", crown=True)
    vaults = {"a1": T.take("Y"), "b1": T.take("B"), "c1": T.take("G"), "d1": T.take("R")}
    g = build(T, vaults=vaults, builders={"a1": (0, "J"), "d1": (1, "J")}, market=[crown, T.plain(), T.plain()],
              pawn=9)
    play(g, "V1:e1")
    assert g.secret_jester_round() and g.to_move == 0
    return g


def test_the_history_never_shows_the_other_players_secret_jester_colours(tmp_path: Path) -> None:
    g = secret_round()
    a, b = g.clone(), g.clone()
    play(a, "J:a1=B")
    play(b, "J:a1=G")
    assert a.to_move == b.to_move == 1
    for x in (a, b):
        obs = observe(x, 1)
        assert [format_action(m) for m in obs.history] == ["V1:e1"]
        assert obs.other_jester_committed
    assert observe(a, 1) == observe(b, 1)  # nothing tells the two apart
    assert [format_action(m) for m in observe(a, 0).history] == ["V1:e1", "J:a1=B"]  # our own choice we see
    # what the network session shows the second chooser (a stand-in for the first colours) is the same
    view = g.clone()
    view.apply(view.legal_actions()[0])
    assert observe(view, 1) == observe(a, 1)
    # a sample drawn from the observation gives the same observation back
    rng = random.Random(1)
    sample = determinize(observe(a, 1), g.manifest, lambda xs: rng.sample(xs, len(xs)), bytes(32))
    assert observe(sample, 1) == observe(a, 1)
    # once both have chosen, both choices are public
    play(a, "J:d1=G")
    assert [format_action(m) for m in observe(a, 1).history] == ["V1:e1", "J:a1=B", "J:d1=G"]
    assert [format_action(m) for m in observe(a, 0).history] == ["V1:e1", "J:a1=B", "J:d1=G"]


def test_a_cmd_bot_choosing_second_hears_nothing_of_the_first_colours(tmp_path: Path) -> None:
    log = tmp_path / "heard.txt"
    spec = program(tmp_path, "listener", log=str(log))
    g = secret_round()
    play(g, "J:a1=B")
    bot = make_bot(spec, g.manifest, 0)
    try:
        action = bot.choose(observe(g, 1), g.legal_actions())
    finally:
        bot.close()
    assert format_action(action).startswith("J:d1=")
    heard = log.read_text()
    assert "position 1 V1:e1\n" in heard and "decision=jester" in heard
    assert "a1=B" not in heard and "J:a1" not in heard
    state = json.loads(next(line for line in heard.splitlines() if line.startswith("state "))[6:])
    assert state["other_jester_committed"] is True and state["my_jester_choice"] is None


def test_every_observation_carries_the_public_history() -> None:
    g = Game.new(M, Options(), match_game_seed("history", 0))
    rng = random.Random(3)
    while not g.over:
        for p in (0, 1):
            assert observe(g, p).history == tuple(g.history)  # no secret round in this game part
        legal = g.legal_actions()
        g.apply(legal[rng.randrange(len(legal))])
        if len(g.history) > 40:
            break


# --- network play ------------------------------------------------------------------------------------


def cmd_config(me: Identity, s: Settings, replay_dir: Path, spec: str | None, timeouts: Timeouts = FAST,
               games: int = 1) -> PeerConfig:
    def agent_for(k: int):  # type: ignore[no-untyped-def]
        return make_bot(spec, s.manifest, 100 + k) if spec else RandomBot(200 + k)

    return PeerConfig(me, s, agent_for, replay_dir, None, timeouts, games)


def reports(result: list[GameReport] | BaseException) -> list[GameReport]:
    assert isinstance(result, list), f"expected the reports, got {result!r}"
    return result


@pytest.mark.trio
async def test_network_games_with_a_cmd_bot(tmp_path: Path) -> None:
    s = settings()
    pair = await host_and_join(cmd_config(ALICE, s, tmp_path / "h", LINE_BOT, games=2),
                               cmd_config(BOB, s, tmp_path / "j", None), direct=True)
    hosted, joined = reports(pair.host), reports(pair.join)
    assert len(hosted) == len(joined) == 2
    for h, j in zip(hosted, joined):
        assert h.outcome == j.outcome and h.outcome.end in ("last-scoring", "stack")
        assert h.replay.read_bytes() == j.replay.read_bytes()
        assert verify_file(h.replay).ok and verify_file(j.replay).ok


@pytest.mark.trio
@pytest.mark.parametrize("how", ["crash", "hang"])
async def test_a_cmd_bot_failing_in_a_network_game_resigns_signed(tmp_path: Path, how: str) -> None:
    go = {"crash": "sys.exit(7) if n == 4 else out('action ' + legal[0])",
          "hang": "time.sleep(1000) if n == 4 else out('action ' + legal[0])"}[how]
    bad = program(tmp_path, "bad", go=go)
    # With a decision limit of 10 s (the least the hellos allow) our cmd bot must answer within
    # 80% of it: it fails at 8 s and we resign before the peer would claim the game.
    s = replace(settings(), limits=Limits(window=120, decision=10))
    timeouts = Timeouts(handshake=5.0, ping_interval=0.2, idle=3.0, frame=2.0)
    logs: list[str] = []
    host = cmd_config(ALICE, s, tmp_path / "h", bad, timeouts)
    host.log = logs.append
    pair = await host_and_join(host, cmd_config(BOB, s, tmp_path / "j", None, timeouts), direct=True)
    (h,), (j,) = reports(pair.host), reports(pair.join)
    assert h.outcome == j.outcome
    o = h.outcome
    assert o.end == "forfeit" and o.winner == 1 and o.claimed_by == 0  # the host resigned, signed by itself
    why = "crashed with exit code 7" if how == "crash" else "did not answer its decision within 8 s"
    # the peer is told the program's file name, not where it lives here (our own log keeps the command)
    assert why in o.reason and o.reason.startswith("bot cmd:bad.py (player 1) "), o.reason
    assert str(tmp_path) not in o.reason
    assert any(why in line and "we forfeit this game" in line for line in logs), logs
    for r in (h, j):
        v = verify_file(r.replay)
        assert v.ok and v.outcome == o, v.line()
        assert "resigned" in v.line()
    assert h.replay.read_bytes() == j.replay.read_bytes()


@pytest.mark.trio
async def test_a_python_bot_that_raises_in_a_network_game_resigns_too(tmp_path: Path) -> None:
    s = settings()

    class Flaky(RandomBot):
        name = "flaky"

        def __init__(self) -> None:
            super().__init__(1)
            self.n = 0

        def choose(self, obs, legal):  # type: ignore[no-untyped-def]
            self.n += 1
            if self.n == 5:
                raise RuntimeError("lost my marbles")
            return super().choose(obs, legal)

    host = PeerConfig(ALICE, s, lambda k: Flaky(), tmp_path / "h", None, FAST, 1)
    pair = await host_and_join(host, cmd_config(BOB, s, tmp_path / "j", None), direct=True)
    (h,), (j,) = reports(pair.host), reports(pair.join)
    assert h.outcome == j.outcome and h.outcome.end == "forfeit" and h.outcome.claimed_by == 0
    assert h.outcome.reason == "bot flaky (player 1) raised RuntimeError: lost my marbles"
    assert verify_file(h.replay).ok and verify_file(j.replay).ok



def test_under_a_move_time_the_start_and_handshake_count_against_the_decision(tmp_path: Path) -> None:
    # Over the network a --move-time share covers the whole first decision: a bot that is slow
    # to start must not answer after the peer could already claim the game.
    spec = program(tmp_path, "slowstart", handshake='time.sleep(1.5); out("ok basilica-bot 1")')
    bot = make_bot(spec, M, 1)
    bot.limit_time(0.6)  # type: ignore[attr-defined]
    g = Game.new(M, Options(), bytes(32))
    p = g.to_move
    assert p is not None
    try:
        with pytest.raises(BotFailed) as caught:
            checked_choose(bot, observe(g, p), g.legal_actions())
    finally:
        close_bot(bot)
    assert "did not answer the handshake" in str(caught.value)


def test_a_match_with_a_cmd_bot_and_no_seed_uses_one_the_bot_cannot_guess() -> None:
    # Games follow from the seed text; with the default '0' a program could rebuild them and
    # read the stack, so a match with a cmd: bot picks a random seed and says which.
    seeds = []
    for _ in range(2):
        r = runner.invoke(app, ["match", "--p1", SH_BOT, "--p2", "random", "--json"])
        assert r.exit_code == 0, r.output
        seeds.append(json.loads(r.stdout)["seed"])
        assert "chosen at random" in r.stderr
    assert "0" not in seeds and seeds[0] != seeds[1]
    plain = runner.invoke(app, ["match", "--p1", "greedy", "--p2", "random", "--json"])
    assert json.loads(plain.stdout)["seed"] == "0"  # built-in bots keep the reproducible default


def test_a_long_bot_label_is_shortened_in_the_recorded_reason_before_what_it_did() -> None:
    from basilica_p2p.agent import REASON_LIMIT

    what = "broke the protocol: expected 'action <notation>', got 'hello world'"
    label = "cmd:/usr/bin/python3 /very/" + "deep/" * 40 + "bad.py"
    reason = BotFailed(label, what, 0).reason
    assert len(reason) == REASON_LIMIT and reason.endswith(f"/bad.py (player 1) {what}"), reason
    assert reason.startswith("bot cmd:/usr/bin/python3") and "..." in reason
    assert BotFailed("cmd:./mybot", "did not answer within 10 s", 1).reason == \
        "bot cmd:./mybot (player 2) did not answer within 10 s"
