"""Built-in bots.  Each sees only its observation and the legal actions."""

from .base import BOT_NAMES, Bot, BotSpecError, bot_rng_seed, make_bot
from ..agent import BotFailed, checked_choose, close_bot
from .external import ExternalBot
from .greedy import GreedyBot, evaluate
from .mcts import MctsBot
from .random_bot import RandomBot

__all__ = [
    "BOT_NAMES", "Bot", "BotFailed", "BotSpecError", "ExternalBot", "GreedyBot", "MctsBot", "RandomBot", "bot_rng_seed",
    "checked_choose", "close_bot", "evaluate", "make_bot",
]
