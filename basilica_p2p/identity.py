"""Identities (Ed25519 key pairs) and the directory where the client keeps things.

Everything the client stores lives under one home directory: ``--home``,
else ``$BASILICA_HOME``, else ``$XDG_CONFIG_HOME/basilica`` (default
``~/.config/basilica``).  Two players on one machine, and every test, use
their own home.  Inside it::

    identity.key      the private key (PKCS#8 PEM, file mode 0600)
    identity.json     {"name": ..., "public": hex} (0600)
    known_peers.json  see known_peers.py (0600)
    local/p1.key ...  the two identities of local matches, made on first use
    replays/          the default replay directory

The home directory is made 0700 and every file the client keeps private is
made 0600, whatever the umask, through ``safefile`` (never through a planted
symlink, never half written).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from .safefile import create_new, write_atomically
from .wire import is_text

KEY_FILE = "identity.key"
INFO_FILE = "identity.json"
MAX_NAME = 64


class IdentityError(Exception):
    """A missing, unreadable or refused identity; ``str(e)`` is one line."""


def home_dir(override: Path | str | None = None) -> Path:
    if override:
        return Path(override).expanduser()
    env = os.environ.get("BASILICA_HOME")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "basilica"


def make_home(home: Path) -> None:
    """Create ``home`` 0700 if it is missing (its parents as usual); an existing one is left as it is."""
    home.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mkdir(home, 0o700)
    except FileExistsError:
        return
    os.chmod(home, 0o700)  # the umask may have taken bits from the mode mkdir was given


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data``, mode 0600, in a home made 0700 if it is missing."""
    make_home(path.parent)
    write_atomically(path, data, 0o600)  # a fresh temporary name, never through a symlink, never half written


def fingerprint(public: bytes) -> str:
    """``SHA256:`` and the unpadded base64 of the key's SHA-256, as ssh shows host keys."""
    return "SHA256:" + base64.b64encode(hashlib.sha256(public).digest()).decode().rstrip("=")


def default_name() -> str:
    """The name a new identity gets unless told otherwise: the login name, in letters,
    digits and ``_.-`` (anything else becomes ``-``), else ``player``."""
    import getpass
    import re

    try:
        login = getpass.getuser()
    except Exception:  # no login name (e.g. a container with an unknown uid)
        login = ""
    name = re.sub(r"-{2,}", "-", "".join(ch if ch.isalnum() or ch in "_.-" else "-" for ch in login))
    name = name.strip("-.")[:MAX_NAME].strip("-.")
    return name or "player"


def check_name(name: str) -> str:
    name = name.strip()
    if not is_text(name, MAX_NAME):  # the rule the hello's name must pass on the wire
        raise IdentityError(f"a name is 1 to {MAX_NAME} printable characters")
    return name


@dataclass(frozen=True)
class Identity:
    name: str
    key: Ed25519PrivateKey

    @property
    def public(self) -> bytes:
        return self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)


def _write_private(path: Path, key: Ed25519PrivateKey, force: bool) -> None:
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    if force:
        write_private(path, pem)
        return
    make_home(path.parent)
    try:
        create_new(path, pem, 0o600)  # O_EXCL: never replaces a key, never follows a planted symlink
    except FileExistsError:
        raise IdentityError(f"{path} already exists (use --force to replace it)") from None


def _read_private(path: Path) -> Ed25519PrivateKey:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise IdentityError(f"no identity at {path} (run 'basilica id new')") from None
    except OSError as e:
        raise IdentityError(f"cannot read {path}: {e.strerror}") from None
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise IdentityError(f"{path} is not a private key file") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise IdentityError(f"{path} is not an Ed25519 key")
    return key


def _write_info(home: Path, ident: Identity) -> None:
    text = json.dumps({"name": ident.name, "public": ident.public.hex()}) + "\n"
    write_private(home / INFO_FILE, text.encode("utf-8"))


def create_identity(home: Path, name: str, force: bool = False, key: Ed25519PrivateKey | None = None) -> Identity:
    """Make and store a new key pair; never replaces one without ``force``."""
    name = check_name(name)
    key = key or Ed25519PrivateKey.generate()
    _write_private(home / KEY_FILE, key, force)
    ident = Identity(name, key)
    _write_info(home, ident)
    return ident


def load_identity(home: Path) -> Identity:
    key = _read_private(home / KEY_FILE)
    name = "player"
    try:
        info = json.loads((home / INFO_FILE).read_text())
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            name = check_name(info["name"])
    except (OSError, ValueError, IdentityError):
        pass  # the key is what matters; a damaged name file falls back to a neutral name
    return Identity(name, key)


def rename_identity(home: Path, name: str) -> tuple[str, Identity]:
    """Give the identity under ``home`` a new display name; the key stays.

    Returns the old name and the renamed identity.
    """
    name = check_name(name)
    old = load_identity(home)  # raises if there is no key: there is nothing to rename
    ident = Identity(name, old.key)
    _write_info(home, ident)
    return old.name, ident


def local_identity(home: Path, label: str, name: str | None = None) -> Identity:
    """An identity the client keeps for itself: the two sides of local matches,
    or a bot playing over the network (made on first use)."""
    path = home / "local" / f"{label}.key"
    make_home(home)  # the home first: made by the line below as a mere parent, it would follow the umask
    if not path.exists():
        try:
            _write_private(path, Ed25519PrivateKey.generate(), force=False)
        except IdentityError:
            pass  # another process made it first
    return Identity(check_name(name or f"local-{label}"), _read_private(path))
