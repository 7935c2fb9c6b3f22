"""The promise: "every change to a kit is caught", equally for every file of the kit.

Kits of one source folder with 1, 250 and 2,000 small text records (and one with a README
template that travels with it) are built once per module; each test changes a copy. Every
change must make ``verify`` report the kit not ok, whichever file it touches: a record (the
5th, the 230th, the 1,999th: README.md lists only the first 200 of a folder), SHA256SUMS,
index.json, provenance.json, README.md, index.html, the template. A careful tamperer also fixes
up what pins the changed file (index.json, SHA256SUMS); verify must still find the change, and
``verify(kit, digest=...)`` with the digest the build printed must fail with KB009 whenever
index.json changed, and only then.

What verify cannot be expected to catch is a tamperer who also renders the pages again: only
the digest printed elsewhere (a paper) catches that, and the --digest checks here stand for it.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import shutil
import struct
import tarfile
import uuid
import zipfile
from pathlib import Path
from typing import Callable

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benches import edit_provenance, kit_digest_of, kit_files, repin, rewrite_sums, sha, write_tamper_bench
from kitbuild import KitbuildError, build, verify
from kitbuild.index import index_bytes

SIZES = {"one": 1, "n250": 250, "n2000": 2000, "template": 3}


class Built:
    def __init__(self, kit: Path, digest: str | None, scratch: Path) -> None:
        self.kit = kit
        self.digest = digest  # as the build reported it
        self.scratch = scratch
        self.files = sorted(kit_files(kit))

    def copy(self) -> Path:
        """A copy to tamper with. Records are hard links (2,000 copies per test would cost
        seconds), so a test changes a record only through :func:`write`, which unlinks first."""
        dest = self.scratch / uuid.uuid4().hex

        def link_records(src: str, dst: str) -> None:
            if Path(src).relative_to(self.kit).parts[0] == "runs":
                try:
                    os.link(src, dst)
                    return
                except OSError:
                    pass  # a file system without hard links: copy
            shutil.copy2(src, dst)

        shutil.copytree(self.kit, dest, symlinks=True, copy_function=link_records)
        return dest


def write(path: Path, data: bytes) -> None:
    """Replace a file of a copied kit without touching the kit it was linked from."""
    path.unlink()
    path.write_bytes(data)


@pytest.fixture(scope="module")
def kits(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Built]:
    out = {}
    for name, n in SIZES.items():
        root = tmp_path_factory.mktemp(name)
        config = write_tamper_bench(root, n, template=name == "template")
        report = build(config, jobs=1)
        out[name] = Built(root / "kit", report.digest, tmp_path_factory.mktemp(name + "-copies"))
    return out


def caught(kit: Path, digest: str | None = None) -> tuple[bool, set[str]]:
    """Whether verify reports the kit not ok (or refuses it as no kit), and its codes."""
    try:
        report = verify(kit, jobs=1, digest=digest)
    except KitbuildError as error:
        assert error.exit_code == 2, error
        return True, {"not a kit"}
    return not report.ok, report.codes()


def assert_caught(built: Built, kit: Path, what: str, *, index_changed: bool) -> None:
    """verify finds the change, and verify --digest with the build's digest adds KB009 exactly
    when index.json changed. (One run: --digest only adds its KB009 to what verify finds.)"""
    bad, codes = caught(kit, built.digest)
    if codes == {"not a kit"}:
        return
    assert codes - {"KB009"}, f"{what}: verify found nothing" + (" (only --digest caught it)" if codes else "")
    if index_changed:
        assert "KB009" in codes, f"{what}: index.json changed but the kit digest was not refused: {codes}"
    else:
        assert "KB009" not in codes, f"{what}: index.json did not change, yet KB009"


def named_files(built: Built) -> list[str]:
    """The kit's own files and the records the tests name, as they exist in this kit."""
    records = [f for f in built.files if f.startswith("runs/")]
    picks = {records[i] for i in (0, 4, 229, 1998) if i < len(records)}
    return sorted(picks | {f for f in built.files if not f.startswith("runs/")})


# -- the fresh kit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", SIZES)
def test_the_fresh_kit_verifies_and_its_digest_is_the_sha256_of_index_json(kits, name):
    built = kits[name]
    report = verify(built.kit, jobs=1)
    assert report.ok, [str(f) for f in report.findings]
    assert report.digest == kit_digest_of(built.kit)
    assert built.digest == report.digest, "build reported another digest than the kit's"
    assert verify(built.kit, jobs=1, digest=built.digest).ok
    # The bare hex, as a paper might print it, and in capitals.
    assert verify(built.kit, jobs=1, digest=built.digest.removeprefix("sha256:").upper()).ok
    other = verify(built.kit, jobs=1, digest="sha256:" + sha(b"another kit"))
    assert not other.ok and other.codes() == {"KB009"}


def test_the_kits_hold_what_the_tests_name(kits):
    assert "_templates/README.md.j2" in kits["template"].files
    assert len([f for f in kits["n2000"].files if f.startswith("runs/")]) == 2000
    assert {"SHA256SUMS", "index.json", "provenance.json", "README.md", "index.html"} <= set(kits["one"].files)


# -- (a) one byte flipped --------------------------------------------------------------------------


@pytest.mark.parametrize("name", SIZES)
def test_one_flipped_byte_is_caught_in_every_named_file(kits, name):
    built = kits[name]
    for path in named_files(built):
        kit = built.copy()
        data = bytearray((kit / path).read_bytes())
        at = len(data) // 2
        data[at] ^= 0x20
        write(kit / path, bytes(data))
        assert_caught(built, kit, f"{path}: byte {at} flipped", index_changed=path == "index.json")
        shutil.rmtree(kit)


@pytest.mark.parametrize("name, examples", [("one", 10), ("n250", 12), ("n2000", 4), ("template", 10)])
def test_one_flipped_byte_anywhere_is_caught(kits, name, examples):
    built = kits[name]

    @settings(max_examples=examples, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(st.integers(0, len(built.files) - 1), st.integers(0, 1 << 20), st.integers(1, 255))
    def one(which, offset, mask):
        path = built.files[which]
        kit = built.copy()
        data = bytearray((kit / path).read_bytes())
        at = offset % len(data)
        data[at] ^= mask
        write(kit / path, bytes(data))
        assert_caught(built, kit, f"{path}: byte {at} ^ {mask:#x}", index_changed=path == "index.json")
        shutil.rmtree(kit)

    one()


# -- (b) a record edited, index.json and SHA256SUMS fixed up -----------------------------------------

@pytest.mark.parametrize(
    "name, record",
    [("one", 0), ("n250", 4), ("n250", 229), ("n2000", 4), ("n2000", 229), ("n2000", 1998), ("template", 1)],
)
def test_an_edited_record_is_caught_though_index_json_and_sha256sums_are_fixed_up(kits, name, record):
    built = kits[name]
    path = [f for f in built.files if f.startswith("runs/")][record]
    kit = built.copy()
    data = (kit / path).read_bytes()
    forged = data.replace(b"record", b"RECORD") if b"record" in data else b"X" + data[1:]
    assert forged != data and len(forged) == len(data)
    write(kit / path, forged)
    rewrite_sums(kit)
    repin(kit)
    # The fix-up is complete: index.json, SHA256SUMS and provenance.json's pin agree with the files.
    assert caught(kit, None)[1] <= {"KB601", "KB603"}
    assert_caught(built, kit, f"{path} edited, pins fixed up", index_changed=True)


@pytest.mark.parametrize("record", [4, 229, 1998])
def test_an_edited_record_is_caught_with_the_digest_the_build_printed(kits, record):
    built = kits["n2000"]
    path = [f for f in built.files if f.startswith("runs/")][record]
    kit = built.copy()
    write(kit / path, (kit / path).read_bytes().replace(b"record", b"RECORD"))
    rewrite_sums(kit)
    repin(kit)
    bad, codes = caught(kit, built.digest)
    assert bad and "KB009" in codes


# -- (c) a file added, (d) a file removed ------------------------------------------------------------


@pytest.mark.parametrize("name", ["one", "template"])
@pytest.mark.parametrize("added", ["extra.txt", "runs/extra.txt", "runs/new/deep/extra.json", ".hidden", "runs/.DS_Store", "_templates/extra.j2", "index.json.bak"])
def test_an_added_file_is_caught(kits, name, added):
    built = kits[name]
    kit = built.copy()
    (kit / added).parent.mkdir(parents=True, exist_ok=True)
    (kit / added).write_bytes(b"added after the build\n")
    assert_caught(built, kit, f"{added} added", index_changed=False)


@pytest.mark.parametrize("name", SIZES)
def test_every_named_file_removed_is_caught(kits, name):
    built = kits[name]
    for path in named_files(built):
        kit = built.copy()
        (kit / path).unlink()
        assert_caught(built, kit, f"{path} removed", index_changed=path == "index.json")
        shutil.rmtree(kit)


@pytest.mark.parametrize("how", ["an empty folder", "a FIFO", "a symlink to itself"])
def test_every_named_file_replaced_by_what_is_no_file_is_caught(kits, how):
    # A page replaced by an empty folder passed as "every check passes"; provenance.json so
    # made verify refuse the kit as no kit (exit 2) instead of reporting it.
    built = kits["one"]
    for path in named_files(built):
        kit = built.copy()
        (kit / path).unlink()
        {"an empty folder": lambda p: p.mkdir(), "a FIFO": os.mkfifo, "a symlink to itself": lambda p: p.symlink_to(p.name)}[how](kit / path)
        if path == "index.json":
            assert caught(kit) == (True, {"not a kit"})
        else:
            assert caught(kit)[1] != {"not a kit"}, f"{path} replaced by {how}: refused as no kit"
            assert_caught(built, kit, f"{path} replaced by {how}", index_changed=False)
        shutil.rmtree(kit)


@pytest.mark.parametrize("name, examples", [("n250", 8), ("template", 6)])
def test_any_file_removed_is_caught(kits, name, examples):
    built = kits[name]

    @settings(max_examples=examples, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(st.integers(0, len(built.files) - 1))
    def one(which):
        path = built.files[which]
        kit = built.copy()
        (kit / path).unlink()
        assert_caught(built, kit, f"{path} removed", index_changed=path == "index.json")
        shutil.rmtree(kit)

    one()


def test_a_removed_record_is_caught_though_index_json_and_sha256sums_are_fixed_up(kits):
    built = kits["n250"]
    kit = built.copy()
    (kit / "runs" / "r00229.txt").unlink()
    index = orjson.loads((kit / "index.json").read_bytes())
    index["files"] = [e for e in index["files"] if e["path"] != "runs/r00229.txt"]
    (kit / "index.json").write_bytes(index_bytes(index["kit"], index["files"], index["provenance"]))
    rewrite_sums(kit)
    repin(kit)
    # provenance.json still counts 250 records (KB305), and the pages say 250 files.
    assert_caught(built, kit, "runs/r00229.txt removed, pins fixed up", index_changed=True)


# -- (e) SHA256SUMS respelled, its pin fixed up --------------------------------------------------------


def _reorder(lines: list[bytes]) -> list[bytes]:
    return lines[::-1]


def _star(lines: list[bytes]) -> list[bytes]:
    return [line.replace(b"  ", b" *", 1) for line in lines]


def _upper(lines: list[bytes]) -> list[bytes]:
    return [line[:64].upper() + line[64:] for line in lines]


RESPELLINGS = {"lines reordered": _reorder, "' *' markers": _star, "upper-case hex": _upper}


@pytest.mark.parametrize("name", ["n250", "n2000", "template"])
@pytest.mark.parametrize("respelling", RESPELLINGS)
def test_a_respelled_sha256sums_is_caught_though_its_pin_is_fixed_up(kits, name, respelling):
    built = kits[name]
    kit = built.copy()
    lines = (kit / "SHA256SUMS").read_bytes().splitlines(keepends=True)
    respelled = b"".join(RESPELLINGS[respelling](lines))
    assert respelled != b"".join(lines)
    (kit / "SHA256SUMS").write_bytes(respelled)
    repin(kit)
    ok_caught, codes = caught(kit)
    assert ok_caught and "KB208" in codes, codes
    assert_caught(built, kit, f"SHA256SUMS with {respelling}", index_changed=True)


def test_sha256sums_with_crlf_line_ends_or_no_final_newline_is_caught(kits):
    built = kits["n250"]
    for respell in (lambda b: b.replace(b"\n", b"\r\n"), lambda b: b.rstrip(b"\n")):
        kit = built.copy()
        (kit / "SHA256SUMS").write_bytes(respell((kit / "SHA256SUMS").read_bytes()))
        repin(kit)
        assert_caught(built, kit, "SHA256SUMS respelled", index_changed=True)


# -- (f) a provenance.json field no page prints, its pin fixed up -----------------------------------------

def _version(doc):
    doc["tool"]["version"] = doc["tool"]["version"] + ".post1"


def _why(doc):
    doc["allow"][0]["why"] = "changed after the build"


def _check_pin_alone(built: Built, change) -> None:
    kit = built.copy()
    edit_provenance(kit, change)
    # Without the fix-up the pin catches it.
    ok_caught, codes = caught(kit)
    assert ok_caught and "KB008" in codes, codes
    repin(kit)
    assert_caught(built, kit, "provenance.json edited, its pin fixed up", index_changed=True)


@pytest.mark.parametrize("change", [_version, _why], ids=["tool.version", "allow[0].why"])
@pytest.mark.parametrize("name", ["one", "n2000"])
def test_a_provenance_field_no_page_prints_is_caught_though_its_pin_is_fixed_up(kits, name, change):
    _check_pin_alone(kits[name], change)


@pytest.mark.parametrize("change", [_version, _why], ids=["tool.version", "allow[0].why"])
def test_a_provenance_field_no_page_prints_is_caught_with_the_digest_the_build_printed(kits, change):
    built = kits["one"]
    kit = built.copy()
    edit_provenance(kit, change)
    repin(kit)
    bad, codes = caught(kit, built.digest)
    assert bad and "KB009" in codes



# -- index.json and provenance.json respelled: the same data, other bytes -----------------------------


def _respell_index(how: str, data: bytes) -> bytes:
    doc = orjson.loads(data)
    if how == "entries unsorted":
        doc["files"] = doc["files"][::-1]
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    if how == "keys reordered":
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    if how == "compact":
        return orjson.dumps(doc) + b"\n"
    assert how == "no final newline"
    return data.rstrip(b"\n")


@pytest.mark.parametrize("how", ["entries unsorted", "keys reordered", "compact", "no final newline"])
def test_a_respelled_index_json_is_caught(kits, how):
    built = kits["n250"]
    kit = built.copy()
    respelled = _respell_index(how, (kit / "index.json").read_bytes())
    assert respelled != (kit / "index.json").read_bytes()
    (kit / "index.json").write_bytes(respelled)
    assert_caught(built, kit, f"index.json {how}", index_changed=True)


@pytest.mark.parametrize("name", ["one", "template"])
def test_a_respelled_provenance_json_is_caught_though_its_pin_is_fixed_up(kits, name):
    built = kits[name]
    kit = built.copy()
    doc = orjson.loads((kit / "provenance.json").read_bytes())
    (kit / "provenance.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    repin(kit)
    assert_caught(built, kit, "provenance.json respelled", index_changed=True)


@pytest.mark.parametrize("name", ["provenance.json", "index.json"])
def test_keys_reordered_are_reported_as_not_laid_out_as_kitbuild_writes_them(kits, name):
    built = kits["one"]
    kit = built.copy()
    doc = orjson.loads((kit / name).read_bytes())
    (kit / name).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    if name == "provenance.json":
        repin(kit)
    _, codes = caught(kit)
    assert {"KB003", "KB007"} & codes, codes


@pytest.mark.parametrize("at", [0, 4, 230])
def test_one_entry_with_its_keys_reordered_anywhere_in_index_json_is_caught(kits, at):
    built = kits["n250"]
    kit = built.copy()
    doc = orjson.loads((kit / "index.json").read_bytes())
    entry = doc["files"][at]
    doc["files"][at] = {"size": entry["size"], "path": entry["path"], "sha256": entry["sha256"]}
    (kit / "index.json").write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    report = verify(kit, jobs=1)
    assert [(f.code, f.message.split(":")[0]) for f in report.findings if f.code == "KB003"] == [("KB003", f"files[{at}]")]


@pytest.mark.parametrize("pinned", [False, True], ids=["pin stale", "pin fixed up"])
def test_an_allow_entry_too_long_to_scan_is_a_finding_not_a_crash(kits, pinned):
    built = kits["one"]
    kit = built.copy()
    edit_provenance(kit, lambda doc: doc["allow"][0].__setitem__("text", "/home/" + "a" * 600))
    if pinned:
        repin(kit)
    assert_caught(built, kit, "a 606-byte allow entry", index_changed=pinned)


def test_the_copies_left_each_kit_as_it_was_built(kits):
    # (Last in the module: every copy above shares its records with these kits.)
    for built in kits.values():
        assert verify(built.kit, jobs=1).ok
        assert kit_digest_of(built.kit) == built.digest


@pytest.mark.parametrize("folder", [".hidden", "runs/extra", "new/deeper/still"])
def test_an_added_empty_folder_is_caught_and_a_folder_holding_only_folders_is_too(kits, folder):
    built = kits["n250"]
    kit = built.copy()
    (kit / folder).mkdir(parents=True)
    report = verify(kit, jobs=1)
    assert [(f.code, f.path) for f in report.findings] == [("KB101", folder.split("/")[0] if folder.startswith("new") else folder)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_whose_name_is_not_utf_8_is_caught_and_named_printably(kits, jobs, cli):
    built = kits["one"]
    kit = built.copy()
    with open(os.path.join(os.fsencode(kit), b"r\xe9sultats.json"), "wb") as odd:
        odd.write(b"{}\n")
    report = verify(kit, jobs=jobs)
    assert [(f.code, f.path) for f in report.findings] == [("KB101", "r\\xe9sultats.json")]
    result = cli("verify", kit, "--jobs", str(jobs), "--format", "json")
    assert result.exit_code == 1 and orjson.loads(result.stdout)["findings"][0]["path"] == "r\\xe9sultats.json"


def test_a_zip_member_whose_mode_alone_says_folder_is_read_as_the_file_it_extracts_to(kits, tmp_path):
    # unzip and zipfile write such a member as a file (only a name ending in '/' is a folder):
    # a README or a record put in the archive so was never read.
    import stat
    import zipfile

    from kitbuild.commands.publish import publish

    archive = publish(kits["one"].kit, "zip", tmp_path / "k.zip").archive
    for name, data, code in (("README.md", b"# Another README\n", "KB601"), ("extra.ndjson", b'{"score": 1}\n', "KB101")):
        changed = tmp_path / f"{code}.zip"
        with zipfile.ZipFile(archive) as source, zipfile.ZipFile(changed, "w") as out:
            top = source.namelist()[0].split("/")[0]
            for info in source.infolist():
                if info.filename != f"{top}/{name}":
                    out.writestr(info, source.read(info))
            odd = zipfile.ZipInfo(f"{top}/{name}", date_time=(2026, 11, 9, 0, 0, 0))
            odd.create_system, odd.external_attr = 3, (stat.S_IFDIR | 0o755) << 16
            out.writestr(odd, data)
        with zipfile.ZipFile(changed) as check:
            assert not check.getinfo(f"{top}/{name}").is_dir()
        assert code in verify(changed, jobs=1).codes()


# -- a count written as a float: the same number to JSON Schema, the same bytes dumped again ----------


@pytest.mark.parametrize(
    "name, pattern, pinned, code",
    [
        ("index.json", rb'("size": )(\d+)', False, "KB002"),  # the first entry's size
        ("index.json", rb'("provenance": \{[^}]*"size": )(\d+)', False, "KB002"),
        ("provenance.json", rb'("records": )(\d+)', True, "KB006"),
        ("provenance.json", rb'("files": )(\d+)', True, "KB006"),
    ],
    ids=["an entry's size", "provenance's size", "records", "a source's files"],
)
def test_a_count_respelled_as_a_float_is_a_finding_on_the_file_that_holds_it(kits, name, pattern, pinned, code):
    # JSON Schema takes 12.0 for an integer and orjson dumps it back as 12.0, so neither the
    # schema nor the layout check saw it: only pages and croissant.json (or nothing) were reported.
    built = kits["template"]
    kit = built.copy()
    data = (kit / name).read_bytes()
    respelled = re.sub(pattern, rb"\g<1>\g<2>.0", data, count=1)
    assert respelled != data
    (kit / name).write_bytes(respelled)
    if pinned:
        repin(kit)
    report = verify(kit, jobs=1)
    assert (code, name) in {(f.code, f.path) for f in report.findings}, [str(f) for f in report.findings]
    assert_caught(built, kit, f"{name}: a count as a float", index_changed=True)


# -- an archive whose compressed data for one of the kit's own files is damaged ------------------------


def _flip_zip_member(archive: Path, out: Path, member: str) -> Path:
    """``archive`` with one byte in the middle of ``member``'s compressed data changed."""
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        info = z.getinfo(member)
    names, extra = struct.unpack_from("<HH", data, info.header_offset + 26)
    data[info.header_offset + 30 + names + extra + info.compress_size // 2] ^= 0x55
    out.write_bytes(data)
    return out


@pytest.mark.parametrize("path", ["README.md", "index.html", "provenance.json", "croissant.json", "_templates/README.md.j2", "SHA256SUMS"])
def test_a_damaged_zip_member_of_the_kits_own_files_is_a_finding_naming_it(kits, tmp_path, path, cli):
    # Only the records' reads turned a damaged member into a finding: the reads of the pages,
    # provenance.json, croissant.json and the template let the decoder's error through, and
    # verify stopped with "the system refused to read or write a file".
    from kitbuild.commands.publish import publish

    archive = publish(kits["template"].kit, "zip", tmp_path / "k.zip").archive
    with zipfile.ZipFile(archive) as z:
        top = z.namelist()[0].split("/")[0]
    damaged = _flip_zip_member(archive, tmp_path / "damaged.zip", f"{top}/{path}")
    report = verify(damaged, jobs=1)
    assert ("KB111", path) in {(f.code, f.path) for f in report.findings}, [str(f) for f in report.findings]
    result = cli("verify", damaged)
    assert result.exit_code == 1, result.output


def test_a_damaged_index_json_in_a_zip_is_no_kit_with_a_message_that_says_so(kits, tmp_path, cli):
    from kitbuild.commands.publish import publish

    archive = publish(kits["one"].kit, "zip", tmp_path / "k.zip").archive
    with zipfile.ZipFile(archive) as z:
        top = z.namelist()[0].split("/")[0]
    damaged = _flip_zip_member(archive, tmp_path / "damaged.zip", f"{top}/index.json")
    result = cli("verify", damaged)
    assert result.exit_code == 2
    assert "index.json cannot be read (the archive's data for it is damaged" in result.output, result.output


def test_a_tar_gz_cut_inside_provenance_json_is_a_finding_naming_it(kits, tmp_path):
    from kitbuild.commands.publish import publish

    archive = publish(kits["n250"].kit, "tar.gz", tmp_path / "k.tar.gz").archive
    raw = gzip.decompress(archive.read_bytes())
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith("/provenance.json"))
    cut = tmp_path / "cut.tar.gz"
    # Compressed again, then cut: the stream ends inside provenance.json's data.
    compressed = gzip.compress(raw[: member.offset_data + member.size // 2] + b"\1" * 512, mtime=0)
    cut.write_bytes(compressed[: len(compressed) - 40])
    report = verify(cut, jobs=1)
    codes = {(f.code, f.path) for f in report.findings}
    assert ("KB004", "provenance.json") in codes or ("KB111", "provenance.json") in codes, codes


# -- a .tar.gz changed after its last member ----------------------------------------------------------


def _one_member_tar(name: str, data: bytes) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def _tar_tails(top: str) -> dict[str, Callable[[bytes], bytes]]:
    hidden = _one_member_tar(f"{top}/runs/hidden.txt", b"extracted by tar -i\n")

    def garbage_header(gz: bytes) -> bytes:
        # A block that is no header, then a member: tarfile ends at the block, GNU tar skips it.
        raw = gzip.decompress(gz).rstrip(b"\0")
        raw += b"\0" * (-len(raw) % 512)
        return gzip.compress(raw + b"x" * 512 + hidden, mtime=0)

    return {
        "bytes after the gzip stream": lambda gz: gz + b"trailing",
        "a second gzip member with a tar in it": lambda gz: gz + gzip.compress(hidden, mtime=0),
        "a damaged header, then a member": garbage_header,
        "the gzip trailer cut": lambda gz: gz[:-4],
        "the gzip trailer's CRC changed": lambda gz: gz[:-8] + bytes(b ^ 0xFF for b in gz[-8:-4]) + gz[-4:],
    }


@pytest.mark.parametrize("how", list(_tar_tails("kit")))
def test_a_tar_gz_changed_after_its_last_member_is_caught(kits, tmp_path, how):
    # verify stopped reading where tarfile stops, at the first block that is no header, and never
    # read the gzip stream to its end: what GNU tar or 'tar -i' may still extract after that
    # point, and a stream cut or changed in its last bytes, passed as 'every check passes'.
    from kitbuild.commands.publish import publish

    archive = publish(kits["one"].kit, "tar.gz", tmp_path / "k.tar.gz").archive
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
    changed = tmp_path / "changed.tar.gz"
    changed.write_bytes(_tar_tails(top)[how](archive.read_bytes()))
    report = verify(changed, jobs=1)
    assert [(f.code, f.path) for f in report.findings] == [("KB117", "changed.tar.gz")], [str(f) for f in report.findings]


def test_a_tar_gz_with_zero_padding_after_its_stream_or_its_tar_verifies_clean(kits, tmp_path):
    # gzip reads zeros after its stream as padding, and a tar's record ends in zero blocks.
    from kitbuild.commands.publish import publish

    archive = publish(kits["one"].kit, "tar.gz", tmp_path / "k.tar.gz").archive
    padded = tmp_path / "padded.tar.gz"
    padded.write_bytes(gzip.compress(gzip.decompress(archive.read_bytes()) + b"\0" * (1 << 20), mtime=0) + b"\0" * 1000)
    assert verify(padded, jobs=1).ok


# -- a .zip whose bytes say more than its central directory ---------------------------------------------


def _hidden_local_entry(data: bytes, top: str) -> bytes:
    """A local entry put before the central directory, which no central directory entry names:
    unzip does not extract it, a streaming reader does."""
    one = io.BytesIO()
    with zipfile.ZipFile(one, "w") as z:
        z.writestr(f"{top}/runs/hidden.txt", b"extracted by a streaming reader\n")
    local = one.getvalue()[: one.getvalue().index(b"PK\x01\x02")]
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        start = z.start_dir  # type: ignore[attr-defined]
    out = bytearray(data[:start] + local + data[start:])
    struct.pack_into("<I", out, out.rindex(b"PK\x05\x06") + 16, start + len(local))
    return bytes(out)


def _local_field(offset: int, value: int) -> Callable[[bytes, str], bytes]:
    """The first file member's local header with the field at ``offset`` changed; its central
    directory entry, which zipfile reads, left as it was."""

    def change(data: bytes, top: str) -> bytes:
        out = bytearray(data)
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            info = next(i for i in z.infolist() if not i.is_dir())
        struct.pack_into("<H" if offset == 8 else "<I", out, info.header_offset + offset, value)
        return bytes(out)

    return change


def _local_folder_name(data: bytes, top: str) -> bytes:
    """A folder entry's local header naming another folder: zipfile never opens a folder, so it
    never compares the two names; a streaming reader makes the other folder."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = next(i for i in z.infolist() if i.is_dir() and i.filename != f"{top}/")
    at = info.header_offset + 30 + len(info.filename) - 2  # its last letter, before the '/'
    out[at] = ord("x") if out[at] != ord("x") else ord("y")
    return bytes(out)


ZIP_CHANGES: dict[str, Callable[[bytes, str], bytes]] = {
    "a local entry the central directory does not name": _hidden_local_entry,
    "bytes after the end-of-central-directory record": lambda data, top: data + b"trailing",
    "a local header's CRC changed": _local_field(14, 0xDEADBEEF),
    "a local header's method changed to stored": _local_field(8, 0),
    "a local header's folder name changed": _local_folder_name,
}


@pytest.mark.parametrize("how", ZIP_CHANGES)
def test_a_zip_whose_bytes_say_more_than_its_central_directory_is_caught(kits, tmp_path, how):
    # zipfile reads a zip from its central directory and takes the rest for granted: each of
    # these passed as 'every check passes', though a streaming reader extracts another file or
    # other bytes from it.
    from kitbuild.commands.publish import publish

    archive = publish(kits["one"].kit, "zip", tmp_path / "k.zip").archive
    with zipfile.ZipFile(archive) as z:
        top = z.namelist()[0].split("/")[0]
    changed = tmp_path / "changed.zip"
    changed.write_bytes(ZIP_CHANGES[how](archive.read_bytes(), top))
    report = verify(changed, jobs=1)
    assert report.findings, f"{how}: verify found nothing"
    if how.startswith("a local header"):
        assert {f.code for f in report.findings} >= {"KB111"}, [str(f) for f in report.findings]
    else:
        assert [(f.code, f.path) for f in report.findings] == [("KB117", "changed.zip")], [str(f) for f in report.findings]


def _zip_as_unix_zip_writes_it(folder: Path, out: Path, top: str) -> Path:
    """As Info-ZIP's ``zip -r`` on Linux writes it: names as the file system's bytes, with no
    UTF-8 flag, made on Unix."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as z:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                z.writestr(f"{top}/{path.relative_to(folder).as_posix()}", path.read_bytes())
    data = bytearray(raw.getvalue())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        infos = z.infolist()
        entry = z.start_dir  # type: ignore[attr-defined]
    for info in infos:  # no UTF-8 flag, made on Unix, in both headers
        struct.pack_into("<H", data, info.header_offset + 6, struct.unpack_from("<H", data, info.header_offset + 6)[0] & ~0x800)
        struct.pack_into("<H", data, entry + 8, struct.unpack_from("<H", data, entry + 8)[0] & ~0x800)
        data[entry + 5] = 3
        names, extra, comment = struct.unpack_from("<HHH", data, entry + 28)
        entry += 46 + names + extra + comment
    out.write_bytes(data)
    return out


def test_a_zip_as_unix_zip_writes_it_verifies_clean_with_a_non_ascii_name(tmp_path):
    # zipfile reads a name without the UTF-8 flag as code page 437: 'café.json' was read as
    # 'caf├⌐.json', so a kit zipped with 'zip -r' on Linux reported one file missing and another extra.
    root = tmp_path / "bench"
    config = write_tamper_bench(root, 3)
    (root / "src" / "café.json").write_text('{"score": 1}\n', encoding="utf-8")
    report = build(config, jobs=1)
    assert report.digest
    archive = _zip_as_unix_zip_writes_it(root / "kit", tmp_path / "k.zip", "kit")
    with zipfile.ZipFile(archive) as z:
        assert "kit/runs/caf\u251c\u2310.json" in z.namelist()  # as zipfile reads it
    result = verify(archive, jobs=1)
    assert result.ok, [str(f) for f in result.findings]


@pytest.mark.parametrize("how", ["stored", "data descriptors", "zip64"])
def test_zips_other_writers_make_verify_clean(kits, tmp_path, how):
    # The layout check counts each member's data descriptor and zip64 fields as its own.
    kit = kits["one"].kit
    out = tmp_path / "k.zip"

    class Pipe(io.RawIOBase):  # not seekable: zipfile writes data descriptors
        def __init__(self, stream):
            self.stream = stream

        def writable(self):
            return True

        def write(self, b):
            return self.stream.write(b)

    with open(out, "wb") as stream:
        target = Pipe(stream) if how == "data descriptors" else stream
        with zipfile.ZipFile(target, "w", zipfile.ZIP_STORED if how == "stored" else zipfile.ZIP_DEFLATED) as z:
            for path in sorted(kit.rglob("*")):
                if path.is_file():
                    with z.open(f"kit/{path.relative_to(kit).as_posix()}", "w", force_zip64=how == "zip64") as member:
                        member.write(path.read_bytes())
    if how == "data descriptors":
        with zipfile.ZipFile(out) as z:
            assert all(i.flag_bits & 0x08 for i in z.infolist())
    result = verify(out, jobs=1)
    assert result.ok, [str(f) for f in result.findings]
