"""kitbuild verify on archives: read in place, never extracted, hostile members refused (issue 6).

Every hostile archive is built in tmp_path from the small verify kit plus one crafted member; a
member that claims 10 GB is a header that says so over a few bytes, never 10 GB written.
"""

from __future__ import annotations

import builtins
import gzip
import io
import os
import shutil
import tarfile
import zipfile
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from kitbuild.cli import app
from kitbuild.commands.publish import publish
from kitbuild.commands.verify import verify
from kitbuild.findings import CODES
from kitbuild.kitfs import ArchiveLimits, MemberError, NotAKitError, open_kit
from kitbuild.verify_report import verify_document, verify_text

from .verify_kits import KIT_NAME, build_kit

GB10 = 10 * 10**9
LS = "learned-sparse-2026-11-07"
NOTES = f"{LS}/notes.txt"


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_kit(tmp_path_factory.mktemp("bench"))


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


# -- building archives by hand ------------------------------------------------------------------


def _kit_members(kit: Path, top: str = KIT_NAME) -> list[tuple[str, bytes]]:
    return [(f"{top}/{p.relative_to(kit).as_posix()}", p.read_bytes()) for p in sorted(kit.rglob("*")) if p.is_file()]


def make_tar(path: Path, kit: Path, extra: Callable[[tarfile.TarFile], None] | None = None, top: str = KIT_NAME) -> Path:
    """A .tar.gz of ``kit`` under ``top/``, then whatever ``extra`` adds."""
    with gzip.open(path, "wb") as gz, tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for name, data in _kit_members(kit, top):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        if extra is not None:
            extra(tar)
    return path


def make_zip(path: Path, kit: Path, extra: Callable[[zipfile.ZipFile], None] | None = None) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in _kit_members(kit):
            zf.writestr(name, data)
        if extra is not None:
            extra(zf)
    return path


def _add(tar: tarfile.TarFile, name: str, data: bytes = b"x\n", **fields: object) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in fields.items():
        setattr(info, key, value)
    tar.addfile(info, io.BytesIO(data) if info.isreg() else None)


def _claims_10_gb(tar: tarfile.TarFile) -> None:
    """A regular member whose header claims 10 GB, followed by a few bytes and the end of the tar."""
    info = tarfile.TarInfo(f"{KIT_NAME}/{LS}/huge.bin")
    info.size = GB10
    tar.fileobj.write(info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape"))
    tar.fileobj.write(b"only a few bytes".ljust(512, b"\0"))
    tar.offset += 1024


@pytest.fixture
def no_writes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path opened for writing while verify runs (there must be none)."""
    written: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, mode="r", *args, **kwargs):  # type: ignore[no-untyped-def]
        if any(c in str(mode) for c in "wax+"):
            written.append(os.fspath(file) if not isinstance(file, int) else str(file))
        return real_open(file, mode, *args, **kwargs)

    def spy_os_open(path, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        if flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
            written.append(os.fspath(path))
        return real_os_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    return written


# -- the happy path -----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_a_published_demo_kit_verifies_with_the_same_figures_as_its_folder(demo_kit: Path, tmp_path: Path, fmt: str, no_writes: list[str]) -> None:
    archive = publish(demo_kit, fmt, tmp_path / f"demo.{fmt}").archive
    no_writes.clear()
    folder = verify(demo_kit)
    packed = verify(archive)
    assert no_writes == []
    assert packed.findings == [] and packed.exit_code == 0
    assert [c.figures for c in packed.checks] == [c.figures for c in folder.checks]
    assert verify_text(packed).split("\n", 1)[1] == verify_text(folder).split("\n", 1)[1]
    code, out, err = run_cli("verify", str(archive))
    assert (code, err) == (0, "")
    assert out.startswith(f"kitbuild verify {archive}: every check passes\n")


def test_a_tgz_named_archive_and_one_with_the_kit_at_its_root(kit: Path, tmp_path: Path) -> None:
    assert verify(make_tar(tmp_path / "k.tgz", kit)).ok
    with gzip.open(tmp_path / "root.tar.gz", "wb") as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for name, data in _kit_members(kit, "."):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert verify(tmp_path / "root.tar.gz").ok


def test_an_edited_member_is_caught_like_an_edited_file(kit: Path, tmp_path: Path) -> None:
    edited = shutil.copytree(kit, tmp_path / "edited")
    (edited / NOTES).write_bytes(b"edited\n")
    report = verify(make_zip(tmp_path / "k.zip", edited))
    assert {(f.code, f.path) for f in report.findings} >= {("KB103", NOTES), ("KB104", NOTES)}


# -- hostile members ----------------------------------------------------------------------------


def test_a_member_named_dot_dot_is_refused_and_never_read(kit: Path, tmp_path: Path, no_writes: list[str]) -> None:
    archive = make_tar(tmp_path / "k.tar.gz", kit, lambda t: _add(t, "../x", b"outside\n"))
    no_writes.clear()
    report = verify(archive)
    assert no_writes == []
    assert [str(f) for f in report.findings] == ["KB112 k.tar.gz: holds a member named '../x', which climbs out of the kit with '..'; verify never reads it"]
    assert report.exit_code == 1
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("name, why", [("/etc/passwd", "is absolute"), (f"{KIT_NAME}/a/../../x", "climbs out of the kit with '..'"), (f"{KIT_NAME}/a\\b", "holds a backslash")])
def test_members_that_climb_out_or_are_absolute_are_refused(kit: Path, tmp_path: Path, name: str, why: str) -> None:
    report = verify(make_tar(tmp_path / "k.tar.gz", kit, lambda t: _add(t, name)))
    assert [str(f) for f in report.findings] == [f"KB112 k.tar.gz: holds a member named {name!r}, which {why}; verify never reads it"]


def test_a_symlink_member_is_a_finding_and_never_followed(kit: Path, tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "k.tar.gz", kit, lambda t: _add(t, f"{KIT_NAME}/{LS}/pw", b"", type=tarfile.SYMTYPE, linkname="/etc/passwd"))
    report = verify(archive)
    assert [str(f) for f in report.findings] == [f"KB106 {LS}/pw: is a symlink; a kit holds regular files only, and verify never follows a link"]
    with pytest.raises(MemberError, match="symlink"):
        open_kit(archive).open(f"{LS}/pw")


def test_a_symlink_member_in_a_zip_is_a_finding(kit: Path, tmp_path: Path) -> None:
    def link(zf: zipfile.ZipFile) -> None:
        info = zipfile.ZipInfo(f"{KIT_NAME}/{LS}/pw")
        info.create_system = 3
        info.external_attr = (0o120777) << 16
        zf.writestr(info, "/etc/passwd")

    report = verify(make_zip(tmp_path / "k.zip", kit, link))
    assert [f.code for f in report.findings] == ["KB106"]


def test_a_hard_link_member_is_refused(kit: Path, tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "k.tar.gz", kit, lambda t: _add(t, f"{KIT_NAME}/{LS}/hl", b"", type=tarfile.LNKTYPE, linkname=f"{KIT_NAME}/{NOTES}"))
    assert [str(f) for f in verify(archive).findings] == [f"KB113 {LS}/hl: is a hard link; a kit holds regular files only, and verify never follows a link"]


def test_device_and_fifo_members_are_refused(kit: Path, tmp_path: Path) -> None:
    def specials(tar: tarfile.TarFile) -> None:
        _add(tar, f"{KIT_NAME}/fifo", b"", type=tarfile.FIFOTYPE)
        _add(tar, f"{KIT_NAME}/dev", b"", type=tarfile.CHRTYPE)

    report = verify(make_tar(tmp_path / "k.tar.gz", kit, specials))
    assert sorted((f.code, f.path) for f in report.findings) == [("KB107", "dev"), ("KB107", "fifo")]


def test_duplicate_names_are_refused_and_neither_copy_is_read(kit: Path, tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "k.tar.gz", kit, lambda t: _add(t, f"{KIT_NAME}/{NOTES}", b"a second notes.txt\n"))
    report = verify(archive)
    assert [str(f) for f in report.findings] == [f"KB114 {NOTES}: is in the archive more than once; neither copy is read"]
    with pytest.raises(MemberError, match="more than once"):
        open_kit(archive).open(NOTES)


def test_duplicate_names_in_a_zip_are_refused(kit: Path, tmp_path: Path) -> None:
    with pytest.warns(UserWarning, match="Duplicate name"):
        archive = make_zip(tmp_path / "k.zip", kit, lambda z: z.writestr(f"{KIT_NAME}/{NOTES}", b"again\n"))
    assert [f.code for f in verify(archive).findings] == ["KB114"]


def test_a_tar_member_claiming_10_gb_is_refused_without_reading_it(kit: Path, tmp_path: Path, no_writes: list[str]) -> None:
    archive = make_tar(tmp_path / "k.tar.gz", kit, _claims_10_gb)
    assert archive.stat().st_size < 100_000
    no_writes.clear()
    report = verify(archive)
    assert no_writes == []
    assert [f.code for f in report.findings] == ["KB115"]
    assert str(report.findings[0]) == (
        f"KB115 {LS}/huge.bin: declares 10,000,000,000 bytes, more than the archive can hold "
        f"({archive.stat().st_size:,} compressed bytes); members after it cannot be found"
    )


def test_a_zip_member_claiming_10_gb_is_refused_without_reading_it(kit: Path, tmp_path: Path) -> None:
    def huge(zf: zipfile.ZipFile) -> None:
        zf.writestr(f"{KIT_NAME}/{LS}/huge.bin", b"only a few bytes")
        # The central directory is written from these values at close: it will claim 10 GB (zip64).
        zf.getinfo(f"{KIT_NAME}/{LS}/huge.bin").file_size = GB10

    archive = make_zip(tmp_path / "k.zip", kit, huge)
    assert zipfile.ZipFile(archive).getinfo(f"{KIT_NAME}/{LS}/huge.bin").file_size == GB10
    report = verify(archive)
    assert [f.code for f in report.findings] == ["KB115"]
    assert report.findings[0].message.startswith("declares 10,000,000,000 bytes, more than its ")


def test_a_truncated_member_is_refused(kit: Path, tmp_path: Path) -> None:
    """A member that claims a little more than the archive holds: found when the tar ends early."""
    whole = gzip.decompress(make_tar(tmp_path / "full.tar.gz", kit).read_bytes())
    cut = whole[: whole.rfind(b"scored in the night") + 10]
    (tmp_path / "cut.tar.gz").write_bytes(gzip.compress(cut))
    report = verify(tmp_path / "cut.tar.gz")
    assert ("KB115", NOTES) in {(f.code, f.path) for f in report.findings}
    assert report.exit_code == 1


def test_a_member_over_the_per_member_limit_is_refused(kit: Path, tmp_path: Path) -> None:
    limit = max(p.stat().st_size for p in kit.rglob("*") if p.is_file())
    archive = make_tar(tmp_path / "k.tar.gz", kit, lambda t: _add(t, f"{KIT_NAME}/big.bin", b"\0" * (limit + 1)))
    report = verify(archive, limits=ArchiveLimits(member=limit))
    assert [str(f) for f in report.findings] == [f"KB116 big.bin: declares {limit + 1:,} bytes, more than the {limit:,} bytes verify reads of one archive member; it is never read"]


def test_an_archive_past_the_total_limit_is_not_read(kit: Path, tmp_path: Path) -> None:
    archive = make_zip(tmp_path / "k.zip", kit)
    code, out, err = run_cli("verify", str(archive))
    assert code == 0
    with pytest.raises(NotAKitError, match="declare more than 1,000 bytes in all"):
        verify(archive, limits=ArchiveLimits(total=1000))


def test_a_header_claiming_a_huge_long_name_is_refused(kit: Path, tmp_path: Path) -> None:
    """tarfile reads a GNU long name whole, at the size its header claims: the reader caps it."""

    def long_name(tar: tarfile.TarFile) -> None:
        info = tarfile.TarInfo("././@LongLink")
        info.type = tarfile.GNUTYPE_LONGNAME
        info.size = GB10
        tar.fileobj.write(info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape"))
        tar.offset += 512

    report = verify(make_tar(tmp_path / "k.tar.gz", kit, long_name))
    assert [f.code for f in report.findings] == ["KB117"]
    assert "a header claims more than 1,048,576 bytes" in report.findings[0].message


@pytest.mark.parametrize(
    "content, why",
    [
        (b"\x1f\x8b\x08\x00garbage", "is not a readable .tar.gz"),
        (b"PK\x03\x04garbage", "is not a readable .zip"),
        (b"just text\n", "is neither a folder nor a .tar.gz or .zip archive"),
    ],
)
def test_a_file_that_is_no_archive_exits_2(tmp_path: Path, content: bytes, why: str) -> None:
    (tmp_path / "k.tar.gz").write_bytes(content)
    code, out, err = run_cli("verify", str(tmp_path / "k.tar.gz"))
    assert (code, out) == (2, "")
    assert err.startswith(f"kitbuild: {tmp_path / 'k.tar.gz'}: {why}")
    assert "Traceback" not in err


def test_members_under_two_top_folders_exit_2(kit: Path, tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "k.tar.gz", kit, lambda t: _add(t, "other/x"))
    code, _, err = run_cli("verify", str(archive))
    assert code == 2
    assert err == (
        f"kitbuild: {archive}: its members do not sit under one top folder (they sit under other, verify-kit) "
        "and there is no index.json at its root. Give the folder a kit was unpacked into, or the archive 'kitbuild publish' wrote.\n"
    )


def test_a_missing_archive_exits_2(tmp_path: Path) -> None:
    code, _, err = run_cli("verify", str(tmp_path / "gone.tar.gz"))
    assert code == 2
    assert err == f"kitbuild: {tmp_path / 'gone.tar.gz'}: no such archive. Give the folder a kit was unpacked into, or the archive 'kitbuild publish' wrote.\n"


def test_every_archive_code_has_a_test() -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    for code in (c for c in CODES if "KB112" <= c <= "KB117"):
        assert f'"{code}"' in source or f"{code} " in source, code


def test_the_json_report_of_an_archive_names_the_archive(kit: Path, tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "k.tar.gz", kit, lambda t: _add(t, "../x"))
    document = verify_document(verify(archive))
    assert document["kit"] == str(archive)
    assert document["findings"][0]["path"] == "k.tar.gz" and document["findings"][0]["code"] == "KB112"
