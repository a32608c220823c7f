"""``basilica demo``: a host and a joiner, two bots, over loopback TCP, in one command.

Both sides run the real network code in one process (two trio tasks), each
with its own identity in a scratch home directory and its own engine and
replay; the host's view is shown as the game goes, and both replays are
verified at the end.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import trio

from ..bots import make_bot
from ..describe import describe_answer
from ..engine import Observation, Options, default_manifest, format_action
from ..identity import local_identity
from ..net.peer import PeerConfig, host, join
from ..net.ledger import GameLedger
from ..known_peers import KnownPeers
from ..net.session import GameReport, Settings, Timeouts, Watch
from ..render import LEGEND, render_scoring, render_view
from ..seat import MoveApplied, Scored, SeatEvent


class Narration:
    """What the demo prints as the game goes (the events of the host's seat): the legend first,
    then every move in notation, a paid option's answer told as an answer to the order it
    follows, scorings, and the board after each turn (after that turn's scorings)."""

    def __init__(self, names: tuple[str, str], show_boards: bool, out: Callable[[str], None]) -> None:
        self.names, self.show_boards, self.out = names, show_boards, out
        self.width = max(len(n) for n in names)
        self.started = False
        self.board: Observation | None = None  # the board after a turn, shown once its scorings are

    def __call__(self, event: SeatEvent) -> None:
        if isinstance(event, MoveApplied):
            self._flush()
            if not self.started:
                self.started = True
                self.out(LEGEND)
            answer = describe_answer(event.action, event.mover, event.before, self.names)
            self.out(f"turn {event.turn:>2}  {self.names[event.mover]:<{self.width}}  "
                     f"{answer or format_action(event.action)}")
            after = event.after
            if after is not None and after.turn != event.turn and self.show_boards and not after.over:
                self.board = after
        elif isinstance(event, Scored):
            self.out(render_scoring(event.result, event.number, self.names))

    def _flush(self) -> None:
        if self.board is not None:
            self.out(render_view(self.board, self.names))
            self.board = None


def run_demo(replay_dir: Path, bots: tuple[str, str], options: Options, show_boards: bool,
             out: Callable[[str], None]) -> tuple[GameReport, GameReport]:
    manifest = default_manifest()
    settings = Settings(options, manifest)
    with tempfile.TemporaryDirectory(prefix="basilica-demo-") as scratch:
        home = Path(scratch)
        ids = (local_identity(home / "host", "demo", f"{bots[0]}-host"),
               local_identity(home / "join", "demo", f"{bots[1]}-join"))
        names = (ids[0].name, ids[1].name)  # one game, so the host is player 1 (net/peer.py)
        on_event = Narration(names, show_boards, out)

        def config(k: int, log: Callable[[str], None], watch: Watch | None) -> PeerConfig:
            return PeerConfig(ids[k], settings, lambda n: make_bot(bots[k], manifest, 1000 * k + n),
                              replay_dir / ("host" if k == 0 else "join"), KnownPeers(home / ("host", "join")[k]),
                              Timeouts(), 1, log=log, watch=watch, ledger=GameLedger(home / ("host", "join")[k]))

        results: dict[int, list[GameReport]] = {}

        async def main() -> None:
            send, receive = trio.open_memory_channel[int](1)

            def ready(address: str, actual: int) -> None:
                out(f"host listening on {address}:{actual}; the joiner connects")
                send.send_nowait(actual)

            async def run_host() -> None:
                results[0] = await host("127.0.0.1", 0, config(0, out, on_event), ready)

            async def run_join() -> None:
                actual = await receive.receive()
                results[1] = await join("127.0.0.1", actual, config(1, lambda m: None, None))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(run_host)
                nursery.start_soon(run_join)

        trio.run(main)
    return results[0][0], results[1][0]
