"""One streaming pass per file: copy, rewrite, hash and scan, in bounded memory, in parallel.

Text files are read in chunks that end at line ends, so every rule sees whole lines; a line
longer than a chunk is read on until it ends (memory grows with the longest line, never with the
file). A file whose first 8 KiB hold a NUL byte is binary: no rule rewrites it (a byte-level
replacement would corrupt it), but it is hashed and scanned like any other, in fixed blocks that
overlap so that nothing private hides across a block edge.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Iterator, Mapping, Sequence

from kitbuild import crew
from kitbuild.crew import Crew
from kitbuild.memory import freed_blocks_kept, keep_freed_blocks, read_blocks
from kitbuild.digests import DIGEST_LENGTH, hex_runs
from kitbuild.errors import ConfigError
from kitbuild.leaks import LeakFinding, LeakScanner, column, distinct
from kitbuild.matchers import Matcher
from kitbuild.progress import SILENT, Progress
from kitbuild.rewrite import Event, Rewriter
from kitbuild.speedups import Data, count_starts

CHUNK_SIZE = 1 << 20
_BINARY_SNIFF = 8192
# Longer than any private string a config names in practice; binary blocks overlap by this much.
_OVERLAP = 4096
_NEWLINE = (b"\n",)


def line_chunks(stream: IO[bytes], size: int = CHUNK_SIZE, first: bytes = b"") -> Iterator[bytes]:
    """Chunks of about ``size`` bytes that end at a line end (the last may not)."""
    parts: list[bytes] = [first] if first else []
    while True:
        block = stream.read(size)
        if not block:
            if parts:
                yield b"".join(parts)
            return
        cut = block.rfind(b"\n")
        if cut < 0:
            # No line end yet: keep the pieces and join once, so a long line costs O(n).
            parts.append(block)
            continue
        parts.append(block[: cut + 1])
        yield b"".join(parts)
        rest = block[cut + 1 :]
        parts = [rest] if rest else []


@dataclass
class Plan:
    """What every file's pass needs; sent once to each worker process."""

    matchers: list[Matcher | None]
    private: Mapping[str, str]
    digests: Mapping[str, str]  # withheld digest (lower-case hex) -> what to call it in a finding
    allow: Sequence[str]
    collect: bool = False
    chunk_size: int = CHUNK_SIZE
    # False when the bytes were scanned already and only digests change: no leak scan and no
    # digest census (the first pass's census said where withheld digests would stay).
    scan: bool = True
    _scanner: LeakScanner | None = field(default=None, repr=False, compare=False)

    def scanner(self) -> LeakScanner:
        if self._scanner is None:
            # Withheld digests are not given to the scanner: the digest census below finds them
            # with their positions at no extra cost.
            self._scanner = LeakScanner(self.private, None, self.allow)
        return self._scanner

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_scanner"] = None
        return state


@dataclass(frozen=True, slots=True)
class FileJob:
    """Read ``src``, write ``dst`` (None: write nothing), name findings by ``kit_path``."""

    src: str
    kit_path: str
    dst: str | None
    # The source's sha256 where it is known already (a staged copy the first pass wrote): it is
    # then hashed only as far as the copy's own hash needs, up to the first change.
    source_sha256: str | None = None
    # Write the result over ``src`` itself (``dst`` is ``src``). Only for rewrites that never
    # make a chunk longer (a digest withheld by a placeholder no longer than it): each write
    # then lands on bytes already read. Rewriting a file in place costs a fifth of writing a
    # new one and renaming it over the old, which frees the old one's pages.
    in_place: bool = False


_NO_DIGESTS: frozenset[str] = frozenset()
# Shared by every result with nothing to say (never appended to: results are read only).
_NO_LEAKS: list[LeakFinding] = []
_NO_EVENTS: list[Event] = []


# A build of 100,000 small files holds 100,000 of these at once: slots, and shared empties.
@dataclass(slots=True)
class FileResult:
    """What one pass learned about one file."""

    kit_path: str
    size: int
    sha256: str
    source_size: int
    source_sha256: str
    binary: bool
    counts: list[int]
    digests: frozenset[str]  # 64-hex tokens printed in the output, lower case
    long_runs: tuple[str, ...]  # hex runs longer than 64 digits, lower case
    leaks: list[LeakFinding]
    events: list[Event]

    @property
    def changed(self) -> bool:
        return self.sha256 != self.source_sha256


def run_file(job: FileJob, plan: Plan) -> FileResult:
    """Copy, rewrite, hash and scan one file in a single pass."""
    scanner = plan.scanner()
    withheld = plan.digests
    # Until a rule first changes a chunk, the copy's bytes are the source's: one hash serves
    # both, and the copy's hash forks from it at the first change (never, for most files).
    h_in = hashlib.sha256()
    h_out: "hashlib._Hash | None" = None
    n_in = n_out = 0
    # Printed hex runs as they appear (case and all); each distinct one is decoded once, at the end.
    printed: set[bytes] = set()
    leaks: list[LeakFinding] = []
    line = 1
    copied = False  # whether the unchanged prefix has been copied into the sink yet
    if job.in_place and job.dst != job.src:
        raise ValueError("a job in place writes its own source")
    sink = open(job.src, "r+b") if job.in_place else open(job.dst, "wb") if job.dst else None
    try:
        with open(job.src, "rb") as src:
            binary, chunks = _chunks(src, plan.chunk_size)
            rewriter = None if binary else Rewriter(job.kit_path, plan.matchers, plan.collect)
            # A binary file's scan window: the tail of the previous block, then the block; one
            # bytearray reused block after block, as the blocks are read into one reused buffer
            # (fresh 1 MiB objects per block would cost their pages and a copy into the window).
            held = bytearray()
            tail_lines = 0  # line ends in the tail the window starts with
            tail_col = 0  # bytes of the tail's first line that came before it
            n_chunks = 0
            for chunk in chunks:
                n_chunks += 1
                if rewriter is None:
                    out = chunk
                else:
                    assert isinstance(chunk, bytes)  # text is read as whole lines, in bytes
                    out = rewriter.feed(chunk)
                if h_out is None and out is not chunk and out != chunk:
                    h_out = h_in.copy()
                if h_out is None or job.source_sha256 is None:
                    h_in.update(chunk)
                n_in += len(chunk)
                if h_out is not None:
                    h_out.update(out)
                    if sink is not None:
                        if not copied:
                            # Everything before this chunk is the source's own bytes: the
                            # kernel copies it, the rest is written as rewritten (in place, the
                            # file holds them already).
                            if job.in_place:
                                sink.seek(n_out)
                            else:
                                _copy_prefix(src, sink, n_out, job.kit_path)
                            copied = True
                        # In place, a write past what was read would overwrite unread bytes.
                        assert not job.in_place or n_out + len(out) <= n_in, "an in-place rewrite grew"
                        sink.write(out)
                n_out += len(out)
                # In binary mode the scan window starts with the tail of the previous block;
                # findings that lie wholly inside that tail were reported last time.
                reported = 0  # findings that end in the window's first ``reported`` bytes were reported already
                if binary:
                    reported = len(held)
                    held += out
                    window: bytes | bytearray = held
                    window_line = line - tail_lines
                else:
                    assert isinstance(out, bytes)
                    window, window_line = out, line
                if plan.scan:
                    leaks.extend(scanner.scan(job.kit_path, window, window_line, reported, tail_col))
                runs = hex_runs(window) if plan.scan else ()
                for start, end in runs:
                    printed.add(bytes(window[start:end]))
                for start, end in runs if withheld else ():
                    if end <= reported:
                        continue
                    run = window[start:end].decode("ascii").lower()
                    if end - start == DIGEST_LENGTH:
                        if run in withheld:
                            leaks.append(_digest_leak(job.kit_path, window, window_line, start, withheld[run], tail_col))
                    else:
                        for digest, what in withheld.items():
                            at = run.find(digest)
                            if at >= 0:
                                leaks.append(_digest_leak(job.kit_path, window, window_line, start + at, what, tail_col))
                # The rewriter counted the lines it wrote already.
                if rewriter is not None:
                    line = rewriter.line
                else:
                    line += count_starts(held, _NEWLINE, len(held) - len(out), len(held))[0]
                    cut = max(0, len(held) - _OVERLAP)
                    nl = held.rfind(b"\n", 0, cut)
                    tail_col = cut - nl - 1 if nl >= 0 else tail_col + cut
                    del held[:cut]  # from the front of a bytearray: the start just moves
                    tail_lines = count_starts(held, _NEWLINE, 0, len(held))[0]
            if job.in_place:
                if copied:
                    sink.truncate(n_out)  # type: ignore[union-attr]
            elif sink is not None and not copied:
                # A file no rule changed. Read in one chunk (most records): the bytes in hand are
                # written, which costs less than a kernel copy for a small file; else the kernel
                # copies it whole.
                if n_chunks == 1 and isinstance(chunk, bytes):
                    sink.write(chunk)
                else:
                    _copy_prefix(src, sink, n_out, job.kit_path)
    finally:
        if sink is not None:
            sink.close()
    if binary:
        leaks = distinct(leaks)  # overlapping windows may find one twice
    runs_printed = {run.decode("ascii").lower() for run in printed}
    digests = {run for run in runs_printed if len(run) == DIGEST_LENGTH}
    source_sha256 = h_in.hexdigest() if h_out is None or job.source_sha256 is None else job.source_sha256
    return FileResult(
        kit_path=job.kit_path,
        size=n_out,
        # An unchanged file's two digests are one string: a kit of 100,000 files keeps them all.
        sha256=h_out.hexdigest() if h_out is not None else source_sha256,
        source_size=n_in,
        source_sha256=source_sha256,
        binary=binary,
        counts=rewriter.counts if rewriter else [0] * len(plan.matchers),
        digests=frozenset(digests) if digests else _NO_DIGESTS,
        long_runs=tuple(sorted(runs_printed - digests)),
        leaks=leaks or _NO_LEAKS,
        events=(rewriter.events or _NO_EVENTS) if rewriter else _NO_EVENTS,
    )


def _chunks(src: IO[bytes], size: int) -> tuple[bool, Iterator[bytes | memoryview]]:
    """Whether ``src`` is binary (a NUL in its first 8 KiB), and its chunks: whole lines for
    text, fixed blocks for binary.

    A text file that fits in one chunk (most records) is read with one read and is its own
    chunk: no sniff read before it, no cut at its last line end, no join after. Whatever came
    past its size (a file still being written) is read on line by line.
    """
    known = os.fstat(src.fileno()).st_size
    if known > size:
        head = src.read(_BINARY_SNIFF)
        if b"\0" in head:
            return True, _blocks(src, head, size)
        return False, line_chunks(src, size, head)
    whole = src.read(known + 1)
    if whole.find(b"\0", 0, _BINARY_SNIFF) >= 0:
        # Binary files keep their blocks: the sniffed head, then the rest from where it ends.
        head = whole[:_BINARY_SNIFF]
        src.seek(len(head))
        return True, _blocks(src, head, size)
    if len(whole) > known:
        return False, line_chunks(src, size, whole)
    return False, iter((whole,) if whole else ())


def _copy_prefix(src: IO[bytes], sink: IO[bytes], length: int, kit_path: str = "") -> None:
    """Copy the first ``length`` bytes of ``src`` to the start of ``sink`` (left positioned after
    them): with ``copy_file_range``, so the bytes never pass through Python, where the system
    has it; by reading them again where it does not."""
    sink.flush()
    src_fd, dst_fd = src.fileno(), sink.fileno()
    done = 0
    try:
        while done < length:
            n = os.copy_file_range(src_fd, dst_fd, length - done, done, done)
            if n == 0:
                break
            done += n
    except (AttributeError, OSError):
        pass  # not offered here (another system, or across file systems): copy in Python
    while done < length:
        block = os.pread(src_fd, min(CHUNK_SIZE, length - done), done)
        if not block:
            break
        os.pwrite(dst_fd, block, done)
        done += len(block)
    if done != length:
        raise ConfigError(f"{kit_path}: the source file changed while it was copied; build again once nothing is writing it.")
    sink.seek(length)


def _digest_leak(path: str, chunk: Data, first_line: int, pos: int, what: str, col0: int = 0) -> LeakFinding:
    return LeakFinding(path, first_line + chunk.count(b"\n", 0, pos), column(chunk, pos, col0), what)


def _blocks(stream: IO[bytes], head: bytes, size: int) -> Iterator[bytes | memoryview]:
    """``head``, then the rest of ``stream`` in blocks read into a reused buffer (see
    :func:`kitbuild.memory.read_blocks`)."""
    if head:
        yield head
    yield from read_blocks(stream.readinto, size)  # type: ignore[attr-defined]


def run_files(
    jobs: Sequence[FileJob], plan: Plan, workers: int, progress: Progress = SILENT, meanwhile: Callable[[], object] | None = None
) -> list[FileResult]:
    """Run every job, in ``workers`` processes; results come back in job order.

    ``progress`` is advanced by each file's source size as its result arrives. The workers are
    forked (:mod:`kitbuild.crew`) and take the jobs in batches, a few at a time, by number: the
    jobs are theirs already, as copies of this process's, and are never pickled. ``meanwhile``
    is called in this process once the workers have started (or before the jobs, without them):
    work of the caller's own that need not wait for the files.
    """
    for folder in {os.path.dirname(job.dst) for job in jobs if job.dst}:  # each folder once
        os.makedirs(folder, exist_ok=True)
    results: list[FileResult] = []
    if workers <= 1 or len(jobs) < 2 or not crew.AVAILABLE:
        if meanwhile is not None:
            meanwhile()
        with freed_blocks_kept():  # (as the workers do, but only while the files run)
            for job in jobs:
                results.append(run_file(job, plan))
                progress.advance(1, results[-1].source_size)
        return results
    workers = min(workers, len(jobs))
    size = max(1, min(64, len(jobs) // (workers * 16)), -(-len(jobs) // crew.MAX_RUNS))
    batches = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    team = Crew(len(batches))
    try:
        # Each worker rewrites chunk after chunk: glibc keeps their blocks (no page faults).
        run_batch = functools.partial(_run_batch, plan, batches)
        team.start(workers, run_batch, setup=keep_freed_blocks)
        if meanwhile is not None:
            meanwhile()
        # (A batch whose worker died, or failed on it, is run here, and fails here.)
        for _, answer in team.in_order(run_batch):
            _collect(answer, results, progress)
    finally:
        team.cancel()
    return results


def _run_batch(plan: Plan, batches: Sequence[Sequence[FileJob]], k: int) -> list[FileResult]:
    return [run_file(job, plan) for job in batches[k]]


def _collect(answer: list[FileResult], results: list[FileResult], progress: Progress) -> None:
    for result in answer:
        results.append(result)
        progress.advance(1, result.source_size)
