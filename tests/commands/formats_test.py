"""--format json and --format github for build, verify and check (issue 6), against golden outputs.

Goldens live in tests/golden/reports/; the bench's own folder is written there as <bench>. After an
intended change, regenerate them and read the diff:

    KITBUILD_REGOLD=1 python -m pytest tests/commands/formats_test.py
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest
import yaml

from kitbuild import build
from kitbuild.findings import Finding
from kitbuild.formats import annotation, escape_data, escape_property
from kitbuild.resources import schema_path

from kittest import USER_REGEX_RULE, make_files, write_kit, write_sample_bench

from .verify_kits import build_kit

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "reports"
LS = "learned-sparse-2026-11-07"
NOTES = f"{LS}/notes.txt"
VALIDATOR = jsonschema.Draft202012Validator(orjson.loads(schema_path("report").read_bytes()))


def golden(name: str, text: str, root: Path) -> None:
    """Compare ``text`` (the bench folder written as <bench>) with tests/golden/reports/``name``."""
    text = text.replace(str(root.resolve()), "<bench>")
    path = GOLDEN / name
    if os.environ.get("KITBUILD_REGOLD"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


def valid(out: str) -> dict[str, Any]:
    document = orjson.loads(out)
    VALIDATOR.validate(document)
    return document


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_kit(tmp_path_factory.mktemp("bench"))


@pytest.fixture
def broken(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the verify kit at ./kit with an edited record, an e-mail address and an unlisted file."""
    kit = shutil.copytree(built, tmp_path / "kit")
    (kit / NOTES).write_bytes(b"scored in the night\r\nwrote to ada@lab.example.org\n")
    (kit / "a,b:c%.txt").write_bytes(b"x\n")
    monkeypatch.chdir(tmp_path)
    return kit


# -- verify -------------------------------------------------------------------------------------


def test_verify_json_golden(cli, broken: Path) -> None:
    result = cli("verify", "kit", "--format", "json")
    assert result.exit_code == 1 and result.stderr == ""
    document = valid(result.stdout)
    assert document["command"] == "verify" and document["ok"] is False
    assert {f["code"] for f in document["findings"]} == {"KB101", "KB103", "KB104", "KB502"}
    golden("verify.json", result.stdout, broken.parent)


def test_verify_json_alias(cli, broken: Path) -> None:
    assert cli("verify", "kit", "--json").stdout == cli("verify", "kit", "--format", "json").stdout


def test_verify_github_golden(cli, broken: Path) -> None:
    result = cli("verify", "kit", "--format", "github")
    assert result.exit_code == 1 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert all(line.startswith("::error file=kit/") for line in lines)
    # ',' ':' and '%' in a property are escaped, or GitHub would end the file name there.
    assert "::error file=kit/a%2Cb%3Ac%25.txt,title=KB101::is in the kit but not in index.json" in lines
    golden("verify.github", result.stdout, broken.parent)


def test_a_clean_kit_prints_nothing_in_github_format(cli, built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(built.parent)
    result = cli("verify", "kit", "--format", "github")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    document = valid(cli("verify", "kit", "--format", "json").stdout)
    assert document["ok"] is True and document["exit_code"] == 0 and document["findings"] == []


def test_an_unknown_format_exits_2(cli, built: Path) -> None:
    result = cli("verify", str(built), "--format", "xml")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == "kitbuild: --format: 'xml' is not a report format; choose one of: text, json, github.\n"


# -- check --------------------------------------------------------------------------------------


@pytest.fixture
def sample(bench: Path) -> Path:
    write_sample_bench(bench)
    build("kit.yaml", jobs=1)
    return bench


def test_check_json_and_github_golden(cli, sample: Path) -> None:
    (sample / "kit" / LS / "notes/empty.txt").write_bytes(b"not empty any more\n")
    result = cli("check", "--format", "json")
    assert result.exit_code == 1 and result.stderr == ""
    document = valid(result.stdout)
    assert document["command"] == "check" and document["verify"]["command"] == "verify"
    assert [f["code"] for f in document["findings"]] == ["KB801", "KB103", "KB104"]
    golden("check.json", result.stdout, sample)
    result = cli("check", "--format", "github")
    assert result.exit_code == 1 and result.stderr == ""
    golden("check.github", result.stdout, sample)


def test_check_passing_prints_nothing_in_github_format(cli, sample: Path) -> None:
    result = cli("check", "--format", "github")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")
    assert valid(cli("check", "--format", "json").stdout)["ok"] is True


# -- build --------------------------------------------------------------------------------------


def test_build_json_golden(cli, bench: Path) -> None:
    write_sample_bench(bench)
    result = cli("build", "--format", "json", "--jobs", "1")
    assert result.exit_code == 0 and result.stderr == ""
    document = valid(result.stdout)
    assert document["written"] is True and document["findings"] == []
    golden("build.json", result.stdout, bench)
    result = cli("build", "--format", "github", "--jobs", "1")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


def _without_log_exclude(bench: Path) -> None:
    config = yaml.safe_load((bench / "kit.yaml").read_text())
    del config["sources"][0]["exclude"]
    (bench / "kit.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def test_build_stopped_by_the_leak_gate_json_and_github_golden(cli, bench: Path) -> None:
    write_sample_bench(bench)
    _without_log_exclude(bench)  # the log names the box and a home folder
    result = cli("build", "--format", "json", "--jobs", "1")
    assert result.exit_code == 1 and result.stderr == ""
    document = valid(result.stdout)
    assert document["written"] is False and document["kit"] is None
    assert sorted(f["code"] for f in document["findings"]) == ["KB901", "KB902"]
    assert str(bench) not in result.stdout and "/home/ada" not in result.stdout
    golden("build-leak.json", result.stdout, bench)
    result = cli("build", "--format", "github", "--jobs", "1")
    assert result.exit_code == 1 and result.stderr == ""
    golden("build-leak.github", result.stdout, bench)
    assert not (bench / "kit").exists()


def test_build_dry_run_json_counts_what_would_fire(cli, bench: Path) -> None:
    write_sample_bench(bench)
    _without_log_exclude(bench)
    document = valid(cli("build", "--dry-run", "--format", "json", "--jobs", "1").stdout)
    assert document["dry_run"] is True and document["written"] is False
    assert sorted(f["code"] for f in document["findings"]) == ["KB901", "KB902"]
    assert [r["name"] for r in document["rules"]] == ["record-path-to-kit-path", "box-name-to-role", "digest-withheld"]


def test_an_original_digest_is_kb903(cli, bench: Path) -> None:
    lock = b'{"route": "gpu-b17"}\n'
    make_files(bench, {"src": {"lock.json": lock, "reading.json": '{"lock": "%s"}\n' % hashlib.sha256(lock).hexdigest()}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "box-name-to-role", "with": {"names": {"gpu-b17": "desktop"}}}])
    result = cli("build", "--format", "github", "--jobs", "1")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines and all(line.startswith("::error file=kit/") for line in lines)
    # The digest is withheld by no rule: the gate names it (KB903), and, as verify would, says it
    # checks against nothing here (KB402).
    kb903 = [line for line in lines if ",title=KB903::column " in line]
    assert kb903 and all(line.endswith(", which a rule rewrote") and "the original sha256 of run/" in line for line in kb903)
    assert {line.split("title=")[1].split("::")[0] for line in lines} == {"KB402", "KB903"}


@pytest.mark.parametrize(
    "form",
    [
        lambda d: '{"integrity": "sha256-%s"}\n' % base64.b64encode(d).decode(),  # Subresource Integrity, npm, Nix
        lambda d: "run/lock.json,sha256=%s,21\n" % base64.urlsafe_b64encode(d).decode().rstrip("="),  # a wheel's RECORD
    ],
    ids=["sri", "record"],
)
def test_an_original_digest_in_base64_stops_the_build_with_digest_withheld(cli, bench: Path, form) -> None:
    # The rule rewrites the hex digests it withholds; a base64 one it cannot, so the gate names it.
    lock = b'{"route": "gpu-b17"}\n'
    make_files(bench, {"src": {"lock.json": lock, "manifest.txt": form(hashlib.sha256(lock).digest())}})
    rules = [{"use": "box-name-to-role", "with": {"names": {"gpu-b17": "desktop"}}}, {"use": "digest-withheld", "with": {"placeholder": "withheld-1"}}]
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=rules)
    result = cli("build", "--jobs", "1")
    assert result.exit_code == 1 and not (bench / "kit").exists()
    assert "KB903 run/manifest.txt:1: column " in result.stderr
    assert "the original sha256 of run/lock.json, which a rule rewrote, base64-encoded" in result.stderr
    assert "never one in base64" in result.stderr




def test_an_unsafe_rewrite_is_kb904(cli, bench: Path) -> None:
    make_files(bench, {"src": {"cfg.yaml": "a: 1\nhost: box-7\n"}, "host-to-label.yaml": USER_REGEX_RULE})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "./host-to-label.yaml"}])
    result = cli("build", "--format", "github")
    assert result.exit_code == 1 and result.stderr == ""
    assert result.stdout == (
        "::error file=kit/run/cfg.yaml,line=2,title=KB904::column 7: a rule's replacement cannot be written safely here: "
        "the replacement holds a character that YAML would read as syntax. Change the rule's replacement so it needs no escaping in this format.\n"
    )
    document = valid(cli("build", "--format", "json").stdout)
    assert document["findings"][0]["code"] == "KB904"


def test_a_config_error_goes_to_stderr_in_every_format(cli, bench: Path) -> None:
    for fmt in ("json", "github"):
        result = cli("build", "--format", fmt)
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr.startswith("kitbuild: kit.yaml")


# -- escaping -----------------------------------------------------------------------------------


def test_workflow_command_escaping() -> None:
    assert escape_data("100% done\r\nnext") == "100%25 done%0D%0Anext"
    assert escape_property("a,b:c%\nd") == "a%2Cb%3Ac%25%0Ad"
    finding = Finding("KB104", "x,y:z.json", "has sha256 ab…: 50% off\nsecond line", line=3)
    assert annotation(finding) == "::error file=x%2Cy%3Az.json,line=3,title=KB104::has sha256 ab…: 50% off%0Asecond line".replace("50% off", "50%25 off")
    assert annotation(Finding("KB201", "SHA256SUMS", "is missing"), "kits/k") == "::error file=kits/k/SHA256SUMS,title=KB201::is missing"


def test_findings_on_one_line_are_listed_in_column_order() -> None:
    # The column is part of the message: as text, 'column 125' sorts before 'column 18'.
    findings = [Finding("KB901", "r/x.json", f"column {c}: a name", line=1) for c in (125, 18, 9)]
    findings.append(Finding("KB901", "r/x.json", "a name in its own words", line=1))
    assert [f.message for f in sorted(findings, key=Finding.sort_key)] == ["a name in its own words", "column 9: a name", "column 18: a name", "column 125: a name"]
