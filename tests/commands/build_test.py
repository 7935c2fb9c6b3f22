"""``kitbuild build`` end to end: every numbered point of issue 2 on a small bench."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import urllib.parse

import pytest

from kitbuild.kitdocs import kit_digest
import yaml

from kitbuild import build
from kitbuild.errors import LeakError, UnsafeRewriteError
from kitbuild.gate import scrub

from kittest import (
    USER_REGEX_RULE,
    SAMPLE_AS,
    SAMPLE_DRY_RUN,
    SAMPLE_MAP_KEY,
    SAMPLE_NAMES,
    SAMPLE_PLACEHOLDER,
    make_files,
    read_tree,
    sample_tree,
    sha256,
    write_kit,
    write_sample_bench,
)

L = SAMPLE_AS
CHANGED = {f"{L}/full-s1/run/run.json", f"{L}/full-s1/lock.json", f"{L}/score/reading.json", f"{L}/score/family.json"}
GENERATED = {"SHA256SUMS", "index.json", "provenance.json", "README.md", "index.html", "croissant.json"}


@pytest.fixture
def sample(bench):
    """The sample bench, built once into bench/kit; returns (bench, its source folder)."""
    write_sample_bench(bench)
    return bench, bench / "runs" / "ls-2026-11-07"


def source_files(source):
    """Kit path -> source bytes for every file the sample kit takes (logs are excluded)."""
    return {f"{L}/{k}": v for k, v in read_tree(source).items() if not k.startswith("full-s1/logs/")}


# -- points 1-3: what the rules wrote -------------------------------------------------------------


def test_rewritten_files_read_exactly_as_expected(sample):
    bench, source = sample
    build("kit.yaml")
    kit = bench / "kit"
    rows_digest = sha256(sample_tree(source)["full-s1"]["run"]["rows.ndjson"])
    assert (kit / L / "full-s1/run/run.json").read_bytes() == (
        b'{"out": "learned-sparse-2026-11-07/full-s1/run", "rows": "learned-sparse-2026-11-07/full-s1/run/rows.ndjson",\n'
        b' "baseline": "longmemeval-2026-10/a0/run/rows.ndjson"}\n'
    )
    assert (kit / L / "full-s1/lock.json").read_bytes() == (
        b'{"route": "desktop", "note": "the only box",\n "run_sha256": "withheld-2026-09-29"}\n'
    )
    assert (kit / L / "score/reading.json").read_bytes() == (
        b'{"run": "withheld-2026-09-29", "rows": "%s",\n "lock": "withheld-2026-09-29"}\n' % rows_digest.encode()
    )
    # Changed only because digests in reading.json were withheld: its own digest is withheld in turn.
    assert (kit / L / "score/family.json").read_bytes() == b'{"reading": "withheld-2026-09-29"}\n'


def test_a_digest_of_an_unchanged_file_stays_and_checks_against_the_kit_copy(sample):
    bench, _ = sample
    build("kit.yaml")
    reading = json.loads((bench / "kit" / L / "score/reading.json").read_bytes())
    assert reading["rows"] == sha256((bench / "kit" / L / "full-s1/run/rows.ndjson").read_bytes())


def test_untouched_files_are_byte_identical_to_their_sources(sample):
    bench, source = sample
    build("kit.yaml")
    kit = read_tree(bench / "kit")
    originals = source_files(source)
    assert set(kit) == set(originals) | GENERATED
    for path, data in originals.items():
        if path not in CHANGED:
            assert kit[path] == data, path
        else:
            assert kit[path] != data, path


def test_provenance_counts_every_firing_and_omits_files_where_a_rule_did_not_fire(sample):
    bench, source = sample
    report = build("kit.yaml")
    provenance = json.loads((bench / "kit/provenance.json").read_bytes())
    rules = provenance["rules"]
    assert [r["name"] for r in rules] == ["record-path-to-kit-path", "box-name-to-role", "digest-withheld"]
    assert [(r["firings"], r["total"]) for r in rules] == [
        ({f"{L}/full-s1/run/run.json": 3}, 3),
        ({f"{L}/full-s1/lock.json": 1}, 1),
        ({f"{L}/full-s1/lock.json": 1, f"{L}/score/family.json": 1, f"{L}/score/reading.json": 2}, 4),
    ]
    assert rules == report.rules
    # The counts are the replacements actually made: each firing wrote its rule's word once.
    kit = read_tree(bench / "kit")
    assert sum(kit[p].count(SAMPLE_PLACEHOLDER.encode()) for p in CHANGED) == 4
    assert kit[f"{L}/full-s1/lock.json"].count(b"desktop") == 1
    assert rules[0]["writes"] == ["learned-sparse-2026-11-07", "longmemeval-2026-10"]
    assert rules[1]["fields"] == ["route"] and rules[2]["placeholder"] == SAMPLE_PLACEHOLDER
    for r in rules:
        assert r["sentence"] and r["builtin"] is True


def test_provenance_records_tool_kit_and_what_verify_needs(sample):
    bench, _ = sample
    build("kit.yaml")
    provenance = json.loads((bench / "kit/provenance.json").read_bytes())
    assert provenance["tool"] == {"name": "kitbuild", "version": __import__("kitbuild").__version__}
    assert (provenance["kit"], provenance["date"], provenance["licence"]) == ("tiny-kit", "2026-11-09", "CC-BY-4.0")
    assert provenance["sources"] == [{"as": L, "about": "the second registered run", "files": 9}]
    assert provenance["records"] == 9
    assert provenance["external_digests"] == {
        "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442": "the public dataset"}
    assert provenance["allow"] == []
    assert provenance["pages"] == {"README.md": "built-in", "index.html": "built-in"}


def test_nothing_private_in_any_output_byte(sample, tmp_path):
    bench, source = sample
    build("kit.yaml")
    tree = sample_tree(source)
    changed_originals = [
        sha256(tree["full-s1"]["run"]["run.json"]),
        sha256(tree["full-s1"]["lock.json"]),
        sha256(tree["score"]["reading.json"]),
        sha256(tree["score"]["family.json"]),
    ]
    private = [
        str(source), str(source.resolve()), "runs/ls-2026-11-07", "ls-2026-11-07/", SAMPLE_MAP_KEY, *SAMPLE_NAMES,
        *changed_originals, *(d.upper() for d in changed_originals),
        str(tmp_path), str(bench), "/home/", ".kitbuild-",
    ]
    for path, data in read_tree(bench / "kit").items():
        for text in private:
            assert text.encode() not in data, f"{text!r} in {path}"


def test_a_source_reached_through_a_symlinked_folder_rewrites_both_spellings(bench):
    make_files(bench, {"disk": {"ls": {}}})
    os.symlink(bench / "disk", bench / "link")
    real, linked = os.path.realpath(bench / "disk/ls"), str(bench / "link/ls")
    make_files(bench / "disk/ls", {"run.txt": f"{linked}/a.json\n{real}/b.json\n{linked}\n"})
    write_kit(bench, sources=[{"path": "link/ls", "as": "run"}], rules=[{"use": "record-path-to-kit-path"}])
    report = build("kit.yaml")
    assert (bench / "kit/run/run.txt").read_bytes() == b"run/a.json\nrun/b.json\nrun\n"
    assert report.rules[0]["firings"] == {"run/run.txt": 3}


# -- point 5: formats ------------------------------------------------------------------------------


def test_json_files_parse_to_the_same_structure_apart_from_rewritten_strings(sample):
    bench, source = sample
    build("kit.yaml")
    before = json.loads((source / "full-s1/run/run.json").read_bytes())
    after = json.loads((bench / "kit" / L / "full-s1/run/run.json").read_bytes())
    assert list(after) == list(before)
    assert {k: v.replace(str(source), L).replace(SAMPLE_MAP_KEY, "longmemeval-2026-10") for k, v in before.items()} == after


def test_unsafe_replacement_stops_the_build_with_kit_path_line_col(bench, cli):
    make_files(bench, {
        "src": {"cfg.yaml": "a: 1\nhost: box-7\n"},
        "host-to-label.yaml": USER_REGEX_RULE,
    })
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "./host-to-label.yaml"}])
    result = cli("build")
    assert result.exit_code == 1
    assert result.stderr == (
        "kitbuild: run/cfg.yaml:2:7: a rule's replacement cannot be written safely here: the replacement holds a "
        "character that YAML would read as syntax. Change the rule's replacement so it needs no escaping in this format.\n"
    )
    assert not (bench / "kit").exists()
    assert sorted(os.listdir(bench)) == ["host-to-label.yaml", "kit.yaml", "src"]


def test_a_replacement_needing_json_escaping_is_escaped_in_a_build(bench):
    make_files(bench, {"src": {"a.json": '{"host": "box-7"}\n'}, "host-to-label.yaml": USER_REGEX_RULE})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "./host-to-label.yaml"}])
    build("kit.yaml")
    data = (bench / "kit/run/a.json").read_bytes()
    assert data == b'{"host": "role: \\"lab\\" \\\\ 7"}\n'
    assert json.loads(data) == {"host": 'role: "lab" \\ 7'}




# -- point 6: index.json and SHA256SUMS -----------------------------------------------------------


def test_index_json_and_sha256sums(sample):
    bench, _ = sample
    build("kit.yaml")
    kit = read_tree(bench / "kit")
    index = json.loads(kit["index.json"])
    assert index["kit"] == "tiny-kit"
    listed = [f["path"] for f in index["files"]]
    assert listed == sorted(set(kit) - {"index.json", "provenance.json", "README.md", "index.html"})
    for f in index["files"]:
        assert (f["size"], f["sha256"]) == (len(kit[f["path"]]), sha256(kit[f["path"]]))
    records = sorted(p for p in kit if p.startswith(L + "/"))
    assert kit["SHA256SUMS"] == "".join(f"{sha256(kit[p])}  {p}\n" for p in records).encode()


def test_sha256sum_check_passes_in_the_kit_root(sample):
    bench, _ = sample
    build("kit.yaml")
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum is not installed")
    done = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=bench / "kit", capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(": OK\n") == 9


def test_a_custom_readme_template_travels_and_is_listed(bench):
    make_files(bench, {"src": {"a.txt": "x\n"}, "page.j2": "# {{ title }}\n{{ provenance.kit }} {{ index.files|length }} {{ folders[0].as }}\n"})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], readme={"template": "page.j2"})
    build("kit.yaml")
    kit = read_tree(bench / "kit")
    assert kit["_templates/README.md.j2"] == (bench / "page.j2").read_bytes()
    assert kit["README.md"] == b"# A tiny kit\ntiny-kit 4 run\n"
    assert [f["path"] for f in json.loads(kit["index.json"])["files"]] == ["SHA256SUMS", "_templates/README.md.j2", "croissant.json", "run/a.txt"]
    assert json.loads(kit["provenance.json"])["pages"]["README.md"] == "_templates/README.md.j2"
    assert kit["SHA256SUMS"] == f"{sha256(b'x' + bytes([10]))}  run/a.txt\n".encode()


def test_no_rules_is_a_valid_kit_of_exact_copies(bench):
    make_files(bench, {"src": {"a.txt": "a\r\nb", "b.bin": b"\x00\xff"}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}])
    report = build("kit.yaml")
    assert report.rules == []
    kit = read_tree(bench / "kit")
    assert (kit["run/a.txt"], kit["run/b.bin"]) == (b"a\r\nb", b"\x00\xff")


# -- point 9: deterministic -------------------------------------------------------------------------


def test_two_builds_into_different_folders_are_byte_identical(sample, tmp_path):
    bench, _ = sample
    build("kit.yaml", tmp_path / "one")
    build("kit.yaml", tmp_path / "elsewhere" / "two", jobs=1)
    one, two = read_tree(tmp_path / "one"), read_tree(tmp_path / "elsewhere" / "two")
    assert one.keys() == two.keys() and len(one) == 15
    for path in one:
        assert one[path] == two[path], path


def test_same_kit_whatever_the_bench_folder_file_order_and_mtimes(tmp_path, monkeypatch):
    # The same bench written twice, in opposite orders, at different paths and times.
    first, second = tmp_path / "a", tmp_path / "somewhere-else" / "b"
    write_sample_bench(first)
    source = second / "runs" / "ls-2026-11-07"
    tree = sample_tree(source)
    flat = sorted(_flatten(tree).items(), reverse=True)
    for i, (rel, data) in enumerate(flat):
        path = source / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    shutil.copy(first / "kit.yaml", second / "kit.yaml")
    build(first / "kit.yaml")
    build(second / "kit.yaml")
    assert read_tree(first / "kit") == read_tree(second / "kit")


def _flatten(tree, prefix=""):
    out = {}
    for name, content in tree.items():
        if isinstance(content, dict):
            out.update(_flatten(content, f"{prefix}{name}/"))
        else:
            out[prefix + name] = content
    return out


def test_serial_and_parallel_builds_are_identical(sample, tmp_path, cli):
    bench, _ = sample
    assert cli("build", "--jobs", "1", "--out", tmp_path / "serial").exit_code == 0
    assert cli("build", "--jobs", "2", "--out", tmp_path / "parallel").exit_code == 0
    assert read_tree(tmp_path / "serial") == read_tree(tmp_path / "parallel")


def test_withholding_rewrites_the_staged_copies_never_a_source(sample, tmp_path):
    bench, source = sample
    sources = read_tree(source)
    build("kit.yaml", out=tmp_path / "kit")
    assert read_tree(source) == sources
    assert b"withheld-2026-09-29" in (tmp_path / "kit" / L / "score/family.json").read_bytes()


# -- point 10: atomic and safe ------------------------------------------------------------------------


def test_a_failed_build_leaves_the_earlier_kit_untouched_and_no_staging_folder(sample):
    bench, source = sample
    build("kit.yaml")
    before = read_tree(bench / "kit")
    (source / "score/new.txt").write_text("written on /home/ada\n")
    with pytest.raises(LeakError):
        build("kit.yaml")
    assert read_tree(bench / "kit") == before
    assert sorted(os.listdir(bench)) == ["kit", "kit.yaml", "runs"]


def test_a_failed_unsafe_rewrite_leaves_the_earlier_kit_untouched(bench):
    make_files(bench, {"src": {"cfg.yaml": "a: 1\n"}, "host-to-label.yaml": USER_REGEX_RULE})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "./host-to-label.yaml"}])
    build("kit.yaml")
    before = read_tree(bench / "kit")
    (bench / "src/cfg.yaml").write_text("a: box-1\n")
    with pytest.raises(UnsafeRewriteError):
        build("kit.yaml")
    assert read_tree(bench / "kit") == before
    assert sorted(os.listdir(bench)) == ["host-to-label.yaml", "kit", "kit.yaml", "src"]


def test_a_rebuild_replaces_the_kit_whole(sample):
    bench, source = sample
    build("kit.yaml")
    (source / "notes/empty.txt").unlink()
    build("kit.yaml")
    assert f"{L}/notes/empty.txt" not in read_tree(bench / "kit")
    assert sorted(os.listdir(bench)) == ["kit", "kit.yaml", "runs"]


@pytest.mark.parametrize("existing", [{"notes.txt": "mine\n"}, "a file"])
def test_an_out_that_is_not_a_kit_is_never_replaced(bench, cli, existing):
    make_files(bench, {"src": {"a.txt": "x\n"}})
    if isinstance(existing, dict):
        make_files(bench / "kit", existing)
    else:
        (bench / "kit").write_text(existing)
    write_kit(bench, sources=[{"path": "src", "as": "run"}])
    before = read_tree(bench)
    result = cli("build")
    assert result.exit_code == 2
    assert result.stderr == (
        "kitbuild: kit.yaml: out (default ./kit): exists and is not a kit (it has no provenance.json); a build replaces "
        "that folder whole, so kitbuild will not. Choose a new or empty folder, or remove it yourself.\n"
    )
    assert read_tree(bench) == before and sorted(os.listdir(bench)) == ["kit", "kit.yaml", "src"]


def test_an_empty_out_folder_is_used(bench):
    make_files(bench, {"src": {"a.txt": "x\n"}, "kit": {}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}])
    build("kit.yaml")
    assert (bench / "kit/run/a.txt").read_bytes() == b"x\n"


def test_the_build_never_writes_inside_a_source(sample):
    bench, source = sample
    before = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in source.rglob("*") if p.is_file()}
    build("kit.yaml")
    after = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in source.rglob("*") if p.is_file()}
    assert before == after


def test_out_inside_a_source_is_refused(sample, cli):
    bench, source = sample
    result = cli("build", "--out", source / "full-s1" / "kit")
    assert result.exit_code == 2
    assert result.stderr == (
        f"kitbuild: --out: the kit would be written inside sources[0] ({L}); kitbuild never writes inside a source. "
        "Choose a folder outside it.\n"
    )
    assert not (source / "full-s1" / "kit").exists()


def test_source_inside_out_is_refused(sample, cli):
    bench, source = sample
    result = cli("build", "--out", bench / "runs")
    assert result.exit_code == 2
    assert result.stderr == (
        f"kitbuild: --out: sources[0] ({L}) lies inside it, and a build replaces that folder. Choose a folder outside it.\n"
    )
    assert sorted(os.listdir(bench / "runs")) == ["ls-2026-11-07"]


def test_symlink_pointing_outside_a_source_is_refused_naming_it(sample, cli):
    bench, source = sample
    (bench / "private.txt").write_text("secret\n")
    os.symlink(bench / "private.txt", source / "score" / "borrowed.txt")
    result = cli("build")
    assert result.exit_code == 2
    assert result.stderr == (
        f"kitbuild: sources[0] ({L}): score/borrowed.txt: is a symlink that points outside its source; kitbuild "
        "refuses it. Copy the file in, or exclude the link.\n"
    )
    assert not (bench / "kit").exists()


# -- bad input through the CLI: one paragraph on stderr, exit 2, nothing written -------------------

BAD_INPUT = {
    "no kit.yaml": (None, "kit.yaml: no such file. Give the path of a kit config, or run 'kitbuild init' to write one."),
    "yaml syntax": (
        "kit: k\ntitle: T\ndate: 2026-11-09\nsources:\n  - {path: src, as: run\n",
        "kit.yaml:6:1: the YAML does not parse: expected ',' or '}', but got '<stream end>'. Fix the syntax at that place.",
    ),
    "schema error": (
        "kit: k\ntitle: T\ndate: 2026-11-09\nsources:\n  - {path: src, as: run}\nrules:\n  - use: record-path-to-kit-path\n"
        "  - use: box-name-to-role\n    with:\n      names: gpu-b17\n",
        "kit.yaml:10:14: rules[1].with.names: must be of type object (rule 'box-name-to-role'; see docs/rules.md, 'Built-in rules')",
    ),
    "unknown rule": (
        "kit: k\ntitle: T\ndate: 2026-11-09\nsources:\n  - {path: src, as: run}\nrules:\n  - use: person-name-to-role\n",
        "kit.yaml:7:10: rules[0].use: no such rule: 'person-name-to-role'; did you mean 'box-name-to-role'? The built-in rules are: "
        "record-path-to-kit-path, box-name-to-role, digest-withheld; a rule file is named by its path.",
    ),
    "missing source": (
        "kit: k\ntitle: T\ndate: 2026-11-09\nsources:\n  - {path: bench/gone, as: run}\n",
        "kit.yaml:5:12: sources[0].path: no such folder. Relative paths are relative to the folder that holds kit.yaml.",
    ),
    "same as twice": (
        "kit: k\ntitle: T\ndate: 2026-11-09\nsources:\n  - {path: src, as: run}\n  - {path: src2, as: run}\n",
        "kit.yaml:6:22: sources[1].as: sources[0] is published as the same kit folder; give each source its own 'as'",
    ),
    "include matches nothing": (
        "kit: k\ntitle: T\ndate: 2026-11-09\nsources:\n  - path: src\n    as: run\n    include: ['*.txt', 'full-s2/**']\n",
        "kit.yaml:7:24: sources[0].include[1]: the glob 'full-s2/**' matches no file in that source. Fix the glob or remove it.",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUT))
def test_bad_input_one_paragraph_exit_2_nothing_written(bench, cli, case):
    text, message = BAD_INPUT[case]
    make_files(bench, {"src": {"a.txt": "x\n"}, "src2": {"b.txt": "y\n"}})
    if text is not None:
        write_kit(bench, text=text)
    before = sorted(os.listdir(bench))
    result = cli("build")
    assert result.exit_code == 2
    assert result.stderr == f"kitbuild: {message}\n"
    assert result.stdout == ""
    assert sorted(os.listdir(bench)) == before


def test_a_config_path_elsewhere_is_named_as_given(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("build", "nowhere/kit.yaml")
    assert (result.exit_code, result.stderr) == (
        2, "kitbuild: nowhere/kit.yaml: no such file. Give the path of a kit config, or run 'kitbuild init' to write one.\n")


# -- the report and --dry-run ---------------------------------------------------------------------------


def test_build_prints_a_short_report(sample, cli):
    bench, _ = sample
    result = cli("build")
    assert result.exit_code == 0
    assert result.stdout == (
        f"built tiny-kit in {bench / 'kit'}: 9 record files, 1,561 bytes\n"
        "  record-path-to-kit-path: fired 3 times in 1 file\n"
        "  box-name-to-role: fired 1 time in 1 file\n"
        "  digest-withheld: fired 4 times in 3 files\n"
        f"  kit digest: {kit_digest((bench / 'kit' / 'index.json').read_bytes())} (print it beside the kit; 'kitbuild verify KIT --digest' checks it)\n"
    )


def test_dry_run_verbose_writes_nothing_and_prints_each_firing_before_and_after(sample, cli):
    bench, source = sample
    result = cli("build", "--dry-run", "--verbose")
    assert result.exit_code == 0, result.stderr
    assert sorted(os.listdir(bench)) == ["kit.yaml", "runs"]
    tree = sample_tree(source)
    run_sha = sha256(tree["full-s1"]["run"]["run.json"])
    lock_sha = sha256(tree["full-s1"]["lock.json"])
    reading_sha = sha256(tree["score"]["reading.json"])
    assert result.stdout == "\n".join([
        *SAMPLE_DRY_RUN,
        "every firing, as path:line:col: rule: before → after (private text: for your eyes only, never for a log):",
        f"  {L}/full-s1/lock.json:1:12: box-name-to-role: gpu-b17.cluster.example.net → desktop",
        f"  {L}/full-s1/lock.json:2:17: digest-withheld: {run_sha} → withheld-2026-09-29",
        f"  {L}/full-s1/run/run.json:1:10: record-path-to-kit-path: {source} → {L}",
        f"  {L}/full-s1/run/run.json:1:{10 + len(str(source)) + 24}: record-path-to-kit-path: {source} → {L}",
        f"  {L}/full-s1/run/run.json:2:15: record-path-to-kit-path: {SAMPLE_MAP_KEY} → longmemeval-2026-10",
        f"  {L}/score/family.json:1:14: digest-withheld: {reading_sha} → withheld-2026-09-29",
        f"  {L}/score/reading.json:1:10: digest-withheld: sha256:{run_sha.upper()} → withheld-2026-09-29",
        f"  {L}/score/reading.json:2:11: digest-withheld: {lock_sha} → withheld-2026-09-29",
        "",
        "the build would pass: 9 record files, and the kit would verify clean",
        "",
    ])


def test_dry_run_reports_leaks_with_exit_1_and_writes_nothing(bench, cli):
    make_files(bench, {"src": {"a.txt": "see /home/ada/x\n"}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}])
    result = cli("build", "--dry-run")
    assert result.exit_code == 1
    assert result.stdout.endswith(
        "the build would be stopped: 1 finding\n  KB902 run/a.txt:1: column 5: a private path (/home/…) that the allow list in kit.yaml does not cover\n"
        "KB902: add a map entry that rewrites the path, exclude the file, or, for a path that names no person or machine, "
        "an 'allow' entry with its reason.\n")
    assert sorted(os.listdir(bench)) == ["kit.yaml", "src"]


def test_kit_yaml_written_by_the_fixture_is_what_the_issue_shows(sample):
    # Guards the fixture itself: the config uses every built-in rule with the issue's parameters.
    bench, _ = sample
    config = yaml.safe_load((bench / "kit.yaml").read_text())
    assert [r["use"] for r in config["rules"]] == ["record-path-to-kit-path", "box-name-to-role", "digest-withheld"]


def test_index_and_sums_sort_whatever_order_they_are_given():
    from kitbuild.index import index_bytes, sums_of

    entries = [{"path": "run/b", "size": 1, "sha256": "b" * 64}, {"path": "SHA256SUMS", "size": 2, "sha256": "c" * 64}, {"path": "run/a", "size": 3, "sha256": "a" * 64}]
    assert sums_of({e["path"]: e["sha256"] for e in entries}) == f"{'c' * 64}  SHA256SUMS\n{'a' * 64}  run/a\n{'b' * 64}  run/b\n".encode()
    provenance = {"path": "provenance.json", "size": 4, "sha256": "d" * 64}
    assert [f["path"] for f in json.loads(index_bytes("k", entries, provenance))["files"]] == ["SHA256SUMS", "run/a", "run/b"]


def test_a_thousand_box_names_are_rewritten_in_their_field_and_stopped_by_the_gate_elsewhere(bench):
    """Past the per-name steps and one compiled search: each value of the field looked up whole,
    and the gate's search through the names' common prefixes still finds one left in another field."""
    names = {f"node-{i:04d}.cluster.example.net": f"node{i % 7}" for i in range(1000)}
    rows = "".join(f'{{"q":{i},"route":"node-{i * 37 % 1000:04d}.cluster.example.net","note":"ok"}}\n' for i in range(300))
    make_files(bench, {"src": {"rows.ndjson": rows}})
    rule = {"use": "box-name-to-role", "with": {"names": names, "fields": ["route"]}}
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[rule])
    build("kit.yaml")
    out = (bench / "kit/run/rows.ndjson").read_text()
    assert out == "".join(f'{{"q":{i},"route":"node{i * 37 % 1000 % 7}","note":"ok"}}\n' for i in range(300))
    (bench / "src/rows.ndjson").write_text(rows + '{"q":300,"route":"node-0001.cluster.example.net","note":"seen on node-0999.cluster.example.net"}\n')
    with pytest.raises(LeakError) as err:
        build("kit.yaml")
    [finding] = err.value.findings
    assert (finding.code, finding.path, finding.line) == ("KB901", "run/rows.ndjson", 301)
    assert finding.message.startswith("column 42: ")  # in the rewritten line
    assert "node-0999" not in str(err.value)


def test_the_rules_rewrite_every_place_the_gate_reads_their_names_and_paths(bench):
    """A log line kept in a JSON string follows a '\\n', a coloured one a terminal code, a rank's
    name joins the host with '_', and a URL holds a path after 'file://' or in its query, percent-encoded or not,
    PHP's JSON escapes each '/', a note quotes a path with typographic quotes: the gate
    reads the name or path there, so the rule the researcher wrote must rewrite it there too, and
    the kit must verify clean."""
    from kitbuild import verify

    lines = [
        {"log": f"loading\n{SAMPLE_MAP_KEY}/a0/run.json\ngpu-b17 ready", "rank": "host_gpu-b17_rank0"},
        {"log": f"\x1b[1;32mgpu-b17\x1b[0m wrote \x1b[2K{SAMPLE_MAP_KEY}/a1", "peer": "x.gpu-b17.cluster.example.net"},
        {"model": f"file://{SAMPLE_MAP_KEY}/a0/model.pt", "board": f"http://localhost:6006/?logdir={SAMPLE_MAP_KEY}&run=a0#scalars"},
        {"link": "/runs?p=" + urllib.parse.quote(SAMPLE_MAP_KEY + "/a2", safe=""), "note": f"“{SAMPLE_MAP_KEY}” holds it"},
    ]
    # (PHP's JSON escapes every '/': the last line is written so.)
    rows = "".join(json.dumps(line) + "\n" for line in lines) + json.dumps({"php": f"{SAMPLE_MAP_KEY}/a3"}).replace("/", "\\/") + "\n"
    make_files(bench, {"src": {"rows.ndjson": rows}})
    rules = [{"use": "record-path-to-kit-path", "with": {"map": {SAMPLE_MAP_KEY: "earlier/lme"}}}, {"use": "box-name-to-role", "with": {"names": SAMPLE_NAMES}}]
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=rules)
    build("kit.yaml")
    out = [json.loads(line) for line in (bench / "kit/run/rows.ndjson").read_text().splitlines()]
    assert out == [
        {"log": "loading\nearlier/lme/a0/run.json\ndesktop ready", "rank": "host_desktop_rank0"},
        {"log": "\x1b[1;32mdesktop\x1b[0m wrote \x1b[2Kearlier/lme/a1", "peer": "x.desktop"},
        {"model": "earlier/lme/a0/model.pt", "board": "http://localhost:6006/?logdir=earlier/lme&run=a0#scalars"},
        {"link": "/runs?p=earlier/lme%2Fa2", "note": "“earlier/lme” holds it"},
        {"php": "earlier/lme/a3"},
    ]
    assert verify(bench / "kit").ok


def test_a_map_entry_that_matches_nothing_and_a_rule_that_never_fires_are_warned_of(bench, cli):
    make_files(bench, {"src": {"a.txt": "read /scratch/u7/runs/x\n"}})
    rules = [
        {"use": "record-path-to-kit-path", "with": {"map": {"/scratch/u7/runs": "run", "/scratch/u7/rnus": "run"}}},
        {"use": "box-name-to-role", "with": {"names": {"gpu-b71": "desktop"}}},
    ]
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=rules)
    result = cli("build")
    assert result.exit_code == 0, result.stderr
    assert "  warning: KB905 kit.yaml: rules[0].with.map (entry 2): its path occurs in no file of the sources, so it rewrites nothing; check it for a typo, or remove it\n" in result.stdout
    assert "  warning: KB906 kit.yaml: rules[1] (box-name-to-role) never fired in any file; check its parameters for a typo, or remove it\n" in result.stdout
    assert "rnus" not in result.stdout  # the entry's path is private: only its place is named
    document = json.loads(cli("build", "--format", "json").stdout)
    assert document["ok"] is True and [w["code"] for w in document["warnings"]] == ["KB905", "KB906"]


def test_a_windows_path_a_map_entry_names_is_rewritten_in_each_spelling(bench):
    """A run on a Windows machine prints 'C:\\Users\\ada\\runs\\lme\\a0', which the gate refuses:
    a map entry names it as Windows writes it, and the rule rewrites it as a record prints it
    (JSON doubles each '\\'; Python's pathlib prints '/'). The owner's name in a Users folder is
    private, as under /home."""
    from kitbuild import verify

    windows = "C:\\Users\\ada\\runs\\lme"
    lines = [{"rows": windows + "\\a0\\rows.ndjson"}, {"posix": windows.replace("\\", "/") + "/a1"}]
    make_files(bench, {"src": {"rows.ndjson": "".join(json.dumps(line) + "\n" for line in lines), "notes.txt": f"copied from {windows}\\a2 by ada\n"}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "record-path-to-kit-path", "with": {"map": {windows + "\\": "earlier"}}}])
    with pytest.raises(LeakError) as err:
        build("kit.yaml")
    assert [(f.code, f.path) for f in err.value.findings] == [("KB901", "run/notes.txt")]
    (bench / "src/notes.txt").write_text(f"copied from {windows}\\a2\n")
    build("kit.yaml")
    assert (bench / "kit/run/rows.ndjson").read_text() == '{"rows": "earlier\\\\a0\\\\rows.ndjson"}\n{"posix": "earlier/a1"}\n'
    assert (bench / "kit/run/notes.txt").read_text() == "copied from earlier\\a2\n"
    assert verify(bench / "kit").ok


def test_a_windows_path_glued_to_the_text_before_it_is_rewritten(bench):
    # The gate reads a Windows user folder from its drive letter whatever comes before it (no word
    # runs on into 'C:\Users\'): so does the rule of a map entry that names it.
    from kitbuild import verify

    windows = "C:\\Users\\ada\\runs\\lme"
    make_files(bench, {"src": {"notes.txt": f"run10{windows}\\a0\nété{windows.replace(chr(92), '/')}/a1\n"}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "record-path-to-kit-path", "with": {"map": {windows: "earlier"}}}])
    build("kit.yaml")
    assert (bench / "kit/run/notes.txt").read_text() == "run10earlier\\a0\nétéearlier/a1\n"
    assert verify(bench / "kit").ok


@pytest.mark.parametrize("printed", ["\\/scratch\\/u7\\/runs\\/x", "%2Fscratch%2Fu7%2Fruns%2Fx", "/home/jos\\u00e9/x"])
def test_a_map_entry_printed_only_in_another_spelling_is_no_typo(bench, cli, printed):
    # JSON's escaped '/', percent-encoding, JSON's ASCII escapes: the rule rewrites the path so,
    # and the warning of a map entry no file holds looks for it so too.
    make_files(bench, {"src": {"a.json": '{"p": "%s"}\n' % printed}})
    rules = [{"use": "record-path-to-kit-path", "with": {"map": {"/scratch/u7/runs": "run", "/home/josé": "home"}}}]
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=rules)
    result = cli("build")
    assert result.exit_code == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if "KB905" in line] == [f"  warning: KB905 kit.yaml: rules[0].with.map (entry {2 if 'scratch' in printed else 1}): its path occurs in no file of the sources, so it rewrites nothing; check it for a typo, or remove it"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open descriptors through /proc")
def test_builds_and_verifies_leave_no_descriptor_open(bench):
    # A folder kit keeps the folder of the file it read last open for the next one: it must
    # let go of it when the build (or verify) is done, or a long-lived process runs out.
    from kitbuild.commands.verify import verify

    write_sample_bench(bench)
    build(bench / "kit.yaml", jobs=1)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        build(bench / "kit.yaml", out=bench / "kit", jobs=1)
        verify(bench / "kit", jobs=1)
    assert len(os.listdir("/proc/self/fd")) == before


def test_a_map_entry_seen_only_in_a_file_whose_digests_are_withheld_is_not_warned_of(bench, cli):
    # The file that holds the map entry's path is written twice (its digest of b.txt withheld the
    # second time): what its source held must survive the second writing.
    b = b"ran on gpu-b17\n"
    a = json.dumps({"of": "/scratch/u7/runs/b.txt", "sha256": hashlib.sha256(b).hexdigest()}) + "\n"
    make_files(bench, {"src": {"a.ndjson": a, "b.txt": b.decode()}})
    rules = [
        {"use": "record-path-to-kit-path", "with": {"map": {"/scratch/u7/runs": "run"}}},
        {"use": "box-name-to-role", "with": {"names": {"gpu-b17": "desktop"}}},
        {"use": "digest-withheld", "with": {"placeholder": "withheld"}},
    ]
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=rules)
    result = cli("build", "--format", "json")
    document = json.loads(result.stdout)
    assert document["ok"] is True, result.stdout
    assert (bench / "kit/run/a.ndjson").read_text() == '{"of": "run/b.txt", "sha256": "withheld"}\n'
    assert [w["code"] for w in document["warnings"]] == []


@pytest.mark.parametrize("printed, says", [("GPU-B17", True), ("gpu-b17.other.net", True), ("/home/ada/x", False)])
def test_a_string_a_rule_names_but_did_not_rewrite_is_explained(bench, printed, says):
    """The build names the rule that stands for the string; its advice says why that rule left it
    (another case, a longer name, another field, an encoding) and what to do."""
    make_files(bench, {"src": {"notes.txt": f"ran on {printed}\n"}})
    write_kit(bench, sources=[{"path": "src", "as": "run"}], rules=[{"use": "box-name-to-role", "with": {"names": SAMPLE_NAMES}}])
    with pytest.raises(LeakError) as err:
        build("kit.yaml")
    assert ("A finding that names a rule (rules[N]) is a string that rule rewrites, written here in a form it does not" in str(err.value)) == says
    assert ("add that spelling to its 'names' or 'map'" in str(err.value)) == says


@pytest.mark.parametrize("name", ["events.out.tfevents.1700000000.gpu07.lab.example.org.1234.0", "gpu07.log", "GPU07_rank0.txt"])
def test_a_file_named_after_a_private_machine_stops_the_build_and_the_dry_run(bench, cli, name):
    # A rule never renames a file, and index.json, SHA256SUMS and the pages print every name.
    (bench / "src" / "run").mkdir(parents=True)
    (bench / "src" / "run" / "r.json").write_text('{"route": "gpu07.lab.example.org"}\n')
    (bench / "src" / "run" / name).write_text("x\n")
    config = write_kit(bench, out="kit", sources=[{"path": "src", "as": "s"}], rules=[{"use": "box-name-to-role", "with": {"names": {"gpu07.lab.example.org": "worker"}, "fields": ["route"]}}])
    for args in (("build", config, "--dry-run"), ("build", config)):
        result = cli(*args)
        said = result.stdout + result.stderr
        assert result.exit_code == 1 and not (bench / "kit").exists()
        assert "1 file name holds a private string kit.yaml names" in said and "KB901 s/run/" in said
        assert "gpu07" not in said.lower() and "rename the file in the bench, or exclude it" in said
    (bench / "src" / "run" / name).rename(bench / "src" / "run" / "worker.log")
    assert cli("build", config).exit_code == 0


@pytest.mark.parametrize(
    "text, shown",
    [
        ("the field '/scratch/u7/runs/q.json', which", "the field '[a private path]', which"),
        ("gpu07:/home/ada/x.log and C:\\Users\\ada\\x", "gpu07:[a private path] and [a private path]"),
        ("see file:///srv/u7/a/b z", "see [a file:// URL] z"),
        ("mail ada@uni.example.edu or 10.1.2.3", "mail [an e-mail address] or [a private IPv4 address]"),
        # What every leak finding calls a shape is no path; a pointer or a kit path is none either.
        ("a private path (/home/…) and (C:\\Users\\…)", "a private path (/home/…) and (C:\\Users\\…)"),
        ("/score/all@5 in longmemeval/run/rows.ndjson", "/score/all@5 in longmemeval/run/rows.ndjson"),
    ],
)
def test_a_message_is_scrubbed_of_every_shape_the_gate_looks_for(text: str, shown: str) -> None:
    assert scrub(text, {}) == shown
