"""``basilica id new`` / ``id show``: the key file, its mode, the fingerprint, the home directory."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from typer.testing import CliRunner

from basilica_p2p.cli import app

runner = CliRunner()


def run(*args: str, env: dict[str, str | None] | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), env={"BASILICA_HOME": None, **(env or {})})


def field(output: str, name: str) -> str:
    for line in output.splitlines():
        if line.startswith(name + " "):
            return line[len(name):].strip()
    raise AssertionError(f"no {name!r} line in {output!r}")


def independent_fingerprint(public: bytes) -> str:
    digest = hashlib.sha256(public).digest()
    return "SHA256:" + base64.b64encode(digest).decode("ascii").replace("=", "")


def key_public(path: Path) -> bytes:
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    assert isinstance(key, Ed25519PrivateKey)
    return key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def one_error_line(stderr: str) -> str:
    assert stderr.endswith("\n") and stderr.count("\n") == 1, repr(stderr)
    assert stderr.startswith("error: ") and "Traceback" not in stderr
    return stderr


def test_id_new_writes_a_0600_ed25519_key_and_prints_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    r = run("--home", str(home), "id", "new", "--name", "x")
    assert r.exit_code == 0, r.output
    key = home / "identity.key"
    assert key.is_file() and mode(key) == 0o600
    public = key_public(key)
    assert field(r.stdout, "public key") == public.hex()
    assert field(r.stdout, "fingerprint") == independent_fingerprint(public)
    from basilica_p2p.fingerprint_words import fingerprint_words

    assert field(r.stdout, "words") == fingerprint_words(public)  # to read aloud (issue 9 §2)
    info = json.loads((home / "identity.json").read_text())
    assert info == {"name": "x", "public": public.hex()}


def test_the_key_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        r = run("--home", str(tmp_path), "id", "new", "--name", "x")
    finally:
        os.umask(old)
    assert r.exit_code == 0, r.output
    assert mode(tmp_path / "identity.key") == 0o600


def test_id_new_again_fails_and_keeps_the_key_unless_forced(tmp_path: Path) -> None:
    assert run("--home", str(tmp_path), "id", "new", "--name", "x").exit_code == 0
    key = tmp_path / "identity.key"
    before = key.read_bytes()
    r = run("--home", str(tmp_path), "id", "new", "--name", "y")
    assert r.exit_code == 2
    assert "--force" in one_error_line(r.stderr)
    assert r.stdout == ""
    assert key.read_bytes() == before
    assert json.loads((tmp_path / "identity.json").read_text())["name"] == "x"

    key.chmod(0o644)  # even a key someone loosened is rewritten 0600
    r = run("--home", str(tmp_path), "id", "new", "--name", "y", "--force")
    assert r.exit_code == 0, r.output
    assert key.read_bytes() != before and mode(key) == 0o600
    assert field(r.stdout, "public key") == key_public(key).hex()
    assert json.loads((tmp_path / "identity.json").read_text())["name"] == "y"


def test_id_show_prints_the_public_key_and_an_independently_computed_fingerprint(tmp_path: Path) -> None:
    new = run("--home", str(tmp_path), "id", "new", "--name", "Ann Example")
    assert new.exit_code == 0, new.output
    r = run("--home", str(tmp_path), "id", "show")
    assert r.exit_code == 0, r.output
    public = key_public(tmp_path / "identity.key")
    assert field(r.stdout, "name") == "Ann Example"
    assert field(r.stdout, "public key") == public.hex()
    fp = field(r.stdout, "fingerprint")
    assert fp == independent_fingerprint(public)
    assert fp.startswith("SHA256:") and "=" not in fp and len(fp) == len("SHA256:") + 43
    assert field(new.stdout, "fingerprint") == fp


def test_a_known_key_has_a_known_fingerprint(tmp_path: Path) -> None:
    from basilica_p2p.identity import create_identity

    ident = create_identity(tmp_path, "k", key=Ed25519PrivateKey.from_private_bytes(bytes(32)))
    r = run("--home", str(tmp_path), "id", "show")
    # The public key of the all-zero Ed25519 seed (a well-known constant).
    public = bytes.fromhex("3b6a27bcceb6a42d62a3a8d02a6f0d73653215771de243a63ac048a18b59da29")
    assert ident.public == public
    assert field(r.stdout, "fingerprint") == independent_fingerprint(public)


def test_basilica_home_is_honoured_and_home_option_wins(tmp_path: Path) -> None:
    env_home = tmp_path / "from-env"
    r = run("id", "new", "--name", "env", env={"BASILICA_HOME": str(env_home)})
    assert r.exit_code == 0, r.output
    assert (env_home / "identity.key").is_file()
    show = run("id", "show", env={"BASILICA_HOME": str(env_home)})
    assert show.exit_code == 0 and field(show.stdout, "name") == "env"
    assert field(show.stdout, "public key") == key_public(env_home / "identity.key").hex()

    opt_home = tmp_path / "from-option"
    r = run("--home", str(opt_home), "id", "new", "--name", "opt", env={"BASILICA_HOME": str(env_home)})
    assert r.exit_code == 0, r.output
    assert (opt_home / "identity.key").is_file()
    show = run("--home", str(opt_home), "id", "show", env={"BASILICA_HOME": str(env_home)})
    assert field(show.stdout, "name") == "opt"


def test_xdg_config_home_is_the_fallback(tmp_path: Path) -> None:
    r = run("id", "new", "--name", "xdg", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.exit_code == 0, r.output
    assert (tmp_path / "basilica" / "identity.key").is_file()


def test_id_show_without_an_identity_exits_2_with_a_hint(tmp_path: Path) -> None:
    r = run("id", "show", env={"BASILICA_HOME": str(tmp_path / "empty")})
    assert r.exit_code == 2
    assert "id new" in one_error_line(r.stderr)
    assert r.stdout == ""


def test_id_show_with_a_damaged_key_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "identity.key").write_text("not a key\n")
    r = run("--home", str(tmp_path), "id", "show")
    assert r.exit_code == 2
    one_error_line(r.stderr)


@pytest.mark.parametrize("name", ["", "   ", "x" * 65, "a\nb", "tab\there"])
def test_id_new_refuses_a_bad_name_and_writes_nothing(tmp_path: Path, name: str) -> None:
    r = run("--home", str(tmp_path), "id", "new", "--name", name)
    assert r.exit_code == 2
    one_error_line(r.stderr)
    assert not (tmp_path / "identity.key").exists()


def _cli(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "BASILICA_HOME"}
    if home is not None:
        env["BASILICA_HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "basilica_p2p.cli", *args], capture_output=True, text=True,
                          env=env, timeout=60)


def test_the_real_command_line(tmp_path: Path) -> None:
    first = _cli("id", "new", "--name", "sub", home=tmp_path)
    assert first.returncode == 0, first.stderr
    assert mode(tmp_path / "identity.key") == 0o600
    again = _cli("id", "new", "--name", "sub", home=tmp_path)
    assert again.returncode == 2
    assert "--force" in one_error_line(again.stderr)
    show = _cli("--home", str(tmp_path), "id", "show")
    assert show.returncode == 0, show.stderr
    assert field(show.stdout, "fingerprint") == independent_fingerprint(key_public(tmp_path / "identity.key"))
    missing = _cli("id", "show", home=tmp_path / "nobody")
    assert missing.returncode == 2
    assert "id new" in one_error_line(missing.stderr)


# --- the default name and 'id rename' -------------------------------------------------------------------------


@pytest.mark.parametrize("login, expected", [
    ("alice", "alice"), ("Jane Doe", "Jane-Doe"), ("josé", "josé"), ("a/b\\c d", "a-b-c-d"),
    ("..dots..", "dots"), ("x" * 80, "x" * 64), ("", "player"), ("  ", "player"), (None, "player"),
])
def test_the_default_name_is_the_login_name_made_safe(monkeypatch: pytest.MonkeyPatch, login: str | None,
                                                       expected: str) -> None:
    import getpass

    from basilica_p2p.identity import check_name, default_name

    def getuser() -> str:
        if login is None:
            raise OSError("no login name")  # what getpass does for an unknown uid
        return login

    monkeypatch.setattr(getpass, "getuser", getuser)
    assert default_name() == expected
    assert check_name(default_name()) == expected


def test_first_use_by_a_network_command_takes_the_login_name_and_says_how_to_change_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    # join makes the person's identity before it dials; nothing listens on port 1
    r = run("--home", str(home), "join", "127.0.0.1:1", env={"LOGNAME": "Jane Doe", "USER": "Jane Doe"})
    assert r.exit_code == 1, r.output
    assert "made a new identity 'Jane-Doe'" in r.stderr, r.stderr
    assert "basilica id rename NAME" in r.stderr, r.stderr
    assert json.loads((home / "identity.json").read_text())["name"] == "Jane-Doe"
    assert "'player'" not in r.stderr


def test_id_new_without_a_name_takes_the_login_name(tmp_path: Path) -> None:
    r = run("--home", str(tmp_path), "id", "new", env={"LOGNAME": "bob", "USER": "bob"})
    assert r.exit_code == 0, r.output
    assert "new identity 'bob'" in r.output


def test_id_rename_changes_the_name_and_keeps_the_key(tmp_path: Path) -> None:
    assert run("--home", str(tmp_path), "id", "new", "--name", "player").exit_code == 0
    key_before = (tmp_path / "identity.key").read_bytes()
    fp = field(run("--home", str(tmp_path), "id", "show").output, "fingerprint")

    r = run("--home", str(tmp_path), "id", "rename", "Alice B")
    assert r.exit_code == 0, r.output
    assert "renamed 'player' to 'Alice B'" in r.output and fp in r.output
    shown = run("--home", str(tmp_path), "id", "show").output
    assert field(shown, "name") == "Alice B"
    assert field(shown, "fingerprint") == fp
    assert (tmp_path / "identity.key").read_bytes() == key_before
    info = json.loads((tmp_path / "identity.json").read_text())
    assert info == {"name": "Alice B", "public": key_public(tmp_path / "identity.key").hex()}
    assert not list(tmp_path.glob("*.tmp"))

    for bad in ("", "x" * 65, "a\nb"):
        refused = run("--home", str(tmp_path), "id", "rename", bad)
        assert refused.exit_code == 2
        one_error_line(refused.stderr)
    assert field(run("--home", str(tmp_path), "id", "show").output, "name") == "Alice B"


def test_id_rename_without_an_identity_says_to_make_one(tmp_path: Path) -> None:
    r = run("--home", str(tmp_path), "id", "rename", "x")
    assert r.exit_code == 2
    assert "id new" in one_error_line(r.stderr)
    assert not (tmp_path / "identity.json").exists()


def test_the_help_tells_how_names_are_made_and_changed() -> None:
    for command in (["id", "--help"], ["host", "--help"], ["join", "--help"]):
        text = " ".join(run(*command).output.split())
        assert "login name" in text, (command, text)
    assert "rename" in run("id", "--help").output


def test_an_identity_name_follows_the_wires_pinned_text_rule() -> None:
    # Issue 9 §4.2: a name the wire would refuse must not be accepted by 'id new' either, whatever
    # Unicode version the running Python has (U+1FAE8 was assigned only in Unicode 15.0).
    from basilica_p2p.identity import IdentityError, check_name
    from basilica_p2p.wire.text import is_text

    assert check_name(" alice ") == "alice"
    for name in ("al\U0001FAE8ice", "al\u200bice", "a" * 65, "\x1b[2J"):
        assert not is_text(name, 64)
        with pytest.raises(IdentityError):
            check_name(name)
