"""kitbuild publish: one reproducible archive of a kit, and its .sha256."""

from __future__ import annotations

import gzip
import io
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import orjson
import pytest

from kitbuild.kitdocs import kit_digest

from kitbuild.archive import epoch_of
from kitbuild.commands.build import build
from kitbuild.commands.publish import publish
from kitbuild.errors import KitbuildError

LONG = "a-folder-name-long-enough/" * 5 + "to-need-a-gnu-long-name-member.json"


@pytest.fixture
def kit(bench: Path, make_files, write_kit) -> Path:
    make_files(bench / "src", {"run.json": '{"x": 1}\n', "rows/a.ndjson": "{}\n", LONG: "{}\n"})
    write_kit(bench, sources=[{"path": "src", "as": "run-1"}])
    build("kit.yaml", jobs=1)
    return bench / "kit"


def test_two_runs_give_identical_bytes(kit: Path, tmp_path: Path) -> None:
    first = publish(kit, "tar.gz", tmp_path / "one" / "k.tar.gz")
    for path in kit.rglob("*"):
        os.utime(path, (12345, 12345))
    os.chmod(kit / "run-1/run.json", 0o600)
    second = publish(kit, "tar.gz", tmp_path / "two" / "k.tar.gz")
    assert first.archive.read_bytes() == second.archive.read_bytes()
    assert first.checksum.read_bytes() == second.checksum.read_bytes() == f"{first.sha256}  k.tar.gz\n".encode()
    z1 = publish(kit, "zip", tmp_path / "one" / "k.zip")
    z2 = publish(kit, "zip", tmp_path / "two" / "k.zip")
    assert z1.archive.read_bytes() == z2.archive.read_bytes()


def test_tar_members_carry_nothing_of_the_machine_or_the_clock(kit: Path, tmp_path: Path) -> None:
    report = publish(kit, "tar.gz", tmp_path / "k.tar.gz")
    raw = report.archive.read_bytes()
    assert raw[3] == 0, "gzip header flags: no file name, no extra field"
    assert raw[4:8] == b"\0\0\0\0", "gzip header mtime is 0"
    tar_bytes = gzip.decompress(raw)
    assert b"PaxHeader" not in tar_bytes and b"atime" not in tar_bytes
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert names == sorted(names, key=lambda n: n + "/" if members[names.index(n)].isdir() else n)
    assert names[0] == "tiny-kit" and f"tiny-kit/run-1/{LONG}" in names
    files = {n for n, m in zip(names, members) if m.isfile()}
    assert files == {f"tiny-kit/{p.relative_to(kit).as_posix()}" for p in kit.rglob("*") if p.is_file()}
    for m in members:
        assert (m.uid, m.gid, m.uname, m.gname) == (0, 0, "", "")
        assert m.mtime == epoch_of("2026-11-09") == 1794182400
        assert m.mode == (0o755 if m.isdir() else 0o644)
        assert m.pax_headers == {}


def test_zip_members_have_fixed_times_and_modes(kit: Path, tmp_path: Path) -> None:
    report = publish(kit, "zip", tmp_path / "k.zip")
    with zipfile.ZipFile(report.archive) as archive:
        infos = archive.infolist()
        assert archive.read("tiny-kit/run-1/run.json") == b'{"x": 1}\n'
    assert [i.filename for i in infos] == sorted(i.filename for i in infos)
    for info in infos:
        assert info.date_time == (2026, 11, 9, 0, 0, 0)
        assert info.extra == b""
        assert info.external_attr >> 16 == (0o40755 if info.is_dir() else 0o100644)


def test_checksum_file_passes_sha256sum(kit: Path, tmp_path: Path) -> None:
    if shutil.which("sha256sum") is None:
        pytest.skip("sha256sum is not installed")
    report = publish(kit, "tar.gz", tmp_path / "k.tar.gz")
    done = subprocess.run(["sha256sum", "-c", report.checksum.name], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == "k.tar.gz: OK\n"


def test_default_archive_goes_beside_the_kit(kit: Path, cli) -> None:
    result = cli("publish", "kit")
    assert result.exit_code == 0, result.stderr
    archive = kit.parent / "tiny-kit.tar.gz"
    digest = (kit.parent / "tiny-kit.tar.gz.sha256").read_text().split()[0]
    assert result.stdout.splitlines() == [
        f"wrote {archive}: 9 files, {sum(p.stat().st_size for p in kit.rglob('*') if p.is_file()):,} bytes",
        f"wrote {archive}.sha256: sha256 {digest}",
        f"kit digest: {kit_digest((kit / 'index.json').read_bytes())} (what 'kitbuild verify KIT --digest' checks, archive or folder)",
        "a reader checks it with: sha256sum -c tiny-kit.tar.gz.sha256",
    ]


def test_a_kit_with_a_finding_is_not_published(kit: Path, cli) -> None:
    # A record edited after the build: verify finds it, so publish writes nothing.
    notes = next(p for p in sorted(kit.rglob("*")) if p.is_file() and "/" in p.relative_to(kit).as_posix() and not p.relative_to(kit).as_posix().startswith("_"))
    notes.write_bytes(notes.read_bytes() + b"edited\n")
    result = cli("publish", "kit")
    assert result.exit_code == 1
    assert "KB104" in result.stderr and "is not archived" in result.stderr
    assert not (kit.parent / "tiny-kit.tar.gz").exists()


def test_a_folder_without_index_json_is_refused(bench: Path, cli) -> None:
    (bench / "notakit").mkdir()
    result = cli("publish", "notakit")
    assert result.exit_code == 2
    assert result.stderr == (
        "kitbuild: notakit: has no index.json, so it is not a kit kitbuild built. "
        "Run 'kitbuild build' first, and publish the folder it writes.\n"
    )
    assert not list(bench.glob("*.tar.gz*"))
    result = cli("publish", "nothere")
    assert (result.exit_code, result.stderr) == (2, "kitbuild: nothere: no such folder. Give the kit folder that 'kitbuild build' wrote.\n")


def test_a_kit_that_does_not_match_its_index_is_refused(kit: Path, cli) -> None:
    (kit / "stray.txt").write_text("x\n")
    result = cli("publish", "kit")
    assert result.exit_code == 2
    assert "does not hold what its index.json lists: 1 file index.json does not list (first: stray.txt)" in result.stderr
    (kit / "stray.txt").unlink()
    (kit / "run-1/run.json").unlink()
    result = cli("publish", "kit")
    assert "1 listed file missing (first: run-1/run.json)" in result.stderr
    assert not list(kit.parent.glob("*.tar.gz*"))


def test_an_index_entry_without_a_path_is_refused_by_its_position(kit: Path, cli) -> None:
    index = orjson.loads((kit / "index.json").read_bytes())
    index["files"].extend([{"size": 1}, {"path": 3}])
    (kit / "index.json").write_bytes(orjson.dumps(index))
    result = cli("publish", "kit")
    assert (result.exit_code, result.stderr) == (
        2,
        f"kitbuild: kit: index.json's files[{len(index['files']) - 2}] has no 'path' string. "
        "Rebuild the kit, then run 'kitbuild verify' on it.\n",
    )
    assert not list(kit.parent.glob("*.tar.gz*"))


def test_links_and_an_archive_inside_the_kit_are_refused(kit: Path) -> None:
    with pytest.raises(KitbuildError, match="--out: the archive would be written inside the kit"):
        publish(kit, "tar.gz", kit / "k.tar.gz")
    (kit / "link").symlink_to("/etc/passwd")
    with pytest.raises(KitbuildError, match="link is a symlink; a kit holds regular files only"):
        publish(kit)
    with pytest.raises(KitbuildError, match="'rar' is not an archive format"):
        publish(kit, "rar")


def _recipe() -> list[str]:
    """The sh blocks of docs/signing.md's tested recipe, in order."""
    text = (Path(__file__).resolve().parents[2] / "docs/signing.md").read_text(encoding="utf-8")
    recipe = text.split("<!-- signing-recipe:start -->", 1)[1].split("<!-- signing-recipe:end -->", 1)[0]
    return [block.split("\n", 1)[1].rsplit("```", 1)[0] for block in recipe.split("```sh")[1:]]


def test_the_signing_recipe_in_the_docs_works(kit: Path) -> None:
    if shutil.which("ssh-keygen") is None or shutil.which("sha256sum") is None:
        pytest.skip("ssh-keygen or sha256sum is not installed")
    make_key, sign, check = _recipe()
    # The recipe asks for a passphrase; the test gives an empty one so nothing waits on a terminal.
    make_key = make_key.replace("ssh-keygen -t ed25519", "ssh-keygen -q -N '' -t ed25519")

    def run(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-euc", script], cwd=kit.parent, capture_output=True, text=True)

    for step in (make_key, sign):
        done = run(step)
        assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in kit.iterdir()) == ["README.md", "SHA256SUMS", "croissant.json", "index.html", "index.json", "provenance.json", "run-1"]
    done = run(check)
    assert done.returncode == 0, done.stderr
    assert 'Good "file" signature for ada@example.org' in done.stderr + done.stdout
    with open(kit / "SHA256SUMS", "ab") as sums:
        sums.write(b"\n")
    assert run(check).returncode != 0
