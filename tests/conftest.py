"""Registers the shared fixtures defined in tests/kittest.py, and how property tests draw."""

import os

from hypothesis import settings

from kittest import demo_kit_fixture, demo_result_fixture, make_files_fixture, write_kit_fixture, cli, bench  # noqa: F401

# The same examples on every run, so a property test that fails fails again, and CI's verdict is
# the code's, not the draw's. HYPOTHESIS_PROFILE=explore draws new ones (run it now and then).
# No deadline: an example that compiles a scanner's tables takes 100 ms on a quiet machine and
# several times that on a loaded one; a hang is caught by the bounds the tests state themselves.
settings.register_profile("kitbuild", derandomize=True, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "kitbuild"))

# The suite runs as on a researcher's own machine wherever it runs: `kitbuild build --dry-run
# --verbose` refuses to print private text where CI is set, and CI sets it for this run too. A
# test of that sets it itself.
os.environ.pop("CI", None)
