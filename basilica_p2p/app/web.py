"""``basilica play --web``: the same app served as a web page, through textual-serve.

textual-serve runs a command for each browser that connects and relays its
terminal over a websocket; the command is ``basilica play`` itself with the
same options, which starts the app (not the line client) because
textual-serve tells it to draw through its web driver.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

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


def serve_play(home: Path, port: int, vs: str, seat: int, ruleset: str, festum: bool, festum_removal: bool,
               manifest: Path | None, replay_dir: Path | None, clock: str | None = None,
               host: str = "localhost") -> None:
    """Serve the app until Ctrl-C; every page opened plays its own game."""
    try:
        from textual_serve.server import Server
    except ImportError:
        typer.echo("error: --web needs textual-serve: pip install 'basilica-p2p[web]'", err=True)
        raise typer.Exit(2) from None
    command = play_command(home, vs, seat, ruleset, festum, festum_removal, manifest, replay_dir, clock)
    typer.echo(f"web: http://{host}:{port}  (open it in a browser; each page plays its own game; Ctrl-C stops)")
    sys.stdout.flush()
    try:
        Server(command, host=host, port=port, title="Basilica").serve()
    except OSError as e:
        typer.echo(f"error: --web cannot listen on {host}:{port}: {e.strerror or e}", err=True)
        raise typer.Exit(1) from None
