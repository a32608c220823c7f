"""Issue 9 §3: files we create never follow a planted link, secrets are 0600 whatever the
umask, other files respect the user's umask, and a home made on first use is 0700."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from basilica_p2p.identity import local_identity
from basilica_p2p.safefile import create_new, publish, write_atomically


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def strict_umask() -> Iterator[None]:
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def test_create_new_refuses_a_planted_link_and_leaves_its_target_alone(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("precious\n")
    for dangling in (False, True):
        link = tmp_path / f"link-{dangling}"
        os.symlink(tmp_path / "nowhere" if dangling else target, link)
        with pytest.raises(FileExistsError):
            create_new(link, b"attack")
    assert target.read_text() == "precious\n"
    assert not (tmp_path / "nowhere").exists()


def test_write_atomically_replaces_a_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    target = tmp_path / "victim"
    target.write_text("precious\n")
    out = tmp_path / "out.json"
    os.symlink(target, out)
    write_atomically(out, "{}\n")
    assert target.read_text() == "precious\n"
    assert not out.is_symlink() and out.read_text() == "{}\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_secrets_are_0600_even_under_an_open_umask(tmp_path: Path, open_umask: None) -> None:
    create_new(tmp_path / "a", b"s", 0o600)
    write_atomically(tmp_path / "b", b"s", 0o600)
    assert mode(tmp_path / "a") == mode(tmp_path / "b") == 0o600


def test_other_files_follow_the_users_umask(tmp_path: Path, strict_umask: None) -> None:
    # A user who asked for private files (umask 077) gets them: an exported game or an
    # evidence file is not made world-readable behind their back.
    create_new(tmp_path / "a", b"x")
    write_atomically(tmp_path / "b", b"x")
    assert mode(tmp_path / "a") == mode(tmp_path / "b") == 0o600


def test_a_home_first_made_by_a_local_identity_is_0700(tmp_path: Path, open_umask: None) -> None:
    # 'basilica match' and 'host --bot' make their identities under HOME/local; the home itself
    # must not be created with the umask's mode as a mere parent (it was 0777 here).
    home = tmp_path / "fresh-home"
    local_identity(home, "p1")
    assert mode(home) == 0o700 and mode(home / "local") == 0o700
    assert mode(home / "local" / "p1.key") == 0o600


def test_publish_gives_a_finished_file_its_name_and_never_replaces_one_nor_a_planted_link(tmp_path: Path) -> None:
    part = tmp_path / ".game.replay.part"
    part.write_bytes(b"finished")
    publish(part, tmp_path / "game.replay")
    assert (tmp_path / "game.replay").read_bytes() == b"finished" and not part.exists()
    again = tmp_path / ".again.part"
    again.write_bytes(b"other")
    with pytest.raises(FileExistsError):
        publish(again, tmp_path / "game.replay")
    assert (tmp_path / "game.replay").read_bytes() == b"finished" and again.exists()
    target = tmp_path / "target"
    target.write_bytes(b"theirs")
    (tmp_path / "planted.replay").symlink_to(target)
    with pytest.raises(FileExistsError):
        publish(again, tmp_path / "planted.replay")
    assert target.read_bytes() == b"theirs"
