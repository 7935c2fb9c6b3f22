"""The command line: a thin typer layer over the core API.

Each command builds its inputs, calls one core function, prints its report and ends with
``raise typer.Exit(code)``. Only :class:`~kitbuild.errors.KitbuildError` is caught: it becomes one
paragraph on stderr and the error's documented exit status. The process starts in
:mod:`kitbuild.entry`, which hands this app every call but the plain forms of verify.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn, Optional

import typer

from kitbuild.entry import print_error, print_report
from kitbuild.errors import KitbuildError
from kitbuild.version import __version__

app = typer.Typer(
    name="kitbuild",
    help="Publish the records behind a benchmark result as a data kit a reader can verify.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def fail(exc: KitbuildError) -> NoReturn:
    """Print the error as one paragraph on stderr and exit with its status."""
    print_error(exc)
    raise typer.Exit(exc.exit_code)


FORMAT_HELP = "text (for a person), json (one document, see 'kitbuild schema report') or github (one workflow annotation per finding)."
QUIET_HELP = "Show no progress bar (it is shown only on a terminal's stderr, and only with --format text)."


def _format(fmt: str) -> str:
    from kitbuild.formats import check_format

    try:
        return check_format(fmt)
    except KitbuildError as exc:
        fail(exc)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kitbuild {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """kitbuild: private bench records in, a publishable, verifiable data kit out."""


@app.command("build")
def build_command(
    config: Path = typer.Argument(Path("kit.yaml"), help="The kit config."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the kit here instead of the config's 'out'."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Write nothing; print what each rule would change, file by file."),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default: the number of cores)."),
    format: str = typer.Option("text", "--format", help=FORMAT_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
) -> None:
    """Build the kit a kit.yaml describes."""
    from kitbuild.commands.build import build
    from kitbuild.errors import LeakError, UnsafeRewriteError
    from kitbuild.progress import progress_for
    from kitbuild.report import build_text, dry_run_text

    fmt = _format(format)
    try:
        with progress_for(fmt, quiet) as progress:
            report = build(config, out, dry_run=dry_run, jobs=jobs, progress=progress)
    except (LeakError, UnsafeRewriteError) as exc:
        if fmt == "text":
            fail(exc)
        from kitbuild.report import build_github, build_json, error_findings

        findings = error_findings(exc)
        print_report(build_json(None, str(config), dry_run=dry_run, findings=findings) if fmt == "json" else build_github(findings, _build_folder(config, out)))
        raise typer.Exit(exc.exit_code)
    except KitbuildError as exc:
        fail(exc)
    if fmt != "text":
        from kitbuild.report import build_github, build_json

        findings = report.findings
        print_report(build_json(report, str(config), dry_run=dry_run, findings=findings) if fmt == "json" else build_github(findings, _build_folder(config, out)))
        raise typer.Exit(1 if findings else 0)
    if dry_run:
        typer.echo(dry_run_text(report))
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


@app.command("demo")
def demo_command(
    folder: Optional[Path] = typer.Argument(None, help="Where to write the synthetic bench and its kit (default: a new temporary folder)."),
) -> None:
    """Generate a synthetic private bench, build its kit, verify it and say where everything is."""
    from kitbuild.commands.demo import demo

    try:
        result = demo(folder)
    except KitbuildError as exc:
        fail(exc)
    typer.echo(result.text)
    raise typer.Exit(result.exit_code)


@app.command("init")
def init_command(
    sources: list[Path] = typer.Argument(..., help="The bench folders whose records the kit will publish."),
    config: Path = typer.Option(Path("kit.yaml"), "--config", help="Where to write the starter config."),
    force: bool = typer.Option(False, "--force", help="Replace an existing config."),
    date: Optional[str] = typer.Option(None, "--date", help="The kit's date, YYYY-MM-DD (default: today, UTC)."),
) -> None:
    """Scan bench folders and write a starter kit.yaml that proposes every rule they need."""
    from kitbuild.commands.init import init, init_text

    try:
        report = init(sources, config, force=force, date=date)
    except KitbuildError as exc:
        fail(exc)
    typer.echo(init_text(report, str(config)))
    raise typer.Exit(0)


@app.command("publish")
def publish_command(
    kit: Path = typer.Argument(..., help="The kit folder 'kitbuild build' wrote."),
    format: str = typer.Option("tar.gz", "--format", help="tar.gz or zip."),
    out: Optional[Path] = typer.Option(None, "--out", help="The archive's path (default: <kit name>.tar.gz beside the kit folder)."),
) -> None:
    """Write a reproducible archive of a kit and its .sha256 file."""
    from kitbuild.commands.publish import publish, publish_text

    try:
        report = publish(kit, format, out)
    except KitbuildError as exc:
        fail(exc)
    typer.echo(publish_text(report))
    raise typer.Exit(0)


@app.command("schema")
def schema_command(
    name: str = typer.Argument(..., help="config, index, provenance, report or rule."),
) -> None:
    """Print one of the JSON Schemas kitbuild validates against."""
    from kitbuild.commands.schema import schema_bytes

    try:
        data = schema_bytes(name)
    except KitbuildError as exc:
        fail(exc)
    typer.echo(data.decode("utf-8"), nl=False)
    raise typer.Exit(0)


@app.command("rules")
def rules_command(
    markdown: bool = typer.Option(False, "--markdown", help="Print the reference as README.md shows it."),
) -> None:
    """List the built-in rules: sentence, parameters, example and samples."""
    from kitbuild.commands.rules import rules_markdown, rules_text

    try:
        text = rules_markdown() if markdown else rules_text() + "\n"
    except KitbuildError as exc:
        fail(exc)
    typer.echo(text, nl=False)
    raise typer.Exit(0)


@app.command("verify")
def verify_command(
    kit: Path = typer.Argument(..., help="The kit: a folder, or the .tar.gz or .zip archive 'kitbuild publish' wrote."),
    format: str = typer.Option("text", "--format", help=FORMAT_HELP),
    as_json: bool = typer.Option(False, "--json", help="The same as --format json."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default: the number of cores)."),
    digest: Optional[str] = typer.Option(None, "--digest", help="The kit digest printed in the paper or on the release page (sha256:...); a kit whose own digest differs is a finding."),
) -> None:
    """Check a kit in reverse, from its own files alone; exit 1 on any finding, 2 if KIT is not a kit."""
    # The body is kitbuild.entry's, which also runs the plain forms of this call without typer.
    from kitbuild.entry import VerifyCall, run_verify

    raise typer.Exit(run_verify(VerifyCall(kit, format, as_json, quiet, jobs, digest)))


@app.command("check")
def check_command(
    config: Path = typer.Argument(Path("kit.yaml"), help="The kit config."),
    format: str = typer.Option("text", "--format", help=FORMAT_HELP),
    quiet: bool = typer.Option(False, "--quiet", "-q", help=QUIET_HELP),
    jobs: Optional[int] = typer.Option(None, "--jobs", min=1, help="Worker processes (default: the number of cores)."),
) -> None:
    """Rebuild the kit, compare it byte for byte with the one at 'out', scan it for private strings and verify it."""
    from kitbuild.commands.check import check
    from kitbuild.errors import LeakError, UnsafeRewriteError
    from kitbuild.formats import annotations, repo_folder
    from kitbuild.progress import progress_for
    from kitbuild.verify_report import check_document, check_findings, check_text

    fmt = _format(format)
    try:
        with progress_for(fmt, quiet) as progress:
            report = check(config, jobs=jobs, progress=progress)
    except (LeakError, UnsafeRewriteError) as exc:
        # The rebuild stopped: what stopped it is check's finding too.
        if fmt == "text":
            fail(exc)
        from kitbuild.report import error_findings
        from kitbuild.formats import json_text
        from kitbuild.verify_report import stopped_check_document

        findings = error_findings(exc)
        print_report(json_text(stopped_check_document(str(config), findings)) if fmt == "json" else annotations(findings))
        raise typer.Exit(exc.exit_code)
    except KitbuildError as exc:
        fail(exc)
    if fmt == "json":
        from kitbuild.formats import json_text

        print_report(json_text(check_document(report)))
    elif fmt == "github":
        print_report(annotations(check_findings(report), repo_folder(report.out)))
    else:
        print_report(check_text(report))
    raise typer.Exit(report.exit_code)


@app.command("explain")
def explain_command(
    code: Optional[str] = typer.Argument(None, help="A finding code, such as KB104; without one, every code is listed."),
) -> None:
    """Print what a finding code means (every code without one)."""
    from kitbuild.commands.explain import explain, explain_all

    try:
        text = explain(code) if code is not None else explain_all()
    except KitbuildError as exc:
        fail(exc)
    typer.echo(text)
    raise typer.Exit(0)

