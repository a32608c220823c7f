"""The package's type checking (mypy, run by scripts/test before the suite) stays honest: an
ignore names the error it silences and says, on its line, why the code cannot simply be fixed."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "basilica_p2p"
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<codes>\[[a-z-]+(?:,\s*[a-z-]+)*\])?(?P<after>.*)$")


def test_every_type_ignore_names_its_error_and_its_reason() -> None:
    bare = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found = IGNORE.search(line)
            if found and not (found["codes"] and re.match(r"\s*#\s*\S", found["after"])):
                bare.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert not bare, "\n".join(bare)
