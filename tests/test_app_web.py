"""`basilica play --web`: the app served by textual-serve, opened in headless Chromium.

The page draws the terminal on a canvas, so what the test reads is what the
page received: every websocket frame is recorded (a script added before the
page's own) and decoded.  The app's first screen must arrive, and a key
typed into the page must reach the app (the help opens).
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


def test_play_web_serves_the_app_and_the_page_plays_it(tmp_path: Path, short_manifest: Path,  # noqa: F811
                                                       browser: Any) -> None:
    port = free_port()
    env = {**os.environ, "BASILICA_HOME": str(tmp_path / "home")}
    server = subprocess.Popen([sys.executable, "-m", "basilica_p2p.cli", "play", "--web", "--web-port", str(port),
                               "--vs", "random", "--manifest", str(short_manifest), "--replay-dir",
                               str(tmp_path / "replays")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, env=env, start_new_session=True)
    try:
        assert server.stdout is not None
        first = server.stdout.readline()
        assert first.startswith(f"web: http://localhost:{port}"), first
        browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD})
        for _ in range(50):  # the server may need a moment to listen
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
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
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)
