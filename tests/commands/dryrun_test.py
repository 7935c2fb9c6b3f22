"""``kitbuild build --dry-run``: a summary on one screen, and ``--verbose`` for every firing.

The summary names kit paths and rule ids only, as a build's report does; ``--verbose`` prints the
private text each rule rewrites, on the researcher's own terminal only: never with a real build,
never in a JSON report or a CI annotation, never into a file.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kitbuild.config import load_config
from kitbuild.report import SUMMARY_FILES
from kittest import SAMPLE_AS as L
from kittest import SAMPLE_DRY_RUN, make_files, write_kit, write_sample_bench

# The demo's dry run must fit a terminal's screen (issue 40: "one screen for the demo").
SCREEN_LINES = 40


def _private(bench: Path) -> list[str]:
    """What the config calls private: the source's paths, the map's keys, the machine names."""
    return sorted(load_config(bench / "kit.yaml").private_strings())


def test_the_summary_counts_per_rule_and_per_file_and_shows_nothing_private(bench, cli):
    write_sample_bench(bench)
    result = cli("build", "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "\n".join([
        *SAMPLE_DRY_RUN,
        "the build would pass: 9 record files, and the kit would verify clean",
        "each firing with its line, before and after: kitbuild build --dry-run --verbose (it shows private text)",
        "",
    ])
    assert sorted(os.listdir(bench)) == ["kit.yaml", "runs"]
    shown = result.stdout + result.stderr
    assert [p for p in _private(bench) if p.lower() in shown.lower()] == []


def test_a_build_prints_nothing_private(bench, cli):
    write_sample_bench(bench)
    result = cli("build")
    assert result.exit_code == 0, result.stderr
    shown = result.stdout + result.stderr
    assert [p for p in _private(bench) if p.lower() in shown.lower()] == []
    assert str(bench / "kit") in result.stdout  # where the kit went: the researcher's own folder


def test_verbose_shows_the_private_text_and_writes_it_nowhere(bench, cli):
    write_sample_bench(bench)
    before = {p: p.stat().st_mtime_ns for p in bench.rglob("*")}
    result = cli("build", "--dry-run", "--verbose")
    assert result.exit_code == 0, result.stderr
    assert str(bench / "runs" / "ls-2026-11-07") in result.stdout  # the "before" of a firing
    assert {p: p.stat().st_mtime_ns for p in bench.rglob("*")} == before


@pytest.mark.parametrize("args", [["--verbose"], ["-v"], ["--dry-run", "--verbose", "--format", "json"], ["--dry-run", "-v", "--format", "github"]])
def test_verbose_goes_only_with_a_text_dry_run(bench, cli, args):
    write_sample_bench(bench)
    result = cli("build", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        "kitbuild: --verbose prints the private text each rule rewrites, so it goes only with --dry-run and the text format: "
        "run 'kitbuild build --dry-run --verbose'.\n"
    )
    assert sorted(os.listdir(bench)) == ["kit.yaml", "runs"]


@pytest.mark.parametrize("ci", ["true", "1", "yes"])
def test_verbose_is_refused_where_ci_is_set(bench, cli, monkeypatch, ci):
    # GitHub Actions, GitLab CI and the others set CI: their logs are kept, and often public.
    monkeypatch.setenv("CI", ci)
    write_sample_bench(bench)
    result = cli("build", "--dry-run", "--verbose")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "kitbuild: --verbose prints the private text each rule rewrites, and CI is set: a CI log would keep it. Run it on your own machine.\n"
    )
    monkeypatch.setenv("CI", "false")
    assert cli("build", "--dry-run", "--verbose").exit_code == 0


def test_the_summary_lists_at_most_a_screen_of_files(bench, cli):
    n = SUMMARY_FILES + 5
    make_files(bench, {"src": {f"r{i:02d}.txt": "on gpu-b17\n" for i in range(n)}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "box-name-to-role", "with": {"names": {"gpu-b17": "desktop"}}}])
    result = cli("build", "--dry-run")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[lines.index("files the rules would change (firings per rule):") + SUMMARY_FILES + 1] == "  … and 5 more files (--verbose lists them all)"
    assert "run/r00.txt: box-name-to-role 1" in result.stdout and "run/r29.txt" not in result.stdout
    assert cli("build", "--dry-run", "-v").stdout.count("gpu-b17 → desktop") == n


def test_the_demos_dry_run_fits_one_screen(tmp_path, cli, monkeypatch):
    from kitbuild.synthetic import generate_bench

    config = generate_bench(tmp_path / "demo")
    monkeypatch.chdir(config.parent)
    result = cli("build", "--dry-run", "--jobs", "1")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) <= SCREEN_LINES, result.stdout
    assert lines[-2] == "the build would pass: 30 record files, and the kit would verify clean"
    assert str(tmp_path) not in result.stdout
