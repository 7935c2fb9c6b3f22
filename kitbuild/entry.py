"""The ``kitbuild`` command's entry point, for ``kitbuild ...`` and ``python -m kitbuild ...``.

The command line is defined in :mod:`kitbuild.cli`, with typer. Importing typer and building its
command tree cost about 22 ms on every run: a fifth of verifying a small kit (bench workload S,
0.119 against 0.097 s, medians of 15 runs alternating), and verify is the command a reader runs.
So :func:`main` runs a verify call written in one of its plain forms (:func:`plain_verify`)
without typer, through the same function the typer command calls (:func:`run_verify`). Every
other call (another command, ``--help``, ``--version``, an option given twice or spelled
otherwise, a value typer would refuse) goes to the typer app, which gives it its meaning or its
error. ``tests/commands/entry_test.py`` holds the two to the same calls.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, NamedTuple, Sequence

from kitbuild.errors import KitbuildError


class VerifyCall(NamedTuple):
    """The arguments of the verify command, as typer passes them."""

    kit: Path
    format: str = "text"
    as_json: bool = False
    quiet: bool = False
    jobs: int | None = None


# The verify command's flags and the options that take a value, with the field each sets.
_FLAGS = {"--json": "as_json", "--quiet": "quiet", "-q": "quiet"}
_VALUED = {"--format": "format", "--jobs": "jobs"}


def plain_verify(args: Sequence[str]) -> VerifyCall | None:
    """The call ``kitbuild`` + ``args`` makes, if it is ``verify KIT`` with ``--jobs N``,
    ``--format F`` (or ``--jobs=N``, ``--format=F``), ``--json`` and ``-q``/``--quiet``, each at
    most once and in any order; else None, and typer reads ``args``.

    Only forms whose reading is beyond doubt are taken: a KIT or a value that starts with '-', an
    empty KIT, and a count of jobs that is not plain decimal digits above zero are left to typer,
    as is anything after ``--``."""
    if not args or args[0] != "verify":
        return None
    kit: str | None = None
    given: dict[str, Any] = {}
    rest = list(args[1:])
    while rest:
        token = rest.pop(0)
        if not token.startswith("-"):
            if kit is not None:
                return None  # a second KIT: typer's error
            kit = token
            continue
        name, eq, value = token.partition("=")
        setting: object
        if token in _FLAGS:
            field, setting = _FLAGS[token], True
        elif name in _VALUED:
            if not eq:
                if not rest:
                    return None
                value = rest.pop(0)
            if value.startswith("-"):
                return None
            field, setting = _VALUED[name], value
        else:
            return None
        if field in given:
            return None
        if field == "jobs":
            if not (value.isascii() and value.isdigit() and int(value) >= 1):
                return None
            setting = int(value)
        given[field] = setting
    if not kit:
        return None
    return VerifyCall(Path(kit), **given)


def run_verify(call: VerifyCall) -> int:
    """Run the verify command: its report on stdout, or the error that stopped it on stderr; its
    exit status (see ``kitbuild verify --help``)."""
    try:
        from kitbuild.commands.verify import verify
        from kitbuild.formats import check_format, repo_folder
        from kitbuild.progress import progress_for
        from kitbuild.verify_report import verify_github, verify_json, verify_text

        fmt = "json" if call.as_json else check_format(call.format)
        with progress_for(fmt, call.quiet) as progress:
            report = verify(call.kit, jobs=call.jobs, progress=progress)
    except KitbuildError as exc:
        print_error(exc)
        return exc.exit_code
    if fmt == "json":
        text = verify_json(report)
    elif fmt == "github":
        text = verify_github(report, repo_folder(call.kit))
    else:
        text = verify_text(report)
    print_report(text)
    return report.exit_code


def print_report(text: str) -> None:
    """A report as the command line prints it, on stdout; an empty one (github format, nothing
    found) prints nothing at all."""
    if text:
        sys.stdout.write(text + "\n")


def print_error(exc: KitbuildError) -> None:
    """An error as the command line prints it: one paragraph on stderr."""
    sys.stderr.write(f"kitbuild: {exc.message}\n")
    sys.stderr.flush()


def main() -> None:
    """Console entry point.

    Once the command has finished and its output is flushed, the process ends at once with
    ``os._exit``: the interpreter's own teardown would free every object one by one, 60 ms
    after verifying a kit of 100,000 files, and nothing is left to clean up by then (every
    worker pool, scratch folder and file is closed by the command itself). An exception other
    than the command's exit, or output that cannot be flushed, takes the ordinary way out.
    """
    from kitbuild.memory import keep_tables_until_exit

    # The process ends without freeing anything (below): a command may leave its tables to it.
    keep_tables_until_exit()
    call = plain_verify(sys.argv[1:])
    try:
        if call is not None:
            code: object = run_verify(call)
        else:
            from kitbuild.cli import app

            app()
            code = 0  # pragma: no cover - typer always ends with SystemExit
    except SystemExit as exc:
        code = exc.code
    if not (code is None or isinstance(code, int)):
        raise SystemExit(code)  # a message: Python prints it and exits 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None  # a closed pipe: let Python report it as it would
    os._exit(code or 0)
