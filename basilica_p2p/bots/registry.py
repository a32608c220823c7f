"""How bots are named on the command line: ``make_bot(spec, manifest, seed)`` and the names it knows.

It imports every bot; a bot imports bots/base.py (what they share), never this.
"""

from __future__ import annotations

from ..agent import Bot
from ..engine import Manifest
from .base import BotSpecError
from .external import ExternalBot
from .greedy import GreedyBot
from .mcts import mcts_from_spec
from .policy import PolicyBot, policy_from_spec
from .random_bot import RandomBot

BOT_NAMES = ("random", "greedy", "mcts")


def make_bot(spec: str, manifest: Manifest, seed: int) -> Bot:
    """Build a bot from its command-line name: ``random``, ``greedy``, ``mcts[:options]``, ``cmd:PROGRAM``,
    ``policy:PATH`` (a saved MaskablePPO model), ``module:Class`` or ``module:function``.

    A ``module:Class`` bot is imported and built as ``Class(manifest=..., seed=...)``
    (or ``Class()`` if it takes no arguments); a ``module:function`` is a policy from
    (observation, mask) to an action index (bots/policy.py); docs/bots.md describes both.
    """
    text = spec.strip()
    name = text.lower()
    if name == "random":
        return RandomBot(seed)
    if name == "greedy":
        return GreedyBot(manifest, seed)
    if name.partition(":")[0].strip() == "mcts":  # mcts, mcts:time=0.5, mcts:playouts=400 (docs/bots.md)
        return mcts_from_spec(text, manifest, seed)
    if name.startswith("cmd:"):  # a program speaking protocol/BOTS.md
        try:
            return ExternalBot(text[4:], seed)
        except ValueError as e:
            raise BotSpecError(str(e)) from None
    if name.startswith("policy:"):  # a trained model (bots/policy.py)
        return policy_from_spec(text, manifest)
    if ":" in text:
        return _load_bot(text, manifest, seed)
    raise BotSpecError(f"unknown bot {spec!r} (known: random, greedy, mcts, module:Class, module:function, "
                       "policy:PATH or cmd:PROGRAM)")


def _load_bot(spec: str, manifest: Manifest, seed: int) -> Bot:
    import importlib

    module_name, _, class_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # an arbitrary user module may fail in any way on import
        raise BotSpecError(f"cannot import bot module {module_name!r}: {type(e).__name__}: {e}") from None
    cls = getattr(module, class_name, None)
    if cls is None:
        raise BotSpecError(f"module {module_name!r} has no {class_name!r}")
    if callable(cls) and not isinstance(cls, type):  # a function: a policy over the encoded game
        return PolicyBot(cls, manifest, name=class_name)
    try:
        try:
            bot = cls(manifest=manifest, seed=seed)
        except TypeError:
            bot = cls()
    except Exception as e:
        raise BotSpecError(f"cannot create bot {spec!r}: {type(e).__name__}: {e}") from None
    if not callable(getattr(bot, "choose", None)):
        raise BotSpecError(f"{spec!r} has no choose(observation, legal_actions) method")
    if not isinstance(getattr(bot, "name", None), str):
        try:
            bot.name = class_name
        except AttributeError:
            pass
    return bot
