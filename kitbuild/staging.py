"""The folder a build writes into before its kit may be seen, and the swap that publishes it.

A build writes its kit into a staging folder beside ``out`` (``.<out>.kitbuild-<pid>-<random>``),
checks it, and only then renames it into place: a reader never sees half a kit, and a failed
build leaves the earlier kit as it was. The folder is removed however the build ends: on an
error, on Ctrl-C, and on SIGTERM, which is turned into the same exit. A build killed outright
(SIGKILL, a power cut) cannot clean up; the next build of the same ``out`` removes every staging
folder whose process is gone.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import tempfile
import threading
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from kitbuild.errors import ConfigError

_MARK = ".kitbuild-"


class Interrupted(KeyboardInterrupt):
    """SIGTERM, turned into the exit Ctrl-C makes, so that the staging folder is removed."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive, and not ours to judge
    return True


def remove_stale(parent: Path, name: str) -> list[Path]:
    """Remove the staging folders of ``out`` named ``name`` under ``parent`` whose build is gone."""
    pattern = re.compile(re.escape(f".{name}{_MARK}") + r"(\d+)-")
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if m and entry.is_dir(follow_symlinks=False) and not _alive(int(m.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


class Staging:
    """``with Staging(out, dry_run) as s:`` write into ``s.path``, then ``s.swap()`` to publish."""

    def __init__(self, target: Path, dry_run: bool = False) -> None:
        self.target = target
        self.dry_run = dry_run
        self.path = Path()
        self._done = False
        self._previous: Any = None

    def __enter__(self) -> "Staging":
        try:
            if self.dry_run:
                # A dry run is checked like a build, in a folder that is never beside a kit.
                self.path = Path(tempfile.mkdtemp(prefix="kitbuild-dry-run-"))
            else:
                parent = self.target.parent
                parent.mkdir(parents=True, exist_ok=True)
                remove_stale(parent, self.target.name)
                self.path = Path(tempfile.mkdtemp(prefix=f".{self.target.name}{_MARK}{os.getpid()}-", dir=parent))
        except OSError as exc:
            raise ConfigError(f"{self.target}: cannot write a kit there ({exc.strerror or exc}). Choose an --out (or 'out:') on a writable file system.") from None
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGTERM, _interrupt)
        return self

    def swap(self) -> None:
        """Replace ``target`` with the staged kit, so a reader never sees half of either."""
        target = self.target
        try:
            if target.is_symlink() or target.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
                os.rmdir(old)
                os.rename(target, old)
                try:
                    os.rename(self.path, target)
                except OSError:
                    os.rename(old, target)
                    raise
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.rename(self.path, target)
            os.chmod(target, 0o755)
        except OSError as exc:
            raise ConfigError(f"{target}: the kit could not be put in place ({exc.strerror or exc}); the previous kit, if any, is unchanged.") from None
        self._done = True

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if not self._done and self.path != Path():
            shutil.rmtree(self.path, ignore_errors=True)
        if self._previous is not None:
            signal.signal(signal.SIGTERM, self._previous)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
            # (No file name: it may be a source's private path.)
            raise ConfigError(f"{self.target}: the kit could not be written ({exc.strerror}); nothing was written and the previous kit, if any, is unchanged. Free some space or choose another --out.") from None


def make_folders(path: Path) -> None:
    """``path`` and each folder above it that is missing. Path.mkdir(parents=True) and os.makedirs
    call themselves once a level: a source 1,000 folders deep ended them in a RecursionError."""
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            if not folder.is_dir():
                raise


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise Interrupted()
