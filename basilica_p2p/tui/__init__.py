"""The terminal client: a person plays at a prompt, with the board drawn by rich."""

from .local import LocalResult, play_local
from .player import TerminalPlayer

__all__ = ["LocalResult", "TerminalPlayer", "play_local"]
