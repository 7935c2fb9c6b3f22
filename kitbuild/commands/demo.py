"""``kitbuild demo``: see kitbuild work on a fresh machine with one command.

It writes a synthetic private bench (``kitbuild.synthetic``) and its kit.yaml into a folder,
builds the kit, verifies it as a reader would, and says where everything is.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kitbuild.commands.build import BuildReport, build
from kitbuild.commands.verify import verify
from kitbuild.errors import ConfigError
from kitbuild.report import build_text
from kitbuild.synthetic import generate_bench
from kitbuild.verify_report import VerifyReport, verify_text


@dataclass
class DemoResult:
    """Where the demo put things, what the build did, and the text to print."""

    folder: Path
    config: Path
    build: BuildReport
    verify: VerifyReport
    text: str
    exit_code: int


def demo(folder: str | os.PathLike[str] | None = None) -> DemoResult:
    """Generate the synthetic bench into ``folder`` (default: a new temporary folder), build its kit
    and verify it as a reader would; the exit code is verify's (1 if it found anything)."""
    if folder is None:
        root = Path(tempfile.mkdtemp(prefix="kitbuild-demo-"))
    else:
        root = Path(folder).absolute()
        if root.exists() and any(root.iterdir()):
            raise ConfigError(f"{folder}: the folder is not empty; the demo writes a bench and a kit into an empty or new folder.")
        root.mkdir(parents=True, exist_ok=True)
    config = generate_bench(root)
    report = build(config)
    checked = verify(report.out)
    lines = [
        f"demo bench: {root / 'bench'} (private records, as a researcher's machine holds them)",
        f"kit config: {config}",
        build_text(report),
        f"  {len(report.figures):,} figures counted from the kit's own files, printed in its README",
        "",
        verify_text(checked),
        "",
        f"read the kit's README: {report.out / 'README.md'}",
        f"check it as a reader:  cd {report.out} && sha256sum -c SHA256SUMS",
        f"                       kitbuild verify {report.out}",
    ]
    return DemoResult(root, config, report, checked, "\n".join(lines), checked.exit_code)
