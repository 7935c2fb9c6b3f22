"""``kitbuild publish``: a kit folder in, one reproducible archive and its ``.sha256`` out.

The archive holds exactly the kit: the files index.json lists and the four it cannot list
(index.json, provenance.json, README.md, index.html). A folder that holds anything else, a link
or a special file is refused, so that what a reader downloads is what ``kitbuild verify`` checks.
"""

from __future__ import annotations

import datetime
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kitbuild import archive
from kitbuild.errors import EXIT_FINDINGS, KitbuildError
from kitbuild.index import INDEX, PROVENANCE, UNLISTED

_KIT_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


@dataclass(frozen=True)
class PublishReport:
    """What publish wrote."""

    archive: Path
    checksum: Path
    sha256: str
    files: int
    bytes: int
    digest: str | None = None  # the kit's one digest (kitbuild.kitdocs.kit_digest)


class UnpublishableError(KitbuildError):
    """The kit has findings: publishing it would hand readers a kit that does not verify (exit 1)."""

    exit_code = EXIT_FINDINGS


def _not_a_kit(label: str, why: str) -> KitbuildError:
    return KitbuildError(f"{label}: {why}")


def _read_json(kit: Path, name: str, label: str) -> Any:
    path = kit / name
    if path.is_symlink() or not path.is_file():
        raise _not_a_kit(label, f"has no {name}, so it is not a kit kitbuild built. Run 'kitbuild build' first, and publish the folder it writes.")
    try:
        return orjson.loads(path.read_bytes())
    except (orjson.JSONDecodeError, OSError):
        raise _not_a_kit(label, f"{name} is not readable JSON. Rebuild the kit, then run 'kitbuild verify' on it.") from None


def _walk(kit: Path, label: str) -> dict[str, Path]:
    """Every file under ``kit`` by kit path; links and special files are refused."""
    found: dict[str, Path] = {}
    for folder, dirs, files in os.walk(kit):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(folder) / name
            rel = path.relative_to(kit).as_posix()
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                raise _not_a_kit(label, f"{rel} is a symlink; a kit holds regular files only. Rebuild the kit.")
            if stat.S_ISREG(mode):
                found[rel] = path
            elif not stat.S_ISDIR(mode):
                raise _not_a_kit(label, f"{rel} is not a regular file; a kit holds regular files only. Rebuild the kit.")
    return found


def _is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _members(kit: Path, label: str) -> tuple[str, str, list[archive.ArchiveMember]]:
    """The kit's name, date and files, checked against its own index.json."""
    index = _read_json(kit, INDEX, label)
    provenance = _read_json(kit, PROVENANCE, label)
    if not isinstance(index, dict) or not isinstance(index.get("files"), list):
        raise _not_a_kit(label, "index.json has no 'files' list. Rebuild the kit, then run 'kitbuild verify' on it.")
    name = index.get("kit")
    if not isinstance(name, str) or not _KIT_NAME.match(name):
        raise _not_a_kit(label, "index.json's 'kit' is not a kit name (lower-case letters, digits, '.', '_', '-'). Rebuild the kit.")
    date = provenance.get("date") if isinstance(provenance, dict) else None
    if not isinstance(date, str) or not _is_date(date):
        raise _not_a_kit(label, "provenance.json has no 'date' (YYYY-MM-DD), which gives the archive its times. Rebuild the kit.")
    listed: set[str] = set()
    for i, entry in enumerate(index["files"]):
        if not isinstance(entry, dict):
            continue
        path = entry.get("path")
        # Name the entry: a missing or non-string path cannot be compared with the files on disk.
        if not isinstance(path, str):
            raise _not_a_kit(label, f"index.json's files[{i}] has no 'path' string. Rebuild the kit, then run 'kitbuild verify' on it.")
        listed.add(path)
    on_disk = _walk(kit, label)
    expected = listed | {n for n in UNLISTED if n in on_disk}
    extra = sorted(set(on_disk) - expected)
    missing = sorted(p for p in listed if p not in on_disk)
    if extra or missing:
        what = []
        if extra:
            what.append(f"{len(extra)} file{'s' if len(extra) != 1 else ''} index.json does not list (first: {extra[0]})")
        if missing:
            what.append(f"{len(missing)} listed file{'s' if len(missing) != 1 else ''} missing (first: {missing[0]})")
        raise _not_a_kit(label, f"does not hold what its index.json lists: {'; '.join(what)}. Rebuild the kit, then run 'kitbuild verify' on it.")
    members = [archive.ArchiveMember(p, on_disk[p], on_disk[p].stat().st_size) for p in sorted(expected)]
    return name, date, members


def publish(kit: str | os.PathLike[str], fmt: str = "tar.gz", out: str | os.PathLike[str] | None = None) -> PublishReport:
    """Write a reproducible archive of the kit folder ``kit`` and its ``.sha256`` file.

    The archive goes to ``out``, by default ``<kit name><suffix>`` beside the kit folder. Raises
    :class:`~kitbuild.errors.KitbuildError` (exit 2) when ``kit`` is not a kit folder.
    """
    label = str(kit)
    folder = Path(kit)
    if fmt not in archive.FORMATS:
        raise KitbuildError(f"--format: {fmt!r} is not an archive format kitbuild writes; choose one of: {', '.join(archive.FORMATS)}.")
    if not folder.is_dir():
        if folder.is_file():
            raise _not_a_kit(label, "is a file; publish takes the kit folder that 'kitbuild build' wrote.")
        raise _not_a_kit(label, "no such folder. Give the kit folder that 'kitbuild build' wrote.")
    folder = folder.absolute()
    name, date, members = _members(folder, label)
    # What is published must be what verify passes: a kit with a finding is not archived.
    from kitbuild.commands.verify import verify

    checked = verify(folder)
    if not checked.ok:
        shown = checked.findings[:20]
        more = len(checked.findings) - len(shown)
        raise UnpublishableError(
            f"{label}: 'kitbuild verify' finds {len(checked.findings)} finding{'s' if len(checked.findings) != 1 else ''} in this kit, so it is not archived:\n"
            + "\n".join(str(f) for f in shown)
            + (f"\n… and {more} more" if more else "")
            + "\nRebuild the kit ('kitbuild build'), check it with 'kitbuild verify', then publish it."
        )
    year = datetime.date.fromisoformat(date).year
    if year < (1980 if fmt == "zip" else 1970):
        # zip stores DOS times, which start in 1980; tar's start with the epoch.
        raise _not_a_kit(label, f"provenance.json's date is before {1980 if fmt == 'zip' else 1970}, which a {fmt} archive cannot store.")
    suffix = archive.FORMATS[fmt]
    target = Path(out).absolute() if out is not None else folder.parent / f"{name}{suffix}"
    if target.resolve() == folder.resolve() or folder.resolve() in target.resolve().parents:
        raise KitbuildError(f"--out: the archive would be written inside the kit {label}; write it outside the kit folder.")
    checksum = target.with_name(target.name + ".sha256")
    for path in (target, checksum):
        if path.is_dir():
            raise KitbuildError(f"--out: {path.name} is a folder; the archive and its .sha256 file go there. Give another file name.")
    if target.exists() and not target.name.endswith((suffix, ".tgz") if fmt == "tar.gz" else suffix):
        # An earlier archive is replaced; a file that is none (a kit.yaml given by mistake) is not.
        raise KitbuildError(f"--out: {target.name} exists and is no {suffix} archive, so it is not replaced. Give the archive's file name, ending in {suffix}.")
    target.parent.mkdir(parents=True, exist_ok=True)
    existed = target.exists()
    if fmt == "tar.gz":
        archive.write_atomically(target, lambda s: archive.write_tar_gz(s, name, members, archive.epoch_of(date)))
    else:
        archive.write_atomically(target, lambda s: archive.write_zip(s, name, members, datetime.date.fromisoformat(date)))
    line = archive.sha256_line(target)
    try:
        archive.write_atomically(checksum, lambda s: s.write(line))
    except BaseException:
        if not existed:
            target.unlink(missing_ok=True)  # no archive without the line that checks it
        raise
    return PublishReport(target, checksum, line.split(b" ", 1)[0].decode(), len(members), sum(m.size for m in members), checked.digest)


def publish_text(report: PublishReport) -> str:
    """The summary publish prints."""
    return (
        f"wrote {report.archive}: {report.files} files, {report.bytes:,} bytes\n"
        f"wrote {report.checksum}: sha256 {report.sha256}\n"
        + (f"kit digest: {report.digest} (what 'kitbuild verify KIT --digest' checks, archive or folder)\n" if report.digest else "")
        + f"a reader checks it with: sha256sum -c {report.checksum.name}"
    )
