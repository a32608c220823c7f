"""What the test-vector generators share: write their files into a folder and say so.

``python -m basilica_p2p.wire.vectors``, ``...wire.playthroughs`` and
``...deal.vectors`` each build a dict of file name to bytes; the tests
rebuild the same dict and compare it with protocol/vectors byte for byte.
"""

from __future__ import annotations

from pathlib import Path


def emit(files: dict[str, bytes], folder: Path | None) -> None:
    """Write each file into ``folder`` (when given) and print its name and size."""
    for name, data in files.items():
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        print(f"{name}: {len(data)} bytes")
