"""Kinds (of a pending decision, an engine event, a protocol step, a refusal, a log line, an
order, a ruleset, a reveal, a shuffle) are StrEnums: each member is its wire value, in every
comparison and in every text it is written into."""

from __future__ import annotations

from enum import StrEnum

import pytest

from basilica_p2p.cli._common import Shuffle
from basilica_p2p.engine import EventKind, Game, Level, Options, Order, PendingKind, Ruleset, default_manifest
from basilica_p2p.narration import LineKind
from basilica_p2p.seat import Refusal, StepKind

KINDS = (PendingKind, EventKind, StepKind, Refusal, LineKind, Order, Ruleset, Level, Shuffle)


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_every_kind_is_written_as_its_value(kind: type[StrEnum]) -> None:
    assert issubclass(kind, StrEnum)
    for member in kind:
        assert str(member) == f"{member}" == format(member) == member.value
        assert member == member.value and hash(member) == hash(member.value)


def test_the_engine_says_its_pending_and_event_kinds_by_value() -> None:
    g = Game.new(default_manifest(), Options(), bytes(32))
    assert g.pending.kind is PendingKind.MAIN and f"decision={g.pending.kind}" == "decision=main"
    while not g.over:
        g.apply(g.legal_actions()[0])
    assert {type(e.kind) for e in g.events} == {EventKind}
    assert g.events[-1].kind == "game-over"
