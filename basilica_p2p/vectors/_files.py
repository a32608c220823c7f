"""What the test-vector generators share: write their files into a folder and say so.

``python -m basilica_p2p.vectors.protocol`` (with the hidden deal's files),
``...vectors.playthroughs``, ``...vectors.deal`` and ``...vectors.invite`` each
build a dict of file name to bytes; the tests rebuild the same dict and compare
it with protocol/vectors byte for byte.
"""

from __future__ import annotations

import argparse
from pathlib import Path


def parser(description: str, what: str = "the files") -> argparse.ArgumentParser:
    """A generator's command line: ``--write DIR`` (without it the files are built and listed only)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--write", type=Path, metavar="DIR", help=f"write {what} into DIR (e.g. protocol/vectors)")
    return p


def emit(files: dict[str, bytes], folder: Path | None) -> None:
    """Write each file into ``folder`` (when given) and print its name and size."""
    for name, data in files.items():
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")
