"""The command line: a thin typer layer over the core API (loaded by kitbuild.__main__, the
``kitbuild`` entry point).

Each command builds its inputs, calls one core function, prints its report and ends with
``raise typer.Exit(code)``. What a command raises is caught in one place (:class:`_Guarded`):
a :class:`~kitbuild.errors.KitbuildError` becomes one paragraph on stderr and the error's own
exit status; anything else is a bug in kitbuild, reported in one line with where to report it
(exit 3; ``--debug`` prints the traceback instead); Ctrl-C ends with 130, the shell's own
status for an interrupt. A command-line usage error is typer's, exit 2.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, TypeVar

import typer
import typer.core

from kitbuild.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, KitbuildError
from kitbuild.version import __version__

app = typer.Typer(
    name="kitbuild",
    help="Publish the records behind a benchmark result as a data kit a reader can verify.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# The package folder: an internal error names its place relative to the folder above it
# ("kitbuild/x.py:12"), never the absolute path of an install, which may name a person.
_PACKAGE = Path(__file__).resolve().parent
DEBUG_ENV = "KITBUILD_DEBUG"


def print_report(text: str) -> None:
    """A report as the command line prints it, on stdout; an empty one (github format, nothing
    found) prints nothing at all."""
    if text:
        sys.stdout.write(text + "\n")


def print_error(exc: KitbuildError) -> None:
    """An error as the command line prints it: one paragraph on stderr."""
    sys.stderr.write(f"kitbuild: {exc.message}\n")
    sys.stderr.flush()


def _place(exc: BaseException) -> str:
    """``kitbuild/x.py:123``: the deepest line of kitbuild's own code the exception passed, or ''."""
    place = ""
    for frame, line in traceback.walk_tb(exc.__traceback__):
        try:
            rel = Path(frame.f_code.co_filename).resolve().relative_to(_PACKAGE)
        except ValueError:
            continue  # a library's frame, or one outside the package
        place = f"kitbuild/{rel.as_posix()}:{line}"
    return place


def _where_to_report() -> str:
    """The project's issue tracker when its metadata names one; else the maintainers."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        urls = metadata("kitbuild").get_all("Project-URL") or []
    except PackageNotFoundError:  # run from a source tree that was never installed
        urls = []
    found = dict((label.strip().lower(), url.strip()) for label, _, url in (u.partition(",") for u in urls))
    for label in ("issues", "bug tracker", "bugs", "tracker"):
        if found.get(label):
            return f"please report it at {found[label]}"
    for label in ("source", "repository", "homepage"):
        if found.get(label, "").startswith("https://github.com/"):
            return f"please report it at {found[label].rstrip('/')}/issues"
    return "please report it to the kitbuild maintainers"


def internal_error_line(exc: BaseException) -> str:
    """The one line a bug in kitbuild prints: the exception's type and place, never its message
    (which may hold a private path from the bench), and what to do."""
    place = _place(exc)
    what = type(exc).__name__ + (f" at {place}" if place else "")
    return (
        f"kitbuild: internal error ({what}); {_where_to_report()} with the command you ran, "
        "or run again with --debug for the traceback"
    )


def os_error_line(exc: OSError) -> str:
    """What an error of the operating system prints: why, and what to check."""
    why = exc.strerror or type(exc).__name__
    code = errno.errorcode.get(exc.errno or 0)
    return (
        f"kitbuild: the system refused to read or write a file: {why}{f' ({code})' if code else ''}. "
        "Check the paths given (the kit, --out, the folder) and that the disk has room and may be written; "
        "--debug prints the traceback."
    )


def _debugging(ctx: Any) -> bool:
    params = ctx.find_root().params if ctx is not None else {}
    if "debug" in params:
        return bool(params["debug"])
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


class _Guarded(typer.core.TyperCommand):
    """A command whose failures end as the command line promises (README.md, 'Exit codes').

    Only the command's body runs in here: a usage error is found before it, and stays typer's.
    """

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, BrokenPipeError):
            # The command's own status; a reader that closed the pipe is typer's to end quietly.
            raise
        except KitbuildError as exc:
            print_error(exc)
            raise typer.Exit(exc.exit_code) from None
        except OSError as exc:
            # The machine refused: a disk full or read-only, a path too long, a folder that cannot
            # be made (under /proc), stdout that cannot be written. Not a bug, and said without
            # the file's name, which may be private.
            if _debugging(ctx):
                traceback.print_exception(type(exc), exc, exc.__traceback__)
            with contextlib.suppress(OSError):
                sys.stderr.write(os_error_line(exc) + "\n")
                sys.stderr.flush()
            raise typer.Exit(EXIT_USAGE) from None
        except Exception as exc:
            if _debugging(ctx):
                traceback.print_exception(type(exc), exc, exc.__traceback__)
            else:
                sys.stderr.write(internal_error_line(exc) + "\n")
            sys.stderr.flush()
            raise typer.Exit(EXIT_INTERNAL) from None
        except KeyboardInterrupt:
            sys.stderr.write("\nkitbuild: interrupted\n")
            sys.stderr.flush()
            raise typer.Exit(EXIT_INTERRUPTED) from None


_F = TypeVar("_F", bound=Callable[..., Any])

# Each Path below is given readable=False: typer would otherwise refuse a path it cannot read as
# a usage error, in its own box, before kitbuild can say which file and what to do.


def _command(name: str) -> Callable[[_F], _F]:
    return app.command(name, cls=_Guarded)


FORMAT_HELP = "text (for a person), json (one document, see 'kitbuild schema report') or github (one workflow annotation per finding)."
QUIET_HELP = "Show no progress bar (it is shown only on a terminal's stderr, and only with --format text)."


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kitbuild {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
    debug: bool = typer.Option(
        False, "--debug", envvar=DEBUG_ENV, help="On an internal error (exit 3), print the traceback instead of one line."
    ),
) -> None:
    """kitbuild: private bench records in, a publishable, verifiable data kit out."""


@_command("build")
def build_command(
    config: Path = typer.Argument(Path("kit.yaml"), help="The kit config.", readable=False),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the kit here instead of the config's 'out'.", readable=False),
    dry_run: bool = typer.Option(False, "--dry-run", help="Write nothing; print how often each rule would fire, and in which files."),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="With --dry-run: also print every firing, path:line:col and before → after (private text: for your terminal only)."
    ),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default: the number of cores)."),
    format: str = typer.Option("text", "--format", help=FORMAT_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Build the kit a kit.yaml describes."""
    from kitbuild.commands.build import build
    from kitbuild.errors import LeakError, UnsafeRewriteError
    from kitbuild.formats import check_format
    from kitbuild.progress import progress_for
    from kitbuild.report import build_text, dry_run_text

    fmt = check_format(format)
    if verbose and (not dry_run or fmt != "text"):
        # What --verbose prints is private (the paths and names the rules rewrite): never in a
        # build's log, a CI annotation or a JSON report, only on a dry run's own terminal.
        raise KitbuildError(
            "--verbose prints the private text each rule rewrites, so it goes only with --dry-run and the text format: "
            "run 'kitbuild build --dry-run --verbose'."
        )
    if verbose and os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
        # Every CI service sets CI; its log is often public, and always kept.
        raise KitbuildError("--verbose prints the private text each rule rewrites, and CI is set: a CI log would keep it. Run it on your own machine.")
    try:
        with progress_for(fmt, quiet) as progress:
            report = build(config, out, dry_run=dry_run, jobs=jobs, progress=progress)
    except (LeakError, UnsafeRewriteError) as exc:
        if fmt == "text":
            raise
        # What stopped the build is its finding, reported in the format asked for.
        from kitbuild.report import build_github, build_json, error_findings

        findings = error_findings(exc)
        print_report(build_json(None, str(config), dry_run=dry_run, findings=findings) if fmt == "json" else build_github(findings, _build_folder(config, out)))
        raise typer.Exit(exc.exit_code) from None
    if fmt != "text":
        from kitbuild.report import build_github, build_json

        findings = report.findings
        print_report(build_json(report, str(config), dry_run=dry_run, findings=findings) if fmt == "json" else build_github(findings, _build_folder(config, out)))
        raise typer.Exit(1 if findings else 0)
    if dry_run:
        typer.echo(dry_run_text(report, verbose))
        raise typer.Exit(1 if report.findings else 0)
    typer.echo(build_text(report))
    raise typer.Exit(0)


def _build_folder(config: Path, out: Optional[Path]) -> str:
    """Where the kit is written, relative to here, for annotations ('' when that cannot be told)."""
    from kitbuild.formats import repo_folder

    if out is not None:
        return repo_folder(out)
    try:
        from kitbuild.config import load_config

        return repo_folder(load_config(config).out)
    except KitbuildError:
        return ""


@_command("demo")
def demo_command(
    folder: Optional[Path] = typer.Argument(None, help="Where to write the synthetic bench and its kit (default: a new temporary folder).", readable=False),
) -> None:
    """Generate a synthetic private bench, build its kit, verify it and say where everything is."""
    from kitbuild.commands.demo import demo

    result = demo(folder)
    typer.echo(result.text)
    raise typer.Exit(result.exit_code)


@_command("init")
def init_command(
    sources: list[Path] = typer.Argument(..., help="The bench folders whose records the kit will publish.", readable=False),
    config: Path = typer.Option(Path("kit.yaml"), "--config", help="Where to write the starter config.", readable=False),
    force: bool = typer.Option(False, "--force", help="Replace an existing config."),
    date: Optional[str] = typer.Option(None, "--date", help="The kit's date, YYYY-MM-DD (default: today, UTC)."),
) -> None:
    """Scan bench folders and write a starter kit.yaml that proposes every rule they need."""
    from kitbuild.commands.init import init, init_text

    report = init(sources, config, force=force, date=date)
    typer.echo(init_text(report, str(config)))
    raise typer.Exit(0)


@_command("publish")
def publish_command(
    kit: Path = typer.Argument(..., help="The kit folder 'kitbuild build' wrote.", readable=False),
    format: str = typer.Option("tar.gz", "--format", help="tar.gz or zip."),
    out: Optional[Path] = typer.Option(None, "--out", help="The archive's path (default: <kit name>.tar.gz beside the kit folder).", readable=False),
) -> None:
    """Write a reproducible archive of a kit and its .sha256 file."""
    from kitbuild.commands.publish import publish, publish_text

    report = publish(kit, format, out)
    typer.echo(publish_text(report))
    raise typer.Exit(0)


@_command("schema")
def schema_command(
    name: str = typer.Argument(..., help="config, index, provenance, report or rule."),
) -> None:
    """Print one of the JSON Schemas kitbuild validates against."""
    from kitbuild.commands.schema import schema_bytes

    typer.echo(schema_bytes(name).decode("utf-8"), nl=False)
    raise typer.Exit(0)


@_command("rules")
def rules_command(
    markdown: bool = typer.Option(False, "--markdown", help="Print the reference as README.md shows it."),
) -> None:
    """List the built-in rules: sentence, parameters, example and samples."""
    from kitbuild.commands.rules import rules_markdown, rules_text

    typer.echo(rules_markdown() if markdown else rules_text() + "\n", nl=False)
    raise typer.Exit(0)


@_command("verify")
def verify_command(
    # A str, not a Path: a Path would fold the '//' of a URL.
    kit: str = typer.Argument(..., help="The kit: a folder, the .tar.gz or .zip archive 'kitbuild publish' wrote, or the https:// URL of either."),
    format: str = typer.Option("text", "--format", help=FORMAT_HELP),
    as_json: bool = typer.Option(False, "--json", help="The same as --format json."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default: the number of cores)."),
    digest: Optional[str] = typer.Option(None, "--digest", help="The kit digest printed in the paper or on the release page (sha256:...); a kit whose own digest differs is a finding."),
    timeout: float = typer.Option(30.0, "--timeout", min=0.1, help="Seconds each request may wait, for a kit read over HTTP."),
) -> None:
    """Check a kit in reverse, from its own files alone; exit 1 on any finding, 2 if KIT is not a kit."""
    from kitbuild.commands.verify import verify
    from kitbuild.formats import check_format, repo_folder
    from kitbuild.kitview import is_url
    from kitbuild.progress import progress_for
    from kitbuild.verify_report import verify_github, verify_json, verify_text

    fmt = check_format(format)
    if as_json and fmt not in ("text", "json"):  # 'text' is the default: --json alone says json
        raise KitbuildError(f"--json says json and --format says {fmt}; give one of them.")
    fmt = "json" if as_json else fmt
    with progress_for(fmt, quiet) as progress:
        report = verify(kit, jobs=jobs, progress=progress, digest=digest, timeout=timeout)
    if fmt == "json":
        print_report(verify_json(report))
    elif fmt == "github":
        print_report(verify_github(report, "" if is_url(kit) else repo_folder(kit)))
    else:
        print_report(verify_text(report))
    raise typer.Exit(report.exit_code)


@_command("check")
def check_command(
    config: Path = typer.Argument(Path("kit.yaml"), help="The kit config.", readable=False),
    format: str = typer.Option("text", "--format", help=FORMAT_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default: the number of cores)."),
) -> None:
    """Rebuild the kit, compare it byte for byte with the one at 'out', scan it for private strings and verify it."""
    from kitbuild.commands.check import check
    from kitbuild.errors import LeakError, UnsafeRewriteError
    from kitbuild.formats import annotations, check_format, repo_folder
    from kitbuild.progress import progress_for
    from kitbuild.commands.check import check_document, check_findings, check_text

    fmt = check_format(format)
    try:
        with progress_for(fmt, quiet) as progress:
            report = check(config, jobs=jobs, progress=progress)
    except (LeakError, UnsafeRewriteError) as exc:
        # The rebuild stopped: what stopped it is check's finding too.
        if fmt == "text":
            raise
        from kitbuild.report import error_findings
        from kitbuild.formats import json_text
        from kitbuild.commands.check import stopped_check_document

        findings = error_findings(exc)
        print_report(json_text(stopped_check_document(str(config), findings)) if fmt == "json" else annotations(findings))
        raise typer.Exit(exc.exit_code) from None
    if fmt == "json":
        from kitbuild.formats import json_text

        print_report(json_text(check_document(report)))
    elif fmt == "github":
        print_report(annotations(check_findings(report), repo_folder(report.out)))
    else:
        print_report(check_text(report))
    raise typer.Exit(report.exit_code)


@_command("explain")
def explain_command(
    code: Optional[str] = typer.Argument(None, help="A finding code, such as KB104; without one, every code is listed."),
) -> None:
    """Print what a finding code means (every code without one)."""
    from kitbuild.commands.explain import explain, explain_all

    typer.echo(explain(code) if code is not None else explain_all())
    raise typer.Exit(0)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """The ``kitbuild`` console entry point (and ``python -m kitbuild``).

    Once the command has finished and its output is flushed, the process ends at once with
    ``os._exit``: the interpreter's own teardown would free every object one by one, 60 ms
    after verifying a kit of 100,000 files, and nothing is left to clean up by then (every
    worker pool, scratch folder and file is closed by the command itself). A status that is a
    message, or output that cannot be flushed, takes the ordinary way out.
    """
    try:
        app(args=None if argv is None else list(argv))
        code: object = 0  # pragma: no cover - typer always ends with SystemExit
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        # Ctrl-C outside a command's body (while Python loads a module, or typer parses).
        sys.stderr.write("\nkitbuild: interrupted\n")
        code = EXIT_INTERRUPTED
    if not (code is None or isinstance(code, int)):
        raise SystemExit(code)  # a message: Python prints it and exits 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None  # a closed pipe: let Python report it as it would
    os._exit(code or 0)
