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
from kitbuild.errors import ConfigError
from kitbuild.report import build_text
from kitbuild.synthetic import generate_bench


@dataclass
class DemoResult:
    """Where the demo put things, what the build did, and the text to print."""

    folder: Path
    config: Path
    build: BuildReport
    text: str
    exit_code: int


def demo(folder: str | os.PathLike[str] | None = None) -> DemoResult:
    """Generate the synthetic bench into ``folder`` (default: a new temporary folder) and build its kit."""
    if folder is None:
        root = Path(tempfile.mkdtemp(prefix="kitbuild-demo-"))
    else:
        root = Path(folder).absolute()
        if root.exists() and any(root.iterdir()):
            raise ConfigError(f"{folder}: the folder is not empty; the demo writes a bench and a kit into an empty or new folder.")
        root.mkdir(parents=True, exist_ok=True)
    config = generate_bench(root)
    report = build(config)
    lines = [
        f"demo bench: {root / 'bench'} (private records, as a researcher's machine holds them)",
        f"kit config: {config}",
        build_text(report),
        "",
        f"read the kit's README: {report.out / 'README.md'}",
        f"check it as a reader:  cd {report.out} && sha256sum -c SHA256SUMS",
    ]
    return DemoResult(root, config, report, "\n".join(lines), 0)
