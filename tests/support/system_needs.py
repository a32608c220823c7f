"""What the suite needs from outside the project, and the one command that installs it.

`scripts/test` (the README's test command, and so `.ci/run`) installs everything here; a test
run itself installs nothing.  A test that cannot find what it needs fails, never skips, with
one line naming what is missing and `SETUP_COMMAND`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

import pytest

# Kept the same as scripts/test's step 1 and 2: that file is the one place that installs.
SETUP_COMMAND = "bash scripts/test --setup-only"

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")


def wormhole_venv() -> Path:
    """The Magic Wormhole servers' own virtual environment (scripts/test's step 2)."""
    if override := os.environ.get("BASILICA_WORMHOLE_VENV"):
        return Path(override)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "basilica-p2p" / "wormhole-servers"


def missing_message(what: str, missing: Iterable[str]) -> str:
    """One line: what is needed, what is missing, and the command that installs it."""
    return f"{what} ({', '.join(missing)} missing): run `{SETUP_COMMAND}` (a test run installs nothing)"


def require_paths(what: str, *needed: Path) -> None:
    """Fail the test in one line if any of ``needed`` is not there."""
    missing = [str(p) for p in needed if not p.exists()]
    if missing:
        pytest.fail(missing_message(what, missing), pytrace=False)


def require_command(what: str, name: str) -> str:
    """The path of the command ``name``; fail the test in one line if it is not on PATH."""
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin")
    if found is None:
        pytest.fail(missing_message(what, [name]), pytrace=False)
    return found
