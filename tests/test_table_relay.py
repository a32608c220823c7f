"""The table of tests/test_table_tmux.py through a relay: alice, bob and carol each at home,
behind a router that changes ports per destination (symmetric NAT), so that no direct way
exists between any two of them (tests/support/natlab.py).  Alice hosts with a code, bob joins
by it, and carol watches by the watch code read aloud, each running the real command in a
terminal (tmux) in their home's network; the Magic Wormhole mailbox and transit relay on the
lab's internet bring them together.  They chat, play again twice, carol watches all three games,
and every replay verifies with its chat (docs/network.md: Chat, Playing again, Watching)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from support.natlab import Lab, Router
from support.table import PEOPLE, Played, Table, in_lines, in_the_app
from support.wormhole_servers import RELAY_PORT, WormholeServers

# The lab's tests run one after another on one worker (tests/test_nat_games.py says why).
pytestmark = pytest.mark.xdist_group("natlab")


@pytest.fixture(scope="module")
def three_homes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Lab, WormholeServers]]:
    with Lab([Router(person, "symmetric") for person in PEOPLE]) as lab:
        yield lab, WormholeServers(lab, tmp_path_factory.mktemp("wh"))


@pytest.mark.parametrize("play", [in_the_app, in_lines], ids=["app", "line client"])
def test_the_table_through_the_relay_chat_rematches_and_a_watcher(three_homes: tuple[Lab, WormholeServers],
                                                                   tmp_path: Path,
                                                                   play: Callable[[Path, Table], Played]) -> None:
    lab, servers = three_homes
    where = (*lab.stun_options(), *servers.where)
    # Each in their own home (the lab's routers are named after them); bob joins and carol
    # watches by the codes read aloud, and the watch code names the relay the host waits on.
    table = Table(host=("--code", "--port", "0", "--port-mapping", "off", *where), join=where,
                  watch=("--mailbox", servers.mailbox_url), invite_line="code: basilica join --code",
                  watch_line="watch code to read aloud: basilica watch --code",
                  command=lambda person, args: lab.python(lab.player(person), args))
    played = play(tmp_path, table)
    relayed = f"connected: relayed by {lab.server_ips[0]}:{RELAY_PORT}"
    assert relayed in played.host and relayed in played.joiner, (played.host, played.joiner)
    assert relayed in played.watcher, played.watcher  # no direct way from carol's home either
