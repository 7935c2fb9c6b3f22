"""The entry point's verify without typer (kitbuild.entry): the calls it takes are the calls typer
makes of the same arguments, and they print and end alike."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from kitbuild import entry
from kitbuild.cli import app
from kitbuild.entry import VerifyCall, plain_verify

from .verify_kits import build_kit, copy_kit, edit_json


def typers_call(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> VerifyCall | None:
    """The call typer's verify command makes of ``args``, or None when typer refuses them."""
    calls: list[VerifyCall] = []

    def record(call: VerifyCall) -> int:
        calls.append(call)
        return 0

    with monkeypatch.context() as patch:
        patch.setattr(entry, "run_verify", record)
        result = CliRunner().invoke(app, args)
    assert len(calls) <= 1
    if not calls:
        assert result.exit_code != 0, result.output
        return None
    assert result.exit_code == 0, result.output
    return calls[0]


TAKEN = [
    (["verify", "kit"], VerifyCall(Path("kit"))),
    (["verify", "kit", "--jobs", "2"], VerifyCall(Path("kit"), jobs=2)),
    (["verify", "--jobs=16", "kit"], VerifyCall(Path("kit"), jobs=16)),
    (["verify", "kit", "--jobs", "007"], VerifyCall(Path("kit"), jobs=7)),
    (["verify", "a kit/with spaces.tar.gz", "--json"], VerifyCall(Path("a kit/with spaces.tar.gz"), as_json=True)),
    (["verify", "-q", "kit", "--format", "github"], VerifyCall(Path("kit"), format="github", quiet=True)),
    (["verify", "--quiet", "--format=json", "kit"], VerifyCall(Path("kit"), format="json", quiet=True)),
    (["verify", "kit", "--format", "yaml"], VerifyCall(Path("kit"), format="yaml")),  # refused by run_verify, as by typer's
    (["verify", "--json", "--format", "text", "--jobs", "1", "-q", "./k"], VerifyCall(Path("k"), "text", True, True, 1)),
]


@pytest.mark.parametrize(("args", "call"), TAKEN)
def test_the_plain_forms_are_taken_as_typer_takes_them(monkeypatch: pytest.MonkeyPatch, args: list[str], call: VerifyCall) -> None:
    assert plain_verify(args) == call
    assert typers_call(monkeypatch, args) == call


LEFT_TO_TYPER = [
    [],
    ["build", "kit.yaml"],
    ["--version"],
    ["verify"],
    ["verify", "--help"],
    ["verify", "kit", "--help"],
    ["verify", "a", "b"],
    ["verify", ""],
    ["verify", "-"],
    ["verify", "--", "kit"],
    ["verify", "kit", "--jobs"],
    ["verify", "kit", "--jobs", "0"],
    ["verify", "kit", "--jobs", "+2"],
    ["verify", "kit", "--jobs", "2.0"],
    ["verify", "kit", "--jobs", "٣"],
    ["verify", "kit", "--jobs=-1"],
    ["verify", "kit", "--format", "--json"],
    ["verify", "kit", "--json", "--json"],
    ["verify", "kit", "-q", "--quiet"],
    ["verify", "kit", "--jobs", "1", "--jobs", "2"],
    ["verify", "kit", "-qq"],
    ["verify", "kit", "--json=yes"],
    ["verify", "kit", "--form", "json"],
    ["verify", "kit", "--bogus"],
]


@pytest.mark.parametrize("args", LEFT_TO_TYPER)
def test_every_other_form_is_left_to_typer(args: list[str]) -> None:
    assert plain_verify(args) is None


# Pieces of a command line, right and wrong: a call is any of them, in any order, after verify.
_PIECES = [
    ["kit"], ["k2"], ["./k"], [""], ["-"], ["--"], ["--help"], ["-x"],
    ["--jobs", "2"], ["--jobs", "0"], ["--jobs", "-1"], ["--jobs", "x"], ["--jobs=3"], ["--jobs"],
    ["--format", "json"], ["--format", "yaml"], ["--format=github"], ["--format", "--json"], ["--format"],
    ["--json"], ["-q"], ["--quiet"], ["-qq"],
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=5).map(lambda pieces: ["verify", *(word for piece in pieces for word in piece)]))
def test_a_call_taken_is_the_one_typer_would_make(args: list[str]) -> None:
    # Whatever the pieces, a call the entry point takes without typer is exactly typer's.
    call = plain_verify(args)
    if call is not None:
        with pytest.MonkeyPatch.context() as monkeypatch:
            assert typers_call(monkeypatch, args) == call


# -- as a process ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("entry")
    build_kit(root)
    broken = copy_kit(root / "kit", root / "broken")
    edit_json(broken / "index.json", lambda index: index.update(title="edited"))
    return root


def kitbuild(*args: str, cwd: Path, importtime: bool = False) -> subprocess.CompletedProcess[bytes]:
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run([sys.executable, *flags, "-m", "kitbuild", *args], cwd=cwd, capture_output=True, timeout=120)


def test_a_plain_verify_does_not_import_typer(bench: Path) -> None:
    done = kitbuild("verify", "kit", cwd=bench, importtime=True)
    assert done.returncode == 0, done.stderr
    assert b"| typer" not in done.stderr
    # The same call in a form left to typer: the check above can tell the two ways apart.
    through_typer = kitbuild("verify", "--", "kit", cwd=bench, importtime=True)
    assert through_typer.returncode == 0, through_typer.stderr
    assert b"| typer" in through_typer.stderr


@pytest.mark.parametrize(
    ("args", "status"),
    [
        (["kit"], 0),
        (["kit", "--format", "json"], 0),
        (["kit", "--json", "-q", "--jobs", "1"], 0),
        (["kit", "--format", "github"], 0),
        (["broken"], 1),
        (["broken", "--format", "json"], 1),
        (["broken", "--format", "github"], 1),
        (["no-such-kit"], 2),
        (["kit", "--format", "yaml"], 2),
    ],
)
def test_both_ways_print_and_end_alike(bench: Path, args: list[str], status: int) -> None:
    # ``--`` before KIT hands the same call to typer.
    plain = kitbuild("verify", *args, cwd=bench)
    typed = kitbuild("verify", *args[1:], "--", args[0], cwd=bench)
    assert (plain.returncode, plain.stdout, plain.stderr) == (typed.returncode, typed.stdout, typed.stderr)
    assert plain.returncode == status, plain.stderr
