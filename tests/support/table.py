"""Friends at the table, through the real commands in real terminals (tmux): alice hosts, bob
joins, they say something, play again twice, and carol watches all three games; every replay
verifies with its chat (docs/network.md: Chat, Playing again, Watching).

The table is the same wherever the three sit: tests/test_table_tmux.py seats them on one
machine over an invite, tests/test_table_relay.py in three homes behind routers where only a
relay connects them.  A :class:`Table` says where each one's command runs and how the host's
printed lines reach the others; :func:`in_lines` and :func:`in_the_app` play it in the line
client or in the full-screen app, check what the invite tests always checked, and give back what
each pane printed for the caller's own checks.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from basilica_p2p.engine import parse_manifest
from basilica_p2p.replay import known_manifests, verify_file
from support.terminal import Pane, at_prompt, kill, start_session

ROOT = Path(__file__).resolve().parent.parent.parent
PEOPLE = ("alice", "bob", "carol")  # the host, the joiner, the watcher


def cli_args(home: Path, *args: str) -> list[str]:
    """The interpreter's arguments that run ``basilica`` under ``home``."""
    return ["-m", "basilica_p2p.cli", "--home", str(home), *args]


def cli(home: Path, *args: str) -> list[str]:
    return [sys.executable, *cli_args(home, *args)]


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


def keys(p: Pane, *names: str) -> None:
    subprocess.run([*p.tmux, "send-keys", "-t", p.name, *names], check=True)


def _same_machine(person: str, args: list[str]) -> list[str]:
    return [sys.executable, *args]


@dataclass(frozen=True)
class Table:
    """Where the three sit: the options that bring them together (besides the ones every table
    gives: --plain, --manifest, --replay-dir, --watchers), the start of the host's lines that
    bob's and carol's argument follow, and ``command(person, interpreter arguments)``, the argv
    that runs a person's command where that person is (this machine, or a home of the NAT lab)."""

    host: tuple[str, ...]
    join: tuple[str, ...] = ()
    watch: tuple[str, ...] = ()
    invite_line: str = "invite: basilica join"
    watch_line: str = "watch code: basilica watch"
    command: Callable[[str, list[str]], list[str]] = _same_machine


@dataclass(frozen=True)
class Played:
    """What each pane printed, scrolled off or not, once the table has risen."""

    host: str
    joiner: str
    watcher: str


@dataclass
class _Seated:
    host: Pane
    joiner: Pane
    watcher: Pane
    panes: list[Pane] = field(default_factory=list)

    def played(self) -> Played:
        return Played(self.host.history(), self.joiner.history(), self.watcher.history())


@contextmanager
def _seated(tmp_path: Path, table: Table, manifest: Path, env: dict[str, str], plain: bool,
            size: dict[str, tuple[int, int]]) -> Iterator[_Seated]:
    """Alice hosting, carol watching once the host printed the watch code, then, once carol is
    connected, bob joining; every pane killed on the way out."""
    alice, bob, carol = (named(tmp_path / n, n) for n in PEOPLE)
    look = ["--plain"] if plain else []
    panes: list[Pane] = []

    def start(person: str, args: list[str]) -> Pane:
        pane = start_session(table.command(person, args), env, *size[person])
        panes.append(pane)
        return pane

    try:
        host = start("alice", cli_args(alice, "host", *look, *table.host, "--watchers", "2", "--manifest",
                                        str(manifest), "--replay-dir", str(tmp_path / "a")))
        host.wait(lambda s: table.watch_line in s and table.invite_line in s, "the invite and the watch code")
        invite = line_after(host, table.invite_line)
        code = line_after(host, table.watch_line)
        watcher = start("carol", cli_args(carol, "watch", *look, code, *table.watch, "--manifest", str(manifest)))
        # Carol watches from the start, as over an invite (through a relay she comes only once her
        # direct try gave up): the line client tells its player that someone watches after its
        # prompt and does not show the prompt again, so the driver would wait for one it cannot see.
        watcher.wait(lambda s: "connected: " in s or "EXIT=" in s, "the watcher connected", timeout=30)
        joiner = start("bob", cli_args(bob, "join", *look, invite, *table.join, "--manifest", str(manifest),
                                       "--replay-dir", str(tmp_path / "b")))
        yield _Seated(host, joiner, watcher, panes)
    finally:
        for p in panes:
            kill(p)


def _replays_verify_with_their_chat(tmp_path: Path, manifest: Path) -> None:
    manifests = known_manifests([parse_manifest(manifest.read_bytes())])
    for side in ("a", "b"):
        files = sorted((tmp_path / side).glob("*.replay"))
        assert len(files) == 3, files
        verdicts = [verify_file(f, manifests) for f in files]
        assert all(v.ok for v in verdicts), [v.error for v in verdicts]
        assert sum(v.chat for v in verdicts) >= 2  # both lines, in the first game


# --- in the line client ----------------------------------------------------------------------------


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


def in_lines(tmp_path: Path, table: Table) -> Played:
    """The table in the line client: chat in the first game, alice stops after the third."""
    env = {"TERM": "xterm-256color", "PATH": os.environ.get("PATH", ""), "NO_COLOR": "1"}
    manifest = short_manifest(tmp_path)
    size = {"alice": (400, 24), "bob": (80, 24), "carol": (200, 24)}
    with _seated(tmp_path, table, manifest, env, True, size) as seated:
        play_to_the_end({"alice": seated.host, "bob": seated.joiner},
                        {"alice": ["again", "again", "no"], "bob": ["again"] * 3},
                        {"alice": "good luck bob", "bob": "thanks, you too"})
        seated.watcher.wait(lambda s: "EXIT=" in s, "the watcher's end", timeout=30)
        played = seated.played()
    assert "EXIT=0" in played.host and "EXIT=0" in played.joiner, (played.host, played.joiner)
    seen = played.watcher
    assert "EXIT=0" in seen and "watched 3 games" in seen, seen
    assert len(re.findall(r"^You watch alice \(player 1\) against bob \(player 2\)|"
                          r"^You watch bob \(player 1\) against alice \(player 2\)", seen, re.M)) == 3, seen
    assert "alice: good luck bob" in seen and "bob: thanks, you too" in seen, seen
    series = re.search(r"series: alice (\d) - (\d) bob(?: \((\d) shared\))?", played.host)
    assert series is not None and sum(int(n or 0) for n in series.groups()) == 3, played.host
    _replays_verify_with_their_chat(tmp_path, manifest)
    return played


# --- in the full-screen app --------------------------------------------------------------------------


_IN_THE_BOX = re.compile(r"^> (V[1-3]:|V\*|O[1-3]:|B:|J:|\$|pass|none|[a-e][0-9])", re.M)  # an action, not a hint


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
        p.wait(lambda s: _IN_THE_BOX.search(s) is not None, "the preview", timeout=10)
        keys(p, "Enter")
        # Played once the box is empty again: a look at the screen before that (under load it
        # takes a while) would see this decision still open, and its Down would be lost.
        p.wait(lambda s: _IN_THE_BOX.search(s) is None, "the action played", timeout=10, settle=0)
    elif "the game is over: q leaves" in screen:  # the session is over: the last result stays until we leave
        keys(p, "q")
    return True


def in_the_app(tmp_path: Path, table: Table) -> Played:
    """The table in the app: chat in the first game, alice leaves after the third, and carol,
    asked to stop watching, says yes."""
    env = {"TERM": "xterm-256color", "PATH": os.environ.get("PATH", "")}
    manifest = short_manifest(tmp_path)
    size = {person: (100, 32) for person in PEOPLE}
    with _seated(tmp_path, table, manifest, env, False, size) as seated:
        watcher = seated.watcher
        plans = [(seated.host, ["r", "r", "q"], ["Good luck bob"]), (seated.joiner, ["r", "r", "r"], ["Thanks alice"])]
        end = time.monotonic() + 150
        while time.monotonic() < end:
            going = [app_turn(p, again, chat) for p, again, chat in plans]
            if not any(going):
                break
            time.sleep(0.2)
        else:
            raise AssertionError("the games did not end:\n" + "\n".join(p.text() for p in seated.panes))
        end = time.monotonic() + 30
        while "EXIT=" not in (screen := watcher.text()) and time.monotonic() < end:
            keys(watcher, "Escape" if "Enter or Esc closes" in screen else "y" if "Stop watching?" in screen else "q")
            time.sleep(0.5)
        played = seated.played()
    assert "EXIT=0" in played.host and "EXIT=0" in played.joiner, (played.host, played.joiner)
    assert "EXIT=0" in played.watcher and "watched 3 games" in played.watcher, played.watcher
    _replays_verify_with_their_chat(tmp_path, manifest)
    return played
