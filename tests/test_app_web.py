"""`basilica play --web`: the app served by textual-serve, opened in headless Chromium.

The page draws the terminal on a canvas, so what the test reads is what the
page received: every websocket frame is recorded (a script added before the
page's own) and decoded.  The app's first screen must arrive, and a key
typed into the page must reach the app (the help opens).  A page that goes
away, or a server that does, leaves a finished game (a forfeit) and never an
unfinished replay; the server's terminal shows no line per request.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from test_tui_tmux import short_manifest  # noqa: F401  (fixture)

RECORD = """
window.__seen = '';
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Native(...args);
  ws.addEventListener('message', async (e) => {
    const data = e.data instanceof Blob ? await e.data.arrayBuffer() : e.data;
    window.__seen += typeof data === 'string' ? data : new TextDecoder().decode(data);
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
Object.assign(window.WebSocket, Native);
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def seen(browser: Any, needle: str, timeout: float = 30.0) -> str:
    end = time.monotonic() + timeout
    text = ""
    while time.monotonic() < end:
        text = browser.execute_script("return window.__seen || '';")
        if needle in text:
            return str(text)
        time.sleep(0.2)
    raise AssertionError(f"the page never received {needle!r}; it received {len(text)} characters:\n{text[-2000:]}")


def start_server(tmp_path: Path, short_manifest: Path) -> tuple[subprocess.Popen[str], int, list[str]]:  # noqa: F811
    """``basilica play --web`` with a fresh home, listening; its first lines of output."""
    port = free_port()
    env = {**os.environ, "BASILICA_HOME": str(tmp_path / "home")}
    server = subprocess.Popen([sys.executable, "-m", "basilica_p2p.cli", "play", "--web", "--web-port", str(port),
                               "--vs", "random", "--manifest", str(short_manifest), "--replay-dir",
                               str(tmp_path / "replays")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=env, start_new_session=True)
    assert server.stdout is not None
    lines = [server.stdout.readline()]
    if lines[0].startswith("made a new identity"):  # said by the server, before the first page
        lines.append(server.stdout.readline())
    assert lines[-1].startswith(f"web: http://localhost:{port}"), lines
    for _ in range(50):  # the server may need a moment to listen
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.1)
    return server, port, lines


def stop_server(server: subprocess.Popen[str]) -> str:
    """Its whole output, once stopped (with its pages' processes)."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass  # gone already
    try:
        out, _ = server.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        out, _ = server.communicate(timeout=10)
    return out


def open_page(browser: Any, port: int) -> str:
    """A new tab with the page, at its first decision; the handle of the tab it was opened from."""
    before = browser.current_window_handle
    browser.switch_to.new_window("tab")
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD})
    browser.get(f"http://localhost:{port}/")
    seen(browser, "You to decide")
    return str(before)


def finished_replay(folder: Path, short_manifest: Path, limit: float = 30.0) -> Any:  # noqa: F811
    """The verdict on the one replay the folder comes to hold."""
    from basilica_p2p.engine import parse_manifest
    from basilica_p2p.replay.verify import verify_file

    end = time.monotonic() + limit
    while time.monotonic() < end and not list(folder.glob("*.replay")):
        time.sleep(0.2)
    files = list(folder.glob("*.replay"))
    assert len(files) == 1, sorted(p.name for p in folder.iterdir()) if folder.exists() else "no folder"
    manifest = parse_manifest(short_manifest.read_bytes())
    return verify_file(files[0], {manifest.hash: manifest})


def test_play_web_serves_the_app_and_the_page_plays_it(tmp_path: Path, short_manifest: Path,  # noqa: F811
                                                       browser: Any) -> None:
    server, port, lines = start_server(tmp_path, short_manifest)
    try:
        browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD})
        browser.get(f"http://localhost:{port}/")
        text = seen(browser, "You to decide")
        for needle in ("Basilica", "O1", "V1", "queen", "Confirm"):
            assert needle in text, needle
        from selenium.webdriver.common.action_chains import ActionChains

        browser.find_element("id", "terminal").click()
        ActionChains(browser).send_keys("?").perform()
        seen(browser, "Keys and mouse")  # the key reached the app, which answered with its help
        assert "-first-byte" in (browser.find_element("tag name", "body").get_attribute("class") or "")
    finally:
        stop_server(server)


def test_a_page_that_goes_away_is_a_forfeit_and_the_folder_never_holds_an_unfinished_game(
        tmp_path: Path, short_manifest: Path, browser: Any) -> None:  # noqa: F811
    """A page opened and closed within seconds left a replay that verify called 'incomplete
    game: valid through record 12', and the server's terminal showed a line per request."""
    server, port, lines = start_server(tmp_path, short_manifest)
    try:
        assert "made a new identity" in lines[0] and "basilica id rename NAME" in lines[0]
        back = open_page(browser, port)
        # A game under way: its replay is not in the folder yet, so 'verify DIR/*' finds nothing unfinished.
        assert not list((tmp_path / "replays").glob("*.replay"))
        browser.close()  # the tab, and with it the page's connection
        browser.switch_to.window(back)
        verdict = finished_replay(tmp_path / "replays", short_manifest)
        assert verdict.ok and "resigned: closed the game window" in verdict.line(), verdict.line()
    finally:
        out = stop_server(server)
    assert "GET /" not in out and "HTTP/1.1" not in out, out


def test_a_server_that_goes_away_ends_its_pages_games_as_forfeits(tmp_path: Path, short_manifest: Path,  # noqa: F811
                                                                  browser: Any) -> None:
    """Killed without a word to its pages' processes, the server leaves them with their input
    closed: each ends its game as a forfeit rather than waiting forever on an unfinished one."""
    server, port, _ = start_server(tmp_path, short_manifest)
    try:
        back = open_page(browser, port)
        server.kill()  # the server alone; its page's process stays, its input now closed
        server.wait(10)
        verdict = finished_replay(tmp_path / "replays", short_manifest)
        assert verdict.ok and "resigned: closed the game window" in verdict.line(), verdict.line()
        browser.close()
        browser.switch_to.window(back)
    finally:
        stop_server(server)
