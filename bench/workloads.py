"""The benchmark's workloads, generated deterministically from fixed seeds.

A  binary files (256 MiB each at full size): hashing and copying, no rewriting.
B  NDJSON record files (1 GiB in 2,000 files at full size), dense with private paths, machine
   names in `route` fields and digests of other files, so every rule fires and digests are
   withheld.
C  100,000 small JSON files of about 2 KiB: per-file overhead.
D  one NDJSON file (2 GiB at full size) that needs rewriting: memory must stay flat.
S  one small record: the start-up every command pays (interpreter, imports, reading the kit's
   own files), which the ratios above include.

Each workload is a folder with `src/` (the private bench) and one or more kit configs. A
workload whose sources already exist with the same parameters is reused (`.done` records them);
its configs are written afresh every time.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

MiB = 1 << 20
GiB = 1 << 30

# The names a bench prints, and a long list of names that do not occur, to show that the cost of
# the box-name rule does not grow with the number of names.
BOX_NAMES = {"gpu-b17.cluster.example.net": "desktop", "gpu-b17": "desktop"}
MANY_NAMES = {**BOX_NAMES, **{f"node-{i:04d}.cluster.example.net": f"node{i % 7}" for i in range(998)}}
MAP_FROM = "/scratch/u7/runs/lme-2026-10"
PLACEHOLDER = "withheld-2026-09-29"
# What a record prints when it has no earlier file to cite: the public dataset's digest, declared
# in kit.yaml's external_digests so that a fresh kit verifies clean (a made-up digest would be
# reported as unresolved).
PUBLIC_DIGEST = "d6f21ea9d60a0d56f34a05b609c79c88a451d2ae03597821ea3d5a9678c3a442"
PUBLIC_WHY = "longmemeval_s_cleaned.json, the public dataset"
# Bumped whenever what a workload holds changes, so that a cached workload (.done) is remade.
RECORDS_VERSION = 2
BINARY_VERSION = 2


@dataclass(frozen=True)
class Sizes:
    a_files: int
    a_file_bytes: int
    b_files: int
    b_bytes: int
    b_small_bytes: int
    c_files: int
    c_file_bytes: int
    d_bytes: int


FULL = Sizes(8, 256 * MiB, 2000, GiB, 256 * MiB, 100_000, 2048, 2 * GiB)
QUICK = Sizes(8, 64 * MiB, 500, 256 * MiB, 64 * MiB, 25_000, 2048, 512 * MiB)


def _kit_yaml(name: str, names: dict[str, str], rules: bool = True) -> str:
    lines = [
        f"kit: bench-{name.lower()}",
        f'title: "Benchmark workload {name}"',
        "date: 2026-11-30",
        "out: ./kit",
        "sources:",
        "  - path: src",
        "    as: records",
    ]
    if rules:
        lines += [
            "rules:",
            "  - use: record-path-to-kit-path",
            "    with:",
            f"      map: {{{MAP_FROM}: earlier-run}}",
            "  - use: box-name-to-role",
            "    with:",
            "      names:",
            *[f"        {k}: {v}" for k, v in names.items()],
            "      fields: [route]",
            "  - use: digest-withheld",
            "    with:",
            f"      placeholder: {PLACEHOLDER}",
            "external_digests:",
            f'  {PUBLIC_DIGEST}: "{PUBLIC_WHY}"',
        ]
    return "\n".join(lines) + "\n"


def _fresh(folder: Path, params: dict[str, object]) -> bool:
    """True when ``folder`` already holds this workload; otherwise empties it."""
    stamp = folder / ".done"
    if stamp.exists() and json.loads(stamp.read_text()) == params:
        return True
    if folder.exists():
        shutil.rmtree(folder)
    (folder / "src").mkdir(parents=True)
    return False


def _done(folder: Path, params: dict[str, object]) -> None:
    (folder / ".done").write_text(json.dumps(params))


def make_a(root: Path, sizes: Sizes) -> Path:
    folder = root / "A"
    params = {"files": sizes.a_files, "bytes": sizes.a_file_bytes, "version": BINARY_VERSION}
    if not _fresh(folder, params):
        rng = random.Random(20261130)
        for i in range(sizes.a_files):
            with open(folder / "src" / f"vectors-{i:02d}.bin", "wb") as out:
                for _ in range(sizes.a_file_bytes // MiB):
                    # Random bytes spell an e-mail address now and then (a@bc.de), which verify
                    # rightly reports; without '@' the kit verifies clean, as the benchmark needs.
                    out.write(rng.randbytes(MiB).replace(b"@", b"A"))
        _done(folder, params)
    (folder / "kit.yaml").write_text(_kit_yaml("A", {}, rules=False))
    return folder


# The ten session files a record's search returned, as JSON strings: one format for all ten.
_SESSIONS = ",".join(['"s%010x.md"'] * 10)


def _record_line(rng: random.Random, src: str, i: int, j: int, earlier: list[tuple[str, str]]) -> str:
    """One record: the row that ``json.dumps(row, separators=(",", ":"))`` writes, formatted
    directly (twice as fast: generating B took most of a first ``--quick`` run's set-up). Only
    the paths can hold what JSON escapes, so only they go through the encoder; a test holds the
    line to the encoder's."""
    ref_path, ref_digest = earlier[rng.randrange(len(earlier))] if earlier else (f"{src}/run-0000/none.ndjson", PUBLIC_DIGEST)
    sessions = _SESSIONS % tuple([rng.getrandbits(40) for _ in range(10)])
    any5, all5 = rng.getrandbits(1), rng.getrandbits(1)
    route = "gpu-b17.cluster.example.net" if j % 3 else "gpu-b17"
    path = json.dumps(f"{src}/run-{i % 97:04d}/rows-{i:04d}.ndjson")
    return (
        f'{{"qid":"q{i:04d}{j:06d}","path":{path},"input":"{MAP_FROM}/a0/run/rows-{j % 500:03d}.ndjson",'
        f'"route":"{route}","reads":{{"path":{json.dumps(ref_path)},"sha256":"{ref_digest}"}},'
        f'"search":[{sessions}],"score":{{"any@5":{any5},"all@5":{all5}}}}}\n'
    )


def make_b(root: Path, name: str, files: int, total: int) -> Path:
    """NDJSON files printing their own absolute paths, another machine's paths, box names and
    the digests of earlier files (all of which get rewritten, so those digests are withheld)."""
    folder = root / name
    params = {"files": files, "bytes": total, "version": RECORDS_VERSION}
    if not _fresh(folder, params):
        src = folder / "src"
        src_abs = str(src.resolve())
        rng = random.Random(7 + files)
        per_file = total // files
        earlier: list[tuple[str, str]] = []
        for i in range(files):
            rel = f"run-{i % 97:04d}/rows-{i:04d}.ndjson"
            path = src / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            parts = []
            size = j = 0
            while size < per_file:
                line = _record_line(rng, src_abs, i, j, earlier[-50:])
                parts.append(line)
                size += len(line)
                j += 1
            data = "".join(parts).encode()
            path.write_bytes(data)
            earlier.append((f"{src_abs}/{rel}", hashlib.sha256(data).hexdigest()))
        _done(folder, params)
    (folder / "kit.yaml").write_text(_kit_yaml(name, BOX_NAMES))
    (folder / "kit-many-names.yaml").write_text(_kit_yaml(name, MANY_NAMES).replace("out: ./kit", "out: ./kit-many"))
    return folder


def make_c(root: Path, sizes: Sizes) -> Path:
    folder = root / "C"
    params = {"files": sizes.c_files, "bytes": sizes.c_file_bytes}
    if not _fresh(folder, params):
        src = folder / "src"
        rng = random.Random(3)
        for i in range(sizes.c_files):
            sub = src / f"q{i // 1000:03d}"
            if i % 1000 == 0:
                sub.mkdir()
            body = {"qid": f"q{i:06d}", "gold": [f"s{rng.getrandbits(40):010x}.md"], "note": ""}
            text = json.dumps(body, indent=1)
            body["note"] = "x" * max(0, sizes.c_file_bytes - len(text) - 1)
            (sub / f"q{i:06d}.json").write_text(json.dumps(body, indent=1) + "\n")
        _done(folder, params)
    (folder / "kit.yaml").write_text(_kit_yaml("C", BOX_NAMES))
    return folder


def make_d(root: Path, sizes: Sizes) -> Path:
    folder = root / "D"
    params = {"bytes": sizes.d_bytes, "version": RECORDS_VERSION}
    if not _fresh(folder, params):
        src = folder / "src"
        src_abs = str(src.resolve())
        rng = random.Random(11)
        block = "".join(_record_line(rng, src_abs, 0, j, []) for j in range(20_000)).encode()
        with open(src / "rows.ndjson", "wb") as out:
            written = 0
            while written < sizes.d_bytes:
                out.write(block)
                written += len(block)
        _done(folder, params)
    (folder / "kit.yaml").write_text(_kit_yaml("D", BOX_NAMES))
    return folder


def make_s(root: Path) -> Path:
    """One small record: what build and verify cost before any byte is read (start-up)."""
    folder = root / "S"
    (folder / "src").mkdir(parents=True, exist_ok=True)
    (folder / "src" / "row.json").write_text(json.dumps({"qid": "q000000", "route": "gpu-b17"}) + "\n")
    (folder / "kit.yaml").write_text(_kit_yaml("S", BOX_NAMES))
    return folder


def make_all(root: Path, sizes: Sizes) -> dict[str, Path]:
    root.mkdir(parents=True, exist_ok=True)
    return {
        "S": make_s(root),
        "A": make_a(root, sizes),
        "B": make_b(root, "B", sizes.b_files, sizes.b_bytes),
        "B-small": make_b(root, "B-small", max(1, sizes.b_files // 4), sizes.b_small_bytes),
        "C": make_c(root, sizes),
        "D": make_d(root, sizes),
    }
