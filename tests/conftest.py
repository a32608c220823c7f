"""Shared fixtures and options.

``browser``: a headless Debian Chromium driven by Selenium through Debian's
chromedriver, one per test module.  A test run never changes the system: if
Chromium or tmux is missing, the tests that need it fail with one line naming
the command that installs them (``bash scripts/test --setup-only``).  They are never skipped:
the HTML replay viewer and the terminal client are part of what the suite checks.

``open_umask``: a umask of 0, so a file is exactly as private as the code makes it.

``--soak-sample N``: marks N of the ``slow`` soak tests ``soak_sample``, the same N on
every run, spread evenly over their collection order.  pyproject.toml's addopts select
them with ``-m 'not slow or soak_sample' --soak-sample 4``, so that the README's command
(and so ``.ci/run``) runs a bounded part of the soak on top of the normal suite.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.system_needs import CHROMEDRIVER, CHROMIUM, require_paths

CHROMIUM_BINARY = Path("/usr/lib/chromium/chromium")  # what the /usr/bin/chromium wrapper script runs
PACKAGES = ("chromium", "chromium-driver")
# The network here is closed: without the background-networking flags Chromium keeps trying to reach
# its services, and many of those connections are refused.
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--disable-extensions", "--window-size=1200,1600",
)


def require_chromium() -> None:
    """Fail the test, in one line naming the command that installs them, if Chromium or its driver
    is missing."""
    require_paths(f"headless Chromium is needed (Debian's {' '.join(PACKAGES)})", CHROMIUM, CHROMEDRIVER)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--soak-sample", type=int, default=0, metavar="N",
                     help="mark N of the slow soak tests 'soak_sample' (select them with -m)")


@pytest.hookimpl(tryfirst=True)  # before -m deselects: the mark must be there when it looks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    n = config.getoption("--soak-sample")
    if n > 0:
        for item in soak_sample([i for i in items if i.get_closest_marker("slow")], n):
            item.add_marker("soak_sample")


def soak_sample(slow: list[pytest.Item], n: int) -> list[pytest.Item]:
    """N of ``slow``, spread evenly over their collection order (the first always among them)."""
    n = min(n, len(slow))
    return [slow[i * len(slow) // n] for i in range(n)]


@pytest.fixture
def open_umask() -> Iterator[None]:
    """A umask that takes nothing away: a file is then as private as the code makes it, no more."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium WebDriver, with a fresh profile, for the whole test module."""
    require_chromium()
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
