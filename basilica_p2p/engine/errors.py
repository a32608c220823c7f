"""Typed errors of the rules engine; each carries a one-line message."""

from __future__ import annotations


class EngineError(Exception):
    """Base class of everything the engine raises on purpose."""


class IllegalAction(EngineError):
    """An action that the rules do not allow now.

    ``rule`` names the rule it breaks (a RULES.md section or decision id,
    e.g. ``"D19"``); the state it was applied to is unchanged.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"illegal action ({rule}): {message}")
        self.rule = rule
        self.reason = message


class NotationError(EngineError, ValueError):
    """Text that is not an action in the notation of docs/notation.md."""


class ManifestError(EngineError, ValueError):
    """A component manifest that does not follow the schema."""


class PositionError(EngineError, ValueError):
    """A written cathedral position (``basilica rules score``) that is not valid."""
