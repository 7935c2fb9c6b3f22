"""The command line: a thin typer layer over the core API.

Each command builds its inputs, calls one core function, prints its report and ends with
``raise typer.Exit(code)``. Only :class:`~kitbuild.errors.KitbuildError` is caught: it becomes one
paragraph on stderr and the error's documented exit status.
"""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn, Optional

import typer

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
    typer.echo(f"kitbuild: {exc.message}", err=True)
    raise typer.Exit(exc.exit_code)


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
) -> None:
    """Build the kit a kit.yaml describes."""
    from kitbuild.commands.build import build
    from kitbuild.report import build_text, dry_run_text

    try:
        report = build(config, out, dry_run=dry_run, jobs=jobs)
    except KitbuildError as exc:
        fail(exc)
    if dry_run:
        typer.echo(dry_run_text(report))
        raise typer.Exit(1 if report.leaks else 0)
    typer.echo(build_text(report))
    raise typer.Exit(0)


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
    kit: Path = typer.Argument(..., help="The kit folder to check."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document instead of text."),
) -> None:
    """Check a kit in reverse, from its own files alone; exit 1 on any finding, 2 if KIT is not a kit."""
    from kitbuild.commands.verify import verify
    from kitbuild.verify_report import verify_json, verify_text

    try:
        report = verify(kit)
    except KitbuildError as exc:
        fail(exc)
    typer.echo(verify_json(report) if as_json else verify_text(report))
    raise typer.Exit(report.exit_code)


@app.command("check")
def check_command(
    config: Path = typer.Argument(Path("kit.yaml"), help="The kit config."),
) -> None:
    """Rebuild the kit, compare it byte for byte with the one at 'out', scan it for private strings and verify it."""
    from kitbuild.commands.check import check
    from kitbuild.verify_report import check_text

    try:
        report = check(config)
    except KitbuildError as exc:
        fail(exc)
    typer.echo(check_text(report))
    raise typer.Exit(report.exit_code)


def main() -> None:
    """Console entry point."""
    app()
