"""The package type-checks under the mypy settings in pyproject.toml (strict on kitbuild, tests excluded).

CI runs only pytest, so this test is what keeps a type error from landing.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None,
    reason="mypy is not installed; install the test extra: python -m pip install -e '.[test]'",
)
def test_the_package_type_checks() -> None:
    # The config file is named so that a stray mypy.ini or setup.cfg cannot change the settings.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "kitbuild"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found"), result.stdout
