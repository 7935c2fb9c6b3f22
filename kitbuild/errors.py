"""The one exception family kitbuild raises.

The CLI turns a :class:`KitbuildError` into one paragraph on stderr and the error's exit status,
so every failure a user can cause must arrive here as a subclass: any other exception is taken
for a bug in kitbuild (exit 3, "internal error ... please report it").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from kitbuild.findings import Finding

# Exit statuses, documented in README.md ("Exit codes").
EXIT_OK = 0
EXIT_FINDINGS = 1  # the input was understood but did not pass: a leak, an unsafe rewrite, a finding
EXIT_USAGE = 2  # the input could not be used: bad config, missing source, not a kit
EXIT_INTERNAL = 3  # a bug in kitbuild: an exception that is not a KitbuildError
EXIT_INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, the status a shell gives a process the signal ended


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
    """The staged kit has findings a reader's verify would report, or private text (exit 1): nothing is written.

    ``findings`` holds each :class:`~kitbuild.findings.Finding`, for reports that want them
    as values rather than as lines of the message.
    """

    exit_code = EXIT_FINDINGS

    def __init__(self, message: str, findings: Sequence[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = list(findings)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.message, self.findings))


class UnsafeRewriteError(KitbuildError):
    """A replacement cannot be written safely in its file's format (exit 1).

    ``path``, ``line`` and ``col`` name the place (a kit path; never a private one).
    """

    exit_code = EXIT_FINDINGS

    def __init__(self, message: str, path: str = "", line: int = 0, col: int = 0) -> None:
        super().__init__(message)
        self.path, self.line, self.col = path, line, col

    def __reduce__(self) -> tuple[object, ...]:
        # Raised in worker processes: pickled with its place, not only its message.
        return (type(self), (self.message, self.path, self.line, self.col))
