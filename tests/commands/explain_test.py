"""kitbuild explain [CODE]: a finding code's documentation, from the registry the reports use (issue 6)."""

from __future__ import annotations

import pytest

from kitbuild.commands.explain import explain, explain_all
from kitbuild.errors import KitbuildError
from kitbuild.findings import CODES


def test_one_code(cli) -> None:
    result = cli("explain", "KB104")
    assert (result.exit_code, result.stderr) == (0, "")
    assert result.stdout == (
        "KB104: A file's sha256 differs from index.json's.\n"
        "group: Completeness (KB1xx)\n"
        "reported by: kitbuild verify (and kitbuild check, which runs it)\n"
    )


def test_a_build_code_names_build(cli) -> None:
    assert cli("explain", "kb902").stdout.splitlines()[1:] == ["group: kitbuild build (KB9xx)", "reported by: kitbuild build (and kitbuild check, which rebuilds)"]


def test_an_unknown_code_exits_2_and_says_how_to_list_them(cli) -> None:
    result = cli("explain", "KB999")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "kitbuild: no finding code 'KB999'; run 'kitbuild explain' with no code to list every code.\n"


def test_no_code_lists_every_code_once(cli) -> None:
    result = cli("explain")
    assert result.exit_code == 0
    listed = [line.split()[0] for line in result.stdout.splitlines() if line.startswith("  KB")]
    assert listed == list(CODES)
    assert "  KB104  A file's sha256 differs from index.json's." in result.stdout.splitlines()
    assert result.stdout.startswith("Schema (KB0xx)\n  KB001  ")


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_code_explains_itself(code: str) -> None:
    assert explain(code).startswith(f"{code}: {CODES[code]}\n")


def test_core_raises_for_an_unknown_code() -> None:
    with pytest.raises(KitbuildError):
        explain("nope")
    assert explain_all().count("\n  KB") == len(CODES)
