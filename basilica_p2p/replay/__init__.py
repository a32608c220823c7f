"""Replay files: written by a game, read back record by record, checked, shown and compared.

    from basilica_p2p.replay import known_manifests, verify_file
    verdict = verify_file(path, known_manifests())   # signatures, chain, every move, the result

The modules: file.py the format (protocol/PROTOCOL.md §9), walk.py the walk of a file
through a verifying seat, told to visitors (verify.py's ``Verifier``, show.py, html.py's
page, analysis.py's search); forks.py and evidence.py compare two files of one game;
local.py plays both seats of a game in this process (play, match, tournament).
samples.py writes the sample replays (``python -m basilica_p2p.replay.samples``), so
this face does not import it.

Everything the rest of the package uses is re-exported here, but for the two
functions named ``walk`` (walk.py's walker and show.py's): re-exported, either
would hide the module ``replay.walk``.
"""

from .analysis import BLUNDER, INACCURACY, AnalysisError, Budget, analyse, evaluation_series
from .evidence import EvidenceError, check_evidence, encode_evidence, is_evidence_file, write_evidence
from .file import Header, ReplayError, ReplayFile, ReplayWriter, TornTail, read_replay
from .forks import Agreement, Fork, agreements, find_forks
from .html import OutputError, ViewerError, write_viewer
from .local import Forfeit, Played, play_both_seats, play_recorded
from .show import Walk, export_json
from .verify import Verdict, Verifier, verify_file
from .walk import Visitor, known_manifests, seat_for, spec_from_replay, spec_of

__all__ = [
    "BLUNDER", "INACCURACY", "AnalysisError", "Agreement", "Budget", "EvidenceError", "Forfeit", "Fork", "Header",
    "OutputError", "Played", "ReplayError", "ReplayFile", "ReplayWriter", "TornTail", "Verdict", "Verifier",
    "ViewerError", "Visitor", "Walk", "agreements", "analyse", "check_evidence", "encode_evidence",
    "evaluation_series", "export_json", "find_forks", "is_evidence_file", "known_manifests", "play_both_seats",
    "play_recorded", "read_replay", "seat_for", "spec_from_replay", "spec_of", "verify_file", "write_evidence", "write_viewer",
]
