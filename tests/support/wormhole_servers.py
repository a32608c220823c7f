"""Servers and peers for the wormhole mailbox client's tests (tests/test_wormhole_mailbox.py).

- `mailbox_server`: the real magic-wormhole mailbox server (`twist wormhole-mailbox`) on a
  port of 127.0.0.1 it picks itself, read back from its log.
- `REAL_PEER`: a script for the real magic-wormhole Python client, run with `VENV_PYTHON`.
- `fake_mailbox`: a scripted websocket server that misbehaves on purpose.
- `WormholeServers`: the real mailbox server and transit relay on the NAT lab's fake internet
  (tests/support/natlab.py), for the games that meet by a code or through the relay.

The real ones come from a venv of their own, kept apart from the project's environment (they
bring Twisted and autobahn), which `bash scripts/test --setup-only` creates in the project's cache
folder (system_needs.wormhole_venv()).  A test run installs nothing: without them the tests fail,
naming that command.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
import trio
from support.natlab import Lab
from support.system_needs import SETUP_COMMAND, require_paths, wormhole_venv
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Request, TextMessage

VENV = wormhole_venv()
TWIST = VENV / "bin" / "twist"
VENV_PYTHON = VENV / "bin" / "python"
# twist's log line once the mailbox's site listens (the websocket lives on that site, at /v1).
_LISTENING = re.compile(rb"PrivacyEnhancedSite starting on (\d+)")


def require_venv(*needed: Path) -> None:
    """Fail the test in one line naming the command that installs them, if anything is missing."""
    require_paths("the Magic Wormhole mailbox server, transit relay and client are needed", *needed)


@dataclass(frozen=True)
class MailboxServer:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    usage: Path  # the server's usage database: how each retired mailbox ended

    def moods(self, appid: str) -> list[str]:
        """The results of ``appid``'s retired mailboxes (happy, scary, lonely, errory...). The
        server answers a ``close`` only once it is written, so a closed exchange is there."""
        with closing(sqlite3.connect(self.usage)) as db:
            return [r for (r,) in db.execute("SELECT result FROM mailboxes WHERE app_id = ?", (appid,))]

    def log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else "(no log)"


@contextmanager
def mailbox_server(folder: Path, *, motd: str | None = None, timeout: float = 20) -> Iterator[MailboxServer]:
    """Run `twist wormhole-mailbox` on 127.0.0.1 (its database in ``folder``), yield it once it
    accepts connections, and stop it on the way out."""
    require_venv(TWIST)
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "mailbox.log"
    command = [str(TWIST), "--log-format=text", "wormhole-mailbox", "--port=tcp:0:interface=127.0.0.1",
               f"--channel-db={folder / 'channel.sqlite'}", f"--usage-db={folder / 'usage.sqlite'}"]
    if motd is not None:
        command.append(f"--motd={motd}")
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=folder, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    server = MailboxServer("", process, log, folder / "usage.sqlite")
    try:
        port = _wait_for_port(server, timeout)
        yield MailboxServer(f"ws://127.0.0.1:{port}/v1", process, log, server.usage)
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server (kill it after 10 s), unless it is gone already."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_for_port(server: MailboxServer, timeout: float) -> int:
    """Poll twist's log for the port it bound; it listens from the moment it logs it."""
    deadline = time.monotonic() + timeout
    while True:
        found = _LISTENING.search(server.log.read_bytes())
        if found:
            return int(found.group(1))
        if server.process.poll() is not None:
            pytest.fail(f"the mailbox server exited with status {server.process.returncode} before listening "
                        f"(`{SETUP_COMMAND}` installs it):\n{server.log_tail()}", pytrace=False)
        if time.monotonic() > deadline:
            pytest.fail(f"the mailbox server did not listen within {timeout:g} s:\n{server.log_tail()}", pytrace=False)
        time.sleep(0.02)


# --- the real servers on the NAT lab's internet ----------------------------------------------

MAILBOX_PORT, RELAY_PORT = 4000, 4001


class WormholeServers:
    """The Magic Wormhole mailbox and transit relay on the fake internet (11.0.0.1)."""

    def __init__(self, lab: Lab, folder: Path) -> None:
        require_venv(TWIST)
        self.lab, self.folder, self.twist, self.host = lab, folder, str(TWIST), lab.server_ips[0]
        self.mailbox = self._start("wormhole-mailbox", MAILBOX_PORT, f"--channel-db={folder / 'channel.sqlite'}",
                                   f"--usage-db={folder / 'usage.sqlite'}")
        self.relay = self._start("transitrelay", RELAY_PORT)

    @property
    def mailbox_url(self) -> str:
        return f"ws://{self.host}:{MAILBOX_PORT}/v1"

    @property
    def where(self) -> list[str]:
        """The options that point host and join at them."""
        return ["--mailbox", self.mailbox_url, "--relay", f"{self.host}:{RELAY_PORT}"]

    def _start(self, name: str, port: int, *extra: str) -> subprocess.Popen[bytes]:
        proc = self.lab.popen(self.lab.internet, [self.twist, "--log-format=text", name,
                                                  f"--port=tcp:{port}:interface={self.host}", *extra],
                              cwd=self.folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 20
        while self.lab.tcp_probe(self.lab.player(0), self.host, port, timeout=0.5).outcome != "connected":
            assert proc.poll() is None and time.monotonic() < end, f"{name} did not listen on {self.host}:{port}"
            time.sleep(0.1)
        return proc

    def restart_relay(self) -> None:
        """The relay dies (every connection through it with it), then comes back on its port."""
        self.relay.kill()
        self.relay.wait(timeout=10)
        self.relay = self._start("transitrelay", RELAY_PORT)


# The real client, driven through its documented API (docs/api.rst there). argv: mailbox URL,
# appid, message to send, and a code to use, or "" to allocate one. It prints the code on a
# line, then {"verifier", "message"} as JSON, or {"error": "<exception class>"}.
REAL_PEER = r"""
import json, sys
from twisted.internet import defer, task
import wormhole

@defer.inlineCallbacks
def main(reactor, url, appid, send, code):
    w = wormhole.create(appid, url, reactor)
    if code:
        w.set_code(code)
    else:
        w.allocate_code(2)
    print((yield w.get_code()), flush=True)
    try:
        verifier = yield w.get_verifier()
        w.send_message(send.encode())
        got = yield w.get_message()
        print(json.dumps({"verifier": verifier.hex(), "message": got.decode()}), flush=True)
    except Exception as e:
        print(json.dumps({"error": type(e).__name__}), flush=True)
    try:
        yield w.close()
    except Exception:
        pass  # close() re-raises what went wrong, already reported

task.react(main, sys.argv[1:])
"""


# --- a mailbox server that misbehaves --------------------------------------------------------

Script = Sequence[bytes | str | dict]  # raw bytes to the socket, a text message, or JSON


@dataclass(frozen=True)
class Fake:
    """What the fake server does with each connection: accept the websocket (unless
    ``handshake`` is False: then ``script`` goes out before any HTTP answer), play ``script``,
    then stay silent, reading, until the client goes."""

    script: Script
    handshake: bool = True


async def fake_mailbox(nursery: trio.Nursery, fake: Fake) -> str:
    """Serve ``fake`` on a free port of 127.0.0.1 in ``nursery``; its ws:// URL."""
    listeners = await nursery.start(partial(trio.serve_tcp, _handler(fake), 0, host="127.0.0.1"))
    port = listeners[0].socket.getsockname()[1]
    return f"ws://127.0.0.1:{port}/v1"


_GOODBYES = {"release": "released", "close": "closed"}


def _handler(fake: Fake) -> Callable[[trio.SocketStream], Awaitable[None]]:
    async def handle(stream: trio.SocketStream) -> None:
        ws = WSConnection(ConnectionType.SERVER)
        try:
            if fake.handshake:
                while True:
                    data = await stream.receive_some(65536)
                    if not data:
                        return
                    ws.receive_data(data)
                    if any(isinstance(e, Request) for e in ws.events()):
                        break
                await stream.send_all(ws.send(AcceptConnection()))
            for step in fake.script:
                if isinstance(step, bytes):
                    await stream.send_all(step)
                else:
                    text = step if isinstance(step, str) else json.dumps(step)
                    await stream.send_all(ws.send(TextMessage(data=text)))
            # Then only answer release and close, as a server would, until the client leaves.
            while data := await stream.receive_some(65536):
                if fake.handshake:
                    ws.receive_data(data)
                    for event in ws.events():
                        if isinstance(event, CloseConnection):
                            await stream.send_all(ws.send(event.response()))
                            return
                        if isinstance(event, TextMessage) and (reply := _GOODBYES.get(json.loads(event.data)["type"])):
                            await stream.send_all(ws.send(TextMessage(data=json.dumps({"type": reply}))))
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        finally:
            await trio.aclose_forcefully(stream)

    return handle
