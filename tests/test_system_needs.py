"""The suite's set-up is one script (scripts/test) that the README's test command and .ci/run
both run, and a test that lacks something names that script's command."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from support import natlab
from support.system_needs import SETUP_COMMAND, missing_message, require_command, require_paths, wormhole_venv

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "test"


def _installed_packages() -> set[str]:
    """The Debian packages scripts/test installs (the values of its PROVIDES table)."""
    table = re.search(r"declare -A PROVIDES=\((.*?)\n\)", SCRIPT.read_text(), re.S)
    assert table is not None, "scripts/test has no PROVIDES table"
    return set(re.findall(r"\]=(\S+)", table.group(1)))


def test_readme_test_command_runs_the_setup_script() -> None:
    readme = ROOT.joinpath("README.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)```", readme, re.S)
    assert blocks[1].strip() == "bash scripts/test"


def test_ci_runs_the_same_script() -> None:
    lines = [line for line in ROOT.joinpath(".ci", "run").read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    assert any("scripts/test" in line for line in lines)
    assert not any(word in line for line in lines for word in ("apt-get", "pip install", "pytest"))


def test_setup_installs_every_package_a_test_names() -> None:
    needed = set(natlab.TOOLS.values()) | {"chromium", "chromium-driver", "tmux"}
    assert needed <= _installed_packages()


def test_setup_and_tests_agree_on_the_wormhole_venv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The script's own default, evaluated by bash with the same environment.
    line = next(text for text in SCRIPT.read_text().splitlines() if text.startswith("wormhole_venv="))
    for env in ({"HOME": str(tmp_path)}, {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "c")},
                {"HOME": str(tmp_path), "BASILICA_WORMHOLE_VENV": str(tmp_path / "w")}):
        out = subprocess.run(["bash", "-c", f'{line}; printf %s "$wormhole_venv"'], env=env,
                             capture_output=True, text=True, check=True).stdout
        for name in ("HOME", "XDG_CACHE_HOME", "BASILICA_WORMHOLE_VENV"):
            monkeypatch.delenv(name, raising=False)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        assert Path(out) == wormhole_venv()
    assert "/opt" not in str(wormhole_venv())


def test_a_missing_need_names_the_setup_command(tmp_path: Path) -> None:
    assert SETUP_COMMAND in missing_message("x", ["y"])
    with pytest.raises(pytest.fail.Exception) as failed:
        require_paths("a thing is needed", tmp_path / "absent")
    assert SETUP_COMMAND in str(failed.value) and str(tmp_path / "absent") in str(failed.value)
    with pytest.raises(pytest.fail.Exception) as failed:
        require_command("a tool is needed", "no-such-command-anywhere")
    assert SETUP_COMMAND in str(failed.value)


def test_setup_command_is_what_scripts_test_accepts() -> None:
    assert SETUP_COMMAND == "bash scripts/test --setup-only"
    assert '"--setup-only"' in SCRIPT.read_text()
    assert os.access(SCRIPT, os.X_OK)


def test_setup_script_checks_types_and_lint_before_the_suite() -> None:
    # Both checks run on every run of the README's command (and so of CI), each failing the
    # run on a finding, and before pytest, whose exec ends the script.
    lines = [line.strip() for line in SCRIPT.read_text().splitlines()
             if line.strip() and not line.lstrip().startswith("#")]
    checks = [next(i for i, line in enumerate(lines) if line.startswith(tool)) for tool in ("mypy", "ruff check")]
    suite = next(i for i, line in enumerate(lines) if line.startswith("exec python -m pytest"))
    assert all(i < suite and "|| die" in lines[i] for i in checks)
