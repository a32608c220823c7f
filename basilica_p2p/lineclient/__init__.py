"""The line client: a person plays at a prompt, the board drawn by rich (the full-screen app is app/).

What it shares with the app, the board's drawing and the rules texts, is in drawing.py
and rules_help.py; the app imports nothing from here.
"""

from .local import LocalResult, play_local
from .player import TerminalPlayer
from .spectator import Spectator

__all__ = ["LocalResult", "Spectator", "TerminalPlayer", "play_local"]
