"""Built-in bots.  Each sees only its observation and the legal actions."""

from ..agent import Bot, BotFailed, checked_choose, close_bot
from .base import BotSpecError, bot_rng_seed, sample_game
from .external import NETWORK_SHARE, ExternalBot
from .greedy import GreedyBot, evaluate
from .mcts import MctsBot
from .process import parse_command
from .random_bot import RandomBot
from .registry import BOT_NAMES, make_bot

__all__ = [
    "BOT_NAMES", "NETWORK_SHARE", "Bot", "BotFailed", "BotSpecError", "ExternalBot", "GreedyBot", "MctsBot",
    "RandomBot", "bot_rng_seed", "checked_choose", "close_bot", "evaluate", "make_bot", "parse_command",
    "sample_game",
]
