"""The full-screen client (Textual): ``basilica play``, ``host`` and ``join`` at a terminal.

:class:`AppPlayer` is the person's agent (the same contract as
``lineclient.TerminalPlayer``); :func:`run_in_app` plays a game with it in the
app, the game in a thread of its own.  ``--plain`` keeps the line client.
"""

from .app import BasilicaApp
from .bridge import AppPlayer
from .run import run_in_app, stoppable, wants_app
from .web import serve_play

__all__ = ["AppPlayer", "BasilicaApp", "run_in_app", "serve_play", "stoppable", "wants_app"]
