"""Shared test helpers: trees from dicts, kit.yaml from a dict, the CLI, and a small bench.

Tests import the helpers from here (``from kittest import make_files``); tests/conftest.py
registers the fixtures. A module of its own, because several conftest.py files in one run would
all be importable as ``conftest``.

Fixtures stay small and readable on purpose: a test names the bytes it cares about in a dict,
so a reader sees the whole input without opening a fixture folder.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Callable, Mapping

import pytest
import yaml
from typer.testing import CliRunner

from kitbuild.cli import app
from kitbuild.commands.demo import DemoResult, demo

# A tree is {name: content}; content is str (written as UTF-8, line ends as typed), bytes, or a
# nested dict for a folder.
Tree = Mapping[str, Any]


def make_files(root: Path, tree: Tree) -> Path:
    """Write ``tree`` under ``root`` (created if needed); returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, content in tree.items():
        path = root / name
        if isinstance(content, Mapping):
            make_files(path, content)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return root


def read_tree(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` by its '/'-separated relative path, with its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


BASE_CONFIG: dict[str, Any] = {
    "kit": "tiny-kit",
    "title": "A tiny kit",
    "date": "2026-11-09",
    "licence": "CC-BY-4.0",
}


def write_kit(root: Path, text: str | None = None, **config: Any) -> Path:
    """Write ``root/kit.yaml``: ``text`` verbatim, or BASE_CONFIG updated with ``config``."""
    root.mkdir(parents=True, exist_ok=True)
    if text is None:
        text = yaml.safe_dump({**BASE_CONFIG, **config}, sort_keys=False, allow_unicode=True)
    path = root / "kit.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def refused_then_caught(root: Path, cli: Any, name: str, data: bytes) -> tuple[str, str]:
    """A bench whose ``r/<name>`` holds ``data``, and a clean ``r/ok.json``: the build must stop
    and write nothing. Then the same bytes put over ``r/ok.json`` in a kit built without them,
    its pins left as they were. Returns what the build said and what verify said (exit 1)."""
    bench = root / "bench" / "r"
    bench.mkdir(parents=True)
    (bench / "ok.json").write_text('{"a": 1}\n')
    (bench / name).write_bytes(data)
    config = write_kit(root, out="kit", sources=[{"path": "bench/r", "as": "r"}])
    result = cli("build", config)
    assert result.exit_code == 1 and not (root / "kit").exists()
    (bench / name).unlink()
    assert cli("build", config).exit_code == 0
    (root / "kit" / "r" / "ok.json").write_bytes(data)
    report = cli("verify", root / "kit")
    assert report.exit_code == 1
    return result.stdout + result.stderr, report.stdout


@pytest.fixture(name="demo_result", scope="session")
def demo_result_fixture(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    """``kitbuild demo``, run once in each test process: a test reads its kit, or changes a copy."""
    return demo(tmp_path_factory.mktemp("demo") / "try")


@pytest.fixture(name="demo_kit", scope="session")
def demo_kit_fixture(demo_result: DemoResult) -> Path:
    """The demo's kit folder (see demo_result)."""
    return demo_result.build.out


@pytest.fixture(name="make_files")
def make_files_fixture() -> Callable[[Path, Tree], Path]:
    return make_files


@pytest.fixture(name="write_kit")
def write_kit_fixture() -> Callable[..., Path]:
    return write_kit


class Cli:
    """Runs ``kitbuild ...`` in-process; stdout and stderr kept apart."""

    def __init__(self) -> None:
        self.runner = CliRunner()

    def __call__(self, *args: str | os.PathLike[str]) -> Any:
        return self.runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def cli() -> Cli:
    return Cli()


@pytest.fixture
def bench(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty bench folder as the working directory: tests put src/ and kit.yaml in it."""
    root = tmp_path / "bench"
    root.mkdir()
    monkeypatch.chdir(root)
    return root


# -- a small bench that exercises every rule -------------------------------------------------

SAMPLE_AS = "learned-sparse-2026-11-07"
SAMPLE_MAP_KEY = "/scratch/u7/runs/lme-2026-10"
SAMPLE_NAMES = {"gpu-b17.cluster.example.net": "desktop", "gpu-b17": "desktop"}
SAMPLE_PLACEHOLDER = "withheld-2026-09-29"


def sample_tree(source: Path) -> dict[str, Any]:
    """The files of the sample source at absolute path ``source``, as a tree.

    run.json prints the source's own paths and a ``map`` path; lock.json a box name in its
    ``route`` field and the digest of run.json as the run wrote it; reading.json that digest
    again (upper case, prefixed), lock.json's, and the digest of an untouched file; family.json
    the digest of reading.json, which changes only because digests in it are withheld. The rest
    must come through byte for byte.
    """
    s = str(source)
    run = (
        '{"out": "%s/full-s1/run", "rows": "%s/full-s1/run/rows.ndjson",\n'
        ' "baseline": "%s/a0/run/rows.ndjson"}\n' % (s, s, SAMPLE_MAP_KEY)
    ).encode()
    rows = b'{"qid": "q1", "top": ["s01", "s02"]}\r\n{"qid": "q2", "top": []}'
    lock = ('{"route": "gpu-b17.cluster.example.net", "note": "the only box",\n "run_sha256": "%s"}\n'
            % sha256(run)).encode()
    reading = ('{"run": "sha256:%s", "rows": "%s",\n "lock": "%s"}\n'
               % (sha256(run).upper(), sha256(rows), sha256(lock))).encode()
    family = ('{"reading": "%s"}\n' % sha256(reading)).encode()
    return {
        "full-s1": {
            "run": {"run.json": run, "rows.ndjson": rows},
            "lock.json": lock,
            "logs": {"debug.log": b"written on gpu-b17 in /home/ada/scratch\n"},
        },
        "score": {"reading.json": reading, "family.json": family},
        "notes": {"latin1.txt": "caf\xe9 au lait\r\n".encode("latin-1"), "empty.txt": b""},
        "s2-skip.json": b'{"gated": true}\r\n{"verdict": "skip"}',
        "blob.bin": b"\x00\x01\x02" + bytes(range(256)) * 4,
    }


def write_sample_bench(root: Path, out: str = "kit") -> Path:
    """Write the sample source under ``root/runs`` and a kit.yaml using every built-in rule."""
    source = root / "runs" / "ls-2026-11-07"
    make_files(source, sample_tree(source))
    return write_kit(
        root,
        out=out,
        summary="Records of one learned-sparse run.",
        sources=[{"path": "runs/ls-2026-11-07", "as": SAMPLE_AS, "about": "the second registered run",
                  "exclude": ["full-s1/logs/**"]}],
        rules=[
            {"use": "record-path-to-kit-path", "with": {"map": {SAMPLE_MAP_KEY: "longmemeval-2026-10"}}},
            {"use": "box-name-to-role", "with": {"names": SAMPLE_NAMES, "fields": ["route"]}},
            {"use": "digest-withheld", "with": {"placeholder": SAMPLE_PLACEHOLDER}},
        ],
        external_digests={"d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442": "the public dataset"},
        readme={"not_here": "The smoke runs and the logs."},
    )


# A user rule whose replacement needs escaping in JSON and cannot be made safe in YAML.
USER_REGEX_RULE = r"""id: host-to-label
sentence: Host names now read as a label.
docs: {what: Replaces box-N., why: Tests escaping., example: "- use: ./host-to-label.yaml"}
matcher:
  primitive: regex
  options: {pattern: 'box-([0-9]+)', replace: 'role: "lab" \\ \1'}
params: {type: object, additionalProperties: false}
samples:
  firing:
    - input: "box-7"
      output: 'role: "lab" \ 7'
  not_firing:
    - input: "sandbox"
"""


# What `kitbuild build --dry-run` prints first for the sample bench: its summary.
SAMPLE_DRY_RUN = [
    "dry run of tiny-kit: nothing was written.",
    "9 record files from 1 source; the rules would change 4.",
    "",
    "rules:",
    "  record-path-to-kit-path  3 firings in 1 file",
    "  box-name-to-role         1 firing in 1 file",
    "  digest-withheld          4 firings in 3 files",
    "",
    "files the rules would change (firings per rule):",
    f"  {SAMPLE_AS}/full-s1/lock.json: box-name-to-role 1, digest-withheld 1",
    f"  {SAMPLE_AS}/full-s1/run/run.json: record-path-to-kit-path 3",
    f"  {SAMPLE_AS}/score/family.json: digest-withheld 1",
    f"  {SAMPLE_AS}/score/reading.json: digest-withheld 2",
    "",
]
