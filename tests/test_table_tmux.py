"""Friends at the table, through the real commands in real terminals (tmux), on one machine over
an invite: two people play, say something, play again twice, while a third watches all three
games; every replay verifies with its chat (docs/network.md: Chat, Playing again, Watching).
The same table through a relay between three homes: tests/test_table_relay.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.table import Table, in_lines, in_the_app

pytestmark = pytest.mark.xdist_group("terminal")

LOCAL = ("--bind", "127.0.0.1", "--port", "0", "--no-stun", "--port-mapping", "off")
INVITE = Table(host=LOCAL, join=("--no-stun",))


def test_two_people_chat_play_again_twice_and_a_third_watches_all_three_games(tmp_path: Path) -> None:
    in_lines(tmp_path, INVITE)


def test_the_same_table_in_the_app_chat_rematches_and_a_watcher(tmp_path: Path) -> None:
    in_the_app(tmp_path, INVITE)
