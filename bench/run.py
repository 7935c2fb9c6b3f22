#!/usr/bin/env python3
"""kitbuild's benchmark: build and verify big kits, against baselines measured in the same run.

    python bench/run.py [--quick] [--work DIR] [--repeat N] [--json PATH]

The machine is shared and noisy, so nothing here is an absolute goal: every goal is a ratio
against a baseline timed in the same session, interleaved with kitbuild's own runs, each run
right after a warm-up that reads its inputs into the page cache. The baselines:

- the two-process hash floor: the bytes divided by the SHA-256 throughput hashlib reaches on
  two processes reading workload A's kit from the page cache in 1 MiB blocks (no parsing, no
  scanning: verifying a file cannot take less than reading and hashing it);
- ``sha256sum -c`` on the kit's SHA256SUMS;
- ``bagit.py --validate --processes 2`` on a BagIt copy of the kit (``pip install bagit``), for
  A, B, C and D;
- ``sed -E -i`` with the rules' path and name replacements, on a copy of the sources;
- copying the files (``cp -r``), for the build of binary files.

Beside each case's wall time it records its processor time and how many cores other processes
of this machine kept busy meanwhile (see others_load), and for each round the host's steal: a
slow run with either large was slowed from outside. It prints a table of medians and min–max,
then the goals: each a ratio of two cases (or of a case and the floor) taken round by round,
with its median and min–max over the rounds; and the peak memory of the build and verify of C
and D against S's. It writes them all as JSON.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import multiprocessing
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads  # noqa: E402

PY = sys.executable


def warm(*folders: Path) -> None:
    """Read every file under ``folders`` so the timed run starts from a warm page cache."""
    for folder in folders:
        for dirpath, _, names in os.walk(folder):
            for name in names:
                with open(os.path.join(dirpath, name), "rb") as f:
                    while f.read(1 << 22):
                        pass


# Runs one command and reports its wall time, peak resident memory and processor time. It runs in
# a fresh, small interpreter because Linux starts a child's peak at the size of the process that
# spawned it: spawned from this one (which held the workloads' generator), every command would
# read as at least that big.
_LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.posix_spawnp(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
elapsed = time.perf_counter() - start
print(os.waitstatus_to_exitcode(status), elapsed, usage.ru_maxrss, usage.ru_utime + usage.ru_stime, file=sys.stderr)
"""


class Timing:
    """One timed run of a command: wall seconds, peak resident memory (KiB, the largest process
    of its tree) and processor seconds (user and system, of every process of its tree).

    The processor time is what tells the host's noise from the code's: on this shared machine a
    run of the same work on both cores took 0.73 to 1.11 s while its processor time went from 1.17
    to 1.76 s, with steal under 1 % (another guest on the same physical cores), so a slow run that
    also took more processor time for the same work was slowed from outside."""

    __slots__ = ("seconds", "peak_kib", "cpu_seconds")

    def __init__(self, seconds: float, peak_kib: int, cpu_seconds: float) -> None:
        self.seconds, self.peak_kib, self.cpu_seconds = seconds, peak_kib, cpu_seconds


def timed(cmd: list[str], cwd: Path | None = None) -> Timing:
    """One run of ``cmd`` (see :class:`Timing`); a command that fails stops the benchmark."""
    # stderr goes to a file, not a pipe: bagit logs a line per file, and a pipe nobody reads
    # until the command ends would fill and stop it.
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.run([PY, "-S", "-c", _LAUNCHER, *cmd], cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors, check=False)
        errors.seek(0)
        log = errors.read()
    last = log.rstrip().rsplit(b"\n", 1)[-1].split()
    if proc.returncode != 0 or len(last) != 4 or last[0] != b"0":
        tail = log[-2000:].decode(errors="replace")
        raise SystemExit(f"benchmark command failed: {' '.join(cmd)}\n{tail}")
    return Timing(float(last[1]), int(last[2]), float(last[3]))


# Touches the given number of bytes of new memory and exits, which frees them (see prime).
_PRIME = "import sys; b'\\x01' * int(sys.argv[1])"


def prime_command(nbytes: int) -> list[str]:
    """The command :func:`prime` runs: a child that writes ``nbytes`` of new memory and exits."""
    return [PY, "-S", "-c", _PRIME, str(nbytes)]


def prime(nbytes: int) -> None:
    """Free, right before a case that writes ``nbytes``, that much memory written a moment ago.

    These machines are virtual, and their host takes back the memory the guest leaves free
    (the kernel reports free blocks to it a few at a time, every two seconds); a later first
    write to such a page waits for the host to give it back. A case that writes gigabytes was
    therefore as fast as the memory freed just before it was new: build A on two jobs took 2.9
    to 3.2 s right after a fresh kit was deleted and 3.4 to 3.6 s when that deletion was 12 or
    24 s old; cp A, which came after cases that freed nothing, took 4.58 s in run 19 and, so
    primed, 1.61 s in run 20 (README, Performance). Every case whose time a goal compares with another's,
    kitbuild's and the baselines' alike, starts with the memory it will write just freed (the
    two builds of A also need the same step before them: see after_replacing in main). On a
    machine whose free memory stays its own this is a memset of a few GiB."""
    subprocess.run(prime_command(nbytes), check=True)


def _hash_worker(paths: list[str]) -> float:
    """Bytes per second this process reads and hashes ``paths`` at, as a verifier must: one
    1 MiB buffer, refilled from the page cache and hashed while it is still in the CPU's cache.

    Hashing one 64 MiB buffer, as this bench once did, streams it from memory and ran 25 % slower
    on these machines than reading and hashing the files does: a floor a verifier could beat.
    """
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    done = 0
    start = time.perf_counter()
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            digest = hashlib.sha256()
            while n := os.readv(fd, [buffer]):
                digest.update(view[:n])
                done += n
        finally:
            os.close(fd)
    return done / (time.perf_counter() - start)


def hash_throughput(files: list[Path], processes: int) -> float:
    """Bytes per second of reading and hashing ``files``, summed over ``processes`` processes
    that each take every ``processes``-th file (see :func:`_hash_worker`)."""
    shares = [[str(f) for f in files[i::processes]] for i in range(processes)]
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        return sum(pool.map(_hash_worker, shares))


def tree_bytes(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def bag_is_current(kit: Path, bag: Path) -> bool:
    """Whether ``bag`` already holds ``kit``'s bytes: bagit's manifest is there and the files at
    the root of its data equal the kit's (index.json among them, which records every other
    file's digest). Builds are deterministic, so a rebuilt kit most often is the bag's again."""
    data = bag / "data"
    if not (bag / "manifest-sha256.txt").is_file() or not data.is_dir():
        return False
    names = sorted(p.name for p in kit.iterdir() if p.is_file())
    if names != sorted(p.name for p in data.iterdir() if p.is_file()):
        return False
    return all((kit / name).read_bytes() == (data / name).read_bytes() for name in names)


def make_bag(kit: Path, bag: Path) -> None:
    """A BagIt copy of the kit (hard links: no second copy of the bytes), unless the one there is
    current: making workload C's bag hashes its files again, 9 s of a --quick run."""
    import bagit  # the baseline's own library

    if bag_is_current(kit, bag):
        return
    if bag.exists():
        shutil.rmtree(bag)
    subprocess.run(["cp", "-al", str(kit), str(bag)], check=True)
    bagit.make_bag(str(bag), checksums=["sha256"], processes=2)


def sed_cmd(workload: Path) -> list[str]:
    """``sed -E -i`` with the same path and name replacements the kit's rules make."""
    src = str((workload / "src").resolve())
    exprs = [
        f"s#{src}#records#g",
        f"s#{workloads.MAP_FROM}#earlier-run#g",
        "s#gpu-b17\\.cluster\\.example\\.net#desktop#g",
        "s#gpu-b17#desktop#g",
    ]
    return ["sed", "-E", "-i", *sum((["-e", e] for e in exprs), [])]


class Trash:
    """Outputs of many small files that the run is done with, put aside and deleted only once the
    timing is over.

    On ext4 without a journal (this machine's disks), creating a file looks up the inode table
    block of each free inode it tries and steps over those deleted in the last minute (five, if
    that block is not yet written), so deleting workload C's last kit right before the next build
    of it made that build pay for the deletion: a build of C at --quick size took 10.1 s (10.2 s
    of system time) right after 150,000 files were deleted, 7.8 s seventy seconds later and 3.8 s
    (2.9 s) after that. Moving a folder aside is one rename. (The kits of a few large files are
    still deleted right before their next build, the deletion's freed memory being what the
    build writes into; see prime for what else a build needs to start from memory just freed.)"""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def discard(self, path: Path) -> None:
        """Move ``path`` (if it is there) into the trash, on the same file system."""
        if path.exists():
            self.folder.mkdir(exist_ok=True)
            path.rename(Path(tempfile.mkdtemp(dir=self.folder)) / path.name)

    def empty(self) -> None:
        """Delete the trash, with whatever an interrupted run left in it."""
        shutil.rmtree(self.folder, ignore_errors=True)


# Cases measured in the full run only (see main): cases no goal compares, kept for what they
# show (what replacing a kit costs; whether a build's time grows with the bytes, B against B 1/4,
# or with the number of names, 2 against 1,000; sha256sum on large files).
_FULL_ONLY = frozenset({"build A, replacing its kit", "sha256sum -c A", "sha256sum -c B", "build B, 1,000 names", "build B 1/4"})


def _processor() -> str:
    """The processor's name and x86 family/model, as /proc/cpuinfo gives them: the same code runs
    at different speeds on processors sold under one name (an AMD EPYC of Zen 2 or of Zen 3)."""
    fields: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as info:
            for line in info:
                if not line.strip():
                    break  # the first processor's fields
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return platform.processor() or platform.machine()
    name = fields.get("model name", platform.machine())
    if "cpu family" in fields and "model" in fields:
        return f"{name} (family {fields['cpu family']}, model {fields['model']})"
    return name


def cpu_times() -> tuple[int, int] | None:
    """The machine's processor time so far, all of it and the part the host gave to others
    (steal), in clock ticks, from /proc/stat's first line; None where there is no such file.

    The machine is a guest on a shared host: the share stolen over a timed round is time the
    host gave to other guests, which moves every case's time but not the code's. It does not
    show another guest running on the same physical core: on 2026-12-04 steal stayed below 0.3 %
    while the record walk alone ran from 290 to 525 ms/GB within minutes (see the README)."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return parse_cpu_line(stat.readline())
    except OSError:
        return None


def parse_cpu_line(line: str) -> tuple[int, int] | None:
    """(all, stolen) clock ticks from the summary line of /proc/stat, or None if it is not one."""
    fields = line.split()
    if len(fields) < 9 or fields[0] != "cpu" or not all(v.isdigit() for v in fields[1:9]):
        return None
    # user nice system idle iowait irq softirq steal [guest guest_nice: counted in user and nice]
    ticks = [int(v) for v in fields[1:9]]
    return sum(ticks), ticks[7]


def steal_share(before: tuple[int, int] | None, after: tuple[int, int] | None) -> float | None:
    """The fraction of the processor time between two :func:`cpu_times` readings that was stolen."""
    if before is None or after is None or after[0] <= before[0]:
        return None
    return (after[1] - before[1]) / (after[0] - before[0])


def busy_ticks() -> tuple[int, int] | None:
    """The machine's processor time so far: (busy, all) clock ticks, busy being all but idle and
    waiting for the disk, from /proc/stat's first line; None where there is no such file."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            return parse_busy_line(stat.readline())
    except OSError:
        return None


def parse_busy_line(line: str) -> tuple[int, int] | None:
    """(busy, all) clock ticks from the summary line of /proc/stat, or None if it is not one."""
    fields = line.split()
    if len(fields) < 9 or fields[0] != "cpu" or not all(v.isdigit() for v in fields[1:9]):
        return None
    ticks = [int(v) for v in fields[1:9]]
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks)


def others_load(before: tuple[int, int] | None, after: tuple[int, int] | None, timing: Timing) -> float | None:
    """How many cores, on average, processes other than the timed command's kept busy while it ran.

    The host's steal does not show other work inside this machine: during the --quick run of
    2026-12-06 another session's job kept one of the two cores busy for minutes, which halved the
    two-job cases' speed and left steal at 0.1 %. A case that ran beside such work is slow for
    reasons outside kitbuild, as a round with a large steal share is."""
    if before is None or after is None or timing.seconds <= 0:
        return None
    busy_s = (after[0] - before[0]) / os.sysconf("SC_CLK_TCK")
    return max(0.0, busy_s - timing.cpu_seconds) / timing.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a quarter of the sizes; under two minutes")
    parser.add_argument("--work", type=Path, default=None, help="where workloads live (reused between runs)")
    parser.add_argument("--repeat", type=int, default=None, help="timed runs per case, median reported (default 5; 2 with --quick)")
    parser.add_argument("--json", type=Path, default=Path(__file__).resolve().parent / "results.json")
    args = parser.parse_args()

    sizes = workloads.QUICK if args.quick else workloads.FULL
    # Five rounds, not three: on this shared host a two-job run can lose a third of its speed for
    # minutes at a time to another guest (see Timing), and a median of three then falls on two
    # such runs as often as not (verify A on two jobs took 0.68, 0.95 and 0.87 s in run 26, its
    # one-job runs 1.24 to 1.38). A median of five needs three. --quick keeps two, to stay
    # under two minutes.
    repeat = args.repeat or (2 if args.quick else 5)
    # A whole untimed round first warms every cache but the page cache (imports, the disk's
    # metadata); --quick skips it to stay under two minutes, relying on the untimed first builds.
    warm_round = 0 if args.quick else 1
    work = args.work or Path(tempfile.gettempdir()) / ("kitbuild-bench-quick" if args.quick else "kitbuild-bench")
    print(f"workloads in {work} ({'quick' if args.quick else 'full'} sizes)", file=sys.stderr)
    began = time.perf_counter()

    def done(what: str) -> None:
        """Say on stderr how far the run is, and how long it has taken (a first run also makes its
        workloads and their kits, a third of a first --quick run)."""
        print(f"{what} ({time.perf_counter() - began:.0f} s)", file=sys.stderr)

    w = workloads.make_all(work, sizes)
    trash = Trash(work / "trash")
    done("workloads ready")
    # kitbuild's bytecode is compiled first, as pip does when it installs a package: an editable
    # install under PYTHONDONTWRITEBYTECODE would otherwise compile every module on every run.
    package = Path(__file__).resolve().parent.parent / "kitbuild"
    quiet_env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([PY, "-m", "compileall", "-q", str(package)], check=True, env=quiet_env, stdout=subprocess.DEVNULL)

    def kb(*words: str) -> list[str]:
        return [PY, "-m", "kitbuild", *words]

    # First builds (untimed): they make the kits the verify cases and baselines read.
    for name in ("S", "A", "B", "C", "D"):
        if name == "C":  # replacing the kit would delete it (see Trash)
            trash.discard(w[name] / "kit")
        subprocess.run(kb("build", str(w[name] / "kit.yaml")), check=True, stdout=subprocess.DEVNULL)
    done("kits built")
    for name in ("A", "B", "C", "D"):
        make_bag(w[name] / "kit", w[name] / "bag")
    done("bags made")

    sed_copy = w["B"] / "sed-copy"

    def prepare_sed() -> None:
        if sed_copy.exists():
            shutil.rmtree(sed_copy)
        shutil.copytree(w["B"] / "src", sed_copy)

    def sed_files() -> list[str]:
        return sorted(str(p) for p in sed_copy.rglob("*.ndjson"))

    cp_target = w["A"] / "cp-copy"

    def fresh_out(folder: Path) -> Callable[[], None]:
        """A build writes into a folder that is not there yet, as cp does: replacing the last
        run's kit would add the deletion of its files (seconds for 2 GiB) to the build's time.
        The case 'build A, replacing its kit' times that too."""
        return lambda: shutil.rmtree(folder / "kit-timed", ignore_errors=True)

    def after_replacing(folder: Path) -> Callable[[], None]:
        """:func:`fresh_out` for the two builds of A whose ratio is the speed-up: each right after
        the same untimed step, a build replacing the last kit, whose new kit is then deleted.

        What the machine did just before decides how fast a build of A writes (see prime), so the
        two must come after the same thing. With 'build A, replacing its kit' right before the
        one-job build alone, the speed-up read 1.49 in the bench; timed outside it, three pairs
        alternating, it read 1.50 with both builds right after a replacing build (3.47 s against
        2.31, 0.9 to 1.9 s of system time each) and 1.70 with both after a pause (4.51 against
        2.66, 2.1 to 3.0 s of system time). Of the two, the step before a case that can be
        repeated exactly is the one the bench can give each build."""

        def prepare() -> None:
            subprocess.run(kb("build", "kit.yaml", "--out", "kit-timed"), cwd=folder, check=True, stdout=subprocess.DEVNULL)
            shutil.rmtree(folder / "kit-timed")

        return prepare

    def aside(folder: Path) -> Callable[[], None]:
        """:func:`fresh_out` for a kit of many files: the last one goes to the trash, not away."""
        return lambda: trash.discard(folder / "kit-timed")

    cases: list[tuple[str, Callable[[], list[str]], list[Path], Path | None, Callable[[], None] | None]] = [
        # The interpreter's own start-up, which every kitbuild case (and bagit's) pays before any
        # of its code runs: what a site's .pth files import is in it.
        ("python -c pass (start-up)", lambda: [PY, "-c", "pass"], [], None, None),
        ("build S (start-up)", lambda: kb("build", "kit.yaml", "--out", "kit-timed"), [w["S"] / "src"], w["S"], fresh_out(w["S"])),
        ("verify S (start-up)", lambda: kb("verify", "kit"), [w["S"] / "kit"], w["S"], None),
        ("build A", lambda: kb("build", "kit.yaml", "--out", "kit-timed"), [w["A"] / "src"], w["A"], after_replacing(w["A"])),
        ("build A, replacing its kit", lambda: kb("build", "kit.yaml", "--out", "kit-timed"), [w["A"] / "src"], w["A"], None),
        ("build A, 1 job", lambda: kb("build", "kit.yaml", "--out", "kit-timed", "--jobs", "1"), [w["A"] / "src"], w["A"], after_replacing(w["A"])),
        ("verify A", lambda: kb("verify", "kit"), [w["A"] / "kit"], w["A"], None),
        ("verify A, 1 job", lambda: kb("verify", "kit", "--jobs", "1"), [w["A"] / "kit"], w["A"], None),
        ("sha256sum -c A", lambda: ["sha256sum", "-c", "--quiet", "SHA256SUMS"], [w["A"] / "kit"], w["A"] / "kit", None),
        ("bagit A", lambda: [PY, "-m", "bagit", "--validate", "--processes", "2", "bag"], [w["A"] / "bag"], w["A"], None),
        ("cp A", lambda: ["cp", "-r", "src", str(cp_target)], [w["A"] / "src"], w["A"], lambda: shutil.rmtree(cp_target, ignore_errors=True)),
        ("build B", lambda: kb("build", "kit.yaml", "--out", "kit-timed"), [w["B"] / "src"], w["B"], fresh_out(w["B"])),
        ("build B, 1,000 names", lambda: kb("build", "kit-many-names.yaml", "--out", "kit-timed"), [w["B"] / "src"], w["B"], fresh_out(w["B"])),
        ("build B 1/4", lambda: kb("build", "kit.yaml", "--out", "kit-timed"), [w["B-small"] / "src"], w["B-small"], fresh_out(w["B-small"])),
        ("verify B", lambda: kb("verify", "kit"), [w["B"] / "kit"], w["B"], None),
        ("sha256sum -c B", lambda: ["sha256sum", "-c", "--quiet", "SHA256SUMS"], [w["B"] / "kit"], w["B"] / "kit", None),
        ("bagit B", lambda: [PY, "-m", "bagit", "--validate", "--processes", "2", "bag"], [w["B"] / "bag"], w["B"], None),
        ("sed -E -i B", lambda: sed_cmd(w["B"]) + sed_files(), [sed_copy], w["B"], prepare_sed),
        ("build C", lambda: kb("build", "kit.yaml", "--out", "kit-timed"), [w["C"] / "src"], w["C"], aside(w["C"])),
        ("verify C", lambda: kb("verify", "kit"), [w["C"] / "kit"], w["C"], None),
        ("sha256sum -c C", lambda: ["sha256sum", "-c", "--quiet", "SHA256SUMS"], [w["C"] / "kit"], w["C"] / "kit", None),
        ("bagit C", lambda: [PY, "-m", "bagit", "--validate", "--processes", "2", "bag"], [w["C"] / "bag"], w["C"], None),
        ("build D", lambda: kb("build", "kit.yaml", "--out", "kit-timed"), [w["D"] / "src"], w["D"], fresh_out(w["D"])),
        ("verify D", lambda: kb("verify", "kit"), [w["D"] / "kit"], w["D"], None),
        ("bagit D", lambda: [PY, "-m", "bagit", "--validate", "--processes", "2", "bag"], [w["D"] / "bag"], w["D"], None),
    ]

    # The cases a goal compares with another's that write about their sources' size (see prime).
    writes: dict[str, int] = {
        name: tree_bytes(w[workload] / "src")
        for name, workload in (
            ("build A", "A"),
            ("build A, 1 job", "A"),
            ("cp A", "A"),
            ("build B", "B"),
            ("build B, 1,000 names", "B"),
            ("build B 1/4", "B-small"),
            ("sed -E -i B", "B"),
        )
    }
    unknown = set(writes) - {name for name, *_ in cases}
    if unknown:
        raise SystemExit(f"bench/run.py: no such case to prime: {', '.join(sorted(unknown))}")

    if args.quick:
        # Cases no goal uses, left to the full run: at a busy hour they took 10 s of --quick's
        # 127, which is to finish in under two minutes.
        cases = [case for case in cases if case[0] not in _FULL_ONLY]

    # A warm-up round (untimed, full mode only), then interleaved timed rounds; the hash floor
    # is measured in each timed round, among the cases it is compared with.
    # The floor's files: workload A's eight data files (its kit's few small files would only add
    # opens to a measure of throughput).
    floor_files = sorted(f for f in (w["A"] / "kit").rglob("*") if f.is_file() and f.stat().st_size >= 1 << 20)
    times: dict[str, list[float]] = {name: [] for name, *_ in cases}
    cpu: dict[str, list[float]] = {name: [] for name, *_ in cases}  # processor seconds of each run
    peaks: dict[str, int] = {name: 0 for name, *_ in cases}
    others: dict[str, list[float]] = {name: [] for name, *_ in cases}  # see others_load
    floors: list[float] = []
    steals: list[float | None] = []  # each timed round's stolen share (see cpu_times)
    for round_no in range(1 - warm_round, repeat + 1):
        if round_no:
            round_began = cpu_times()
            warm(w["A"] / "kit")
            floors.append(hash_throughput(floor_files, 2))
        for name, cmd, inputs, cwd, prepare in cases:
            if prepare:
                prepare()
            # Earlier cases leave gigabytes of written pages for the kernel to flush; without
            # this, the flush of cp's 2 GiB or a build's kit runs during whichever case comes
            # next and is charged to it (build B took 8 s alone, 11.6-19.4 s in a run where it came after cp A).
            os.sync()
            warm(*inputs)
            if name in writes:
                prime(writes[name])
            before = busy_ticks()
            timing = timed(cmd(), cwd)
            load = others_load(before, busy_ticks(), timing)
            if round_no:
                if load is not None:
                    others[name].append(load)
                times[name].append(timing.seconds)
                cpu[name].append(timing.cpu_seconds)
                peaks[name] = max(peaks[name], timing.peak_kib)
        if round_no:
            steals.append(steal_share(round_began, cpu_times()))
        done(f"round {round_no} done" + (" (warm-up)" if not round_no else ""))
    warm(w["A"] / "kit")
    one_core = _hash_worker([str(f) for f in floor_files])
    trash.empty()

    med = {k: statistics.median(v) for k, v in times.items()}
    throughput = statistics.median(floors)
    kit_bytes = {name: tree_bytes(w[name] / "kit") for name in ("A", "B", "C", "D")}
    # (B 1/4's kit is the timed build's own output, kit-timed.)
    src_bytes = {name: tree_bytes(w[name] / "src") for name in ("A", "B", "B-small")}

    # Each goal is a ratio taken round by round (a case and its baseline ran in the same round,
    # minutes apart at most), reported as the median and min–max of the rounds' ratios: so a
    # round the host slowed as a whole moves the ratio less than it moves either time.
    def per_round(numerator: Callable[[int], float], denominator: Callable[[int], float]) -> list[float]:
        return [numerator(r) / denominator(r) for r in range(repeat)]

    def t(name: str) -> Callable[[int], float]:
        return lambda r: times[name][r]

    def floor_of(name: str) -> Callable[[int], float]:
        return lambda r: kit_bytes[name] / floors[r]

    # (goal, per-round ratios, target, at least): the targets, exactly.
    goals: list[tuple[str, list[float], float, bool]] = [
        ("verify A / bagit A", per_round(t("verify A"), t("bagit A")), 1.0, False),
        ("verify B / bagit B", per_round(t("verify B"), t("bagit B")), 0.8, False),
        ("verify C / bagit C", per_round(t("verify C"), t("bagit C")), 0.15, False),
        ("verify C / sha256sum -c C", per_round(t("verify C"), t("sha256sum -c C")), 1.0, False),
        ("verify D / bagit D", per_round(t("verify D"), t("bagit D")), 1.0, False),
        ("verify A / hash floor", per_round(t("verify A"), floor_of("A")), 1.6, False),
        ("build B / sed -E -i B", per_round(t("build B"), t("sed -E -i B")), 0.5, False),
        ("build A / (cp A + hash floor)", per_round(t("build A"), lambda r: times["cp A"][r] + kit_bytes["A"] / floors[r]), 1.5, False),
        ("build A, 1 job / build A (speed-up)", per_round(t("build A, 1 job"), t("build A")), 1.7, True),
        ("verify A, 1 job / verify A (speed-up)", per_round(t("verify A, 1 job"), t("verify A")), 1.7, True),
    ]
    # Peak memory: at most 200 MiB, and flat. S is one small file, D one of 2 GiB (1/4 of that
    # with --quick), C holds 100,000 files (25,000): D's peak over S's is what a file's size
    # costs, C's over S's divided by its files what each file costs.
    memory = {name: peaks[name] / 1024 for name in ("build S (start-up)", "verify S (start-up)", "build C", "verify C", "build D", "verify D")}
    c_files = sizes.c_files

    lines = [
        "| case | median s | min–max s | processor s, median | min–max | others' load, cores |",
        "|---|---:|---:|---:|---:|---:|",
        *[
            f"| {name} | {med[name]:.2f} | {min(times[name]):.2f}–{max(times[name]):.2f}"
            f" | {statistics.median(cpu[name]):.2f} | {min(cpu[name]):.2f}–{max(cpu[name]):.2f}"
            f" | {f'{statistics.median(others[name]):.2f}' if others[name] else '–'} |"
            for name, *_ in cases
        ],
        "",
        f"Hash floor (hashlib reading and hashing A's files, 2 processes): {throughput / 1e9:.2f} GB/s"
        f" (rounds {min(floors) / 1e9:.2f}–{max(floors) / 1e9:.2f}); one process {one_core / 1e9:.2f} GB/s.",
        "Processor time the host gave to others (steal) in each timed round: "
        + (", ".join(f"{share:.1%}" for share in steals) if all(share is not None for share in steals) else "not known here")
        + ".",
        "",
        "| goal | ratio, median | min–max | target | met |",
        "|---|---:|---:|---:|:---:|",
    ]
    goal_rows = []
    for name, ratios, target, at_least in goals:
        ratio = statistics.median(ratios)
        met = ratio >= target if at_least else ratio <= target
        goal_rows.append({"goal": name, "ratio": ratio, "min": min(ratios), "max": max(ratios), "rounds": ratios, "target": target, "at_least": at_least, "met": met})
        lines.append(f"| {name} | {ratio:.2f} | {min(ratios):.2f}–{max(ratios):.2f} | {'≥' if at_least else '≤'} {target} | {'yes' if met else 'no'} |")
    lines += ["", "| peak resident memory | MiB | over S's | target | met |", "|---|---:|---:|---:|:---:|"]
    for name in ("build C", "verify C", "build D", "verify D"):
        base = memory[name.split()[0] + " S (start-up)"]
        lines.append(f"| {name} | {memory[name]:.0f} | +{memory[name] - base:.0f} | ≤ 200 | {'yes' if memory[name] <= 200 else 'no'} |")
    per_file = {cmd: (memory[f"{cmd} C"] - memory[f"{cmd} S (start-up)"]) * 1024 / c_files for cmd in ("build", "verify")}
    lines.append("")
    lines.append(
        f"Per file of C ({c_files:,} files), over S's peak: build {per_file['build']:.2f} KiB, verify {per_file['verify']:.2f} KiB."
        f" D's file ({kit_bytes['D'] / 2**30:.2f} GiB) over S's: build {memory['build D'] - memory['build S (start-up)']:.0f} MiB,"
        f" verify {memory['verify D'] - memory['verify S (start-up)']:.0f} MiB."
    )
    table = "\n".join(lines)
    print(table)

    result = {
        "date": datetime.date.today().isoformat(),
        "mode": "quick" if args.quick else "full",
        "machine": {"cpus": os.cpu_count(), "processor": _processor(), "python": platform.python_version(), "platform": platform.platform()},
        "repeat": repeat,
        "bytes": {"kit": kit_bytes, "src": src_bytes},
        "hash_floor_bytes_per_s": throughput,
        "hash_one_process_bytes_per_s": one_core,
        "steal_per_round": steals,
        "cases": {name: {"median_s": med[name], "min_s": min(times[name]), "max_s": max(times[name]), "runs_s": times[name], "cpu_s": cpu[name], "others_cores": others[name], "peak_rss_mib": peaks[name] / 1024} for name, *_ in cases},
        "goals": goal_rows,
        "memory_mib": {**memory, "per_file_kib_over_S": per_file, "c_files": c_files},
        "table": table,
    }
    args.json.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten: {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
