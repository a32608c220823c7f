"""Game clocks: the time control both sides agree on, and what a display shows.

These are plain values: nothing here reads a clock.  The engine never sees
time; the session layer (net/session.py, replay/local.py) measures thinking
time with trio's clock or a clock it is given, and hands a :class:`ClockView`
to any agent that has a ``show_clocks(view)`` method, at the start and the
end of every decision.  docs/clocks.md says how the clocks are kept and
what a cheater can and cannot do with one.

>>> tc = TimeControl.parse("15+10")
>>> tc, str(tc), tc.base_seconds
(TimeControl(minutes=15, increment=10), '15+10', 900)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_MINUTES = 24 * 60  # a day of thinking each: anything longer is a typo, not a time control
MAX_INCREMENT = 60 * 60  # an hour added per move
MAX_MS = 2**32 - 1  # the largest figure a wire message carries (a uint)

_FORM = re.compile(r"(\d{1,6})\+(\d{1,6})")


class TimeControlError(ValueError):
    """A time control that cannot be played; ``str(e)`` is one line for the user."""


@dataclass(frozen=True)
class TimeControl:
    """``minutes`` each to start with, plus ``increment`` seconds after every decision."""

    minutes: int
    increment: int

    def __post_init__(self) -> None:
        # A clock of 0 minutes would run out before the first decision could be made.
        for name, value, low, top in (("minutes", self.minutes, 1, MAX_MINUTES),
                                      ("increment", self.increment, 0, MAX_INCREMENT)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TimeControlError(f"clock {name} must be a whole number, not {str(value)[:20]!r}")
            if value < low or value > top:
                raise TimeControlError(f"clock {name} must be {low} to {top}, not {value}")

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """``"15+10"``: 15 minutes each, 10 seconds added per decision (``"15"`` is 15+0)."""
        if not isinstance(text, str):
            raise TimeControlError(f"a clock is written MINUTES+SECONDS, e.g. 15+10, not {text!r}")
        s = text.strip()
        if s.isdigit() and len(s) <= 6:
            s += "+0"
        m = _FORM.fullmatch(s)
        if m is None:
            shown = s if len(s) <= 20 else s[:20] + "..."
            raise TimeControlError(f"a clock is written MINUTES+SECONDS, e.g. 15+10, not {shown!r}")
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.minutes}+{self.increment}"

    @property
    def base_seconds(self) -> int:
        return self.minutes * 60

    def to_wire(self) -> list[int]:
        """The hello's ``clock`` field (protocol/PROTOCOL.md §4)."""
        return [self.minutes, self.increment]

    @classmethod
    def from_wire(cls, value: object) -> TimeControl:
        """The hello's ``clock`` field, from the network: :class:`TimeControlError` unless well formed."""
        if not (isinstance(value, list) and len(value) == 2):
            raise TimeControlError("a clock field must be [minutes, increment]")
        return cls(value[0], value[1])


# Protocol 3 (network games): how long a side that has gone may take to come back, and a
# decision may take when no clock bounds it (PROTOCOL.md §4c).  Generous: a person may step
# away for a minute or think for several, but a loser cannot hold a game hostage.
DEFAULT_WINDOW = 120
DEFAULT_DECISION = 600
MIN_LIMIT = 10  # seconds: less would claim a game over an ordinary network hiccup
MAX_WINDOW = 60 * 60
MAX_DECISION = 24 * 60 * 60


@dataclass(frozen=True)
class Limits:
    """What both sides of a network game agree on for absences (protocol 3).

    ``window``: seconds a side that has gone (crashed, lost its network) has to come back
    before the other may claim the game.  ``decision``: seconds a decision may take in a game
    without a clock, after which the other side may claim; 0 in a game with a clock, which
    bounds every decision itself.
    """

    window: int = DEFAULT_WINDOW
    decision: int = DEFAULT_DECISION

    def __post_init__(self) -> None:
        for name, value, low, top in (("window", self.window, MIN_LIMIT, MAX_WINDOW),
                                      ("decision", self.decision, 0, MAX_DECISION)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TimeControlError(f"the {name} limit must be a whole number of seconds, not {str(value)[:20]!r}")
            if not low <= value <= top:
                raise TimeControlError(f"the {name} limit must be {low} to {top} s, not {value}")
        if 0 < self.decision < MIN_LIMIT:
            raise TimeControlError(f"the decision limit must be 0 (a clock bounds decisions) or {MIN_LIMIT} to "
                                   f"{MAX_DECISION} s, not {self.decision}")

    def __str__(self) -> str:
        per = f"{self.decision} s per decision" if self.decision else "decisions bounded by the clock"
        return f"{self.window} s to come back, {per}"

    def to_wire(self) -> list[int]:
        """The hello's ``limits`` field: ``[window, decision]`` in seconds."""
        return [self.window, self.decision]

    @classmethod
    def from_wire(cls, value: object) -> Limits:
        """The hello's or header's ``limits`` field: :class:`TimeControlError` unless well formed."""
        if not (isinstance(value, list) and len(value) == 2):
            raise TimeControlError("a limits field must be [window, decision]")
        return cls(value[0], value[1])

    def for_clock(self, clock: TimeControl | None) -> Limits:
        """These limits as a game with ``clock`` plays them: a clock bounds decisions itself."""
        if clock is not None:
            return Limits(self.window, 0)
        return self if self.decision else Limits(self.window, DEFAULT_DECISION)


def format_seconds(seconds: float) -> str:
    """``14:05`` (minutes:seconds), ``1:02:03`` past an hour, ``0:09.4`` in the last ten seconds."""
    s = max(0.0, seconds)
    if s < 10:
        return f"0:0{int(s * 10) / 10:.1f}"
    whole = int(s)
    h, rest = divmod(whole, 3600)
    m, sec = divmod(rest, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m}:{sec:02d}"


@dataclass(frozen=True)
class ClockView:
    """Both clocks as one side sees them, at the moment the view was made.

    ``remaining`` is in seconds, player 1 then player 2 (seat order).
    ``running`` is the seat whose clock runs now, or None between decisions.
    A display that ticks counts the running clock down from when it received
    the view, by its own clock.  ``flagged`` is the seat whose time ran out.
    ``me`` is the seat of the side that shows it (None for a spectator).
    """

    control: TimeControl
    remaining: tuple[float, float]
    running: int | None = None
    names: tuple[str, str] = ("player 1", "player 2")
    me: int | None = None
    flagged: int | None = None

    def text(self, seat: int) -> str:
        return format_seconds(self.remaining[seat])

    def line(self) -> str:
        """One line for a terminal: both clocks, the running one marked."""
        parts = []
        for seat in (0, 1):
            mark = " <" if self.running == seat else ""
            you = " (you)" if self.me == seat else ""
            out = " OUT" if self.flagged == seat else ""
            parts.append(f"{self.names[seat]}{you} {self.text(seat)}{out}{mark}")
        return f"clocks {self.control}: " + " | ".join(parts)


@dataclass(frozen=True)
class TimeClaim:
    """A game won on time, as the signed claim shows it (all figures in milliseconds).

    ``signed`` is the loser's own last signed figure (its remaining time after
    its last decision, or the starting time); ``left`` is what the claimant
    measured the loser had when the decision became due, and ``waited`` the
    thinking time it measured since, the lag allowance taken off.
    """

    loser: int
    signed: int
    left: int
    waited: int

    def words(self, names: tuple[str, str]) -> str:
        return f"{names[self.loser]}'s clock ran out ({self.figures(names)})"

    def figures(self, names: tuple[str, str]) -> str:
        """What the claim says it measured, for whoever wants to check it."""
        return (f"{names[1 - self.loser]} measured {format_seconds(self.left / 1000)} left and waited "
                f"{format_seconds(self.waited / 1000)}; {names[self.loser]}'s own last signed figure was "
                f"{format_seconds(self.signed / 1000)}")


def out_of_time(loser: int, names: tuple[str, str], reader: int | None = None) -> str:
    """A loss on time as a person says it, to ``reader`` (a seat, or None for an onlooker):
    ``Your clock ran out. greedy wins on time.``"""
    if reader == loser:
        return f"Your clock ran out. {names[1 - loser]} wins on time."
    if reader == 1 - loser:
        return f"{names[loser]}'s clock ran out. You win on time."
    return f"{names[loser]}'s clock ran out. {names[1 - loser]} wins on time."


class Clocks:
    """Both clocks as one side keeps them, in milliseconds; its owner feeds it times.

    The owner reads its own clock (trio's in a session, so tests run on a mock
    clock) and calls :meth:`start` when a decision becomes due and :meth:`stop`
    when it is made; nothing here reads the time.  The increment is added after
    a decision made in time; a decision that used more than was left leaves
    the clock at 0, flagged.
    """

    def __init__(self, control: TimeControl, names: tuple[str, str] = ("player 1", "player 2"),
                 me: int | None = None) -> None:
        self.control = control
        self.names = names
        self.me = me
        self.left = [control.base_seconds * 1000, control.base_seconds * 1000]
        self.running: int | None = None
        self.started = 0.0
        self.flagged: int | None = None

    def start(self, seat: int, at: float) -> None:
        self.running, self.started = seat, at

    def used(self, at: float, lag: float = 0.0) -> int:
        """Milliseconds the running decision has taken so far, ``lag`` seconds taken off."""
        return max(0, round((at - self.started - lag) * 1000))

    def deadline(self, lag: float = 0.0) -> float:
        """When the running clock reaches 0 (in the owner's time), ``lag`` seconds allowed."""
        assert self.running is not None
        return self.started + lag + self.left[self.running] / 1000

    def stop(self, at: float, lag: float = 0.0) -> tuple[int, int]:
        """End the running decision: (what was left before it, what it used), in ms."""
        seat = self.running
        assert seat is not None
        before, spent = self.left[seat], self.used(at, lag)
        if spent >= before:  # at 0:00 the flag has fallen
            self.left[seat], self.flagged = 0, seat
        else:
            self.left[seat] = min(MAX_MS, before - spent + self.control.increment * 1000)
        self.running = None
        return before, spent

    def charge(self, at: float) -> None:
        """End the running decision without the increment (a takeback: the time is spent,
        but no decision was made)."""
        seat = self.running
        assert seat is not None
        self.left[seat] = max(0, self.left[seat] - self.used(at))
        self.running = None

    def view(self, at: float | None = None, me: int | None = None) -> ClockView:
        """What a display shows; ``at`` counts the running decision's time so far."""
        left = [ms / 1000 for ms in self.left]
        if at is not None and self.running is not None:
            left[self.running] = max(0.0, left[self.running] - self.used(at) / 1000)
        return ClockView(self.control, (left[0], left[1]), self.running, self.names,
                         self.me if me is None else me, self.flagged)
