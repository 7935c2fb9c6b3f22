"""kitbuild verify: a kit checked in reverse (issue 3)."""

from __future__ import annotations

import builtins
import bz2
import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Callable

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner
from .verify_kits import EXTERNAL, PLACEHOLDER, build_kit, copy_kit, edit_json, refresh

from kitbuild import compressed
from kitbuild.cli import app
from kitbuild.commands import verify as verify_module
from kitbuild.commands.verify import verify
from kitbuild.checks import check, check_sums, plan_for
from kitbuild.commands.verify import observe_kit
from kitbuild.kitdocs import read_docs
from kitbuild.progress import SILENT
from kitbuild.kitdocs import kit_digest
from kitbuild.lines import locate
from kitbuild.observe import Observer, Plan
from kitbuild.findings import CODES, Finding, findings_markdown
from kitbuild.kitfs import FolderKit, MemberError, NotAKitError, refusal
from kitbuild.verify_report import verify_json, verify_text

ROOT = Path(__file__).resolve().parents[2]
LS = "learned-sparse-2026-11-07"
LOCK = f"{LS}/full-s1/run/lock.json"
ROWS = f"{LS}/full-s1/run/rows.ndjson"
READING = f"{LS}/full-s1/score/reading.json"
NOTES = f"{LS}/notes.txt"
BENIGN_TEMPLATE = "# {{ title }}\n\n{% for f in files %}- {{ f.path }}\n{% endfor %}"
HOSTILE_TEMPLATE = "# {{ title }}\n\n{{ ''.__class__.__mro__[1].__subclasses__() }}\n"


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small bench's kit, built once for the module; tests break copies of it."""
    return build_kit(tmp_path_factory.mktemp("bench"))


@pytest.fixture(scope="module")
def template_kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same kit with a README template that travels with it."""
    return build_kit(tmp_path_factory.mktemp("bench-template"), template=BENIGN_TEMPLATE)


@pytest.fixture
def copy(kit: Path, tmp_path: Path) -> Path:
    return copy_kit(kit, tmp_path / "kit")


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    # A traceback would arrive here as an exception other than SystemExit.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


# -- a fresh kit --------------------------------------------------------------------------------


FRESH_REPORT = """\
✓ Schema: index.json: matches its schema, 8 entries; provenance.json: matches its schema, 3 rules
✓ Completeness: 6 record files check against index.json (of 6 listed)
    8 files listed, 12 files in the kit
✓ SHA256SUMS: 6 lines for 6 record files
✓ Provenance in reverse: 3 rules: 5 firings in 2 files, re-observed in the records
✓ Digests printed in records: 5 digests printed in records: 2 check against the copy here, 1 withheld, 2 external, 0 unresolved
    2 printed digests paired with a file here: 2 agree with its copy
✓ Leaks: 12 files scanned: 0 private paths, 0 e-mail addresses, 0 private IPv4 addresses
✓ Pages: README.md and index.html re-rendered from provenance.json and index.json with the built-in templates, in the sandbox
    croissant.json written again from the kit and compared; its 8 FileObjects checked against index.json
✓ Figures: provenance.json declares no figures"""


def test_a_fresh_kit_passes_every_check(kit: Path) -> None:
    report = verify(kit)
    assert report.findings == []
    assert report.exit_code == 0
    text = verify_text(report)
    digest = kit_digest((kit / "index.json").read_bytes())
    assert text == f"kitbuild verify {kit}: every check passes\nkit digest: {digest}\n" + FRESH_REPORT


def test_cli_prints_the_report_and_exits_0(kit: Path) -> None:
    code, out, _ = run_cli("verify", str(kit))
    assert code == 0
    assert out.rstrip("\n").endswith(FRESH_REPORT)


def test_json_holds_the_same_content(kit: Path) -> None:
    code, out, _ = run_cli("verify", str(kit), "--json")
    assert code == 0
    document = orjson.loads(out)
    assert document["command"] == "verify" and document["ok"] is True and document["findings"] == [] and document["exit_code"] == 0
    assert [c["id"] for c in document["checks"]] == ["schema", "completeness", "sums", "provenance", "digests", "leaks", "pages", "figures"]
    text_figures = [line.split(": ", 1)[1] if not line.startswith("    ") else line.strip() for line in FRESH_REPORT.splitlines()]
    assert [f for c in document["checks"] for f in c["figures"]] == text_figures


def test_a_travelling_template_is_rendered_and_checked(template_kit: Path) -> None:
    report = verify(template_kit)
    assert report.findings == []
    assert report.check("pages").figures == [
        "README.md and index.html re-rendered from provenance.json and index.json with _templates/README.md.j2 and the built-in index page template, in the sandbox",
        "croissant.json written again from the kit and compared; its 9 FileObjects checked against index.json",
    ]


# -- each finding code is produced --------------------------------------------------------------

Scenario = Callable[[Path, pytest.MonkeyPatch], None]


def _append(path: Path, data: bytes) -> None:
    path.write_bytes(path.read_bytes() + data)


def _replace(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new))


def _sums_lines(kit: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    lines = (kit / "SHA256SUMS").read_bytes().splitlines(keepends=True)
    (kit / "SHA256SUMS").write_bytes(b"".join(change(lines)))


def _index_files(kit: Path, change: Callable[[list[dict]], None]) -> None:
    edit_json(kit / "index.json", lambda d: change(d["files"]))


def _unreadable(kit: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root reads any file whatever its mode, so a permission error is simulated at the reader.
    for name in ("open",):
        real = getattr(FolderKit, name)

        def refusing(self: FolderKit, path: str, real=real):  # type: ignore[no-untyped-def]
            if path == NOTES:
                raise MemberError(path, "cannot be read (permission denied)", "unreadable")
            return real(self, path)

        monkeypatch.setattr(FolderKit, name, refusing)


def _hostile_template(kit: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (kit / "_templates" / "README.md.j2").write_text(HOSTILE_TEMPLATE, encoding="utf-8")
    refresh(kit)


SCENARIOS: dict[str, Scenario] = {
    "KB001": lambda k, m: (k / "index.json").write_bytes(b'{"kit": "\xff"}\n'),
    "KB002": lambda k, m: (k / "index.json").write_bytes(b"[1, 2, 3]\n"),
    "KB003": lambda k, m: (k / "index.json").write_bytes((k / "index.json").read_bytes().replace(b"\n  ", b"\n    ")),
    "KB004": lambda k, m: (k / "provenance.json").unlink(),
    "KB005": lambda k, m: _replace(k / "provenance.json", b"A kit to verify", b"A kit to verif\xff"),
    "KB006": lambda k, m: (edit_json(k / "provenance.json", lambda d: d["tool"].update(name="other")), refresh(k)),
    "KB007": lambda k, m: (_replace(k / "provenance.json", b'"kit": ', b'"kit":  '), refresh(k)),
    "KB008": lambda k, m: edit_json(k / "provenance.json", lambda d: d["tool"].update(version="9.9.9")),
    "KB101": lambda k, m: (k / "extra.txt").write_bytes(b"x\n"),
    "KB102": lambda k, m: (k / ROWS).unlink(),
    "KB103": lambda k, m: _append(k / NOTES, b"!"),
    "KB104": lambda k, m: _replace(k / NOTES, b"night", b"day!!"),
    "KB105": lambda k, m: _index_files(k, lambda f: f.insert(0, {"path": "../outside.txt", "size": 1, "sha256": "0" * 64})),
    "KB106": lambda k, m: (k / "pw").symlink_to("/etc/passwd"),
    "KB107": lambda k, m: os.mkfifo(k / "fifo"),
    "KB108": lambda k, m: _index_files(k, lambda f: f.insert(1, dict(f[1]))),
    "KB109": lambda k, m: _index_files(k, lambda f: f.insert(0, {"path": "README.md", "size": 1, "sha256": "0" * 64})),
    "KB110": lambda k, m: _index_files(k, lambda f: f.reverse()),
    "KB111": _unreadable,
    "KB201": lambda k, m: (k / "SHA256SUMS").unlink(),
    "KB202": lambda k, m: _sums_lines(k, lambda lines: lines + [b"not a sum line\n"]),
    "KB203": lambda k, m: _sums_lines(k, lambda lines: lines + lines[:1]),
    "KB204": lambda k, m: _sums_lines(k, lambda lines: lines[1:]),
    "KB205": lambda k, m: _sums_lines(k, lambda lines: lines + [b"0" * 64 + b"  index.json\n"]),
    "KB206": lambda k, m: _sums_lines(k, lambda lines: [b"0" * 64 + lines[0][64:]] + lines[1:]),
    "KB207": lambda k, m: _sums_lines(k, lambda lines: lines + [b"0" * 64 + b"  ../../etc/passwd\n"]),
    "KB301": lambda k, m: (_replace(k / READING, PLACEHOLDER.encode(), b"f" * 64), refresh(k)),
    "KB302": lambda k, m: (_replace(k / LOCK, b"desktop", b"laptop!"), refresh(k)),
    "KB303": lambda k, m: (edit_json(k / "provenance.json", lambda d: d["rules"][0].update(total=99)), refresh(k)),
    "KB304": lambda k, m: (edit_json(k / "provenance.json", lambda d: d["rules"][0]["firings"].update({f"{LS}/nope.json": 1})), refresh(k)),
    "KB305": lambda k, m: (edit_json(k / "provenance.json", lambda d: d.update(records=99)), refresh(k)),
    "KB306": lambda k, m: (
        (k / "stray").mkdir(),
        (k / "stray" / "x.txt").write_bytes(b"x\n"),
        _index_files(k, lambda f: f.append({"path": "stray/x.txt", "size": 2, "sha256": "0" * 64})),
    ),
    "KB307": lambda k, m: (edit_json(k / "index.json", lambda d: d.update(kit="another-kit")), refresh(k)),
    "KB401": lambda k, m: (_pair_wrong(k), refresh(k)),
    "KB402": lambda k, m: (_append(k / NOTES, b"\nsha " + b"ab" * 32), refresh(k)),
    "KB501": lambda k, m: (_append(k / NOTES, b"\nread /home/bob/data"), refresh(k)),
    "KB502": lambda k, m: (_append(k / NOTES, b"\nmail bob@example.org"), refresh(k)),
    "KB503": lambda k, m: (_append(k / NOTES, b"\nhost 192.168.1.20"), refresh(k)),
    # A bzip2 bomb, past a bound lowered for the test: 8 MiB of zeros in about 50 bytes.
    "KB504": lambda k, m: (m.setattr(compressed, "FLOOR", 1 << 20), (k / NOTES).write_bytes(bz2.compress(b"\0" * (8 << 20))), refresh(k)),
    "KB601": lambda k, m: _append(k / "README.md", b"one more line\n"),
    "KB602": _hostile_template,
    "KB603": lambda k, m: (k / "index.html").unlink(),
    "KB604": lambda k, m: (edit_json(k / "provenance.json", lambda d: d["pages"].update({"README.md": "_templates/gone.j2"})), refresh(k)),
    "KB605": lambda k, m: edit_json(k / "croissant.json", lambda d: d.update(description="another kit")),
    "KB606": lambda k, m: edit_json(k / "croissant.json", lambda d: d["distribution"][-1].update(sha256="0" * 64)),
    "KB607": lambda k, m: (k / "CITATION.cff").write_bytes(b"cff-version: 1.2.0\n"),
    "KB208": lambda k, m: _respelled_sums(k, lambda lines: [line[:64] + b" *" + line[66:] for line in lines]),
}


def _respelled_sums(kit: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    """SHA256SUMS saying the same in another spelling, with index.json's pin on it fixed up."""
    _sums_lines(kit, change)
    sums = (kit / "SHA256SUMS").read_bytes()
    _index_files(kit, lambda files: [f.update(size=len(sums), sha256=hashlib.sha256(sums).hexdigest()) for f in files if f["path"] == "SHA256SUMS"])


def _pair_wrong(kit: Path) -> None:
    # The mapping entry for the row file now carries the external dataset's digest.
    edit_json(kit / READING, lambda d: d["digests"].update({ROWS: EXTERNAL}))


def test_every_verify_code_has_a_scenario() -> None:
    # Produced elsewhere: figures' codes in tests/figures/, check's in check_test.py, build's in
    # formats_test.py, an archive's in archive_test.py.
    # KB009 needs a digest from the reader: test_a_digest_given_that_differs_is_kb009.
    assert set(SCENARIOS) == {code for code in CODES if code[2] not in "789" and not "KB112" <= code <= "KB117"} - {"KB009"}


@pytest.mark.parametrize("code", sorted(SCENARIOS))
def test_each_code_is_produced(code: str, kit: Path, template_kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = copy_kit(template_kit if code == "KB602" else kit, tmp_path / "kit")
    SCENARIOS[code](target, monkeypatch)
    report = verify(target)
    assert code in report.codes(), verify_text(report)
    assert report.exit_code == 1


@pytest.mark.parametrize("code", sorted(SCENARIOS))
def test_builds_reading_of_its_staged_kit_finds_what_verify_finds(code: str, kit: Path, template_kit: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # build checks its staged kit with read_docs(observed=...): index.json's bytes let go once
    # checked, a listing without sizes, and each entry's strings shared with the file's
    # observation. The findings must be verify's, for every break.
    target = copy_kit(template_kit if code == "KB602" else kit, tmp_path / "kit")
    SCENARIOS[code](target, monkeypatch)
    want = verify(target, jobs=1)
    with FolderKit(target) as fs:
        docs = read_docs(fs)
        observed = observe_kit(fs, docs, plan_for(docs), 1, SILENT)
        built = read_docs(fs, observed=observed)
        assert built.index.data is None and built.index.digest == kit_digest((target / "index.json").read_bytes())
        assert built.entries == docs.entries
        # (Where index.json is laid out as a build writes it, as it always is in a build.)
        shared = [e for e in built.entries if e["path"] in observed and e["sha256"] == observed[e["path"]].sha256] if built.index.canonical else []
        assert all(e["path"] is observed[e["path"]].path and e["sha256"] is observed[e["path"]].sha256 for e in shared)
        assert {p: m.kind for p, m in built.members.items()} == {p: m.kind for p, m in docs.members.items()}
        report = check(fs, built, observed, str(target))
    assert report.findings == want.findings
    assert report.digest == want.digest


@pytest.mark.parametrize("value", [0, -1, "1", 1.5, True, None])
def test_a_firing_count_that_is_not_a_whole_number_above_zero_fails_the_schema(copy: Path, value: object) -> None:
    # Firings that all look plain skip jsonschema's look at them; one that is not must not.
    def change(document: dict) -> None:  # type: ignore[type-arg]
        firings = document["rules"][0]["firings"]
        firings[next(iter(firings))] = value

    edit_json(copy / "provenance.json", change)
    refresh(copy)
    found = [f for f in verify(copy).findings if f.code == "KB006"]
    assert found and all(f.message.startswith("rules[0].firings") for f in found), found


# -- exact findings -----------------------------------------------------------------------------


def test_a_pair_that_disagrees_names_key_path_and_both_digests(copy: Path) -> None:
    actual = hashlib.sha256(FolderKit(copy).read(ROWS)).hexdigest()
    _pair_wrong(copy)
    refresh(copy)
    [finding] = [f for f in verify(copy).findings if f.code == "KB401"]
    assert str(finding) == f"KB401 {READING}:11: digests[\"{ROWS}\"] says d6f2… for {ROWS}; the copy here has {actual[:4]}…"
    assert (finding.expected, finding.found) == (actual, EXTERNAL)


def test_an_edited_placeholder_is_caught_even_with_index_and_sums_fixed_up(copy: Path) -> None:
    _replace(copy / READING, PLACEHOLDER.encode(), b"f" * 64)
    refresh(copy)
    codes = {f.code: f for f in verify(copy).findings}
    assert str(codes["KB301"]) == f"KB301 {READING}: holds the placeholder {PLACEHOLDER} never; digest-withheld fired here once"
    assert "KB402" in codes  # the digest put in its place resolves to nothing


def test_a_placeholder_added_where_no_rule_fired_is_caught(copy: Path) -> None:
    # The notes file holds no placeholder and digest-withheld never fired in it: one written
    # into it after the build is a count that disagrees with provenance.json all the same.
    _replace(copy / NOTES, b"night", PLACEHOLDER.encode())
    refresh(copy)
    codes = {f.code: f for f in verify(copy).findings}
    assert str(codes["KB301"]) == f"KB301 {NOTES}: holds the placeholder {PLACEHOLDER} once; digest-withheld fired here never"


def test_findings_never_stop_at_the_first(copy: Path) -> None:
    _append(copy / NOTES, b"!")
    _append(copy / ROWS, b"!")
    (copy / "SHA256SUMS").unlink()
    report = verify(copy)
    assert {(f.code, f.path) for f in report.findings} >= {
        ("KB103", NOTES), ("KB104", NOTES), ("KB103", ROWS), ("KB104", ROWS), ("KB201", "SHA256SUMS"), ("KB102", "SHA256SUMS"),
    }


@pytest.mark.parametrize("change", [
    lambda lines: [line[:64] + b" *" + line[66:] for line in lines],  # binary markers
    lambda lines: [line[:64].upper() + line[64:] for line in lines],  # upper-case hex
    lambda lines: list(reversed(lines)),                              # lines reordered
], ids=["binary-markers", "upper-case", "reordered"])
def test_a_respelled_sha256sums_is_kb208_even_with_its_pin_fixed_up(copy: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    """Every byte of a kit is pinned: SHA256SUMS must be exactly what kitbuild writes, so a copy
    that says the same in another spelling is caught, not only one that says something else."""
    _respelled_sums(copy, change)
    assert {f.code for f in verify(copy).findings} >= {"KB208"}
    assert {f.code for f in verify(copy).findings if f.path == "SHA256SUMS"} == {"KB208"}


@pytest.mark.parametrize(("change", "agrees"), [
    (lambda lines: lines, True),
    (lambda lines: [*lines[:3], _flip(lines[3]), *lines[4:]], False),   # a digest changed
    (lambda lines: lines[:-1], False),                                  # the last line dropped
    (lambda lines: [*lines, lines[0]], False),                          # a line added
    (lambda lines: [*lines[:-1], lines[-1].rstrip(b"\n")], False),      # no final line break
], ids=["as-written", "digest-changed", "last-line-dropped", "line-added", "no-final-newline"])
def test_sha256sums_agrees_only_when_it_is_what_the_build_writes(kit: Path, change: Callable[[list[bytes]], list[bytes]], agrees: bool) -> None:
    listed = {e["path"]: e for e in orjson.loads((kit / "index.json").read_bytes())["files"]}
    lines = (kit / "SHA256SUMS").read_bytes().splitlines(keepends=True)
    records = {line.decode().rstrip("\n").split("  ", 1)[1] for line in lines}
    assert len(lines) == 6 and records <= set(listed)
    assert (check_sums(b"".join(change(lines)), listed, records) == []) is agrees


def _flip(line: bytes) -> bytes:
    return (b"1" if line[:1] == b"0" else b"0") + line[1:]


def test_a_digest_given_that_differs_is_kb009_and_the_right_one_passes(copy: Path) -> None:
    right = kit_digest((copy / "index.json").read_bytes())
    assert verify(copy, digest=right).ok
    assert verify(copy, digest=right.removeprefix("sha256:").upper()).ok
    wrong = "sha256:" + "0" * 64
    [finding] = verify(copy, digest=wrong).findings
    assert str(finding) == f"KB009 index.json: the kit's digest is {right}; the one given is {wrong}"


def test_a_digest_that_is_not_one_is_exit_2(copy: Path) -> None:
    code, _, err = run_cli("verify", str(copy), "--digest", "sha256:abc")
    assert code == 2
    assert "--digest 'sha256:abc': not a kit digest" in err


# -- hostile kits: findings or exit 2, never a traceback, never a read outside ---------------


@pytest.fixture
def no_reads_outside(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every absolute path opened with open() or os.open() outside the kit's own tmp tree."""
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(os.fspath(file) if not isinstance(file, int) else "")
        return real_open(file, *args, **kwargs)

    def spy_os_open(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        opened.append(os.fspath(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    return opened


def test_a_symlink_to_etc_passwd_is_a_finding_and_never_read(copy: Path, no_reads_outside: list[str]) -> None:
    (copy / "pw").symlink_to("/etc/passwd")
    (copy / LS / "link.json").symlink_to("/etc/passwd")
    _index_files(copy, lambda f: f.append({"path": "pw", "size": 1, "sha256": "0" * 64}))
    report = verify(copy)
    assert not any(p.startswith("/etc") for p in no_reads_outside)
    messages = {str(f) for f in report.findings}
    assert "KB106 pw: is a symlink; a kit holds regular files only, and verify never follows a link" in messages
    assert "KB105 index.json: lists pw, which resolves through a symlink; verify does not open it" in messages
    assert f"KB106 {LS}/link.json: is a symlink; a kit holds regular files only, and verify never follows a link" in messages


@pytest.mark.parametrize("way", ["open"])
def test_the_reader_refuses_paths_through_a_symlinked_folder(copy: Path, way: str) -> None:
    (copy / "up").symlink_to("/etc")
    (copy / LS / "deeper").symlink_to("/etc")
    kit = FolderKit(copy)
    with pytest.raises(MemberError, match="resolves through the symlink up"):
        getattr(kit, way)("up/passwd")
    with pytest.raises(MemberError, match=f"resolves through the symlink {LS}/deeper"):
        getattr(kit, way)(f"{LS}/deeper/passwd")
    with pytest.raises(MemberError, match="is a symlink|resolves through the symlink"):
        getattr(kit, way)("up")
    kit.close()


@pytest.mark.parametrize("way", ["open"])
def test_the_reader_refuses_what_is_not_a_regular_file(copy: Path, way: str) -> None:
    os.mkfifo(copy / "fifo")
    kit = FolderKit(copy)
    with pytest.raises(MemberError, match="is not a regular file"):
        getattr(kit, way)("fifo")
    with pytest.raises(MemberError, match="is not a regular file"):
        getattr(kit, way)(LS)
    with pytest.raises(MemberError, match="is not in the kit"):
        getattr(kit, way)("nope/x.json")
    kit.close()


@pytest.mark.parametrize(
    "path, why",
    [("/etc/passwd", "is absolute"), ("../x", "climbs out of the kit with '..'"), ("a\\b", "holds a backslash"),
     ("a\0b", "holds a NUL byte"), ("a//b", "has an empty or '.' part"), ("C:/x", "is absolute")],
)
def test_the_reader_refuses_paths_that_leave_the_kit(kit: Path, path: str, why: str) -> None:
    with pytest.raises(MemberError) as caught:
        FolderKit(kit).open(path)
    assert caught.value.reason == why


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="a./", min_size=1, max_size=9).filter(lambda p: not p.startswith("/")))
def test_the_paths_refused_for_their_parts_are_those_split_finds(path: str) -> None:
    # The rule as written with the path split into its parts, for relative paths of plain letters.
    parts = path.split("/")
    expected = "climbs out of the kit with '..'" if ".." in parts else "has an empty or '.' part" if "" in parts or "." in parts else None
    assert refusal(path) == expected


def test_a_path_climbing_out_in_index_json_is_refused(copy: Path, no_reads_outside: list[str]) -> None:
    _index_files(copy, lambda f: f.insert(0, {"path": "../../../etc/passwd", "size": 1, "sha256": "0" * 64}))
    code, out, _ = run_cli("verify", str(copy))
    assert code == 1
    assert "KB105 index.json: lists the path '../../../etc/passwd', which climbs out of the kit with '..'; verify does not open it" in out
    assert not any(p.startswith("/etc") for p in no_reads_outside)


def test_a_path_climbing_out_in_sha256sums_is_refused(copy: Path) -> None:
    _sums_lines(copy, lambda lines: lines + [b"0" * 64 + b"  ../../etc/passwd\n"])
    code, out, _ = run_cli("verify", str(copy))
    assert code == 1
    assert "KB207 SHA256SUMS:7: lists the path '../../etc/passwd', which climbs out of the kit with '..'" in out


def test_a_template_reaching_for_python_internals_is_a_finding(template_kit: Path, tmp_path: Path) -> None:
    copy = copy_kit(template_kit, tmp_path / "kit")
    _hostile_template(copy, pytest.MonkeyPatch())
    code, out, _ = run_cli("verify", str(copy))
    assert code == 1
    [line] = [line for line in out.splitlines() if "KB602" in line]
    # At the template's line, in words: no Python type names.
    assert line == "  KB602 _templates/README.md.j2:3: cannot be rendered in the sandbox: the sandbox refuses '__class__': a template reads the kit's data, never Python's internals (names starting with '_')"


def test_invalid_utf8_in_json_is_a_finding(copy: Path) -> None:
    _replace(copy / "provenance.json", b"A kit to verify", b"A kit to verif\xff")
    code, out, _ = run_cli("verify", str(copy))
    assert code == 1
    assert re.search(r"KB005 provenance\.json:\d+: is not valid UTF-8 JSON", out)


def test_index_json_that_is_a_list_of_numbers(copy: Path) -> None:
    (copy / "index.json").write_bytes(b"[1, 2, 3]\n")
    code, out, _ = run_cli("verify", str(copy))
    assert code == 1
    assert "KB002 index.json: (top level): must be of type object" in out


_GOOD_ENTRY = {"path": "records/a.json", "size": 7, "sha256": "0" * 64}


@pytest.mark.parametrize(
    "entry",
    [
        {**_GOOD_ENTRY, "size": -1},
        {**_GOOD_ENTRY, "size": True},
        {**_GOOD_ENTRY, "size": "7"},
        {**_GOOD_ENTRY, "sha256": "A" * 64},
        {**_GOOD_ENTRY, "sha256": "0" * 63},
        {**_GOOD_ENTRY, "sha256": "0" * 63 + "g"},
        {**_GOOD_ENTRY, "sha256": 7},
        {**_GOOD_ENTRY, "path": ""},
        {**_GOOD_ENTRY, "path": 7},
        {**_GOOD_ENTRY, "extra": 1},
        {"path": "records/a.json", "size": 7},
        ["records/a.json", 7, "0" * 64],
    ],
    ids=["negative-size", "bool-size", "string-size", "upper-hex", "short-digest", "non-hex", "number-digest", "empty-path", "number-path", "extra-key", "missing-key", "not-an-object"],
)
def test_an_index_entry_off_its_schema_is_a_schema_finding(copy: Path, entry: object) -> None:
    # The second entry is the bad one: verify's fast test of all entries at once must not pass it.
    edit_json(copy / "index.json", lambda d: d["files"].insert(1, entry))
    code, out, _ = run_cli("verify", str(copy))
    assert code == 1
    assert "KB002 index.json: files[1]" in out, out


def test_a_short_and_a_long_digest_do_not_make_up_for_each_other(copy: Path) -> None:
    short, long = {**_GOOD_ENTRY, "sha256": "0" * 63}, {**_GOOD_ENTRY, "path": "records/b.json", "sha256": "0" * 65}
    edit_json(copy / "index.json", lambda d: d["files"].__setitem__(slice(1, 1), [short, long]))
    _, out, _ = run_cli("verify", str(copy))
    assert "KB002 index.json: files[1].sha256" in out and "KB002 index.json: files[2].sha256" in out, out


def test_well_formed_entries_need_no_schema_finding(copy: Path) -> None:
    edit_json(copy / "index.json", lambda d: d["files"].insert(1, dict(_GOOD_ENTRY)))
    _, out, _ = run_cli("verify", str(copy))
    assert "KB002" not in out
    assert "KB102 records/a.json: is listed in index.json but not in the kit" in out


def test_a_size_index_json_misstates_is_caught_though_the_digest_agrees(copy: Path) -> None:
    size = (copy / NOTES).stat().st_size
    _index_files(copy, lambda files: next(f for f in files if f["path"] == NOTES).__setitem__("size", size + 1))
    code, out, _ = run_cli("verify", str(copy))
    assert code == 1
    assert f"KB103 {NOTES}: has {size:,} bytes; index.json says {size + 1:,}" in out, out
    assert "KB104" not in out


def test_a_missing_sha256sums(copy: Path) -> None:
    (copy / "SHA256SUMS").unlink()
    code, out, _ = run_cli("verify", str(copy))
    assert code == 1
    assert "KB201 SHA256SUMS: is missing; the build writes it for sha256sum -c" in out


def test_a_100_mb_line_is_read_in_bounded_blocks(copy: Path) -> None:
    line = b"x" * (100 << 20)
    with open(copy / NOTES, "ab") as f:
        f.write(b"\n" + line + b" mail bob@example.org\n")
    refresh(copy)
    report = verify(copy)
    assert report.codes() == {"KB502", "KB601"}  # the README lists the file's old size and digest
    [finding] = [f for f in report.findings if f.code == "KB502"]
    assert str(finding) == f"KB502 {NOTES}:3: column {len(line) + 7}: an e-mail address that the allow list in provenance.json does not cover"


@pytest.mark.parametrize("make", ["missing", "file", "empty", "index_link"])
def test_not_a_kit_exits_2(tmp_path: Path, make: str) -> None:
    target = tmp_path / "k"
    if make == "file":
        target.write_text("x")
    elif make == "empty":
        target.mkdir()
    elif make == "index_link":
        target.mkdir()
        (target / "index.json").symlink_to("/etc/passwd")
    code, _, err = run_cli("verify", str(target))
    assert code == 2
    expected = {
        "missing": f"kitbuild: {target}: no such folder. Give the folder a kit was unpacked into.",
        "file": f"kitbuild: {target}: is neither a folder nor a .tar.gz or .zip archive. Give the folder a kit was unpacked into, or the archive 'kitbuild publish' wrote.",
        "empty": f"kitbuild: {target}: index.json is not in the kit; a kit has an index.json at its root.",
        "index_link": f"kitbuild: {target}: index.json resolves through the symlink index.json; a kit has an index.json at its root.",
    }[make]
    assert err.strip() == expected
    with pytest.raises(NotAKitError):
        verify(target)


@pytest.mark.parametrize("page", ["README.md", "index.html"])
def test_a_page_is_judged_by_the_bytes_the_pass_hashed_not_a_later_read(copy: Path, page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # No index.json entry holds a page's digest: a page is judged by rendering it again. An
    # edited page that is put back as rendered after the pass read it (a writer racing verify, a
    # server answering twice) is still the edited page the kit was checked with.
    rendered = (copy / page).read_bytes()
    (copy / page).write_bytes(rendered + b"A claim no record backs.\n")

    def then_put_back(*args: object, **kwargs: object) -> object:
        observed = observe_kit(*args, **kwargs)  # type: ignore[arg-type]
        (copy / page).write_bytes(rendered)
        return observed

    monkeypatch.setattr(verify_module, "observe_kit", then_put_back)
    findings = verify(copy).findings
    assert [(f.code, f.path) for f in findings] == [("KB601", page)], [str(f) for f in findings]
    assert "changed while the kit was checked" in findings[0].message


# -- the property: any change to a kit file is caught, and named -------------------------------

TARGETS = [LOCK, ROWS, READING, NOTES, f"{LS}/full-s1/run/weights.bin", "longmemeval-2026-10/a0/rows.tsv", "index.json", "SHA256SUMS", "provenance.json"]


def _named(findings: list[Finding], path: str) -> bool:
    return any(f.path == path or re.search(r"(?<![\w/.-])" + re.escape(path) + r"(?![\w/.-])", f.message) for f in findings)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    target=st.sampled_from(TARGETS),
    mutation=st.sampled_from(["byte", "truncate", "delete", "add", "rename"]),
    where=st.floats(min_value=0, max_value=1, exclude_max=True),
    value=st.integers(min_value=1, max_value=255),
)
def test_any_change_to_a_kit_file_is_caught_and_named(kit: Path, target: str, mutation: str, where: float, value: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        copy = copy_kit(kit, Path(tmp) / "kit")
        path = copy / target
        data = path.read_bytes()
        named = target
        if mutation == "byte":
            i = int(where * len(data))
            path.write_bytes(data[:i] + bytes([data[i] ^ value]) + data[i + 1 :])
        elif mutation == "truncate":
            path.write_bytes(data[: int(where * len(data))])
        elif mutation == "delete":
            path.unlink()
        elif mutation == "add":
            named = target + ".orig"
            (copy / named).write_bytes(data)
        else:
            path.rename(copy / (target + ".renamed"))
        if target == "index.json" and mutation in ("delete", "rename"):
            with pytest.raises(NotAKitError, match="index.json is not in the kit"):
                verify(copy)
            return
        report = verify(copy)
        assert report.exit_code == 1
        assert _named(report.findings, named), verify_text(report)


# -- the report and the docs ------------------------------------------------------------------


def test_json_report_is_deterministic(copy: Path) -> None:
    _append(copy / NOTES, b"!")
    assert verify_json(verify(copy)) == verify_json(verify(copy))


def test_every_code_is_documented_in_docs_findings_md() -> None:
    assert (ROOT / "docs" / "findings.md").read_text(encoding="utf-8") == findings_markdown()
    assert all(CODES[code].strip() for code in CODES)


def test_window_matches_span_block_edges() -> None:
    """A digest, a placeholder and a leak cut by a block edge are each found once, on the right line."""
    digest = "ab" * 32
    data = (b"y" * 1000 + b"\n") * 30 + b"see sha256:" + digest.encode() + b" w-1 /home/bob\n"
    plan = Plan(placeholders=("w-1",))
    for size in (61, 4096, 1 << 20):
        observer = Observer("r.txt", plan)
        for i in range(0, len(data), size):
            observer.feed(data[i : i + size])
        scan = observer.finish()
        assert scan.digests == {digest: [1, data.index(digest.encode())]}
        assert scan.placeholders == [1]
        assert [leak.code for leak in scan.leaks] == ["KB501"]
        places = locate((data[i : i + size] for i in range(0, len(data), size)), [scan.digests[digest][1], scan.leaks[0].offset])
        assert places == {scan.digests[digest][1]: (31, 12), scan.leaks[0].offset: (31, 81)}


@pytest.mark.parametrize("delta", [-1, 1])
def test_a_source_folder_count_off_by_one_is_found_and_the_true_one_is_not(copy: Path, delta: int) -> None:
    """provenance.json's per-source file counts against the records index.json lists in each folder."""
    assert "KB305" not in verify(copy).codes()
    edit_json(copy / "provenance.json", lambda d: d["sources"][0].update(files=d["sources"][0]["files"] + delta))
    refresh(copy)
    report = verify(copy)
    found = [f for f in report.findings if f.code == "KB305"]
    assert len(found) == 1 and "sources[0]" in found[0].message, verify_text(report)
