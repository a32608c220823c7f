"""Friends at the table, through the real commands in real terminals (tmux): two people play over
an invite with the line client, say something, play again twice, while a third watches all
three games; every replay verifies with its chat (docs/network.md: Chat, Playing again,
Watching)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from basilica_p2p.engine import parse_manifest
from basilica_p2p.replay import known_manifests, verify_file
from support.terminal import Pane, at_prompt, kill, start_session

pytestmark = pytest.mark.xdist_group("terminal")

ROOT = Path(__file__).resolve().parent.parent
LOCAL = ["--bind", "127.0.0.1", "--port", "0", "--no-stun", "--port-mapping", "off"]


def cli(home: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "basilica_p2p.cli", "--home", str(home), *args]


def named(home: Path, name: str) -> Path:
    subprocess.run(cli(home, "id", "new", "--name", name), check=True, capture_output=True)
    return home


def short_manifest(tmp_path: Path) -> Path:
    data = json.loads((ROOT / "protocol" / "manifest.json").read_text())
    data["name"] = "short test game"
    data["crown_spaces"] = [5, 10]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(data))
    return path


def line_after(pane: Pane, prefix: str) -> str:
    found = [ln.strip() for ln in pane.history().splitlines() if ln.strip().startswith(prefix)]
    assert found, f"no line starting with {prefix!r}:\n{pane.history()}"
    return found[0][len(prefix):].strip()


def play_to_the_end(players: dict[str, Pane], answers: dict[str, list[str]], said: dict[str, str]) -> None:
    """Answer every prompt of both players: the first legal action ('1'), a line of chat once,
    and, when asked for another game, the next of its ``answers``; until both have exited."""
    pending_chat = dict(said)
    for _ in range(2000):
        done = 0
        for who, pane in players.items():
            screen = pane.text()
            if "EXIT=" in screen:
                done += 1
                continue
            lines = [ln.rstrip() for ln in screen.splitlines() if ln.strip()]
            if lines and lines[-1].startswith("Another game?"):
                pane.send(answers[who].pop(0) if answers[who] else "no")
            elif at_prompt(screen):
                if who in pending_chat:
                    pane.send(f"say {pending_chat.pop(who)}")
                pane.send("1")
            else:
                continue
            pane.wait(lambda s: True, "the answer taken", timeout=5)
        if done == len(players):
            return
    raise AssertionError("the games did not end:\n" + "\n".join(p.text() for p in players.values()))


def test_two_people_chat_play_again_twice_and_a_third_watches_all_three_games(tmp_path: Path) -> None:
    env = {"TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""), "NO_COLOR": "1"}
    manifest = short_manifest(tmp_path)
    manifests = known_manifests([parse_manifest(manifest.read_bytes())])
    alice, bob, carol = (named(tmp_path / n, n) for n in ("alice", "bob", "carol"))
    panes: list[Pane] = []
    try:
        host = start_session(cli(alice, "host", "--plain", *LOCAL, "--watchers", "2", "--manifest", str(manifest),
                                 "--replay-dir", str(tmp_path / "a")), env, width=400)
        panes.append(host)
        host.wait(lambda s: "watch code:" in s and "invite:" in s, "the invite and the watch code")
        invite = line_after(host, "invite: basilica join")
        code = line_after(host, "watch code: basilica watch")
        watcher = start_session(cli(carol, "watch", "--plain", code, "--manifest", str(manifest)), env, width=200)
        panes.append(watcher)
        watcher.wait(lambda s: "EXIT=" not in s, "the watcher started", timeout=5)
        joiner = start_session(cli(bob, "join", "--plain", invite, "--no-stun", "--manifest", str(manifest),
                                   "--replay-dir", str(tmp_path / "b")), env)
        panes.append(joiner)
        play_to_the_end({"alice": host, "bob": joiner}, {"alice": ["again", "again", "no"], "bob": ["again"] * 3},
                        {"alice": "good luck bob", "bob": "thanks, you too"})
        watcher.wait(lambda s: "EXIT=" in s, "the watcher's end", timeout=30)
        assert "EXIT=0" in host.text() and "EXIT=0" in joiner.text(), (host.history(), joiner.history())
        seen = watcher.history()
        assert "EXIT=0" in seen and "watched 3 games" in seen, seen
        assert len(re.findall(r"^You watch alice \(player 1\) against bob \(player 2\)|"
                              r"^You watch bob \(player 1\) against alice \(player 2\)", seen, re.M)) == 3, seen
        assert "alice: good luck bob" in seen and "bob: thanks, you too" in seen, seen
        series = re.search(r"series: alice (\d) - (\d) bob(?: \((\d) shared\))?", host.history())
        assert series is not None and sum(int(n or 0) for n in series.groups()) == 3, host.history()
        for side in ("a", "b"):
            files = sorted((tmp_path / side).glob("*.replay"))
            assert len(files) == 3, files
            verdicts = [verify_file(f, manifests) for f in files]
            assert all(v.ok for v in verdicts), [v.error for v in verdicts]
            assert sum(v.chat for v in verdicts) >= 2  # both lines, in the first game
    finally:
        for p in panes:
            kill(p)


# --- the same table in the full-screen app ---------------------------------------------------------


def keys(p: Pane, *names: str) -> None:
    subprocess.run([*p.tmux, "send-keys", "-t", p.name, *names], check=True)


def app_turn(p: Pane, again: list[str], chat: list[str]) -> bool:
    """Press what a person in the app would now: False once it has exited."""
    screen = p.text()
    if "EXIT=" in screen:
        return False
    if "Enter or Esc closes" in screen:  # a scoring waits for us
        keys(p, "Escape")
    elif "Another game?" in screen:
        keys(p, again.pop(0) if again else "q")
        # Answered: the question stays on the screen until the next game (or the end) comes,
        # and must not be answered twice.
        p.wait(lambda s: "Another game?" not in s or "EXIT=" in s, "the answer taken", timeout=60)
    elif "You to decide" in screen:
        if chat:  # a line first; the decision at the next look
            keys(p, "t")
            time.sleep(0.5)  # a person looks up before typing: the chat box has the keys by then
            keys(p, "-l", chat.pop(0))
            keys(p, "Enter")
            p.wait(lambda s: "You: " in s, "our line in the log", timeout=10)
            return True
        keys(p, "Down")
        p.wait(lambda s: re.search(r"^> (V[1-3]:|V\*|O[1-3]:|B:|J:|\$|pass|none|[a-e][0-9])", s, re.M)
               is not None, "the preview", timeout=10)
        keys(p, "Enter")
    elif "the game is over: q leaves" in screen:  # the last game is over: the result stays until we leave
        keys(p, "q")
    return True


def test_the_same_table_in_the_app_chat_rematches_and_a_watcher(tmp_path: Path) -> None:
    env = {"TERM": "xterm-256color", "PATH": os.environ.get("PATH", "")}
    manifest = short_manifest(tmp_path)
    manifests = known_manifests([parse_manifest(manifest.read_bytes())])
    alice, bob, carol = (named(tmp_path / n, n) for n in ("alice", "bob", "carol"))
    panes: list[Pane] = []
    try:
        host = start_session(cli(alice, "host", *LOCAL, "--watchers", "2", "--manifest", str(manifest),
                                 "--replay-dir", str(tmp_path / "a")), env, width=100, height=32)
        panes.append(host)
        host.wait(lambda s: "watch code:" in s and "invite:" in s, "the invite and the watch code")
        invite = line_after(host, "invite: basilica join")
        code = line_after(host, "watch code: basilica watch")
        watcher = start_session(cli(carol, "watch", code, "--manifest", str(manifest)), env, width=100, height=32)
        panes.append(watcher)
        joiner = start_session(cli(bob, "join", invite, "--no-stun", "--manifest", str(manifest),
                                   "--replay-dir", str(tmp_path / "b")), env, width=100, height=32)
        panes.append(joiner)
        plans = {"alice": (host, ["r", "r", "q"], ["Good luck bob"]), "bob": (joiner, ["r", "r", "r"], ["Thanks alice"])}
        end = time.monotonic() + 150
        while time.monotonic() < end:
            going = [app_turn(p, again, chat) for p, again, chat in plans.values()]
            if not any(going):
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the games did not end:\n" + "\n".join(p.text() for p in panes))
        end = time.monotonic() + 30
        while "EXIT=" not in (screen := watcher.text()) and time.monotonic() < end:
            keys(watcher, "Escape" if "Enter or Esc closes" in screen else "y" if "Stop watching?" in screen else "q")
            time.sleep(0.5)
        assert "EXIT=0" in host.text() and "EXIT=0" in joiner.text(), (host.history(), joiner.history())
        seen = watcher.history()
        assert "EXIT=0" in seen and "watched 3 games" in seen, seen
        for side in ("a", "b"):
            files = sorted((tmp_path / side).glob("*.replay"))
            assert len(files) == 3, files
            verdicts = [verify_file(f, manifests) for f in files]
            assert all(v.ok for v in verdicts), [v.error for v in verdicts]
            assert sum(v.chat for v in verdicts) >= 2
    finally:
        for p in panes:
            kill(p)
