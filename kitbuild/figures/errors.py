"""The errors a figure can raise: a spec that cannot be used, or a figure that cannot be counted.

A bad ``figures:`` block is the user's input failing its schema (exit 2, like the rest of
kit.yaml). A figure whose file, pointer or field is missing from the kit was understood but does
not hold (exit 1): the kit as built cannot back the number the page would print.
"""

from __future__ import annotations

from typing import Callable, Sequence

from kitbuild.errors import EXIT_FINDINGS, ConfigError, KitbuildError
from kitbuild.schema import key_path

# Turns a key path (['figures', 'x', 'k']) into where it is written: kit.yaml:LINE:COL.
Where = Callable[[Sequence[str | int]], str]


def locate(where: Where | None, path: Sequence[str | int]) -> str:
    """``kit.yaml:LINE:COL: figures.x.k`` for a key path (just ``kit.yaml: ...`` without ``where``)."""
    place = where(list(path)) if where else "kit.yaml"
    return f"{place}: {key_path(path)}"


class FigureSpecError(ConfigError):
    """The ``figures:`` block, or ``readme.figures_table``, cannot be used as written (exit 2)."""


class FigureError(KitbuildError):
    """A figure cannot be computed from the kit's files (exit 1).

    The message always starts with the figure's name, so a build log says which number failed.
    """

    exit_code = EXIT_FINDINGS

    def __init__(self, figure: str, reason: str) -> None:
        super().__init__(f"figure {figure!r} cannot be computed: {reason}")
        self.figure = figure
        self.reason = reason


class FigureCheckError(KitbuildError):
    """One or more ``agrees_with`` / ``equals`` checks do not hold (exit 1); lists them all."""

    exit_code = EXIT_FINDINGS

    def __init__(self, lines: Sequence[str]) -> None:
        count = len(lines)
        head = f"{count} figure check{'s' if count != 1 else ''} did not hold:"
        super().__init__("\n".join([head, *(f"  {line}" for line in lines)]))
        self.lines = tuple(lines)
