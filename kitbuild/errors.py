"""The one exception family kitbuild raises.

The CLI catches only :class:`KitbuildError` and turns it into one paragraph on stderr and the
error's exit status, so every failure a user can cause must arrive here as a subclass.
"""

from __future__ import annotations

# Exit statuses, documented in README.md ("Exit codes").
EXIT_OK = 0
EXIT_FINDINGS = 1  # the input was understood but did not pass: a leak, an unsafe rewrite, a finding
EXIT_USAGE = 2  # the input could not be used: bad config, missing source, not a kit


class KitbuildError(Exception):
    """Base of every error kitbuild reports to a user."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(KitbuildError):
    """kit.yaml, a rule file or a source cannot be used as given (exit 2)."""

    exit_code = EXIT_USAGE


class RuleError(ConfigError):
    """A rule file is malformed, or its own samples do not behave as they say (exit 2)."""


class LeakError(KitbuildError):
    """The leak gate found private text in the would-be kit (exit 1)."""

    exit_code = EXIT_FINDINGS


class UnsafeRewriteError(KitbuildError):
    """A replacement cannot be written safely in its file's format (exit 1)."""

    exit_code = EXIT_FINDINGS
