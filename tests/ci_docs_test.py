"""The CI snippets of docs/ci.md and the hooks of .pre-commit-hooks.yaml work as written.

Each YAML block parses; the GitHub Actions job and the pre-commit hooks call only commands and
options the command line has (read from the typer app, so a renamed option fails here), and pin
the version this tree is.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main
import yaml

from kitbuild.cli import app
from kitbuild.version import __version__

ROOT = Path(__file__).resolve().parents[1]
CI_DOC = ROOT / "docs" / "ci.md"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
FORMATS = {"text", "json", "github"}


def _yaml_blocks(text: str) -> list[Any]:
    return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)]


def _blocks() -> dict[str, Any]:
    found = {}
    for block in _yaml_blocks(CI_DOC.read_text(encoding="utf-8")):
        found["actions" if "jobs" in block else "pre-commit" if "repos" in block else "other"] = block
    return found


def check_command(words: list[str]) -> None:
    """Fail unless ``kitbuild WORDS...`` names a command and options the command line parses."""
    assert words[0] == "kitbuild", words
    group: Any = typer.main.get_command(app)  # a click group (typer may bundle its own click)
    name, args = words[1], words[2:]
    assert name in group.commands, f"no command {name!r}: {words}"
    command = group.commands[name]
    # Parsing only (an unknown option or a missing argument raises); the command does not run.
    with command.make_context(name, list(args), resilient_parsing=False) as ctx:
        if "format" in ctx.params:
            assert ctx.params["format"] in FORMATS | {"tar.gz", "zip"}, words


def _kitbuild_lines(script: str) -> list[list[str]]:
    commands = []
    for line in script.splitlines():
        for part in re.split(r"&&|;", line):
            words = shlex.split(part, comments=True)
            if words and words[0] == "kitbuild":
                commands.append(words)
    return commands


def test_the_doc_holds_one_actions_job_and_one_pre_commit_config():
    blocks = _blocks()
    assert set(blocks) == {"actions", "pre-commit"}


def test_the_actions_job_installs_this_version_and_calls_real_commands():
    job = _blocks()["actions"]
    steps = [step for j in job["jobs"].values() for step in j["steps"]]
    runs = [step["run"] for step in steps if "run" in step]
    assert runs[0] == 'python -m pip install "$KITBUILD"'
    assert re.fullmatch(r"kitbuild @ git\+https://github\.com/[A-Za-z0-9-]+/kitbuild@v" + re.escape(__version__), job["env"]["KITBUILD"])
    commands = [words for run in runs for words in _kitbuild_lines(run)]
    assert [words[1] for words in commands] == ["check", "verify"]
    for words in commands:
        check_command(words)


def test_the_hooks_file_is_what_pre_commit_reads_and_each_hook_runs_a_real_command():
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert isinstance(hooks, list) and [h["id"] for h in hooks] == ["kitbuild-check", "kitbuild-verify"]
    for hook in hooks:
        # pre-commit requires these; 'language: python' installs this repository as a package.
        assert {"id", "name", "entry", "language"} <= set(hook), hook
        assert hook["language"] == "python"
        # A kit is checked whole: no file names are appended to the command.
        assert hook["pass_filenames"] is False and hook["always_run"] is True
        check_command(shlex.split(hook["entry"]) + list(hook.get("args", [])))


def test_the_pre_commit_config_names_the_hooks_there_are():
    config = _blocks()["pre-commit"]
    ids = {h["id"] for h in yaml.safe_load(HOOKS.read_text(encoding="utf-8"))}
    [repo] = config["repos"]
    assert repo["rev"] == f"v{__version__}"
    for hook in repo["hooks"]:
        assert hook["id"] in ids
        entry = next(h["entry"] for h in yaml.safe_load(HOOKS.read_text(encoding="utf-8")) if h["id"] == hook["id"])
        check_command(shlex.split(entry) + list(hook.get("args", [])))


@pytest.mark.parametrize("words", [["kitbuild", "verfy", "kit"], ["kitbuild", "verify", "kit", "--formt", "github"], ["kitbuild", "check", "--format", "sarif"]])
def test_a_wrong_command_in_a_snippet_would_fail(words):
    with pytest.raises(Exception) as err:
        check_command(words)
    # An assertion here, or click's own usage error (NoSuchOption is one).
    assert isinstance(err.value, AssertionError) or any(c.__name__ == "UsageError" for c in type(err.value).__mro__)
