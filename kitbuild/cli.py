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


def main() -> None:
    """Console entry point."""
    app()
