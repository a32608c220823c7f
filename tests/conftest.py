"""Shared fixtures.

``browser``: a headless Debian Chromium driven by Selenium through Debian's
chromedriver, one per test module.  If Chromium is missing it is installed
from the system packages (``apt-get install chromium chromium-driver``, as
``.ci/run`` does); if that is not possible the test fails, saying why: the
HTML replay viewer is part of what the suite checks, so it is never skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_BINARY = Path("/usr/lib/chromium/chromium")  # what the /usr/bin/chromium wrapper script runs
CHROMEDRIVER = Path("/usr/bin/chromedriver")
PACKAGES = ("chromium", "chromium-driver")
# The network here is closed: without the background-networking flags Chromium keeps trying to reach
# its services, and many of those connections are refused.
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--disable-extensions", "--window-size=1200,1600",
)


def _apt(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["apt-get", *args], env=env, capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)


def ensure_chromium() -> None:
    """Install Debian's chromium and chromedriver if they are missing; fail the test if that cannot be done."""
    if CHROMIUM.exists() and CHROMEDRIVER.exists():
        return
    if shutil.which("apt-get") is None:
        pytest.fail(f"headless Chromium is needed ({CHROMIUM}, {CHROMEDRIVER}) and there is no apt-get to "
                    f"install it: install the Debian packages {' '.join(PACKAGES)}", pytrace=False)
    r = _apt("install", "-y", "-q", *PACKAGES)
    if r.returncode != 0:  # perhaps the package lists are missing or stale
        _apt("update", "-q")
        r = _apt("install", "-y", "-q", *PACKAGES)
    command = f"apt-get install {' '.join(PACKAGES)}"
    if r.returncode != 0:
        why = ((r.stderr or r.stdout).strip().splitlines() or ["no output"])[-1]
        pytest.fail(f"headless Chromium is needed and '{command}' failed (exit {r.returncode}: {why}); "
                    "run it as root, then the tests again", pytrace=False)
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail(f"headless Chromium is needed: after '{command}', {CHROMIUM} or {CHROMEDRIVER} is still "
                    "missing", pytrace=False)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium WebDriver, with a fresh profile, for the whole test module."""
    ensure_chromium()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.fail("selenium is needed for the browser tests: pip install -e '.[test]'", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM_BINARY if CHROMIUM_BINARY.exists() else CHROMIUM)
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # so tests can read console errors
    # Both paths are given, so Selenium Manager has nothing to look up or download.
    service = Service(executable_path=str(CHROMEDRIVER), log_output=subprocess.DEVNULL)
    try:
        driver = webdriver.Chrome(options=options, service=service)
    except Exception as e:  # noqa: BLE001 - any start-up failure is reported the same way
        first = (str(e).strip().splitlines() or [""])[0]
        pytest.fail(f"headless Chromium did not start: {type(e).__name__}: {first}", pytrace=False)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
