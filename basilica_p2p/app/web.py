"""``basilica play --web``: the same app served as a web page, through textual-serve.

textual-serve runs a command for each browser that connects and relays its
terminal over a websocket; the command is ``basilica play`` itself with the
same options, which starts the app (not the line client) because
textual-serve tells it to draw through its web driver.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import typer


def play_command(home: Path, vs: str, seat: int, ruleset: str, festum: bool, festum_removal: bool,
                 manifest: Path | None, replay_dir: Path | None, clock: str | None = None) -> str:
    """The ``basilica play`` that each browser's page runs (paths made absolute: it may start elsewhere)."""
    args = ["--home", str(home.resolve()), "play", "--vs", vs, "--seat", str(seat), "--ruleset", ruleset]
    args += ["--festum"] if festum else []
    args += ["--festum-removal"] if festum_removal else []
    args += ["--manifest", str(manifest.resolve())] if manifest is not None else []
    args += ["--replay-dir", str(replay_dir.resolve())] if replay_dir is not None else []
    args += ["--clock", clock] if clock is not None else []
    return shlex.join([sys.executable, "-m", "basilica_p2p.cli", *args])


def served() -> bool:
    """Whether this process draws a page for textual-serve (it sets the driver in our environment)."""
    return os.environ.get("TEXTUAL_DRIVER", "").endswith("WebDriver")


def page_driver() -> Any:
    """The driver for the app when it is served as a page, None otherwise.

    textual-serve tells the app to quit when its page goes away.  When the server itself
    goes (killed, or its terminal closed) there is no word: the app's input just ends, or a
    hang-up comes.  Both end the app as a closed page does, so the game is a forfeit,
    recorded, rather than a process left waiting with an unfinished game."""
    if not served():
        return None
    import signal

    from textual import messages
    from textual.drivers.web_driver import WebDriver

    class PageDriver(WebDriver):
        def start_application_mode(self) -> None:
            import asyncio

            super().start_application_mode()  # SIGINT and SIGTERM end the app already
            asyncio.get_running_loop().add_signal_handler(
                signal.SIGHUP, lambda: self._app.post_message(messages.ExitApp()))

        def run_input_thread(self) -> None:
            super().run_input_thread()
            if not self.exit_event.is_set():  # the input ended while the app ran: the server is gone
                self._app.post_message(messages.ExitApp())

    return PageDriver


def _quiet_server() -> Any:
    """textual-serve's server without its banner and its access log on our terminal: the
    'web:' line says where the page is, and a line per request is noise there."""
    from textual_serve.server import Server

    class QuietServer(Server):
        def initialize_logging(self) -> None:
            super().initialize_logging()
            logging.getLogger("aiohttp.access").setLevel(logging.WARNING)

        async def on_startup(self, app: Any) -> None:
            pass

    return QuietServer


def serve_play(home: Path, port: int, vs: str, seat: int, ruleset: str, festum: bool, festum_removal: bool,
               manifest: Path | None, replay_dir: Path | None, clock: str | None = None,
               host: str = "localhost") -> None:
    """Serve the app until Ctrl-C; every page opened plays its own game."""
    try:
        server_class = _quiet_server()
    except ImportError:
        typer.echo("error: --web needs textual-serve: pip install 'basilica-p2p[web]'", err=True)
        raise typer.Exit(2) from None
    command = play_command(home, vs, seat, ruleset, festum, festum_removal, manifest, replay_dir, clock)
    typer.echo(f"web: http://{host}:{port}  (open it in a browser; each page plays its own game; Ctrl-C stops)")
    sys.stdout.flush()
    try:
        server_class(command, host=host, port=port, title="Basilica").serve()
    except OSError as e:
        typer.echo(f"error: --web cannot listen on {host}:{port}: {e.strerror or e}", err=True)
        raise typer.Exit(1) from None
