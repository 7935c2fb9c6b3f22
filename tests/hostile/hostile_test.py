"""Hostile input, run through the real command line: each case is refused with one message that
says where (the file, its line or key path) and what to do; no traceback; nothing written.

Cases in ``cases/<name>/`` are folders as a user has them (kit.yaml, a tiny ``src/`` and the exact
``stderr.txt`` build prints). Cases that are bytes a text file should not hold, nesting thousands
deep, symlinks or archives are made by the functions below, each with the message it must give.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

CASES = Path(__file__).parent / "cases"
KIT_YAML = "kit: tiny\ntitle: A tiny kit\ndate: 2026-11-09\nsources:\n  - path: src\n    as: run\n"


def kitbuild(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KITBUILD_DEBUG": "0"}
    return subprocess.run([sys.executable, "-m", "kitbuild", *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=env)


def snapshot(root: Path) -> dict[str, object]:
    """Everything under ``root``: each path with its bytes, or its link's target, or 'dir'."""
    found: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            rel = path.relative_to(root).as_posix()
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = "dir"
            else:
                found[rel] = path.read_bytes()
    return found


def assert_refused(done: subprocess.CompletedProcess[str], before: dict[str, object], root: Path, status: int = 2) -> None:
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    assert done.stderr.startswith("kitbuild: ") and done.stderr.endswith("\n")
    assert not (root / "kit").exists()
    assert snapshot(root) == before, "a refused command wrote something"


# -- the folders --------------------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(p.name for p in CASES.iterdir()))
def test_each_case_folder_is_refused_as_its_stderr_says(case: str, tmp_path: Path) -> None:
    root = tmp_path / case
    shutil.copytree(CASES / case, root, symlinks=True)
    expected = (root / "stderr.txt").read_text(encoding="utf-8")
    (root / "stderr.txt").unlink()
    before = snapshot(root)
    done = kitbuild("build", cwd=root)
    assert_refused(done, before, root)
    assert done.stderr == expected


# -- made here ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """A bench made by ``make`` (in the folder given); ``build`` is refused with ``stderr``, and
    ``init`` over ``src`` with ``init_stderr`` where a scan of the sources meets the same input."""

    make: Callable[[Path], None]
    stderr: str
    args: tuple[str, ...] = ()
    init_stderr: str | None = None


def _bench(root: Path, config: bytes | str = KIT_YAML) -> None:
    (root / "src").mkdir(parents=True)
    (root / "src" / "run.json").write_text('{"run": 1}\n')
    (root / "kit.yaml").write_bytes(config if isinstance(config, bytes) else config.encode())


def _loop(root: Path) -> None:
    _bench(root)
    os.symlink("b", root / "src" / "a")
    os.symlink("a", root / "src" / "b")


def _folder_into_itself(root: Path) -> None:
    _bench(root)
    (root / "src" / "logs").mkdir()
    os.symlink("..", root / "src" / "logs" / "again")


def _figures(text: str) -> Callable[[Path], None]:
    return lambda root: _bench(root, KIT_YAML + text)


DEEP = 10_000
# Nine lines, each a list of ten aliases of the line before: a billion values once written out.
LAUGHS = "".join(f"  x{i}: &x{i} [" + ", ".join([f"*x{i - 1}"] * 10 if i else ["q"] * 10) + "]\n" for i in range(9))
CIRCLE = "".join(f"  f{i}:\n    recount: holm\n    family: [f{(i + 1) % 3000}]\n" for i in range(3000))
READ = "  x:\n    recount: read\n    file: run/run.json\n    pointer: /run\n"

MADE = {
    "invalid UTF-8 bytes": Case(
        lambda root: _bench(root, KIT_YAML.encode() + b"summary: \"caf\xe9\"\n"),
        "kitbuild: kit.yaml:7:14: is not UTF-8 text (byte 93 cannot be read as UTF-8). Save the file as UTF-8.\n",
    ),
    "a NUL byte": Case(
        lambda root: _bench(root, KIT_YAML.encode() + b"summary: \"a\x00b\"\n"),
        "kitbuild: kit.yaml:7:12: holds the character U+0000, which YAML does not allow in a file. Remove it.\n",
    ),
    "a list nested 10,000 deep": Case(
        lambda root: _bench(root, KIT_YAML + "summary: " + "[" * DEEP + "]" * DEEP + "\n"),
        "kitbuild: kit.yaml:7:73: is nested deeper than 64 levels here (a kit config needs a handful). "
        "Flatten the value, or fix the brackets that open it.\n",
    ),
    "a mapping nested 10,000 deep": Case(
        lambda root: _bench(root, KIT_YAML + "summary: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n"),
        "kitbuild: kit.yaml:7:262: is nested deeper than 64 levels here (a kit config needs a handful). "
        "Flatten the value, or fix the brackets that open it.\n",
    ),
    "a mapping nested 100 deep, block style": Case(
        lambda root: _bench(root, KIT_YAML + "readme:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(100))),
        "kitbuild: kit.yaml:71:129: is nested deeper than 64 levels here (a kit config needs a handful). "
        "Flatten the value, or fix the brackets that open it.\n",
    ),
    "a figure's spec nested 10,000 deep": Case(
        _figures("figures:\n  x:\n    recount: count\n    rows: run/rows.ndjson\n    where: " + "{a: " * DEEP + "1" + "}" * DEEP + "\n"),
        "kitbuild: kit.yaml:11:256: is nested deeper than 64 levels here (a kit config needs a handful). "
        "Flatten the value, or fix the brackets that open it.\n",
    ),
    "a figure's pointer 10,000 steps deep": Case(
        _figures("figures:\n" + READ.replace("/run", "/a" * DEEP)),
        "kitbuild: kit.yaml:11:14: figures.x.pointer: is 20000 characters long, more than the 1000 allowed. Choose a shorter one\n",
    ),
    "3,000 figures each computed from the next, in a circle": Case(
        _figures("figures:\n" + CIRCLE),
        "kitbuild: kit.yaml:8:3: figures.f0: the figures f0 -> f1 -> f2 -> f3 -> f4 -> f5 -> ... -> f2995 -> f2996 -> f2997 -> "
        "f2998 -> f2999 -> f0 refer to each other in a circle\n",
    ),
    "a page text nested 5,000 deep": Case(
        _figures("figures:\n" + READ + "readme:\n  figures_table:\n    - page: \"{{ " + "(" * 5000 + "x" + ")" * 5000 + " }}\"\n      files: [run/run.json]\n"),
        "kitbuild: kit.yaml:14:13: readme.figures_table[0].page: the text nests too deeply to be read as a template; write it plainly\n",
    ),
    "a billion values made of aliases, under figures": Case(
        _figures("figures:\n" + LAUGHS),
        "kitbuild: kit.yaml:12:7: figures[key #5]: stands for more than 100,000 values once its aliases are written out, "
        "far more than a kit config holds. Write the value out, or use fewer aliases of aliases.\n",
    ),
    "a billion values made of aliases, in a rule's parameters": Case(
        lambda root: _bench(root, KIT_YAML + "laughs:\n" + LAUGHS + "rules:\n  - use: box-name-to-role\n    with:\n      names: {a: b}\n      fields: *x8\n"),
        "kitbuild: kit.yaml:12:7: rules[0].with.fields[0][0][0][0]: stands for more than 100,000 values once its aliases are written out, "
        "far more than a kit config holds. Write the value out, or use fewer aliases of aliases.\n",
    ),
    "a symlink loop in a source": Case(
        _loop,
        "kitbuild: sources[0] (run): a: is a symlink loop (following it never ends at a file or folder); remove it or exclude it.\n",
        init_stderr="kitbuild: sources[0] (src): a: is a symlink loop (following it never ends at a file or folder); remove it or exclude it.\n",
    ),
    "a folder symlinked into itself": Case(
        _folder_into_itself,
        "kitbuild: sources[0] (run): logs/again: leads back to a folder that holds it (a loop), so the source would never end; "
        "remove the link or exclude it.\n",
        init_stderr="kitbuild: sources[0] (src): logs/again: leads back to a folder that holds it (a loop), so the source would never end; "
        "remove the link or exclude it.\n",
    ),
    "--out under /proc": Case(
        _bench,
        "kitbuild: --out: is on a file system that cannot hold files (such as /proc or /sys). Choose a folder on a disk you can write to.\n",
        args=("--out", "/proc/kitbuild-x"),
    ),
}


def _proc_holds_no_files() -> bool:
    try:
        return os.statvfs("/proc").f_blocks == 0
    except (OSError, AttributeError):
        return False


@pytest.mark.parametrize("name", sorted(MADE))
def test_each_made_case_is_refused_with_its_message(name: str, tmp_path: Path) -> None:
    case = MADE[name]
    if "/proc/kitbuild-x" in case.args and not _proc_holds_no_files():
        pytest.skip("no /proc here")
    root = tmp_path / "bench"
    root.mkdir()
    case.make(root)
    before = snapshot(root)
    done = kitbuild("build", *case.args, cwd=root)
    assert_refused(done, before, root)
    assert done.stderr == case.stderr
    assert not Path("/proc/kitbuild-x").exists()


@pytest.mark.parametrize("name", sorted(n for n, c in MADE.items() if c.init_stderr))
def test_init_refuses_the_same_sources(name: str, tmp_path: Path) -> None:
    case = MADE[name]
    root = tmp_path / "bench"
    root.mkdir()
    case.make(root)
    (root / "kit.yaml").unlink()
    before = snapshot(root)
    done = kitbuild("init", "src", cwd=root)
    assert_refused(done, before, root)
    assert done.stderr == case.init_stderr


@pytest.mark.parametrize("make", [lambda path: os.mkfifo(path), lambda path: os.symlink("/dev/null", path)], ids=["a pipe", "a link to /dev/null"])
def test_init_force_refuses_a_config_that_is_no_regular_file(tmp_path: Path, make) -> None:
    # With --force, a pipe held init until something read it (for ever); /dev/null took the text.
    _bench(tmp_path)
    before = snapshot(tmp_path)  # (before the pipe is made: reading it would wait as init did)
    make(tmp_path / "k.yaml")
    done = kitbuild("init", "src", "--config", "k.yaml", "--force", cwd=tmp_path)
    os.unlink(tmp_path / "k.yaml")
    assert_refused(done, before, tmp_path)
    assert done.stderr == "kitbuild: k.yaml: is not a regular file (a pipe, a device or a socket); give --config the path of the kit.yaml to write.\n"


def test_init_refuses_a_config_under_proc(tmp_path: Path) -> None:
    if not _proc_holds_no_files():
        pytest.skip("no /proc here")
    _bench(tmp_path)
    before = snapshot(tmp_path)
    done = kitbuild("init", "src", "--config", "/proc/kitbuild-x/kit.yaml", cwd=tmp_path)
    assert_refused(done, before, tmp_path)
    assert done.stderr == (
        "kitbuild: --config /proc/kitbuild-x/kit.yaml: is on a file system that cannot hold files (such as /proc or /sys). "
        "Choose a folder on a disk you can write to.\n"
    )


def test_init_takes_a_record_nested_10000_deep_as_one_that_does_not_parse(tmp_path: Path) -> None:
    # A record init cannot parse is scanned as text, as any other that does not parse.
    _bench(tmp_path)
    (tmp_path / "kit.yaml").unlink()
    (tmp_path / "src" / "deep.yaml").write_text("a: " + "[" * DEEP + "]" * DEEP + "\n")
    done = kitbuild("init", "src", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


# -- verify: archives ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kit built and published as a .zip: the archive the cases below damage."""
    root = tmp_path_factory.mktemp("published")
    _bench(root)
    for args in (["build"], ["publish", "kit", "--format", "zip", "--out", "kit.zip"]):
        done = kitbuild(*args, cwd=root)
        assert done.returncode == 0, done.stderr
    return root / "kit.zip"


def _patched(archive: Path, out: Path, member: str, patch: Callable[[bytearray, int, int], None]) -> Path:
    """``archive`` with ``patch(data, local header offset, central directory entry offset)`` applied
    to ``member``: a field changed in both headers, as a zip tool would have written it."""
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(archive) as z:
        info = z.getinfo(member)
        entry = z.start_dir  # type: ignore[attr-defined]
    while bytes(data[entry + 46 : entry + 46 + struct.unpack_from("<H", data, entry + 28)[0]]).decode() != member:
        names, extra, comment = struct.unpack_from("<HHH", data, entry + 28)
        entry += 46 + names + extra + comment
    patch(data, info.header_offset, entry)
    out.write_bytes(data)
    return out


def _encrypted(data: bytearray, local: int, central: int) -> None:
    struct.pack_into("<H", data, local + 6, struct.unpack_from("<H", data, local + 6)[0] | 1)
    struct.pack_into("<H", data, central + 8, struct.unpack_from("<H", data, central + 8)[0] | 1)


def _method_99(data: bytearray, local: int, central: int) -> None:
    struct.pack_into("<H", data, local + 8, 99)
    struct.pack_into("<H", data, central + 10, 99)


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        (_encrypted, "is encrypted; verify reads no encrypted member (kitbuild publish writes none)"),
        (_method_99, "is compressed by method 99, which verify does not read (it reads stored, deflate, bzip2 and lzma)"),
    ],
)
def test_a_zip_member_verify_cannot_decode_is_a_finding_and_the_rest_is_read(published: Path, tmp_path: Path, patch, reason: str) -> None:
    # A finding (exit 1), not 'not a kit': every other member is still read and checked.
    archive = _patched(published, tmp_path / "k.zip", "tiny/run/run.json", patch)
    before = snapshot(tmp_path)
    done = kitbuild("verify", "k.zip", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and done.stderr == ""
    assert f"  KB111 run/run.json: {reason}\n" in done.stdout
    assert "kitbuild verify k.zip: 1 finding" in done.stdout
    assert snapshot(tmp_path) == before
    assert archive.exists()


def _tar_claiming(path: Path, sizes: list[int]) -> Path:
    """A .tar.gz whose members' headers claim ``sizes``, with no data behind them."""
    raw = io.BytesIO()
    for i, size in enumerate(sizes):
        info = tarfile.TarInfo(f"kit/m{i}")
        info.size = size
        raw.write(info.tobuf(format=tarfile.PAX_FORMAT))
    raw.write(b"\0" * 1024)
    path.write_bytes(gzip.compress(raw.getvalue(), mtime=0))
    return path


def _zip_claiming(path: Path, count: int, size: int) -> Path:
    """A .zip of ``count`` tiny stored members whose central directory claims ``size`` bytes each."""
    with zipfile.ZipFile(path, "w") as z:
        for i in range(count):
            z.writestr(f"kit/m{i}", b"x")
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        entry = z.start_dir  # type: ignore[attr-defined]
    for _ in range(count):
        struct.pack_into("<I", data, entry + 24, size)  # uncompressed size
        names, extra, comment = struct.unpack_from("<HHH", data, entry + 28)
        entry += 46 + names + extra + comment
    path.write_bytes(data)
    return path


LIMIT = "its members declare more than 64 GiB in all, more than verify reads from an archive; unpack it yourself if you trust it, and verify the folder."


@pytest.mark.parametrize(
    ("name", "make"),
    [
        # One member claims 70 GiB in an archive of a few hundred bytes: over the total before
        # anything else (it would also be more than the archive holds, KB115, exit 1).
        ("big.tar.gz", lambda p: _tar_claiming(p, [70 << 30])),
        ("big.zip", lambda p: _zip_claiming(p, 17, 0xFFFFFFF0)),
    ],
)
def test_an_archive_past_the_limits_is_not_read_exit_2(name: str, make, tmp_path: Path) -> None:
    make(tmp_path / name)
    before = snapshot(tmp_path)
    done = kitbuild("verify", name, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout == ""
    assert done.stderr == (
        f"kitbuild: {name}: {LIMIT} Give the folder a kit was unpacked into, or the archive 'kitbuild publish' wrote.\n"
    )
    assert snapshot(tmp_path) == before


# -- deep, not hostile ----------------------------------------------------------------------------


def _deep_bench(tmp_path: Path) -> None:
    """A bench whose one record lies 400 folders down: deeper than the recursion limit a test lowers to 300."""
    _bench(tmp_path)
    folder = tmp_path / "src"
    for _ in range(400):
        folder = folder / "d"
    os.makedirs(folder)
    (folder / "leaf.json").write_text("{}\n")


def test_a_source_deeper_than_the_recursion_limit_is_listed_whole(tmp_path: Path) -> None:
    # The walk keeps its own stack: a source deeper than Python's recursion limit (lowered here,
    # so the test's own tree stays small enough for pytest to remove) is just a deep bench.
    _deep_bench(tmp_path)
    program = (
        "import sys\n"
        "from kitbuild.config import load_config\n"
        "from kitbuild.sources import list_files\n"
        "config = load_config('kit.yaml')\n"
        "sys.setrecursionlimit(300)\n"
        "print(len(list_files(config)), max(f.kit_path.count('/') for f in list_files(config)))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (0, "2 401\n", "")


def test_a_source_deeper_than_the_recursion_limit_is_built_and_verified(tmp_path: Path) -> None:
    # The staged kit's folders are made one level at a time (Path.mkdir(parents=True) calls
    # itself once a level): a build of a source 1,000 folders deep ended in a RecursionError.
    _deep_bench(tmp_path)
    program = (
        "import sys\n"
        "from kitbuild.cli import main\n"
        "sys.setrecursionlimit(300)\n"
        "main(sys.argv[1:])\n"
    )
    for args in (["build", "--jobs", "1"], ["verify", "kit", "--jobs", "1"]):
        done = subprocess.run([sys.executable, "-c", program, *args], cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert (done.returncode, done.stderr) == (0, ""), args
    assert (tmp_path / "kit" / "run" / ("d/" * 400) / "leaf.json").is_file()


# -- verify: a kit's own provenance.json, hostile ---------------------------------------------------


RULED_YAML = KIT_YAML + "rules:\n  - use: box-name-to-role\n    with:\n      names:\n        gpu07.lab.example.org: worker\n"


@pytest.fixture(scope="module")
def ruled_kit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kit built with one rule that fired once: its provenance.json is what the cases change."""
    root = tmp_path_factory.mktemp("ruled")
    _bench(root, RULED_YAML)
    (root / "src" / "log.txt").write_text("ran on gpu07.lab.example.org\n")
    done = kitbuild("build", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "kit"


def _writes(value: object) -> Callable[[dict], None]:
    return lambda doc: doc["rules"][0].__setitem__("writes", value)


HOSTILE_PROVENANCE = {
    # word_forms iterated 'writes' before the schema was consulted: exit 3.
    "writes a number": _writes(7),
    "writes null": _writes(None),
    "writes an object": _writes({"a": 1}),
    # One word of 2 MB: the counter's overlap test and its automaton's DFA are quadratic in a
    # word's length, and held verify for hours.
    "writes one word of 2 MB": _writes(["w" * (2 << 20)]),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_PROVENANCE))
def test_a_hostile_provenance_json_is_reported_in_seconds(ruled_kit: Path, tmp_path: Path, name: str) -> None:
    import orjson

    kit = Path(shutil.copytree(ruled_kit, tmp_path / "kit"))
    document = orjson.loads((kit / "provenance.json").read_bytes())
    HOSTILE_PROVENANCE[name](document)
    (kit / "provenance.json").write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    done = subprocess.run([sys.executable, "-m", "kitbuild", "verify", "kit"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert done.stderr == "" and "provenance.json" in done.stdout


@pytest.mark.parametrize("odd", ["a\nb.txt", "a\r\u2713 every check passes.txt", "a\x1b[2Jb.txt", "a\u202etxt.exe"])
def test_a_member_name_that_would_write_over_the_report_is_printed_escaped(published: Path, tmp_path: Path, odd: str) -> None:
    # The text report printed a kit's names as they are: a newline, a carriage return or a
    # terminal's escape in a member's name rewrote the report's lines on the reader's terminal.
    archive = tmp_path / "odd.zip"
    with zipfile.ZipFile(published) as source, zipfile.ZipFile(archive, "w") as out:
        for info in source.infolist():
            out.writestr(info, source.read(info))
        out.writestr(f"tiny/run/{odd}", b"x\n")
    done = kitbuild("verify", "odd.zip", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("  KB101 ")]
    assert line.endswith(": is in the kit but not in index.json")
    assert all(c.isprintable() for c in done.stdout.replace("\n", "")), done.stdout
